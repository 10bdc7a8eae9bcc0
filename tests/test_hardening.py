"""Hostile inputs (issue 18): every statement type, deep nesting, crashing workers, read-only files, unreadable
folders, per-file configuration, noqa parity with flake8, summaries, --jobs, short messages, ruff's flags, stdin
and MSL301's cache folder. Every input is built here. ``check``, ``fix --apply --unsafe-fixes`` and the flake8
plugin must never show a traceback, never crash and never write a file they must not write.
"""
from __future__ import annotations

import ast
import collections
import contextlib
import io
import json
import os
import pathlib
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import traceback

import libcst as cst
import pytest

from ms_lint import pool, processes, runner
from ms_lint.config import Config
from ms_lint.context import ModuleContext
from ms_lint.engine import BOOL_CHAIN_LIMIT, analyze_source, run_rules
from ms_lint.rules import all_rules
from ms_lint.source import decode_source

ROOT = pathlib.Path(__file__).resolve().parent.parent

CELL = textwrap.dedent("""\
    import mindspore as ms
    from mindspore import nn, ops


    class Net(nn.Cell):
        def construct(self, x):
            out = []
            for i in range(x.shape[0]):
                out.append(ops.relu(x[i]) * 2)
            return ops.stack(out)
    """)

# Every statement type of Python 3.9-3.11 (what this interpreter compiles), outside graph code and in it.
ALL_STATEMENTS = textwrap.dedent('''\
    import os
    import sys as _sys
    from typing import List
    import mindspore as ms
    from mindspore import nn, ops

    X: int = 3
    Y = (Z := 4)
    del Z
    assert X
    names = [f"{X!r:>{Y}}", f"{f'{X}'}"]


    async def coro(xs):
        async with ctx() as c:
            async for x in xs:
                await c
        return [y async for y in xs]


    def gen():
        yield 1
        yield from range(3)


    def plain(value, *args, key=None, **kw):
        global X
        x = 0

        def inner():
            nonlocal x
            x += 1
        match value:
            case [1, 2, *rest]:
                pass
            case {"k": v, **others}:
                pass
            case Point(x=0, y=yy) if yy > 0:
                pass
            case str() | bytes() as s:
                pass
            case None:
                pass
            case _:
                raise ValueError("no") from None
        try:
            pass
        except* ValueError as group:
            pass
        try:
            import json
        except ImportError:
            json = None
        else:
            pass
        finally:
            pass
        with open("f") as a, open("g") as b:
            pass
        while x < 3:
            x += 1
            if x:
                continue
            else:
                break
        else:
            pass
        for k in range(3):
            pass
        else:
            pass
        return lambda q: q


    class Net(nn.Cell):
        def construct(self, x, mode):
            match mode:
                case 1:
                    for i in range(x.shape[0]):  # expect: MSL101
                        x = x + x[i]
                case _:
                    pass
            try:
                y = x + 1
            except* ValueError:
                y = x
            if (n := x.shape[0]) > 0:
                y = y * n
            s = f"{f'{n}'}"
            with ctx():
                y = y + 1
            while False:
                pass
            assert True
            return y
    ''')

# PEP 695 (Python 3.12+): libcst parses it; on this Python it is a syntax error for compile().
PEP_695 = textwrap.dedent("""\
    import mindspore as ms
    from mindspore import nn, ops

    type Alias[T] = list[T]


    def generic[T: int, *Ts, **P](x: T) -> T:
        return x


    class Net[T](nn.Cell):
        def construct(self, x):
            type Inner = int
            match x.shape:
                case (a, b):
                    for i in range(x.shape[0]):
                        x = x + x[i]
            return x
    """)


def cli(*args, cwd, stdin=None, env=None, user=None):
    """``python -m ms_lint ...`` in a subprocess: (exit code, stdout, stderr). ``user``: run as that user."""
    if user is not None:
        return as_user(user, args, cwd)
    environment = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    proc = subprocess.run([sys.executable, "-m", "ms_lint", *args], cwd=cwd, input=stdin, capture_output=True,
                          env=environment, timeout=300)
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def as_user(user, args, cwd):
    """``ms-lint ARGS`` in a forked child that dropped to ``user``: the interpreter (which that user may not be
    allowed to read, e.g. under /root) is already loaded. The same command (its options, on a file of its own: a
    path of ``args`` missing there would end the command before it analyzes anything) runs here first, as
    ourselves, so every module it imports lazily is loaded before the fork."""
    from ms_lint.cli import main

    with tempfile.TemporaryDirectory() as warm:
        pathlib.Path(warm, "w.py").write_text(CELL)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            here = os.getcwd()
            os.chdir(warm)
            try:
                main([args[0], *(a for a in args[1:] if a.startswith("-")), "w.py"])
            finally:
                os.chdir(here)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            os.setgid(user.pw_gid)
            os.setgroups([])
            os.setuid(user.pw_uid)
            os.chdir(cwd)
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(list(args))
            payload = [code, out.getvalue(), err.getvalue()]
        except BaseException:
            payload = [97, "", traceback.format_exc()]
        os.write(write, json.dumps(payload).encode())
        os._exit(0)
    os.close(write)
    chunks = []
    while True:
        chunk = os.read(read, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    code, out, err = json.loads(b"".join(chunks).decode())
    return code, out, err


def flake8(*args, cwd):
    proc = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select=MSL",
                           "--format=%(path)s:%(row)d:%(col)d: %(code)s", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return proc.returncode, proc.stdout, proc.stderr


def no_crash(code, out, err):
    assert code in (0, 1, 2), (code, err[-2000:])
    assert "Traceback" not in out + err, err[-3000:]


def codes(out):
    return [line.split(": ")[1].split()[0] for line in out.splitlines() if ": MSL" in line]


def snapshot(folder):
    return {p: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode)) for p in sorted(folder.rglob("*.py"))}


@pytest.fixture
def unprivileged():
    """A user the permission bits apply to (we may run as root, for whom 0o000 still reads)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        pytest.fail("running as root needs a 'nobody' user to test permissions that are really in force")


@pytest.fixture
def shared_tmp():
    """A folder another user can enter (pytest's tmp_path is private to its owner)."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="ms-lint-hostile-"))
    folder.chmod(0o777)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        try:
            path.chmod(0o777 if path.is_dir() else 0o666)
        except OSError:
            pass
    shutil.rmtree(folder, ignore_errors=True)


# -- 1. every statement type ------------------------------------------------------------------------------

def test_every_statement_type_is_walked_inside_and_outside_graph_code(tmp_path):
    (tmp_path / "allstmts.py").write_text(ALL_STATEMENTS)
    code, out, err = cli("check", "--no-cache", "allstmts.py", cwd=tmp_path)
    no_crash(code, out, err)
    expected = [i + 1 for i, line in enumerate(ALL_STATEMENTS.splitlines()) if "# expect: MSL101" in line]
    assert [(c, int(line.split(":")[1])) for c, line in zip(codes(out), out.splitlines())] == [("MSL101", expected[0])]
    before = snapshot(tmp_path)
    code, out, err = cli("fix", "--apply", "--unsafe-fixes", "allstmts.py", cwd=tmp_path)
    no_crash(code, out, err)
    assert "MSL900" not in err
    compile((tmp_path / "allstmts.py").read_text(), "allstmts.py", "exec")
    assert snapshot(tmp_path) != before or "MSL101" in err  # fixed, or said why not
    status, reported, ferr = flake8("allstmts.py", cwd=tmp_path)
    assert "Traceback" not in ferr and "MSL900" not in reported


def test_pep_695_and_match_in_graph_code_are_walked_by_the_rules():
    """The walk itself: parsed with libcst directly, since this Python's compile() may reject the syntax."""
    module = cst.parse_module(PEP_695)
    context = ModuleContext(module, PEP_695, "pep695.py", Config())
    assert [report.rule.code for report in run_rules(context, all_rules())] == ["MSL101"]


def test_pep_695_through_check_matches_what_this_python_compiles():
    findings = analyze_source(decode_source("pep695.py", PEP_695.encode()), Config(), "pep695.py").findings
    if sys.version_info >= (3, 12):
        assert [f.code for f in findings] == ["MSL101"]
    else:  # what this Python cannot compile it cannot run: MSL900 with Python's own message, never a crash
        assert [f.code for f in findings] == ["MSL900"] and "syntax error (Python 3." in findings[0].message


# -- 2, 3. nesting libcst or CPython cannot take ----------------------------------------------------------

HOSTILE_NESTING = {
    "parens.py": "y = " + "(" * 1500 + "1" + ")" * 1500 + "\n",  # crashed libcst (SIGSEGV)
    "lists.py": "y = " + "[" * 500 + "]" * 500 + "\n",
    "calls.py": "y = " + "f(" * 1000 + ")" * 1000 + "\n",
    "sum.py": "y = " + "+".join(["1"] * 5000) + "\n",  # RecursionError in CPython's compiler
    "nots.py": "y = " + "not " * 5000 + "x\n",
    "bools.py": "y = " + " and ".join(["a"] * 8000) + "\n",  # CPython compiles it; libcst's parser crashed
}


def hostile_tree(folder, extra_clean=30):
    for name, tail in HOSTILE_NESTING.items():
        (folder / name).write_text(CELL + tail)
    for i in range(extra_clean):  # enough files for the worker pool (runner.PARALLEL_THRESHOLD)
        (folder / f"ok_{i}.py").write_text(CELL)


def test_deep_nesting_is_msl900_on_one_worker_and_on_many(tmp_path):
    hostile_tree(tmp_path)
    for jobs in ("1", "2"):
        code, out, err = cli("check", "--no-cache", "--jobs", jobs, ".", cwd=tmp_path)
        no_crash(code, out, err)
        assert code == 2
        lines = out.splitlines()
        for name in HOSTILE_NESTING:
            assert any(line.startswith(f"{name}:") and "MSL900" in line for line in lines), (name, out)
        assert sum(1 for line in lines if line.startswith("ok_") and "MSL101" in line) == 30


def test_fix_writes_nothing_python_cannot_compile(tmp_path):
    hostile_tree(tmp_path, extra_clean=0)
    before = snapshot(tmp_path)
    code, out, err = cli("fix", "--apply", "--unsafe-fixes", ".", cwd=tmp_path)
    no_crash(code, out, err)
    assert code == 2 and snapshot(tmp_path) == before
    assert err.count("MSL900") == len(HOSTILE_NESTING)


def test_a_long_bool_chain_is_refused_before_libcst_sees_it():
    text = CELL + "y = " + " or ".join(["a"] * (BOOL_CHAIN_LIMIT + 1)) + "\n"
    findings = analyze_source(decode_source("b.py", text.encode()), Config(), "b.py").findings
    assert [f.code for f in findings] == ["MSL900"] and "`and`/`or` chain" in findings[0].message


def test_a_worker_that_dies_costs_only_its_file(tmp_path, monkeypatch):
    """A real SIGSEGV in a worker (the fork start method carries the patched function into it)."""
    for i in range(40):
        (tmp_path / f"m{i}.py").write_text(CELL)
    (tmp_path / "crash.py").write_text(CELL)
    real = runner._analyze_one

    def analyze(path, config, index=None):
        if path.endswith("crash.py"):
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(path, config, index)

    monkeypatch.setattr(runner, "_analyze_one", analyze)
    monkeypatch.setattr(processes, "cpu_count", lambda: 2)  # a pool even on a one-core machine
    monkeypatch.chdir(tmp_path)
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    results = runner.analyze_files(files, Config(), jobs=2)
    by_path = {os.path.basename(path): findings for path, findings, _ in results}
    assert len(by_path) == 41
    assert [f.code for f in by_path["crash.py"]] == ["MSL900"]
    assert "SIGSEGV" in by_path["crash.py"][0].message
    assert all([f.code for f in by_path[f"m{i}.py"]] == ["MSL101"] for i in range(40))


def _item_and_pid(item):
    return item, os.getpid()


def _retire_after_three_items():
    _retire_after_three_items.calls = getattr(_retire_after_three_items, "calls", 0) + 1
    return _retire_after_three_items.calls % 3 == 0


def test_a_worker_that_retires_hands_the_rest_of_its_batch_to_a_fresh_one():
    """Each worker ends after its third item, in the middle of a batch of five: every item is done once, the rest
    of each cut batch goes to a new process, and no process did more than three items."""
    batches = [list(range(start, start + 5)) for start in range(0, 40, 5)]
    results = pool.run_batches([], _item_and_pid, 2, 1, lambda item, why: (item, why), batches=batches,
                               retire=_retire_after_three_items)
    assert sorted(item for item, _ in results) == list(range(40))
    per_process = collections.Counter(pid for _, pid in results)
    assert max(per_process.values()) == 3
    assert len(per_process) == 14  # 40 items, three per process: 13 full processes and one with the last item
    assert os.getpid() not in per_process


def test_a_worker_retires_on_its_own_growth_not_on_what_it_was_forked_with(monkeypatch):
    """A worker forked from a 500 MB process (a test run, an editor) counts the parent's pages in its resident
    memory from the start: only what it adds counts."""
    mb = 2**20
    monkeypatch.setattr(runner, "_WORKER_START_RESIDENT", 500 * mb)
    monkeypatch.setattr(runner, "_resident_bytes", lambda: 500 * mb + runner.WORKER_MEMORY_GROWTH)
    assert runner._over_memory() is False
    monkeypatch.setattr(runner, "_resident_bytes", lambda: 501 * mb + runner.WORKER_MEMORY_GROWTH)
    assert runner._over_memory() is True
    monkeypatch.setattr(runner, "_resident_bytes", lambda: None)  # no /proc: never
    assert runner._over_memory() is False


def test_workers_over_the_memory_limit_retire_and_the_findings_stay_the_same(tmp_path, monkeypatch):
    """A limit every worker is over: each ends after one file, and the run reports what one process does, file by
    file."""
    for i in range(30):
        (tmp_path / f"m{i}.py").write_text(CELL if i % 3 else CELL.replace("range(x.shape[0])", "range(3)"))
    monkeypatch.setattr(processes, "cpu_count", lambda: 2)
    monkeypatch.chdir(tmp_path)
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    alone = {path: [(f.code, f.line) for f in findings] for path, findings, _ in runner.analyze_files(files, Config(), jobs=1)}
    assert runner._over_memory() is False  # not a worker
    monkeypatch.setattr(runner, "WORKER_MEMORY_GROWTH", -1)  # a worker is over as it starts
    noted = tmp_path / "processes"
    noted.mkdir()
    real = runner._analyze_one

    def analyze(path, config, index=None):  # forked into the workers: each leaves its process id behind
        (noted / f"{os.getpid()}-{os.path.basename(path)}").touch()
        return real(path, config, index)

    monkeypatch.setattr(runner, "_analyze_one", analyze)
    retired = {path: [(f.code, f.line) for f in findings] for path, findings, _ in runner.analyze_files(files, Config(), jobs=2)}
    assert retired == alone
    assert sum(1 for found in alone.values() if found) == 20
    pids = [name.name.split("-")[0] for name in noted.iterdir()]
    assert len(pids) == 30 and len(set(pids)) == 30  # one file per process


def test_a_fix_worker_that_dies_costs_only_its_file(tmp_path, monkeypatch):
    from ms_lint.commands import fix as fix_command

    for i in range(30):
        (tmp_path / f"m{i}.py").write_text(CELL)
    (tmp_path / "crash.py").write_text(CELL)
    real = fix_command.fix_file

    def fix_file(path, config, options, rules=None):
        if path.endswith("crash.py"):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, config, options, rules=rules)

    monkeypatch.setattr(fix_command, "fix_file", fix_file)
    monkeypatch.setattr(processes, "cpu_count", lambda: 2)
    monkeypatch.chdir(tmp_path)
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    results = fix_command.fix_files(files, Config(), fix_command.FixOptions(apply=True), jobs=2)
    assert len(results) == 31
    crashed = [r for r in results if r.path.endswith("crash.py")][0]
    assert "SIGKILL" in crashed.unanalyzable[0].message and not crashed.written
    assert all(r.written for r in results if not r.path.endswith("crash.py"))
    assert (tmp_path / "crash.py").read_text() == CELL


# -- 4. read-only files ------------------------------------------------------------------------------------

def test_fix_refuses_a_read_only_file_even_as_root(tmp_path):
    target = tmp_path / "model.py"
    target.write_text(CELL)
    target.chmod(0o444)
    code, out, err = cli("fix", "--apply", "model.py", cwd=tmp_path)
    no_crash(code, out, err)
    assert code == 2 and "model.py: error: not written: the file is read-only (mode 0444)" in err
    assert target.read_text() == CELL and stat.S_IMODE(target.stat().st_mode) == 0o444
    # item 8: the summary counts what is still in the file
    assert "Fixed 0 findings in 0 files; 1 remaining." in err and "model.py:8:9: MSL101 [*]" in err


def test_fix_refuses_a_file_the_user_may_not_write(shared_tmp, unprivileged):
    target = shared_tmp / "model.py"
    target.write_text(CELL)
    target.chmod(0o644)  # owned by root: the rename over it would work (the folder is writable), the write not
    if unprivileged is None:
        target.chmod(0o444)
    code, out, err = cli("fix", "--apply", "model.py", cwd=shared_tmp, user=unprivileged)
    no_crash(code, out, err)
    assert code == 2 and "model.py: error: not written: the file is read-only" in err
    assert target.read_text() == CELL


# -- 5. unreadable folders, paths without Python files ------------------------------------------------------

def test_an_unreadable_folder_is_reported_not_skipped(shared_tmp, unprivileged):
    (shared_tmp / "ok.py").write_text(CELL)
    locked = shared_tmp / "locked"
    locked.mkdir()
    (locked / "hidden.py").write_text(CELL)
    locked.chmod(0o000)
    if unprivileged is not None:  # make sure the bits are in force for that user (not root)
        pid = os.fork()
        if pid == 0:
            os.setgid(unprivileged.pw_gid)
            os.setgroups([])
            os.setuid(unprivileged.pw_uid)
            os._exit(0 if os.access(str(locked), os.R_OK) else 3)
        assert os.waitpid(pid, 0)[1] >> 8 == 3
    for command in (("check", "--no-cache"), ("fix", "--apply")):
        code, out, err = cli(*command, ".", cwd=shared_tmp, user=unprivileged)
        no_crash(code, out, err)
        assert code == 2, (command, out, err)
        assert "locked:1:1: MSL900 cannot analyze folder: cannot read folder: Permission denied" in out + err


def test_a_path_without_python_files_says_so(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("hello")
    code, out, err = cli("check", "--no-cache", "docs", cwd=tmp_path)
    assert code == 0 and "warning: no Python files found under docs" in err
    code, out, err = cli("check", "--no-cache", "-q", "docs", cwd=tmp_path)
    assert code == 0 and err == ""



def test_the_copies_verify_writes_next_to_a_module_are_neither_checked_nor_indexed(tmp_path):
    """``ms-lint verify`` imports each version of a module from a copy beside it and removes it when it ends: a
    check of the folder meanwhile reports no finding in it and the project index does not list it (it may be
    gone before it is read). A copy named on the command line is still checked, as any excluded file is."""
    from ms_lint.analysis.layout import project_files
    from ms_lint.verifier.location import COPY_PREFIX

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(CELL)
    copy = tmp_path / "pkg" / f"{COPY_PREFIX}rewritten_1a2b.py"
    copy.write_text(CELL)
    code, out, err = cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    assert code == 1 and sorted({f["path"] for f in json.loads(out)}) == ["pkg/model.py"]
    paths, _ = project_files([str(tmp_path / "pkg" / "model.py")])
    assert sorted(os.path.basename(path) for path in paths) == ["__init__.py", "model.py"]
    code, out, err = cli("check", "--no-cache", "--output-format", "json", str(copy.relative_to(tmp_path)),
                         cwd=tmp_path)
    assert code == 1 and [f["code"] for f in json.loads(out)] == ["MSL101"]

# -- 6. the nearest configuration per file ------------------------------------------------------------------

def test_each_file_gets_the_nearest_config_and_check_agrees_with_flake8(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[tool.ms-lint]\nignore = ["MSL101"]\n')
    (sub / "inner").mkdir()
    (sub / "inner" / "pyproject.toml").write_text("[project]\nname = 'inner'\n")  # no table: not a config
    (sub / "inner" / "m.py").write_text(CELL)
    (tmp_path / "top.py").write_text(CELL)
    results = {}
    for cwd, path in ((tmp_path, "."), (tmp_path, "sub"), (sub, ".")):
        code, out, err = cli("check", "--no-cache", path, cwd=cwd)
        no_crash(code, out, err)
        results[(cwd, path)] = sorted(line.split(": ", 1)[1] for line in out.splitlines() if ": MSL" in line)
    assert results[(tmp_path, ".")] == ["MSL101 [*] loop to `x.shape[0]` (Tensor shape): unrolled per slice; map the "
                                         "body with `ms.vmap`"]  # top.py only: sub/inner/m.py follows sub's config
    assert results[(tmp_path, "sub")] == results[(sub, ".")] == []
    status, reported, ferr = flake8(".", cwd=tmp_path)
    assert [line.split(":")[0] for line in reported.splitlines()] == ["./top.py"]
    code, out, err = cli("check", "--no-cache", "--config", "pyproject.toml", "sub", cwd=tmp_path)
    assert code == 1 and "sub/inner/m.py:8:9: MSL101" in out  # --config applies to every file


# -- 7. noqa parity with flake8 ------------------------------------------------------------------------------

@pytest.mark.parametrize("comment, suppressed", [
    ("# noqa", True),
    ("# noqa: MSL101", True),
    ("# NOQA:MSL1", True),
    ("#noqa:msl101", False),  # flake8: not a noqa comment (no space after #)
    ("# noqa: msl101", False),  # flake8 compares codes as written
    ("# noqa: E501", False),
])
def test_noqa_means_the_same_in_check_and_flake8(tmp_path, comment, suppressed):
    text = CELL.replace("for i in range(x.shape[0]):", f"for i in range(x.shape[0]):  {comment}")
    (tmp_path / "m.py").write_text(text)
    code, out, err = cli("check", "--no-cache", "m.py", cwd=tmp_path)
    status, reported, ferr = flake8("m.py", cwd=tmp_path)
    assert ("MSL101" in out) == ("MSL101" in reported) == (not suppressed), (out, reported)


def test_file_level_flake8_noqa_is_honoured_by_check(tmp_path):
    (tmp_path / "m.py").write_text("# flake8: noqa\n" + CELL)
    code, out, err = cli("check", "--no-cache", "m.py", cwd=tmp_path)
    assert code == 0 and "MSL101" not in out
    status, reported, _ = flake8("m.py", cwd=tmp_path)
    assert reported == ""
    status, reported, _ = flake8("--disable-noqa", "m.py", cwd=tmp_path)  # flake8 decides for the plugin
    assert "MSL101" in reported
    before = (tmp_path / "m.py").read_text()
    code, out, err = cli("fix", "--apply", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert code == 0 and (tmp_path / "m.py").read_text() == before


# -- 8. summaries --------------------------------------------------------------------------------------------

UNSAFE_ONLY = textwrap.dedent("""\
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE)

    if __name__ == "__main__":
        net = ms.nn.Dense(2, 2)
        net(None)
    """)  # MSL301 only: its fix is unsafe


def test_statistics_count_fixable_as_the_summary_does(tmp_path):
    (tmp_path / "m.py").write_text(UNSAFE_ONLY)
    code, out, err = cli("check", "--no-cache", "m.py", cwd=tmp_path)
    assert out.splitlines()[-1] == "Found 1 finding (1 more with `--unsafe-fixes`)."
    code, out, err = cli("check", "--no-cache", "--statistics", "m.py", cwd=tmp_path)
    assert out == "     1  MSL301  missing-compile-cache (1 with --unsafe-fixes)\n"  # only the table
    code, out, err = cli("check", "--no-cache", "--statistics", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert out == "     1  MSL301  missing-compile-cache (1 fixable)\n"
    code, out, err = cli("check", "--no-cache", "--statistics", "--output-format", "json", "m.py", cwd=tmp_path)
    assert json.loads(out) == [{"code": "MSL301", "name": "missing-compile-cache", "count": 1, "fixable": 0,
                                "fixable_with_unsafe_fixes": 1}]


# -- 10. --jobs ------------------------------------------------------------------------------------------------

def test_jobs_are_capped_at_files_and_cores(tmp_path, monkeypatch):
    monkeypatch.setattr(processes, "cpu_count", lambda: 2)
    assert processes.worker_count(999, 5) == 2 and processes.worker_count(999, 1) == 1 and processes.worker_count(None, 40) == 2
    started = []
    real = pool._Worker.__init__

    def init(self, *args):
        started.append(1)
        real(self, *args)

    monkeypatch.setattr(pool._Worker, "__init__", init)
    for i in range(30):
        (tmp_path / f"m{i}.py").write_text(CELL)
    files = [str(p) for p in tmp_path.glob("*.py")]
    results = runner.analyze_files(files, Config(), jobs=999)
    assert len(results) == 30 and len(started) == 2


def test_jobs_auto_and_bad_values(tmp_path):
    (tmp_path / "m.py").write_text(CELL)
    assert cli("check", "--no-cache", "-j", "auto", "m.py", cwd=tmp_path)[0] == 1
    code, out, err = cli("check", "--no-cache", "-j", "0", "m.py", cwd=tmp_path)
    assert code == 2 and "--jobs must be at least 1" in err
    code, out, err = cli("check", "--no-cache", "-j", "many", "m.py", cwd=tmp_path)
    assert code == 2 and "expected a number or 'auto'" in err and "Traceback" not in err


# -- 11. short messages, --output-format full ------------------------------------------------------------------

def test_every_message_is_one_short_line():
    code, out, err = cli("check", "--no-cache", "--output-format", "json", "fixtures", "examples", cwd=ROOT)
    findings = [f for f in json.loads(out) if f["code"] != "MSL900"]
    assert len(findings) > 90
    too_long = [(f["code"], len(f["message"]), f["message"]) for f in findings
                if len(f["message"]) > 125 or "\n" in f["message"]]
    assert too_long == []
    assert all(f["detail"] for f in findings)  # the long form is still there, for --output-format full


def test_full_output_shows_the_source_and_the_explanation(tmp_path):
    (tmp_path / "m.py").write_text(CELL)
    code, out, err = cli("check", "--no-cache", "--output-format", "full", "m.py", cwd=tmp_path)
    lines = out.splitlines()
    assert lines[0].startswith("m.py:8:9: MSL101 [*] ")
    assert lines[1:6] == ["  |", "8 |         for i in range(x.shape[0]):", "  |         " + "^" * len("for i in range(x.shape[0]):"),
                          "9 |             out.append(ops.relu(x[i]) * 2)", "  |"]
    assert any(line.startswith("  = why: loop trip count `x.shape[0]` comes from a Tensor's shape") for line in lines)
    assert any(line.startswith("  = fix (safe): ") for line in lines)
    assert "  = help: `ms-lint rule MSL101`" in out


def test_msl201_excerpt_shows_the_tensor_part_of_the_condition(tmp_path):
    text = textwrap.dedent("""\
        import mindspore
        from mindspore import nn


        class Net(nn.Cell):
            def construct(self, hidden_states):
                if hidden_states.dtype == mindspore.float16 and hidden_states.sum() > 0:
                    hidden_states = hidden_states * 2
                return hidden_states
        """)
    findings = analyze_source(decode_source("m.py", text.encode()), Config(), "m.py").findings
    assert [f.code for f in findings] == ["MSL201"]
    assert "(`hidden_states.sum() > 0`)" in findings[0].message and "dtype" not in findings[0].message


# -- 12. ruff's flags, stdin -----------------------------------------------------------------------------------

def test_output_format_is_format(tmp_path):
    (tmp_path / "m.py").write_text(CELL)
    assert cli("check", "--no-cache", "--format", "json", "m.py", cwd=tmp_path)[1] == \
        cli("check", "--no-cache", "--output-format", "json", "m.py", cwd=tmp_path)[1]


def test_check_fix_diff_unsafe_fixes_and_exit_non_zero_on_fix(tmp_path):
    (tmp_path / "a.py").write_text(CELL)
    (tmp_path / "b.py").write_text(UNSAFE_ONLY)
    code, out, err = cli("check", "--no-cache", "--diff", ".", cwd=tmp_path)
    assert code == 1 and "+++ b/a.py" in out and "b.py" not in out  # the unsafe fix needs --unsafe-fixes
    assert (tmp_path / "a.py").read_text() == CELL  # --diff writes nothing
    code, out, err = cli("check", "--no-cache", "--fix", ".", cwd=tmp_path)
    assert code == 1 and "ms.vmap" in (tmp_path / "a.py").read_text()
    assert out.splitlines()[-1] == "Found 1 finding (1 fixed, 1 remaining; 1 more with `--unsafe-fixes`)."
    code, out, err = cli("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert code == 0 and out == "Fixed 1 finding; all checks passed!\n" and "MS_COMPILER_CACHE_ENABLE" in (tmp_path / "b.py").read_text()
    (tmp_path / "c.py").write_text(CELL)
    code, out, err = cli("check", "--no-cache", "--fix", "--exit-non-zero-on-fix", "c.py", cwd=tmp_path)
    assert code == 1 and "Fixed 1 finding" in out
    code, out, err = cli("check", "--no-cache", "--fix", "--exit-non-zero-on-fix", "c.py", cwd=tmp_path)
    assert code == 0  # nothing left to fix


def test_extend_select_extend_ignore_and_quiet(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ms-lint]\nselect = ["MSL2"]\n')
    (tmp_path / "m.py").write_text(CELL)
    assert cli("check", "--no-cache", "m.py", cwd=tmp_path)[0] == 0
    code, out, err = cli("check", "--no-cache", "--extend-select", "MSL101", "m.py", cwd=tmp_path)
    assert code == 1 and codes(out) == ["MSL101"]
    code, out, err = cli("check", "--no-cache", "--extend-select", "MSL1", "--extend-ignore", "MSL101", "m.py",
                         cwd=tmp_path)
    assert code == 0
    code, out, err = cli("check", "--no-cache", "-q", "--extend-select", "MSL1", "m.py", cwd=tmp_path)
    assert code == 1 and len(out.splitlines()) == 1 and "Found" not in out


def test_cache_dir_option_and_environment(tmp_path):
    (tmp_path / "m.py").write_text(CELL)
    cli("check", "--cache-dir", "elsewhere", "m.py", cwd=tmp_path)
    assert (tmp_path / "elsewhere" / "CACHEDIR.TAG").is_file() and not (tmp_path / ".ms_lint_cache").exists()
    cli("check", "m.py", cwd=tmp_path, env={"MS_LINT_CACHE_DIR": str(tmp_path / "from_env")})
    assert (tmp_path / "from_env" / "CACHEDIR.TAG").is_file() and not (tmp_path / ".ms_lint_cache").exists()


def test_stdin_check_and_fix(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.ms-lint]\nignore = ["MSL101"]\n')
    code, out, err = cli("check", "-", cwd=tmp_path, stdin=CELL.encode())
    assert code == 1 and out.startswith("-:8:9: MSL101")
    code, out, err = cli("check", "-", "--stdin-filename", "model.py", cwd=tmp_path, stdin=CELL.encode())
    assert out.startswith("model.py:8:9: MSL101")
    code, out, err = cli("check", "-", "--stdin-filename", "sub/model.py", cwd=tmp_path, stdin=CELL.encode())
    assert code == 0  # the config of the folder the name is in
    code, out, err = cli("fix", "-", cwd=tmp_path, stdin=CELL.encode())
    assert code == 0 and "ms.vmap" in out and compile(out, "fixed", "exec")
    assert "Fixed 1 finding in 1 file; 0 remaining." in err
    code, out, err = cli("check", "--fix", "-", cwd=tmp_path, stdin=UNSAFE_ONLY.encode())
    assert code == 1 and out == UNSAFE_ONLY and "-:3:1: MSL301 [*unsafe]" in err
    code, out, err = cli("fix", "-", cwd=tmp_path, stdin=b"import mindspore\ndef f(:\n")
    no_crash(code, out, err)
    assert code == 2 and out == "import mindspore\ndef f(:\n" and "MSL900" in err
    code, out, err = cli("check", "-", cwd=tmp_path, stdin=b"\x00\x01binary")
    assert code == 2 and "MSL900" in out and "Traceback" not in err
    assert list(tmp_path.glob("*.py")) == []  # stdin never writes a file


# -- 13. MSL301's cache folder ---------------------------------------------------------------------------------

SCRIPT = textwrap.dedent("""\
    import argparse
    import os

    import mindspore as ms


    def main():
        ms.set_context(mode=ms.GRAPH_MODE)
        net = ms.nn.Dense(2, 2)
        print(os.getcwd(), net(None))


    if __name__ == "__main__":
        main()
    """)


def _cache_path(script: pathlib.Path) -> str:
    tree = ast.parse(script.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "setdefault" and \
                isinstance(node.args[0], ast.Constant) and node.args[0].value == "MS_COMPILER_CACHE_PATH":
            return eval(compile(ast.Expression(node.args[1]), "path", "eval"), {"os": os, "__file__": str(script)})
    raise AssertionError("no cache path set")


def test_msl301_cache_folder_is_per_script_and_next_to_it(tmp_path):
    for folder in ("a", "b", "c"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.py").write_text(SCRIPT)
    code, out, err = cli("fix", "--apply", "--unsafe-fixes", "a", "b", "c", cwd=tmp_path)
    assert code == 0, err
    paths = [_cache_path(tmp_path / folder / "train.py") for folder in ("a", "b", "c")]
    assert paths == [str(tmp_path / folder / "ms_compile_cache" / "train") for folder in ("a", "b", "c")]
    fixed = (tmp_path / "a" / "train.py").read_text()
    assert "from os import environ" not in fixed and fixed.count("import os") == 1  # the existing `import os`


def test_msl301_adds_import_os_with_the_standard_library(tmp_path):
    (tmp_path / "run.py").write_text("import numpy as np\nimport mindspore as ms\n\nms.set_context(mode=ms.GRAPH_MODE)\n"
                                     "if __name__ == '__main__':\n    net = ms.nn.Dense(2, 2)\n    print(np, net(None))\n")
    code, out, err = cli("fix", "--apply", "--unsafe-fixes", "run.py", cwd=tmp_path)
    assert code == 0
    assert (tmp_path / "run.py").read_text().splitlines()[:3] == ["import os", "", "import numpy as np"]


# -- the sweep: every hostile input through check, fix and flake8 ------------------------------------------

def test_no_traceback_crash_or_unwanted_write_on_any_hostile_input(tmp_path):
    hostile_tree(tmp_path, extra_clean=0)
    (tmp_path / "allstmts.py").write_text(ALL_STATEMENTS)
    (tmp_path / "pep695.py").write_text(PEP_695)
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02")
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nimport mindspore\nx = '\xe9'\n")
    (tmp_path / "badenc.py").write_bytes(b"import mindspore\nx = '\xff\xfe'\n")
    (tmp_path / "flake8_noqa.py").write_text("# flake8: noqa\n" + CELL)
    readonly = tmp_path / "readonly.py"
    readonly.write_text(CELL)
    readonly.chmod(0o444)
    must_not_change = {p: b for p, (b, _) in snapshot(tmp_path).items()
                       if p.name not in ("allstmts.py", "pep695.py")}
    for args in (("check", "--no-cache", "."), ("check", "--no-cache", "--jobs", "2", "."),
                 ("fix", "--apply", "--unsafe-fixes", "."), ("check", "--fix", "--unsafe-fixes", "--no-cache", ".")):
        code, out, err = cli(*args, cwd=tmp_path)
        no_crash(code, out, err)
        assert code == 2
    for path, data in must_not_change.items():
        assert path.read_bytes() == data, path.name
    for path in sorted(tmp_path.glob("*.py")):
        status, reported, ferr = flake8(path.name, cwd=tmp_path)
        if "build_ast" in ferr:  # flake8's own ast.parse gives up (RecursionError) before any plugin runs
            assert "ms_lint" not in ferr and path.name in ("sum.py", "nots.py"), (path.name, ferr[-2000:])
            continue
        assert status in (0, 1) and "Traceback" not in ferr, (path.name, ferr[-2000:])
        assert "internal error" not in reported, (path.name, reported)
    for path, data in must_not_change.items():
        assert path.read_bytes() == data, path.name
