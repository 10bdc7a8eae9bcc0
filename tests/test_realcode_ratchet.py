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
    result = realcode.Score(Counter(), Counter(), Counter(), [], [], Counter(), defaultdict(Counter), [])
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
