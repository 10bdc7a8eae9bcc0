"""The flake8 plugin, run through real flake8 in a subprocess, against ``ms-lint check --format json``.

Examples come from the registered rules (each rule's INVALID examples), so these tests follow the rules as
they are added; the fixtures comparison covers the realistic model code under fixtures/.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from ms_lint.codes import UNANALYZABLE
from ms_lint.config import VERIFY_COPY_PREFIX as COPY_PREFIX, Config
from ms_lint.engine import analyze_source
from ms_lint.flake8_plugin import Plugin
from ms_lint.rules import all_rules
from ms_lint.source import decode_source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMAT = "%(path)s\t%(row)d\t%(col)d\t%(code)s\t%(text)s"
BROKEN = "import mindspore as ms\n\n\ndef f(:\n    pass\n"


def flake8(*args, cwd):
    """(path, line, col, code, message) for each MSL finding flake8 reports, plus the exit code."""
    proc = subprocess.run([sys.executable, "-m", "flake8", "--isolated", f"--format={FORMAT}", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    rows = []
    for line in proc.stdout.splitlines():
        path, row, col, code, text = line.split("\t", 4)
        rows.append((os.path.normpath(path), int(row), int(col), code, text))
    return rows, proc.returncode


def ms_lint_check(*args, cwd):
    proc = subprocess.run([sys.executable, "-m", "ms_lint", "check", "--no-cache", "--format", "json", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1, 2), proc.stderr
    return [(os.path.normpath(f["path"]), f["line"], f["column"], f["code"], f["message"])
            for f in json.loads(proc.stdout)]


def _examples():
    """(rule, dedented code) of each rule's first INVALID example."""
    return [(rule, textwrap.dedent(rule.INVALID[0].code)) for rule in all_rules() if rule.INVALID]


def _first_rule():
    return [pytest.param(rule, id=rule.code) for rule in all_rules()[:1] if rule.INVALID]


def _write_examples(root):
    for rule, code in _examples():
        path = root / "pkg" / f"{rule.code.lower()}_example.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
    if _examples():  # the same example again with a UTF-8 BOM: positions must not shift
        (root / "pkg" / "bom_example.py").write_bytes(b"\xef\xbb\xbf" + _examples()[0][1].encode("utf-8"))


# -- flake8 and ms-lint check agree ---------------------------------------------------------------------------
def test_fixtures_same_findings_as_check(tmp_path):
    shutil.copytree(os.path.join(ROOT, "fixtures"), tmp_path / "fixtures",
                    ignore=shutil.ignore_patterns("__pycache__", COPY_PREFIX + "*"))
    reported, _ = flake8("--select=MSL,E999", "fixtures", cwd=tmp_path)
    unparsable = {r[0] for r in reported if r[3] == "E999"}  # flake8 runs no plugin on these; check says MSL900
    got = sorted(r for r in reported if r[3] != "E999")
    expected = sorted(f for f in ms_lint_check("fixtures", cwd=tmp_path)
                      if not (f[3] == UNANALYZABLE and f[0] in unparsable))
    assert len(got) > 90
    assert got == expected


def test_rule_examples_same_findings_as_check(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n")
    _write_examples(tmp_path)
    got, status = flake8("--select=MSL", "pkg", cwd=tmp_path)
    expected = ms_lint_check("pkg", cwd=tmp_path)
    assert sorted(got) == sorted(expected)
    assert {r[3] for r in got} == {rule.code for rule, _ in _examples()}
    assert status == (1 if got else 0)


def test_configured_options_are_read(tmp_path):
    """Thresholds and graph-mode come from [tool.ms-lint]: flake8 still matches check under that config."""
    (tmp_path / "pyproject.toml").write_text('[tool.ms-lint]\ngraph-mode = "jit-only"\nunroll-threshold = 1000\n')
    _write_examples(tmp_path)
    got, _ = flake8("--select=MSL", "pkg", cwd=tmp_path)
    assert sorted(got) == sorted(ms_lint_check("pkg", cwd=tmp_path))
    configured = Config(graph_mode="jit-only", unroll_threshold=1000)
    for rule, code in _examples():  # where the options change the in-process result, flake8 follows them
        source = decode_source("x.py", code.encode("utf-8"))
        default = [f.line for f in analyze_source(source, Config(), "x.py").findings if f.code == rule.code]
        under_config = [f.line for f in analyze_source(source, configured, "x.py").findings if f.code == rule.code]
        shown = [r[1] for r in got if r[3] == rule.code and r[0].endswith(f"{rule.code.lower()}_example.py")]
        assert shown == under_config, (rule.code, default)


@pytest.mark.parametrize("rule", _first_rule())
def test_ignore_and_per_file_ignores_from_config(tmp_path, rule):
    _write_examples(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f'[tool.ms-lint]\nignore = ["{rule.code}"]\n')
    got, _ = flake8("--select=MSL", "pkg", cwd=tmp_path)
    assert rule.code not in {r[3] for r in got}
    target = f"pkg/{rule.code.lower()}_example.py"
    (tmp_path / "pyproject.toml").write_text(f'[tool.ms-lint.per-file-ignores]\n"{target}" = ["{rule.code}"]\n')
    got, _ = flake8("--select=MSL", "pkg", cwd=tmp_path)
    assert not any(r[3] == rule.code and r[0] == os.path.normpath(target) for r in got)
    assert rule.code in {r[3] for r in got}  # still reported in bom_example.py


@pytest.mark.parametrize("rule", _first_rule())
def test_flake8_select_and_extend_ignore(tmp_path, rule):
    _write_examples(tmp_path)
    everything, _ = flake8("--select=MSL", "pkg", cwd=tmp_path)
    only, _ = flake8(f"--select={rule.code}", "pkg", cwd=tmp_path)
    assert only and sorted(only) == sorted(r for r in everything if r[3] == rule.code)
    rest, _ = flake8("--select=MSL", f"--extend-ignore={rule.code}", "pkg", cwd=tmp_path)
    assert sorted(rest) == sorted(r for r in everything if r[3] != rule.code)


@pytest.mark.parametrize("rule", _first_rule())
def test_noqa_and_disable_noqa(tmp_path, rule):
    code = textwrap.dedent(rule.INVALID[0].code)
    findings = [f for f in analyze_source(decode_source("x.py", code.encode()), Config(), "x.py").findings
                if f.code == rule.code]
    lines = code.splitlines(keepends=True)
    line = findings[0].line
    cases = {"blanket.py": "  # noqa", "coded.py": f"  # noqa: {rule.code}", "other.py": "  # noqa: E501"}
    for name, comment in cases.items():
        edited = list(lines)
        edited[line - 1] = edited[line - 1].rstrip("\n") + comment + "\n"
        (tmp_path / name).write_text("".join(edited))
    got, _ = flake8(f"--select={rule.code}", *cases, cwd=tmp_path)
    assert {r[0] for r in got if r[1] == line} == {"other.py"}
    assert sorted(got) == sorted(f for f in ms_lint_check(*cases, cwd=tmp_path) if f[3] == rule.code)
    disabled, _ = flake8(f"--select={rule.code}", "--disable-noqa", *cases, cwd=tmp_path)
    assert {r[0] for r in disabled if r[1] == line} == set(cases)


def test_excluded_files_are_not_reported(tmp_path):
    _write_examples(tmp_path / "generated")
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n")
    unexcluded, _ = flake8("--select=MSL", "generated", cwd=tmp_path)
    assert len(unexcluded) >= len(_examples())
    (tmp_path / "pyproject.toml").write_text('[tool.ms-lint]\nextend-exclude = ["generated"]\n')
    got, _ = flake8("--select=MSL", "generated", cwd=tmp_path)
    assert got == []


def test_bad_configuration_is_one_msl900_not_a_crash(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\nunroll-treshold = 4\n")
    (tmp_path / "model.py").write_text("import mindspore\nx = 1\n")
    got, status = flake8("--select=MSL", "model.py", cwd=tmp_path)
    assert status == 1
    assert len(got) == 1
    path, line, col, code, text = got[0]
    assert (path, line, col, code) == ("model.py", 1, 1, UNANALYZABLE)
    assert "unroll-treshold" in text and "configuration error" in text


# -- the plugin object itself ---------------------------------------------------------------------------------
def _run_plugin(text, filename="model.py"):
    lines = text.splitlines(keepends=True)
    return list(Plugin(None, lines, filename).run())


def test_plugin_never_raises(monkeypatch):
    import ms_lint.engine

    def boom(*args, **kwargs):
        raise RuntimeError("engine exploded")

    monkeypatch.setattr(ms_lint.engine, "analyze_source", boom)
    results = _run_plugin("import mindspore\n")
    assert len(results) == 1
    line, col, text, kind = results[0]
    assert (line, col, kind) == (1, 0, Plugin)
    assert text.startswith(f"{UNANALYZABLE} ") and "RuntimeError: engine exploded" in text


def test_plugin_reports_a_file_libcst_cannot_parse():
    results = _run_plugin(BROKEN)
    assert [(r[0], r[2].split()[0]) for r in results] == [(4, UNANALYZABLE)]


def test_plugin_reads_stdin_with_cwd_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\nbad-key = 1\n")
    import ms_lint.flake8_plugin as plugin_module

    monkeypatch.setattr(plugin_module, "_CONFIGS", {})
    results = _run_plugin("import mindspore\n", filename="stdin")
    assert len(results) == 1 and "bad-key" in results[0][2]


def test_plugin_columns_are_zero_based():
    for rule, code in _examples():
        expected = analyze_source(decode_source("m.py", code.encode()), Config(), "m.py")
        # not under tests/: MSL301 leaves test modules alone
        results = _run_plugin(code, filename=os.path.join(ROOT, "m.py"))
        assert [(r[0], r[1] + 1, r[2]) for r in results] == [
            (f.line, f.column, f"{f.code} {f.message}") for f in expected.findings]
