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
        ("pkg@1", {"path": "pkg/c.py", "line": 1, "code": "MSL101"}),  # not judged
    ])
    verdicts, false_positives, unjudged = realcode.audit_counts(result)
    assert verdicts == Counter({"TP": 1, "FP": 1}) and unjudged == 1
    assert [(f["path"], f["line"], why) for _, f, why in false_positives] == [("pkg/a.py", 20, "a constexpr result")]
    text, _, _ = realcode.report([], result)
    results = tmp_path / "realcode.md"
    results.write_text(text)
    monkeypatch.setattr(realcode, "RESULTS", str(results))
    assert realcode.recorded_audit() == 1
    assert "2 TP" not in text and "1 TP and 1 FP" in text
