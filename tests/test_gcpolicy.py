"""The garbage-collector policy (``ms_lint.gcpolicy``): the ``ms-lint`` command freezes the project index once it is
built; ``main`` called in a long-lived process (tests, an editor) never freezes anything."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT = os.path.join(ROOT, "fixtures", "project")

_REPORT = ("import atexit, gc, sys\n"
           "atexit.register(lambda: print('frozen', gc.get_freeze_count(), 'threshold', gc.get_threshold()[0]))\n"
           "from ms_lint.cli import {function}\n"
           "code = {function}()\n")


def _run(function, *args):
    proc = subprocess.run([sys.executable, "-c", _REPORT.format(function=function), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    last = proc.stdout.strip().splitlines()[-1].split()
    return proc, int(last[1]), int(last[3])


def test_the_command_freezes_the_index_and_main_alone_does_not():
    proc, frozen, threshold = _run("entry", "check", "--no-cache", "--exit-zero", "--jobs", "1", PROJECT)
    assert proc.returncode == 0, proc.stderr
    assert frozen > 10_000 and threshold == 100_000  # the summaries and the index, out of the collector's reach
    proc, frozen, threshold = _run("main", "check", "--no-cache", "--exit-zero", "--jobs", "1", PROJECT)
    assert proc.returncode == 0, proc.stderr
    assert frozen == 0 and threshold == 700  # the defaults are back after the run


def test_a_command_that_builds_no_index_freezes_nothing():
    proc, frozen, threshold = _run("entry", "rules")
    assert proc.returncode == 0, proc.stderr
    assert frozen == 0 and threshold == 100_000


def test_the_console_script_is_the_entry():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        assert 'ms-lint = "ms_lint.cli:entry"' in handle.read()
    with open(os.path.join(ROOT, "ms_lint", "__main__.py"), encoding="utf-8") as handle:
        assert "entry()" in handle.read()
