"""Long modules read a run of top-level statements at a time (``ms_lint.chunks``): the libcst tree, the index's
summary, the compile verdict and the findings are those of the whole module. Runs of a few lines here, so every
fixture and test file is cut many times (and the cuts that land inside a string fall back to the whole)."""
import ast
from pathlib import Path

import libcst as cst
import pytest

import ms_lint.chunks as chunks
from ms_lint.analysis import index as index_module
from ms_lint.analysis.summary import summarize
from ms_lint.config import Config
from ms_lint.cstutil import _parse_runs, parse_module
from ms_lint.engine import analyze_source, compile_problem, python_compile
from ms_lint.source import read_source
from corpus_support import fixture_sources

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*fixture_sources(), *(ROOT / "tests").rglob("*.py")])


@pytest.fixture
def short_runs(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_LINES", 6)


def _cut_lines(text, chunk_lines=6):
    return [line for _, line in chunks.chunk_bounds(text, chunk_lines)[1:]]


# -- where a module is cut --------------------------------------------------------------------------------
def test_cut_before_a_definition_after_empty_lines_that_follow_code():
    text = "import os\nx = 1\ny = 2\nz = 3\n\n\ndef f():\n    return x\n\n@dec\nclass A:\n    pass\n"
    assert _cut_lines(text, 3) == [5, 9]  # the run starts at the empty lines, which lead the statement
    bounds = chunks.chunk_bounds(text, 3)
    assert text[bounds[1][0]:].startswith("\n\ndef f():")


def test_no_cut_after_a_comment_a_continuation_or_without_an_empty_line():
    assert _cut_lines("a = 1\nb = 2\nc = 3\n# about f\n\ndef f():\n    pass\n", 3) == []
    assert _cut_lines("a = 1\nb = 2\nc = 3 + \\\n\ndef f():\n    pass\n", 3) == []
    assert _cut_lines("a = 1\nb = 2\nc = 3\n@dec\ndef f():\n    pass\n", 3) == []
    assert _cut_lines("a = 1\nb = 2\nc = 3\n\n    def f():\n        pass\n", 3) == []  # not at column 0
    assert _cut_lines("a = 1\nb = 2\n\ndef f():\n    pass\n") == []  # shorter than a run: never cut


def test_a_lone_carriage_return_forbids_every_cut():
    # Python ends a line at a lone "\r"; the runs' line numbers count "\n" only
    text = "x = 1\ry = 2\nz = 3\n\ndef f():\n    pass\n"
    assert chunks.chunk_bounds(text, 1) == [(0, 1)]
    assert len(chunks.chunk_bounds(text.replace("\r", "\n"), 1)) == 2


def test_runs_are_at_least_chunk_lines_long():
    text = "".join(f"x{i} = {i}\n\ndef f{i}():\n    pass\n" for i in range(50))
    cuts = [1] + _cut_lines(text, 20)
    assert len(cuts) > 3
    assert all(b - a >= 20 for a, b in zip(cuts, cuts[1:]))


# -- the same tree, summary and verdict as the whole module ----------------------------------------------------
def test_libcst_trees_equal_the_whole_parse_on_every_fixture_and_test(short_runs):
    joined = 0
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        try:
            expected = cst.parse_module(text)
        except cst.ParserSyntaxError:
            with pytest.raises(cst.ParserSyntaxError):
                parse_module(text)
            continue
        tree = parse_module(text)
        assert tree.deep_equals(expected), path
        assert tree.code == text, path
        bounds = chunks.chunk_bounds(text)
        joined += len(bounds) > 1 and _parse_runs(text, bounds) is not None
    assert joined > 100  # most files were joined from runs, not parsed whole


TRICKY = {
    "a string holds a definition at column 0": 'a = 1\nb = 2\nc = 3\ns = """\n\ndef f():\n"""\n\n\ndef g():\n    pass\n',
    "a bracket is open across the cut": "a = 1\nb = 2\nc = 3\nt = (1,\n\n)\n\ndef g():\n    pass\n",
    "CRLF line ends": "a = 1\r\nb = 2\r\nc = 3\r\n\r\ndef f():\r\n    return 1\r\n\r\nclass A:\r\n    x = 2\r\n",
    "tabs after the cut, spaces before": "def f():\n    a = 1\n    b = 2\n    c = 3\n\ndef g():\n\treturn 1\n",
    "no final newline": "a = 1\nb = 2\nc = 3\n\ndef f():\n    return 1",
    "comments in the blocks and the footer": ("def f():\n    x = 1\n    # inside\ny = 2\nz = 3\nw = 4\n\n"
                                              "def g():\n    pass\n    # end of g\n# footer\n"),
    "decorated definitions": "a = 1\nb = 2\nc = 3\n\n@dec(1)\n@other\nclass A:\n    pass\n\n\n@dec\ndef f():\n    pass\n",
    "whitespace on an empty line": "a = 1\nb = 2\nc = 3\n    \n\ndef f():\n    pass\n",
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_cuts_give_the_whole_tree(name, monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_LINES", 2)
    text = TRICKY[name]
    expected = cst.parse_module(text)
    tree = parse_module(text)
    assert tree.deep_equals(expected)
    assert tree.code == expected.code


def test_summaries_equal_the_whole_modules_on_every_fixture(short_runs):
    summarized = 0
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        if "get_context" in text and "PYNATIVE_MODE" in text:
            continue  # summarized whole (the PyNative guard reads the whole tree)
        try:
            whole = summarize(ast.parse(text), "m", str(path), "d", "pkg", text)
        except SyntaxError:
            continue
        by_runs = index_module._summarize_runs(text, chunks.chunk_bounds(text), str(path), "m", "d", "pkg")
        if by_runs is not None:
            summarized += 1
            assert by_runs == whole, path
    assert summarized > 100


def test_statement_lines_for_positions_equal_the_whole_modules(short_runs):
    from ms_lint.positions import _ast_statement_lines

    cut = 0
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        try:
            whole = [(statement.lineno, [member.lineno for member in statement.body]
                      if isinstance(statement, ast.ClassDef) else None) for statement in ast.parse(text).body]
        except SyntaxError:
            assert _ast_statement_lines(text) is None
            continue
        assert _ast_statement_lines(text) == whole, path
        cut += len(chunks.chunk_bounds(text)) > 1
    assert cut > 100


def test_summarize_file_reads_a_long_module_by_runs(short_runs, tmp_path, monkeypatch):
    path = tmp_path / "long.py"
    path.write_text("import mindspore as ms\n\n\nclass A(ms.nn.Cell):\n    def construct(self, x):\n        return x\n"
                    "\n\nN = 3\nM = 4\nK = 5\n\n\ndef helper(a, b=2):\n    return a\n", encoding="utf-8")
    parsed = []
    real_parse = ast.parse
    monkeypatch.setattr(index_module.ast, "parse", lambda text, *a, **k: parsed.append(text) or real_parse(text, *a, **k))
    summary = index_module.summarize_file(str(path))
    assert len(parsed) == 2  # two runs, no whole parse
    assert summary.classes["A"].line == 4 and summary.functions["helper"].line == 14
    assert summary.functions["helper"].defaults == {"b": 2} and summary.constants == {"N": 3, "M": 4, "K": 5}


COMPILE_CASES = {
    "compiles": ("a = 1\nb = 2\nc = 3\n\ndef f():\n    return 1\n", None),
    "return outside a function in a later run": ("a = 1\nb = 2\nc = 3\n\ndef f():\n    pass\nreturn 2\n", 7),
    "global after an assignment in an earlier run": ("x = 1\nb = 2\nc = 3\n\ndef f():\n    pass\nglobal x\n", 7),
    "a future import after the first run": ("a = 1\nb = 2\nc = 3\n\ndef f():\n    pass\n"
                                            "from __future__ import annotations\n", 7),
    "barry_as_FLUFL imported, <> in a later run": ("from __future__ import barry_as_FLUFL\nx = 1\n\n"
                                                    "def f():\n    return 1 <> 2\n", 5),
    "a future import in the first run": ("from __future__ import annotations\nb = 2\nc = 3\n\n"
                                         "def f(x: undefined_name) -> int:\n    pass\n", None),
}


@pytest.mark.parametrize("name", sorted(COMPILE_CASES))
def test_compile_problem_equals_the_whole_modules(name, monkeypatch):
    text, line = COMPILE_CASES[name]
    monkeypatch.setattr(chunks, "CHUNK_LINES", 2)
    found = compile_problem(text, "m.py")
    monkeypatch.setattr(chunks, "CHUNK_LINES", 10 ** 9)
    whole = compile_problem(text, "m.py")
    assert (found.line if found else None) == line
    assert (found.message, found.line, found.column) == (whole.message, whole.line, whole.column) if whole else found is None


def test_a_later_run_compiles_with_the_future_features_of_the_first(monkeypatch):
    # under ``from __future__ import annotations`` a ``yield`` in a local annotation is an error, without it not
    text = "from __future__ import annotations\nb = 2\nc = 3\n\ndef f():\n    x: (yield 1) = 2\n"
    monkeypatch.setattr(chunks, "CHUNK_LINES", 2)
    assert len(chunks.chunk_bounds(text)) == 2
    python_compile(text.split("\n\n", 1)[1], "m.py")  # the second run alone compiles
    found = compile_problem(text, "m.py")
    assert found is not None and found.line == 6 and "annotation" in found.message


def test_findings_equal_the_whole_modules_on_the_fixtures(monkeypatch):
    config = Config()

    paths = [str(p) for p in fixture_sources(ROOT / "fixtures")]
    assert len(paths) > 50
    kept = []  # the indexes of both passes stay alive: their contexts are keyed by id(index)

    def findings_of_every_fixture():
        monkeypatch.setattr(index_module, "_INDEXES", {})  # fresh indexes and contexts: nothing parsed before
        kept.append(index_module._INDEXES)
        return {path: [(f.code, f.line, f.column, f.end_line, f.end_column, f.message, f.detail,
                        f.fix)
                       for f in analyze_source(read_source(path), config).findings] for path in paths}

    whole = findings_of_every_fixture()
    assert sum(map(len, whole.values())) > 100
    monkeypatch.setattr(chunks, "CHUNK_LINES", 4)
    assert findings_of_every_fixture() == whole
