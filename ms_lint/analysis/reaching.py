"""Which bindings of a local name reach each use of it: flow-sensitive kinds for names a function rebinds.

``record_grad = self.grad(net, weights)(x)`` gives a tuple of gradients, ``record_grad = self.clip(record_grad)``
keeps it one, and later ``grads = self.reducer(grads)`` may give something else: joined over the whole function
the name is "unknown" everywhere, and a per-gradient loop between two of those bindings goes unseen. Here each
use of a rebound name gets the set of bindings that can reach it along the statement structure: straight-line
code, both arms of an ``if``, a loop body run zero or more times (its bindings reach its own start again). The
value model (``ms_lint.analysis.values``) records each binding's kind and joins only the reaching ones at a use.

Conservative where the structure is not plain: names bound in a ``try``/``match``, by ``:=``, declared
``global``/``nonlocal``, or read inside nested functions and lambdas keep the function-wide join (``kind_at`` says
None). Comprehension variables are their own scope and are never tracked here. ``break``/``continue``/``return``
are treated as falling through, which only adds reaching bindings (an over-approximation, never a missed one).
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import written_names
from ms_lint.cstutil import all_params, suite_statements, target_names, walk_statements
from ms_lint.walk import find

ENTRY = 0  # the "binding" a use sees when no statement of the function bound the name before it
State = Dict[str, FrozenSet[int]]


class ReachingSites:
    """Which binding sites reach each use of the tracked names: a fact of the function's tree alone, so it is
    computed once per function and shared by every value model built for it (one per argument-kind combination
    a caller asks about)."""

    def __init__(self, func: cst.FunctionDef):
        statements = list(walk_statements(suite_statements(func.body), into_defs=False))
        counts: Dict[str, int] = {}
        for stmt in statements:
            for name in set(written_names(stmt)):
                counts[name] = counts.get(name, 0) + 1
        params = {p.name.value for p in all_params(func)}
        self.tracked: Set[str] = {n for n, c in counts.items() if c > 1 or n in params} - _untracked(func)
        self.sites: Dict[int, FrozenSet[int]] = {}  # id(Name use) -> reaching binding sites (statement ids)
        self.statements: Dict[int, cst.CSTNode] = {}  # statement id -> the statement (a binding site)
        if self.tracked:
            self._block(suite_statements(func.body), {})

    # -- the walk ---------------------------------------------------------------------------------------------------
    def _block(self, statements: Iterable[cst.BaseStatement], state: State) -> State:
        for stmt in statements:
            state = self._statement(stmt, state)
        return state

    def _bind(self, state: State, stmt: cst.CSTNode, names: Iterable[str]) -> State:
        self.statements[id(stmt)] = stmt
        state = dict(state)
        for name in names:
            if name in self.tracked:
                state[name] = frozenset({id(stmt)})
        return state

    def _statement(self, stmt: cst.BaseStatement, state: State) -> State:
        if isinstance(stmt, cst.SimpleStatementLine):
            self._uses(stmt, state)
            return self._bind(state, stmt, written_names(stmt))
        if isinstance(stmt, cst.If):
            self._uses(stmt.test, state)
            taken = self._block(suite_statements(stmt.body), state)
            if stmt.orelse is None:
                return _union(state, taken)
            other = (self._statement(stmt.orelse, state) if isinstance(stmt.orelse, cst.If)
                     else self._block(suite_statements(stmt.orelse.body), state))
            return _union(taken, other)
        if isinstance(stmt, (cst.For, cst.While)):
            head = stmt.iter if isinstance(stmt, cst.For) else stmt.test
            self._uses(head, state)
            after = state
            for _ in range(2):  # a second round sees the bindings the body hands to its own next iteration
                start = _union(state, after)
                if isinstance(stmt, cst.While):
                    self._uses(stmt.test, start)
                    inner = start
                else:
                    inner = self._bind(start, stmt, target_names(stmt.target, include_starred=True))
                after = self._block(suite_statements(stmt.body), inner)
            result = _union(state, after)
            if stmt.orelse is not None:
                result = self._block(suite_statements(stmt.orelse.body), result)
            return result
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self._uses(item.item, state)
            state = self._bind(state, stmt, written_names(stmt))
            return self._block(suite_statements(stmt.body), state)
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return self._bind(state, stmt, [stmt.name.value])
        return state  # try/match: their names are untracked, their uses keep the function-wide join

    def _uses(self, node: cst.CSTNode, state: State) -> None:
        """Record the reaching bindings of every tracked name read in ``node`` (targets, comprehension variables
        and nested scopes left out)."""
        skipped = _skipped_names(node)
        for name in find(node, cst.Name, prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if name.value in self.tracked and id(name) not in skipped:
                self.sites[id(name)] = state.get(name.value, frozenset({ENTRY}))


class ReachingBindings:
    """Reaching bindings of the names a function binds more than once (or binds and also takes as a parameter),
    with the kinds one value model records for each binding."""

    def __init__(self, func: cst.FunctionDef, parameter_kinds: Dict[str, "object"],
                 structure: Optional[ReachingSites] = None):
        structure = structure if structure is not None else ReachingSites(func)
        self.parameter_kinds = parameter_kinds  # name -> Kind of parameters (what ENTRY means for them)
        self.tracked = structure.tracked
        self.sites = structure.sites
        self.statements = structure.statements
        self.current: Dict[Tuple[int, str], List[object]] = {}  # kinds recorded in this pass
        self.previous: Dict[Tuple[int, str], List[object]] = {}  # ... and in the passes before

    # -- kinds, fed by the value model's passes -----------------------------------------------------------------
    def new_pass(self) -> None:
        self.previous.update(self.current)
        self.current = {}

    def record(self, stmt: cst.BaseStatement, name: str, kind) -> None:
        if name in self.tracked:
            self.current.setdefault((id(stmt), name), []).append(kind)

    def kind_at(self, use: cst.Name):
        """The join of the kinds of the bindings that reach this use; None when the name is not tracked here,
        or when a reaching binding has no kind yet (the caller then uses the function-wide join)."""
        sites = self.sites.get(id(use))
        if sites is None:
            return None
        from ms_lint.analysis.values import join  # (values imports this module)

        kinds: List[object] = []
        for site in sites:
            if site == ENTRY:
                if use.value in self.parameter_kinds:
                    kinds.append(self.parameter_kinds[use.value])
                continue  # a local read before any binding on this path: an error at run time, not a value
            found = self.current.get((site, use.value)) or self.previous.get((site, use.value))
            if found is None:
                return None
            kinds.extend(found)
        if not kinds:
            return None
        found = join(kinds)  # type: ignore[arg-type]
        if sites == {ENTRY}:
            # only the parameter's value reaches: what the function binds to the name later says nothing here
            # (``if max_len < 0: max_len = x.max()`` tests the argument, which the callers pass)
            return found
        # Unknown here says less than the function-wide join: a name that holds a Tensor on one path is one on
        # the others too in a graph (``done = self.false`` ... ``done, _ = self.env.step(a)``: MindSpore unifies
        # the bindings that meet at a branch or loop), so the caller falls back to that join.
        return None if found.value == "unknown" else found


def reaching_values(bindings: ReachingBindings, use: cst.Name) -> Optional[List[cst.BaseExpression]]:
    """The values every binding that reaches ``use`` assigns to its name, when each is a plain ``name = value``
    statement; None when the name is not tracked, may be unbound (a parameter's value) or is bound another way."""
    sites = bindings.sites.get(id(use))
    if not sites or ENTRY in sites:
        return None
    values: List[cst.BaseExpression] = []
    for site in sites:
        stmt = bindings.statements.get(site)
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1):
            return None
        target = stmt.body[0].targets[0].target
        if not (isinstance(target, cst.Name) and target.value == use.value):
            return None
        values.append(stmt.body[0].value)
    return values


def _union(a: State, b: State) -> State:
    merged = dict(a)
    for name, sites in b.items():
        merged[name] = merged.get(name, frozenset({ENTRY})) | sites
    for name in a:
        if name not in b:
            merged[name] = a[name] | {ENTRY}  # bound on one path only: the other path may not have bound it
    return merged


def _skipped_names(node: cst.CSTNode) -> Set[int]:
    """Name nodes in ``node`` that are not reads of the function's locals: assignment targets, attribute names
    (``x.name``), keyword names, and every name of a comprehension's own variables inside it."""
    skipped: Set[int] = set()
    comprehensions = []
    for found in find(node, _SKIP_NODES):  # one walk; the order does not matter (a set)
        if isinstance(found, cst.Attribute):
            skipped.add(id(found.attr))
        elif isinstance(found, cst.Arg):
            if found.keyword is not None:
                skipped.add(id(found.keyword))
        elif isinstance(found, _COMPREHENSIONS):
            comprehensions.append(found)
        else:  # an assignment's target
            inner = found.target
            if isinstance(inner, cst.Name):
                skipped.add(id(inner))
            elif isinstance(inner, (cst.Tuple, cst.List)):
                skipped.update(id(n) for n in find(inner, cst.Name) if not _inside_subscript_or_attribute(inner, n))
    for comp in comprehensions:
        own: Set[str] = set()
        clause = comp.for_in
        while clause is not None:
            own.update(target_names(clause.target, include_starred=True))
            clause = clause.inner_for_in
        skipped.update(id(n) for n in find(comp, cst.Name) if n.value in own)
    return skipped


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_SKIP_NODES = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Attribute, cst.Arg) + _COMPREHENSIONS


def _inside_subscript_or_attribute(root: cst.CSTNode, name: cst.Name) -> bool:
    """``a[i], b.x = ...``: ``i`` and ``b`` are reads, not bound names (rare; treated as targets otherwise)."""
    for node in find(root, (cst.Subscript, cst.Attribute)):
        if any(n is name for n in find(node, cst.Name)):
            return True
    return False


def _untracked(func: cst.FunctionDef) -> Set[str]:
    """Names whose bindings the walk cannot place: bound in a try/match, by ``:=``, global/nonlocal, or read by a
    nested function or lambda (which runs later, seeing whatever binding is current then)."""
    names: Set[str] = set()
    for node in find(func.body, _UNTRACKED_NODES):  # one walk; the order does not matter (a set)
        if isinstance(node, _TRY_NODES):
            for stmt in walk_statements([node], into_defs=False):
                names.update(written_names(stmt))
            names.update(t for handler in getattr(node, "handlers", ())
                         if handler.name is not None for t in target_names(handler.name.name))
        elif isinstance(node, cst.NamedExpr):
            names.update(target_names(node.target))
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            names.update(n.name.value for n in node.names)
        else:  # a nested function, lambda or class
            names.update(n.value for n in find(node, cst.Name))
    return names


_TRY_NODES = (cst.Try, cst.Match) if hasattr(cst, "Match") else (cst.Try,)
_UNTRACKED_NODES = _TRY_NODES + (cst.NamedExpr, cst.Global, cst.Nonlocal, cst.FunctionDef, cst.Lambda, cst.ClassDef)
