"""``ms_lint.walk`` finds exactly the nodes a libcst visitor sees, in the same order (it replaces visitors in hot
paths, where "the first one found" must not change)."""
import pathlib
import textwrap

import libcst as cst
import pytest

from ms_lint.rules import all_rules
from ms_lint.walk import (all_children, dispatch, find, iter_with_ancestors, parents_in, replace_nodes, run_visitor,
                          visitor_hooks)
from corpus_support import fixture_sources

ROOT = pathlib.Path(__file__).resolve().parent.parent

TRICKY = textwrap.dedent('''\
    """Module docstring."""
    from __future__ import annotations
    from .pkg import (a as b, c)
    import mindspore as ms, os.path as osp


    @ms.jit(jit_level=f"O{0}")
    @other.deco(lambda x: x + 1)
    async def f(x, *args, y: int = g(1), **kw) -> h(2):
        global G
        async with ctx(1) as (p, q), ctx(2):
            async for i in aiter(x):
                yield [j(k) for k in range(3) if m(k)]
        try:
            z = {n(1): o(2) for n, o in p(3)} | {*s(4)}
        except (E1, E2) as err:
            raise R(err) from C(err)
        else:
            w = x[t(1):u(2):v(3), ...]
        finally:
            del a[d(1)], b.e
        match cmd(x):
            case Point(x=0, y=yy) if guard(yy):
                pass
            case [first, *rest]:
                print(first, *rest)
        return (await q(1)) if cond(2) else not r(3)


    class K(Base(1), metaclass=Meta(2)):
        attr: int = field(default=f2(3))

        def construct(self, x):
            def inner():
                return self.call(x)
            return inner() + x.shape[0] @ mat(1)
    ''')

TYPES = tuple(getattr(cst, name) for name in (
    "Call", "Name", "Attribute", "FunctionDef", "ClassDef", "Lambda", "Assign", "AnnAssign", "AugAssign", "For",
    "If", "While", "With", "Try", "Match", "Return", "Subscript", "Arg", "Param", "Decorator", "Comparison",
    "BinaryOperation", "UnaryOperation", "BooleanOperation", "IfExp", "ListComp", "DictComp", "SetComp",
    "GeneratorExp", "CompFor", "CompIf", "FormattedString", "FormattedStringExpression", "SimpleString",
    "Integer", "Tuple", "List", "Dict", "Set", "Element", "StarredElement", "Await", "Yield", "Import",
    "ImportFrom", "ImportAlias", "AsName", "Expr", "SimpleStatementLine", "IndentedBlock", "Slice",
    "SubscriptElement", "Index", "MatchCase", "MatchClass", "MatchSequence", "ExceptHandler", "Raise", "Del",
    "Global", "WithItem", "DictElement", "StarredDictElement",
))


def sources():
    items = [("tricky", TRICKY)]
    items += [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
              for p in fixture_sources()]
    for rule in all_rules():
        items += [(f"{rule.code}-invalid-{i}", textwrap.dedent(e.code)) for i, e in enumerate(rule.INVALID)]
    items += [(p.name, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "ms_lint").glob("*.py"))]
    return items


SOURCES = sources()


class Recorder(cst.CSTVisitor):
    def __init__(self, types, prune=(), tracked=()):
        super().__init__()
        self.types, self.prune, self.tracked = types, prune, tracked
        self.stacks = {kind: [] for kind in tracked}
        self.seen = []

    def on_visit(self, node):
        if isinstance(node, self.types):
            innermost = tuple(self.stacks[k][-1] if self.stacks[k] else None for k in self.tracked)
            self.seen.append((node, innermost))
        for kind in self.tracked:
            if isinstance(node, kind):
                self.stacks[kind].append(node)
        return not (self.prune and isinstance(node, self.prune))

    def on_leave(self, node):
        for kind in self.tracked:
            if isinstance(node, kind):
                self.stacks[kind].pop()


def ids(pairs):
    return [(id(node), tuple(id(a) if a is not None else None for a in ancestors)) for node, ancestors in pairs]


@pytest.mark.parametrize("name, text", SOURCES, ids=[name for name, _ in SOURCES])
@pytest.mark.parametrize("prune", [(), (cst.FunctionDef, cst.ClassDef)], ids=["all", "pruned"])
def test_find_matches_a_visitor(name, text, prune):
    module = cst.parse_module(text)
    recorder = Recorder(TYPES, prune)
    module.visit(recorder)
    expected = [id(node) for node, _ in recorder.seen]
    assert [id(node) for node in find(module, TYPES, prune)] == expected
    assert len(expected) > 3


@pytest.mark.parametrize("name, text", SOURCES, ids=[name for name, _ in SOURCES])
def test_ancestors_match_a_visitor_stack(name, text):
    module = cst.parse_module(text)
    tracked = (cst.FunctionDef, cst.SimpleStatementLine, cst.ClassDef)
    recorder = Recorder((cst.Call, cst.Name), tracked=tracked)
    module.visit(recorder)
    assert ids(iter_with_ancestors(module, (cst.Call, cst.Name), tracked)) == ids(recorder.seen)


def test_tricky_module_reaches_every_corner():
    module = cst.parse_module(TRICKY)
    names = {call.func.value for call in find(module, cst.Call) if isinstance(call.func, cst.Name)}
    assert {"g", "h", "ctx", "aiter", "j", "m", "n", "o", "p", "s", "t", "u", "v", "d", "cmd", "guard",
            "q", "r", "Base", "Meta", "f2", "mat", "inner", "R", "C", "print"} <= names


# Syntax the other sources may not hold, for ``all_children``: whitespace and punctuation nodes of every kind.
CORNERS = textwrap.dedent('''\
    import a.b as c; from . import (x, y as z,)
    from .. import *
    if (n := len(a)) > 1 and b is not None or c not in d:
        pass  # a comment
    elif not x: ...
    try:
        pass
    except* (ValueError, TypeError) as group:
        raise
    raw = b"raw" rb'r'
    s = f"{x!r:>{width}}" "tail" \\
        "next"
    call(*a, **k, key=lambda q=1, *r, t, **u: (q, r))[1:2, ::3, ...]
    d = {**base, "k": v, **{1: 2}}
    x = [y async for y in gen() if y] if cond else -1 ** 2 @ m
    def f(a, /, b: "str" = 1, *, c, **kw) -> None:
        nonlocal_name = 1
        def g():
            nonlocal nonlocal_name
            return (yield from h())
        x[0] += 1; x.y -= 2
        assert x, "msg"
        while True:
            break
        else:
            continue
        with (open(p) as q, other()):
            del q
        match point:
            case {"x": 0, **rest} | [1, 2, *_] as whole if whole:
                pass
            case Point(1, y=2) | None | -1 | 1 + 2j:
                pass
            case _:
                pass
    ''')


@pytest.mark.parametrize("name, text", SOURCES + [("corners", CORNERS)],
                         ids=[name for name, _ in SOURCES] + ["corners"])
def test_all_children_are_libcsts_children(name, text):
    """``all_children`` gives what libcst's ``children`` property gives, the same objects in the same order, for
    every node of every source (``parents_in`` builds its maps from it)."""
    module = cst.parse_module(text)
    pending = [module]
    while pending:
        node = pending.pop()
        expected = list(node.children)
        assert [id(child) for child in all_children(node)] == [id(child) for child in expected], type(node)
        pending.extend(expected)


def test_parents_in_covers_whitespace_and_punctuation():
    module = cst.parse_module(CORNERS)
    parents = parents_in(module)
    pending = [module]
    count = 0
    while pending:
        node = pending.pop()
        for child in node.children:
            assert parents[child] is node
            count += 1
            pending.append(child)
    assert count == len(parents) and any(isinstance(node, cst.Comma) for node in parents)


class EventRecorder(cst.CSTVisitor):
    """What the engine's hooks saw before ``dispatch`` replaced its CSTVisitor: enter and leave events of the
    wanted types, and the parent of each node."""

    def __init__(self, types):
        super().__init__()
        self.types = types
        self.events = []
        self.stack = []
        self.parents = {}

    def on_visit(self, node):
        if self.stack:
            self.parents[node] = self.stack[-1]
        self.stack.append(node)
        if type(node) in self.types:  # hooks are per exact class, as visit_<ClassName>
            self.events.append(("enter", id(node)))
        return True

    def on_leave(self, node):
        if type(node) in self.types:
            self.events.append(("leave", id(node)))
        self.stack.pop()


@pytest.mark.parametrize("name, text", SOURCES, ids=[name for name, _ in SOURCES])
def test_dispatch_matches_a_visitor(name, text):
    module = cst.parse_module(text)
    recorder = EventRecorder(TYPES)
    module.visit(recorder)
    events = []
    enter = {kind: [lambda node: events.append(("enter", id(node)))] for kind in TYPES}
    leave = {kind: [lambda node: events.append(("leave", id(node)))] for kind in TYPES}
    parents = {}
    dispatch(module, enter, leave, parents)
    assert events == recorder.events
    assert len(events) > 6
    # Every code node's parent is the one the visitor recorded (token and whitespace nodes are not entered).
    assert parents
    assert all(recorder.parents[node] is parent for node, parent in parents.items())
    assert {id(n) for n in parents} >= {id(n) for n in recorder.parents if isinstance(n, TYPES)}


@pytest.mark.parametrize("name, text", SOURCES, ids=[name for name, _ in SOURCES])
def test_pruning_expressions_keeps_every_statement(name, text):
    """Statements never sit inside expressions, so a statement search may prune them (``_Calls.bindings_in``)."""
    module = cst.parse_module(text)
    statements = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Return, cst.If, cst.For, cst.Expr, cst.Raise,
                  cst.Import, cst.ImportFrom)
    full = find(module, statements)
    fast = find(module, statements, prune=(cst.BaseExpression,))
    assert [id(n) for n in fast] == [id(n) for n in full]
    assert len(full) >= 1


def _hooked_visitor_class():
    """A visitor with a hook on every class of TYPES: each logs its event; ``visit_Lambda`` and ``visit_Attribute``
    of ``.shape`` prune (return False), ``visit_FunctionDef`` returns None (children visited)."""
    namespace = {"__init__": lambda self: (cst.CSTVisitor.__init__(self), setattr(self, "events", []))[0]}
    for kind in TYPES:
        name = kind.__name__

        def enter(self, node, name=name):
            self.events.append(("enter", name, id(node)))
            if name == "Lambda" or (name == "Attribute" and node.attr.value == "shape"):
                return False
            return None if name == "FunctionDef" else True

        def leave(self, node, name=name):
            self.events.append(("leave", name, id(node)))

        namespace[f"visit_{name}"] = enter
        namespace[f"leave_{name}"] = leave
    return type("Hooked", (cst.CSTVisitor,), namespace)


HOOKED = _hooked_visitor_class()


@pytest.mark.parametrize("name, text", SOURCES, ids=[name for name, _ in SOURCES])
def test_run_visitor_calls_the_hooks_libcst_calls(name, text):
    """``run_visitor`` replaces ``node.visit(visitor)`` for the rules' visitors: same hooks, same nodes, same order,
    children skipped where a hook returns False, leave hooks of pruned nodes still called."""
    module = cst.parse_module(text)
    assert visitor_hooks(HOOKED()) is not None
    by_libcst, fast = HOOKED(), HOOKED()
    module.visit(by_libcst)
    run_visitor(module, fast)
    assert fast.events == by_libcst.events
    assert len(fast.events) > 6


class _AttributeHook(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.seen = []

    def visit_Call_func(self, node):
        self.seen.append(id(node))


class _CommaHook(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.seen = []

    def visit_Comma(self, node):
        self.seen.append(id(node))


class _OwnOnVisit(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_visit(self, node):
        self.seen.append(id(node))  # every node, whitespace and commas too
        return True


class _InstanceHook(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.seen = []
        self.visit_Comma = lambda node: self.seen.append(id(node))


class _Subclassed(HOOKED):
    def visit_Name(self, node):  # the subclass's hook wins, as getattr finds it
        self.events.append(("mine", id(node)))


@pytest.mark.parametrize("visitor_class", [_AttributeHook, _CommaHook, _OwnOnVisit, _InstanceHook])
def test_run_visitor_leaves_what_it_cannot_do_to_libcst(visitor_class):
    """Hooks on attributes, on token nodes the walk does not enter, an own ``on_visit``, hooks set on the
    instance: ``visitor_hooks`` says no and ``run_visitor`` runs libcst's visit, so the hooks still see it all."""
    module = cst.parse_module(TRICKY)
    assert visitor_hooks(visitor_class()) is None
    by_libcst, fast = visitor_class(), visitor_class()
    module.visit(by_libcst)
    run_visitor(module, fast)
    assert fast.seen == by_libcst.seen and fast.seen


def test_run_visitor_rejects_transformers_and_follows_overrides():
    assert visitor_hooks(cst.CSTTransformer()) is None
    module = cst.parse_module(TRICKY)
    by_libcst, fast = _Subclassed(), _Subclassed()
    module.visit(by_libcst)
    run_visitor(module, fast)
    assert fast.events == by_libcst.events
    assert ("mine", id(find(module, cst.Name)[0])) in fast.events


class _ReplaceByIdentity(cst.CSTTransformer):
    """What ``replace_nodes`` stands for: libcst's own rebuild of the tree, a node swapped on leaving it."""

    def __init__(self, replacements):
        super().__init__()
        self.replacements = replacements

    def on_visit(self, node):
        return node not in self.replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(original_node, updated_node)


REPLACED_SOURCES = [(name, text) for name, text in SOURCES if not name.endswith(".py") or name.startswith("fixtures")]


@pytest.mark.parametrize("name, text", REPLACED_SOURCES, ids=[name for name, _ in REPLACED_SOURCES])
def test_replace_nodes_matches_a_transformer(name, text):
    """Code nodes of every fixture (expressions by a name, statements by ``pass``), one at a time and with a
    name inside them (which is then not searched), give the transformer's tree and code; a tree with nothing to
    replace is returned as it is."""
    module = cst.parse_module(text)
    nodes = [node for node in find(module, (cst.BaseExpression, cst.BaseStatement))
             if type(node) is not cst.StarredElement]  # an element, not an expression, where it stands
    for number, node in enumerate(nodes[:: max(1, len(nodes) // 15)]):
        new = cst.Name(f"replaced_{number}") if isinstance(node, cst.BaseExpression) else cst.SimpleStatementLine(
            body=[cst.Pass()])
        inner = [n for n in find(node, cst.Name) if n is not node][:1]
        for replacements in ({node: new}, {node: new, **{n: cst.Name("inner") for n in inner}}):
            expected = module.visit(_ReplaceByIdentity(replacements))
            got, found = replace_nodes(module, replacements)
            assert got.deep_equals(expected), (name, number)
            assert got.code == expected.code
            assert found == {node}
    got, found = replace_nodes(module, {})
    assert got is module and not found
