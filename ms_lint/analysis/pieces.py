"""Expressions whose value is the pieces of one Tensor along an axis: ``ops.split(x, 2)``, ``ops.chunk(x, 4)``,
``ops.unstack(x)``, ``P.Split(axis, n)(x)`` or ``self.split(x)`` with ``self.split = P.Split(...)`` set in
``__init__`` (through ``.shard(...)`` / ``.add_prim_attr(...)``, as parallel code writes it). A loop over them is
unrolled once per piece (MSL101): the count is the split's, however it is given.

Also a local list built by a comprehension over a Tensor (``lengths = [row.sum() for row in ids]``: one item per
row, ``rows_through``): a loop over it is unrolled once per row again."""
from __future__ import annotations

from typing import Callable, Collection, Dict, List, Optional, Tuple

import libcst as cst

from ms_lint.analysis.shapes import init_value, is_self_attr, parents_in
from ms_lint.analysis.values import MAPPERS
from ms_lint.cstutil import call_name_args, code_of
from ms_lint.walk import find

PIECE_FUNCTIONS = {"mindspore.ops.split", "mindspore.ops.chunk", "mindspore.ops.tensor_split",
                   "mindspore.ops.unstack", "mindspore.ops.unbind", "mindspore.mint.split", "mindspore.mint.chunk",
                   "mindspore.mint.unbind"}
PIECE_PRIMITIVES = {"mindspore.ops.Split", "mindspore.ops.Unstack", "mindspore.ops.SplitV"}
# methods a primitive's construction is chained with in ``__init__``; they return the primitive itself
_PRIMITIVE_SETTERS = {"shard", "add_prim_attr", "set_device", "recompute", "set_prim_instance_name"}


def pieces_of(context, owner: Optional[str], expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The Tensor ``expr`` splits into pieces, or None."""
    if not isinstance(expr, cst.Call):
        return None
    args = call_name_args(expr)
    if not args:
        return None
    if context.imports.qualify(expr.func) in PIECE_FUNCTIONS:
        return args[0].value
    if len(args) == 1 and _primitive(context, owner, expr.func) in PIECE_PRIMITIVES:
        return args[0].value
    return None


def _primitive(context, owner: Optional[str], func: cst.BaseExpression) -> Optional[str]:
    if isinstance(func, cst.Attribute) and is_self_attr(func):
        func = init_value(context, owner, func.attr.value)
    elif not isinstance(func, cst.Call):
        return None
    while (isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute)
           and func.func.attr.value in _PRIMITIVE_SETTERS and isinstance(func.func.value, cst.Call)):
        func = func.func.value  # ``P.Split(...).shard(...)``: the primitive ``P.Split(...)``
    return context.imports.qualify(func.func) if isinstance(func, cst.Call) else None


def pieces_through(context, owner: Optional[str], expr: cst.BaseExpression,
                   bindings: Dict[str, List[Tuple[Optional[cst.BaseExpression], Optional[int]]]],
                   parameters: Collection[str], depth: int = 0) -> Optional[cst.BaseExpression]:
    """The Tensor whose pieces ``expr`` holds: ``pieces_of``, or a local name every binding of which in the
    function is such an expression (``log_split = ops.split(x, 3)``), or a ``Map``/``HyperMap`` applied over them
    (``self.map(self.softmax, log_split)``: one result per piece). ``bindings``: the function's plain bindings
    (``ShapeResolver.bindings``); a parameter is never followed (its value on entry is the caller's)."""
    if pieces_of(context, owner, expr) is not None:
        return even_pieces_of(context, owner, expr, bindings)  # type: ignore[arg-type]
    if depth > 3:
        return None
    if type(expr) is cst.Name:
        bound = bindings.get(expr.value)
        if expr.value in parameters or not bound or any(value is None or index is not None for value, index in bound):
            return None
        sources = [pieces_through(context, owner, value, bindings, parameters, depth + 1) for value, _ in bound]
        return sources[0] if all(source is not None for source in sources) else None
    if type(expr) is cst.Call and _is_mapper(context, owner, expr.func):
        for arg in call_name_args(expr)[1:]:
            found = pieces_through(context, owner, arg.value, bindings, parameters, depth + 1)
            if found is not None:
                return found
    return None


_SECTIONS_KEYWORDS = {"split_size_or_sections", "indices_or_sections", "sections", "split_size"}
# functions whose second argument may be a list of sizes or indices, not only a count
_SIZED_SPLITS = {"mindspore.ops.split", "mindspore.ops.tensor_split", "mindspore.mint.split"}


def even_pieces_of(context, owner: Optional[str], expr: cst.BaseExpression, bindings
                   ) -> Optional[cst.BaseExpression]:
    """``pieces_of``, unless the split may give pieces of different shapes (``_uneven``)."""
    found = pieces_of(context, owner, expr)
    return None if found is None or _uneven(context, owner, expr, bindings) else found  # type: ignore[arg-type]


def _uneven(context, owner: Optional[str], call: cst.Call, bindings) -> bool:
    """May the split give pieces of different shapes (one per feature level), which no map over the pieces could
    take? ``P.SplitV(size_splits=...)`` always; ``ops.split``/``mint.split``/``tensor_split`` unless their sizes are
    one int: a literal, or a name or ``self.<attr>`` bound only to one (``ops.split(x, 0, self.num_splits)``).
    ``ops.chunk``, ``unstack``, ``unbind`` and ``P.Split(axis, n)`` give pieces of one shape."""
    if len(call.args) == 1 and _primitive(context, owner, call.func) == "mindspore.ops.SplitV":
        return True
    if context.imports.qualify(call.func) not in _SIZED_SPLITS:
        return False
    args = call.args
    sections = next((arg.value for arg in args if arg.keyword is not None and arg.keyword.value in _SECTIONS_KEYWORDS),
                    args[1].value if len(args) > 1 and args[1].keyword is None else None)
    if sections is None:
        return True
    if type(sections) is cst.Name:
        values = [value for value, index in bindings.get(sections.value, ()) if index is None]
        return not values or len(values) != len(bindings.get(sections.value, ())) or not all(
            type(value) is cst.Integer for value in values)  # (a parameter has no binding: unknown)
    if isinstance(sections, cst.Attribute) and is_self_attr(sections):
        return type(init_value(context, owner, sections.attr.value)) is not cst.Integer
    return type(sections) is not cst.Integer


def _is_mapper(context, owner: Optional[str], func: cst.BaseExpression) -> bool:
    """``ops.Map()`` / ``ops.HyperMap()`` called in place, or ``self.map`` bound to one in ``__init__``."""
    if isinstance(func, cst.Attribute) and is_self_attr(func):
        func = init_value(context, owner, func.attr.value)
    return isinstance(func, cst.Call) and context.imports.qualify(func.func) in MAPPERS


# Builtins that read a list without changing its length (``enumerate(rows)``, ``len(rows)``).
_READERS = {"enumerate", "zip", "len"}
_TARGET_HOLDERS = (cst.Element, cst.StarredElement, cst.Tuple, cst.List)


def rows_through(expr: cst.BaseExpression, function: cst.FunctionDef,
                 bindings: Dict[str, List[Tuple[Optional[cst.BaseExpression], Optional[int]]]],
                 parameters: Collection[str], is_tensor: Callable[[cst.BaseExpression], bool]
                 ) -> Optional[cst.BaseExpression]:
    """The Tensor a local list holds one item per row of, or None: ``expr`` is a name every binding of which in
    ``function`` is a list comprehension with one ``for`` clause and no condition, over an expression
    ``is_tensor`` accepts (the evidence MSL101 asks before it reports the comprehension itself); and the function
    only iterates the name, indexes it or hands it to ``enumerate``/``zip``/``len``, so its length stays the
    Tensor's first axis (an ``append``, a slice assignment, a call that is handed it, a nested function that reads
    it, a second target of its binding: not followed). ChatGLM's
    ``context_lengths = [seq.asnumpy().tolist().index(bos) for seq in input_ids]`` then
    ``for i, n in enumerate(context_lengths)``: the second loop is unrolled per row as the first."""
    if type(expr) is not cst.Name or expr.value in parameters:
        return None
    bound = bindings.get(expr.value)
    if not bound or any(index is not None or type(value) is not cst.ListComp for value, index in bound):
        return None
    sources = []
    for value, _index in bound:
        clause = value.for_in  # type: ignore[union-attr]
        if clause.inner_for_in is not None or clause.ifs or clause.asynchronous is not None \
                or not is_tensor(clause.iter):
            return None
        sources.append(clause.iter)
    if any(code_of(source) != code_of(sources[0]) for source in sources[1:]):
        return None
    return sources[0] if _only_read(expr.value, function) else None


def _only_read(name: str, function: cst.FunctionDef) -> bool:
    """Every use of ``name`` in ``function`` binds it (a plain ``name = ...``), iterates it, indexes it without
    writing, or hands it to ``enumerate``/``zip``/``len``; none inside a nested function or lambda."""
    parents = parents_in(function)
    for node in find(function.body, cst.Name):
        if node.value != name:
            continue
        parent = parents.get(node)
        if (isinstance(parent, cst.Attribute) and parent.attr is node) or (
                isinstance(parent, cst.Arg) and parent.keyword is node):
            continue  # ``x.rows``, ``f(rows=...)``: another thing of that name
        ancestor = parent
        while ancestor is not None and ancestor is not function:
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            ancestor = parents.get(ancestor)
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            if len(parents[parent].targets) > 1:  # type: ignore[attr-defined]
                return False  # ``self.cache = rows = [...]``: the other name may grow it
            continue
        if isinstance(parent, cst.AnnAssign) and parent.target is node and parent.value is not None:
            continue
        if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
            continue
        if isinstance(parent, cst.Arg) and parent.value is node and not parent.star and parent.keyword is None:
            call = parents.get(parent)
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in _READERS:
                continue
            return False
        if isinstance(parent, cst.Subscript) and parent.value is node and not _written(parent, parents):
            continue
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in ("index", "count"):
            continue  # ``rows.index(v)``: a read
        return False
    return True


def _written(node: cst.CSTNode, parents) -> bool:
    """Is ``node`` (a subscript) an assignment, ``del`` or loop target, alone or inside a tuple/list target?"""
    child, parent = node, parents.get(node)
    while isinstance(parent, _TARGET_HOLDERS):
        child, parent = parent, parents.get(parent)
    return (isinstance(parent, (cst.AssignTarget, cst.Del)) or (isinstance(parent, cst.AugAssign)
            and parent.target is child) or (isinstance(parent, cst.AnnAssign) and parent.target is child)
            or (isinstance(parent, (cst.For, cst.CompFor)) and parent.target is child)
            or (isinstance(parent, cst.AsName) and parent.name is child))
