"""Every rule's own VALID / INVALID examples, run through the real engine and fixer (Fixit-style)."""
import textwrap

import libcst as cst
import pytest

from ms_lint.rules import all_rules
from ms_lint.testing import fix, lint


def _cases(kind):
    for rule in all_rules():
        for index, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.code}-{kind.lower()}-{index}")


def test_every_rule_has_examples():
    for rule in all_rules():
        assert rule.VALID, f"{rule.code} has no VALID examples"
        assert rule.INVALID, f"{rule.code} has no INVALID examples"


@pytest.mark.parametrize("rule, code", list(_cases("VALID")))
def test_valid_example_is_not_flagged(rule, code):
    found = [f for f in lint(code) if f.code == rule.code]
    assert found == [], f"{rule.code} flagged a VALID example: {found}"


@pytest.mark.parametrize("rule, example", list(_cases("INVALID")))
def test_invalid_example_is_flagged_and_fixed_as_shown(rule, example):
    found = [f for f in lint(example.code) if f.code == rule.code]
    assert found, f"{rule.code} did not flag its INVALID example"
    outcome = fix(example.code, unsafe=example.unsafe, select=[rule.code])
    if example.fixed is None:
        assert not outcome.changed, f"{rule.code} changed an example that declares no fix"
        return
    assert outcome.error is None, outcome.error
    assert outcome.fixed == textwrap.dedent(example.fixed)
    cst.parse_module(outcome.fixed)
    again = fix(outcome.fixed, unsafe=example.unsafe, select=[rule.code])
    assert not again.changed, "fixing twice changed the code again"
    if not example.unsafe:
        safe_only = fix(example.code, unsafe=False, select=[rule.code])
        assert safe_only.fixed == outcome.fixed, "a fix declared safe needed --unsafe-fixes"
    else:
        safe_only = fix(example.code, unsafe=False, select=[rule.code])
        assert not safe_only.changed, "an unsafe fix was applied without --unsafe-fixes"
