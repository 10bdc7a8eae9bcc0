"""``c = big - 1000 if ops.isinf(h).any() else big``: a conditional expression between Python numbers on a Tensor
test, as a select over Tensor constants of the tested tensor's dtype.

Graph mode gives the ``if`` form a Python number; the select gives a 0-d Tensor. Used as an operand of Tensor ops
on ``h`` (``ops.clamp(h, -c, c)``) the two compute the same values when the constants have ``h``'s dtype (a Python
number takes the dtype of the tensor it meets, a float32 Tensor would promote a float16 ``h``). Anywhere a Python
number is needed (``range(c)``, a shape, a ``return``) they differ, which this module cannot see: the fix is
always unsafe. Only tests on a floating property of one tensor (``isinf``/``isnan``/``isfinite`` of ``h``, then
``.any()``/``.all()``) name the dtype; other tests (``step < 10`` on an int step) would truncate the constants.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from ms_lint.cstutil import call_name_args, short_code
from ms_lint.analysis.values import FunctionValues, Kind

FLOAT_TESTS = {"isinf", "isnan", "isfinite"}


def python_number(ctx, values: FunctionValues, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """An int/float literal, or arithmetic of those and compile-time names (``FP16_MAX``, ``self.big``) that are
    numbers, not sequences (by the shape model's reading of module constants and ``__init__`` defaults)."""
    from ms_lint.rewrites.where_shapes import ShapeLeaves

    if depth > 6 or values.kind(expr) is not Kind.CONST:
        return False
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return False
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return not ShapeLeaves(ctx, values)._may_be_sequence(expr)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return python_number(ctx, values, expr.expression, depth + 1)
    if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power)):
        return python_number(ctx, values, expr.left, depth + 1) and python_number(ctx, values, expr.right, depth + 1)
    return False


def tested_tensor(ctx, values: FunctionValues, test: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``h`` in ``ops.isinf(h).any()``, ``ops.isnan(h).any() or ops.isinf(h).any()``, ``not ops.isfinite(h).all()``;
    None when the test is anything else or names two tensors."""
    from ms_lint.rewrites.where import call_target

    found: List[cst.BaseExpression] = []

    def walk(expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return walk(expr.expression)
        if isinstance(expr, cst.BooleanOperation):
            return walk(expr.left) and walk(expr.right)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and not expr.args \
                and expr.func.attr.value in ("any", "all"):
            return walk(expr.func.value)
        if isinstance(expr, cst.Call):
            kind, name = call_target(ctx, values, expr)
            args = call_name_args(expr)
            if kind == "function" and name in FLOAT_TESTS and len(args) == 1 and len(expr.args) == 1:
                found.append(args[0].value)
                return isinstance(args[0].value, (cst.Name, cst.Attribute))
            if kind == "method" and name in FLOAT_TESTS and not expr.args and isinstance(expr.func, cst.Attribute):
                found.append(expr.func.value)
                return isinstance(expr.func.value, (cst.Name, cst.Attribute))
        return False

    if not walk(test) or not found:
        return None
    texts = {short_code(f, 200) for f in found}
    if len(texts) != 1 or values.kind(found[0]) is not Kind.TENSOR:
        return None
    return found[0]


def tensor_constants(ctx, values: FunctionValues, test: cst.BaseExpression, a: cst.BaseExpression,
                     b: cst.BaseExpression) -> Tuple[Optional[Tuple[cst.BaseExpression, cst.BaseExpression]], tuple,
                                                     Optional[str]]:
    """((Tensor(a, h.dtype), Tensor(b, h.dtype)), imports, None), or (None, (), why not)."""
    if not (python_number(ctx, values, a) and python_number(ctx, values, b)):
        return None, (), None
    tensor = tested_tensor(ctx, values, test)
    if tensor is None:
        return None, (), ("both sides are Python values (numbers) and the test names no float tensor whose dtype the "
                          "constants could take (an `if` keeps a Python number, a select makes a Tensor)")
    spelled = ctx.spell("mindspore.Tensor")
    if spelled is None:
        return None, (), "cannot spell mindspore.Tensor in this module"
    text, imports = spelled
    dtype = cst.Attribute(value=tensor.with_changes(lpar=[], rpar=[]) if hasattr(tensor, "lpar") else tensor,
                          attr=cst.Name("dtype"))

    def constant(value: cst.BaseExpression) -> cst.Call:
        return cst.Call(func=cst.parse_expression(text), args=[
            cst.Arg(value=value.with_changes(lpar=[], rpar=[]) if getattr(value, "lpar", None) else value,
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(value=dtype)])

    return (constant(a), constant(b)), tuple(imports), None


def number_reason(ctx, values: FunctionValues, test: cst.BaseExpression) -> str:
    tensor = tested_tensor(ctx, values, test)
    name = short_code(tensor, 30) if tensor is not None else "the tensor"
    return (f"the value becomes a 0-d Tensor of `{name}`'s dtype where the `if` gave a Python number: the same "
            "as an operand of Tensor ops, not where a Python number is needed")
