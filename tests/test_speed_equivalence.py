"""The cold-speed shortcuts compute what the code they replace computed (issue 19: no finding may change).

* ``summary.calls_in`` gives the calls ``ast.walk`` gave, in the same order (the summary keeps "the first
  ``add_argument`` default", so order matters);
* ``summary.literal`` gives what ``ast.literal_eval`` gives, without calling it where it would raise;
* a value model built on per-function facts shared through ``GraphScope.function_facts`` answers every name of
  every function as a model built from scratch does, for every parameter-kind combination tried.
"""
import ast
import pathlib
import textwrap

import libcst as cst
import pytest

import ms_lint
from ms_lint.analysis.summary import NOT_LITERAL, calls_in, literal
from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.config import Config
from ms_lint.context import ModuleContext
from ms_lint.walk import find
from corpus_support import fixture_sources

ROOT = pathlib.Path(__file__).resolve().parent.parent

TRICKY = textwrap.dedent('''
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default=int(parser.add_argument("--inner", default=1).default))
    f = lambda x: g(h(x), *k(x), **kw(x))
    values = [build(i)(j) for i in range(n()) if ok(i) for j in make(i)]
    text = f"{fmt(a)!r:{width(b)}}"
    x = a.b(c)[d(e)].f(g=h(i))
    y = (yield from gen(z)) if cond(q) else other(r)
    s = {key(k): val(v) for k, v in items()}
    del table[pick(1)]
    out: ann(t) = start(u)
    ''')


LITERALS = textwrap.dedent('''
    a = (1, -2, 3.5, 1 + 2j, -(4), "s", b"b", None, True, ..., [1, (2,)], {"k": {3}}, set(), frozenset())
    b = (x, x.y, x[0], f(), set(x), set(a=1), lambda: 1, 1 < 2, x and y, f"{x}", [i for i in x], 1 if x else 2)
    c = {1: 2, **d}, [*x], -x, not 1, 2 * 3, "a" "b", +True, ~1
    ''')


def _literal_eval(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NOT_LITERAL


def _same(one, other):
    return one is other or (type(one) is type(other) and repr(one) == repr(other))


def test_literal_is_literal_eval():
    """On literals and look-alikes of every kind, and on every expression of ms-lint's own source."""
    samples = expressions(ast.parse(LITERALS))
    for path in sorted(pathlib.Path(ms_lint.__file__).parent.rglob("*.py")):
        samples += expressions(ast.parse(path.read_text(encoding="utf-8")))
    for node in samples:
        assert _same(literal(node), _literal_eval(node)), ast.unparse(node)[:120]
    assert sum(literal(node) is NOT_LITERAL for node in samples) > 1000
    assert sum(literal(node) is not NOT_LITERAL for node in samples) > 1000


def walk_calls(expr):
    return [node for node in ast.walk(expr) if type(node) is ast.Call]


def expressions(tree):
    return [node for node in ast.walk(tree) if isinstance(node, ast.expr)]


def test_calls_in_matches_ast_walk_on_tricky_expressions():
    tree = ast.parse(TRICKY)
    checked = 0
    for expr in expressions(tree):
        expected = walk_calls(expr)
        found = calls_in(expr)
        assert [id(n) for n in found] == [id(n) for n in expected], ast.dump(expr)[:200]
        checked += bool(expected)
    assert checked > 20  # the sample holds nested calls in every position


def test_calls_in_matches_ast_walk_on_real_code():
    """ms-lint's own source: every expression of every module, identical lists of the same nodes."""
    files = sorted(pathlib.Path(ms_lint.__file__).parent.rglob("*.py"))
    assert len(files) > 50
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for expr in expressions(tree):
            assert [id(n) for n in calls_in(expr)] == [id(n) for n in walk_calls(expr)], f"{path}:{expr.lineno}"


def _all_kinds(context, func, kinds, shared):
    if not shared:
        context.scope.function_facts = None  # no memo: facts computed afresh, as before the cache
    model = FunctionValues(context.scope, context.imports, context.constants, context.attributes, func, kinds,
                           returns=context)
    return [(name.value, model.kind(name)) for name in find(func.body, cst.Name)]


FIXTURES = [str(p.relative_to(ROOT / "fixtures")) for p in fixture_sources()]


@pytest.mark.parametrize("fixture", FIXTURES)
def test_shared_function_facts_give_the_same_kinds(fixture):
    path = ROOT / "fixtures" / fixture
    text = path.read_text(encoding="utf-8")
    module = cst.parse_module(text)
    functions = find(module, cst.FunctionDef)
    combos = [{}, None, "const"]
    for func in functions:
        params = [p.name.value for p in func.params.params]
        for combo in combos:
            if combo is None:
                kinds = {name: Kind.TENSOR for name in params}
            elif combo == "const":
                kinds = {name: Kind.CONST for name in params}
            else:
                kinds = {}
            fresh = ModuleContext(module, text, str(path), Config())
            shared = ModuleContext(module, text, str(path), Config())
            _all_kinds(shared, func, {}, shared=True)  # fills the memo with another kind combination first
            assert _all_kinds(shared, func, kinds, shared=True) == _all_kinds(fresh, func, kinds, shared=False)
