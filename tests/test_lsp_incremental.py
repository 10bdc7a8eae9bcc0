"""The language server's incremental parser gives the tree and the node positions a full parse gives, after
every edit (``ms_lint.lsp.incremental``)."""
import random
from pathlib import Path

import libcst as cst
import pytest

from ms_lint.lsp.incremental import IncrementalParser
from ms_lint.positions import node_positions
from corpus_support import fixture_sources

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EDITS = int(__import__("os").environ.get("MS_LINT_INCREMENTAL_EDITS", "16"))
FILES = [p for p in fixture_sources(FIXTURES) if p.stat().st_size > 1500]


def compiles(text):
    try:
        compile(text, "x.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def edit(text, rng):
    lines = text.splitlines(keepends=True)
    index = rng.randrange(len(lines))
    line = lines[index]
    indent = line[: len(line) - len(line.lstrip())]
    kind = rng.choice(["space", "statement", "comment", "dedented comment", "half comment", "delete", "digit",
                       "blank", "def", "join"])
    if kind == "space":
        lines[index] = line.rstrip("\n") + " \n"
    elif kind == "statement":
        lines.insert(index, f"{indent}scratch = {rng.randint(0, 99)}\n")
    elif kind == "comment":
        lines.insert(index, f"{indent}# note\n")
    elif kind == "dedented comment":
        lines.insert(index, "# note\n")
    elif kind == "half comment":
        lines.insert(index, indent[: len(indent) // 2] + "# half\n")
    elif kind == "join" and index + 1 < len(lines):
        lines[index] = line.rstrip("\n") + lines.pop(index + 1)
    elif kind == "delete":
        del lines[index]
    elif kind == "digit":
        lines[index] = "".join(str(rng.randint(0, 9)) if c.isdigit() and rng.random() < 0.5 else c for c in line)
    elif kind == "blank":
        lines.insert(index, "\n")
    else:
        lines.insert(index, f"def added_{rng.randint(0, 99)}(x):\n    return x\n\n\n")
    return "".join(lines)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_incremental_parse_equals_full_parse(path):
    rng = random.Random(path.name)
    text = path.read_text(encoding="utf-8")
    parser = IncrementalParser()
    parser.parse(text)
    checked = 0
    for _ in range(EDITS):
        candidate = edit(text, rng)
        if not compiles(candidate):
            continue
        full = cst.parse_module(candidate)
        if full.code != candidate:
            # libcst 1.x loses blank lines before a last line of spaces ("return x\n\n\n \n" gives back
            # "return x\n \n"): no parse can give back such a text, the incremental one included
            continue
        text = candidate
        module = parser.parse(text)
        assert module.code == text
        assert module.deep_equals(full), "the incremental tree differs from a full parse"
        assert (module.default_indent, module.default_newline, module.has_trailing_newline) == (
            full.default_indent, full.default_newline, full.has_trailing_newline)
        expected = node_positions(module)
        got = parser.positions(module)
        nodes = list(expected)
        for node in rng.sample(nodes, min(len(nodes), 300)):
            assert got[node] == expected[node], node
        checked += 1
    assert checked >= 6
    assert parser.full_parses < checked, "every edit was parsed whole"


def test_edits_at_the_file_edges_and_without_final_newline():
    parser = IncrementalParser()
    text = "import mindspore\n\n\nclass A:\n    x = 1\n\n\ndef f(x):\n    return x\n\n\ndef g(y):\n    return y\n"
    for new in (text + "# tail\n", text + "def h():\n    pass", text.replace("return y", "return y + 1"),
                "# head\n" + text, text.replace("x = 1", "x = 2"), text + "    # indented tail\n"):
        if not compiles(new):
            continue
        module = parser.parse(new)
        assert module.deep_equals(cst.parse_module(new)) and module.code == new


THREE = """import mindspore


class A:
    def f(self, x):
        y = x + 1
        return y


# about B
class B:
    def g(self, x):
        y = x * 2
        return y


class C:
    def h(self, x):
        return x
"""


@pytest.mark.parametrize("old, new, parsed", [
    # inside B's body: B alone is parsed again
    ("y = x * 2", "y = x * 3", ["B"]),
    # B's first line, or the comment above it (which could belong to A's block): A is parsed with it
    ("class B:", "class B(object):", ["A", "B"]),
    ("# about B", "    # about B", ["A", "B"]),
    # B's last line: the line after may join it, C is parsed with it
    ("        return y\n\n\nclass C", "        return y + 1\n\n\nclass C", ["B", "C"]),
])
def test_an_edit_parses_the_statements_it_may_change(monkeypatch, old, new, parsed):
    import ms_lint.lsp.incremental as incremental

    parser = IncrementalParser()
    parser.parse(THREE)
    chunks = []
    real = incremental.parse_module
    monkeypatch.setattr(incremental, "parse_module", lambda text: chunks.append(text) or real(text))
    text = THREE.replace(old, new, 1)
    module = parser.parse(text)
    assert module.deep_equals(cst.parse_module(text)) and module.code == text
    assert len(chunks) == 1 and parser.full_parses == 1  # the first parse only: this one was a chunk
    assert [name for name in "ABC" if f"class {name}" in chunks[0]] == parsed
