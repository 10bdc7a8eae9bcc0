"""The results cache and the parallel runner, tested by what a user sees (no timing assertions).

A warm run returns exactly the cold run's findings without analyzing anything; an edited file is analyzed again;
``--no-cache`` writes nothing; a changed configuration or ms-lint version never reuses old results; the cache
folder is marked for backup tools and git; worker processes give the same findings as one process.
"""
import json
import os
import subprocess
import sys

import pytest

import ms_lint.runner as runner
from conftest import CLEAN, FLAGGED
from ms_lint.cache import CACHE_DIR, ResultsCache, SummaryStore
from ms_lint.config import Config

CACHE_ENABLED = """\
import mindspore as ms

ms.set_context(mode=ms.GRAPH_MODE, enable_compile_cache=True)
"""


def check_json(run_cli, *args):
    code, out, err = run_cli("check", "--format", "json", *args)
    assert "Traceback" not in err, err
    return code, json.loads(out)


@pytest.fixture
def project(write):
    write("models/flagged.py", FLAGGED)
    write("models/clean.py", CLEAN)
    write("models/cache_ctx.py", CACHE_ENABLED)
    write("util/not_mindspore.py", "def helper(x):\n    return [i for i in range(x)]\n")
    return write


def cache_files(tmp_path):
    folder = tmp_path / CACHE_DIR
    # the results files (fingerprints-*.json holds the project index's cross-file fingerprints, stamps-*.json the
    # (mtime, size, digest) of the project's files they were computed from)
    return sorted(p for p in folder.rglob("*.json")
                  if not p.name.startswith(("fingerprints-", "stamps-"))) if folder.exists() else []


def forbid_analysis(monkeypatch):
    """From now on any analysis fails the test: what the run reports must come from the cache."""
    def analyze(path, config, index=None):
        raise AssertionError(f"{path} was analyzed again although it did not change")

    monkeypatch.setattr(runner, "_analyze_one", analyze)


def test_warm_run_returns_the_cold_findings_without_analyzing(run_cli, project, tmp_path, monkeypatch):
    cold_code, cold = check_json(run_cli, ".")
    assert {f["code"] for f in cold} >= {"MSL101", "MSL302"}, cold
    assert len(cache_files(tmp_path)) == 1
    forbid_analysis(monkeypatch)
    warm_code, warm = check_json(run_cli, ".")
    assert (warm_code, warm) == (cold_code, cold)


def test_touching_without_changing_content_still_uses_the_cache(run_cli, project, tmp_path, monkeypatch):
    _, cold = check_json(run_cli, ".")
    target = tmp_path / "models" / "flagged.py"
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    forbid_analysis(monkeypatch)
    _, warm = check_json(run_cli, ".")
    assert warm == cold


def forbid_index(monkeypatch):
    """From now on building the project index fails the test: the cross-file fingerprints must be reused."""
    def build(*args, **kwargs):
        raise AssertionError("the project index was built although no file's content changed")

    monkeypatch.setattr(runner, "build_index", build)


def touch(path, seconds=5):
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + seconds * 1_000_000_000))


def test_touched_files_keep_the_fingerprints_without_building_the_index(run_cli, project, tmp_path, monkeypatch):
    """``touch``, an editor saving an unchanged buffer, a checkout rewriting a file with its old text: the project
    state moves, but every moved file holds the bytes the fingerprints were computed from."""
    _, cold = check_json(run_cli, ".")
    forbid_index(monkeypatch)
    forbid_analysis(monkeypatch)
    touch(tmp_path / "models" / "flagged.py")
    touch(tmp_path / "util" / "not_mindspore.py")
    assert check_json(run_cli, ".")[1] == cold
    touch(tmp_path / "models" / "clean.py", 9)  # the stamps saved by the touched run still hold the digests
    assert check_json(run_cli, ".")[1] == cold


def test_fingerprints_of_an_older_ms_lint_source_are_removed(run_cli, project, tmp_path):
    check_json(run_cli, ".")
    folder = next((tmp_path / CACHE_DIR).rglob("fingerprints-*.json")).parent
    (folder / "fingerprints-0000000000000000.json").write_text("{}")
    (folder / "stamps-0000000000000000.json").write_text("{}")
    project("models/clean.py", FLAGGED)  # a new project state: the fingerprints are computed and saved again
    check_json(run_cli, ".")
    assert sorted(p.name.split("-")[0] for p in folder.glob("*.json") if p.name.startswith(("fing", "stamps"))) \
        == ["fingerprints", "stamps"]


@pytest.mark.parametrize("change", ["same-size edit", "new file", "removed file"])
def test_a_real_change_among_touched_files_builds_the_index_again(run_cli, project, tmp_path, monkeypatch, change):
    """A moved stamp is trusted only with the old bytes: an edit of the same length, a file added or removed
    (which can change other files' findings) all compute the fingerprints again."""
    check_json(run_cli, ".")
    touch(tmp_path / "models" / "clean.py")
    built = []
    real_build = runner.build_index
    monkeypatch.setattr(runner, "build_index", lambda *a, **k: built.append(1) or real_build(*a, **k))
    if change == "same-size edit":
        target = tmp_path / "util" / "not_mindspore.py"
        text = target.read_text()
        target.write_text(text.replace("helper", "helpex"))
        assert len(target.read_text()) == len(text)
        touch(target, 0)
    elif change == "new file":
        project("models/extra.py", FLAGGED)
    elif change == "removed file":
        (tmp_path / "models" / "cache_ctx.py").unlink()
    _, after = check_json(run_cli, ".")
    assert built, "the fingerprints were reused across a real change"
    assert any(f["path"] == "models/extra.py" for f in after) == (change == "new file")
    assert any(f["path"] == "models/cache_ctx.py" for f in after) == (change != "removed file")


def test_stored_fingerprints_follow_the_bytes_and_the_configuration(tmp_path):
    """The store's own rule: moved stamps are forgiven only for the same bytes under the same configuration (another
    configuration, e.g. other cell-bases, makes other fingerprints of the same files)."""
    from ms_lint.analysis.layout import digest_of, project_stamps
    from ms_lint.cache import FingerprintStore

    source = tmp_path / "a.py"
    source.write_text("x = 1\n")
    stamps = project_stamps([str(source)])
    digests = {path: (*stamp, digest_of(source.read_bytes())) for path, stamp in stamps.items()}
    FingerprintStore(str(tmp_path)).save("state-1", {str(source): "fp"}, digests, salt="config-a", project=stamps)
    touch(source)
    moved = project_stamps([str(source)])
    assert FingerprintStore(str(tmp_path)).load("state-1") == {str(source): "fp"}  # the state it was saved under
    assert FingerprintStore(str(tmp_path)).load("state-2") == {}  # no stamps given: nothing to compare
    store = FingerprintStore(str(tmp_path))
    assert store.load("state-2", moved, salt="config-a") == {str(source): "fp"}
    assert store.refreshed == {str(source): (*moved[str(source)], digests[str(source)][2])}
    assert FingerprintStore(str(tmp_path)).load("state-2", moved, salt="config-b") == {}
    source.write_text("x = 2\n")  # same size, other bytes
    assert FingerprintStore(str(tmp_path)).load("state-3", project_stamps([str(source)]), salt="config-a") == {}


def test_fingerprints_saved_by_another_run_are_not_paired_with_these_stamps(tmp_path):
    """Two runs that save between each other's two files (fingerprints, then stamps) must not leave one run's
    stamps vouching for the other run's fingerprints."""
    from ms_lint.analysis.layout import digest_of, project_stamps
    from ms_lint.cache import FingerprintStore

    source = tmp_path / "a.py"
    source.write_text("x = 1\n")
    stamps = project_stamps([str(source)])
    digests = {path: (*stamp, digest_of(source.read_bytes())) for path, stamp in stamps.items()}
    FingerprintStore(str(tmp_path)).save("state-x", {str(source): "fp-x"}, digests, salt="c", project=stamps)
    store = FingerprintStore(str(tmp_path))
    with open(store.stamps_file) as handle:
        stamps_of_x = handle.read()
    store.save("state-y", {str(source): "fp-y"}, digests, salt="c", project=stamps)  # the other run saves both files...
    with open(store.stamps_file, "w") as handle:  # ...and the first run's stamps land last
        handle.write(stamps_of_x)
    touch(source)
    assert FingerprintStore(str(tmp_path)).load("state-z", project_stamps([str(source)]), salt="c") == {}


def test_a_module_outside_the_checked_packages_is_stamped_too(run_cli, write, tmp_path):
    """A base class in a sibling package (read by the index, not a project file of the checked package): when it
    changes, touching a checked file must not revive the fingerprints computed against the old base."""
    write("pkg_a/__init__.py", "")
    write("pkg_a/net.py", "from mindspore import ops\nfrom pkg_b.base import Base\n\n\nclass Net(Base):\n"
          "    def construct(self, x):\n        out = []\n        for i in range(x.shape[0]):\n"
          "            out.append(ops.relu(x[i]) * 2)\n        return ops.stack(out)\n")
    write("pkg_b/__init__.py", "")
    write("pkg_b/base.py", "from mindspore import nn\n\n\nclass Base(nn.Cell):\n    pass\n")
    _, before = check_json(run_cli, "pkg_a")
    assert [f["code"] for f in before] == ["MSL101"]
    write("pkg_b/base.py", "class Base:\n    pass  # a plain class now, not a Cell\n")
    touch(tmp_path / "pkg_a" / "net.py")
    _, after = check_json(run_cli, "pkg_a")
    _, fresh = check_json(run_cli, "--no-cache", "pkg_a")
    assert after == fresh == []


def test_a_deeply_nested_cache_file_is_ignored(run_cli, project, tmp_path):
    _, cold = check_json(run_cli, ".")
    for cache_file in (tmp_path / CACHE_DIR).rglob("*.json"):
        cache_file.write_text("[" * 100_000)
    touch(tmp_path / "models" / "flagged.py")
    assert check_json(run_cli, ".")[1] == cold


def test_an_edited_file_is_analyzed_again(run_cli, project, tmp_path):
    _, before = check_json(run_cli, ".")
    assert any(f["path"] == "models/flagged.py" for f in before)
    project("models/flagged.py", FLAGGED.replace("for i in range(x.shape[0]):", "for i in range(2):"))
    project("models/clean.py", FLAGGED)  # a previously clean file now has the finding
    _, after = check_json(run_cli, ".")
    paths = {f["path"] for f in after if f["code"] == "MSL101"}
    assert paths == {"models/clean.py"}, after


def test_no_cache_writes_nothing(run_cli, project, tmp_path):
    code, _ = check_json(run_cli, "--no-cache", ".")
    assert code == 1
    assert not (tmp_path / CACHE_DIR).exists()


def test_no_cache_does_not_read_the_cache(run_cli, project, tmp_path):
    check_json(run_cli, ".")
    cache_file = cache_files(tmp_path)[0]
    data = json.loads(cache_file.read_text())
    for entry in data.values():
        entry["findings"] = []  # a cache that (wrongly) says every file is clean
    cache_file.write_text(json.dumps(data))
    _, served = check_json(run_cli, ".")
    assert served == []  # proof that the doctored cache is what a cached run reads
    _, fresh = check_json(run_cli, "--no-cache", ".")
    assert {f["code"] for f in fresh} >= {"MSL101", "MSL302"}


def test_a_changed_config_is_not_served_old_results(run_cli, project, tmp_path):
    _, first = check_json(run_cli, ".")
    assert any(f["code"] == "MSL101" for f in first)
    project("pyproject.toml", '[tool.ms-lint]\nignore = ["MSL101"]\n')
    _, ignored = check_json(run_cli, ".")
    assert not any(f["code"] == "MSL101" for f in ignored)
    assert any(f["code"] == "MSL302" for f in ignored)
    project("pyproject.toml", "[tool.ms-lint]\nunroll-threshold = 4\n")
    _, again = check_json(run_cli, ".")
    assert any(f["code"] == "MSL101" for f in again)


def test_a_command_line_selection_is_a_different_config(run_cli, project):
    _, everything = check_json(run_cli, ".")
    _, only_cache_rules = check_json(run_cli, "--select", "MSL3", ".")
    assert {f["code"] for f in only_cache_rules} == {"MSL302"}
    _, everything_again = check_json(run_cli, ".")
    assert everything_again == everything


def test_cache_folder_has_cachedir_tag_and_gitignore(run_cli, project, tmp_path):
    check_json(run_cli, ".")
    folder = tmp_path / CACHE_DIR
    tag = (folder / "CACHEDIR.TAG").read_text()
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_corrupt_cache_file_is_ignored_and_rewritten(run_cli, project, tmp_path):
    _, cold = check_json(run_cli, ".")
    cache_file = cache_files(tmp_path)[0]
    cache_file.write_text("{not json")
    _, again = check_json(run_cli, ".")
    assert again == cold
    json.loads(cache_file.read_text())


def test_results_of_older_ms_lint_code_are_removed(project, tmp_path):
    config = Config(root=str(tmp_path))
    fingerprint = config.fingerprint()
    cache = ResultsCache(str(tmp_path), fingerprint)
    stale = os.path.join(os.path.dirname(cache.file), f"{fingerprint}-0000000000000000.json")
    other_config = os.path.join(os.path.dirname(cache.file), "ffffffffffffffff-0000000000000000.json")
    os.makedirs(os.path.dirname(cache.file), exist_ok=True)
    for path in (stale, other_config):
        with open(path, "w") as handle:
            handle.write("{}")
    runner.check_files([str(tmp_path / "models" / "flagged.py")], config)
    assert os.path.exists(cache.file)
    assert not os.path.exists(stale)
    assert os.path.exists(other_config)  # another configuration's results stay


def test_workers_give_the_same_findings_as_one_process(run_cli, write, tmp_path):
    count = runner.PARALLEL_THRESHOLD + 6
    for index in range(count):
        write(f"pkg/m{index:02d}.py", FLAGGED if index % 3 == 0 else CLEAN)
    write("pkg/bad.py", "import mindspore\ndef f(:\n")
    _, serial = check_json(run_cli, "--no-cache", "--jobs", "1", "pkg")
    _, parallel = check_json(run_cli, "--no-cache", "--jobs", "2", "pkg")
    assert parallel == serial
    assert sum(1 for f in serial if f["code"] == "MSL101") == len(range(0, count, 3))
    assert [f["path"] for f in serial if f["code"] == "MSL900"] == ["pkg/bad.py"]


def test_parallel_run_fills_the_cache_for_the_next_run(run_cli, write, tmp_path, monkeypatch):
    for index in range(runner.PARALLEL_THRESHOLD + 2):
        write(f"pkg/m{index:02d}.py", FLAGGED if index % 2 else CLEAN)
    _, cold = check_json(run_cli, "--jobs", "2", "pkg")
    forbid_analysis(monkeypatch)
    _, warm = check_json(run_cli, "--jobs", "2", "pkg")
    assert warm == cold


def test_a_warm_run_does_not_import_the_parser(project, tmp_path):
    """The warm path must stay cheap: no libcst (or MindSpore) import when every result is cached, nor the project
    index's ``ast`` summaries or the worker pool's multiprocessing (a fifth of a warm run's time together), nor
    the modules of the other commands (``check`` parses its own options only), nor ``dataclasses`` (with
    ``inspect``), ``hashlib`` (with OpenSSL's bindings) or ``shutil`` (with zlib, bz2 and lzma): about 17 ms of a
    115 ms warm run of MindSpore's source (``ms_lint.records``, ``ms_lint.blake``, ``ms_lint.cli._Formatter``)."""
    heavy = ('libcst', 'mindspore', 'ms_lint.analysis.summary', 'multiprocessing', 'ms_lint.commands.fix',
             'ms_lint.commands.verify', 'ms_lint.commands.server', 'ms_lint.commands.profile', 'dataclasses',
             'inspect', 'hashlib', 'shutil')
    script = (
        "import sys\n"
        "from ms_lint.cli import main\n"
        "code = main(['check', '--format', 'json', '.'])\n"
        f"loaded = sorted(m for m in {heavy!r} if m in sys.modules)\n"
        "sys.stderr.write('LOADED=' + ','.join(loaded) + '\\n')\n"
    )
    env = dict(os.environ)
    for run in ("cold", "warm"):
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env,
                              timeout=120)
        loaded = [line for line in done.stderr.splitlines() if line.startswith("LOADED=")]
        assert loaded, done.stderr
        if run == "cold":  # the check itself is real: a cold run does parse and index
            assert "libcst" in loaded[0] and "ms_lint.analysis.summary" in loaded[0]
    assert loaded == ["LOADED="], done.stderr


def test_summaries_of_installed_modules_read_for_fingerprints_are_kept(run_cli, write, tmp_path, monkeypatch):
    """A run whose fingerprints resolve names into an installed package stores that package's summaries too, so
    the next run with a touched file reads them from the cache instead of parsing them again."""
    from ms_lint.analysis import index as index_module

    site = tmp_path / "site"
    (site / "extpkg").mkdir(parents=True)
    (site / "extpkg" / "__init__.py").write_text("from .layers import Base\n", encoding="utf-8")
    (site / "extpkg" / "layers.py").write_text(
        "from mindspore import nn\n\nclass Base(nn.Cell):\n    def construct(self, x):\n        return x\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    write("proj/pyproject.toml", "")
    write("proj/models/__init__.py", "")
    write("proj/models/head.py", "import mindspore as ms\nfrom extpkg import Base\n\n\nclass Head(Base):\n"
                                 "    def construct(self, x):\n        if x.sum() > 0:\n            x = x * 2\n"
                                 "        return x\n")
    monkeypatch.chdir(tmp_path / "proj")
    _, cold = check_json(run_cli, ".")
    assert [f["code"] for f in cold] == ["MSL201"]  # Head is a Cell through the installed base
    entries = SummaryStore(str(tmp_path / "proj")).load()
    assert str(site / "extpkg" / "layers.py") in entries
    parsed = []
    real = index_module.summarize_file
    monkeypatch.setattr(index_module, "summarize_file", lambda path, raw=None: parsed.append(path) or real(path, raw))
    head = tmp_path / "proj" / "models" / "head.py"
    stat = head.stat()
    os.utime(head, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    _, warm = check_json(run_cli, ".")
    assert warm == cold
    assert not [p for p in parsed if str(site) in p]  # the installed modules came from the stored summaries


def test_a_stamp_taken_before_the_lookup_is_checked_again_when_it_is_not_the_entrys(tmp_path):
    """The runner hands ``lookup`` the stamps it took at the start of the run. A file saved since then must be
    stat'ed again: the entry keeps the stamp of the bytes whose digest matched, never the stale one (which, once
    the file went back to other bytes under that mtime and size, would serve these findings for them)."""
    module = tmp_path / "m.py"
    module.write_text(FLAGGED, encoding="utf-8")
    st = os.stat(module)
    cache = ResultsCache(str(tmp_path), "cfg")
    cache.store(str(module), [], None, "deps")
    stale = (st.st_mtime_ns - 10**9, st.st_size)  # what the run saw before an editor saved the same bytes
    assert cache.lookup(str(module), "deps", str(module), stale) == []
    entry = cache.entries[str(module)]
    assert (entry["mtime_ns"], entry["size"]) == (st.st_mtime_ns, st.st_size)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_path_through_a_symlink_and_dotdot_is_stat_ed_as_given(run_cli, write, tmp_path):
    """``link/../x.py`` with ``link`` a symlink names another file than its absolute spelling (``./x.py``): the
    cache must compare the file the path names, or an edit of it is never seen."""
    write("real/x.py", FLAGGED)
    (tmp_path / "real" / "sub").mkdir()
    write("x.py", "print('another file')\n")
    os.symlink(tmp_path / "real" / "sub", tmp_path / "link")
    given = os.path.join("link", "..", "x.py")
    first = check_json(run_cli, given)[1]
    assert [f["code"] for f in first] == ["MSL101"]
    assert check_json(run_cli, given)[1] == first  # warm
    write("real/x.py", CLEAN)
    assert check_json(run_cli, given)[1] == check_json(run_cli, "--no-cache", given)[1] == []


# -- config files a script reads ----------------------------------------------------------------------------
YAML_SCRIPT = """\
import mindspore as ms
import yaml
from mindspore import nn

config = yaml.safe_load(open("configs/train.yaml"))


class Net(nn.Cell):
    def construct(self, x):
        return x * 2


if __name__ == "__main__":
    ms.set_context(mode=config["context"]["mode"])
    net = Net()
    net(ms.Tensor([1.0]))
"""


def yaml_mode(mode: int) -> str:
    return f"context:\n  mode: {mode}\n"


def msl301_lines(run_cli):
    return [f["line"] for f in check_json(run_cli, ".")[1] if f["code"] == "MSL301"]


def test_an_edited_config_file_is_not_served_the_old_result(run_cli, write, tmp_path):
    """The script's mode comes from a YAML file: editing the file (not the script) changes the finding."""
    write("train.py", YAML_SCRIPT)
    write("configs/train.yaml", yaml_mode(0))
    assert msl301_lines(run_cli) == [14]
    write("configs/train.yaml", yaml_mode(1))
    assert msl301_lines(run_cli) == []
    write("configs/train.yaml", yaml_mode(0))
    assert msl301_lines(run_cli) == [14]


def test_a_config_file_that_appears_or_goes_is_seen(run_cli, write, tmp_path):
    write("train.py", YAML_SCRIPT)
    assert msl301_lines(run_cli) == []  # no file: the mode is unknown
    write("configs/train.yaml", yaml_mode(0))
    assert msl301_lines(run_cli) == [14]
    (tmp_path / "configs" / "train.yaml").unlink()
    assert msl301_lines(run_cli) == []


def test_an_unchanged_config_file_keeps_the_run_warm(run_cli, write, tmp_path, monkeypatch):
    write("train.py", YAML_SCRIPT)
    write("configs/train.yaml", yaml_mode(0))
    cold = check_json(run_cli, ".")
    entries = json.loads(cache_files(tmp_path)[0].read_text())
    assert [read[0] for entry in entries.values() for read in entry.get("reads", [])] == [
        str(tmp_path / "configs" / "train.yaml")]
    forbid_analysis(monkeypatch)
    assert check_json(run_cli, ".") == cold


def test_an_edit_writes_only_the_changed_summaries_until_the_delta_grows(tmp_path):
    """Summaries of files summarized since the whole set was written go to the small delta file; the whole set is
    written again once the delta holds more than DELTA_SHARE of the entries. Loading merges both."""
    from ms_lint.analysis.summary import ModuleSummary

    def summary(name, digest):
        return ModuleSummary(name=name, path=f"/p/{name}.py", digest=digest)

    store = SummaryStore(str(tmp_path))
    entries = {f"/p/m{i}.py": (i, i, summary(f"m{i}", f"summary {i}")) for i in range(100)}
    store.save(entries)
    assert os.path.exists(store.file) and not os.path.exists(store.delta_file)
    loaded = SummaryStore(str(tmp_path))
    entries = loaded.load()
    whole_written = os.stat(loaded.file).st_mtime_ns
    entries["/p/m3.py"] = (3, 4, summary("m3", "summary 3, edited"))
    entries["/p/new.py"] = (1, 1, summary("new", "new"))
    loaded.save(entries)
    assert os.stat(loaded.file).st_mtime_ns == whole_written  # the whole set was not written again
    again = SummaryStore(str(tmp_path)).load()
    assert again == entries
    store = SummaryStore(str(tmp_path))
    entries = store.load()
    for i in range(10):  # more than 5 of 101 entries changed: one whole set again, no delta
        entries[f"/p/m{i}.py"] = (i, i + 1, summary(f"m{i}", f"summary {i}, edited"))
    store.save(entries)
    assert not os.path.exists(store.delta_file)
    assert SummaryStore(str(tmp_path)).load() == entries


def test_a_file_summarized_again_frees_its_old_summary_and_only_it_is_saved(tmp_path):
    """The store remembers what the whole set on disk holds by stamps, digest and module name, not by holding the
    entries: the summary of an edited file's old bytes is freed once the run replaces it (a 55k-line module's is
    14 MB), and an entry equal to the stored one is not written again."""
    import gc
    import weakref

    from ms_lint.analysis.index import summarize_file

    paths = []
    for name in ["a"] + [f"b{i}" for i in range(24)]:  # one change in 25 entries goes to the delta
        path = tmp_path / f"{name}.py"
        path.write_text(f"def {name}(x):\n    return x\n", encoding="utf-8")
        paths.append(str(path))
    store = SummaryStore(str(tmp_path))
    store.save({path: (1, 2, summarize_file(path)) for path in paths})
    loaded = SummaryStore(str(tmp_path))
    entries = loaded.load()
    old = weakref.ref(entries[paths[0]][2])
    with open(paths[0], "w", encoding="utf-8") as handle:
        handle.write("def a(x):\n    return x + 1\n")
    entries[paths[0]] = (3, 4, summarize_file(paths[0]))
    entries[paths[1]] = (1, 2, summarize_file(paths[1]))  # summarized again: the same bytes and stamps
    gc.collect()
    assert old() is None
    written = os.stat(loaded.file).st_mtime_ns
    loaded.save(entries)
    assert os.stat(loaded.file).st_mtime_ns == written
    from ms_lint.cache import _read_store

    assert list(_read_store(loaded.delta_file)) == [paths[0]]
    assert SummaryStore(str(tmp_path)).load()[paths[0]][2].digest == entries[paths[0]][2].digest


def _pool_sized_project(write, monkeypatch, count=runner.PARALLEL_THRESHOLD + 4):
    """Enough files for the worker pool, which two workers analyze even on a one-core machine."""
    from ms_lint import processes

    monkeypatch.setattr(processes, "cpu_count", lambda: 2)
    for index in range(count):
        write(f"pkg/m{index:02d}.py", FLAGGED if index % 3 == 0 else CLEAN)
    write("pkg/__init__.py", "")


def test_a_first_run_works_out_the_fingerprints_while_the_workers_analyze(write, tmp_path, monkeypatch):
    """No file has stored results: every fingerprint is worked out on a thread of this process while the workers
    analyze, and the run stores the fingerprints one process working them out first would store (the next run is
    warm)."""
    import threading

    _pool_sized_project(write, monkeypatch)
    monkeypatch.chdir(tmp_path)
    threads = []
    real = runner._WorkedOutMeanwhile.__call__

    def worked_out(self):
        threads.append((threading.current_thread() is threading.main_thread(), len(self.missing)))
        return real(self)

    monkeypatch.setattr(runner._WorkedOutMeanwhile, "__call__", worked_out)
    files = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "pkg").glob("*.py"))
    cold = runner.check_files(files, Config(), jobs=2)
    assert threads == [(False, len(files))]  # once, beside the workers, for every file
    stored = json.loads(next((tmp_path / CACHE_DIR).rglob("fingerprints-*.json")).read_text())["fingerprints"]
    index = runner.build_index(files, Config(), use_cache=False)
    assert stored == {os.path.abspath(path): index.fingerprint_for(path) for path in files}
    results = json.loads(cache_files(tmp_path)[0].read_text())
    assert {path: entry["depends"] for path, entry in results.items()} == stored
    forbid_analysis(monkeypatch)
    warm = runner.check_files(files, Config(), jobs=2)
    assert [f.to_json() for f in warm] == [f.to_json() for f in cold]


def test_a_file_with_stored_results_gets_its_fingerprint_before_the_lookup(write, tmp_path, monkeypatch):
    """Fingerprints lost (a cache folder restored without them), results kept: each file's fingerprint is worked
    out before its lookup, so unchanged files are served from the cache, not analyzed again."""
    _pool_sized_project(write, monkeypatch)
    monkeypatch.chdir(tmp_path)
    files = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "pkg").glob("*.py"))
    cold = runner.check_files(files, Config(), jobs=2)
    for stored in (tmp_path / CACHE_DIR).rglob("*.json"):
        if stored.name.startswith(("fingerprints-", "stamps-")):
            stored.unlink()
    forbid_analysis(monkeypatch)
    warm = runner.check_files(files, Config(), jobs=2)
    assert [f.to_json() for f in warm] == [f.to_json() for f in cold]


def test_an_error_while_working_out_fingerprints_beside_the_workers_is_raised(write, tmp_path, monkeypatch):
    """A bug in the fingerprints worked out on the thread is not lost: the run raises it (as one working them out
    first would), and stores no fingerprint."""
    from ms_lint.analysis.index import ProjectIndex

    _pool_sized_project(write, monkeypatch)
    monkeypatch.chdir(tmp_path)
    real = ProjectIndex.fingerprint_recipe

    def recipe(self, path):
        if path.endswith("m05.py"):
            raise RuntimeError("a bug in the recipe")
        return real(self, path)

    monkeypatch.setattr(ProjectIndex, "fingerprint_recipe", recipe)
    files = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "pkg").glob("*.py"))
    with pytest.raises(RuntimeError, match="a bug in the recipe"):
        runner.check_files(files, Config(), jobs=2)
    assert not list((tmp_path / CACHE_DIR).rglob("fingerprints-*.json"))


BLOCKS = {
    "models/__init__.py": "",
    "models/base.py": "from mindspore import nn\n\n\nclass BaseBlock(nn.Cell):\n    pass\n",
    "models/blocks.py": """\
import mindspore as ms
from mindspore import nn, ops
from .base import BaseBlock


class Block0(BaseBlock):
    def __init__(self, hidden=128):
        super().__init__()
        self.hidden = hidden
        self.act = nn.GELU()

    def construct(self, x):
        rows = []
        for i in range(x.shape[0]):
            rows.append(self.act(x[i]) * 2)
        return ops.stack(rows)


class Block1(BaseBlock):
    def __init__(self, hidden=64):
        super().__init__()
        self.hidden = hidden

    def construct(self, x):
        if x.sum() > 0:
            x = x * 0.5
        else:
            x = x * 2.0
        return x


class Block2(BaseBlock):
    def construct(self, x):
        return self._project(x)

    def _project(self, x):
        return ops.mean(x, -1, keep_dims=True) + x
""",
}


def test_the_stored_lookups_are_the_fingerprints_not_the_analysis_of_this_process(write, tmp_path, monkeypatch):
    """A file analyzed in this process (few files: no workers) asks the index more than its fingerprint did; what
    the fingerprint store records (module names looked up, the files they found) is what the fingerprints read,
    as when they were worked out before the analysis."""
    for name, text in BLOCKS.items():
        write(name, text)
    monkeypatch.chdir(tmp_path)
    real = runner._analyze_one

    def analyze(path, config, index=None):  # a lookup only the analysis makes (a name no fingerprint asks about)
        assert index is not None and index.module("models.blocks.Block1") is None
        return real(path, config, index)

    monkeypatch.setattr(runner, "_analyze_one", analyze)
    checked = ["models/blocks.py"]
    findings = runner.check_files(checked, Config(), jobs=1)
    assert {f.code for f in findings} >= {"MSL101", "MSL201"}
    stored = json.loads(next((tmp_path / CACHE_DIR).rglob("stamps-*.json")).read_text())["located"]
    index = runner.build_index(checked, Config(), use_cache=False)
    for path in checked:
        index.fingerprint_recipe(path)
    assert "models.blocks.Block1" not in stored and stored == index.located


def test_stored_summaries_are_unpickled_when_first_read(tmp_path):
    """The store gives each summary's name, path and digest at once and unpickles the rest on first use: then it
    is a plain ModuleSummary, equal to the one saved, with the same shape; one never read is saved from the
    pickle it was read from."""
    from ms_lint.analysis.index import summarize_file
    from ms_lint.analysis.summary import ModuleSummary, StoredSummary, pickled_summary, same_shape

    paths = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.py"
        path.write_text(f"from mindspore import nn\n\n\nclass {name.upper()}(nn.Cell):\n    def construct(self, x):\n"
                        "        return x\n", encoding="utf-8")
        paths.append(str(path))
    saved = {path: (1, 2, summarize_file(path)) for path in paths}
    SummaryStore(str(tmp_path)).save(saved)
    loaded = SummaryStore(str(tmp_path)).load()
    first, second = (loaded[path][2] for path in paths)
    assert type(first) is StoredSummary and type(second) is StoredSummary
    assert (first.name, first.path, first.digest) == (saved[paths[0]][2].name, paths[0], saved[paths[0]][2].digest)
    assert type(first) is StoredSummary  # name, path and digest unpickle nothing
    assert list(first.classes) == ["A"] and type(first) is ModuleSummary
    assert first == saved[paths[0]][2] and same_shape(second, saved[paths[1]][2])
    third = SummaryStore(str(tmp_path)).load()[paths[1]][2]
    assert pickled_summary(third) == pickled_summary(saved[paths[1]][2]) and type(third) is StoredSummary


def _stored_pair(tmp_path):
    from ms_lint.analysis.index import summarize_file

    paths = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.py"
        path.write_text(f"def {name}(x):\n    return x\n", encoding="utf-8")
        paths.append(str(path))
    saved = {path: (1, 2, summarize_file(path)) for path in paths}
    SummaryStore(str(tmp_path)).save(saved)
    return paths, saved


def test_loading_the_store_reads_only_its_header(tmp_path, monkeypatch):
    """A run after an edit reads a few of the store's summaries: the load reads the header alone, each summary
    is read from the file when first asked for."""
    from ms_lint.analysis.summary import StoredSummary

    paths, saved = _stored_pair(tmp_path)
    store = SummaryStore(str(tmp_path))
    reads = []
    pread = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, size, offset: reads.append(size) or pread(fd, size, offset))
    loaded = store.load()
    assert len(reads) == 2 and sum(reads) < os.path.getsize(store.file)  # magic and length, then the header
    assert all(type(entry[2]) is StoredSummary for entry in loaded.values())
    assert loaded[paths[1]][2] == saved[paths[1]][2] and len(reads) == 3  # one summary: one read


def test_stored_summaries_read_after_the_store_was_replaced_or_cut_short(tmp_path):
    """Another run may replace the store file while this one holds summaries it has not read: they come from the
    file it opened. A store cut short (not by ms-lint) reads as a damaged summary: made again from its file."""
    from ms_lint.analysis.summary import ModuleSummary, pickled_summary

    paths, saved = _stored_pair(tmp_path)
    store = SummaryStore(str(tmp_path))
    first = store.load()
    SummaryStore(str(tmp_path)).save({paths[0]: saved[paths[0]]})  # a new whole set, without b.py
    assert first[paths[1]][2] == saved[paths[1]][2]
    second = SummaryStore(str(tmp_path)).load()
    os.truncate(store.file, os.path.getsize(store.file) - 5)
    assert pickled_summary(second[paths[0]][2]) == pickled_summary(saved[paths[0]][2])
    assert type(second[paths[0]][2]) is ModuleSummary  # made again


def test_a_store_in_another_format_is_made_again(tmp_path):
    import pickle

    paths, saved = _stored_pair(tmp_path)
    store = SummaryStore(str(tmp_path))
    with open(store.file, "wb") as handle:
        pickle.dump({path: (1, 2, "a", path, "d", b"x") for path in paths}, handle)  # the format before
    assert store.load() is None
    with open(store.file, "wb") as handle:
        handle.write(b"ms-lint summaries 2\n" + (10**6).to_bytes(8, "little"))  # a header cut short
    assert store.load() is None


def _rewritten_store(store, change):
    """The store file with each header entry passed through ``change(path, entry) -> entry``."""
    import pickle

    from ms_lint.cache import _STORE_MAGIC

    with open(store.file, "rb") as handle:
        raw = handle.read()
    size = int.from_bytes(raw[len(_STORE_MAGIC):len(_STORE_MAGIC) + 8], "little")
    header = pickle.loads(raw[len(_STORE_MAGIC) + 8:len(_STORE_MAGIC) + 8 + size])
    head = pickle.dumps({path: change(path, entry) for path, entry in header.items()})
    with open(store.file, "wb") as handle:
        handle.write(_STORE_MAGIC + len(head).to_bytes(8, "little") + head + raw[len(_STORE_MAGIC) + 8 + size:])


@pytest.mark.parametrize("length", [2**40, 2**63, -5])
def test_a_store_whose_header_names_bytes_it_does_not_hold_is_made_again(tmp_path, length):
    """An independent review's reproducer: a length of 2**40 made ``os.pread`` raise MemoryError on every later
    run after an edit, where the whole store is written again."""
    paths, saved = _stored_pair(tmp_path)
    store = SummaryStore(str(tmp_path))
    _rewritten_store(store, lambda path, entry: entry[:6] + (length,) if path == paths[0] else entry)
    assert store.load() is None
    with pytest.raises(OSError):
        from ms_lint.cache import StoredBlob, _BlobFile

        StoredBlob(_BlobFile(store.file), 0, 2**40).read()


def test_a_stored_summary_read_from_another_entrys_place_is_made_again(tmp_path):
    """A header whose places point at each other's pickles: each summary read is checked against its entry's
    path and digest, and made again from its file (an independent review's reproducer gave other findings)."""
    from ms_lint.analysis.index import summarize_file

    paths, saved = _stored_pair(tmp_path)
    store = SummaryStore(str(tmp_path))
    places = {}
    _rewritten_store(store, lambda path, entry: places.setdefault(path, entry[5:]) and entry)
    swapped = dict(zip(paths, reversed([places[path] for path in paths])))
    _rewritten_store(store, lambda path, entry: entry[:5] + swapped[path])
    loaded = store.load()
    assert [loaded[path][2] for path in paths] == [summarize_file(path) for path in paths]


def test_copies_of_a_stored_summary_read_the_same_file(tmp_path):
    """Copying a stored summary (or the place of its pickle) never closes the file the original reads from."""
    import copy
    import gc
    import pickle

    from ms_lint.analysis.summary import StoredSummary

    paths, saved = _stored_pair(tmp_path)
    loaded = SummaryStore(str(tmp_path)).load()
    blob = object.__getattribute__(loaded[paths[0]][2], "__dict__")["_pickled"]
    assert copy.copy(blob) is blob and copy.deepcopy(blob) is blob
    with pytest.raises(TypeError):
        pickle.dumps(blob)
    copied = copy.copy(loaded[paths[1]][2])
    del copied
    gc.collect()
    assert type(loaded[paths[1]][2]) is StoredSummary and loaded[paths[1]][2] == saved[paths[1]][2]


def test_a_damaged_stored_summary_is_made_again_from_its_file(tmp_path):
    """A summary whose pickle does not load (a damaged store) is the file's summary made again, not an error."""
    from ms_lint.analysis.index import summarize_file
    from ms_lint.analysis.summary import stored_summary

    path = tmp_path / "a.py"
    path.write_text("def helper(x):\n    return x\n", encoding="utf-8")
    made = summarize_file(str(path))
    damaged = stored_summary(made.name, made.path, made.digest, b"not a pickle")
    assert list(damaged.functions) == ["helper"] and damaged == made


def test_a_damaged_stored_summary_of_bytes_gone_has_the_shape_of_none(tmp_path):
    """The file changed since the damaged entry was made: what it said is lost, and it must not pass for the new
    text's (a carry would keep what was worked out from the old text over an edit that changed it)."""
    from ms_lint.analysis.index import summarize_file
    from ms_lint.analysis.summary import same_shape, stored_summary

    path = tmp_path / "a.py"
    path.write_text("def helper(x):\n    return x\n", encoding="utf-8")
    made = summarize_file(str(path))
    path.write_text("class Helper(object):\n    pass\n", encoding="utf-8")
    damaged = stored_summary(made.name, made.path, made.digest, b"not a pickle")
    now = summarize_file(str(path))
    assert not same_shape(damaged, now) and not same_shape(now, damaged)
    assert damaged.functions == {} and damaged.name == made.name


def test_a_name_set_on_an_unread_summary_is_kept(tmp_path):
    """``ProjectIndex.module`` renames a summary it finds under another name: the pickle read later keeps it."""
    from ms_lint.analysis.index import summarize_file
    from ms_lint.analysis.summary import pickled_summary, stored_summary

    path = tmp_path / "head.py"
    path.write_text("class Head(object):\n    pass\n", encoding="utf-8")
    made = summarize_file(str(path))
    unread = stored_summary(made.name, made.path, made.digest, pickled_summary(made))
    unread.name = "pkg.sub.head"
    assert list(unread.classes) == ["Head"] and unread.name == "pkg.sub.head"
