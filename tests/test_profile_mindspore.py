"""``ms-lint profile`` with real MindSpore on CPU: where the compile seconds go, --confirm, script mode, cleanup."""
import json
import os
import re
import tempfile

import pytest

pytest.importorskip("mindspore")

from ms_lint.profiler.session import profile_function, profile_script  # noqa: E402

# each test profiles a copy of fixtures/profile (conftest's profile_copy patches these names)
pytestmark = [pytest.mark.mindspore, pytest.mark.usefixtures("profile_copy")]

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures", "profile")
CELLS = os.path.join(FIXTURES, "cells.py")
TRAIN = os.path.join(FIXTURES, "train.py")
BROKEN = os.path.join(FIXTURES, "broken.py")

PROFILE_PATHS = ("FIXTURES", "CELLS", "TRAIN", "BROKEN")


def _line_of(path, text):
    with open(path) as handle:
        for number, line in enumerate(handle, start=1):
            if text in line:
                return number
    raise AssertionError(text)


LOOP_LINE = _line_of(CELLS, "for _ in range(200)")
IF_LINE = _line_of(CELLS, "if x.sum() > 0")
ROWS_LINE = _line_of(CELLS, "for i in range(x.shape[0])")


def _own_children(private_tmp):
    """Processes still running the profiler's child module on a request in ``private_tmp`` (none may outlive a
    profile; other users' profiles on the machine do not count)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read()
        except OSError:
            continue
        if b"ms_lint.profiler.child" in command and str(private_tmp).encode() in command:
            found.append(pid)
    return found


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _by_code(profile):
    return {item.finding.code: item for item in profile.attribution.findings}


def test_cell_loop_sub_cell_gets_most_of_the_compile_and_confirm_is_within_2x(private_tmp):
    from ms_lint.config import ConfigSet
    from ms_lint.profiler.confirm import confirm

    profile = profile_function(CELLS, "Net", inputs="x=float32[8,4]", timeout=300)
    attribution = profile.attribution
    assert attribution.compile_s > 0.1
    assert [name for name, _ in attribution.phases][:2] == ["bootstrap", "type_inference"]
    findings = _by_code(profile)
    loop, branch = findings["MSL103"], findings["MSL201"]
    assert loop.finding.line == LOOP_LINE and branch.finding.line == IF_LINE
    assert attribution.share(loop.seconds) > 0.7
    assert 0 < branch.seconds < loop.seconds / 10
    assert findings["MSL101"].seconds == 0  # row_norms is not part of Net's graph
    assert attribution.functions[0].name == "Smooth.construct"
    assert re.fullmatch(r"2 findings explain \d+\.\d\d s of \d+\.\d\d s compile time \(\d+%\)", profile.summary())
    assert not attribution.blind()

    measured = confirm(profile, 1, ConfigSet().for_path, timeout=300, repeat=2)
    assert measured == 1
    result = loop.measured
    assert result["saving_s"] > 0
    assert result["processes"] == 2
    assert 0.5 <= result["saving_s"] / loop.seconds <= 2.0, result
    assert list(private_tmp.iterdir()) == []  # work folders, dumps and inputs removed
    assert not [n for n in os.listdir(FIXTURES) if n.startswith("_ms_lint_verify_")]  # the rewrite's copy too
    assert _own_children(private_tmp) == []


def test_jit_function_row_loop_gets_the_time(run_cli, private_tmp):
    code, out, err = run_cli("profile", CELLS, "--function", "row_norms", "--format", "json")  # inputs: the comment
    assert code == 0, err
    data = json.loads(out)
    top = data["rows"][0]
    assert (top["code"], top["line"]) == ("MSL101", ROWS_LINE) and top["share"] > 0.8
    line = data["lines"][0]
    assert (os.path.basename(line["path"]), line["function"], line["finding"]) == ("cells.py", "row_norms", "MSL101")
    assert data["functions"][0]["name"] == "row_norms"
    assert data["backend"]["kernel_graphs"] == 1  # no control flow: one kernel graph
    assert list(private_tmp.iterdir()) == []
    assert _own_children(private_tmp) == []


def test_script_entry_point_stops_after_its_first_compile(private_tmp):
    profile = profile_script(TRAIN, ["--steps", "50"], timeout=300)
    assert profile.stopped == "compile-limit"
    assert profile.run.result["compiles"] == 1 and len(profile.run.compiles) == 1
    findings = _by_code(profile)
    assert profile.attribution.share(findings["MSL103"].seconds) > 0.6
    assert findings["MSL201"].seconds > 0
    assert {os.path.basename(f.path) for f in profile.attribution.functions} == {"cells.py", "train.py"}
    assert list(private_tmp.iterdir()) == []
    assert _own_children(private_tmp) == []


def test_a_function_that_does_not_compile_is_one_line_exit_2(run_cli, private_tmp):
    code, out, err = run_cli("profile", BROKEN, "--function", "pick")
    assert code == 2 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("ms-lint: error:")]
    assert len(errors) == 1 and "does not compile" in errors[0] and "shape is () or (1,)" in errors[0]
    assert "Traceback" not in err
    assert list(private_tmp.iterdir()) == []


def test_cli_json_and_check_profile_data(run_cli, tmp_path):
    saved = tmp_path / "profile.json"
    code, out, err = run_cli("profile", CELLS, "--function", "Net", "--inputs", "x=float32[8,4]", "--format", "json",
                             "-o", str(saved))
    assert code == 0, err
    data = json.loads(out)
    assert json.loads(saved.read_text()) == data
    assert data["rows"][0]["code"] == "MSL103" and data["rows"][0]["line"] == LOOP_LINE
    assert data["rows"][0]["share"] > 0.7 and data["graphs"] == 1
    assert data["summary"].startswith("2 findings explain")

    code, out, err = run_cli("check", CELLS, "--profile-data", str(saved))
    assert code == 1
    lines = out.splitlines()
    assert re.search(rf"cells.py:{LOOP_LINE}:\d+: MSL103 .*\[profile: ~\d", lines[0])
    assert "MSL201" in lines[1] and "[profile: ~" in lines[1]
    assert "MSL101" in lines[2] and "[profile:" not in lines[2]  # not in Net's graph: after the profiled ones


def test_a_costly_line_without_a_finding_is_listed(run_cli):
    blind = os.path.join(FIXTURES, "blind.py")
    loop = _line_of(blind, "for _ in range(self.steps)")
    code, out, err = run_cli("profile", blind, "--function", "Blind", "--inputs", "x=float32[2,2]")
    assert code == 0, err
    row = next(line for line in out.splitlines() if f"blind.py:{loop} " in line)
    assert row.rstrip().endswith("(no finding)")
    share = int(re.search(r"(\d+)%", row).group(1))
    assert share >= 90  # the loop line and its body, one row
    assert out.rstrip().splitlines()[-1].startswith("0 findings explain 0.00 s")
    assert "1 costly line without a finding" in out.rstrip().splitlines()[-1]
