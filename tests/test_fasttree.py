"""``ms_lint.fasttree``: trees built from ``ast`` are libcst's trees less the whitespace, and the places and code it
reads from the source are what libcst's ``PositionProvider`` and ``code_for_node`` give; ``ms-lint check`` on them
gives the findings the libcst trees give."""
import pathlib
import textwrap

import libcst as cst
import pytest

from ms_lint import engine, fasttree
from ms_lint.config import Config
from ms_lint.cstutil import code_of as cstutil_code_of, parse_module
from ms_lint.fasttree.compare import difference, twins
from ms_lint.fasttree import (
    FastTreeRefused, NeedsRealTree, code_of, fast_module, own_parentheses, parenthesized, place_of, surely_uncommented,
)
from ms_lint.positions import node_positions
from ms_lint.source import read_source
from corpus_support import fixture_sources

ROOT = pathlib.Path(__file__).resolve().parent.parent

CORNERS = textwrap.dedent('''\
    """Docstring."""
    from __future__ import annotations
    from . import a as b, c
    from ..pkg.mod import (d,
                           e as f)
    from .x import *
    import os.path as osp, sys
    x = 1; y = 2
    if x: z = 3; w = 4
    elif y:
        pass
    else:
        if z:
            pass
    @dec
    @dec2(1)(2)
    async def g(a, b=1, /, c: int = 2, *args, d, e=3, **kw) -> "R":
        global G
        nonlocal_like = lambda p, *, q=1: p + q
        async with ctx() as (m, n), other():
            async for i in it:
                yield [j async for j in k if j if not j]
            yield from z
        await h(*a, key=1, **kw, other=2)
    def star_only(*, a): return a
    class K(B, metaclass=M, **extra):
        attr: int = 0
        other: str
        def m(self): return (self.a)
    t = (1,)
    u = 1,
    v = ((1), 2)
    w = (1), (2)
    s = x[1:2, ::3, 4:, :5:]
    s2 = x[(a, b)]
    s3 = x[a, b]
    s4 = x[()]
    s5 = x[a,]
    s6 = x[1:2]
    s7 = x[::]
    s8 = x[(a)]
    strings = "a" 'b' r"c\\"d" f"{x!r:>{y}}" "" f'{z=}'
    data = b"e" rb'f'
    long = """one
    two""" \'\'\'three\'\'\'
    numbers = (0x1F, 1_000, 1e-3, 2j, -1, +1, ~1, not 1)
    cmp = a < b <= c == d != e > f >= g is h is not i in j not in k
    bools = a and b and c or d or (e and f)
    ops = a + b - c * d / e // f % g ** h << i >> j | k ^ l & m @ n
    aug = 1
    aug += 1; aug -= 1; aug *= 2; aug /= 2; aug //= 1; aug %= 3; aug **= 2; aug <<= 1; aug >>= 1
    aug |= 1; aug ^= 1; aug &= 1; aug @= m
    d = {1: 2, **e, 3: 4}
    sets = {1, *a}
    lists = [1, *a]
    comps = ([i for i in a], {i for i in a}, {i: j for i, j in a}, (i for i in a for j in i))
    gen = sum(i for i in a)
    gen2 = sum((i for i in a), start)
    walrus = (y := f(x))
    cond = a if b else c
    try:
        pass
    except (E1, E2) as err:
        raise R from err
    except E3:
        raise
    else:
        del a, b
        del (c)
    finally:
        assert x, "message"
    for i, (j, k) in enumerate(pairs):
        continue
    else:
        break
    while x:
        pass
    else:
        pass
    with open(p) as fh, lock:
        pass
    a, *rest = x
    [q, r] = y
    (s, t) = z
    x[0] = y.z = 1
    ellipsis = ...
    call = f(x)(y)(z)
    keyword_first = f(k=1, *args)
    (stream or default).write(1)
    result = foo(
        first,  # a comment
        second,
    )
    text = (
        "one"
        "two"
    )
    nested = call(arg, other(
        deep))
    continued = 1 + \\
        2
    both = 1; \\
    again = 2
    if x: \\
        pass
    if x:
        y = 1;
    for i in r:
        y = 2 ;
    bs = 'a\\
    b' 'c'
    with (a + b):
        pass
    with (a) as b:
        pass
    called = None (x), True(y)
    @dec  # a comment on the decorator's line
    def decorated():
        pass
''')


def _sources():
    paths = sorted(ROOT.glob("ms_lint/**/*.py")) + sorted(ROOT.glob("tests/*.py")) + list(fixture_sources())
    return [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")) for path in paths]


SOURCES = _sources() + [("corners", CORNERS), ("corners-crlf", CORNERS.replace("\n", "\r\n")),
                        ("corners-cr", CORNERS.replace("\n", "\r"))]


def _check_places_and_code(text):
    real, fast = parse_module(text), fast_module(text)
    assert difference(fast, real) is None
    positions = node_positions(real)
    placed = quoted = 0
    for one, other in twins(real, fast):
        if not isinstance(one, cst.CSTNode) or not fasttree.is_fast(other):
            continue
        place = place_of(other)
        if place is not None:
            where = positions[one]
            assert (place.line, place.column, place.end_line, place.end_column) == (
                where.start.line, where.start.column, where.end.line, where.end.column), (type(one), place)
            placed += 1
        if isinstance(one, cst.BaseExpression):
            code = code_of(other)
            if code is not None:
                assert code == cst.Module([]).code_for_node(one), type(one)
                quoted += 1
            pairs = own_parentheses(other)
            if pairs is not None:
                assert pairs == len(getattr(one, "lpar", ())), (type(one), code)
    return placed, quoted


def test_the_same_trees_places_and_code_as_libcst_on_every_source_here():
    """Every module of ms-lint, its tests and fixtures: the tree is libcst's less layout, every place ``ast``
    gives is ``PositionProvider``'s and every expression's code that the source gives is ``code_for_node``'s."""
    assert len(SOURCES) > 300
    placed = quoted = refused = 0
    for name, text in SOURCES:
        try:
            found = _check_places_and_code(text)
        except FastTreeRefused:
            refused += 1
            continue
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from error
        placed, quoted = placed + found[0], quoted + found[1]
    assert placed > 100_000 and quoted > 100_000 and refused <= 3


def test_the_corners_are_the_same_trees():
    real, fast = parse_module(CORNERS), fast_module(CORNERS)
    assert difference(fast, real) is None
    body = fast.body
    # the shapes ast does not have: an elif, statements on one line, a suite after the colon
    branch = body[7]
    assert isinstance(branch, cst.If) and isinstance(branch.body, cst.SimpleStatementSuite)
    assert isinstance(branch.orelse, cst.If) and isinstance(branch.orelse.orelse, cst.Else)
    assert isinstance(body[6], cst.SimpleStatementLine) and len(body[6].body) == 2


def test_the_comparison_sees_a_different_tree():
    """The check above would notice an elif made an else-if, or a string concatenation made one string."""
    assert difference(fast_module("if a:\n    pass\nelse:\n    if b:\n        pass\n"),
                    parse_module("if a:\n    pass\nelif b:\n    pass\n")) is not None
    assert difference(fast_module('x = "a" "b"\n'), parse_module('x = "ab"\n')) is not None
    assert difference(fast_module("x[(a, b)]\n"), parse_module("x[a, b]\n")) is not None


@pytest.mark.parametrize("text", [
    "def f(:\n    pass\n",  # ast rejects it: libcst raises its own error
    "match x:\n    case 1:\n        pass\n",  # no match statements
    "try:\n    pass\nexcept* E:\n    pass\n",
    "ｘ = 1\n",  # a full-width name: ast keeps it NFKC-normalised ("x")
    "y = x[lambda: 1:2]\n",  # the lambda's colon is not the slice's
    "if x:  # why \\\n    pass\n",  # a backslash at the end of a comment continues nothing
])
def test_what_only_libcst_reads_exactly_is_refused(text):
    with pytest.raises(FastTreeRefused):
        fast_module(text)


def test_full_width_punctuation_in_comments_and_docstrings_is_read():
    text = '"""说明：\n一行。\n"""\nx = 1  # 注释：是\ny = "全角：" + x\n'
    assert difference(fast_module(text), parse_module(text)) is None


@pytest.mark.parametrize("text, quoted, expected", [
    ("(stream or default).write(1)\n", "stream or default", "(stream or default)"),
    ("y = f(x)\n", "x", "x"),
    ("y = f((x))\n", "x", "(x)"),
    ("y = sum(i for i in a)\n", "i for i in a", "i for i in a"),
    ("y = (i for i in a)\n", "i for i in a", "(i for i in a)"),
    ("y = ( a + b )\n", "a + b", "( a + b )"),
    ("def f():\n    return g(a,\n             b)\n", "g(a,", "g(a,\n         b)"),
    ('def f():\n    return g("""x\n    y""",\n             b)\n', "g(", 'g("""x\n    y""",\n         b)'),
    # an except clause's block is the try's, not the one of the statement before it
    ("def f():\n    try:\n        x = 1\n    except (A,\n            B):\n        pass\n", "(A,", "(A,\n        B)"),
    ("class K:\n    x = 1\n    @dec(a,\n         b)\n    def f(self):\n        pass\n", "dec(", "dec(a,\n     b)"),
])
def test_code_is_what_libcst_writes(text, quoted, expected):
    fast = fast_module(text)
    found = [code_of(node) for node in _expressions(fast) if fasttree.is_fast(node)]
    assert expected in found
    real = [cst.Module([]).code_for_node(node) for node in _expressions(parse_module(text))]
    assert expected in real


def test_code_across_a_comment_line_is_left_to_libcst():
    text = "y = f(  # note\n    (x))\n"
    fast = fast_module(text)
    name = next(node for node in _expressions(fast) if isinstance(node, cst.Name) and node.value == "x")
    assert code_of(name) is None
    with pytest.raises(NeedsRealTree):
        cstutil_code_of(name)


def test_a_node_built_around_fast_nodes_has_no_code_here():
    """A rewrite's node that holds nodes of a fast tree: libcst would write their layout, not the file's."""
    fast = fast_module("y = (a + b) * c\n")
    value = fast.body[0].body[0].value
    built = cst.Call(func=cst.Name("f"), args=[cst.Arg(value)])
    with pytest.raises(NeedsRealTree):
        cstutil_code_of(built)
    assert cstutil_code_of(value) == "(a + b) * c"
    assert cstutil_code_of(cst.Call(func=cst.Name("f"))) == "f()"


def test_positions_by_code_generation_refuse_a_fast_tree():
    from ms_lint.positions import StatementPositions

    fast = fast_module("# a comment\nx = 1\n")
    with pytest.raises(NeedsRealTree):
        node_positions(fast)
    with pytest.raises(NeedsRealTree):
        StatementPositions(fast, "# a comment\nx = 1\n", {})


def _expressions(module):
    from ms_lint.walk import find

    return list(find(module, cst.BaseExpression))


def _findings(path, fast):
    result = engine.analyze_source(read_source(str(path)), Config(), fast_trees=fast)
    return [(f.code, f.line, f.column, f.end_line, f.end_column, f.message, f.fix, f.detail)
            for f in result.findings + result.suppressed]


def test_check_on_fast_trees_finds_what_libcst_trees_find_on_every_fixture():
    total = 0
    for path in fixture_sources():
        expected = _findings(path, False)
        assert _findings(path, True) == expected, path
        total += len(expected)
    assert total > 100


def test_a_finding_whose_fix_needs_libcsts_tree_is_analyzed_again(tmp_path):
    """MSL201's fix keeps the comments inside the branch (``comments_inside`` asks a statement's code): the fast
    tree cannot say, the file is analyzed again on libcst's tree, with the same findings."""
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent('''\
        import mindspore as ms
        from mindspore import nn, ops


        class Net(nn.Cell):
            def construct(self, x):
                if x.sum() > 0:  # the positive case
                    y = x * 2  # doubled
                else:
                    y = x
                return y
        '''), encoding="utf-8")
    before = sum(engine.REANALYZED.values())
    fast = _findings(path, True)
    assert fast == _findings(path, False) and fast and fast[0][0] == "MSL201" and fast[0][6] is not None
    assert sum(engine.REANALYZED.values()) == before + 1


@pytest.mark.parametrize("text, quoted, expected", [
    ("with (a + b):\n    pass\n", "a + b", "a + b"),  # the With's parentheses
    ("with (a) as b:\n    pass\n", "a", "(a)"),
    ("y = None (x)\n", "x", "x"),  # a call, if a failing one
    ("y = not (x)\n", "x", "(x)"),
])
def test_whose_parentheses(text, quoted, expected):
    fast, real = fast_module(text), parse_module(text)
    assert expected in [code_of(node) for node in _expressions(fast) if fasttree.is_fast(node)]
    assert expected in [cst.Module([]).code_for_node(node) for node in _expressions(real)]


def test_parentheses_of_a_fast_node_are_read_from_the_source():
    fast = fast_module("if (a and b):\n    pass\nif c and d:\n    pass\n")
    first, second = fast.body[0].test, fast.body[1].test
    assert not first.lpar and parenthesized(first) and not parenthesized(second)
    assert parenthesized(parse_module("x = (a)\n").body[0].body[0].value)


def test_a_comment_on_a_decorators_line_is_inside_the_def():
    fast = fast_module("@dec  # a comment\ndef f():\n    pass\n")
    assert not surely_uncommented(fast.body[0])
    assert surely_uncommented(fast_module("@dec\ndef f():\n    pass\n").body[0])


def test_a_dropped_tree_answers_nothing_and_is_still_known(monkeypatch):
    """Past ``_KEPT_TREES`` the oldest tree's places are let go: its nodes still count as fast (no libcst code is
    generated from them) and every question about them asks for libcst's tree."""
    from ms_lint.fasttree import places

    monkeypatch.setattr(places, "_KEPT_TREES", 1)
    old = fast_module("x = (a + b) * c\n")
    fast_module("y = 1\n")
    value = old.body[0].body[0].value
    assert place_of(value) is None and code_of(value) is None
    with pytest.raises(NeedsRealTree):
        cstutil_code_of(value)
    with pytest.raises(NeedsRealTree):
        fasttree.FastPositions().get(value)
    assert fasttree.is_fast_module(old)


CHECKED_BOTH_WAYS = {
    # a comment inside the call: the fix would lose it (libcst's tree has it, a fast one does not)
    "cache_comment.py": """\
        import mindspore as ms

        ms.set_context(mode=ms.GRAPH_MODE,
                       enable_compile_cache=True,  # turn the cache on
                       compile_cache_path="./cache")
        """,
    # a comment inside the comprehension a map would replace
    "comprehension_comment.py": """\
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def f(grads, x):
            if len(tuple(ops.clip_by_value(g, -1.0, 1.0)  # clip
                         for g in grads)) > 2:
                x = x + 1
            return x
        """,
    # a parenthesized test: the split fixes take only a bare `and`
    "parenthesized_test.py": """\
        from mindspore import nn


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.training = True

            def construct(self, x):
                h = x
                if (self.training and x.sum() > 0):
                    h = x * 2
                return h
        """,
    "parenthesized_zero.py": """\
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def total_loss(logits, labels):
            total = (0)
            for i in range(logits.shape[0]):
                total = total + ops.square(logits[i] - labels[i]).sum()
            return total
        """,
    # a `;` ending the last statement of a block: libcst's range ends before it
    "semicolon.py": """\
        from mindspore import nn


        class Net(nn.Cell):
            def construct(self, x):
                y = x
                if x.sum() > 0:
                    y = x * 2;
                return y
        """,
    # a backslash joins two statements into one line
    "continued.py": """\
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def f(x):
            out = []
            for i in range(x.shape[0]):
                a = x[i] * 2; \\
                out.append(a)
            return ops.stack(out)
        """,
    "continued_suite.py": """\
        import mindspore as ms


        @ms.jit
        def f(x):
            for i in range(x.shape[0]): \\
                x = x + i
            return x
        """,
    # a rewrite runs libcst transformers over the branch: the rebuilt nodes have no source, and their code must
    # not be written from libcst's defaults (`a+b` would read as `a + b`, `(a + b) * c` as `a + b * c`)
    "same_value_written_twice.py": """\
        import mindspore as ms


        @ms.jit
        def h(a, b, c):
            if c > 0:
                z = a
                y = a+b
            else:
                z = a
                y = a + b
            return y + z
        """,
    "spaced_subscript.py": """\
        import mindspore as ms


        @ms.jit
        def m(a, b, c):
            if c > 0:
                z = a
                y = a[ b ]
            else:
                z = a
                y = a[ b ]
            return y + z
        """,
    "augmented_over_lines.py": """\
        import mindspore as ms


        @ms.jit
        def f(scores, mask):
            if (mask == 0).any():
                scores &= \\
                    mask
            return scores
        """,
    "spaced_attribute.py": """\
        import mindspore as ms
        from mindspore import nn, ops


        class PlainSGD(nn.Cell):
            def __init__(self, params):
                super().__init__()
                self.params = ms.ParameterTuple(params)

            def construct(self, grads):
                for i in range(len(self. params)):
                    ops.assign(self. params[i], self. params[i] - 0.1 * grads[i])
                return True
        """,
    # a class, an import and a with statement in a branch's function, and an empty tuple: once rebuilt by a
    # transformer, libcst's validation or codegen fails on fast nodes (the analysis asks libcst's tree)
    "statements_a_transformer_rebuilds.py": """\
        import mindspore as ms
        from mindspore import nn, ops


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.p = ms.Parameter(ms.Tensor(0.0, ms.float32), name="p")
                self.step = ms.Parameter(ms.Tensor(0, ms.int32), name="step")

            def construct(self, x):
                from mindspore import numpy as mnp
                class K:
                    pass
                with ms.context:
                    pass
                shape = ()
                if self.step == 1:
                    v = x * 2
                    ops.assign(self.p, v)
                return x
        """,
    "empty_tuple_in_a_branch.py": """\
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def k(a, b, c):
            if c > 0:
                z = a
                y = ops.reshape(a, ())
            else:
                z = b
                y = b
            return y + z
        """,
}


@pytest.mark.parametrize("name", sorted(CHECKED_BOTH_WAYS))
def test_the_same_findings_on_either_tree(tmp_path, name):
    path = tmp_path / name
    path.write_text(textwrap.dedent(CHECKED_BOTH_WAYS[name]), encoding="utf-8")
    expected = _findings(path, False)
    assert expected and _findings(path, True) == expected


# Fixes that used to send the file to libcst's tree (found by counting the files analyzed again on real code):
# the rewrite printed a number it made itself, or walked the function with libcst's visitor (which rebuilds every
# node, and a fast tree's do not validate).
NOT_ANALYZED_AGAIN = {
    # MSL101's fix counts a loop over a Tensor's length with a Tensor started at ``range``'s implicit 0
    "counter_from_zero.py": """\
        import mindspore as ms
        from mindspore import nn, ops


        class Scan(nn.Cell):
            def construct(self, x):
                h = x[0]
                for t in range(x.shape[0]):
                    h = h * 0.5 + x[t]
                return h
        """,
    # MSL201's select asks which names the rest of the function reads (libcst's visitor rebuilt the fast tree's
    # ``()``, whose parentheses a fast tree leaves to the source, and libcst refused an empty tuple without them);
    # here it then says why it offers none
    "branch_select.py": """\
        import mindspore as ms
        from mindspore import nn, ops


        class Scaler(nn.Cell):
            def __init__(self, flags):
                super().__init__()
                self.flags = flags
                self.logic_not = ops.LogicalNot()

            def construct(self, x):
                count = ms.Tensor(0, ms.int32)
                kept = ()
                for flag in self.flags:
                    overflow = self.logic_not(flag)
                    if overflow:
                        count = count + 1
                        return count, kept
                    kept += (x,)
                return count, kept
        """,
}


@pytest.mark.parametrize("name", sorted(NOT_ANALYZED_AGAIN))
def test_a_fix_the_fast_tree_can_build_is_not_analyzed_again(tmp_path, name):
    path = tmp_path / name
    path.write_text(textwrap.dedent(NOT_ANALYZED_AGAIN[name]), encoding="utf-8")
    expected = _findings(path, False)
    before = sum(engine.REANALYZED.values())
    assert expected
    assert _findings(path, True) == expected
    assert sum(engine.REANALYZED.values()) == before


def test_reads_outside_a_node_are_the_reads_of_the_rest_of_the_function_on_either_tree():
    from ms_lint.rewrites.where_flow import reads_outside

    text = textwrap.dedent("""\
        def f(self, x, y):
            a = self.scale(x, axis=y)
            b, c[k] = g(a), h
            if a:
                d = e + x
            return b
        """)
    for module in (fast_module(text), parse_module(text)):
        func = module.body[0]
        branch = func.body.body[2]
        # every Name of the body counts but an attribute's, a keyword and a plain target (a tuple target's count)
        assert reads_outside(func, branch) == {"self", "x", "y", "a", "b", "c", "k", "g", "h"}
        assert reads_outside(func, func.body.body[0]) == {"b", "c", "k", "g", "a", "h", "e", "x"}
