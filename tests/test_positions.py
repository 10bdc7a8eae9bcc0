"""``ms_lint.positions`` gives every node the line and column libcst's PositionProvider gives it (a finding's
position, a fix's span), at a fraction of the cost: PositionProvider took about 1 s on a 12,000-line file."""
import pathlib
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from ms_lint.positions import StatementPositions, node_positions
from ms_lint.walk import find
from corpus_support import fixture_sources

ROOT = pathlib.Path(__file__).resolve().parent.parent

SHAPES = {
    "decorated": textwrap.dedent('''\
        # header comment

        """Docstring."""
        import mindspore as ms; import os


        @ms.jit
        # a comment between decorators
        @other(
            1,
        )
        def f(x):
            return g(x)


        class Net:
            # leading comment
            def construct(self, x):
                if x > 0:  # trailing
                    return h(x)
                return x
        # dedented comment at the end
        y = k(1)
        '''),
    "no final newline": "import mindspore\nx = f(1)\nif x:\n    y = g(2)",
    "crlf": "import mindspore\r\n\r\ndef f(x):\r\n    return g(x)\r\n\r\nz = h(3)\r\n",
    "lone carriage returns": "import mindspore\rx = f(1)\rif x:\r    y = g(2)\r",
    "semicolons and one-line suites": "a = f(1); b = g(2)\nif a: c = h(3)\nwhile b: d = k(4)\n",
    "continued decorator": "import mindspore\n@\\\nmindspore.jit\ndef f(x):\n    return g(x)\n",
    "async and class decorators": ("import mindspore\n@deco(1)\nasync def f(x):\n    return await g(x)\n\n\n"
                                   "@dataclass(frozen=h(2))\nclass C:\n    x: int = k(3)\n"),
    "form feed and tabs": "import mindspore\n\x0c\ndef f(x):\n\tif x:\n\t\treturn g(x)\n",
    "multi-line strings": 'x = f("""a\nb""", (\n    1,\n    2))\ny = g(x)\n',
    "empty": "",
}


def sources():
    items = list(SHAPES.items())
    items += [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
              for p in fixture_sources()]
    return items


SOURCES = sources()


@pytest.mark.parametrize("name, text", SOURCES, ids=[name for name, _ in SOURCES])
def test_every_node_has_the_position_provider_answer(name, text):
    module = cst.parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    found = node_positions(module)
    assert set(found) == set(expected)
    mismatched = [(type(node).__name__, found[node], where) for node, where in expected.items()
                  if found[node] != where]
    assert mismatched == []
    assert len(found) >= 1


def test_positions_of_a_call_on_line_three():
    module = cst.parse_module("import mindspore\n\nx = f(1)\n")
    call = find(module, cst.Call)[0]
    where = node_positions(module)[call]
    assert (where.start.line, where.start.column, where.end.line, where.end.column) == (3, 4, 3, 8)
    assert node_positions(module).get(cst.parse_expression("g()")) is None


def _parents_of_all(module: cst.Module) -> dict:
    parents, stack = {}, [module]
    while stack:
        node = stack.pop()
        for child in node.children:
            parents[child] = node
            stack.append(child)
    return parents


@pytest.mark.parametrize("name, text", SOURCES, ids=[name for name, _ in SOURCES])
def test_statement_positions_equal_the_whole_module_s(name, text):
    """Each node placed through its parents in one top-level statement gets node_positions's answer."""
    module = cst.parse_module(text)
    expected = node_positions(module)
    parents = _parents_of_all(module)
    statements = set(module.body)

    def in_a_statement(node) -> bool:
        while node is not None and node not in statements:
            node = parents.get(node)
        return node is not None

    inside = [node for node in expected if in_a_statement(node)]
    assert len(inside) > len(expected) // 2 or not module.body
    found = StatementPositions(module, text, parents)
    mismatched = [(type(node).__name__, found[node], expected[node]) for node in inside
                  if node not in found or found[node] != expected[node]]
    assert mismatched == []
    # no statement fell back to generating the whole module (the fallback would hide a wrong pairing)
    assert found._full is None


def test_statement_positions_without_parents_fall_back_to_the_whole_module():
    text = "import mindspore\n\n\ndef f(x):\n    return g(x)\n"
    module = cst.parse_module(text)
    call = find(module, cst.Call)[0]
    found = StatementPositions(module, text, {})
    assert (found[call].start.line, found[call].start.column) == (5, 11)
    assert found._full is not None


def test_statement_positions_of_a_statement_not_in_the_text_fall_back():
    """A module whose code is not the text given (an edited tree) is never placed by statement."""
    text = "import mindspore\nx = f(1)\n"
    module = cst.parse_module("import mindspore\n\nx = f(1)\n")
    call = find(module, cst.Call)[0]
    found = StatementPositions(module, text, _parents_of_all(module))
    assert found[call].start.line == 3  # the module's own answer, not a line computed against the other text
    assert found._full is not None


def test_statement_positions_keep_few_statements_and_answer_the_same_after_letting_one_go(monkeypatch):
    monkeypatch.setattr(StatementPositions, "KEEP", 2)
    text = "".join(f"def f{i}(x):\n    y = x + {i}\n    return y * 2\n\n\n" for i in range(8))
    module = cst.parse_module(text)
    expected = node_positions(module)
    found = StatementPositions(module, text, _parents_of_all(module))
    calls = []
    generate = StatementPositions._generate
    monkeypatch.setattr(StatementPositions, "_generate", lambda self, st: calls.append(st) or generate(self, st))
    names = [node for node in expected if isinstance(node, cst.Name)]
    for node in names + names[::-1]:  # every statement asked for, let go, then asked for again
        assert found[node] == expected[node]
    assert len(found._placed) == 2  # at most KEEP statements' positions at a time
    assert len(calls) > len(module.body)  # the ones let go were generated again


def test_the_engine_places_findings_statement_by_statement(monkeypatch):
    """A file with findings in many top-level statements, reported out of order (one rule after the other):
    each statement's positions are generated once, though only a few are kept."""
    from ms_lint.config import Config
    from ms_lint.engine import analyze_source
    from ms_lint.source import decode_source

    monkeypatch.setattr(StatementPositions, "KEEP", 1)
    cells = "".join(textwrap.dedent(f"""
        class Net{i}(nn.Cell):
            def construct(self, x):
                for j in range(x.shape[0]):
                    x = x + x[j]
                if x.sum() > 0:
                    x = x - 1
                return x
        """) for i in range(6))
    text = "import mindspore as ms\nfrom mindspore import nn\n" + cells
    calls = []
    generate = StatementPositions._generate
    monkeypatch.setattr(StatementPositions, "_generate", lambda self, st: calls.append(st) or generate(self, st))
    result = analyze_source(decode_source("m.py", text.encode()), Config())
    assert {finding.code for finding in result.findings} >= {"MSL101", "MSL201"}
    assert len({f.line for f in result.findings}) >= 12
    assert len(calls) == len(set(calls)) == 6  # one per class, however the rules' reports were ordered


def test_a_node_in_a_method_generates_the_method_alone(monkeypatch):
    """A finding in one method of a long class: only that method's code is generated, under the class body's
    indentation, and its positions are the whole module's."""
    methods = "".join(f"\n    # method {i}\n    @staticmethod\n    def m{i}(x):\n        return f(x, {i})\n"
                      for i in range(5))
    text = f"import mindspore\n\n\nclass Net:\n    '''Doc.'''\n    scale = g(2)\n{methods}\n\nz = h(3)\n"
    module = cst.parse_module(text)
    expected = node_positions(module)
    generated = []
    generate = StatementPositions._generate
    monkeypatch.setattr(StatementPositions, "_generate",
                        lambda self, unit: generated.append(unit) or generate(self, unit))
    found = StatementPositions(module, text, _parents_of_all(module))
    call = [node for node in find(module, cst.Call) if "3" in cst.Module([]).code_for_node(node)][0]
    assert found[call] == expected[call]
    assert [type(unit) for unit in generated] == [cst.FunctionDef]
    assert generated[0].name.value == "m3"
    for node in find(module, cst.Call):
        assert found[node] == expected[node]
    assert found._full is None
