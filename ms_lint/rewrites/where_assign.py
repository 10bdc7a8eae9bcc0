"""The select rewrite of a conditional state update: ``if <compile-time test> and <tensor test>: F.assign(p, v)``
-> ``if <compile-time test>: F.assign(p, ops.where(ops.reshape(<tensor test>, ()), v, p))``.

Each ``assign`` then runs on every call, but writes back the value the Parameter had when the test is false, and
the assigns keep their order (a later one reads what an earlier one wrote), so every Parameter holds the same value
after the call. Only branches made of ``assign(target, value)`` calls, nested compile-time ``if`` s holding the
same, and cheap local computations qualify; any other effect (an optimizer call, ``depend``, random draws) keeps
the ``if``. The condition is reshaped to ``()`` (an ``if`` accepts only one-element tensors) so that a ``(1,)``
step cannot broadcast a 0-d Parameter's value to shape ``(1,)``; ``assign`` casts the selected value to the
Parameter's dtype as it cast ``v``.

An ``else`` made of the same kind of statements is rewritten the same way with the select's sides swapped
(``F.assign(p, ops.where(cond, p, v))``), after the ``if`` branch's assigns: when the test is true the ``else``
assigns write back what the ``if`` branch left, when it is false the ``if`` branch's wrote back the old values,
so each Parameter ends as one branch would have left it. ``assign_add(p, v)`` (``AssignAdd``, ``assign_sub``)
becomes ``assign(p, ops.where(cond, p + v, p))``: the same addition in ``p``'s dtype when ``v`` is visibly cast
to it (``cast(x, p.dtype)``, as MindSpore's ASGD writes it) or is a Python number; any other ``v`` gets no fix
(``AssignAdd`` rounds ``v`` to ``p``'s dtype first, ``p + v`` could add in a wider one).
"""
from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from ms_lint.cstutil import short_code
from ms_lint.diagnostics import SAFE, UNSAFE, Fix
from ms_lint.fasttree import parenthesized
from ms_lint.rewrites.where import (
    EFFECT,
    ops_call,
    boolean_condition,
    expression_problems,
    classify_call,
    hazard_message,
    init_value,
    where_call,
)
from ms_lint.rewrites.where_shapes import names_read
from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.walk import iter_nodes

Result = Tuple[Optional[Fix], Optional[str]]


def _and_operands(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and not parenthesized(test):
        return _and_operands(test.left) + _and_operands(test.right)
    return [test]


def _join(operands: List[cst.BaseExpression]) -> cst.BaseExpression:
    out = operands[0]
    for operand in operands[1:]:
        out = cst.BooleanOperation(left=out, operator=cst.And(), right=operand)
    return out


def _assign_call(ctx, values: FunctionValues, stmt: cst.BaseStatement) -> Optional[cst.Call]:
    """The ``assign(target, value)`` call a one-line statement makes, else None."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return None
    call = stmt.body[0].value
    if not isinstance(call, cst.Call):
        return None
    category, name = classify_call(ctx, values, call)
    if category != EFFECT or name.lower() not in UPDATE_OPERATORS or len(call.args) != 2 \
            or any(a.keyword is not None or a.star for a in call.args):
        return None
    return call


# ``assign``-family calls by the operator their update applies (None: a plain write).
UPDATE_OPERATORS = {"assign": None, "assignadd": cst.Add, "assign_add": cst.Add, "assignsub": cst.Subtract,
                    "assign_sub": cst.Subtract}


def _local_assign(stmt: cst.BaseStatement) -> Optional[cst.Assign]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
        small = stmt.body[0]
        if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            return small
    return None


def _is_compile_time_if(values: FunctionValues, stmt: cst.BaseStatement) -> bool:
    return (isinstance(stmt, cst.If) and stmt.orelse is None and isinstance(stmt.body, cst.IndentedBlock)
            and values.kind(stmt.test) is not Kind.TENSOR
            and not any(values.kind(o) is Kind.TENSOR for o in _and_operands(stmt.test)))


def is_assign_branch(ctx, values: FunctionValues, body: cst.BaseSuite) -> bool:
    """The block holds at least one assign and nothing but assigns, compile-time ``if`` s and local bindings."""
    if not isinstance(body, cst.IndentedBlock):
        return False
    found = False
    for stmt in body.body:
        if _assign_call(ctx, values, stmt) is not None:
            found = True
        elif _is_compile_time_if(values, stmt):
            if not is_assign_branch(ctx, values, stmt.body):  # type: ignore[union-attr]
                return False
            found = True
        elif _local_assign(stmt) is None:
            return False
    return found


class _Builder:
    def __init__(self, ctx, values: FunctionValues, cond: cst.BaseExpression, imports: List):
        self.ctx = ctx
        self.values = values
        self.cond = cond
        self.imports = imports
        self.negated = False  # building the ``else`` branch: the select keeps the old value when ``cond`` holds
        self.targets: Set[str] = set()
        self.locals: Set[str] = set()
        self.hazards: List[str] = []
        self.why: Optional[str] = None
        self.unknown = False
        self.local: Optional[str] = None  # the first local Tensor (not a Parameter) an assign writes

    def block(self, body: cst.IndentedBlock) -> cst.IndentedBlock:
        new = []
        for stmt in body.body:
            call = _assign_call(self.ctx, self.values, stmt)
            if call is not None:
                new.append(self._assign(stmt, call))  # type: ignore[arg-type]
            elif isinstance(stmt, cst.If):
                new.append(stmt.with_changes(body=self.block(stmt.body)))  # type: ignore[arg-type]
            else:
                small = _local_assign(stmt)
                self._check(small.value)  # type: ignore[union-attr]
                self.locals.add(small.targets[0].target.value)  # type: ignore[union-attr]
                new.append(stmt)
        return body.with_changes(body=new)

    def _check(self, expr: cst.BaseExpression) -> None:
        blocker, hazard = expression_problems(self.ctx, self.values, expr)
        if blocker is not None and self.why is None:
            self.why = blocker
        if hazard is not None:
            self.hazards.append(hazard)

    def _assign(self, stmt: cst.SimpleStatementLine, call: cst.Call) -> cst.SimpleStatementLine:
        target, value = call.args[0].value, call.args[1].value
        name = self._parameter(target)
        if name is None and isinstance(target, cst.Name) and self._bound_outside_loops(target.value):
            name = target.value
            self.local = self.local or name
        if name is None:
            self.unknown = True  # not this shape: the rule's side-effect refusal speaks
            return stmt
        self.targets.add(name)
        self._check(value)
        _category, called = classify_call(self.ctx, self.values, call)
        operator = UPDATE_OPERATORS[called.lower()]
        func = call.func
        if operator is not None:  # assign_add(p, v) -> assign(p, where(cond, p + v, p))
            if not (_cast_to_dtype_of(self.ctx, self.values, value, target) or _number_literal(value)):
                self.why = self.why or (
                    f"cannot see that the value `{called}` adds to `{short_code(target, 30)}` has its dtype "
                    "(the update rounds it to that dtype first; `p + v` could add in a wider dtype, and a select "
                    "between two dtypes may not compile)")
                return stmt
            value = cst.BinaryOperation(left=target, operator=operator(), right=_parenthesized(value))
            assign = self.ctx.spell("mindspore.ops.assign")
            if assign is None:
                self.why = self.why or "cannot spell ops.assign in this module"
                return stmt
            func = cst.parse_expression(assign[0])
            self.imports.extend(assign[1])
        sides = (target, value) if self.negated else (value, target)
        built = where_call(self.ctx, self.cond, sides[0], sides[1], self.imports)
        if built is None:
            self.why = self.why or "cannot spell ops.where in this module"
            return stmt
        selected, needed = built
        self.imports[:] = list(needed)
        args = [call.args[0], call.args[1].with_changes(value=selected)]
        return stmt.with_changes(body=[stmt.body[0].with_changes(value=call.with_changes(func=func, args=args))])

    def _parameter(self, target: cst.BaseExpression) -> Optional[str]:
        """The Parameter an assign writes: an argument the function never rebinds, or ``self.<attr>``."""
        if isinstance(target, cst.Name) and target.value in self.values.parameters \
                and target.value not in _rebound(self.values.func):
            return target.value
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value == "self" and self.values.kind(target) is Kind.TENSOR:
            return short_code(target)
        if isinstance(target, cst.Name) and target.value not in self.values.parameters:
            return self._loop_parameter(target.value)
        return None

    def _loop_parameter(self, name: str) -> Optional[str]:
        """``eta`` in ``for ..., eta, ... in zip(..., self.eta, ...)`` with ``self.eta`` a ``ParameterTuple`` (or a
        ``.clone(...)`` of one) set once in ``__init__``, and ``eta`` bound by nothing else."""
        loops = _for_bindings(self.values.func, name)
        if len(loops) != 1 or self._bound_outside_loops(name):
            return None
        source = _zip_source(loops[0], name)
        if not (isinstance(source, cst.Attribute) and isinstance(source.value, cst.Name)
                and source.value.value == "self"):
            return None
        value = init_value(self.ctx, self.values.owner, source.attr.value)
        if not isinstance(value, cst.Call):
            return None
        func = value.func
        made = func.attr.value if isinstance(func, cst.Attribute) else (func.value if isinstance(func, cst.Name)
                                                                        else "")
        return name if made in ("ParameterTuple", "clone") else None

    def _bound_outside_loops(self, name: str) -> bool:
        for node in _walk(self.values.func.body):
            if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and any(
                    isinstance(n, cst.Name) and n.value == name for n in _walk(node.target)):
                return True
        return False


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.UnaryOperation,
                         cst.IfExp)) and not getattr(expr, "lpar", None):
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def _number_literal(expr: cst.BaseExpression) -> bool:
    """``1``, ``-0.5``: a Python number takes the dtype of the Parameter it is added to."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


def _cast_to_dtype_of(ctx, values: FunctionValues, value: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """``cast(x, <target>.dtype)`` in any spelling (``self.cast``, ``P.Cast()``, ``ops.cast``): ``value`` has the
    Parameter's dtype, so ``target + value`` adds in that dtype as ``AssignAdd`` does."""
    if not (isinstance(value, cst.Call) and len(value.args) == 2):
        return False
    _category, name = classify_call(ctx, values, value)
    dtype = value.args[1].value
    return (name.lower() == "cast" and isinstance(dtype, cst.Attribute) and dtype.attr.value == "dtype"
            and short_code(dtype.value, 200) == short_code(target, 200))


def _alias_of_written(values: FunctionValues, test: cst.BaseExpression, targets: Set[str]
                      ) -> Optional[Tuple[str, str]]:
    """(name, target) when the test reads a local bound somewhere in the function to a Parameter the branch writes
    (``count = self.count; if count < 3: assign(self.count, ...)``)."""
    for name in names_read(test):
        for node in _walk(values.func.body):
            if isinstance(node, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets):
                if short_code(node.value, 200) in targets:
                    return name, short_code(node.value, 200)
    return None


def _rebound(func: cst.FunctionDef) -> Set[str]:
    """Every name an assignment, augmented assignment or ``for`` binds in the function (tuple targets too)."""
    out: Set[str] = set()
    for node in _walk(func.body):
        target = None
        if isinstance(node, cst.AssignTarget):
            target = node.target
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)):
            target = node.target
        if target is not None:
            out.update(n.value for n in _walk(target) if isinstance(n, cst.Name))
    return out


def _for_bindings(func: cst.FunctionDef, name: str) -> List[cst.For]:
    return [node for node in _walk(func.body) if isinstance(node, cst.For)
            and any(isinstance(n, cst.Name) and n.value == name for n in _walk(node.target))]


def _zip_source(loop: cst.For, name: str) -> Optional[cst.BaseExpression]:
    """What ``name`` iterates in ``for (..., name, ...) in [enumerate(]zip(a, b, ...)[)]``: the zip argument at
    its position (or the iterable of ``for name in xs``)."""
    target, iterable = loop.target, loop.iter
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "enumerate" \
            and len(iterable.args) == 1 and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        target, iterable = target.elements[1].value, iterable.args[0].value
    if isinstance(target, cst.Name):
        return iterable if target.value == name else None
    if not (isinstance(target, cst.Tuple) and isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name)
            and iterable.func.value == "zip" and len(iterable.args) == len(target.elements)
            and not any(a.star or a.keyword for a in iterable.args)):
        return None
    for element, arg in zip(target.elements, iterable.args):
        if isinstance(element.value, cst.Name) and element.value.value == name:
            return arg.value
    return None


def _walk(node: cst.CSTNode):
    """Every code node under ``node`` (``node`` included), in visit order (the shared iterative walk)."""
    return iter_nodes(node, cst.CSTNode)


def assign_fix(ctx, values: FunctionValues, node: cst.If) -> Optional[Result]:
    """The fix (or why none) for an ``if`` whose branch only assigns Parameters; None when it is not that shape."""
    otherwise = node.orelse
    if isinstance(otherwise, cst.If) or not is_assign_branch(ctx, values, node.body):
        return None
    if otherwise is not None and not is_assign_branch(ctx, values, otherwise.body):
        return None
    operands = _and_operands(node.test)
    split = 0
    while split < len(operands) and values.kind(operands[split]) is not Kind.TENSOR:
        split += 1
    constant, tensor = operands[:split], operands[split:]
    if not tensor or any(values.kind(o) is not Kind.TENSOR for o in tensor):
        return None, "a compile-time test follows the Tensor test (cannot keep it as a Python `if` in order)"
    cond, imports, why = boolean_condition(ctx, values, _join(tensor))
    if cond is None:
        return None, why
    needed = list(imports)
    scalar = ops_call(ctx, "reshape", [cond], needed)
    if scalar is None:
        return None, "cannot spell ops.reshape in this module"
    shape = cst.Tuple(elements=[], lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    scalar = scalar.with_changes(args=[scalar.args[0].with_changes(
        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(value=shape)])
    builder = _Builder(ctx, values, scalar, needed)
    body = builder.block(node.body)  # type: ignore[arg-type]
    if otherwise is not None:
        if constant:
            return None, "a compile-time test joined to the Tensor test of an `if` with an `else`"
        builder.negated = True
        else_body = builder.block(otherwise.body)  # type: ignore[arg-type]
        body = body.with_changes(body=list(body.body) + list(else_body.body))
    if builder.unknown:
        return None
    if builder.why is not None:
        return None, builder.why
    written = builder.targets | builder.locals
    read = names_read(_join(tensor)) | {short_code(a) for a in _walk(_join(tensor)) if isinstance(a, cst.Attribute)}
    if read & written:
        return None, "the Tensor test reads a name the branch assigns"
    alias = _alias_of_written(values, _join(tensor), builder.targets)
    if alias is not None:  # the test is evaluated again before each assign: it must not see an earlier one's write
        return None, f"the Tensor test reads `{alias[0]}`, bound to `{alias[1]}`, which the branch assigns"
    if builder.locals & _read_outside(values.func, node):
        return None, "a name the branch binds is read after the `if` (it would be bound on every call)"
    reasons = [hazard_message(builder.hazards[0])] if builder.hazards else []
    if builder.local is not None:
        reasons.append(f"`{builder.local}` is a local Tensor, not a Parameter: `assign` on it updated it in place "
                       "and the select matched on MindSpore 2.10 CPU, but that use of `assign` is not documented")
    unsafe = "; ".join(reasons) or None
    summary = ("keep the compile-time test as a Python `if` and write each Parameter through "
               "ops.where(cond, new, old) (it keeps its value when the condition is false)")
    if not constant:
        summary = "write each Parameter through ops.where(cond, new, old) (it keeps its value when the condition " \
                  "is false)"
    if unsafe is not None:
        summary += f" (unsafe: {unsafe})"
    if constant:
        replacement = node.with_changes(test=_join(constant), body=body)
        edits = ((node, replacement),)
    else:
        statements = list(body.body)
        header = node.body.header.comment  # type: ignore[union-attr]
        kept = [cst.EmptyLine(comment=header)] if header is not None else []
        leading = list(node.leading_lines) + kept + list(statements[0].leading_lines)
        statements[0] = statements[0].with_changes(leading_lines=leading)
        edits = ((node, statements),)
    fix = Fix(UNSAFE if unsafe else SAFE, summary, edits=edits, imports=tuple(dict.fromkeys(needed)))
    return fix, unsafe


def _read_outside(func: cst.FunctionDef, node: cst.If) -> Set[str]:
    stripped = func.deep_replace(node, cst.SimpleStatementLine(body=[cst.Pass()]))
    return names_read(stripped)  # type: ignore[arg-type]
