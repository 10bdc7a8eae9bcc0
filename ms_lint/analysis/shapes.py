"""Trip counts from tensor shapes and what a loop iterates: ``x.shape[0]``, ``ops.shape(x)[1]``, ``n = x.shape[0]``,
``len(x)`` and the items of a helper's tuple result (:class:`ShapeResolver`); ``self.<attr>`` values read from
``__init__``; ``while`` loops with a Python-int counter; and "certainly one Tensor" (:func:`surely_tensor`),
stricter than the value model's ``Kind.TENSOR`` because a loop over it is flagged.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import assigned_in, parameters_of, statement_block, written_names
from ms_lint.analysis.narrowing import narrowed_names
from ms_lint.analysis.reaching import reaching_values
from ms_lint.analysis.script_calls import tensor_from_script
from ms_lint.analysis.values import (SINGLE_TENSOR_BUILDERS, TUPLE_RESULTS, FunctionValues, Kind,
                                     annotation_kind, written_from_outside)
from ms_lint.context import ModuleContext
from ms_lint.cstutil import (all_params, bind_arguments, call_name_args, code_of, is_self_attr, suite_statements,
                             target_names, walk_statements)
from ms_lint.scope import CallSite, own_scope_calls
from ms_lint.walk import find, parents_in  # parents_in: read by the rules from here too


# -- self.<attr> values from __init__ ------------------------------------------------------------------------
def init_value(context: ModuleContext, owner: Optional[str], attr: str) -> Optional[cst.BaseExpression]:
    """The expression ``self.<attr>`` is bound to, when the class (or an in-module base) binds it exactly once,
    plainly (``ClassAttributes.single_write``)."""
    found = context.attributes.single_write(owner, attr)
    return found[0] if found is not None else None


def init_assignment(context: ModuleContext, owner: Optional[str], attr: str
                    ) -> Optional[Tuple[cst.BaseExpression, cst.FunctionDef]]:
    """(value, method) of that one binding of ``self.<attr>``."""
    return context.attributes.single_write(owner, attr)


def holds_python_sequence(context: ModuleContext, owner: Optional[str], expr: cst.BaseExpression) -> bool:
    """``expr`` is a Python list or tuple (indexing it by a constant is folded away, never a slicing op): a list
    or tuple display, or ``self.<attr>`` bound once to one (``self._mats = []`` then appended to), directly or
    through a ``@property`` that returns such an attribute."""
    if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp)):
        return True
    if not is_self_attr(expr):
        return False
    attr = expr.attr.value  # type: ignore[attr-defined]
    getter = context.scope.find_method(owner, attr)
    if getter is not None:
        returned = _property_return(getter)
        if returned is None:
            return False
        attr = returned
    value = init_value(context, owner, attr)
    return isinstance(value, (cst.List, cst.Tuple, cst.ListComp))


def _property_return(method: cst.FunctionDef) -> Optional[str]:
    """``x`` for a ``@property`` whose body is only ``return self.x``."""
    if not any(isinstance(d.decorator, cst.Name) and d.decorator.value == "property" for d in method.decorators):
        return None
    body = [stmt for stmt in suite_statements(method.body)
            if not (isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr)
                    and isinstance(stmt.body[0].value, cst.SimpleString))]  # a docstring
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine):
        return None
    small = body[0].body[0]
    if isinstance(small, cst.Return) and small.value is not None and is_self_attr(small.value):
        return small.value.attr.value  # type: ignore[union-attr]
    return None


def primitive_of(context: ModuleContext, owner: Optional[str], expr: cst.BaseExpression) -> Optional[str]:
    """Qualified class of the op or cell a callable expression holds: ``P.Shape()`` or ``self.shape`` set to it
    (by the class, or by a base in another module when no class of this module's chain writes it)."""
    if is_self_attr(expr):
        attr = expr.attr.value  # type: ignore[union-attr]
        value = init_value(context, owner, attr)
        if isinstance(value, cst.Call):
            return context.imports.qualify(value.func)
        if value is None and context.attributes.writes(owner, attr) == []:
            return context.attributes.made_by(owner, attr)  # set by a base in another module
        return None
    if isinstance(expr, cst.Call):
        return context.imports.qualify(expr.func)
    return None


def int_argument(call: cst.Call, position: int, keyword: str, default: Optional[int]) -> Tuple[bool, Optional[int]]:
    """(known, value) of an int literal argument given by position or keyword; (True, default) when absent."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return int_literal(arg.value)
    positional = call_name_args(call)
    if len(positional) > position:
        return int_literal(positional[position].value)
    if any(arg.star for arg in call.args):
        return False, None
    return True, default


def int_literal(expr: cst.BaseExpression) -> Tuple[bool, Optional[int]]:
    if isinstance(expr, cst.Integer):
        return True, int(expr.value, 0)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        known, value = int_literal(expr.expression)
        return known, (-value if value is not None else None)
    return False, None


# -- trip counts from shapes -------------------------------------------------------------------------------------
@dataclass
class ShapeRef:
    """A trip count taken from a tensor's shape. ``tensor``/``axis`` are set when it is exactly one axis size."""

    origin: str  # the shape expression, as written (``x.shape[0]``)
    tensor: Optional[cst.BaseExpression] = None
    axis: Optional[int] = None


NOT_TENSORS = {Kind.CONST, Kind.TENSOR_SEQ, Kind.CELL, Kind.CELL_SEQ, Kind.OP}


class ShapeResolver:
    """Finds trip counts that come from a tensor's shape, through local names (``n = x.shape[0]``)."""

    def __init__(self, context: ModuleContext, function: cst.FunctionDef, values: FunctionValues):
        self.context = context
        self.function = function
        self.values = values
        self.owner = context.scope.owner_of.get(function)
        self._bindings: Optional[Dict[str, List[Tuple[Optional[cst.BaseExpression], Optional[int]]]]] = None
        self._active: Set[str] = set()
        self._helpers: FrozenSet[cst.FunctionDef] = frozenset({function})  # helpers being read (recursion ends)

    # name -> [(value, index into an unpacked value or None)]; value None for bindings that are not assignments
    def bindings(self) -> Dict[str, List[Tuple[Optional[cst.BaseExpression], Optional[int]]]]:
        if self._bindings is None:
            found: Dict[str, List[Tuple[Optional[cst.BaseExpression], Optional[int]]]] = {}
            for stmt in walk_statements(suite_statements(self.function.body), into_defs=False):
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        if isinstance(small, cst.Assign):
                            for target in small.targets:
                                self._bind(found, target.target, small.value)
                        elif isinstance(small, cst.AnnAssign) and small.value is not None:
                            self._bind(found, small.target, small.value)
                        else:
                            for name in written_names(cst.SimpleStatementLine(body=[small])):
                                found.setdefault(name, []).append((None, None))
                else:
                    for name in written_names(stmt):
                        found.setdefault(name, []).append((None, None))
            self._bindings = found
        return self._bindings

    @staticmethod
    def _bind(found, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            found.setdefault(target.value, []).append((value, None))
        elif isinstance(target, (cst.Tuple, cst.List)):
            starred = any(isinstance(el, cst.StarredElement) for el in target.elements)
            for index, element in enumerate(target.elements):
                for name in target_names(element.value, include_starred=True):
                    plain = isinstance(element.value, cst.Name) and not starred
                    found.setdefault(name, []).append((value, index) if plain else (None, None))

    def tensorish(self, expr: cst.BaseExpression, shape_op_argument: bool = False) -> bool:
        """Could ``expr`` be a Tensor whose ``.shape`` is read? (never a known non-tensor, never a module, never a
        numpy array: ``self.anchors = np.array(...)`` has a fixed, config-sized shape). ``shape_op_argument``: it is
        handed to ``ops.shape``/``P.Shape()``, which take only Tensors, so a value the model calls CONST is one there
        (``img_metas=None`` in the signature, a Tensor at the call under ``if img_metas is not None``)."""
        if isinstance(expr, cst.Name) and expr.value in self.context.imports.aliases:
            return False
        excluded = NOT_TENSORS - {Kind.CONST} if shape_op_argument else NOT_TENSORS
        return self.values.kind(expr) not in excluded and not self._numpy_value(expr, 0)

    def _numpy_value(self, expr: cst.BaseExpression, depth: int) -> bool:
        """Is ``expr`` visibly a numpy array: a ``numpy.*`` call (or a method chain on one), or a name or
        ``self.<attr>`` bound only to such values?"""
        if depth > 8:
            return False
        if isinstance(expr, cst.Call):
            qualified = self.context.imports.qualify(expr.func)
            if qualified is not None:
                return qualified.startswith("numpy.")
            return isinstance(expr.func, cst.Attribute) and self._numpy_value(expr.func.value, depth + 1)
        if isinstance(expr, cst.Subscript):
            return self._numpy_value(expr.value, depth + 1)
        if is_self_attr(expr):
            value = init_value(self.context, self.owner, expr.attr.value)  # type: ignore[union-attr]
            return value is not None and self._numpy_value(value, depth + 1)
        if isinstance(expr, cst.Name) and expr.value not in self.values.parameters:
            bound = self.bindings().get(expr.value)
            return bool(bound) and all(value is not None and index is None and self._numpy_value(value, depth + 1)
                                       for value, index in bound)
        return False

    def shape_tuple(self, expr: cst.BaseExpression) -> Optional[Tuple[str, Optional[cst.BaseExpression]]]:
        """(text, tensor) when ``expr`` is a tensor's whole shape tuple."""
        if isinstance(expr, cst.Attribute) and expr.attr.value == "shape" and self.tensorish(expr.value):
            return code_of(expr), expr.value
        if isinstance(expr, cst.Call):
            args = call_name_args(expr)
            if len(args) == 1 and len(expr.args) == 1:
                qualified = self.context.imports.qualify(expr.func)
                if qualified in ("mindspore.ops.shape",) or primitive_of(
                    self.context, self.owner, expr.func
                ) == "mindspore.ops.Shape":
                    if self.tensorish(args[0].value, shape_op_argument=True):
                        return code_of(expr), args[0].value
        if isinstance(expr, cst.Name) and expr.value not in self._active:
            bound = self.bindings().get(expr.value)
            if bound and expr.value not in self.values.parameters:
                self._active.add(expr.value)
                try:
                    found = [self.shape_tuple(v) if v is not None and i is None else None for v, i in bound]
                finally:
                    self._active.discard(expr.value)
                if all(f is not None for f in found):
                    return found[0][0] if len(found) == 1 else expr.value, found[0][1] if len(found) == 1 else None
        return None

    def shape_int(self, expr: cst.BaseExpression) -> Optional[ShapeRef]:
        """A ShapeRef when the int ``expr`` is derived from a tensor's shape (``x.shape[0] - 1`` included)."""
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            whole = self.shape_tuple(expr.value)
            if whole is not None:
                known, axis = int_literal(expr.slice[0].slice.value)
                return ShapeRef(code_of(expr), whole[1] if known else None, axis if known else None)
            return None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("len", "int"):
            args = call_name_args(expr)
            if len(args) != 1 or self.context.imports.qualify(expr.func) is not None:
                return None
            inner = args[0].value
            if expr.func.value == "int":
                found = self.shape_int(inner)
                return ShapeRef(code_of(expr), found.tensor, found.axis) if found else None
            if surely_tensor(self, inner, self.function):
                return ShapeRef(code_of(expr), inner, 0)
            sites = CALLER_EVIDENCE.get()
            if sites is not None and type(inner) is cst.Name:
                site = tensor_by_callers(self, inner, self.function)
                if site is not None:
                    sites.append(site)
                    return ShapeRef(code_of(expr), inner, 0)
            return None
        if isinstance(expr, cst.BinaryOperation):
            left, right = self.shape_int(expr.left), self.shape_int(expr.right)
            if left is None and right is None:
                return None
            for side, found in ((expr.left, left), (expr.right, right)):
                if found is None and not self.values.is_constant(side):
                    return None
            return ShapeRef(code_of(expr))
        if isinstance(expr, cst.Name) and expr.value not in self._active:
            bound = self.bindings().get(expr.value)
            if expr.value in self.values.parameters and not bound:
                return self._passed_int(expr.value)
            if not bound or expr.value in self.values.parameters:
                return None
            self._active.add(expr.value)
            try:
                found = [self._binding_int(value, index) for value, index in bound]
            finally:
                self._active.discard(expr.value)
            if any(f is None for f in found):
                return None
            if len(found) == 1:
                return ShapeRef(f"{expr.value}` = `{found[0].origin}", found[0].tensor, found[0].axis)
            return ShapeRef(expr.value)
        return None

    def _binding_int(self, value: Optional[cst.BaseExpression], index: Optional[int]) -> Optional[ShapeRef]:
        if value is None:
            return None
        if index is None:
            return self.shape_int(value)
        if isinstance(value, (cst.Tuple, cst.List)):
            return None  # ``a, b = x.shape[0], 3`` unpacks element-wise; handled as separate bindings
        whole = self.shape_tuple(value)
        if whole is None:
            return self._helper_item(value, index) if isinstance(value, cst.Call) else None
        return ShapeRef(f"{whole[0]}[{index}]", whole[1], index)

    def _passed_int(self, name: str) -> Optional[ShapeRef]:
        """A helper's parameter that every call in graph code of this module fills with a shape int of the caller
        (``batch_size, _, _ = gts.shape`` in ``construct``, then ``rpn_anchor_target(anchors, gts, batch_size)``):
        a shape int here too. Not a root's (its callers are outside), nor one another module's graph code calls."""
        scope = self.context.scope
        info = scope.functions.get(self.function)
        sites = scope.call_sites.get(self.function, [])
        if info is None or info.is_root or not sites or self._called_elsewhere():
            return None
        found: List[ShapeRef] = []
        for site in sites:
            if site.caller in self._helpers or any(arg.star for arg in site.call.args):
                return None
            binding = bind_arguments(self.function, site.bound_method, site.call)
            passed = dict(binding[0]) if binding is not None else {}
            if name not in passed:
                return None  # the default, or a call that cannot be matched to the parameters
            caller = ShapeResolver(self.context, site.caller, self.context.values(site.caller))
            caller._helpers = self._helpers | {self.function}
            ref = caller.shape_int(passed[name])
            if ref is None:
                return None
            found.append(ref)
        if len(found) > 1:
            return ShapeRef(name)
        origin = found[0].origin  # the caller's name for it may be the same (``batch_size`` = ``gts.shape[0]``)
        return ShapeRef(origin if origin.startswith(f"{name}` = `") else f"{name}` = `{origin}")

    def _called_elsewhere(self) -> bool:
        """Graph code of another module calls this function (the project index says so)."""
        project = self.context.project
        if project is None:
            return False
        name = self.function.name.value
        qualname = f"{self.owner}.{name}" if self.owner else name
        return any(caller[0] != project.module for caller in project.index.callers_of((project.module, qualname)))

    def _helper_item(self, call: cst.Call, index: int) -> Optional[ShapeRef]:
        """``parts, c = _split_img(x)`` where every ``return`` of the in-module helper is a tuple whose item
        ``index`` is a shape int there (``_, c, _, _ = ops.shape(x)``; ``return parts, c``)."""
        target = self.context.scope.resolve_callable(call.func, self.owner)
        if target is None or target[0] in self._helpers:
            return None
        callee = target[0]
        returns = find(callee.body, (cst.Return, cst.Yield, cst.Await), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
        if not returns or any(not isinstance(r, cst.Return) or not isinstance(r.value, cst.Tuple)
                              or len(r.value.elements) <= index for r in returns):
            return None
        inner = ShapeResolver(self.context, callee, self.context.values(callee))
        inner._helpers = self._helpers | {self.function, callee}
        found = [inner.shape_int(r.value.elements[index].value) for r in returns]  # type: ignore[union-attr]
        if any(f is None for f in found):
            return None
        return ShapeRef(f"{code_of(call.func)}(...)[{index}]` = `{found[0].origin}" if len(found) == 1
                        else f"{code_of(call.func)}(...)[{index}]")





# -- while loops with a Python-int counter -------------------------------------------------------------------------
@dataclass
class WhileCounter:
    """``i = 0; while i < bound: ...; i += step``: unrolled like a ``for`` because ``i`` is a Python int."""

    name: str
    bound: cst.BaseExpression
    start: Optional[int]  # None: the start is a compile-time expression (``step = x.shape[0] - 1``), in start_expr
    step: int
    operator: str  # the comparison, written with the counter on the left
    start_expr: Optional[cst.BaseExpression] = None
    # False for ``while begin + width < C: ...; begin += width``: the counter is still a Python int bounded by
    # ``C``, but the step and the offset are compile-time values, not literals: no trip count, no rewrite.
    exact: bool = True

    def trip_count(self, stop: int) -> Optional[int]:
        """Iterations for a constant bound ``stop`` (None for a comparison that may never end, or a start that is
        not an int literal)."""
        if self.start is None or not self.exact:
            return None
        if self.operator in ("<", "<=") and self.step > 0:
            return max(0, len(range(self.start, stop + (self.operator == "<="), self.step)))
        if self.operator in (">", ">=") and self.step < 0:
            return max(0, len(range(self.start, stop - (self.operator == ">="), self.step)))
        return None


_COMPARISONS = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">="}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def while_counter(context: ModuleContext, loop: cst.While, values: FunctionValues) -> Optional[WhileCounter]:
    """The Python-int counter of a ``while`` (set to an int literal right before, one ``+= k`` per iteration,
    compared with a compile-time constant), or None. A Tensor counter makes a real loop: None."""
    test = loop.test
    if loop.orelse is not None or not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    comparison = test.comparisons[0]
    operator = _COMPARISONS.get(type(comparison.operator))
    if operator is None:
        return None
    body = list(suite_statements(loop.body))
    for counter, bound, op in ((test.left, comparison.comparator, operator),
                               (comparison.comparator, test.left, _FLIPPED[operator])):
        exact = True
        if (type(counter) is cst.BinaryOperation and type(counter.operator) is cst.Add and op in ("<", "<=")
                and type(counter.left) is cst.Name and values.kind(counter.right) is Kind.CONST):
            counter, exact = counter.left, False  # ``while begin + width < C``: ``begin`` counts up to ``C``
        if not isinstance(counter, cst.Name) or values.kind(counter) is Kind.TENSOR:
            continue
        if values.kind(bound) is not Kind.CONST:
            continue
        step = _counter_step(body, counter.value, values)
        start, start_expr = _counter_start(context, loop, counter.value)
        if step is None or (start is None and (start_expr is None or values.kind(start_expr) is not Kind.CONST)):
            continue
        if step[1] is False and op not in ("<", "<="):
            continue  # a step of unknown sign must count up towards an upper bound
        return WhileCounter(counter.value, bound, start, step[0], op, start_expr, exact=exact and step[1])
    return None


def _counter_step(body: Sequence[cst.BaseStatement], name: str, values: FunctionValues
                  ) -> Optional[Tuple[int, bool]]:
    """The step of the single top-level ``name += k`` / ``name = name + k`` in the body: (k, True) for an int
    literal ``k``; (1, False) for ``name += width`` with ``width`` a compile-time value (the counter stays a Python
    int, stepping by an amount ms-lint does not fold)."""
    steps = []
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
                known, value = int_literal(small.value)
                sign = {cst.AddAssign: 1, cst.SubtractAssign: -1}.get(type(small.operator))
                if known and value and sign:
                    steps.append((value * sign, True))
                elif (type(small.operator) is cst.AddAssign and not known
                      and values.kind(small.value) is Kind.CONST and values.fold(small.value) is None):
                    steps.append((1, False))
                else:
                    steps.append(None)
            elif (isinstance(small, cst.Assign) and len(small.targets) == 1
                  and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name):
                value = small.value
                step = None
                if (isinstance(value, cst.BinaryOperation) and isinstance(value.left, cst.Name)
                        and value.left.value == name):
                    known, amount = int_literal(value.right)
                    sign = {cst.Add: 1, cst.Subtract: -1}.get(type(value.operator))
                    step = (amount * sign, True) if known and amount and sign else None
                steps.append(step)
    if len(steps) != 1 or steps[0] is None:
        return None
    if sum(1 for stmt in walk_statements(body, into_defs=False) if name in written_names(stmt)) != 1:
        return None  # also rebound somewhere nested: not a simple counter
    return steps[0]


def _counter_start(context: ModuleContext, loop: cst.While, name: str
                   ) -> Tuple[Optional[int], Optional[cst.BaseExpression]]:
    """(the int literal the counter is set to by the last statement before the loop that binds it, or None; the
    expression it is set to when that is not a literal, or None)."""
    block, index = statement_block(context, loop)
    if block is None or index is None:
        return None, None
    for stmt in reversed(block[:index]):
        if name not in assigned_in([stmt]):
            continue
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
            small = stmt.body[0]
            if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                known, value = int_literal(small.value)
                return (value, None) if known else (None, small.value)
        return None, None
    return None, None


# -- "certainly one Tensor" (stricter than Kind.TENSOR) ------------------------------------------------------------


def surely_tensor(resolver: "ShapeResolver", expr: cst.BaseExpression, function: cst.FunctionDef,
                  _active: Optional[Set[str]] = None) -> bool:
    """Is ``expr`` certainly a single Tensor? A Tensor-annotated parameter, a functional op's result, Tensor
    arithmetic, a Tensor method's result, or a local name bound only to such expressions. The value model's
    TENSOR is a good default for parameters (``construct(self, x)``) but too weak to claim "this loop walks
    tensor rows": a ``features`` argument or a cell's result is as often a tuple of tensors."""
    active = _active if _active is not None else set()
    context, values = resolver.context, resolver.values
    if isinstance(expr, cst.Name):
        bound = resolver.bindings().get(expr.value)
        if expr.value in values.parameters:
            if not (_annotated_tensor(function, expr.value, context)
                    and _callers_agree(resolver, function, expr.value, active)):
                return False
            if not bound:
                return True  # never rebound: the parameter itself (``x = self.features(x)`` must be checked too)
        if expr.value in active:
            return False
        if not bound or any(value is None or index is not None for value, index in bound):
            return False
        active.add(expr.value)
        try:
            return all(surely_tensor(resolver, value, function, active) for value, _ in bound)
        finally:
            active.discard(expr.value)
    if isinstance(expr, cst.BinaryOperation):
        sides = [surely_tensor(resolver, side, function, active) for side in (expr.left, expr.right)]
        return any(sides) and all(s or values.kind(side) in (Kind.CONST, Kind.TENSOR)
                                  for s, side in zip(sides, (expr.left, expr.right)))
    if isinstance(expr, cst.UnaryOperation):
        return surely_tensor(resolver, expr.expression, function, active)
    if isinstance(expr, cst.Subscript):
        return surely_tensor(resolver, expr.value, function, active)
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("T", "mT"):
        return surely_tensor(resolver, expr.value, function, active)
    if isinstance(expr, cst.Call):
        qualified = context.imports.qualify(expr.func)
        if qualified in ("mindspore.Tensor", "mindspore.tensor"):
            return True
        if qualified and qualified.startswith(("mindspore.ops.", "mindspore.mint.")):
            last = qualified.rsplit(".", 1)[-1]
            return last[:1].islower() and last not in TUPLE_RESULTS and values.kind(expr) is Kind.TENSOR
        if isinstance(expr.func, cst.Attribute) and qualified is None:
            method = expr.func.attr.value
            return method not in TUPLE_RESULTS and surely_tensor(resolver, expr.func.value, function, active)
    return False


def tensor_by_callers(resolver: "ShapeResolver", expr: cst.BaseExpression, function: cst.FunctionDef
                      ) -> Optional["CallSite"]:
    """A graph call site that hands the helper ``function``'s parameter ``expr`` (never rebound in it) one
    certain Tensor: ``surely_tensor`` there, or ``self.stride`` that one ``Parameter(...)``/``Tensor(...)`` in the
    class chain builds (mindyolo's ``self.make_anchors(feats, self.stride)``). For that call a loop over the
    parameter walks the Tensor's rows. Weaker evidence than ``surely_tensor``'s: a caller ms-lint does not read (an
    alias, ``ops.Partial``, ``getattr``, another module) may pass a tuple, so a finding on it gets no fix."""
    context = resolver.context
    info = context.scope.functions.get(function)
    if (type(expr) is not cst.Name or expr.value not in resolver.values.parameters or info is None
            or resolver.bindings().get(expr.value)
            or expr.value not in {param.name.value for param in all_params(function, with_stars=False)}):
        return None  # (a ``**kwargs`` parameter takes any keyword: ``scale=`` fills a dict, not ``scale``)
    if info.is_root:
        return tensor_by_holders(context, function, expr.value)
    for site in context.scope.call_sites.get(function, []):
        binding = bind_arguments(function, site.bound_method, site.call)
        passed = next((value for name, value in binding[0] if name == expr.value), None) if binding else None
        if passed is None or _in_inner_scope(context, site):
            continue
        caller = ShapeResolver(context, site.caller, context.values(site.caller))
        if _passes_tensor(caller, passed) or (
                is_self_attr(passed) and _one_tensor_attribute(
                    context, context.scope.owner_of.get(site.caller), passed.attr.value)):  # type: ignore
            return site
        if (type(passed) is cst.Name and passed.value in caller.values.parameters
                and not caller.bindings().get(passed.value)
                and passed.value not in narrowed_names(context, site.call, site.caller, parents_in(site.caller).get)):
            held = tensor_by_holders(context, site.caller, passed.value)  # ``self.LR(x, ...)`` in ``construct``
            if held is not None:  # (not under ``if isinstance(x, (list, tuple)):``: a Tensor never gets there)
                return held
    return None


def tensor_by_holders(context: ModuleContext, construct: cst.FunctionDef, name: str) -> Optional[CallSite]:
    """A call ``self.block(t, ...)`` of the Cell whose ``construct`` this is, from graph code of the project, that
    hands the parameter ``name`` one certain Tensor (``surely_tensor`` in the holder's method; mindaudio's
    ``self.length_regulator(x, duration_rounded, max_len)``), else a call in the module's own script code that
    hands it ``ms.Tensor(...)`` (``script_calls``) when no graph code can reach an instance. The evidence of
    ``tensor_by_callers``, one Cell up; the caller checks that ``construct`` never rebinds ``name``."""
    owner = context.scope.owner_of.get(construct)
    project = context.project
    if (owner is None or project is None or construct.name.value != "construct"
            or name not in {param.name.value for param in all_params(construct, with_stars=False)}):
        return None
    for holder, caller, call in project.construct_call_sites(owner) or ():
        passed = argument_for(construct, True, call, name)
        if passed is None or caller in holder.scope.enclosing or call not in own_scope_calls(caller):
            continue
        if _passes_tensor(ShapeResolver(holder, caller, holder.values(caller)), passed):
            return CallSite(caller, call, True)
    found = tensor_from_script(context.module, context.imports, owner, construct, name)
    if found is None or not project.kept_out_of_graph(owner):
        return None  # (a holder's call that passes something else outweighs a smoke test's)
    return CallSite(found[0], found[1], True)  # (caller None: module level)


def argument_for(function: cst.FunctionDef, bound: bool, call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """What ``call`` passes ``function``'s parameter ``name`` (None when nothing, or the call does not bind)."""
    binding = bind_arguments(function, bound, call)
    return next((value for param, value in binding[0] if param == name), None) if binding else None


SEQUENCE_ANNOTATIONS = {"List", "list", "Tuple", "tuple", "Sequence", "Iterable", "typing.List", "typing.Tuple",
                        "typing.Sequence"}


def passed_a_sequence(context: ModuleContext, function: cst.FunctionDef, name: str) -> bool:
    """Does a call of ``function`` (a helper's call sites, or the holders' ``self.block(...)`` of a ``construct``)
    hand the parameter ``name`` something written as a sequence: a list/tuple display or comprehension, or the
    caller's own parameter annotated or documented as one (``labels: List[Tensor]``, ``rois (list[Tensor])``)?
    What contradicts a docstring's "Tensor" for the parameter."""
    owner = context.scope.owner_of.get(function)
    sites = [(context, site.caller, site.call, site.bound_method)
             for site in context.scope.call_sites.get(function, [])]
    if context.project is not None and owner is not None and function.name.value == "construct":
        sites += [(holder, caller, call, True) for holder, caller, call in
                  context.project.construct_call_sites(owner) or ()]
    for _holder, caller, call, bound in sites:
        passed = argument_for(function, bound, call, name)
        if isinstance(passed, (cst.List, cst.Tuple, cst.ListComp)):
            return True
        if not isinstance(passed, cst.Name):
            continue
        for param in all_params(caller, with_stars=False):
            if param.name.value != passed.value:
                continue
            ann = param.annotation.annotation if param.annotation is not None else None
            head = ann.value if isinstance(ann, cst.Subscript) else ann
            if isinstance(head, (cst.Name, cst.Attribute)) and code_of(head) in SEQUENCE_ANNOTATIONS:
                return True
            if documented_sequence(caller, passed.value):
                return True
    return False


def _passes_tensor(caller: "ShapeResolver", passed: cst.BaseExpression) -> bool:
    """The argument is one certain Tensor at this call: ``surely_tensor``, or a name whose bindings that reach
    the call are each one (``d = ops.clip_by_value(t, ...)`` in the branch of the call, whatever the other branch
    binds)."""
    function = caller.function
    if surely_tensor(caller, passed, function):
        return True
    if type(passed) is not cst.Name or passed.value in caller.values.parameters:
        return False
    parents = parents_in(function)
    line = parents.get(passed)
    while line is not None and not isinstance(line, cst.BaseStatement):
        line = parents.get(line)
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) > 1:
        return False  # ``d = (1, 2); f(d)``: the reaching bindings are read per line, not per statement
    reaching = reaching_values(caller.values.sequence, passed)
    return bool(reaching) and all(surely_tensor(caller, value, function) for value in reaching)


def _in_inner_scope(context: ModuleContext, site: "CallSite") -> bool:
    """The call sits in a comprehension, a lambda, a def or a class inside the caller, or the caller is itself a
    def nested in a function: their own names (a comprehension target, a parameter that shadows a local of the
    enclosing function) are not what the caller's value model reads."""
    return site.caller in context.scope.enclosing or site.call not in own_scope_calls(site.caller)


def _one_tensor_attribute(context: ModuleContext, owner: Optional[str], attr: str) -> bool:
    """``self.attr`` holds one Tensor in every instance of ``owner``: the class chain binds it once, in an
    ``__init__``'s own body (not under an ``if``), to ``Parameter(...)``/``Tensor(...)``; no class body of the
    chain binds the name (a class attribute is what an instance without the assignment reads); no subclass in
    the module binds it again, and none derives from ``owner`` in another module (its writes are not read here);
    and no statement of the module assigns ``<other>.attr`` (``values.written_from_outside``)."""
    attributes = context.attributes
    if owner is None or attributes.made_by(owner, attr) not in SINGLE_TENSOR_BUILDERS:
        return False
    chain = attributes.class_chain(owner)
    scope = context.scope
    unconditional = False
    subclasses = [cls for cls in scope.classes if cls not in chain and owner in attributes.class_chain(cls)]
    for cls in chain + subclasses:
        if cls in subclasses and attributes.made_by(cls, attr) not in SINGLE_TENSOR_BUILDERS:
            return False  # a subclass binds it too (``made_by`` wants one binding in the chain)
        node = scope.classes[cls].node
        for stmt in suite_statements(node.body):
            if attr in assigned_in([stmt]) and not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                return False  # a class attribute
        if cls in subclasses:
            continue
        init = scope.classes[cls].methods.get("__init__")
        if init is not None and any(
                isinstance(small, cst.Assign) and any(is_self_attr(target.target, attr) for target in small.targets)
                for stmt in suite_statements(init.body) if isinstance(stmt, cst.SimpleStatementLine)
                for small in stmt.body):
            unconditional = True
    if not unconditional:
        return False
    project = context.project
    if project is not None and project.subclassed_elsewhere(owner):
        return False
    return not written_from_outside(context.module, attr)


def _callers_agree(resolver: "ShapeResolver", function: cst.FunctionDef, name: str, active: Set[str]) -> bool:
    """A helper's ``x: Tensor`` annotation is believed only when every graph call site passes something that may
    be a Tensor: ``self.forward_head(self.forward_features(x))`` hands it a list whatever the annotation says.
    Roots have no call sites to ask; their annotation stands."""
    context = resolver.context
    info = context.scope.functions.get(function)
    if info is None or info.is_root:
        return True
    key = f"{id(function)}:{name}"
    if key in active:
        return False
    sites = context.scope.call_sites.get(function, [])
    active.add(key)
    try:
        for site in sites:
            if any(arg.star for arg in site.call.args):
                return False
            passed = argument_for(function, site.bound_method, site.call, name)
            if passed is None:
                return False
            caller = ShapeResolver(context, site.caller, context.values(site.caller))
            if not _may_be_tensor(caller, passed, site.caller, active):
                return False
    finally:
        active.discard(key)
    return True


def _may_be_tensor(resolver: "ShapeResolver", expr: cst.BaseExpression, function: cst.FunctionDef,
                   active: Set[str]) -> bool:
    """Nothing says ``expr`` is anything but a Tensor: every binding of a name is a Tensor expression (a method
    whose result is unknown, such as ``self.forward_features(x)``, is not)."""
    if surely_tensor(resolver, expr, function, active):
        return True
    values = resolver.values
    if not isinstance(expr, cst.Name):
        return values.kind(expr) is Kind.TENSOR
    if expr.value in values.parameters:
        info = resolver.context.scope.functions.get(function)
        parameter_ok = values.env.get(expr.value) is Kind.TENSOR and (
            info is None or info.is_root or _callers_agree(resolver, function, expr.value, active))
        if not parameter_ok:
            return False
    for value, index in resolver.bindings().get(expr.value, []):
        if value is None:
            return False
        if index is None and values.kind(value) is not Kind.TENSOR:
            return False
        if index is not None and not (type(value) is cst.Call and values.call_item_kind(value, index) is Kind.TENSOR):
            return False  # (``codes, scales = self.encode(x, False)``: what the returns it can reach give)
        if type(value) is cst.Call and _overridable_call(resolver.context, function, value):
            return False
    return expr.value in values.parameters or bool(resolver.bindings().get(expr.value))


def _overridable_call(context: ModuleContext, function: cst.FunctionDef, call: cst.Call) -> bool:
    """``self.encode(x)`` in a method of a class that a subclass (in this module or another module of the
    project) gives its own ``encode``: for an instance of the subclass, the shared caller gets what that one
    returns (a list, say), not what the value model read."""
    func = call.func
    owner = context.scope.owner_of.get(function)
    if not (type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self"
            and owner is not None):
        return False
    return overridden_below(context, owner, func.attr.value)


def overridden_below(context: ModuleContext, owner: str, method: str) -> bool:
    """Does a subclass of the class ``owner`` of this module, here or in another module of the project, define
    ``method``? (A subclass ms-lint cannot read counts as one that does.)"""
    attributes, scope = context.attributes, context.scope
    for cls, info in scope.classes.items():
        if cls != owner and method in info.methods and owner in attributes.class_chain(cls):
            return True
    project = context.project
    if project is None or project.module is None:
        return False
    index = project.index
    pending, seen = [(project.module, owner)], set()
    while pending:
        for sub in index.subclasses(pending.pop()):
            if sub in seen:
                continue
            seen.add(sub)
            summary = index.class_summary(sub)
            if summary is None or method in summary.methods:
                return True
            pending.append(sub)
    return False


def _annotated_tensor(function: cst.FunctionDef, name: str, context: ModuleContext) -> bool:
    stars = (function.params.star_arg, function.params.star_kwarg)
    for param in parameters_of(function.params):
        if param.name.value == name and param.annotation is not None:
            if any(param is star for star in stars):
                return False  # ``*hidden: Tensor`` is a tuple of them
            return annotation_kind(param, context.imports) is Kind.TENSOR  # (``Optional[Tensor] = ()``: no)
        if param.name.value == name and not any(param is star for star in stars):
            return (DOCSTRINGS_TRUSTED.get() and documented_tensor(function, name)
                    and not passed_a_sequence(context, function, name))
    return False


# Whether a parameter's docstring type counts as its annotation (``trusting_docstrings``). Off by default: every
# fix and every other answer of this module stands on code alone; MSL101 asks once more with it on, for a loop
# it would otherwise miss, and reports what it finds that way without a fix.
DOCSTRINGS_TRUSTED: ContextVar[bool] = ContextVar("DOCSTRINGS_TRUSTED", default=False)

# While set (``collecting_caller_evidence``), ``len(p)`` of a parameter that only a caller shows to be one Tensor
# (``tensor_by_callers``) is a shape int too, and the call is recorded here: the finding that rests on it gets no fix.
CALLER_EVIDENCE: ContextVar[Optional[List[CallSite]]] = ContextVar("CALLER_EVIDENCE", default=None)


@contextmanager
def collecting_caller_evidence():
    """Let ``ShapeResolver.shape_int`` read ``len(p)`` on a caller's word; yields the list of the calls used."""
    sites: List[CallSite] = []
    token = CALLER_EVIDENCE.set(sites)
    try:
        yield sites
    finally:
        CALLER_EVIDENCE.reset(token)


@contextmanager
def trusting_docstrings():
    token = DOCSTRINGS_TRUSTED.set(True)
    try:
        yield
    finally:
        DOCSTRINGS_TRUSTED.reset(token)


_DOC_TENSOR = re.compile(r"^\(\s*`?(?:mindspore\.|ms\.)?Tensor`?(?:\s+of\s+shape|\s*[,)]|\s*$)")


ARGUMENT_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments",
                     "other parameters"}
_SECTION = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")


def _documented_type(function: cst.FunctionDef, name: str) -> Optional[str]:
    """What the function's docstring writes in parentheses after ``name`` on the line that documents it, in an
    ``Args:`` (``Parameters:``...) section: a ``Returns:`` entry of the same name is not the parameter's."""
    doc = function.get_docstring(clean=True)
    section = None
    for line in (doc or "").splitlines():
        stripped = line.strip()
        header = _SECTION.match(stripped)
        if header is not None and line[:1] not in (" ", "\t"):
            section = header.group(1).lower()
            continue
        if (section in ARGUMENT_SECTIONS and stripped.startswith(name)
                and stripped[len(name):].lstrip().startswith("(")):
            return stripped[len(name):].lstrip()
    return None


def documented_sequence(function: cst.FunctionDef, name: str) -> bool:
    """``rois (list[Tensor]): ...``, ``x (`tuple(mindspore.Tensor)`)``: the docstring makes ``name`` a sequence."""
    written = _documented_type(function, name)
    return written is not None and bool(re.match(r"(?i)\(\s*`?(?:typing\.)?(?:list|tuple|sequence)\b", written))


def documented_tensor(function: cst.FunctionDef, name: str) -> bool:
    """The function's docstring gives ``name`` the type Tensor, Google or Hugging Face style:
    ``name (Tensor): ...``, ``name (`mindspore.Tensor` of shape `(batch, len)`, *optional*):``. Not
    ``rois (list[Tensor])``, ``x (Tensor or tuple)``, ``masks (`tuple(mindspore.Tensor)`)``."""
    written = _documented_type(function, name)
    if written is None or re.search(r"(?i)\bor\b|list|tuple|sequence|\|", written.split(" of shape", 1)[0]):
        return False
    return bool(_DOC_TENSOR.match(written))


# -- batch-preserving sub-cells: ``q = self.conv(x)`` has as many rows (axis 0) as ``x`` -------------------------
# MindSpore nn cells whose output keeps the input's axis-0 length, whatever the input is. Curated, kept small:
# * convolutions: the primitive only accepts a batched input (measured on 2.10: Conv2d and Conv1d reject a
#   3-D input, Conv3d a 4-D one, "x shape size must be equal to 4/5"), so axis 0 is the batch in and out;
# * shape-preserving cells (element-wise activations, normalizations, dropout): every axis is kept.
# Deliberately absent: ``Dense`` (a 1-D input of length in_channels gives out_channels rows), pooling, flatten,
# transposed convolutions and anything that reshapes or reorders axes.
BATCH_PRESERVING_CELLS = frozenset({
    "Conv1d", "Conv2d", "Conv3d",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
    "ReLU", "ReLU6", "Sigmoid", "Tanh", "GELU", "SiLU", "LeakyReLU", "ELU", "Softmax", "LogSoftmax", "Identity",
    "Dropout",
})


def batch_preserving_cell(context: ModuleContext, owner: Optional[str], func: cst.BaseExpression) -> Optional[str]:
    """The class name when ``func`` is ``self.<attr>`` bound once to ``mindspore.nn.<C>(...)``, C batch-preserving."""
    if not is_self_attr(func):
        return None
    value = init_value(context, owner, func.attr.value)  # type: ignore[union-attr]
    if not isinstance(value, cst.Call):
        return None
    qualified = context.imports.qualify(value.func)
    if not qualified or not qualified.startswith("mindspore.nn."):
        return None
    last = qualified.rsplit(".", 1)[-1]
    return last if last in BATCH_PRESERVING_CELLS else None


def same_batch_length(context: ModuleContext, function: cst.FunctionDef, name: str, source: str,
                      at: cst.BaseStatement) -> bool:
    """Does the local ``name`` provably have as many rows (axis 0) as ``source`` when statement ``at`` runs?

    Only this shape is accepted: ``name`` is not a parameter, is bound exactly once in ``function``, by
    ``name = self.<cell>(source)`` (one positional argument, the bare name ``source``) where ``self.<cell>`` is a
    :data:`BATCH_PRESERVING_CELLS` cell, in the same block as ``at`` and before it, and ``source`` is not rebound
    from that statement up to ``at``. Axis 0 only; the caller checks the axis.
    """
    if name == source or any(p.name.value == name for p in parameters_of(function.params)):
        return False
    if any(isinstance(n.target, cst.Name) and n.target.value == name for n in find(function, cst.NamedExpr)):
        return False
    if any(name in {n.value for n in s.names if isinstance(n, cst.NameItem)}
           for s in find(function, (cst.Nonlocal, cst.Global))):
        return False
    binders = [stmt for stmt in walk_statements(suite_statements(function.body), into_defs=False)
               if name in written_names(stmt)]
    if len(binders) != 1:
        return False
    binder = binders[0]
    block, index = statement_block(context, at)
    if block is None or index is None or not any(stmt is binder for stmt in block[:index]):
        return False
    start = next(i for i, stmt in enumerate(block) if stmt is binder)
    if source in assigned_in(block[start + 1:index]):
        return False
    if not isinstance(binder, cst.SimpleStatementLine) or len(binder.body) != 1:
        return False
    small = binder.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            and small.targets[0].target.value == name and isinstance(small.value, cst.Call)):
        return False
    call = small.value
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return False
    arg = call.args[0].value
    if not (isinstance(arg, cst.Name) and arg.value == source):
        return False
    return batch_preserving_cell(context, context.scope.owner_of.get(function), call.func) is not None
