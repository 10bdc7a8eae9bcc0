"""The analysis host (``ms_lint.host``): a process forked early in a cached run that analyzes the files it is sent
once the index is built. It must give what ``runner.analyze_files`` gives here, and give way to it whenever it
cannot."""
import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys

import pytest

from conftest import CLEAN, FLAGGED
from ms_lint import host as host_module
from ms_lint import runner
from ms_lint.analysis.index import ProjectIndex
from ms_lint.analysis.summary import StoredSummary, pickled_summary
from ms_lint.cache import SummaryStore
from ms_lint.config import Config
from ms_lint.processes import cpu_count

pytestmark = pytest.mark.skipif(multiprocessing.get_start_method() != "fork" or not hasattr(os, "memfd_create"),
                                reason="the host is forked (Linux): where processes are spawned, none is started")

HELPER = """\
from mindspore import ops


def scaled(x):
    return ops.relu(x) * 2
"""

NET = """\
from mindspore import nn, ops

from pkg.helper import scaled


class Net(nn.Cell):
    def construct(self, x):
        out = []
        for i in range(x.shape[0]):
            out.append(scaled(x[i]))
        if x.sum() > 0:
            x = x * 2
        return ops.stack(out), x
"""


def write_package(root):
    for name, text in {"pkg/__init__.py": "", "pkg/helper.py": HELPER, "pkg/net.py": NET, "pkg/per_row.py": FLAGGED,
                       "pkg/clean.py": CLEAN}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return sorted(str(path) for path in (root / "pkg").glob("*.py"))


def lazy_index(root, paths):
    """The index a cached run builds: its summaries read from the store, still unpickled."""
    config = Config()
    SummaryStore(str(root)).save(ProjectIndex.for_files(paths).cache.entries)
    index = runner.build_index(paths, config, cache_dir=None, jobs=1, save=False)
    assert all(type(summary) is StoredSummary for summary in index.by_path.values())
    return index


def findings_of(results):
    return sorted((os.path.basename(path), finding.line, finding.code, finding.message)
                  for path, findings, _ in results for finding in findings)


def test_the_host_finds_what_the_analysis_here_finds(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    index = lazy_index(tmp_path, paths)
    config = Config()
    host = host_module.AnalysisHost()
    ran = []
    hosted = host.analyze(paths, lambda path: config, 2, index, meanwhile=lambda: ran.append(True))
    assert hosted is not None and ran == [True]
    assert _gone(host.pid)
    here = runner.analyze_files(paths, lambda path: config, 1, lazy_index(tmp_path, paths))
    assert findings_of(hosted) == findings_of(here)
    assert {code for _, _, code, _ in findings_of(hosted)} == {"MSL101", "MSL201"}
    assert sorted(path for path, _, _ in hosted) == paths and all(stamp for _, _, stamp in hosted)


def test_the_index_goes_to_the_host_with_its_summaries_unread(tmp_path, monkeypatch):
    """Sending the index does not unpickle the stored summaries (it would cost more than the host saves)."""
    import pickle

    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    index = lazy_index(tmp_path, paths)
    sent = pickle.loads(pickle.dumps(host_module._sent_index(index)))
    assert all(type(summary) is StoredSummary for summary in index.by_path.values())
    assert all(type(summary) is StoredSummary for summary in sent.by_path.values())
    assert sent.summary_store is None and index.summary_store is not None
    assert {name: summary.digest for name, summary in sent.modules.items()} == {
        name: summary.digest for name, summary in index.modules.items()}


def test_stored_summaries_go_to_the_host_as_references(tmp_path, monkeypatch):
    """The index's unread stored summaries are pickled as (name, path, digest), which the host resolves to the
    copies it loaded from the same store: a fraction of the bytes, the same index."""
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    index = lazy_index(tmp_path, paths)
    monkeypatch.setattr(host_module, "_STORED", {})
    host_module._load_stored(SummaryStore(str(tmp_path)))  # what the host does first
    sent = host_module._sent_index(index)
    by_reference = host_module._pickled_index(sent, by_reference=True)
    by_value = host_module._pickled_index(sent, by_reference=False)
    blobs = [pickled_summary(summary) for summary in index.by_path.values()]
    assert all(blob in bytes(by_value) and blob not in bytes(by_reference) for blob in blobs)
    assert len(by_reference) < len(by_value)
    loaded = pickle.loads(by_reference)
    assert all(type(summary) is StoredSummary for summary in index.by_path.values())  # still unread here
    for path, summary in loaded.by_path.items():
        assert type(summary) is StoredSummary
        assert summary is host_module._STORED[host_module._key_of(summary)]
        assert loaded.modules[summary.name] is summary
        assert summary.classes == index.by_path[path].classes  # read, as the host reads them


def test_a_summary_read_here_goes_by_value(tmp_path, monkeypatch):
    """A summary this process has read (or renamed: setting an attribute reads it) may differ from the stored one:
    it is pickled whole."""
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    index = lazy_index(tmp_path, paths)
    renamed = index.by_path[paths[0]]
    renamed.name = "elsewhere.renamed"
    monkeypatch.setattr(host_module, "_STORED", {})
    host_module._load_stored(SummaryStore(str(tmp_path)))
    loaded = pickle.loads(host_module._pickled_index(host_module._sent_index(index), by_reference=True))
    assert loaded.by_path[paths[0]].name == "elsewhere.renamed"
    assert type(loaded.by_path[paths[1]]) is StoredSummary


class _EmptyStore:
    """A summary store that holds nothing by the time the host loads it (it changed between the two loads)."""

    def load(self):
        return None


def test_a_host_missing_a_stored_summary_leaves_the_files_to_this_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    index = lazy_index(tmp_path, paths)
    host = host_module.AnalysisHost(_EmptyStore())
    ran = []
    assert host.analyze(paths, lambda path: Config(), 2, index, meanwhile=lambda: ran.append(True)) is None
    assert ran == [True] and _gone(host.pid)
    with_store = host_module.AnalysisHost(SummaryStore(str(tmp_path)))
    hosted = with_store.analyze(paths, lambda path: Config(), 2, lazy_index(tmp_path, paths))
    here = runner.analyze_files(paths, lambda path: Config(), 1, lazy_index(tmp_path, paths))
    assert hosted is not None and findings_of(hosted) == findings_of(here)


def test_a_host_not_waited_for_is_reaped_by_the_next_stop(tmp_path):
    """The answer read, the host is killed and not waited for (the kernel frees its memory meanwhile); a process
    that starts hosts again does not keep the ended ones as zombies."""
    import time

    first = host_module.AnalysisHost()
    first.stop(wait=False)
    deadline = time.monotonic() + 10
    while first.pid in host_module._UNREAPED and time.monotonic() < deadline:
        second = host_module.AnalysisHost()
        second.stop(wait=False)
        time.sleep(0.05)
    assert first.pid not in host_module._UNREAPED
    with pytest.raises(ChildProcessError):
        os.waitpid(first.pid, os.WNOHANG)  # reaped: no such child left


def test_the_host_cuts_a_few_files_in_parts_of_equal_weight():
    sizes = {"a": 90, "b": 50, "c": 40, "d": 10, "e": 5}
    parts = host_module._parts(sizes, 2)
    assert sorted(path for part in parts for path in part) == sorted(sizes) and len(parts) == 2
    loads = [sum(sizes[path] for path in part) for part in parts]
    assert loads[0] >= loads[1] and loads[0] - loads[1] <= 10  # the heaviest first (this process's); 100 / 95
    assert host_module._parts({"a": 1}, 2) == [["a"]]  # no empty part


@pytest.mark.parametrize("few", [True, False])
def test_a_host_child_that_dies_leaves_its_part_to_the_host(tmp_path, monkeypatch, few):
    """A forked child that dies (a crash in the parser) does not lose its files: the host analyzes them."""
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    config = Config()
    here = runner.analyze_files(paths, lambda path: config, 1, lazy_index(tmp_path, paths))
    if few:
        real = runner.analyze_here
        host_pid = os.getpid()

        def dying(part, config_of, project=None):
            if os.getpid() != host_pid:
                os._exit(3)
            return real(part, config_of, project)

        monkeypatch.setattr(runner, "analyze_here", dying)
    hosted = host_module._analyzed(paths, lambda path: config, 2, lazy_index(tmp_path, paths))
    assert findings_of(hosted) == findings_of(here)
    assert sorted(path for path, _, _ in hosted) == sorted(paths)


def test_the_host_keeps_its_work_where_sigchld_is_ignored(tmp_path, monkeypatch):
    """A second review's reproducer: started with SIGCHLD ignored (inherited through exec), the kernel reaps the
    host's children itself, and waiting for one raised: the host's results were thrown away."""
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    config = Config()
    here = runner.analyze_files(paths, lambda path: config, 1, lazy_index(tmp_path, paths))
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        hosted = host_module._analyzed(paths, lambda path: config, 2, lazy_index(tmp_path, paths))
    finally:
        signal.signal(signal.SIGCHLD, before)
    assert findings_of(hosted) == findings_of(here)
    assert host_module._analyzed([], lambda path: config, 2, None) == []


def test_ctrl_c_while_waiting_for_a_host_kills_and_reaps_it(monkeypatch):
    """A second review's reproducer: Ctrl-C while the command waits for the host it released gave a traceback and
    left the host to init. Now what is left is killed and reaped, and the interrupt goes on to the caller."""
    import time

    host = host_module.AnalysisHost()  # waits for an index that never comes
    monkeypatch.setattr(host_module, "_UNREAPED", [host.pid])

    def interrupted(seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(time, "sleep", interrupted)
    with pytest.raises(KeyboardInterrupt):
        host_module.reap_ended()
    assert host_module._UNREAPED == []
    with pytest.raises(ChildProcessError):
        os.waitpid(host.pid, os.WNOHANG)  # reaped
    host.stop()  # nothing left to do


def test_a_dead_host_leaves_the_files_to_this_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    host = host_module.AnalysisHost()
    os.kill(host.pid, signal.SIGKILL)
    os.waitpid(host.pid, 0)
    ran = []
    assert host.analyze(paths, lambda path: Config(), 2, lazy_index(tmp_path, paths),
                        meanwhile=lambda: ran.append(True)) is None
    assert ran == [True]  # run once, here: the caller does not run it again


def test_an_index_with_many_summaries_read_is_not_sent(tmp_path, monkeypatch):
    """A run that worked every fingerprint out has read every summary: the workers fork from this process."""
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    index = lazy_index(tmp_path, paths)
    for summary in index.by_path.values():
        summary.classes  # read
    monkeypatch.setattr(host_module, "MOST_SUMMARIES_SENT", len(paths) - 1)
    host = host_module.AnalysisHost()
    ran = []
    assert host.analyze(paths, lambda path: Config(), 2, index, meanwhile=lambda: ran.append(True)) is None
    assert ran == [] and _gone(host.pid)  # the caller runs it, with the analysis


def test_an_index_sent_before_the_summaries_were_read_goes_on_to_the_host(tmp_path, monkeypatch):
    """A run that works every fingerprint out reads every summary, after it has sent the index: only the tables
    worked out from them follow with the files, and the host, which has imported the analysis meanwhile, analyzes
    them (workers forked from this process would each import it first)."""
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    index = lazy_index(tmp_path, paths)
    host = host_module.AnalysisHost(SummaryStore(str(tmp_path)))
    host.send_index(index)
    for summary in index.by_path.values():
        summary.classes  # read
    index.graph_functions()  # the tables go with the files
    monkeypatch.setattr(host_module, "MOST_SUMMARIES_SENT", len(paths) - 1)
    hosted = host.analyze(paths, lambda path: Config(), 2, index)
    here = runner.analyze_files(paths, lambda path: Config(), 1, lazy_index(tmp_path, paths))
    assert hosted is not None and findings_of(hosted) == findings_of(here)


def _noting(monkeypatch, tmp_path, name):
    """Make the host (forked after this) note the files a function of ``host_module`` was given or gave, in
    ``tmp_path / name`` (one basename a line)."""
    import functools

    real = getattr(host_module, name)
    noted = tmp_path / f"{name}.txt"

    @functools.wraps(real)
    def noting(*args):
        answer = real(*args)
        files = answer if name == "_speculated" else args[0]
        noted.write_text("".join(os.path.basename(path) + "\n" for path in sorted(files)))
        return answer

    monkeypatch.setattr(host_module, name, noting)
    return noted


def _written(path, within=60.0):
    import time

    deadline = time.monotonic() + within
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return path.read_text().split()


@pytest.mark.parametrize("same_config", [True, False])
def test_the_host_analyzes_the_edited_files_while_the_fingerprints_are_worked_out(tmp_path, monkeypatch,
                                                                                  same_config):
    """``speculate``: the host analyzes the files whose bytes changed as soon as it has the index; the tasks that
    come later keep those results (for the same configuration) and the host analyzes only the others. A file
    speculated under another configuration is analyzed again under its own."""
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    net = [path for path in paths if path.endswith("net.py")]
    index = lazy_index(tmp_path, paths)
    speculated = _noting(monkeypatch, tmp_path, "_speculated")
    analyzed = _noting(monkeypatch, tmp_path, "_analyzed")
    config = Config()
    host = host_module.AnalysisHost(SummaryStore(str(tmp_path)))
    host.send_index(index)
    host.speculate(net, lambda path: config if same_config else Config(ignore=["MSL201"]))
    assert _written(speculated) == ["net.py"]  # before the tasks are sent: it speculated on all it was given
    hosted = host.analyze(paths, lambda path: config, 2, index)
    here = runner.analyze_files(paths, lambda path: config, 1, lazy_index(tmp_path, paths))
    assert hosted is not None and findings_of(hosted) == findings_of(here)
    assert ("net.py" in _written(analyzed)) is not same_config
    assert sorted(path for path, _, _ in hosted) == paths
    assert [code for name, _, code, _ in findings_of(hosted) if name == "net.py"] == ["MSL101", "MSL201"]


def test_the_speculation_stops_when_the_tasks_come(tmp_path, monkeypatch):
    """The host asks between files whether the parent's tasks have come, and speculates no further then."""
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    index = lazy_index(tmp_path, paths)
    tasks = [(path, 0) for path in paths]
    readable, writable = os.pipe()
    try:
        assert set(host_module._speculated(tasks, [Config()], index, readable)) == set(paths)
        os.write(writable, b"x")  # the tasks' message is waiting
        assert host_module._speculated(tasks, [Config()], index, readable) == {}
    finally:
        os.close(readable)
        os.close(writable)


def test_no_host_with_one_job(tmp_path, monkeypatch):
    """``--jobs 1``: one process works at a time, so no host imports the analysis beside this one."""
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    lazy_index(tmp_path, paths)  # a summary store: the run builds its index from it
    monkeypatch.setattr(host_module, "wanted", lambda: True)
    monkeypatch.setattr("ms_lint.processes.cpu_count", lambda: 2)
    assert runner._host_pays(Config(), None, None) and runner._host_pays(Config(), None, 2)
    assert not runner._host_pays(Config(), None, 1)


def test_no_host_where_the_analysis_is_imported_already():
    """A test run or an editor has imported the analysis: the workers it forks inherit it."""
    import ms_lint.engine  # noqa: F401  (what a test run or an editor has done)

    assert not host_module.wanted()


# ``ms-lint`` in a fresh interpreter, noting in HOSTED (a file) each time the host answered
CLI_NOTING_THE_HOST = """\
import os, sys
import ms_lint.host as host

analyze = host.AnalysisHost.analyze


def noted(self, *args, **kwargs):
    answer = analyze(self, *args, **kwargs)
    with open(os.environ["HOSTED"], "a") as handle:
        handle.write("host\\n" if answer is not None else "here\\n")
    return answer


host.AnalysisHost.analyze = noted
from ms_lint.cli import entry
sys.argv[0] = "ms-lint"
sys.exit(entry())
"""


def run_check(root, *args):
    env = dict(os.environ, HOSTED=str(root / "hosted.txt"))
    done = subprocess.run([sys.executable, "-c", CLI_NOTING_THE_HOST, "check", "--output-format", "json",
                           "--exit-zero", *args, "pkg"], cwd=root, capture_output=True, text=True, timeout=300,
                          env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return sorted(json.dumps(finding, sort_keys=True) for finding in json.loads(done.stdout))


def test_cached_runs_after_edits_find_what_uncached_runs_find(tmp_path):
    """In a fresh interpreter a cached run after an edit starts the host, which analyzes: after edits that keep
    the summaries' shape and after ones that do not, it gives ``--no-cache``'s findings, moved lines included."""
    write_package(tmp_path)
    net = tmp_path / "pkg" / "net.py"
    first = run_check(tmp_path)
    assert first == run_check(tmp_path, "--no-cache") and len(first) == 3
    edits = [lambda text: "# a comment\n" + text, lambda text: "REPEATS = 3\n" + text,
             lambda text: text.replace("        out = []\n", "        out = [abs(1)]\n"),
             # a call of a project function: every fingerprint worked out, the file analyzed meanwhile
             lambda text: text.replace("        out = [abs(1)]\n", "        out = [scaled(x)]\n")]
    for edit in edits:
        net.write_text(edit(net.read_text(encoding="utf-8")), encoding="utf-8")
        assert run_check(tmp_path) == run_check(tmp_path, "--no-cache")
    hosted = ["host"] * len(edits) if cpu_count() >= 2 else []  # one core: no host, the files analyzed here
    noted = tmp_path / "hosted.txt"
    assert (noted.read_text().split() if noted.exists() else []) == hosted


# ``ms-lint`` in a fresh interpreter where analyzing ``per_row.py`` kills the process that does it (as a crash in
# the parser would), wherever that is: the host, a worker, the command itself
CLI_KILLED_BY_A_FILE = """\
import os, signal, sys
from ms_lint import runner

analyze = runner._analyze_one


def killing(path, *args, **kwargs):
    if path.endswith("per_row.py"):
        os.kill(os.getpid(), signal.SIGKILL)
    return analyze(path, *args, **kwargs)


runner._analyze_one = killing
from ms_lint.cli import entry
sys.argv[0] = "ms-lint"
sys.exit(entry())
"""


@pytest.mark.skipif(cpu_count() < 2, reason="one core: no host, the few files analyzed in the command itself")
def test_a_file_that_kills_the_host_is_reported_and_the_run_goes_on(tmp_path):
    """A cached run of a few files, the host killed by one of them: the files go to workers, not to the command's
    own process (which the file would kill too), and the one that kills its worker is reported (MSL900) beside
    the others' findings."""
    write_package(tmp_path)
    run_check(tmp_path)  # the caches filled, without the crash
    for name in ("per_row.py", "net.py"):
        with open(tmp_path / "pkg" / name, "a", encoding="utf-8") as handle:
            handle.write("# edited\n")
    done = subprocess.run([sys.executable, "-c", CLI_KILLED_BY_A_FILE, "check", "--output-format", "json",
                           "--exit-zero", "pkg"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr, (done.returncode, done.stderr)  # MSL900: 2
    found = {(os.path.basename(finding["path"]), finding["code"]) for finding in json.loads(done.stdout)}
    assert ("per_row.py", "MSL900") in found and ("net.py", "MSL201") in found


@pytest.mark.skipif(cpu_count() < 2, reason="one core: no host, the few files analyzed in the command itself")
def test_a_file_that_kills_the_host_while_it_speculates_is_reported(tmp_path):
    """A second review's reproducer: the host died of the edited file it analyzed while the fingerprints were
    worked out (slowed down here to 1 s, as on a large project); sending it the tasks then failed, which was not
    taken for its death, and the command analyzed the few files itself and died of the file too (status -9)."""
    slow = CLI_KILLED_BY_A_FILE.replace("runner._analyze_one = killing\n", """runner._analyze_one = killing
import time
work_out = runner._FingerprintWork.work_out
runner._FingerprintWork.work_out = lambda self, missing: (time.sleep(1), work_out(self, missing))[1]
""")
    write_package(tmp_path)
    run_check(tmp_path)
    with open(tmp_path / "pkg" / "per_row.py", "a", encoding="utf-8") as handle:
        handle.write("\n\ndef added():\n    return 1\n")  # a new definition: every fingerprint worked out
    done = subprocess.run([sys.executable, "-c", slow, "check", "--output-format", "json", "--exit-zero", "pkg"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    found = {(os.path.basename(finding["path"]), finding["code"]) for finding in json.loads(done.stdout)}
    assert ("per_row.py", "MSL900") in found and ("net.py", "MSL201") in found


# Runs the CLI (noting the host's answers) as its own child after making itself the subreaper of what that starts,
# which it never reaps: as a container whose PID 1 reaps nothing. Prints the zombies it was left.
SUBREAPER = """\
import ctypes, os, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
root, cli = sys.argv[1], sys.argv[2]
net = os.path.join(root, "pkg", "net.py")
for edit in range(3):
    with open(net, "a") as handle:
        handle.write(f"# edit {edit}\\n")
    subprocess.run([sys.executable, "-c", cli, "check", "--exit-zero", "pkg"], cwd=root, stdout=subprocess.DEVNULL)
time.sleep(1)
me = str(os.getpid())
print(sum(1 for entry in os.listdir("/proc") if entry.isdigit() and os.path.exists(f"/proc/{entry}/stat")
          and open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[:2] == ["Z", me]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER")
def test_no_process_is_left_to_init(tmp_path):
    """An independent review's reproducer: the host and its workers were left for init to reap, which a
    container's PID 1 may never do. The command reaps every process it started before it ends."""
    write_package(tmp_path)
    run_check(tmp_path)  # the cache the edited runs start from
    env = dict(os.environ, HOSTED=str(tmp_path / "hosted.txt"))
    done = subprocess.run([sys.executable, "-c", SUBREAPER, str(tmp_path), CLI_NOTING_THE_HOST], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]
    noted = tmp_path / "hosted.txt"
    assert (noted.read_text().split() if noted.exists() else []) == (["host"] * 3 if cpu_count() >= 2 else [])


def _children_of(pid):
    """The pids of the live processes whose parent is ``pid`` (Linux's /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z" and int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _gone(pid, within=10.0):
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def _sleeping_analysis(task):
    import time

    time.sleep(60)


def _sleeping_one(path, config, index=None):
    import time

    time.sleep(60)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel ends them: prctl(PR_SET_PDEATHSIG)")
@pytest.mark.parametrize("few", [True, False])
def test_the_workers_of_a_host_that_is_ended_end_too(tmp_path, monkeypatch, few):
    """An independent review's reproducer: Ctrl-C (or any error) while the host's workers analyze ends the host
    with SIGKILL, before they are done; they must not stay behind (holding the output pipe open). ``few``: the
    children the host forks for a few files (``host._analyzed``); else the workers of ``runner.analyze_files``."""
    import time

    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    index = lazy_index(tmp_path, paths)
    if few:
        monkeypatch.setattr(runner, "_analyze_one", _sleeping_one)
    else:
        monkeypatch.setattr(host_module, "FEW_FILES", 0)
        monkeypatch.setattr(runner, "_analyze_in_worker", _sleeping_analysis)
        monkeypatch.setattr(runner, "PARALLEL_THRESHOLD", 1)
    expected = 1 if few else 2  # the host analyzes one part itself
    host = host_module.AnalysisHost()
    host.send_index(index)
    host._put(pickle.dumps(([(path, 0) for path in paths], [Config()], 2, None)))
    deadline = time.monotonic() + 30
    while len(_children_of(host.pid)) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children_of(host.pid)
    assert len(workers) == expected
    host.stop()
    assert all(_gone(worker) for worker in workers)


# Stops a host while its children analyze (sleeping), as its own subreaper: a child the host leaves behind comes
# here. Prints the zombies and the live processes it was left.
STOPPED_WHILE_WORKING = """\
import ctypes, os, pickle, sys, time
ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
from ms_lint import host as host_module, runner
from ms_lint.config import Config

kernel_lists, few, paths = sys.argv[1] == "kernel", sys.argv[2] == "few", sys.argv[3:]
index = runner.build_index(paths, Config(), cache_dir=None, jobs=1, save=False)
runner._analyze_one = lambda *args, **kwargs: time.sleep(60)
if not kernel_lists:  # a kernel built without CONFIG_PROC_CHILDREN
    host_module._kernel_children = lambda: []
if not few:  # the pool's workers
    host_module.FEW_FILES = 0
    runner.PARALLEL_THRESHOLD = 1
host = host_module.AnalysisHost()
host.send_index(index)
host._put(pickle.dumps(([(path, 0) for path in paths], [Config()], 2, None)))
host.working = True  # as ``analyze`` says once it has sent the files


def children_of(pid, state):
    found = 0
    for entry in os.listdir("/proc"):
        try:
            fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        found += int(fields[1]) == pid and (fields[0] == "Z") == (state == "Z")
    return found


deadline = time.monotonic() + 30
while not children_of(host.pid, "live") and time.monotonic() < deadline:
    time.sleep(0.02)
assert children_of(host.pid, "live"), "the host forked no child"
host.stop()
time.sleep(0.3)
print(children_of(os.getpid(), "Z"), children_of(os.getpid(), "live"))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER")
@pytest.mark.parametrize("kernel", ["kernel", "own"])
@pytest.mark.parametrize("few", ["few", "pool"])
def test_a_host_stopped_while_its_children_analyze_reaps_them(tmp_path, monkeypatch, kernel, few):
    """An independent review's reproducer: Ctrl-C while the host's children analyze killed the host, and its
    children, killed with it, were left to init (where init reaps nothing, zombies for good). Asked to end, the
    host kills and reaps them first: its ``_analyzed`` children or its pool's workers, as the kernel lists them
    or, where it does not (a second review: a kernel without ``CONFIG_PROC_CHILDREN``), as it recorded them."""
    monkeypatch.chdir(tmp_path)
    paths = write_package(tmp_path)
    lazy_index(tmp_path, paths)  # the summary store
    done = subprocess.run([sys.executable, "-c", STOPPED_WHILE_WORKING, kernel, few, *paths], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "0"]


def test_a_host_whose_parent_is_killed_ends(tmp_path):
    """Killed before it could stop the host (a timeout, an editor ending it): the host does not wait forever."""
    code = ("import os, signal, time\nfrom ms_lint.host import AnalysisHost\nhost = AnalysisHost()\n"
            "print(host.pid, flush=True)\ntime.sleep(0.5)\nos.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    pid = int(done.stdout.split()[0])
    assert _gone(pid)
