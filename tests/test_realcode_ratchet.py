"""benchmarks/realcode.py's ratchets: the report records recall/precision and the fix counts, and --check compares
a new run against what the report recorded (the scoring itself needs the downloaded wheels: .ci/run runs it)."""
import importlib.util
import os
import sys
from collections import Counter, defaultdict

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "benchmarks", "realcode.py")


@pytest.fixture(scope="module")
def realcode():
    spec = importlib.util.spec_from_file_location("realcode_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _score(realcode, fixes):
    result = realcode.Score(Counter(), Counter(), Counter(), [], [], Counter(), defaultdict(Counter), [], [])
    for code, counts in fixes.items():
        result.fixes[code].update(counts)
    return result


def test_fix_counts_add_safe_and_unsafe_over_the_fixable_codes(realcode):
    result = _score(realcode, {"MSL101": {"safe": 1, "unsafe": 4, "none": 20},
                               "MSL201": {"safe": 13, "unsafe": 13, "none": 30}})
    assert realcode.fix_counts(result) == (14, 31)


def test_the_report_records_the_fix_counts_where_check_reads_them(realcode, tmp_path, monkeypatch):
    result = _score(realcode, {"MSL102": {"safe": 4, "unsafe": 5, "none": 14}})
    text, _, _ = realcode.report([], result)
    results = tmp_path / "realcode.md"
    results.write_text(text)
    monkeypatch.setattr(realcode, "RESULTS", str(results))
    assert realcode.recorded_fixes() == (4, 9)
    assert "| MSL102 | 4 | 5 | 14 |" in text


def test_the_audit_counts_judged_findings_still_reported_and_records_the_false_positives(realcode, tmp_path,
                                                                                      monkeypatch):
    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "audit.tsv").write_text(
        "# a comment line\n"
        "package\tpath\tline\tcode\tverdict\treason\n"
        "pkg@1\tpkg/a.py\t10\tMSL201\tTP\ta Parameter step\n"
        "pkg@1\tpkg/a.py\t20\tMSL201\tFP\ta constexpr result\n"
        "pkg@1\tpkg/b.py\t5\tMSL102\tFP\tPyNative-only code\n")
    monkeypatch.setattr(realcode, "LABELS", str(labels))
    result = _score(realcode, {})
    result.unlabelled.extend([
        ("pkg@1", {"path": "pkg/a.py", "line": 10, "code": "MSL201"}),
        ("pkg@1", {"path": "pkg/a.py", "line": 20, "code": "MSL201"}),
        ("pkg@1", {"path": "pkg/c.py", "line": 1, "code": "MSL101", "message": "loop over Tensor `x` row by row"}),
    ])
    verdicts, false_positives, unjudged = realcode.audit_counts(result)
    assert verdicts == Counter({"TP": 1, "FP": 1}) and [(f["path"], f["line"]) for _, f in unjudged] == [("pkg/c.py", 1)]
    assert [(f["path"], f["line"], why) for _, f, why in false_positives] == [("pkg/a.py", 20, "a constexpr result")]
    text, _, _ = realcode.report([], result)
    assert "- pkg@1 `pkg/c.py:1` MSL101: loop over Tensor `x` row by row" in text  # few enough to be listed
    results = tmp_path / "realcode.md"
    results.write_text(text)
    monkeypatch.setattr(realcode, "RESULTS", str(results))
    assert realcode.recorded_audit() == 1
    assert "2 TP" not in text and "1 TP and 1 FP" in text


def test_the_report_gives_each_unsafe_fix_its_first_reason(realcode):
    result = _score(realcode, {"MSL201": {"unsafe": 3}})
    divide = "replace the branch with ops.where(cond, a, b) (unsafe: a branch computes a division: a select " \
             "evaluates it; cannot see that `x` and `y` have one shape)"
    shape = "replace the branch with ops.where(cond, a, b) (unsafe: cannot see that `a` and `b` have one shape)"
    result.unsafe.extend([
        ("pkg@1", {"path": "pkg/lr.py", "line": 10, "code": "MSL201", "fix": {"message": divide}}),
        ("pkg@1", {"path": "pkg/lr.py", "line": 30, "code": "MSL201", "fix": {"message": shape}}),
        ("pkg@1", {"path": "pkg/opt.py", "line": 7, "code": "MSL201", "fix": {"message": shape.replace("`a`", "`p`")}}),
    ])
    assert realcode.unsafe_reason(result.unsafe[0][1]) == "a branch computes a division"
    counter = {"message": "count with a Tensor so the loop is a real `while`: compiled once (a compile-time/run-time "
                          "trade-off; `ms-lint verify` measures it)"}
    assert realcode.unsafe_reason({"fix": counter}) == "a compile-time/run-time trade-off"
    keyed = {"message": "select (unsafe: cannot see that `{a: b}` and `c` have one shape: ops.where broadcasts)"}
    assert realcode.unsafe_reason({"fix": keyed}) == "cannot see that `{a: b}` and `c` have one shape"
    text, _, _ = realcode.report([], result)
    assert "- MSL201 (2): cannot see that `…` and `…` have one shape; at `lr.py:30`, `opt.py:7`" in text
    assert "- MSL201 (1): a branch computes a division; at `lr.py:10`" in text
