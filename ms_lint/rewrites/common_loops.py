"""Loop analysis shared by the loop rules (MSL101, MSL103) and their rewrites (vmap, ForiLoop).

What a rule needs to know about a ``for``/``while`` in graph code before it may flag it or rewrite it:

* where the trip count comes from: a tensor's shape (``x.shape[0]``, ``ops.shape(x)[1]``, ``n = x.shape[0]``,
  ``len(x)``) -> :func:`shape_int`, or a constant (``values.fold``);
* which names the body reads and writes, in order (loop-carried state is a name read before it is written);
* whether a name the loop writes is read after the loop (:func:`read_after`), so removing or moving it is safe;
* whether the body calls random ops or ops with side effects (:func:`effects`).

Everything here answers conservatively: when it cannot tell, it says "unknown", and the rewrites then refuse.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.context import ModuleContext
from ms_lint.cstutil import call_name_args, code_of, suite_statements, target_names, walk_statements
from ms_lint.values import CONST_BUILTINS, FunctionValues, Kind
from ms_lint.walk import find

# Last component of a call's name (lower-cased) that marks a random op: vmap gives every lane the same numbers,
# and a ForiLoop body must be a pure function. Over-matching (``normalize``) only costs a rewrite, never a finding.
RANDOM_NAME = re.compile(
    r"random|dropout|uniform|normal|multinomial|bernoulli|shuffle|gamma|poisson|rand|laplace|truncated|choice|sample"
)
# Ops and methods that write state (Parameters, summaries, prints) or are in-place (``add_``).
SIDE_EFFECT_NAME = re.compile(
    r"^(assign\w*|print\w*|scatter_\w+|\w*summary|insert_gradient_of|set_data|update|hookbackward|\w*[a-z0-9]_)$"
)
# nn classes that are not pure per call: random, or updating statistics while training.
IMPURE_CELLS = re.compile(r"dropout|batchnorm|groupnorm_stats|random|noise", re.IGNORECASE)


# -- names read and written ------------------------------------------------------------------------------------
class _Reads(cst.CSTVisitor):
    """Names an expression or statement reads (attribute names, keywords and binding targets excluded)."""

    def __init__(self) -> None:
        self.names: List[cst.Name] = []
        self.bound: List[Set[str]] = []

    def visit_Name(self, node: cst.Name) -> None:
        if not any(node.value in scope for scope in self.bound):
            self.names.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        _visit_target(self, node.target)
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        _visit_target(self, node.target)
        if node.value is not None:
            node.value.visit(self)
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        node.target.visit(self)  # ``x += 1`` reads x
        node.value.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.bound.append({p.name.value for p in _params(node.params)})
        node.body.visit(self)
        self.bound.pop()
        return False

    def _comprehension(self, node, parts: Sequence[cst.BaseExpression]) -> bool:
        names: Set[str] = set()
        clause = node.for_in
        while clause is not None:
            names.update(target_names(clause.target, include_starred=True))
            clause = clause.inner_for_in
        clause = node.for_in
        clause.iter.visit(self)  # the first iterable is evaluated outside the comprehension
        self.bound.append(names)
        first = True
        while clause is not None:
            if not first:
                clause.iter.visit(self)
            first = False
            for cond in clause.ifs:
                cond.test.visit(self)
            clause = clause.inner_for_in
        for part in parts:
            part.visit(self)
        self.bound.pop()
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._comprehension(node, [node.key, node.value])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.bound.append({p.name.value for p in _params(node.params)})
        node.body.visit(self)
        self.bound.pop()
        return False

    def visit_For(self, node: cst.For) -> bool:
        node.iter.visit(self)
        _visit_target(self, node.target)
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        return False


def _visit_target(reader: _Reads, target: cst.BaseExpression) -> None:
    """Binding targets read nothing themselves, but ``a[i] = v`` reads ``a`` and ``i``."""
    if isinstance(target, cst.Name):
        return
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _visit_target(reader, element.value)
    elif isinstance(target, cst.StarredElement):
        _visit_target(reader, target.value)
    else:
        target.visit(reader)


def _params(params: cst.Parameters) -> List[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def read_name_nodes(node: cst.CSTNode) -> List[cst.Name]:
    reader = _Reads()
    node.visit(reader)
    return reader.names


def read_names(node: cst.CSTNode) -> Set[str]:
    return {name.value for name in read_name_nodes(node)}


def written_names(stmt: cst.CSTNode) -> List[str]:
    """Names a simple statement (or a compound statement's header) binds."""
    names: List[str] = []
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    names.extend(target_names(target.target, include_starred=True))
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                names.extend(target_names(small.target, include_starred=True))
            elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    local = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(local, cst.Name):
                        names.append(local.value)
                    elif isinstance(local, cst.Attribute):
                        names.append(_head(local))
    elif isinstance(stmt, cst.For):
        names.extend(target_names(stmt.target, include_starred=True))
    elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        names.append(stmt.name.value)
    elif isinstance(stmt, cst.With):
        for item in stmt.items:
            if item.asname is not None:
                names.extend(target_names(item.asname.name, include_starred=True))
    return names


def _head(expr: cst.BaseExpression) -> str:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else ""


def assigned_in(body: Sequence[cst.BaseStatement]) -> Set[str]:
    """Every name bound anywhere in ``body`` (nested blocks included, nested defs' insides excluded)."""
    names: Set[str] = set()
    for stmt in walk_statements(body, into_defs=False):
        names.update(written_names(stmt))
    return names


def local_names(func: cst.FunctionDef) -> Set[str]:
    """Names that are local to ``func``: its parameters and everything it binds."""
    return {p.name.value for p in _params(func.params)} | assigned_in(suite_statements(func.body))


def header_reads(stmt: cst.BaseStatement) -> Set[str]:
    """Names a compound statement's header reads (``if`` test, ``for`` iterable, ``with`` items...)."""
    if isinstance(stmt, (cst.If, cst.While)):
        return read_names(stmt.test)
    if isinstance(stmt, cst.For):
        return read_names(stmt.iter)
    if isinstance(stmt, cst.With):
        found: Set[str] = set()
        for item in stmt.items:
            found |= read_names(item.item)
        return found
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return read_names(stmt)  # a nested def may read anything, at any later time
    return set()


def first_reads(body: Sequence[cst.BaseStatement]) -> Set[str]:
    """Names whose first mention in ``body`` (source order) is a read: the body's inputs.

    A statement's reads come before its writes (``h = h + 1`` reads h first). Writes inside a nested block
    count as writes (a conservative simplification: they only hide a read that follows in the same body).
    """
    seen: Set[str] = set()
    inputs: Set[str] = set()
    for stmt in walk_statements(body, into_defs=False):
        reads = read_names(stmt) if isinstance(stmt, cst.SimpleStatementLine) else header_reads(stmt)
        inputs |= reads - seen
        seen |= reads
        seen.update(written_names(stmt))
    return inputs


# -- liveness after a statement ----------------------------------------------------------------------------------
def read_after(context: ModuleContext, stmt: cst.BaseStatement, names: Iterable[str], skip: int = 0) -> Set[str]:
    """Which of ``names`` may be read after ``stmt`` runs (and the ``skip`` statements after it), before being rebound.

    Follows the statements after ``stmt`` in its block, then in each enclosing block; an enclosing loop runs
    its whole body again, so that body is scanned too. Only a plain assignment at the same or an outer level
    ends a name's life; assignments inside branches or loops do not (they may not run).
    """
    pending = set(names)
    live: Set[str] = set()
    current: cst.CSTNode = stmt
    first = True
    while pending:
        outer = context.parent(current)
        while isinstance(outer, cst.If) and outer.orelse is current:  # an ``elif``: continue after the chain
            current, outer = outer, context.parent(outer)
        block, parent_stmt = _enclosing_block(context, current)
        body = list(suite_statements(block)) if block is not None else []
        index = _index_of(body, current)
        if index is None:  # a shape not followed here (an ``elif`` chain...): assume every name is read
            live |= pending
            break
        _scan(body[index + 1 + (skip if first else 0):], pending, live)
        first = False
        if parent_stmt is None or isinstance(parent_stmt, cst.FunctionDef):
            break
        if isinstance(parent_stmt, (cst.For, cst.While)):
            _scan_loop_again(parent_stmt, pending, live)
        elif isinstance(parent_stmt, (cst.Try, cst.TryStar)):
            _scan_try_tail(parent_stmt, block, pending, live)
        current = parent_stmt
    return live


def _scan(body: Sequence[cst.BaseStatement], pending: Set[str], live: Set[str]) -> None:
    for stmt in body:
        if not pending:
            return
        if isinstance(stmt, cst.SimpleStatementLine):
            reads = read_names(stmt)
            live.update(pending & reads)
            pending -= reads
            pending -= set(written_names(stmt))
        else:
            inner = read_names(stmt)  # anything mentioned inside a compound statement may be read
            live.update(pending & inner)
            pending -= inner


def _scan_loop_again(loop: cst.BaseStatement, pending: Set[str], live: Set[str]) -> None:
    inner = read_names(loop)
    live.update(pending & inner)
    pending -= inner


def _scan_try_tail(stmt: cst.BaseStatement, block: cst.CSTNode, pending: Set[str], live: Set[str]) -> None:
    """Leaving a ``try`` block: its ``except``/``else``/``finally`` blocks (other than the one we are in) may run
    next and read anything (``finally: print(h)``)."""
    parts: List[cst.CSTNode] = list(getattr(stmt, "handlers", ()))
    for name in ("orelse", "finalbody"):
        part = getattr(stmt, name, None)
        if part is not None:
            parts.append(part)
    for part in parts:
        if block is part or contains_node(part, block):
            continue
        inner = read_names(part)
        live.update(pending & inner)
        pending -= inner


def _enclosing_block(context: ModuleContext, node: cst.CSTNode):
    """The suite holding statement ``node`` and the compound statement that owns that suite."""
    parent = context.parent(node)
    while parent is not None and not isinstance(parent, (cst.IndentedBlock, cst.SimpleStatementSuite)):
        parent = context.parent(parent)
    if parent is None:
        return None, None
    owner = context.parent(parent)
    while owner is not None and not isinstance(owner, (cst.BaseCompoundStatement, cst.FunctionDef)):
        owner = context.parent(owner)
    return parent, owner


def _index_of(body: Sequence[cst.CSTNode], node: cst.CSTNode) -> Optional[int]:
    for index, item in enumerate(body):
        if item is node:
            return index
    return None


def statement_block(context: ModuleContext, stmt: cst.BaseStatement):
    """(the list of statements holding ``stmt``, its index there), or (None, None)."""
    parent = context.parent(stmt)
    if not isinstance(parent, cst.IndentedBlock):
        return None, None
    body = list(parent.body)
    index = _index_of(body, stmt)
    return (body, index) if index is not None else (None, None)


def inside_compile_time_helper(context: ModuleContext, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """Is ``node`` inside a nested ``@constexpr`` def of the graph function (run in Python, not compiled)?"""
    current = context.parent(node)
    while current is not None and current is not function:
        if isinstance(current, cst.FunctionDef) and context.scope.is_compile_time_helper(current):
            return True
        current = context.parent(current)
    return False


# -- self.<attr> values from __init__ ------------------------------------------------------------------------
def init_value(context: ModuleContext, owner: Optional[str], attr: str) -> Optional[cst.BaseExpression]:
    """The expression ``self.<attr>`` is bound to, when the class (or a base) binds it exactly once."""
    if owner is None or owner not in context.scope.classes:
        return None
    found: List[cst.BaseExpression] = []
    seen: Set[str] = set()
    pending = [owner]
    while pending:
        name = pending.pop(0)
        if name in seen or name not in context.scope.classes:
            continue
        seen.add(name)
        info = context.scope.classes[name]
        for method in info.methods.values():
            for stmt in walk_statements(suite_statements(method.body), into_defs=False):
                if not isinstance(stmt, cst.SimpleStatementLine):
                    continue
                for small in stmt.body:
                    targets: List[cst.BaseExpression] = []
                    if isinstance(small, cst.Assign):
                        targets = [t.target for t in small.targets]
                    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                        targets = [small.target]
                    for target in targets:
                        if _is_self_attr(target, attr):
                            found.append(small.value if small.value is not None else target)
                        elif isinstance(target, (cst.Tuple, cst.List)) and any(
                            _is_self_attr(el.value, attr) for el in target.elements
                        ):
                            found.extend([target, target])  # unpacked: value unknown
        pending.extend(info.base_names)
    return found[0] if len(found) == 1 else None


def _is_self_attr(expr: cst.BaseExpression, attr: Optional[str] = None) -> bool:
    return (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"
            and (attr is None or expr.attr.value == attr))


def primitive_of(context: ModuleContext, owner: Optional[str], expr: cst.BaseExpression) -> Optional[str]:
    """Qualified class of the op or cell a callable expression holds: ``P.Shape()`` or ``self.shape`` set to it."""
    if _is_self_attr(expr):
        value = init_value(context, owner, expr.attr.value)
        if isinstance(value, cst.Call):
            return context.imports.qualify(value.func)
        return None
    if isinstance(expr, cst.Call):
        return context.imports.qualify(expr.func)
    return None


def int_argument(call: cst.Call, position: int, keyword: str, default: Optional[int]) -> Tuple[bool, Optional[int]]:
    """(known, value) of an int literal argument given by position or keyword; (True, default) when absent."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return _int_literal(arg.value)
    positional = call_name_args(call)
    if len(positional) > position:
        return _int_literal(positional[position].value)
    if any(arg.star for arg in call.args):
        return False, None
    return True, default


def _int_literal(expr: cst.BaseExpression) -> Tuple[bool, Optional[int]]:
    if isinstance(expr, cst.Integer):
        return True, int(expr.value, 0)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        known, value = _int_literal(expr.expression)
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

    def tensorish(self, expr: cst.BaseExpression) -> bool:
        """Could ``expr`` be a Tensor whose ``.shape`` is read? (never a known non-tensor, never a module, never a
        numpy array: ``self.anchors = np.array(...)`` has a fixed, config-sized shape)"""
        if isinstance(expr, cst.Name) and expr.value in self.context.imports.aliases:
            return False
        return self.values.kind(expr) not in NOT_TENSORS and not self._numpy_value(expr, 0)

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
        if _is_self_attr(expr):
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
                    if self.tensorish(args[0].value):
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
                known, axis = _int_literal(expr.slice[0].slice.value)
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




def plain_assignment(stmt: cst.BaseStatement) -> bool:
    """``name = value`` / ``a, b = value`` / ``name += value``: one statement on the line, names as targets."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    if isinstance(small, cst.Assign):
        return len(small.targets) == 1 and _names_only(small.targets[0].target)
    if isinstance(small, cst.AugAssign):
        return isinstance(small.target, cst.Name)
    return False


def _names_only(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(isinstance(el, cst.Element) and _names_only(el.value) for el in target.elements)
    return False


class ReplaceNode(cst.CSTTransformer):
    """Replace one node, found by identity."""

    def __init__(self, old: cst.CSTNode, new: cst.CSTNode):
        super().__init__()
        self.old, self.new = old, new

    def on_leave(self, original_node, updated_node):
        return self.new if original_node is self.old else updated_node


# -- effects ---------------------------------------------------------------------------------------------------
class EffectChecker:
    """Why a loop body is not a pure function of its inputs (a random op, a side effect), or None.

    Calls into the module's own graph code (``self.helper(x)``, ``helper(x)``, a Cell class defined here) are
    followed; calls to cells whose class cannot be seen (imported from elsewhere) count as unknown effects.
    """

    def __init__(self, context: ModuleContext, owner: Optional[str]):
        self.context = context
        self.owner = owner
        self._seen: Set[int] = set()

    def reason(self, node: cst.CSTNode) -> Optional[str]:
        for call in _calls(node):
            why = self._call_reason(call)
            if why:
                return why
        return None

    def _call_reason(self, call: cst.Call) -> Optional[str]:
        context = self.context
        func = call.func
        qualified = context.imports.qualify(func)
        if isinstance(func, cst.Call):  # ops.Dropout()(x), P.Assign()(p, v)
            return self._class_reason(context.imports.qualify(func.func), func)
        if qualified is not None:
            return self._name_reason(qualified) or self._class_reason(qualified, call)
        if isinstance(func, cst.Name):
            if func.value in ("print",):
                return "print"
            target = context.scope.module_functions.get(func.value)
            if target is not None:
                return self._follow(target, None)
            if func.value in context.scope.classes:
                return None  # constructing an object: its construct runs only when called
            if func.value in CONST_BUILTINS:
                return None
            value = context.constants.nodes.get(func.value)  # ``hswish = ops.HSwish()`` at module level
            if isinstance(value, cst.Call):
                return self._class_reason(context.imports.qualify(value.func), value)
            return self._name_reason(func.value) or f"`{func.value}` (a callable ms-lint cannot see into)"
        if isinstance(func, cst.Attribute):
            if _is_self_attr(func):
                method = context.scope.find_method(self.owner, func.attr.value)
                if method is not None:
                    return self._follow(method, self.owner)
                value = init_value(context, self.owner, func.attr.value)
                if isinstance(value, cst.Call):
                    return self._class_reason(context.imports.qualify(value.func) or _local_class(value), value)
                return f"`{code_of(func)}` (a callable ms-lint cannot see)"
            return self._name_reason(func.attr.value)
        return "a call ms-lint cannot see into"

    @staticmethod
    def _name_reason(name: str) -> Optional[str]:
        last = name.rsplit(".", 1)[-1]
        lowered = last.lower()
        if RANDOM_NAME.search(lowered):
            return f"random op `{last}`"
        if SIDE_EFFECT_NAME.match(lowered) and not lowered.startswith("tensor_scatter"):
            return f"side effect `{last}`"
        return None

    def _class_reason(self, qualified: Optional[str], construction: cst.Call) -> Optional[str]:
        if qualified is None:
            local = _local_class(construction)
            if local is not None and local in self.context.scope.classes:
                construct = self.context.scope.find_method(local, "construct")
                return self._follow(construct, local) if construct is not None else None
            return "a callable ms-lint cannot see into"
        last = qualified.rsplit(".", 1)[-1]
        if RANDOM_NAME.search(last.lower()) or IMPURE_CELLS.search(last):
            return f"`{last}` (random or stateful)"
        if SIDE_EFFECT_NAME.match(last.lower()):
            return f"side effect `{last}`"
        if qualified.startswith("mindspore."):
            return None
        return f"`{last}` (a callable ms-lint cannot see into)"

    def _follow(self, func: cst.FunctionDef, owner: Optional[str]) -> Optional[str]:
        if id(func) in self._seen:
            return None
        self._seen.add(id(func))
        saved = self.owner
        self.owner = owner
        try:
            return self.reason(func.body)
        finally:
            self.owner = saved


def _local_class(call: cst.Call) -> Optional[str]:
    return call.func.value if isinstance(call.func, cst.Name) else None


class _CallFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: List[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


def _calls(node: cst.CSTNode) -> List[cst.Call]:
    finder = _CallFinder()
    node.visit(finder)
    return finder.calls


def calls_in(node: cst.CSTNode) -> List[cst.Call]:
    return _calls(node)


def does_graph_work(node: cst.CSTNode, values: FunctionValues) -> bool:
    """Does a loop body build graph nodes (calls other than Python builtins, or tensor arithmetic)?

    A body of pure Python int/tuple bookkeeping is folded by the parser and costs little to unroll.
    """
    for call in _calls(node):
        func = call.func
        if isinstance(func, cst.Name) and func.value in CONST_BUILTINS:
            continue
        if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert", "index", "count"):
            if values.kind(func.value) is not Kind.TENSOR:
                continue
        return True
    static = _static_reads(node)
    for name in read_name_nodes(node):
        if id(name) not in static and values.kind(name) is Kind.TENSOR:
            return True
    return False


def _static_reads(node: cst.CSTNode) -> Set[int]:
    """Names read only for what is known at compile time: ``x.shape``/``x.ndim``/``x.dtype`` and ``len(x)``.
    A body that uses a Tensor only that way (``sizes += (x.shape[1] * i,)``) is folded away by the compiler."""
    found: Set[int] = set()
    for attribute in find(node, cst.Attribute):
        if attribute.attr.value in ("shape", "ndim", "dtype") and isinstance(attribute.value, cst.Name):
            found.add(id(attribute.value))
    for call in find(node, cst.Call):
        if (isinstance(call.func, cst.Name) and call.func.value == "len" and len(call.args) == 1
                and isinstance(call.args[0].value, cst.Name)):
            found.add(id(call.args[0].value))
    return found


# -- fresh names -------------------------------------------------------------------------------------------------
def fresh_name(context: ModuleContext, base: str, taken: Iterable[str] = ()) -> str:
    """``base`` (or ``base_2``...) when the module never spells it and it is not in ``taken``."""
    taken = set(taken)
    candidate, number = base, 1
    while candidate in taken or re.search(rf"(?<![\w.]){re.escape(candidate)}\b", context.text):
        number += 1
        candidate = f"{base}_{number}"
    return candidate


def fresh_local(base: str, taken: Iterable[str]) -> str:
    """``base`` (or ``base_2``...) not in ``taken``: for names local to a new function (parameters)."""
    taken = set(taken)
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base}_{number}"
    return candidate


# -- what moving code into a new function would change ----------------------------------------------------------
def binds_by_walrus(node: cst.CSTNode) -> bool:
    """``(y := ...)`` anywhere in ``node``: it binds ``y`` in the enclosing function (even from inside a
    comprehension), a binding that a body moved into a lambda or a new ``def`` would keep to itself."""
    return bool(find(node, cst.NamedExpr))


def declared_nonlocal(context: ModuleContext, node: cst.CSTNode, names: Iterable[str]) -> bool:
    """Is any of ``names`` declared ``global``/``nonlocal`` in a function enclosing ``node``? Assigning it in a
    moved body would then bind a new local instead of the global the original loop updates."""
    wanted = set(names)
    if not wanted:
        return False
    current = context.parent(node)
    while current is not None:
        if isinstance(current, cst.FunctionDef):
            for decl in find(current.body, (cst.Global, cst.Nonlocal)):
                if any(item.name.value in wanted for item in decl.names):  # type: ignore[attr-defined]
                    return True
        current = context.parent(current)
    return False


def contains_node(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    """Is ``target`` (by identity) ``root`` or inside it?"""
    return any(found is target for found in find(root, type(target)))


def enclosing_statement(context: ModuleContext, node: cst.CSTNode) -> Optional[cst.BaseStatement]:
    """The statement (simple line or compound) that holds ``node`` directly in a block."""
    current: Optional[cst.CSTNode] = node
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        current = context.parent(current)
    return current  # type: ignore[return-value]


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

    def trip_count(self, stop: int) -> Optional[int]:
        """Iterations for a constant bound ``stop`` (None for a comparison that may never end, or a start that is
        not an int literal)."""
        if self.start is None:
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
        if not isinstance(counter, cst.Name) or values.kind(counter) is Kind.TENSOR:
            continue
        if values.kind(bound) is not Kind.CONST:
            continue
        step = _counter_step(body, counter.value)
        start, start_expr = _counter_start(context, loop, counter.value)
        if step is None or (start is None and (start_expr is None or values.kind(start_expr) is not Kind.CONST)):
            continue
        return WhileCounter(counter.value, bound, start, step, op, start_expr)
    return None


def _counter_step(body: Sequence[cst.BaseStatement], name: str) -> Optional[int]:
    """The constant step of the single top-level ``name += k`` / ``name = name + k`` in the body."""
    steps = []
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
                known, value = _int_literal(small.value)
                sign = {cst.AddAssign: 1, cst.SubtractAssign: -1}.get(type(small.operator))
                steps.append(value * sign if known and value and sign else None)
            elif (isinstance(small, cst.Assign) and len(small.targets) == 1
                  and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name):
                value = small.value
                step = None
                if (isinstance(value, cst.BinaryOperation) and isinstance(value.left, cst.Name)
                        and value.left.value == name):
                    known, amount = _int_literal(value.right)
                    sign = {cst.Add: 1, cst.Subtract: -1}.get(type(value.operator))
                    step = amount * sign if known and amount and sign else None
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
                known, value = _int_literal(small.value)
                return (value, None) if known else (None, small.value)
        return None, None
    return None, None


# -- "certainly one Tensor" (stricter than Kind.TENSOR) ------------------------------------------------------------
# Functional ops that return a tuple (iterating their result walks the tuple, not a tensor axis).
TUPLE_RESULTS = {
    "split", "chunk", "unstack", "unbind", "meshgrid", "topk", "sort", "unique", "unique_consecutive", "max", "min",
    "median", "mode", "kthvalue", "std_mean", "var_mean", "svd", "qr", "eig", "eigh", "slogdet", "lu", "histogram",
    "frexp", "tensor_split", "vsplit", "hsplit", "dsplit", "nonzero", "broadcast_tensors", "aminmax", "cummax",
    "cummin", "lstsq", "unique_with_pad", "shape", "dyn_shape", "tolist", "asnumpy", "argwhere", "where",
}


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
    params = [p.name.value for p in list(function.params.posonly_params) + list(function.params.params)]
    active.add(key)
    try:
        for site in sites:
            if any(arg.star for arg in site.call.args):
                return False
            positional = params[1:] if site.bound_method and params else params
            passed = None
            for param, arg in zip(positional, [a for a in site.call.args if a.keyword is None]):
                if param == name:
                    passed = arg.value
            for arg in site.call.args:
                if arg.keyword is not None and arg.keyword.value == name:
                    passed = arg.value
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
        if value is None or index is not None or values.kind(value) is not Kind.TENSOR:
            return False
    return expr.value in values.parameters or bool(resolver.bindings().get(expr.value))


def _annotated_tensor(function: cst.FunctionDef, name: str, context: ModuleContext) -> bool:
    for param in _params(function.params):
        if param.name.value == name and param.annotation is not None:
            annotation = param.annotation.annotation
            qualified = context.imports.qualify(annotation)
            return qualified in ("mindspore.Tensor", "mindspore.Parameter") or (
                isinstance(annotation, cst.Name) and annotation.value == "Tensor")
    return False
