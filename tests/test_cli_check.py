"""``ms-lint check``: output formats, exit codes, selection, suppression, parallel and cached runs agree."""
import json
import re

import pytest

from conftest import CLEAN, FLAGGED

LOOP_LINE = 8  # the ``for`` line in FLAGGED


def test_text_output_and_exit_code_1(run_cli, write):
    write("model.py", FLAGGED)
    code, out, _ = run_cli("check", "--no-cache", "model.py")
    assert code == 1
    first = out.splitlines()[0]
    assert re.match(rf"model\.py:{LOOP_LINE}:5: MSL101( \[\*[a-z]*\])? ", first), first
    assert "x.shape[0]" in first
    assert out.splitlines()[-1].startswith("Found 1 finding")


def test_clean_tree_exits_0(run_cli, write):
    write("net.py", CLEAN)
    code, out, _ = run_cli("check", "--no-cache", ".")
    assert code == 0
    assert "All checks passed" in out


def test_json_fields(run_cli, write):
    write("model.py", FLAGGED)
    code, out, _ = run_cli("check", "--no-cache", "--format", "json", ".")
    data = json.loads(out)
    assert code == 1 and len(data) == 1
    item = data[0]
    assert {"code", "path", "line", "column", "end_line", "end_column", "message", "fix"} <= set(item)
    assert (item["code"], item["path"], item["line"], item["column"]) == ("MSL101", "model.py", LOOP_LINE, 5)
    assert item["end_line"] == LOOP_LINE + 1
    assert item["fix"] is None or item["fix"]["applicability"] in ("safe", "unsafe")


def test_exit_zero(run_cli, write):
    write("model.py", FLAGGED)
    code, out, _ = run_cli("check", "--no-cache", "--exit-zero", "model.py")
    assert code == 0 and "MSL101" in out


def test_select_and_ignore(run_cli, write):
    write("model.py", FLAGGED)
    assert run_cli("check", "--no-cache", "--select", "MSL2", "model.py")[0] == 0
    assert run_cli("check", "--no-cache", "--ignore", "MSL101", "model.py")[0] == 0
    assert run_cli("check", "--no-cache", "--select", "MSL1", "model.py")[0] == 1


def test_statistics(run_cli, write):
    write("a.py", FLAGGED)
    write("b.py", FLAGGED)
    code, out, _ = run_cli("check", "--no-cache", "--statistics", ".")
    assert code == 1
    assert re.search(r"^\s+2\s+MSL101\s+loop-over-tensor-axis", out, re.MULTILINE)


@pytest.mark.parametrize("comment, suppressed", [
    ("  # noqa", True), ("  # noqa: MSL101", True), ("  # noqa: MSL201", False), ("  # noqa:MSL1", True),
])
def test_noqa_on_the_loop_header_covers_the_loop(run_cli, write, comment, suppressed):
    source = FLAGGED.replace("for i in range(x.shape[0]):", "for i in range(x.shape[0]):" + comment)
    write("model.py", source)
    code, out, _ = run_cli("check", "--no-cache", "model.py")
    assert (code == 0) is suppressed


def test_skip_file(run_cli, write):
    write("model.py", "# ms-lint: skip-file\n" + FLAGGED)
    assert run_cli("check", "--no-cache", "model.py")[0] == 0


def test_per_file_ignores_and_exclude_from_pyproject(run_cli, write):
    write("pyproject.toml", (
        '[tool.ms-lint]\nextend-exclude = ["generated"]\n'
        '[tool.ms-lint.per-file-ignores]\n"legacy/*" = ["MSL101"]\n'
    ))
    write("legacy/old.py", FLAGGED)
    write("generated/gen.py", FLAGGED)
    write("src/new.py", FLAGGED)
    code, out, _ = run_cli("check", "--no-cache", "--format", "json", ".")
    assert [f["path"] for f in json.loads(out)] == ["src/new.py"]


def test_github_format(run_cli, write):
    write("model.py", FLAGGED)
    code, out, _ = run_cli("check", "--no-cache", "--format", "github", "model.py")
    assert out.startswith(f"::error file=model.py,line={LOOP_LINE},col=5,")
    assert "MSL101" in out


def test_parallel_and_cached_runs_agree_with_serial(run_cli, write):
    for index in range(30):  # above the parallel threshold
        write(f"pkg/m{index}.py", FLAGGED if index % 3 == 0 else CLEAN)
    serial = run_cli("check", "--no-cache", "--jobs", "1", "--format", "json", ".")
    parallel = run_cli("check", "--no-cache", "--jobs", "2", "--format", "json", ".")
    cold = run_cli("check", "--format", "json", ".")
    warm = run_cli("check", "--format", "json", ".")
    assert serial[0] == 1 and len(json.loads(serial[1])) == 10
    assert serial[1] == parallel[1] == cold[1] == warm[1]


def test_bad_jobs_value(run_cli, write):
    write("model.py", FLAGGED)
    code, _, err = run_cli("check", "--jobs", "0", "model.py")
    assert code == 2 and "--jobs" in err


def test_version_and_help(run_cli):
    with pytest.raises(SystemExit) as exited:
        run_cli("--version")
    assert exited.value.code == 0
    assert run_cli()[0] == 2


def test_help_lists_every_command_though_a_run_imports_only_its_own(run_cli, capsys):
    from ms_lint.cli import COMMANDS, build_parser

    listed = build_parser().format_help()
    assert all(name in listed for name in COMMANDS)
    only = build_parser("rules")
    assert only.parse_args(["rules"]).handler.__module__ == "ms_lint.commands.rules"
    with pytest.raises(SystemExit) as exited:
        only.parse_args(["check"])  # the other commands are not registered on it
    assert exited.value.code == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        run_cli("chekc")
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "invalid choice" in err and "'verify'" in err  # a typo still lists them all


@pytest.mark.parametrize("columns", ["60", "140"])
def test_help_is_wrapped_to_the_terminal_width_as_argparse_wraps_it(monkeypatch, columns):
    import argparse

    from ms_lint.cli import build_parser

    monkeypatch.setenv("COLUMNS", columns)
    ours = build_parser("check")._subparsers._group_actions[0].choices["check"]
    text = ours.format_help()
    reference = argparse.HelpFormatter("x")  # argparse's own reading of the width (through shutil)
    assert ours._get_formatter()._width == reference._width == int(columns) - 2
    ours.formatter_class = argparse.HelpFormatter
    assert text == ours.format_help()  # the same help, line for line
