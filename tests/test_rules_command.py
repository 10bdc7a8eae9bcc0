"""``ms-lint rules`` lists every rule; ``ms-lint rule CODE`` prints its page."""
import json

import pytest

from ms_lint.codes import CODES, UNANALYZABLE
from ms_lint.pages import load_page
from ms_lint.rules import all_rules


def test_rules_lists_every_registered_rule_and_msl900(run_cli):
    code, out, err = run_cli("rules")
    assert code == 0, err
    rows = {line.split()[0]: line for line in out.splitlines()[1:] if line[:3] == "MSL"}
    expected = [rule.code for rule in all_rules()] + [UNANALYZABLE]
    assert list(rows) == expected
    for rule in all_rules():
        fields = rows[rule.code].split()
        fixable = "yes" if rule.fix_applicability else "no"
        assert fields[1:4] == [rule.name, fixable, rule.fix_applicability or "-"], rows[rule.code]
    assert rows[UNANALYZABLE].split()[1:4] == [CODES[UNANALYZABLE], "no", "-"]
    assert out.splitlines()[0].split()[:4] == ["CODE", "NAME", "FIXABLE", "SAFETY"]


def test_rules_json(run_cli):
    code, out, _ = run_cli("rules", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [row["code"] for row in data] == [rule.code for rule in all_rules()] + [UNANALYZABLE]
    by_code = {row["code"]: row for row in data}
    for rule in all_rules():
        assert by_code[rule.code] == {"code": rule.code, "name": rule.name, "summary": rule.summary,
                                      "fixable": rule.fix_applicability is not None,
                                      "safety": rule.fix_applicability}
    assert by_code[UNANALYZABLE]["fixable"] is False and by_code[UNANALYZABLE]["safety"] is None


def test_rule_prints_the_page(run_cli):
    for code in [rule.code for rule in all_rules()] + [UNANALYZABLE]:
        status, out, err = run_cli("rule", code.lower())
        assert status == 0, err
        assert out == load_page(code)
        assert out.startswith(f"# {code}: ")


def test_rule_unknown_code_is_a_usage_error(run_cli):
    status, out, err = run_cli("rule", "MSL999")
    assert status == 2 and out == ""
    assert "unknown rule code 'MSL999'" in err and "MSL900" in err


def test_rule_without_a_code_is_a_usage_error(run_cli):
    with pytest.raises(SystemExit) as exc:
        run_cli("rule")
    assert exc.value.code == 2
