"""analysis.dataflow.read_after: which names a loop leaves behind that later code may read before rebinding them
(the question every map rewrite asks before it moves a loop body into a function)."""
import textwrap

import libcst as cst
import pytest

from ms_lint.analysis.dataflow import read_after
from ms_lint.config import Config
from ms_lint.context import ModuleContext
from corpus_support import fixture_sources


class _Parents(cst.CSTVisitor):
    def __init__(self, parents):
        super().__init__()
        self.parents = parents
        self.stack = []

    def on_visit(self, node):
        if self.stack:
            self.parents[node] = self.stack[-1]
        self.stack.append(node)
        return True

    def on_leave(self, original_node):
        self.stack.pop()


def live_after_first_loop(code, names):
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    context = ModuleContext(module, text, "t.py", Config())
    module.visit(_Parents(context.parents))
    loop = next(n for n in context.parents if isinstance(n, cst.For)
                and "# this loop" in cst.Module([]).code_for_node(n).splitlines()[0])
    return read_after(context, loop, names)


@pytest.mark.parametrize("after, live", [
    ("return d", {"d"}),                                   # read right after: the last element's value
    ("d = 0\nreturn d", set()),                            # rebound first
    ("for g in grads:\n    print(g)\nreturn 1", set()),    # a later loop binds g before its body reads it
    ("for h in grads:\n    print(g)\nreturn 1", {"g"}),    # ... but not a name it does not bind
    ("for g in grads:\n    pass\nreturn g", {"g"}),        # zero iterations leave the old g
    ("if grads:\n    g = 1\nreturn g", {"g"}),             # a binding in a branch may not run
    ("if grads:\n    g = 1\n    print(g)\nreturn 1", set()),  # the branch reads what it just bound
])
def test_what_a_loop_leaves_behind(after, live):
    code = "def f(grads):\n    d = None\n    for g in grads:  # this loop\n        d = g * 2\n" + textwrap.indent(after, "    ")
    assert live_after_first_loop(code, {"g", "d"}) & {"g", "d"} == live


def test_an_enclosing_loop_runs_its_body_again():
    code = """
    def f(batches):
        for grads in batches:
            d = 0
            for g in grads:  # this loop
                d = g * 2
            for g in grads:
                print(g)
    """
    # the outer loop's next pass binds d and the inner loops bind g before reading them
    assert live_after_first_loop(code, {"g", "d"}) == set()
    reading = code.replace("            d = 0\n", "            print(d)\n")
    assert live_after_first_loop(reading, {"g", "d"}) == {"d"}


def _fresh_reads(node):
    from ms_lint.analysis import dataflow
    from ms_lint.walk import run_visitor

    reader = dataflow._Reads()
    run_visitor(node, reader)
    return reader.names


def test_read_names_memo_gives_what_a_fresh_walk_gives(monkeypatch):
    """``read_name_nodes`` remembers its answers by node (nodes are immutable): on every statement and expression
    of every fixture, asked twice in a row and after the memo has dropped older entries, it gives the names a
    fresh walk gives, in order, as a new list each time."""
    import functools
    import pathlib

    from ms_lint.analysis import dataflow
    from ms_lint.walk import iter_nodes

    # a small memo: entries are dropped and asked about again
    monkeypatch.setattr(dataflow, "_names_read", functools.lru_cache(maxsize=64)(dataflow._names_read.__wrapped__))
    dataflow.forget_reads()
    root = pathlib.Path(__file__).resolve().parent.parent / "fixtures"
    asked = 0
    for path in fixture_sources(root):
        try:
            module = cst.parse_module(path.read_text(encoding="utf-8"))
        except cst.ParserSyntaxError:
            continue
        nodes = list(iter_nodes(module, (cst.BaseStatement, cst.BaseExpression)))
        for _ in range(2):
            for node in nodes:
                got = dataflow.read_name_nodes(node)
                assert got == _fresh_reads(node) and all(a is b for a, b in zip(got, _fresh_reads(node)))
                got.append(None)  # the caller's list: the memo's answer stays as it was
                assert len(dataflow.read_name_nodes(node)) == len(got) - 1
                asked += 1
        assert dataflow._names_read.cache_info().currsize <= 64
    dataflow.forget_reads()
    assert asked > 10_000 and dataflow._names_read.cache_info().currsize == 0
