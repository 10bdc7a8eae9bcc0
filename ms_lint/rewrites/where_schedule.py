"""Where a select's inf/NaN in the untaken side is harmless: float math in a learning-rate schedule.

A select evaluates both sides. Its forward value is exact whatever the untaken side holds (``Select`` picks
elementwise; an inf or NaN there never reaches the result), so the hazard of ``x / y`` under ``if y != 0`` is the
*gradient*: the backward pass multiplies the zero gradient of the untaken side by its local derivative, and
``0 * inf`` is NaN. That needs something to differentiate the schedule.

``construct`` of an ``nn.LearningRateSchedule`` subclass is called by the optimizer (``Optimizer.get_lr`` ->
``self.learning_rate(self.global_step)``), after and outside the function the gradients are taken of; its one
input is the integer step counter. When ``construct`` takes that one input only, every base of the class is the
schedule class or a class of this module, and none of them creates a ``Parameter``, nothing in it is a
differentiation target: a NaN in the backward pass of the select could only reach the step argument, and nobody
differentiates a learning rate with respect to the step (the assumption, stated on the rule page). Only float math qualifies: integer division or modulo by zero is not a NaN but an error or garbage, so each
hazard must have a visibly floating-point operand (a ``Tensor(..., mstype.float32)`` attribute, a float literal,
a cast to a float dtype, or arithmetic with one of those).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from ms_lint.cstutil import call_name_args, suite_statements
from ms_lint.analysis.values import FunctionValues
from ms_lint.walk import iter_nodes

FLOAT_DTYPES = ("float16", "float32", "float64", "bfloat16", "float_", "double", "half")
MAX_DEPTH = 12


def gradient_free_schedule(ctx, values: FunctionValues) -> bool:
    """``construct`` of a learning-rate schedule whose class chain creates no ``Parameter``."""
    from ms_lint.rewrites.where import is_lr_schedule

    owner = values.owner
    func = values.func
    if owner is None or func.name.value != "construct":
        return False
    params = list(func.params.posonly_params) + list(func.params.params)
    if len(params) != 2 or func.params.kwonly_params or func.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) \
            or func.params.star_kwarg is not None:
        return False  # ``construct(self, global_step)`` only: one input, the step the optimizer passes
    chain = list(ctx.attributes.class_chain(owner))
    bases = [b.value for cls in chain for b in ctx.scope.classes[cls].node.bases]
    if not any(is_lr_schedule(ctx.imports.qualify(b)) for b in bases):
        return False
    for base in bases:  # every base is the schedule class or a class of this module that we scan below
        if not (is_lr_schedule(ctx.imports.qualify(base))
                or (isinstance(base, cst.Name) and base.value in chain)):
            return False
    return not any((ctx.imports.qualify(call.func) or "").rsplit(".", 1)[-1] == "Parameter"
                   for cls in chain for call in iter_nodes(ctx.scope.classes[cls].node, cst.Call))


class FloatProof:
    """Is an expression of one graph function visibly a floating-point Tensor or number?"""

    def __init__(self, ctx, values: FunctionValues):
        self.ctx = ctx
        self.values = values

    def is_float(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if depth > MAX_DEPTH:
            return False
        if isinstance(expr, cst.Float):
            return True
        if isinstance(expr, cst.UnaryOperation):
            return self.is_float(expr.expression, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power,
                                          cst.FloorDivide, cst.Modulo)):
                return self.is_float(expr.left, depth + 1) or self.is_float(expr.right, depth + 1)
            return False
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            from ms_lint.analysis.shapes import init_value

            value = init_value(self.ctx, self.values.owner, expr.attr.value)
            return value is not None and self._float_factory(value)
        if isinstance(expr, cst.Name):
            return self._name(expr.value, depth)
        if isinstance(expr, cst.Call):
            return self._call(expr, depth)
        return False

    def _float_dtype(self, expr: cst.BaseExpression) -> bool:
        qualified = self.ctx.imports.qualify(expr) or ""
        return qualified.startswith("mindspore.") and qualified.rsplit(".", 1)[-1] in FLOAT_DTYPES

    def _float_factory(self, value: cst.BaseExpression) -> bool:
        """``Tensor(v, mstype.float32)`` / ``Tensor(1.0)`` / ``Tensor(v, dtype=mstype.float32)``."""
        if not isinstance(value, cst.Call):
            return False
        qualified = self.ctx.imports.qualify(value.func) or ""
        if qualified.rsplit(".", 1)[-1] not in ("Tensor", "tensor") or not qualified.startswith("mindspore"):
            return False
        args = call_name_args(value)
        dtype = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "dtype"),
                     args[1].value if len(args) > 1 else None)
        if dtype is not None:
            return self._float_dtype(dtype)
        return bool(args) and isinstance(args[0].value, cst.Float)

    def _call(self, call: cst.Call, depth: int) -> bool:
        """A cast to a float dtype, or an elementwise op (Primitive, ``ops`` function) with a float input."""
        from ms_lint.rewrites.where import call_target
        from ms_lint.rewrites.where_shapes import ELEMENTWISE, PRIMITIVE_ELEMENTWISE

        kind, name = call_target(self.ctx, self.values, call)
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if name in ("cast", "Cast") and len(args) == 2:
            return self._float_dtype(args[1])
        if (kind == "primitive" and name in PRIMITIVE_ELEMENTWISE) or (
                kind == "function" and name in ELEMENTWISE):
            return any(self.is_float(a, depth + 1) for a in args)
        return False

    def _name(self, name: str, depth: int) -> bool:
        """A local whose every plain binding is float. A parameter qualifies only when the function's first
        statement rebinds it (``global_step = self.cast(global_step, mstype.float32)``): no read sees the
        argument itself after that."""
        from ms_lint.rewrites.where_shapes import plain_bindings

        bound = plain_bindings(self.values.func, name)
        if not bound:
            return False
        if name in self.values.parameters and not self._first_statement_binds(name):
            return False
        return all(self.is_float(value, depth + 1) for value in bound)

    def _first_statement_binds(self, name: str) -> bool:
        body = [s for s in suite_statements(self.values.func.body)
                if not _is_docstring(s)]
        if not body or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
            return False
        small = body[0].body[0]
        return (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString))


def harmless_hazard(ctx, values: FunctionValues, node: cst.CSTNode, gradient_free: Optional[bool]) -> bool:
    """A hazard at ``node`` (a ``/``, ``**`` or hazard call) that a select cannot turn into a wrong result here."""
    if not gradient_free:
        return False
    proof = FloatProof(ctx, values)
    if isinstance(node, cst.BinaryOperation):
        return proof.is_float(node.left) or proof.is_float(node.right)
    if isinstance(node, cst.Call):
        return any(proof.is_float(a.value) for a in node.args if not a.star)
    return False

