"""``ms-lint fix``: diff by default, ``--apply`` writes atomically and byte-faithfully, exit codes, bad input,
symlinks, parallel runs and ``--verified-only``. Runs with test-only rules (see test_fixer.py) in place of
the registered ones, so the expectations don't move when real rules change."""
import os
import signal
import stat
import subprocess
import sys
import re
import textwrap
import time

import libcst as cst
import pytest

import ms_lint.engine
from ms_lint.commands.fix import FixOptions, accepts, unified_diff
from ms_lint.rules import Rule
from ms_lint.writer import WriteError, write_atomic
from test_fixer import ModuleSetup, Risky, SlowSum


class Sum101(SlowSum):
    code = "MSL101"


class Risky201(Risky):
    code = "MSL201"


class Setup301(ModuleSetup):
    code = "MSL301"


class NoFix102(Rule):
    """Flags ``no_fix(x)`` and offers nothing."""

    code = "MSL102"

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value == "no_fix":
            self.report(node, "cannot be fixed")


@pytest.fixture(autouse=True)
def test_rules(monkeypatch):
    monkeypatch.setattr(ms_lint.engine, "all_rules", lambda: [Sum101, NoFix102, Risky201, Setup301])


CODE = textwrap.dedent("""\
    import mindspore as ms


    @ms.jit
    def f(x):
        y = slow_sum(x)  # comment
        return slow_sum(y)
    """)
FIXED = CODE.replace("slow_sum", "ms.ops.sum")


def test_default_prints_a_diff_and_writes_nothing(run_cli, write):
    path = write("m.py", CODE)
    before = os.stat(path)
    code, out, err = run_cli("fix", "m.py")
    assert code == 1  # changes pending
    assert out == (
        "--- a/m.py\n+++ b/m.py\n@@ -3,5 +3,5 @@\n \n @ms.jit\n def f(x):\n"
        "-    y = slow_sum(x)  # comment\n-    return slow_sum(y)\n"
        "+    y = ms.ops.sum(x)  # comment\n+    return ms.ops.sum(y)\n"
    )
    assert err.strip().splitlines()[-1] == "Would fix 2 findings in 1 file; 0 remaining."
    assert path.read_text() == CODE
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns


def test_apply_writes_and_a_second_run_finds_nothing(run_cli, write, tmp_path):
    path = write("m.py", CODE)
    code, out, err = run_cli("fix", "--apply", "m.py")
    assert (code, out) == (0, "")
    assert err.strip().splitlines()[-1] == "Fixed 2 findings in 1 file; 0 remaining."
    assert path.read_text() == FIXED
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]  # no temporary file left behind
    code, out, err = run_cli("fix", "m.py")
    assert (code, out) == (0, "")
    assert "Would fix 0 findings in 0 files; 0 remaining." in err


def test_apply_with_diff_also_prints_the_diff(run_cli, write):
    write("m.py", CODE)
    code, out, _ = run_cli("fix", "--apply", "--diff", "m.py")
    assert code == 0 and out.startswith("--- a/m.py\n+++ b/m.py\n")


def test_findings_without_a_fix_leave_exit_1_and_are_listed(run_cli, write):
    path = write("m.py", CODE.replace("return slow_sum(y)", "return no_fix(y)"))
    code, out, err = run_cli("fix", "--apply", "m.py")
    assert code == 1
    assert "m.py:7:12: MSL102 cannot be fixed" in err
    assert err.strip().splitlines()[-1] == "Fixed 1 finding in 1 file; 1 remaining."
    assert "y = ms.ops.sum(x)" in path.read_text()


def test_unsafe_fixes_only_with_the_flag(run_cli, write):
    path = write("m.py", CODE.replace("return slow_sum(y)", "return risky(y)"))
    code, _, err = run_cli("fix", "--apply", "m.py")
    assert code == 1
    assert "m.py:7:12: MSL201 [*unsafe] risky" in err
    assert err.strip().splitlines()[-1] == "Fixed 1 finding in 1 file; 1 remaining (1 need --unsafe-fixes)."
    assert "return risky(y)" in path.read_text()
    code, _, err = run_cli("fix", "--apply", "--unsafe-fixes", "m.py")
    assert code == 0
    assert "return careful(y)" in path.read_text()


def test_select_and_ignore_work_as_in_check(run_cli, write):
    content = CODE.replace("return slow_sum(y)", "return risky(y)")
    path = write("m.py", content)
    code, out, _ = run_cli("fix", "--unsafe-fixes", "--select", "MSL201", "m.py")
    assert code == 1 and "+    return careful(y)" in out and "ms.ops.sum" not in out
    code, out, _ = run_cli("fix", "--unsafe-fixes", "--apply", "--ignore", "MSL201", "m.py")
    assert code == 0
    assert "ms.ops.sum(x)" in path.read_text() and "risky(y)" in path.read_text()
    code, _, err = run_cli("fix", "--select", "MSL999", "m.py")
    assert code == 2 and "unknown rule code" in err


def test_crlf_bom_latin1_and_mode_are_preserved(run_cli, write):
    crlf = write("crlf.py", b"\xef\xbb\xbf" + CODE.replace("\n", "\r\n").encode())
    os.chmod(crlf, 0o754)
    latin = write("latin.py", b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + CODE.encode())
    code, _, err = run_cli("fix", "--apply", "crlf.py", "latin.py")
    assert code == 0, err
    assert crlf.read_bytes() == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(os.stat(crlf).st_mode) == 0o754
    assert latin.read_bytes() == b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXED.encode()


def test_import_lines_added_to_a_crlf_file_are_crlf(run_cli, write):
    path = write("m.py", CODE.replace("import mindspore as ms", "from mindspore import jit").replace(
        "@ms.jit", "@jit").replace("\n", "\r\n").encode())
    code, _, _ = run_cli("fix", "--apply", "m.py")
    data = path.read_bytes()
    assert code == 0
    assert b"from mindspore import jit, ops\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_only_the_rewritten_lines_change(run_cli, write):
    head = "# a header comment\r\nimport mindspore as ms\n\n\nTABS = {'a':\t1,   'b' : 2}  # odd spacing kept\n"
    path = write("m.py", (head + CODE.split("\n", 1)[1] + "x = '''\n  text\n'''").encode())
    before = path.read_bytes().split(b"\n")
    code, _, _ = run_cli("fix", "--apply", "m.py")
    after = path.read_bytes().split(b"\n")
    assert code == 0 and len(before) == len(after)
    assert [i for i, (a, b) in enumerate(zip(before, after)) if a != b] == [9, 10]


def test_symlinks_are_written_through_and_a_file_is_fixed_once(run_cli, write, tmp_path):
    real = write("real.py", CODE)
    os.symlink("real.py", tmp_path / "link.py")
    code, out, err = run_cli("fix", "--apply", "--diff", "link.py", "real.py")
    assert code == 0, err
    assert os.path.islink(tmp_path / "link.py") and os.readlink(tmp_path / "link.py") == "real.py"
    assert real.read_text() == FIXED
    assert out.count("+++ ") == 1
    assert "Fixed 2 findings in 1 file;" in err


def test_an_unanalyzable_file_gives_msl900_and_exit_2_while_others_are_fixed(run_cli, write):
    write("bad.py", b"import mindspore\nx = '\xff'\n")
    write("syntax.py", "import mindspore\ndef f(:\n")
    good = write("good.py", CODE)
    code, out, err = run_cli("fix", "--apply", ".")
    assert code == 2
    assert "Traceback" not in err
    assert "bad.py:2:1: MSL900 cannot analyze file: cannot decode" in err
    assert "syntax.py:2:" in err and "MSL900" in err
    assert good.read_text() == FIXED


def test_a_write_failure_leaves_the_file_untouched_and_exits_2(run_cli, write, tmp_path, monkeypatch):
    path = write("m.py", CODE)

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    code, _, err = run_cli("fix", "--apply", "m.py")
    assert code == 2
    assert "m.py: error: not written: cannot write: No space left on device" in err
    assert path.read_text() == CODE
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


def test_module_level_fixes_and_summary_counts(run_cli, write):
    write("a.py", CODE)
    write("b.py", "import mindspore\nsetup_cache()\n")
    write("c.py", "import mindspore\n")
    code, out, err = run_cli("fix", "--apply", "--show-fixes", "--statistics", ".")
    assert code == 0
    lines = err.strip().splitlines()
    assert "a.py:6:9: MSL101 fixed: slow_sum is slow" in lines
    assert "b.py:2:1: MSL301 fixed: cache off" in lines
    assert "     2  MSL101 fixed" in lines and "     1  MSL301 fixed" in lines
    assert lines[-1] == "Fixed 3 findings in 2 files; 0 remaining."


def test_parallel_run_fixes_every_file_and_keeps_the_order(run_cli, write):
    # Workers are forked (Linux default) and inherit the test rules patched into the engine.
    names = [f"pkg/m{i:02d}.py" for i in range(30)]
    for name in names:
        write(name, CODE)
    code, out, err = run_cli("fix", "--jobs", "2", "pkg")
    assert code == 1
    headers = [line[6:] for line in out.splitlines() if line.startswith("--- a/")]
    assert headers == names
    code, _, err = run_cli("fix", "--apply", "--jobs", "2", "pkg")
    assert code == 0 and "Fixed 60 findings in 30 files; 0 remaining." in err


@pytest.mark.parametrize("args, message", [
    (["--accept-tradeoff"], "--accept-tradeoff only makes sense with --verified-only"),
    (["--jobs", "0"], "--jobs must be at least 1"),
])
def test_usage_errors_exit_2(run_cli, write, args, message):
    write("m.py", CODE)
    code, _, err = run_cli("fix", *args, "m.py")
    assert code == 2 and message in err


def test_verified_only_without_inputs_spec_applies_nothing_and_says_why(run_cli, write):
    path = write("m.py", CODE + "\nsetup_cache()\n")
    code, out, err = run_cli("fix", "--apply", "--verified-only", "m.py")
    assert code == 1
    assert path.read_text() == CODE + "\nsetup_cache()\n"
    assert "m.py:6:9: MSL101 not fixed: not verified, no inputs spec for f" in err
    assert "m.py:9:1: MSL301 not fixed: not verifiable" in err
    assert err.strip().splitlines()[-1] == "Fixed 0 findings in 0 files; 3 remaining (3 not verified)."


@pytest.mark.parametrize("verdict, tradeoff, expected", [
    ("verified", False, True), ("tradeoff", False, False), ("tradeoff", True, True),
    ("slower", True, False), ("mismatch", True, False), ("original-failed", True, False),
    ("rewrite-failed", True, False), ("error", True, False),
])
def test_which_verdicts_are_applied(verdict, tradeoff, expected):
    assert accepts(verdict, tradeoff) is expected


# -- diff format -------------------------------------------------------------------------------------------

def test_diff_marks_a_missing_final_newline_and_splits_on_newlines_only():
    diff = unified_diff("a = 1\x0c  # form feed\nb = 2", "a = 1\x0c  # form feed\nb = 3", "dir/m.py")
    assert diff == ("--- a/dir/m.py\n+++ b/dir/m.py\n@@ -1,2 +1,2 @@\n a = 1\x0c  # form feed\n"
                    "-b = 2\n\\ No newline at end of file\n+b = 3\n\\ No newline at end of file\n")


def test_fix_options_defaults_show_a_diff_and_write_nothing():
    options = FixOptions()
    assert options.diff and not options.apply and not options.unsafe


# -- the writer --------------------------------------------------------------------------------------------

def test_writer_refuses_when_the_file_changed_since_it_was_read(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"edited by the user\n")
    with pytest.raises(WriteError, match="changed on disk"):
        write_atomic(str(path), b"fixed\n", expected=b"what we read\n")
    assert path.read_bytes() == b"edited by the user\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


def test_writer_keeps_mode_and_writes_through_symlinks(tmp_path):
    target = tmp_path / "t.py"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o640)
    os.symlink(target, tmp_path / "l.py")
    write_atomic(str(tmp_path / "l.py"), b"new\n", expected=b"old\n")
    assert target.read_bytes() == b"new\n" and stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert os.path.islink(tmp_path / "l.py")


WRITER_LOOP = """
import sys
from ms_lint.writer import write_atomic
path, a, b = sys.argv[1], sys.argv[2].encode() * 20000, sys.argv[3].encode() * 30000
print("ready", flush=True)
i = 0
while True:
    write_atomic(path, a if i % 2 else b)
    i += 1
"""


def test_a_killed_writer_leaves_the_old_or_the_new_file_never_a_mix(tmp_path):
    """SIGKILL a process that keeps rewriting a file: whenever it dies, the file is one version, whole."""
    path = tmp_path / "m.py"
    versions = {b"a = 1\n" * 20000, b"bb = 22\n" * 30000}
    path.write_bytes(b"a = 1\n" * 20000)
    for delay in (0.05, 0.13, 0.21, 0.34, 0.4):
        proc = subprocess.Popen([sys.executable, "-c", WRITER_LOOP, str(path), "a = 1\n", "bb = 22\n"],
                                stdout=subprocess.PIPE)
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert path.read_bytes() in versions
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "m.py"]
    assert all(name.startswith(".m.py.ms-lint-") and name.endswith(".tmp") for name in leftovers)


# -- --verified-only with real MindSpore -------------------------------------------------------------------

class SwapHelper(Rule):
    """``slow_double(x)`` -> ``fast_double(x)`` and ``slow_triple(x)`` -> ``wrong_triple(x)``."""

    code = "MSL101"
    SWAPS = {"slow_double": "fast_double", "slow_triple": "wrong_triple"}

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value in self.SWAPS:
            from ms_lint.diagnostics import SAFE, Fix

            new = node.with_changes(func=cst.Name(self.SWAPS[node.func.value]))
            self.report(node, "slow helper", Fix(SAFE, "use the fast one", edits=((node, new),)))


VERIFY_MODULE = textwrap.dedent("""\
    import mindspore as ms
    from mindspore import ops


    def fast_double(x):
        return x * 2


    def slow_double(x):
        out = []
        for i in range(x.shape[0]):
            out.append(x[i] * 2)
        return ops.stack(out)


    def wrong_triple(x):
        return x * 2


    def slow_triple(x):
        out = []
        for i in range(x.shape[0]):
            out.append(x[i] * 3)
        return ops.stack(out)


    # ms-lint: inputs=x=float32[48,4]
    @ms.jit
    def f(x):
        return slow_double(x)


    # ms-lint: inputs=x=float32[48,4]
    @ms.jit
    def g(x):
        return slow_triple(x)
    """)


@pytest.mark.mindspore
def test_verified_only_applies_exactly_the_rewrites_the_verifier_proves(run_cli, write, monkeypatch):
    pytest.importorskip("mindspore")
    monkeypatch.setattr(ms_lint.engine, "all_rules", lambda: [SwapHelper])
    path = write("model.py", VERIFY_MODULE)
    # --accept-tradeoff: the verdict between verified and tradeoff hangs on per-call timings, which a loaded CI
    # machine can swing; what this test pins down is that the matching rewrite is applied and the wrong one not.
    code, out, err = run_cli("fix", "--apply", "--verified-only", "--accept-tradeoff", "--repeat", "1", "model.py")
    text = path.read_text()
    assert "return fast_double(x)" in text, err
    assert "return slow_triple(x)" in text, err
    assert re.search(r"model\.py:30:12: MSL101 verified, applied: (verified|tradeoff)", err), err
    assert "model.py:36:12: MSL101 not fixed: mismatch" in err
    assert code == 1
    assert err.strip().splitlines()[-1] == "Fixed 1 finding in 1 file; 1 remaining (1 not verified)."
