"""``self.training`` is a Python bool while MindSpore compiles a Cell: a test on it is folded, and code that only
runs when training (``if self.training: n = mint.ones(...)``) is not there when the Cell is compiled for inference.

:func:`training_only_tensor` answers, for an operand of a condition that is only evaluated when ``self.training``
is False (``if self.training is False and i >= n:``, mindone's DAC quantizer), whether its Tensor value comes only
from bindings made inside ``if self.training:`` blocks: then, where it is evaluated, it is the Python value the other
bindings give."""
from __future__ import annotations

from typing import Callable, Optional, Set

import libcst as cst

from ms_lint.analysis.reaching import ENTRY
from ms_lint.cstutil import is_self_attr
from ms_lint.treememo import tree_memo
from ms_lint.walk import find


def _training_truth(test: cst.BaseExpression) -> Optional[bool]:
    """What ``test`` being true says ``self.training`` is: True for ``self.training`` / ``self.training is True``
    / ``== True``, False for ``not self.training`` / ``self.training is False`` / ``== False`` / ``is not True``;
    None for any other test."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = _training_truth(test.expression)
        return None if inner is None else not inner
    if is_self_attr(test, "training"):
        return True
    if (type(test) is cst.Comparison and len(test.comparisons) == 1 and is_self_attr(test.left, "training")
            and type(test.comparisons[0].comparator) is cst.Name
            and test.comparisons[0].comparator.value in ("True", "False")):
        operator = type(test.comparisons[0].operator)
        value = test.comparisons[0].comparator.value == "True"
        if operator in (cst.Is, cst.Equal):
            return value
        if operator in (cst.IsNot, cst.NotEqual):
            return not value
    return None


def _proven_training(node: cst.CSTNode, func: cst.FunctionDef,
                     parent_of: Callable[[cst.CSTNode], Optional[cst.CSTNode]]) -> Set[bool]:
    """What the ancestors of ``node`` up to ``func`` prove ``self.training`` is where ``node`` runs: the left of an
    ``and`` whose right holds it, the test of an ``if`` whose body (``else``) holds it."""
    proven: Set[bool] = set()
    child, parent = node, parent_of(node)
    while parent is not None and parent is not func:
        kind = type(parent)
        truth = None
        if kind is cst.BooleanOperation and parent.right is child and type(parent.operator) is cst.And:
            truth = _training_truth(parent.left)
        elif kind is cst.If and child is not parent.test:
            truth = _training_truth(parent.test)
            truth = None if truth is None else truth == (child is parent.body)
        if truth is not None:
            proven.add(truth)
        child, parent = parent, parent_of(parent)
    return proven


def not_training_at(node: cst.CSTNode, func: cst.FunctionDef,
                    parent_of: Callable[[cst.CSTNode], Optional[cst.CSTNode]]) -> bool:
    """Is ``self.training`` proven False where ``node`` is evaluated: on the right of ``<not training> and ...``,
    in the body of ``if <not training>:``, in the ``else`` of ``if self.training:``?"""
    return False in _proven_training(node, func, parent_of)


def _in_training_block(stmt: cst.CSTNode, func: cst.FunctionDef,
                       parent_of: Callable[[cst.CSTNode], Optional[cst.CSTNode]]) -> bool:
    """Does ``stmt`` run only when ``self.training`` is True (the body of ``if self.training:``, the ``else`` of
    ``if not self.training:``)? (A statement is never the right of an ``and``.)"""
    return True in _proven_training(stmt, func, parent_of)


@tree_memo
def _changes_training(func: cst.FunctionDef) -> bool:
    """Does the function bind ``self.training`` or ``self`` itself, or call ``self.set_train(...)`` /
    ``self.train(...)``? Then the flag a test reads may not be the one a binding ran under."""
    for node in find(func, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Call)):
        if type(node) is cst.Call:
            if is_self_attr(node.func, "set_train") or is_self_attr(node.func, "train"):
                return True
            continue
        targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
        for target in targets:
            if (type(target) is cst.Name and target.value == "self") or any(
                    is_self_attr(part, "training") for part in [target, *find(target, cst.Attribute)]):
                return True
    return False


def _plain_names(expr: cst.BaseExpression) -> Optional[list]:
    """The names of an operand made only of names, literals, comparisons and arithmetic; None otherwise (a call,
    a subscript, an attribute have kinds of their own, not told apart here)."""
    kind = type(expr)
    if kind is cst.Name:
        return [expr]
    if kind in (cst.Integer, cst.Float):
        return []
    if kind is cst.UnaryOperation:
        return _plain_names(expr.expression)
    parts = ([expr.left, expr.right] if kind is cst.BinaryOperation
             else [expr.left, *(target.comparator for target in expr.comparisons)] if kind is cst.Comparison
             else None)
    if parts is None:
        return None
    found: list = []
    for part in parts:
        names = _plain_names(part)
        if names is None:
            return None
        found += names
    return found


def training_only_tensor(values, operand: cst.BaseExpression,
                         parent_of: Callable[[cst.CSTNode], Optional[cst.CSTNode]]) -> bool:
    """``operand`` (evaluated where ``self.training`` is proven False) is a Tensor only through names whose Tensor
    bindings that reach it all run only when training: names, literals, comparisons and arithmetic of them, each
    name that reaches as a Tensor bound to one only inside ``if self.training:`` blocks."""
    from ms_lint.analysis.values import Kind, join  # (values imports this package's modules)

    func = values.func
    names = _plain_names(operand)
    if not names or _changes_training(func) or not not_training_at(operand, func, parent_of):
        return False
    sequence = values.sequence
    found_tensor = False
    for name in names:
        if values.kind(name) is not Kind.TENSOR:
            continue
        sites = sequence.sites.get(id(name))
        if not sites or ENTRY in sites:
            return False  # the parameter's own value, or a name bound once: nothing to tell apart
        kept = []
        for site in sites:
            kinds = sequence.current.get((site, name.value)) or sequence.previous.get((site, name.value))
            statement = sequence.statements.get(site)
            if kinds is None or statement is None:
                return False
            if not _in_training_block(statement, func, parent_of):
                kept.extend(kinds)
        if not kept or join(kept) is Kind.TENSOR:
            return False
        found_tensor = True
    return found_tensor
