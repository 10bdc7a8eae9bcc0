"""Names an ``isinstance`` test proves to hold Python values at a point of a graph function.

``if isinstance(arg, (list, tuple)) and not arg:`` tests the truth of a Python list, whatever the callers pass
for ``arg`` elsewhere: graph mode folds ``isinstance`` at compile time, and the ``and`` (or the ``if`` body the
test guards) only runs when it held. MindSpore's own ``numpy._to_tensor`` converts its arguments this way.
"""
from __future__ import annotations

from typing import Callable, Optional, Set

import libcst as cst

from ms_lint.analysis.dataflow import assigned_in
from ms_lint.cstutil import suite_statements

# Builtin types whose instances are never Tensors (graph mode keeps them as Python values).
PYTHON_TYPES = {"int", "float", "bool", "str", "bytes", "complex", "list", "tuple", "dict", "set", "frozenset"}


def python_typed(test: cst.BaseExpression) -> Set[str]:
    """Names that ``test`` being true proves are instances of Python types: ``isinstance(x, (int, float))``,
    and each operand of an ``and`` chain of such tests."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return python_typed(test.left) | python_typed(test.right)
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
            and len(test.args) == 2 and all(a.keyword is None and not a.star for a in test.args)):
        return set()
    subject, types = test.args[0].value, test.args[1].value
    if not isinstance(subject, cst.Name):
        return set()
    names = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
    if names and all(isinstance(n, cst.Name) and n.value in PYTHON_TYPES for n in names):
        return {subject.value}
    return set()


def narrowed_names(context, node: cst.CSTNode, func: Optional[cst.FunctionDef],
                   parent_of: Optional[Callable[[cst.CSTNode], Optional[cst.CSTNode]]] = None) -> Set[str]:
    """Names proven to be Python values where ``node`` is evaluated: by the left operands of the ``and`` chains
    ``node`` sits on the right of, and by the tests of the ``if`` statements whose body (not ``else``) holds it,
    up to ``func``; a name the ``if`` body rebinds is left out. ``parent_of``: the parents to walk up (the
    context's by default)."""
    found: Set[str] = set()
    parent_of = parent_of or context.parent
    child, parent = node, parent_of(node)
    while parent is not None and parent is not func:
        if isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And) \
                and parent.right is child:
            found |= python_typed(parent.left)
        if isinstance(parent, cst.If) and child is parent.body:
            found |= python_typed(parent.test) - assigned_in(list(suite_statements(parent.body)))
        child, parent = parent, parent_of(parent)
    return found


def is_narrowed_operand(operand: cst.BaseExpression, narrowed: Set[str]) -> bool:
    """``x`` or ``not x`` for a narrowed name ``x``."""
    while isinstance(operand, cst.UnaryOperation) and isinstance(operand.operator, cst.Not):
        operand = operand.expression
    return isinstance(operand, cst.Name) and operand.value in narrowed
