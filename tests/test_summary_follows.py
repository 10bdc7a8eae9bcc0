"""What the project index's summary says a function's body may make ``GraphScope`` follow (``Definition.follows``)
and hands to ``jit`` (``ModuleSummary.jit_arguments``): the screen before parsing closes its set of possible graph
functions over them (``ms_lint.analysis.screen.candidates``), so each must hold every name ``GraphScope`` resolves
from the same code: ``tests/test_screen.py`` checks that on every fixture, and these pin down the cases one by one.
"""
import ast
import textwrap

import libcst as cst
import pytest

from ms_lint.analysis.summary import summarize
from ms_lint.names import ImportTable
from ms_lint.scope import GraphScope


def _summary(code):
    text = textwrap.dedent(code)
    return summarize(ast.parse(text), "mod", "/tmp/mod.py", "digest", None, text)


def _follows(code, qualname):
    found = [d for d in _summary(code).definitions if d.qualname == qualname]
    assert len(found) == 1, qualname
    return set(found[0].follows)


def test_callees_and_arguments_written_as_names_or_self_attributes_are_followed():
    follows = _follows("""
        def outer(self, x, *fns, **named):
            helper(x)
            self.method(x)
            apply(other, self.bound, *fns, key=keyed, **named)
            x.reshape(2)
            super().__init__()
            ops.add(x, 1)
            "plain(x)"
        """, "outer")
    # ``x`` passed, ``super`` called: names ``GraphScope`` would resolve were a function so named
    assert follows == {"helper", "x", "method", "apply", "other", "bound", "fns", "keyed", "named", "super"}


def test_what_nested_functions_classes_and_lambdas_hold_is_the_enclosing_function_s():
    """``GraphScope`` reads every call of the caller's body (``find(caller.body, cst.Call)``): nested bodies,
    their decorators and defaults, a nested class's bases and methods."""
    code = """
        def outer(x):
            @decorate(by_decorator)
            def inner(y=default_of(z), *, k: annotated(t) = 1) -> returned():
                return in_inner(y)

            class Local(base_call(b)):
                size = in_class_body()

                def method(self):
                    return in_method(self.sibling)

            square = lambda v: in_lambda(v)
            return inner(x)
        """
    assert _follows(code, "outer") == {
        "decorate", "by_decorator", "default_of", "z", "annotated", "t", "returned", "in_inner", "base_call", "b",
        "in_class_body", "in_method", "sibling", "in_lambda", "v", "inner", "x", "y"}
    assert _follows(code, "outer.<locals>.Local.method") == {"in_method", "sibling"}


def test_a_top_level_function_s_own_header_is_not_in_its_body():
    follows = _follows("""
        @decorate(by_decorator)
        def f(x=default_of(z)):
            return body_call(x)
        """, "f")
    assert follows == {"body_call", "x"}


@pytest.mark.parametrize("code, handed", [
    ("ms.jit(step)", ("step",)),
    ("jit(self.train_step, jit_level='O1')", ("train_step",)),
    ("ms_function(*fns)", ()),  # ``call_name_args`` leaves out starred arguments
    ("ms.jit(*fns, step)", ("step",)),
    ("jit(fn=step)", ()),  # a keyword: no positional argument, as ``GraphScope`` reads it
    ("compile(step)", ()),
    ("jit(build())", ()),
])
def test_what_a_call_of_jit_is_handed(code, handed):
    summary = _summary(f"def run(self):\n    {code}\n")
    assert summary.jit_arguments == handed


def test_jit_arguments_in_headers_and_nested_bodies_count():
    summary = _summary("""
        import mindspore as ms


        def wrapped(fn=ms.jit(from_default)):
            def inner():
                return ms.jit(from_nested)
            return inner


        class Holder(Base, metaclass=make(ms.jit(from_class_header))):
            step = ms.jit(from_class_body)
        """)
    assert summary.jit_arguments == ("from_class_body", "from_class_header", "from_default", "from_nested")


def test_the_follows_hold_what_graph_scope_resolves_in_the_same_code():
    """``GraphScope`` on the same module: every function it reaches from the root is named in the follows of a
    function it reached before (or is the root)."""
    code = textwrap.dedent("""
        import mindspore as ms
        from mindspore import nn


        def helper(x):
            return x


        def passed(x):
            return x


        def in_default(x):
            return x


        class Net(nn.Cell):
            def construct(self, x):
                def local(y=in_default(x)):
                    return helper(y)
                return self.step(x) + ms.vmap(passed)(x) + local()

            def step(self, x):
                return x
        """)
    scope = GraphScope(cst.parse_module(code), ImportTable(cst.parse_module(code)))
    reached = {info.node.name.value for info in scope.graph_functions()}
    assert reached == {"construct", "step", "helper", "passed", "in_default", "local"}
    # ``local`` is a def of construct's own body: its text is construct's, which the screen reads whole
    assert reached - {"construct", "local"} <= _follows(code, "Net.construct")


@pytest.mark.parametrize("before, after", [
    ("return g(x, k=a)", "return g(x, k=b)"),  # a keyword's value: in ``follows``, not in the calls the index reads
    ("return g(*xs)", "return g(*ys)"),
    # in a nested function's header: in no ``passed``
    ("def inner(fn=ms.jit(step)):\n        return fn", "def inner(fn=ms.jit(other)):\n        return fn"),
])
def test_what_only_the_screen_reads_leaves_the_summary_s_shape(before, after):
    """The index never reads ``follows`` nor ``jit_arguments``: an edit that changes only them keeps the shape
    (the editor keeps its contexts, a cached run carries the other files' fingerprints over)."""
    from ms_lint.analysis.summary import same_shape

    code = "def run(self, x, xs, ys):\n    {}\n"
    first, second = _summary(code.format(before)), _summary(code.format(after))
    assert first.definitions[0].follows != second.definitions[0].follows
    assert same_shape(first, second)
