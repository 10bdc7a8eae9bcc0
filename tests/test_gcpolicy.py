"""The garbage-collector policy (``ms_lint.gcpolicy``): the ``ms-lint`` command freezes the project index once it is
built; ``main`` called in a long-lived process (tests, an editor) and the language server never freeze anything."""
import os
import subprocess
import sys

from ms_lint import cli, gcpolicy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT = os.path.join(ROOT, "fixtures", "project")

# Reports, at exit: the objects frozen, the gen-0 threshold, the interpreter's own default threshold, and whether the
# summaries of the project's modules in the run's index are among the objects the collector still walks (frozen
# ones are not listed).
_REPORT = ("import atexit, gc, os, sys\n"
           "default = gc.get_threshold()[0]\n"
           "def report():\n"
           "    tracked = {{id(o) for o in gc.get_objects()}}\n"
           "    index = built[-1] if built else None\n"
           "    mine = [index.modules[name] for name in index.project_modules] if index else []\n"
           "    walked = bool(mine) and all(id(summary) in tracked for summary in mine)\n"
           "    none = bool(mine) and not any(id(summary) in tracked for summary in mine)\n"
           "    print('frozen', gc.get_freeze_count(), gc.get_threshold()[0], default, walked, none)\n"
           "from ms_lint.cli import {function}\n"
           "from ms_lint import runner\n"
           "built = []\n"
           "original = runner.build_index\n"
           "def keep(*args, **kwargs):\n"
           "    built.append(original(*args, **kwargs))  # kept alive to the end, as a run's index is\n"
           "    return built[-1]\n"
           "runner.build_index = keep\n"
           "atexit.register(report)  # main returns to the interpreter's exit\n"
           "real_exit = os._exit\n"
           "def report_then_exit(code):  # entry ends the process itself\n"
           "    report()\n"
           "    sys.stdout.flush()\n"
           "    real_exit(code)\n"
           "os._exit = report_then_exit\n"
           "code = {function}()\n")


def _run(function, *args):
    proc = subprocess.run([sys.executable, "-c", _REPORT.format(function=function), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.strip().splitlines()[-1].split()
    return proc.stdout, int(words[1]), int(words[2]), int(words[3]), words[4] == "True", words[5] == "True"


def test_the_command_freezes_the_index_and_main_alone_does_not():
    out, frozen, threshold, default, walked, none = _run("entry", "check", "--no-cache", "--exit-zero", "--jobs", "1",
                                                         PROJECT)
    assert frozen > 10_000 and threshold == gcpolicy.FEWER_COLLECTIONS[0]
    assert none  # every summary of the project's modules is out of the collector's reach
    findings = out.splitlines()[:-1]
    out, frozen, threshold, default, walked, none = _run("main", "check", "--no-cache", "--exit-zero", "--jobs", "1",
                                                         PROJECT)
    assert frozen == 0 and threshold == default  # the interpreter's thresholds are back after the run
    assert walked  # the same summaries, walked by the collector
    assert out.splitlines()[:-1] == findings


def test_workers_forked_after_the_freeze_find_the_same():
    one = _run("entry", "check", "--no-cache", "--exit-zero", "--jobs", "1", PROJECT)[0].splitlines()[:-1]
    two = _run("entry", "check", "--no-cache", "--exit-zero", "--jobs", "2", PROJECT)[0].splitlines()[:-1]
    assert one == two and any("MSL" in line for line in one)


def test_a_command_that_builds_no_index_freezes_nothing():
    out, frozen, threshold, default, walked, none = _run("entry", "rules")
    assert frozen == 0 and threshold == gcpolicy.FEWER_COLLECTIONS[0]


def test_only_the_one_shot_commands_are_short_lived(monkeypatch):
    monkeypatch.setattr(cli, "main", lambda: 0)
    monkeypatch.setattr(gcpolicy, "_SHORT_LIVED", [])
    monkeypatch.setattr(gcpolicy, "collect_less", lambda: None)
    ended = []
    monkeypatch.setattr(os, "_exit", ended.append)  # in place of ending the test's own process
    monkeypatch.setattr(sys, "argv", ["ms-lint", "server"])
    cli.entry()
    assert gcpolicy._SHORT_LIVED == [] and ended == []  # the language server lives as long as the editor
    monkeypatch.setattr(sys, "argv", ["ms-lint", "check", "."])
    cli.entry()
    assert gcpolicy._SHORT_LIVED == [True] and ended == [0]


def test_the_console_script_is_the_entry():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        assert 'ms-lint = "ms_lint.cli:entry"' in handle.read()
    with open(os.path.join(ROOT, "ms_lint", "__main__.py"), encoding="utf-8") as handle:
        assert "entry()" in handle.read()


_TEARDOWN = ("import atexit\n"
             "atexit.register(lambda: print('teardown ran'))\n"
             "from ms_lint.cli import {function}\n"
             "raise SystemExit({function}())\n")


def _ends(function, *args):
    return subprocess.run([sys.executable, "-c", _TEARDOWN.format(function=function), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_the_command_ends_without_the_interpreters_teardown_and_keeps_its_output_and_status():
    by_entry = _ends("entry", "check", "--no-cache", "--jobs", "1", PROJECT)
    by_main = _ends("main", "check", "--no-cache", "--jobs", "1", PROJECT)
    assert by_main.stdout.endswith("teardown ran\n")  # main in a long-lived process: the interpreter's exit
    assert "teardown ran" not in by_entry.stdout  # entry: the process ends with the run
    assert by_entry.stdout == by_main.stdout[:-len("teardown ran\n")]  # every line written, in full
    assert by_entry.returncode == by_main.returncode == 1  # findings: the status is kept
    listing = _ends("entry", "rules")
    assert listing.returncode == 0 and "MSL101" in listing.stdout and "teardown ran" not in listing.stdout



def test_a_profiled_command_ends_as_python_ends_it():
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-s", "tottime", "-m", "ms_lint", "rules"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "MSL101" in proc.stdout and "function calls" in proc.stdout  # the profiler's report was written


def _flagged_file(tmp_path):
    path = tmp_path / "flagged.py"
    path.write_text("import mindspore as ms\n\n\n@ms.jit\ndef f(x):\n    if x.sum() > 0:\n        x = x + 1\n"
                    "    return x\n")
    return str(path)


def test_output_to_a_closed_pipe_ends_with_status_2_even_with_findings(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}  # block-buffered stdout
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader went away (``ms-lint check | head`` after head exits)
    try:
        proc = subprocess.run([sys.executable, "-m", "ms_lint", "check", "--no-cache", _flagged_file(tmp_path)],
                              cwd=ROOT, stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=300)
    finally:
        os.close(write_end)
    assert proc.returncode == 2, proc.stderr  # an error, not "findings" (1)


def test_a_closed_stderr_keeps_the_status(tmp_path):
    command = f'"{sys.executable}" -m ms_lint check --no-cache "{_flagged_file(tmp_path)}" 2>&-'
    flagged = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert flagged.returncode == 1 and "MSL201" in flagged.stdout
    listing = subprocess.run(["bash", "-c", f'"{sys.executable}" -m ms_lint rules 2>&-'], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
    assert listing.returncode == 0 and "MSL101" in listing.stdout


def test_the_command_keeps_its_index_to_the_end_and_main_alone_does_not(monkeypatch):
    """A run's index dropped as the run returns is freed object by object (every summary read: 0.06-0.09 s);
    the command ends without the teardown, so it keeps the index to the end. A long-lived process frees it."""
    from ms_lint import runner
    from ms_lint.config import Config

    files = [os.path.join(PROJECT, name) for name in sorted(os.listdir(PROJECT)) if name.endswith(".py")]
    monkeypatch.setattr(gcpolicy, "keep_alive_objects", lambda: None)  # no freeze of this test run's objects
    monkeypatch.setattr(gcpolicy, "_KEPT", [])
    monkeypatch.setattr(gcpolicy, "_SHORT_LIVED", [])
    runner.build_index(files, Config(), use_cache=False, jobs=1)
    assert gcpolicy._KEPT == []
    monkeypatch.setattr(gcpolicy, "_SHORT_LIVED", [True])
    index = runner.build_index(files, Config(), use_cache=False, jobs=1)
    assert len(gcpolicy._KEPT) == 1 and gcpolicy._KEPT[0] is index and index.project_modules
