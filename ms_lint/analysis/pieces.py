"""Expressions whose value is the pieces of one Tensor along an axis: ``ops.split(x, 2)``, ``ops.chunk(x, 4)``,
``ops.unstack(x)``, ``P.Split(axis, n)(x)`` or ``self.split(x)`` with ``self.split = P.Split(...)`` set in
``__init__`` (through ``.shard(...)`` / ``.add_prim_attr(...)``, as parallel code writes it). A loop over them is
unrolled once per piece (MSL101): the count is the split's, however it is given."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from ms_lint.analysis.shapes import init_value, is_self_attr
from ms_lint.cstutil import call_name_args

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
