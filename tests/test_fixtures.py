"""Every realistic fixture under fixtures/ is flagged exactly where its ``# expect: CODE`` comments say.

Lines without an ``# expect:`` comment must not be flagged: that is how the look-alikes (loops over
nn.CellList, ``if`` on shapes and config) are held to zero false positives.
"""
import pathlib
import re

import pytest

from ms_lint.config import Config
from ms_lint.engine import analyze_path

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>MSL\d{3}(?:\s*,\s*MSL\d{3})*)")


def fixture_files():
    return sorted(
        p for p in FIXTURES.rglob("*.py") if "verify" not in p.relative_to(FIXTURES).parts[:1]
    )


def expected_findings(path: pathlib.Path):
    expected = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            for code in re.split(r"\s*,\s*", match.group("codes")):
                expected.add((number, code))
    return expected


def test_there_are_fixtures():
    assert len(fixture_files()) >= 5


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_findings_match_expectations(path):
    config = Config(root=str(FIXTURES))
    result = analyze_path(str(path), config)
    found = {(f.line, f.code) for f in result.findings}
    assert found == expected_findings(path), "\n".join(
        f"{path.name}:{f.line}:{f.column}: {f.code} {f.message}" for f in result.findings
    )
