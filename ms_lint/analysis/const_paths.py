"""Which ``return`` statements of a function a call with constant arguments can reach.

Ported Hugging Face models pick their result's shape with a flag: ``encode(x, mask, bw, False)`` runs
``return_dict = return_dict if return_dict is not None else self.config.return_dict`` and then
``if not return_dict: return (frames, scales)`` before ``return EncoderOutput(frames, scales)``. Read as a whole,
such a function returns "a tuple or an object"; called with ``False`` it can only return the tuple, and
``codes, scales = self.encode(...)`` unpacks that tuple's items.

The reading is a small constant propagation over the function's top-level statements: parameters the call fills
with a scalar literal (or leaves to a scalar literal default), names assigned from expressions of those, and
``if`` tests that fold to a known truth value. An ``if`` that cannot be decided keeps both branches; any other
compound statement keeps every ``return`` inside it and forgets the names it binds. So the returns given are a
superset of those the call can reach. A function that yields, or uses ``:=``, ``global``, ``nonlocal``, ``del`` or
``match`` (which bind names outside plain statements) is not read.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import statement_bindings
from ms_lint.cstutil import bind_arguments, literal_value, positional_params, walk_statements
from ms_lint.walk import find

_UNKNOWN = object()
_SCALARS = (bool, int, float, str, type(None))
_NOT_READ = (cst.Yield, cst.Await, cst.NamedExpr, cst.Global, cst.Nonlocal, cst.Del, cst.Match)


def call_constants(callee: cst.FunctionDef, bound: bool, call: cst.Call) -> Optional[Dict[str, object]]:
    """The parameters of ``callee`` that ``call`` fills with a scalar literal, or leaves to a scalar literal
    default, with those values; None when the call cannot be matched to the parameters."""
    binding = bind_arguments(callee, bound, call)
    if binding is None or binding[1]:
        return None
    passed = dict(binding[0])
    constants: Dict[str, object] = {}
    for param in positional_params(callee, bound) + list(callee.params.kwonly_params):
        name = param.name.value
        expr = passed.get(name, param.default if name not in passed else None)
        if expr is None:
            continue
        try:
            value = literal_value(expr)
        except (ValueError, AttributeError, TypeError):
            continue
        if isinstance(value, _SCALARS):
            constants[name] = value
    return constants


def reachable_returns(func: cst.FunctionDef, constants: Dict[str, object]) -> Optional[List[cst.Return]]:
    """The ``return`` statements of ``func`` a call can reach when its parameters hold ``constants``; None when
    the constants rule none out (then every ``return`` is reachable) or the function is not read (see above)."""
    if not constants or not isinstance(func.body, cst.IndentedBlock):
        return None
    everything = find(func.body, (cst.Return,) + _NOT_READ, prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
    if not everything or any(not isinstance(node, cst.Return) for node in everything):
        return None
    if any(find(func.body, (cst.NamedExpr, cst.Nonlocal, cst.Global))):
        return None  # (a nested def's ``nonlocal``, a comprehension's ``:=`` rebind the function's own names)
    reached, _ends = _walk(func.body.body, dict(constants))
    if len(reached) == len(everything):
        return None
    return reached


def _walk(body: Sequence[cst.BaseStatement], env: Dict[str, object]) -> Tuple[List[cst.Return], bool]:
    """(returns reached in ``body``, whether every path through it returns or raises); ``env`` is updated to
    what holds after it."""
    reached: List[cst.Return] = []
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Return):
                    reached.append(small)
                    return reached, True
                if isinstance(small, cst.Raise):
                    return reached, True
                _assign(small, env)
            continue
        if isinstance(stmt, cst.If):
            found, ends = _walk_if(stmt, env)
            reached.extend(found)
            if ends:
                return reached, True
            continue
        reached.extend(find(stmt, cst.Return, prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda)))
        for name in _bound_by(stmt):
            env.pop(name, None)
    return reached, False


def _walk_if(stmt: cst.If, env: Dict[str, object]) -> Tuple[List[cst.Return], bool]:
    truth = _truth(_evaluate(stmt.test, env))
    orelse = stmt.orelse
    if truth is True:
        return _walk(_statements(stmt.body), env)
    if truth is False:
        return _walk_else(orelse, env)
    other = dict(env)
    found, ends = _walk(_statements(stmt.body), env)
    found_else, ends_else = _walk_else(orelse, other)
    if ends and not ends_else:
        env.clear()
        env.update(other)  # only the other branch goes on
    elif ends_else and not ends:
        pass  # only the body goes on: ``env`` holds what it leaves
    else:
        for name in list(env):
            if name not in other or not _same(env[name], other[name]):
                del env[name]
    return found + found_else, ends and ends_else


def _walk_else(orelse, env: Dict[str, object]) -> Tuple[List[cst.Return], bool]:
    if orelse is None:
        return [], False
    if isinstance(orelse, cst.If):
        return _walk_if(orelse, env)
    return _walk(_statements(orelse.body), env)


def _statements(block: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    """A block's statements; ``if x: return y`` on one line as one statement line."""
    if isinstance(block, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=block.body)]
    return block.body


def _assign(small: cst.BaseSmallStatement, env: Dict[str, object]) -> None:
    """Track ``name = <constant expression>``; forget every other name the statement binds."""
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        name, value = small.targets[0].target.value, small.value
    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
        name, value = small.target.value, small.value
    else:
        for bound in _bound_by(cst.SimpleStatementLine(body=[small])):
            env.pop(bound, None)
        return
    found = _evaluate(value, env)
    if found is _UNKNOWN:
        env.pop(name, None)
    else:
        env[name] = found


def _bound_by(stmt: cst.BaseStatement) -> List[str]:
    """Every name ``stmt`` binds, in its nested blocks too (nested definitions' insides left out)."""
    return [name for inner in walk_statements([stmt], into_defs=False) for name in statement_bindings(inner)]


def _same(left: object, right: object) -> bool:
    return type(left) is type(right) and left == right


def _truth(value: object) -> Optional[bool]:
    return None if value is _UNKNOWN else bool(value)


def _evaluate(expr: cst.BaseExpression, env: Dict[str, object]) -> object:
    """The scalar value ``expr`` surely has, or ``_UNKNOWN``."""
    if isinstance(expr, cst.Name):
        if expr.value in env:
            return env[expr.value]
        if expr.value in ("True", "False", "None"):
            return literal_value(expr)
        return _UNKNOWN
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return literal_value(expr)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        truth = _truth(_evaluate(expr.expression, env))
        return _UNKNOWN if truth is None else not truth
    if isinstance(expr, cst.IfExp):
        truth = _truth(_evaluate(expr.test, env))
        if truth is None:
            return _UNKNOWN
        return _evaluate(expr.body if truth else expr.orelse, env)
    if isinstance(expr, cst.BooleanOperation):
        left = _evaluate(expr.left, env)
        truth = _truth(left)
        if truth is None:
            return _UNKNOWN
        if isinstance(expr.operator, cst.Or):
            return left if truth else _evaluate(expr.right, env)
        return _evaluate(expr.right, env) if truth else left
    if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
        left = _evaluate(expr.left, env)
        operator = expr.comparisons[0].operator
        right = _evaluate(expr.comparisons[0].comparator, env)
        if left is _UNKNOWN or right is _UNKNOWN:
            return _UNKNOWN
        if isinstance(operator, cst.Is):
            return left is None and right is None if None in (left, right) else _UNKNOWN
        if isinstance(operator, cst.IsNot):
            return not (left is None and right is None) if None in (left, right) else _UNKNOWN
        if isinstance(operator, cst.Equal) and type(left) is type(right):
            return left == right
        if isinstance(operator, cst.NotEqual) and type(left) is type(right):
            return left != right
        return _UNKNOWN
    return _UNKNOWN
