"""Finding nodes of a few types in a libcst tree, about ten times faster than a ``CSTVisitor``.

``node.visit(visitor)`` rebuilds every node it passes (``_visit_and_replace_children``) and calls two hooks per
node, even when the visitor only wants ``Call`` nodes: on MindSpore's own source, collecting the calls of a
module that way took longer than parsing it. ``find`` reads the fields of each node directly instead.

It yields nodes in the order a visitor's ``visit_*`` hooks see them (pre-order, children in the order
``_visit_and_replace_children`` visits them; that order is read once per node class from libcst's own source),
so code that keeps "the first one found" behaves exactly as it did with a visitor. Fields that can only hold
whitespace and punctuation (``whitespace_*``, ``lpar``, ``comma``...) are not entered: they hold no expression
or statement.

Every libcst class has ``ABCMeta`` as its metaclass, so ``isinstance(node, cst.Call)`` runs the ABC machinery
(about 1 µs, and a walk asks it several times per node). The walks here answer "is this a node / one of the
wanted types" from dictionaries keyed by the node's exact class, filled with one ``issubclass`` per class.
"""
from __future__ import annotations

import dataclasses
import linecache
import re
import weakref
from typing import AbstractSet, Callable, Dict, Iterator, List, Mapping, Optional, Set, Tuple, Type, TypeVar, Union

import libcst as cst

from ms_lint.treememo import tree_memo

N = TypeVar("N", bound=cst.CSTNode)

# Fields that hold only whitespace, comments and punctuation tokens in every libcst node class.
_TOKEN_FIELDS = frozenset({
    "lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer", "comma", "semicolon",
    "colon", "equal", "dot", "operator", "asynchronous", "newline", "trailing_whitespace", "star_tok",
})
_FIELDS: Dict[Tuple[type, bool], Tuple[str, ...]] = {}


def _child_fields(node_class: type, tokens: bool = False) -> Tuple[str, ...]:
    """The fields of ``node_class`` that can hold code (``tokens``: and those that hold whitespace and
    punctuation too), in the order libcst visits them."""
    found = _FIELDS.get((node_class, tokens))
    if found is not None:
        return found
    names = [f.name for f in dataclasses.fields(node_class)
             if tokens or (not f.name.startswith("whitespace") and f.name not in _TOKEN_FIELDS)]
    source = _visit_source(node_class)
    positions = {}
    for index, name in enumerate(names):
        # the visit helpers name the field as a string: ``visit_optional(self, "module", self.module, visitor)``
        match = re.search(rf'"{name}"', source) or re.search(rf"\bself\.{name}\b", source)
        positions[name] = match.start() if match else len(source) + index
    found = tuple(sorted(names, key=positions.__getitem__))
    _FIELDS[(node_class, tokens)] = found
    return found


def _visit_source(node_class: type) -> str:
    """The source of ``node_class._visit_and_replace_children`` from its first line to its last line of code ("" where
    it has none: a frozen install; the dataclass order is close to the visit order). Sliced from the module's lines
    (read once per file), not ``inspect.getsource``, which tokenizes to find where the block ends: 0.34 ms a class,
    about 35 ms in each process that analyzes (the lines it leaves out close brackets and name no field)."""
    method = getattr(node_class, "_visit_and_replace_children", None)
    code = getattr(method, "__code__", None)
    if code is None:
        return ""
    if not hasattr(code, "co_lines"):  # Python 3.9
        import inspect

        try:
            return inspect.getsource(method)
        except (OSError, TypeError):
            return ""
    lines = linecache.getlines(code.co_filename)
    numbers = [line for _start, _end, line in code.co_lines() if line is not None]
    return "".join(lines[code.co_firstlineno - 1:max(numbers)]) if lines and numbers else ""


class _ClassTest(dict):
    """``test[type(x)]`` is ``issubclass(type(x), kinds)``, computed once per class (a dict lookup after that)."""

    def __init__(self, kinds: Union[type, Tuple[type, ...]]):
        super().__init__()
        self.kinds = kinds

    def __missing__(self, klass: type) -> bool:
        answer = self[klass] = issubclass(klass, self.kinds)  # False for kinds == ()
        return answer


_TESTS: Dict[object, _ClassTest] = {}
_IS_NODE = _ClassTest(cst.CSTNode)


def _test(kinds: Union[type, Tuple[type, ...]]) -> _ClassTest:
    test = _TESTS.get(kinds)
    if test is None:
        test = _TESTS[kinds] = _ClassTest(kinds)
    return test


def _children_reader(node_class: type, tokens: bool = False) -> Callable[[cst.CSTNode], List[cst.CSTNode]]:
    """A function that lists the code-holding children (``tokens``: every child) of a ``node_class`` node in visit
    order: one attribute read per field, written out for the class (about twice as fast as looping over the field
    names with ``getattr``; the walks spend most of their time here)."""
    lines = ["def children(node):", "    found = []"]
    for name in _child_fields(node_class, tokens):  # dataclass field names: identifiers
        lines += [f"    value = node.{name}",
                  "    kind = type(value)",
                  "    if is_node[kind]:",
                  "        found.append(value)",
                  "    elif kind is tuple or kind is list:",
                  "        found.extend([item for item in value if is_node[type(item)]])"]
    lines.append("    return found")
    namespace: Dict[str, object] = {"is_node": _IS_NODE}
    exec("\n".join(lines), namespace)  # noqa: S102 (code built from the node class's own field names)
    return namespace["children"]  # type: ignore[return-value]


class _ChildrenReaders(dict):
    """``readers[type(node)](node)``: the node's children, the reader made on first use of each class."""

    def __missing__(self, node_class: type) -> Callable[[cst.CSTNode], List[cst.CSTNode]]:
        reader = self[node_class] = _children_reader(node_class)
        return reader


_CHILDREN = _ChildrenReaders()


def _children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The code-holding children of ``node``, in visit order (a new list the caller may change)."""
    return _CHILDREN[type(node)](node)


code_children = _children  # for walks written elsewhere (``where_flow.reads_outside``)


def _own_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    return list(node.children)


class _AllChildrenReaders(dict):
    """``readers[type(node)](node)``: what ``node.children`` gives, made on first use of each class. A class that
    overrides libcst's ``children`` (the leaves: whitespace, newlines, ``*`` of an import) answers itself."""

    def __missing__(self, node_class: type) -> Callable[[cst.CSTNode], List[cst.CSTNode]]:
        generic = getattr(node_class, "children", None) is cst.CSTNode.children
        reader = self[node_class] = _children_reader(node_class, tokens=True) if generic else _own_children
        return reader


_ALL_CHILDREN = _AllChildrenReaders()


def all_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """``node.children`` (every child node, whitespace and punctuation included, in visit order) without the
    visitor libcst runs for it, which rebuilds the node: about 6x faster (the parent maps of the 6,303 functions of
    a generated module of 3,000 Cells: 4.8-5.9 s -> 0.8 s)."""
    return _ALL_CHILDREN[type(node)](node)


def find(root: cst.CSTNode, types: Union[Type[N], Tuple[type, ...]],
         prune: Tuple[type, ...] = ()) -> List[N]:
    """Every node under ``root`` (``root`` included) that is an instance of ``types``, in visit order.

    Nodes that are instances of ``prune`` are matched themselves but not entered (a visitor whose
    ``visit_<Prune>`` returns False)."""
    return list(iter_nodes(root, types, prune))


def iter_with_ancestors(root: cst.CSTNode, types: Union[Type[N], Tuple[type, ...]], tracked: Tuple[type, ...],
                        prune: Tuple[type, ...] = ()) -> Iterator[Tuple[N, Tuple[Optional[cst.CSTNode], ...]]]:
    """Like :func:`iter_nodes`, with each node's innermost ancestor of each ``tracked`` type (None where there is
    none): what a visitor keeps on a stack in ``visit_X``/``leave_X`` (the enclosing ``FunctionDef``...)."""
    wanted, pruned, is_tracked = _test(types), _test(prune), _test(tracked)
    slot_tests = [_test(want) for want in tracked]
    empty: Tuple[Optional[cst.CSTNode], ...] = (None,) * len(tracked)
    stack: List[Tuple[cst.CSTNode, Tuple[Optional[cst.CSTNode], ...]]] = [(root, empty)]
    pop, push = stack.pop, stack.append
    while stack:
        node, ancestors = pop()
        kind = type(node)
        if wanted[kind]:
            yield node, ancestors  # type: ignore[misc]
        if pruned[kind]:
            continue
        inner = ancestors
        if is_tracked[kind]:
            inner = tuple([node if test[kind] else found for test, found in zip(slot_tests, ancestors)])
        for child in reversed(_CHILDREN[kind](node)):
            push((child, inner))


def iter_nodes(root: cst.CSTNode, types: Union[Type[N], Tuple[type, ...]],
               prune: Tuple[type, ...] = ()) -> Iterator[N]:
    wanted, pruned, readers = _test(types), _test(prune), _CHILDREN
    stack: List[cst.CSTNode] = [root]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if wanted[kind]:
            yield node  # type: ignore[misc]
        if not pruned[kind]:
            children = readers[kind](node)
            children.reverse()  # pushed last-first, so popped in visit order
            extend(children)


def replace_nodes(root: N, replacements: Mapping[cst.CSTNode, cst.CSTNode]) -> Tuple[N, Set[cst.CSTNode]]:
    """``root`` with every node of ``replacements`` under it (``root`` included; found by identity, their own
    insides not searched) put in place of it, and the nodes replaced. The tree a ``CSTTransformer`` whose
    ``on_leave`` returns the replacement gives (``deep_equals``, the same code), but only the nodes above a
    replaced one are rebuilt (``with_changes``): a transformer builds every node of ``root`` anew, which cost
    the vmap rewrite a tenth of an editor's check. Replacements sit in code fields only (a loop, a call, a
    subscript), which are the fields ``_child_fields`` lists. The unchanged subtrees are ``root``'s own nodes:
    what keys facts by node (the value model's reaching bindings) answers for them as for the originals."""
    found: Set[cst.CSTNode] = set()

    def rebuilt(node: cst.CSTNode) -> cst.CSTNode:
        if node in replacements:
            found.add(node)
            return replacements[node]
        changes: Dict[str, object] = {}
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            kind = type(value)
            if _IS_NODE[kind]:
                new = rebuilt(value)
                if new is not value:
                    changes[name] = new
            elif kind is tuple or kind is list:
                items = [rebuilt(item) if _IS_NODE[type(item)] else item for item in value]
                if any(new is not old for new, old in zip(items, value)):
                    changes[name] = kind(items)
        return node.with_changes(**changes) if changes else node

    return rebuilt(root), found  # type: ignore[return-value]


def node_hooks(owner: type) -> List[Tuple[str, type]]:
    """(method name, libcst node class) of each ``visit_<Class>``/``leave_<Class>`` hook a class defines: what
    ``dispatch`` calls for a rule, and what the screen before parsing reads of it (``ms_lint.analysis.screen``)."""
    hooks = []
    for attr in dir(owner):
        if attr.startswith(("visit_", "leave_")):
            node_type = getattr(cst, attr[6:], None)
            if isinstance(node_type, type):
                hooks.append((attr, node_type))
    return hooks


def dispatch(root: cst.CSTNode, enter: Dict[type, List[Callable]], leave: Dict[type, List[Callable]],
             parents: Dict[cst.CSTNode, cst.CSTNode], skip: AbstractSet[cst.CSTNode] = frozenset()) -> None:
    """Call ``enter[type(node)]`` hooks in pre-order and ``leave[...]`` hooks in post-order for every node under
    ``root`` (``root`` included), recording each node's parent in ``parents``: what a ``CSTVisitor`` whose
    ``on_visit`` always returns True does, without rebuilding the tree. Hooks are looked up by exact class (libcst
    node classes are final), as ``CSTVisitor`` does with ``visit_<ClassName>``. The nodes of ``skip`` (other
    than ``root``) are neither dispatched nor entered: the engine walks a graph function nested in another one on
    its own."""
    stack: List[object] = [root]  # nodes to enter, and ``_Leaving`` marks for nodes with leave hooks
    pop, push, extend, readers = stack.pop, stack.append, stack.extend, _CHILDREN
    while stack:
        node = pop()
        kind = type(node)
        if kind is _Leaving:
            for hook in leave[node.kind]:  # type: ignore[attr-defined]
                hook(node.node)  # type: ignore[attr-defined]
            continue
        if skip and node in skip and node is not root:
            continue
        hooks = enter.get(kind)
        if hooks is not None:
            for hook in hooks:
                hook(node)
        if kind in leave:
            push(_Leaving(node, kind))
        children = readers[kind](node)
        for child in children:
            parents[child] = node
        children.reverse()  # pushed last-first, so entered in visit order
        extend(children)


class _Leaving:
    """A node whose leave hooks run once its children are done (``dispatch``)."""

    __slots__ = ("node", "kind")

    def __init__(self, node: cst.CSTNode, kind: type):
        self.node, self.kind = node, kind


# Node classes that only fields ``_children`` skips can hold (whitespace, comments, punctuation, operators): a
# visitor with a hook on one of them, or on an attribute (``visit_Call_func``), runs as libcst runs it.
_HOOK_PREFIXES = ("visit_", "leave_")
_TOKEN_CLASSES: Tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Comment, cst.Newline,
    cst.Comma, cst.Semicolon, cst.Colon, cst.AssignEqual, cst.Dot, cst.Asynchronous,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
    cst.RightCurlyBrace, cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp,
)


def visitor_hooks(visitor: cst.CSTVisitor) -> Optional[Tuple[Dict[type, Callable], Dict[type, Callable]]]:
    """(node class -> bound ``visit_<Class>``, node class -> bound ``leave_<Class>``) of the hooks ``visitor``
    defines beyond libcst's no-op ones, when :func:`run_visitor` can call them as libcst would; None for a
    transformer (its hooks build the result), for its own ``on_visit``/``on_leave``/attribute hooks, for hooks
    set on the instance, or for a hook on a class ``_children`` never yields (``visit_Comma``)."""
    visitor_class = type(visitor)
    try:
        plan = _HOOK_PLANS[visitor_class]
    except KeyError:
        plan = _HOOK_PLANS[visitor_class] = _hook_plan(visitor_class)
    if plan is None or any(attr.startswith(_HOOK_PREFIXES) for attr in getattr(visitor, "__dict__", ())):
        return None
    enter: Dict[type, Callable] = {}
    leave: Dict[type, Callable] = {}
    for attr, node_type in plan:
        (enter if attr[0] == "v" else leave)[node_type] = getattr(visitor, attr)  # the MRO's winner
    return enter, leave


# visitor class -> its plan; weak, since a visitor class defined inside a function is a new class on every call
_HOOK_PLANS: "weakref.WeakKeyDictionary[type, Optional[Tuple[Tuple[str, type], ...]]]" = weakref.WeakKeyDictionary()


def _hook_plan(visitor_class: type) -> Optional[Tuple[Tuple[str, type], ...]]:
    """(hook name, node class) of each hook the class and its bases define outside libcst, or None when
    :func:`run_visitor` must leave the class to libcst (see :func:`visitor_hooks`)."""
    if not issubclass(visitor_class, cst.CSTVisitor) or visitor_class.on_visit is not cst.CSTVisitor.on_visit \
            or visitor_class.on_leave is not cst.CSTVisitor.on_leave:
        return None
    plan: Dict[str, type] = {}
    for klass in visitor_class.__mro__:
        if klass is object or klass.__module__.startswith("libcst."):
            continue  # libcst's own no-op hook for every class
        for attr in vars(klass):
            if attr.startswith(("on_visit_attribute", "on_leave_attribute")):
                return None
            if not attr.startswith(_HOOK_PREFIXES):
                continue
            node_type = getattr(cst, attr[6:], None)
            if not isinstance(node_type, type) or issubclass(node_type, _TOKEN_CLASSES):
                return None  # ``visit_Call_func``, ``visit_Comma``...
            plan[attr] = node_type
    return tuple(plan.items())


def run_visitor(root: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``root.visit(visitor)`` for a ``CSTVisitor``, without rebuilding the tree: the same hooks on the same nodes
    in the same order (``visit_<Class>`` in pre-order, its False skipping the children; ``leave_<Class>`` after
    them, also for a node whose children were skipped, as libcst does). Hooks are found by the node's exact class,
    as ``CSTVisitor.on_visit`` finds them by its name. Visitors :func:`visitor_hooks` rejects run through libcst."""
    hooks = visitor_hooks(visitor)
    if hooks is None:
        root.visit(visitor)
        return
    enter, leave = hooks
    stack: List[Tuple[cst.CSTNode, bool]] = [(root, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, leaving = pop()
        if leaving:
            leave[type(node)](node)
            continue
        kind = type(node)
        if kind in leave:
            push((node, True))
        hook = enter.get(kind)
        if hook is None or hook(node) is not False:
            for child in reversed(_CHILDREN[kind](node)):
                push((child, False))


@tree_memo
def parents_in(root: cst.CSTNode) -> Dict[cst.CSTNode, cst.CSTNode]:
    """Each node's parent inside ``root`` (a function, a module), remembered per tree (``ms_lint.treememo``)."""
    parents: Dict[cst.CSTNode, cst.CSTNode] = {}
    pending: List[cst.CSTNode] = [root]
    while pending:
        node = pending.pop()
        for child in all_children(node):
            parents[child] = node
            pending.append(child)
    return parents
