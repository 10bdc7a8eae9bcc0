"""Names an ``isinstance`` test proves to hold Python values at a point of a graph function.

``if isinstance(arg, (list, tuple)) and not arg:`` tests the truth of a Python list, whatever the callers pass
for ``arg`` elsewhere: graph mode folds ``isinstance`` at compile time, and the ``and`` (or the ``if`` body the
test guards) only runs when it held. MindSpore's own ``numpy._to_tensor`` converts its arguments this way.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Set, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import assigned_in
from ms_lint.cstutil import suite_statements
from ms_lint.names import dotted

# Builtin types whose instances are never Tensors (graph mode keeps them as Python values), and their ``typing``
# spellings.
PYTHON_TYPES = {"int", "float", "bool", "str", "bytes", "complex", "list", "tuple", "dict", "set", "frozenset",
                "List", "Tuple", "Dict", "Set", "FrozenSet", "Sequence", "typing.List", "typing.Tuple",
                "typing.Dict", "typing.Set", "typing.Sequence"}
TENSOR_TYPES = {"Tensor", "Parameter", "ms.Tensor", "mindspore.Tensor", "ms.Parameter", "mindspore.Parameter",
                "COOTensor", "CSRTensor", "RowTensor"}


def python_typed(test: cst.BaseExpression) -> Set[str]:
    """Names that ``test`` being true proves are instances of Python types: ``isinstance(x, (int, float))``,
    ``type(x) is list``, and each operand of an ``and`` chain of such tests."""
    return proven(test, True)


def proven(test: cst.BaseExpression, truth: bool) -> Set[str]:
    """Names that ``test`` evaluating to ``truth`` proves hold Python values (graph mode folds ``isinstance`` and
    ``type`` tests when it compiles): ``isinstance(x, list)`` true, ``isinstance(x, Tensor)`` false (an
    ``Optional[Tensor]`` that is not one is ``None`` or what the caller passed instead), through ``not``, the
    ``and`` of true tests and the ``or`` of false ones."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return proven(test.expression, not truth)
    if isinstance(test, cst.BooleanOperation):
        if isinstance(test.operator, cst.And) and truth:
            return proven(test.left, True) | proven(test.right, True)
        if isinstance(test.operator, cst.Or) and not truth:
            return proven(test.left, False) | proven(test.right, False)
        return set()
    subject, types = _type_test(test)
    if subject is None:
        return set()
    if truth and types and all(name in PYTHON_TYPES for name in types):
        return {subject}
    if not truth and types and all(name in TENSOR_TYPES for name in types):
        return {subject}
    return set()


def _type_test(test: cst.BaseExpression) -> Tuple[Optional[str], List[str]]:
    """(the name, the dotted names of the types) of ``isinstance(x, T)`` / ``isinstance(x, (T1, T2))`` /
    ``type(x) is T`` / ``type(x) == T`` / ``type(x) in (T1, T2)``; (None, []) for anything else."""
    if (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
            and len(test.args) == 2 and all(a.keyword is None and not a.star for a in test.args)):
        subject, types = test.args[0].value, test.args[1].value
    elif (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
          and isinstance(test.comparisons[0].operator, (cst.Is, cst.Equal, cst.In))
          and isinstance(test.left, cst.Call) and isinstance(test.left.func, cst.Name)
          and test.left.func.value == "type" and len(test.left.args) == 1):
        subject, types = test.left.args[0].value, test.comparisons[0].comparator
    else:
        return None, []
    if not isinstance(subject, cst.Name):
        return None, []
    items = [e.value for e in types.elements] if isinstance(types, (cst.Tuple, cst.List)) else [types]
    names = [dotted(item) for item in items]
    return (subject.value, [n for n in names if n]) if all(names) else (None, [])


def narrowed_names(context, node: cst.CSTNode, func: Optional[cst.FunctionDef],
                   parent_of: Optional[Callable[[cst.CSTNode], Optional[cst.CSTNode]]] = None) -> Set[str]:
    """Names proven to be Python values where ``node`` is evaluated (``proven``): by the left operands of the
    ``and`` (``or``) chains ``node`` sits on the right of, by the tests of the ``if`` statements and conditional
    expressions whose body (``else``) holds it, and by an ``if <test>: ... return`` (or ``raise``, ``continue``,
    ``break``) without ``else`` before it in a block, up to ``func``; a name the branch, or the statements since
    the early exit, rebind is left out. ``parent_of``: the parents to walk up (the context's by default)."""
    found: Set[str] = set()
    parent_of = parent_of or context.parent
    child, parent = node, parent_of(node)
    while parent is not None and parent is not func:
        kind = type(parent)
        if kind is cst.BooleanOperation and parent.right is child:
            found |= proven(parent.left, isinstance(parent.operator, cst.And))
        elif kind is cst.IfExp and child is not parent.test:
            found |= proven(parent.test, child is parent.body)
        elif kind is cst.If and child is not parent.test:
            branch = parent.body if child is parent.body else child
            found |= proven(parent.test, child is parent.body) - assigned_in(_branch_statements(branch))
        elif kind in (cst.IndentedBlock, cst.Module) and isinstance(child, cst.BaseStatement):
            found |= _after_early_exits(parent.body, child)
        child, parent = parent, parent_of(parent)
    return found


def _branch_statements(branch: cst.CSTNode) -> List[cst.BaseStatement]:
    if isinstance(branch, cst.If):  # an ``elif``
        return [branch]
    if isinstance(branch, cst.Else):
        return list(suite_statements(branch.body))
    return list(suite_statements(branch))  # type: ignore[arg-type]


def _after_early_exits(block, statement: cst.BaseStatement) -> Set[str]:
    """What the ``if <test>: ... return`` statements before ``statement`` in ``block`` prove false."""
    found: Set[str] = set()
    before = list(block)
    if statement not in before:
        return found
    before = before[:before.index(statement)]
    for position, stmt in enumerate(before):
        if isinstance(stmt, cst.If) and stmt.orelse is None and _always_exits(stmt.body):
            found |= proven(stmt.test, False) - assigned_in(before[position + 1:])
    return found


def _always_exits(body) -> bool:
    statements = list(suite_statements(body))
    if not statements:
        return False
    last = statements[-1]
    return isinstance(last, cst.SimpleStatementLine) and any(
        isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break)) for small in last.body)


def is_narrowed_operand(operand: cst.BaseExpression, narrowed: Set[str]) -> bool:
    """``x`` or ``not x`` for a narrowed name ``x``."""
    while isinstance(operand, cst.UnaryOperation) and isinstance(operand.operator, cst.Not):
        operand = operand.expression
    return isinstance(operand, cst.Name) and operand.value in narrowed
