"""The ``ops.addn`` rewrite of a sum across a tensor sequence (MSL102): one addition of the mapped terms.

    square_sum = self._zero                        square_sum = self._zero
    for grad in grads:                       ->    square_sum = self._add(square_sum, ops.addn(
        square_sum = self._add(square_sum,             ops.HyperMap()(ops.partial(_map_grad, ...), grads)))
                               self._reduce_sum(self._square_all(grad)))

The accumulating statement stays as written (``acc = acc + t``, ``acc += t``, ``acc = add(acc, t)`` with
``ops.add``/``P.Add()``/``F.tensor_add``), its term replaced by ``ops.addn`` over the mapped terms; the terms are
computed by :func:`ms_lint.rewrites.hypermap.plan_map`.

Always *unsafe*, for three reasons the rule page gives with measurements: the grouping changes
(``acc + (t1 + t2 + ...)`` instead of ``((acc + t1) + t2) + ...``, equal bit for bit only when ``acc`` starts at
zero and AddN adds left to right, which we measured on CPU but not on GPU/Ascend); ``AddN`` needs one shape and
dtype for all terms where ``+`` broadcasts and promotes (float16 and float32 gradients mixed: a compile error);
and ``ops.addn`` of an empty sequence fails where the loop left ``acc`` unchanged.
"""
from __future__ import annotations

from typing import Callable, Optional, Tuple

import libcst as cst

from ms_lint.rewrites.where import call_target

ADD_FUNCTIONS = {"add", "tensor_add"}
ADD_PRIMITIVES = {"Add", "TensorAdd"}
MESSAGE = ("sum the mapped terms with one ops.addn (unsafe: the terms are added in another grouping and must share "
           "one shape and dtype; the last bits may differ)")


def accumulation(ctx, values, small: cst.BaseSmallStatement
                 ) -> Optional[Tuple[str, cst.BaseExpression, Callable[[cst.BaseExpression], cst.BaseSmallStatement]]]:
    """(accumulator, term, rebuild) of ``acc += t`` / ``acc = acc + t`` / ``acc = t + acc`` / ``acc = add(acc, t)``;
    ``rebuild(new_term)`` gives the statement with ``t`` replaced."""
    if isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign) \
            and isinstance(small.target, cst.Name):
        return small.target.value, small.value, lambda new: small.with_changes(value=new)
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)):
        return None
    name = small.targets[0].target.value
    value = small.value
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        if _is_name(value.left, name):
            return name, value.right, lambda new: small.with_changes(value=value.with_changes(right=new))
        if _is_name(value.right, name):
            return name, value.left, lambda new: small.with_changes(value=value.with_changes(left=new))
        return None
    if isinstance(value, cst.Call) and len(value.args) == 2 and all(
            a.keyword is None and not a.star for a in value.args) and _is_add(ctx, values, value):
        first, second = value.args
        for acc_arg, term_arg in ((first, second), (second, first)):
            if _is_name(acc_arg.value, name):
                def rebuild(new, term_arg=term_arg):
                    args = [a.with_changes(value=new) if a is term_arg else a for a in value.args]
                    return small.with_changes(value=value.with_changes(args=args))
                return name, term_arg.value, rebuild
    return None


def _is_add(ctx, values, call: cst.Call) -> bool:
    kind, name = call_target(ctx, values, call)
    return (kind == "function" and name in ADD_FUNCTIONS) or (kind == "primitive" and name in ADD_PRIMITIVES)


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name
