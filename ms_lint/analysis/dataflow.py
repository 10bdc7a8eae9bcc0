"""Which names a statement reads and writes, and which are read after it: what the loop and branch rules ask
before they call a loop carried, move code into a function, or remove a statement.

Everything here answers conservatively: when it cannot tell, a name counts as read (a rewrite then refuses).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, FrozenSet, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.cstutil import code_of, suite_statements, target_names, walk_statements
from ms_lint.treememo import forget, tree_memo
from ms_lint.walk import all_children, find, run_visitor

if TYPE_CHECKING:  # the context asks this module (through the value model): no import at run time
    from ms_lint.context import ModuleContext


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
        run_visitor(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        run_visitor(node.value, self)
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        _visit_target(self, node.target)
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        _visit_target(self, node.target)
        if node.value is not None:
            run_visitor(node.value, self)
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        run_visitor(node.target, self)  # ``x += 1`` reads x
        run_visitor(node.value, self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.bound.append({p.name.value for p in parameters_of(node.params)})
        run_visitor(node.body, self)
        self.bound.pop()
        return False

    def _comprehension(self, node, parts: Sequence[cst.BaseExpression]) -> bool:
        names: Set[str] = set()
        clause = node.for_in
        while clause is not None:
            names.update(target_names(clause.target, include_starred=True))
            clause = clause.inner_for_in
        clause = node.for_in
        run_visitor(clause.iter, self)  # the first iterable is evaluated outside the comprehension
        self.bound.append(names)
        first = True
        while clause is not None:
            if not first:
                run_visitor(clause.iter, self)
            first = False
            for cond in clause.ifs:
                run_visitor(cond.test, self)
            clause = clause.inner_for_in
        for part in parts:
            run_visitor(part, self)
        self.bound.pop()
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._comprehension(node, [node.key, node.value])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.bound.append({p.name.value for p in parameters_of(node.params)})
        run_visitor(node.body, self)
        self.bound.pop()
        return False

    def visit_For(self, node: cst.For) -> bool:
        run_visitor(node.iter, self)
        _visit_target(self, node.target)
        run_visitor(node.body, self)
        if node.orelse is not None:
            run_visitor(node.orelse, self)
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
        run_visitor(target, reader)


def parameters_of(params: cst.Parameters) -> List[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def read_name_nodes(node: cst.CSTNode) -> List[cst.Name]:
    """The ``Name`` nodes ``node`` reads, in visit order (a new list: the caller may change it)."""
    return list(_names_read(node))


@tree_memo  # asked by several rules and rewrites for the same nodes
def _names_read(node: cst.CSTNode) -> Tuple[cst.Name, ...]:
    reader = _Reads()
    run_visitor(node, reader)
    return tuple(reader.names)


class BodyBindings(NamedTuple):
    """The statements of a function's body and of its blocks (nested ``def``s and classes not entered), in
    source order, each with the names it binds (``written_names``); and the names bound more than once (by two
    statements, or by an augmented assignment)."""

    statements: Tuple[Tuple[cst.BaseStatement, FrozenSet[str]], ...]
    rebound: FrozenSet[str]


@tree_memo
def body_bindings(func: cst.FunctionDef) -> BodyBindings:
    """``BodyBindings`` of ``func``: read by every value model of the function (one per argument-kind combination)
    and by the environments that read its ``self.<attr>`` writes."""
    statements = tuple((stmt, frozenset(written_names(stmt)))
                       for stmt in walk_statements(suite_statements(func.body), into_defs=False))
    seen: Set[str] = set()
    again: Set[str] = set()
    for stmt, bound in statements:
        for name in bound:
            (again if name in seen else seen).add(name)
        if type(stmt) is cst.SimpleStatementLine:  # ``x += 1`` rebinds x
            again.update(n for small in stmt.body if type(small) is cst.AugAssign
                         for n in target_names(small.target, include_starred=True))
    return BodyBindings(statements, frozenset(again))


def forget_reads() -> None:
    """Let go of the nodes the memos of the trees' facts keep (``ms_lint.treememo``; a check of another file
    needs none of them)."""
    _names_read.cache_clear()
    forget()


def read_names(node: cst.CSTNode) -> Set[str]:
    return {name.value for name in read_name_nodes(node)}


def written_names(stmt: cst.CSTNode) -> List[str]:
    """Names a simple statement (or a compound statement's header) binds."""
    names: List[str] = []
    kind = type(stmt)  # libcst's node classes are final: ``type(x) is`` spares ``isinstance``'s ABC machinery
    if kind is cst.SimpleStatementLine:
        for small in stmt.body:
            small_kind = type(small)
            if small_kind is cst.Assign:
                for target in small.targets:
                    names.extend(target_names(target.target, include_starred=True))
            elif small_kind is cst.AnnAssign or small_kind is cst.AugAssign:
                names.extend(target_names(small.target, include_starred=True))
            elif ((small_kind is cst.Import or small_kind is cst.ImportFrom)
                  and type(small.names) is not cst.ImportStar):
                for alias in small.names:
                    local = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(local, cst.Name):
                        names.append(local.value)
                    elif isinstance(local, cst.Attribute):
                        names.append(_head(local))
    elif kind is cst.For:
        names.extend(target_names(stmt.target, include_starred=True))
    elif kind is cst.FunctionDef or kind is cst.ClassDef:
        names.append(stmt.name.value)
    elif kind is cst.With:
        for item in stmt.items:
            if item.asname is not None:
                names.extend(target_names(item.asname.name, include_starred=True))
    return names


def statement_bindings(stmt: cst.BaseStatement) -> List[str]:
    """Names one statement binds itself; for a compound statement, its header only (its nested statements are
    read one by one): ``written_names``' and ``except ... as``, ``match`` captures, ``:=``, ``del``, ``global`` /
    ``nonlocal`` (each counts as a binding)."""
    names = list(written_names(stmt))
    if isinstance(stmt, cst.SimpleStatementLine):
        parts: List[cst.CSTNode] = [stmt]
    else:
        parts = [part for part in (getattr(stmt, "test", None), getattr(stmt, "iter", None),
                                   getattr(stmt, "subject", None)) if part is not None]
        parts += [item.item for item in getattr(stmt, "items", ())]
        for handler in getattr(stmt, "handlers", ()):
            if handler.name is not None:
                names.extend(node.value for node in find(handler.name.name, cst.Name))
        for case in getattr(stmt, "cases", ()):
            for capture in find(case.pattern, (cst.MatchAs, cst.MatchStar, cst.MatchMapping)):
                name = capture.rest if isinstance(capture, cst.MatchMapping) else capture.name
                if name is not None:
                    names.append(name.value)
    for part in parts:
        for found in find(part, (cst.NamedExpr, cst.Del, cst.Global, cst.Nonlocal), prune=(cst.Lambda,)):
            if isinstance(found, (cst.Global, cst.Nonlocal)):
                names.extend(item.name.value for item in found.names)
            else:
                names.extend(node.value for node in find(found.target, cst.Name))
    return names


def local_bindings(func: cst.FunctionDef, name: str) -> List[cst.BaseExpression]:
    """The values plain ``name = value`` statements of ``func`` (nested definitions left out) assign to ``name``;
    empty when anything else binds it too (a parameter, ``name += ...``, unpacking, ``for name in``...)."""
    if name in {param.name.value for param in parameters_of(func.params)}:
        return []
    found: List[cst.BaseExpression] = []
    for stmt in walk_statements(suite_statements(func.body), into_defs=False):
        if name not in written_names(stmt):
            continue
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)):
            return []
        found.append(small.value)
    return found


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
    return {p.name.value for p in parameters_of(func.params)} | assigned_in(suite_statements(func.body))


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
        elif isinstance(stmt, (cst.For, cst.If)):
            inner = _reads_before_binding(stmt, pending)
            live.update(inner)
            pending -= inner
        else:
            inner = read_names(stmt)  # anything mentioned inside a compound statement may be read
            live.update(pending & inner)
            pending -= inner


def _reads_before_binding(stmt: cst.BaseStatement, names: Set[str]) -> Set[str]:
    """Which of ``names`` ``stmt`` may read before binding them. A ``for`` body reads its target only after an
    iteration bound it, and a statement in a block only sees what the statements before it left; bindings inside
    a loop or a branch do not end a name's life after it (it may not run)."""
    if not names:
        return set()
    if isinstance(stmt, cst.SimpleStatementLine):
        return names & read_names(stmt)
    if isinstance(stmt, cst.For) and not stmt.asynchronous:
        targets = {n.value for n in _names_in(stmt.target)}
        found = names & read_names(stmt.iter)
        found |= _block_reads(stmt.body, names - targets)
        if stmt.orelse is not None:
            found |= _block_reads(stmt.orelse.body, names)
        return found
    if isinstance(stmt, cst.If):
        found = names & read_names(stmt.test) | _block_reads(stmt.body, names)
        if isinstance(stmt.orelse, cst.If):
            found |= _reads_before_binding(stmt.orelse, names)
        elif stmt.orelse is not None:
            found |= _block_reads(stmt.orelse.body, names)
        return found
    return names & read_names(stmt)


def _block_reads(block: cst.BaseSuite, names: Set[str]) -> Set[str]:
    pending, found = set(names), set()
    for stmt in suite_statements(block):
        hits = _reads_before_binding(stmt, pending)
        found |= hits
        pending -= hits
        if isinstance(stmt, cst.SimpleStatementLine):
            pending -= set(written_names(stmt))
    return found


def _names_in(target: cst.CSTNode) -> List[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    found: List[cst.Name] = []
    for child in all_children(target):
        found.extend(_names_in(child))
    return found


def _scan_loop_again(loop: cst.BaseStatement, pending: Set[str], live: Set[str]) -> None:
    """The enclosing loop runs its body again: what it may read before binding it."""
    if isinstance(loop, cst.For):
        inner = _reads_before_binding(loop, pending)
    elif isinstance(loop, cst.While):
        inner = pending & read_names(loop.test) | _block_reads(loop.body, pending)
        if loop.orelse is not None:
            inner |= _block_reads(loop.orelse.body, pending)
    else:
        inner = pending & read_names(loop)
    live.update(inner)
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
        if type(current) is cst.FunctionDef and wanted & _declared_names(current):
            return True
        current = context.parent(current)
    return False


@tree_memo
def _declared_names(func: cst.FunctionDef) -> FrozenSet[str]:
    """The names ``global`` and ``nonlocal`` statements anywhere in the function's body declare."""
    return frozenset(item.name.value for decl in find(func.body, (cst.Global, cst.Nonlocal))
                     for item in decl.names)  # type: ignore[attr-defined]


@tree_memo
def own_code_names(func: cst.FunctionDef) -> FrozenSet[str]:
    """The names the function's own code writes (``Name`` nodes of its body outside nested functions and
    classes, which have their own value models)."""
    return frozenset(name.value for name in find(func.body, cst.Name, prune=(cst.FunctionDef, cst.ClassDef)))


def contains_node(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    """Is ``target`` (by identity) ``root`` or inside it?"""
    return any(found is target for found in find(root, type(target)))


def enclosing_statement(context: ModuleContext, node: cst.CSTNode) -> Optional[cst.BaseStatement]:
    """The statement (simple line or compound) that holds ``node`` directly in a block."""
    current: Optional[cst.CSTNode] = node
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        current = context.parent(current)
    return current  # type: ignore[return-value]


def number_start(context: ModuleContext, stmt: cst.BaseStatement, name: str) -> Optional[str]:
    """The literal when the last binding of ``name`` before ``stmt`` in its block is ``name = <number literal>``
    (``0``, ``0.0``, ``-1``): the value a loop starting there carries in is a Python number, not a Tensor."""
    block, index = statement_block(context, stmt)
    if block is None or index is None:
        return None
    for prior in reversed(block[:index]):
        if name not in assigned_in([prior]):
            continue
        if isinstance(prior, cst.SimpleStatementLine) and len(prior.body) == 1 \
                and isinstance(prior.body[0], cst.Assign) and len(prior.body[0].targets) == 1:
            value = prior.body[0].value
            inner = value.expression if isinstance(value, cst.UnaryOperation) else value
            if isinstance(inner, (cst.Integer, cst.Float)):
                return code_of(value)
        return None
    return None
