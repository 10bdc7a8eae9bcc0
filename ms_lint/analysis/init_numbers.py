"""Is a value computed in plain Python (a Cell's ``__init__``, a module helper it calls) a Python number?

Learning-rate schedules build their constants as ``self.warmup_steps = Tensor(warmup_steps, mstype.float32)``
with ``warmup_steps = _get_lr_steps(...)`` or ``max(1, total_steps - warmup_steps)``: a 0-d Tensor only when that
value is a number (a list would make a 1-d one). The proof, flow-sensitive along straight-line code:

* literals; ``int(...)``/``float(...)`` (the builtins); ``+ - * / // % **`` and unary ``-``/``+`` of numbers;
  ``a if c else b`` and ``a or b`` / ``a and b`` of numbers; ``max``/``min`` of two or more numbers;
* a local name: the binding that reaches the use, found by walking back through the statements before it (its own
  block, then the blocks around it); a compound statement on the way that binds the name ends the proof, and so
  does anything but a plain ``name = value``;
* a guard on the way, ``if not isinstance(p, int): raise ...`` (the body only raises): ``p`` is a number after it;
* a parameter reached at the top, when ``@mindspore._checkparam.args_type_check`` checks it against
  ``int``/``float``: a number *or None* (the check lets ``None`` through, and ``Tensor(None, mstype.float32)``
  does not raise in MindSpore 2.10: it makes a tensor of unknown rank). It is a number once arithmetic with a
  number, ``max``/``min``, ``int()`` or a statement before the use that always computes ``p <op> number``
  (``linear = max(1, total_steps - warmup)``) has run: each raises on ``None``. ``a or b`` is as sure as ``b``;
  ``Tensor(x, ...)`` needs a number, a Python operand of graph arithmetic only a number or None (``None`` there
  does not compile, before or after a rewrite);
* ``math.log(...)`` and the other one-number ``math`` functions of numbers;
* a call of a module function of the same module every ``return`` of which is a number, walked the same way.

Anything else is "not known to be a number".
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from ms_lint.cstutil import call_name_args, code_of, target_names
from ms_lint.walk import iter_nodes

MAX_DEPTH = 12
NUMBER_TYPES = {"int", "float"}
MATH_NUMBERS = {"log", "log2", "log10", "log1p", "exp", "expm1", "sqrt", "cos", "sin", "tan", "floor", "ceil",
                "pow", "fabs"}
CHECKER = "mindspore._checkparam.args_type_check"
ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)

Path = List[Tuple[Sequence[cst.BaseStatement], int]]  # (statements of a block, index) from the function down


NO, NUMBER_OR_NONE, NUMBER = 0, 1, 2  # how sure: not known / a number or None / a number


def is_number(ctx, func: cst.FunctionDef, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> bool:
    """``expr``, evaluated in ``func`` at the statement holding ``at``, is a Python number (see the module doc)."""
    return number_level(ctx, func, expr, at, depth) == NUMBER


def number_or_none(ctx, func: cst.FunctionDef, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """A number or ``None``: enough where the value is used in arithmetic (``None`` there raises)."""
    return number_level(ctx, func, expr, at) >= NUMBER_OR_NONE


def number_level(ctx, func: cst.FunctionDef, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> int:
    path = _path_to(func.body, at)
    return NO if path is None else _Numbers(ctx, func).expr(expr, path, depth)


class _Numbers:
    def __init__(self, ctx, func: cst.FunctionDef):
        self.ctx = ctx
        self.func = func

    def expr(self, expr: cst.BaseExpression, path: Path, depth: int) -> int:
        if depth > MAX_DEPTH:
            return NO
        if isinstance(expr, (cst.Integer, cst.Float)):
            return NUMBER
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return NUMBER if self.expr(expr.expression, path, depth + 1) else NO  # -None raises
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, ARITHMETIC):
            both = min(self.expr(expr.left, path, depth + 1), self.expr(expr.right, path, depth + 1))
            return NUMBER if both else NO  # None in arithmetic raises
        if isinstance(expr, cst.IfExp):
            return min(self.expr(expr.body, path, depth + 1), self.expr(expr.orelse, path, depth + 1))
        if isinstance(expr, cst.BooleanOperation):
            left, right = self.expr(expr.left, path, depth + 1), self.expr(expr.right, path, depth + 1)
            if not left or not right:
                return NO
            if isinstance(expr.operator, cst.Or):
                return right  # a falsy left (0 or None) gives the right
            return right if left == NUMBER else NUMBER_OR_NONE  # ``None and x`` is None
        if isinstance(expr, cst.Name):
            return self.name(expr.value, path, depth + 1)
        if isinstance(expr, cst.Call) and not any(a.star for a in expr.args):
            return self.call(expr, path, depth + 1)
        return NO

    def call(self, call: cst.Call, path: Path, depth: int) -> int:
        qualified = self.ctx.imports.qualify(call.func) or ""
        if qualified.startswith("math.") and qualified[5:] in MATH_NUMBERS:
            return NUMBER if all(self.expr(a.value, path, depth) for a in call.args) else NO
        if not isinstance(call.func, cst.Name):
            return NO
        name = call.func.value
        args = call_name_args(call)
        helper = self.ctx.scope.module_functions.get(name)
        if helper is None and self.ctx.imports.qualify(call.func) in (None, f"builtins.{name}", name):
            if name in NUMBER_TYPES and len(args) == 1 and len(call.args) == 1:
                return NUMBER  # int(x) returns an int or raises
            if name in ("max", "min") and len(args) >= 2 and len(call.args) == len(args):
                # comparing None with a number raises
                return NUMBER if all(self.expr(a.value, path, depth) for a in args) else NO
            return NO
        if helper is None or helper is self.func:
            return NO
        returns = _returns(helper)
        if not returns or any(value is None for value, _ in returns):
            return NO
        inner = _Numbers(self.ctx, helper)
        return min(inner.expr(value, where, depth) for value, where in returns)

    def name(self, name: str, path: Path, depth: int) -> int:
        """Walk back from the statement at the end of ``path`` to what binds ``name`` there. A statement on the
        way that unconditionally does arithmetic of ``name`` with a number raised if it was ``None``."""
        not_none = False
        for level in range(len(path) - 1, -1, -1):
            stmts, index = path[level]
            if level < len(path) - 1 and not isinstance(stmts[index], cst.If) and name in _bound_names(
                    stmts[index]):
                return NO  # a loop's later binding reaches its start again; try/with: not followed
            for position in range(index - 1, -1, -1):
                stmt = stmts[position]
                if _guards(stmt, name):
                    return NUMBER
                value = _plain_binding(stmt, name)
                if value is not None:
                    found = self.expr(value, path[:level] + [(stmts, position)], depth)
                    return NUMBER if found and not_none else found
                if name in _bound_names(stmt):
                    return NO
                if not not_none and self._arithmetic_of(stmt, name, path[:level] + [(stmts, position)], depth):
                    not_none = True
        found = self.parameter(name)
        return NUMBER if found and not_none else found

    def _arithmetic_of(self, stmt: cst.BaseStatement, name: str, path: Path, depth: int) -> bool:
        """``stmt`` is a simple statement that always evaluates ``name <op> number`` (or the reverse)."""
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        # parts of conditional expressions, boolean operations, lambdas and comprehensions may not run
        found = iter_nodes(stmt, cst.BinaryOperation, prune=_MAY_NOT_RUN)
        for node in found:
            if not isinstance(node.operator, ARITHMETIC):
                continue
            for mine, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(mine, cst.Name) and mine.value == name and not (
                        isinstance(other, cst.Name) and other.value == name):
                    if self.expr(other, path, depth + 1) == NUMBER:
                        return True
        return False

    def parameter(self, name: str) -> int:
        """An argument ``@args_type_check`` checks against number types: a number or ``None`` (it lets
        ``None`` through)."""
        params = list(self.func.params.posonly_params) + list(self.func.params.params) + list(
            self.func.params.kwonly_params)
        if not any(p.name.value == name for p in params):
            return NO
        for decorator in self.func.decorators:
            call = decorator.decorator
            if isinstance(call, cst.Call) and self.ctx.imports.qualify(call.func) == CHECKER:
                for arg in call.args:
                    if arg.keyword is not None and arg.keyword.value == name:
                        return NUMBER_OR_NONE if _number_types(arg.value) else NO
        return NO


def _number_types(expr: cst.BaseExpression) -> bool:
    """``int``, ``float`` or a tuple of them."""
    if isinstance(expr, cst.Name):
        return expr.value in NUMBER_TYPES
    if isinstance(expr, cst.Tuple):
        return bool(expr.elements) and all(_number_types(e.value) for e in expr.elements)
    return False


def _guards(stmt: cst.BaseStatement, name: str) -> bool:
    """``if not isinstance(name, int|float|(int, float)): raise ...`` with no ``else``."""
    if not isinstance(stmt, cst.If) or stmt.orelse is not None:
        return False
    test = stmt.test
    if not (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)):
        return False
    check = test.expression
    if not (isinstance(check, cst.Call) and isinstance(check.func, cst.Name) and check.func.value == "isinstance"
            and len(check.args) == 2 and isinstance(check.args[0].value, cst.Name)
            and check.args[0].value.value == name and _number_types(check.args[1].value)):
        return False
    body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
    smalls = [s for line in body for s in getattr(line, "body", ())]
    return bool(smalls) and len(smalls) == len(body) and all(isinstance(s, cst.Raise) for s in smalls)


def _plain_binding(stmt: cst.BaseStatement, name: str) -> Optional[cst.BaseExpression]:
    """The value of ``name = value`` when ``stmt`` is that one statement."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, cst.Name) and target.value == name:
            return small.value
    return None


_BINDERS = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.AsName, cst.ImportAlias, cst.NamedExpr,
            cst.Global, cst.Nonlocal, cst.FunctionDef, cst.ClassDef)
_MAY_NOT_RUN = (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.SetComp,
                cst.DictComp)


def _bound_names(node: cst.CSTNode) -> set:
    """Names ``node`` binds (a nested def or class binds its own name; what is inside it is its own scope)."""
    names: set = set()
    for found in iter_nodes(node, _BINDERS, prune=(cst.FunctionDef, cst.ClassDef)):
        if isinstance(found, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            names |= _names(found.target)
        elif isinstance(found, cst.AsName):
            names |= _names(found.name)
        elif isinstance(found, cst.ImportAlias):
            if found.asname is None:
                names.add(code_of(found.name).split(".")[0])
        elif isinstance(found, (cst.Global, cst.Nonlocal)):
            names |= {item.name.value for item in found.names}
        else:
            names.add(found.name.value)
    return names


def _names(target: cst.CSTNode) -> set:
    """Names a target binds (``self.x`` and ``a[i]`` bind none)."""
    if isinstance(target, cst.StarredElement):
        target = target.value
    return set(target_names(target, include_starred=True)) if isinstance(target, cst.BaseExpression) else set()


def _blocks(stmt: cst.BaseStatement) -> List[Sequence[cst.BaseStatement]]:
    """Statement lists of the blocks directly inside ``stmt`` (nested defs are not entered)."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) or not isinstance(stmt, cst.BaseCompoundStatement):
        return []
    suites: List[cst.BaseSuite] = [stmt.body] if isinstance(getattr(stmt, "body", None), cst.BaseSuite) else []
    orelse = getattr(stmt, "orelse", None)
    while orelse is not None:
        suites.append(orelse.body)
        orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    for handler in getattr(stmt, "handlers", ()) or ():
        suites.append(handler.body)
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        suites.append(final.body)
    return [s.body for s in suites if isinstance(s, cst.IndentedBlock)]


def _path_to(suite: cst.BaseSuite, target: cst.CSTNode) -> Optional[Path]:
    """(statements, index) pairs from the function body down to the statement that holds ``target``."""
    if not isinstance(suite, cst.IndentedBlock):
        return None
    return _search(suite.body, target)


def _search(stmts: Sequence[cst.BaseStatement], target: cst.CSTNode) -> Optional[Path]:
    for index, stmt in enumerate(stmts):
        if stmt is target or _contains(stmt, target, shallow=True):
            return [(stmts, index)]
        for block in _blocks(stmt):
            inner = _search(block, target)
            if inner is not None:
                return [(stmts, index)] + inner
    return None


def _contains(stmt: cst.BaseStatement, target: cst.CSTNode, shallow: bool) -> bool:
    """``target`` is ``stmt`` itself or inside its simple statements / its header (not its blocks)."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return any(node is target for node in iter_nodes(stmt, cst.CSTNode))
    if isinstance(stmt, cst.If):
        return any(node is target for node in iter_nodes(stmt.test, cst.CSTNode))
    return False


def _returns(func: cst.FunctionDef) -> List[Tuple[Optional[cst.BaseExpression], Path]]:
    """Every ``return`` of ``func`` (outside nested defs) with the path to it."""
    found: List[Tuple[Optional[cst.BaseExpression], Path]] = []

    def walk(stmts: Sequence[cst.BaseStatement], prefix: Path) -> None:
        for index, stmt in enumerate(stmts):
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Return):
                        found.append((small.value, prefix + [(stmts, index)]))
            for block in _blocks(stmt):
                walk(block, prefix + [(stmts, index)])

    if isinstance(func.body, cst.IndentedBlock):
        walk(func.body.body, [])
    return found
