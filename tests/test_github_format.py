"""``--format github``: one GitHub Actions ``::error`` workflow command per finding, escaped as GitHub requires."""
import json
import re
import textwrap

from ms_lint.codes import CODES, UNANALYZABLE
from ms_lint.diagnostics import Finding
from ms_lint.formats.github import render
from ms_lint.rules import all_rules

BROKEN = "import mindspore as ms\n\n\ndef f(:\n    pass\n"
LINE = re.compile(r"^::error file=(?P<file>[^,]*),line=(?P<line>\d+),col=(?P<col>\d+),endLine=(?P<end_line>\d+),"
                  r"endColumn=(?P<end_col>\d+),title=(?P<title>[^:]*)::(?P<message>.*)$")


def _unescape(text):
    return text.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def test_one_annotation_per_finding_matching_json(run_cli, write):
    for rule in all_rules():
        write(f"pkg/{rule.code.lower()}.py", textwrap.dedent(rule.INVALID[0].code))
    write("pkg/broken.py", BROKEN)
    status, out, _ = run_cli("check", "--no-cache", "--format", "github", ".")
    assert status == 2  # MSL900 present
    _, json_out, _ = run_cli("check", "--no-cache", "--format", "json", ".")
    expected = [(f["path"], f["line"], f["column"], f["end_line"], f["end_column"], f["code"], f["message"])
                for f in json.loads(json_out)]
    got = []
    for line in out.splitlines():
        match = LINE.match(line)
        assert match, line
        code, message = _unescape(match["message"]).split(" ", 1)
        assert _unescape(match["title"]) == f"{code} {CODES[code]}"
        got.append((_unescape(match["file"]), int(match["line"]), int(match["col"]), int(match["end_line"]),
                    int(match["end_col"]), code, message))
    assert got == expected
    assert {g[5] for g in got} == {rule.code for rule in all_rules()} | {UNANALYZABLE}


def test_clean_run_prints_nothing(run_cli, write):
    write("plain.py", "x = 1\n")
    status, out, _ = run_cli("check", "--no-cache", "--format", "github", ".")
    assert (status, out) == (0, "")


def test_special_characters_are_escaped():
    finding = Finding(code="MSL900", message="100% bad:\nsecond line, really\r", path="dir,a:b/f%1.py", line=3,
                      column=2, end_line=4, end_column=9)
    out = render([finding])
    assert out.endswith("\n") and out.count("\n") == 1
    assert out == ("::error file=dir%2Ca%3Ab/f%251.py,line=3,col=2,endLine=4,endColumn=9,"
                   "title=MSL900 unanalyzable-file::MSL900 100%25 bad:%0Asecond line, really%0D\n")
    match = LINE.match(out.rstrip("\n"))
    assert _unescape(match["file"]) == "dir,a:b/f%1.py"
    assert _unescape(match["message"]) == "MSL900 100% bad:\nsecond line, really\r"
