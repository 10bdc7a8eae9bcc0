"""``ms-lint profile --confirm`` from the command line, real MindSpore on CPU: fixes in a file other than the profiled
one (a sub-cell's module, a module the script imports), script mode, the backend's steps, and cleanup."""
import json
import os
import re
import tempfile

import pytest

pytest.importorskip("mindspore")

# each test profiles a copy of fixtures/profile (conftest's profile_copy patches these names)
pytestmark = [pytest.mark.mindspore, pytest.mark.usefixtures("profile_copy")]

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures", "profile")
CELLS = os.path.join(FIXTURES, "cells.py")

PROFILE_PATHS = ("FIXTURES", "CELLS")


def _line_of(path, text):
    with open(path) as handle:
        return next(number for number, line in enumerate(handle, start=1) if text in line)


LOOP_LINE = _line_of(CELLS, "for _ in range(200)")
IF_LINE = _line_of(CELLS, "if x.sum() > 0")


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _assert_cleaned_up(private_tmp):
    assert list(private_tmp.iterdir()) == []  # work folders, dumps, inputs
    assert not [n for n in os.listdir(FIXTURES) if n.startswith("_ms_lint_verify_")]  # the rewritten copies
    mine = str(private_tmp).encode()  # the children's request files are in it: other users' profiles don't count
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    command = handle.read()
            except OSError:
                continue
            assert not (b"ms_lint.profiler.child" in command and mine in command), pid


def test_script_mode_confirms_a_fix_in_the_module_the_script_imports(run_cli, private_tmp):
    script = os.path.join(FIXTURES, "train.py")
    code, out, err = run_cli("profile", script, "--confirm", "1", "--repeat", "2", "--format", "json",
                             "--", "--steps", "50")
    assert code == 0, err
    data = json.loads(out)
    assert data["mode"] == "script" and data["stopped"] == "compile-limit"
    top = data["rows"][0]
    assert (os.path.basename(top["path"]), top["line"], top["code"]) == ("cells.py", LOOP_LINE, "MSL103")
    assert top["share"] > 0.6
    measured = top["measured"]
    assert measured["file"].endswith("cells.py") and measured["processes"] == 2
    assert 0.5 <= measured["saving_s"] / top["seconds"] <= 2.0, measured
    branch = next(r for r in data["rows"] if r["code"] == "MSL201")
    assert branch["line"] == IF_LINE and branch["seconds"] > 0 and branch["measured"] is None  # only the top 1
    # the backend's own steps (compile_statistics): inside task_emit; the tensor `if` cuts the graph into several
    backend = data["backend"]
    task_emit = sum(p["seconds"] for p in data["phases"] if p["name"] == "task_emit")
    assert 0 < backend["total_s"] <= task_emit
    assert backend["kernel_graphs"] >= 2
    assert {"CompileSubGraph", "OptimizeGraph", "GraphScheduler"} <= {s["name"] for s in backend["steps"]}
    assert f"ms-lint: confirming {os.path.realpath(CELLS)}:{LOOP_LINE} MSL103" in err
    _assert_cleaned_up(private_tmp)


def test_function_mode_confirms_a_fix_in_a_sub_cells_module(run_cli, private_tmp):
    model = os.path.join(FIXTURES, "model.py")
    code, out, err = run_cli("profile", model, "--function", "Model", "--inputs", "x=float32[8,4]",
                             "--confirm", "1", "--repeat", "2")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"profile of {os.path.realpath(model)} Model (CPU, inputs: x=float32[8,4])"
    assert re.match(r"backend \S+ m?s of task_emit \S+ m?s, 1 kernel graph: .*OptimizeGraph \d", lines[2]), lines[2]
    row = next(line for line in lines if f"cells.py:{LOOP_LINE} " in line)
    found = re.search(r"^\s*(\d+\.\d+) s\s+(\d+)%.*MSL103.*\[measured (\d+\.\d+) s, \d+%\]$", row)
    assert found, row
    estimate, share, saving = float(found.group(1)), int(found.group(2)), float(found.group(3))
    assert share >= 80  # Model's own file has no finding: the cost is the imported sub-cell's loop
    assert 0.5 <= saving / estimate <= 2.0, row
    assert lines[-1].startswith("1 finding explains")
    _assert_cleaned_up(private_tmp)


def test_a_timeout_with_real_mindspore_is_one_line_exit_2_and_leaves_nothing(run_cli, private_tmp):
    # importing MindSpore alone takes longer than 1 s; the 200-step loop's compile adds more
    code, out, err = run_cli("profile", CELLS, "--function", "Net", "--inputs", "x=float32[8,4]", "--timeout", "1")
    assert code == 2 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("ms-lint: error:")]
    assert len(errors) == 1 and "did not finish within 1 s" in errors[0] and "raise --timeout" in errors[0]
    assert "Traceback" not in err
    _assert_cleaned_up(private_tmp)


def test_script_mode_confirms_a_fix_in_the_script_itself(run_cli, private_tmp):
    script = os.path.join(FIXTURES, "solve.py")
    loop = _line_of(script, "for _ in range(120)")
    code, out, err = run_cli("profile", script, "--confirm", "1", "--repeat", "2", "--format", "json",
                             "--", "--size", "8")
    assert code == 0, err
    data = json.loads(out)
    top = data["rows"][0]
    assert (os.path.basename(top["path"]), top["line"], top["code"]) == ("solve.py", loop, "MSL103")
    # the loop's calls of MindSpore's shared scalar-multiply graph stay in the loop, not on the line before it
    assert top["share"] > 0.9
    assert [r for r in data["rows"] if r["code"] is None] == []
    measured = top["measured"]
    assert measured["file"].endswith("solve.py") and measured["processes"] == 2
    assert 0.5 <= measured["saving_s"] / top["seconds"] <= 2.0, measured
    _assert_cleaned_up(private_tmp)
