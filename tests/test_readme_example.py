"""The README's quick-start output is what `ms-lint check examples/` really prints (positions, codes, summary)."""
import pathlib
import re

from ms_lint.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
FINDING = re.compile(r"^(examples/\S+:\d+:\d+: MSL\d{3}(?: \[\*(?:unsafe)?\])?) ", re.MULTILINE)


def test_readme_quick_start_output_matches_a_real_run(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code = main(["check", "--no-cache", "examples/"])
    out = capsys.readouterr().out
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("What the first command prints", 1)[1].split("```", 2)[1].split("\n", 1)[1]
    assert code == 1
    assert len(FINDING.findall(block)) == 5  # one per rule family the example shows
    assert FINDING.findall(out) == FINDING.findall(block)
    assert out.strip().splitlines()[-1] == block.strip().splitlines()[-1]
    assert out.strip() == block.strip()  # the whole block, messages included: one short line per finding
