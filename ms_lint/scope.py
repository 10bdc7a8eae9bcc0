"""Which functions of a module MindSpore compiles as a static graph.

Roots: functions decorated with ``mindspore.jit`` (any alias, with or without arguments), functions passed
to ``mindspore.jit(fn)``, and ``construct`` of ``nn.Cell`` subclasses (unless ``graph-mode = "jit-only"``).
A module that sets ``mode=PYNATIVE_MODE`` and never GRAPH_MODE runs its Cells eagerly: their ``construct`` is
not a root there. Then, transitively within the module, the methods (``self.helper(x)``) and module functions
graph code calls.
``@constexpr``/``@_primexpr`` helpers run in Python at compile time and are never graph code.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.analysis.qualnames import CELL_NAME, is_cell_base  # noqa: F401 (re-exported)
from ms_lint.analysis.dataflow import parameters_of, written_names
from ms_lint.cstutil import (call_name_args, child_blocks, is_staticmethod, suite_statements, target_names,
                             walk_statements)
from ms_lint.names import ImportTable
from ms_lint.treememo import tree_memo
from ms_lint.walk import find, iter_with_ancestors

JIT_NAMES = {"mindspore.jit", "mindspore.ms_function"}
# What a call ``_find_roots`` reads (``JIT_NAMES``, ``mindspore.set_context``) must write, as its import or its name:
# ``ImportTable.qualify`` gives those names only to code that spells them.
_ROOT_CALL_WORDS = ("jit", "ms_function", "set_context")
COMPILE_TIME_DECORATORS = {"mindspore.ops.constexpr", "mindspore.ops._primexpr", "mindspore.ops.prim_attr_register"}


@dataclass
class ClassInfo:
    node: cst.ClassDef
    base_names: List[str]  # local class names among the bases, for in-module inheritance
    is_cell: bool = False
    methods: Dict[str, cst.FunctionDef] = field(default_factory=dict)


@dataclass
class FunctionInfo:
    """A graph function: why it is graph code, and the class it belongs to (None for module functions)."""

    node: cst.FunctionDef
    owner: Optional[str]
    reason: str
    is_root: bool


@dataclass
class ModuleCall:
    """A call anywhere in the module, with where it sits (found in one walk, shared by the scope and the rules)."""

    call: cst.Call
    top_index: int  # index in module.body of the top-level statement holding the call
    line: Optional[cst.SimpleStatementLine]  # the statement line when the call is that line's only statement
    function: Optional[cst.FunctionDef]  # innermost enclosing def (None at module level)


_CALL_CONTEXT = (cst.FunctionDef, cst.SimpleStatementLine)


_WALKED = (cst.Call, cst.FunctionDef, cst.AssignTarget)


# A top-level statement's calls (call, its line when it is the line's only statement, innermost def) and binders.
StatementCalls = Tuple[List[Tuple[cst.Call, Optional[cst.SimpleStatementLine], Optional[cst.FunctionDef]]],
                       List[cst.CSTNode]]


class TreeFacts:
    """What a scope works out from the trees of a module alone, by node: the value model's facts of each function
    (``values._FunctionFacts``) and the calls and binders of each top-level statement. Nodes are immutable, so
    the editor's incremental parser, which keeps the nodes of the statements an edit left alone, hands a
    document's last ``TreeFacts`` to its next scope (``GraphScope(known=...)``). (The calls in a function's body
    are remembered by ``ms_lint.treememo`` instead, the newer way to keep such facts across edits.)"""

    def __init__(self) -> None:
        self.function_facts: Dict[cst.FunctionDef, object] = {}
        self.statement_calls: Dict[cst.BaseStatement, StatementCalls] = {}


def find_module_calls(module: cst.Module, known: Optional[Dict[cst.BaseStatement, StatementCalls]] = None,
                      walked: Optional[Dict[cst.BaseStatement, StatementCalls]] = None
                      ) -> Tuple[List[ModuleCall], List[cst.CSTNode]]:
    """Every call in ``module``, in the order a visitor meets them; and, from the same walk, every function and
    every assignment target inside a function (``ModuleContext.function_local_names`` reads the names they
    bind). ``known``: statements walked before (``TreeFacts.statement_calls``); ``walked`` gets this module's."""
    found: List[ModuleCall] = []
    binders: List[cst.CSTNode] = []
    for index, stmt in enumerate(module.body):
        calls = known.get(stmt) if known else None
        if calls is None:
            calls = _statement_calls(stmt)
        if walked is not None:
            walked[stmt] = calls
        found.extend(ModuleCall(call, index, line, function) for call, line, function in calls[0])
        binders.extend(calls[1])
    return found, binders


def _statement_calls(stmt: cst.BaseStatement) -> StatementCalls:
    calls: List[Tuple[cst.Call, Optional[cst.SimpleStatementLine], Optional[cst.FunctionDef]]] = []
    binders: List[cst.CSTNode] = []
    for node, (function, line) in iter_with_ancestors(stmt, _WALKED, _CALL_CONTEXT):
        kind = type(node)
        if kind is cst.Call:
            sole = (line is not None and len(line.body) == 1 and isinstance(line.body[0], cst.Expr)
                    and line.body[0].value is node)
            calls.append((node, line if sole else None, function))  # type: ignore[arg-type]
        elif kind is cst.FunctionDef or function is not None:
            binders.append(node)
    return calls, binders


@dataclass
class CallSite:
    caller: Optional[cst.FunctionDef]  # None: module-level script code (``shapes.tensor_by_holders``)
    call: cst.Call
    bound_method: bool  # ``self.f(...)``: the callee's first parameter is ``self``


@dataclass
class MappedSite:
    """``hyper_map(F.partial(op, a, b), seq1, seq2)`` in graph code, for an overload ``@op.register(...)`` of a
    ``MultitypeFuncGraph``: its first parameters take ``a, b``, the next ones one element of each sequence."""

    caller: cst.FunctionDef
    bound: List[cst.BaseExpression]
    sequences: List[cst.BaseExpression]



def _blocks(body: Sequence[cst.BaseStatement]) -> Iterator[Sequence[cst.BaseStatement]]:
    """``body`` and every block nested in its compound statements (not in defs or classes), each a statement
    list."""
    yield body
    for stmt in body:
        if type(stmt) in (cst.FunctionDef, cst.ClassDef):
            continue
        for block in child_blocks(stmt):
            yield from _blocks(suite_statements(block))


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@tree_memo
def _other_bindings(func: cst.FunctionDef) -> FrozenSet[str]:
    """Names ``func``'s scope binds other than by a def: parameters, assignments, imports, ``for``/``with``
    targets, classes, ``global``/``nonlocal`` declarations, ``except ... as``, walrus targets."""
    names: Set[str] = {param.name.value for param in parameters_of(func.params)}
    for stmt in walk_statements(suite_statements(func.body), into_defs=False):
        if type(stmt) is not cst.FunctionDef:
            names.update(written_names(stmt))
    for node in find(func.body, (cst.Global, cst.Nonlocal, cst.ExceptHandler, cst.NamedExpr), prune=_SCOPES[:2]):
        if type(node) in (cst.Global, cst.Nonlocal):
            names.update(item.name.value for item in node.names)  # type: ignore[attr-defined]
        elif type(node) is cst.ExceptHandler and node.name is not None:  # type: ignore[attr-defined]
            names.update(target_names(node.name.name, include_starred=True))  # type: ignore[attr-defined]
        elif type(node) is cst.NamedExpr:
            names.update(target_names(node.target, include_starred=True))  # type: ignore[attr-defined]
    return frozenset(names)


@tree_memo
def own_scope_calls(func: cst.FunctionDef) -> FrozenSet[cst.Call]:
    """The calls of ``func``'s body outside its nested defs, classes, lambdas and comprehensions."""
    return frozenset(find(func.body, cst.Call, prune=_SCOPES))


@tree_memo
def _body_calls(func: cst.FunctionDef) -> List[cst.Call]:
    """``GraphScope.calls_in``: asked for the closure and again for each call-site question (a list callers must
    not change)."""
    return find(func.body, cst.Call)


class GraphScope:
    def __init__(self, module: cst.Module, imports: ImportTable, graph_mode: str = "auto", project=None,
                 known: Optional[TreeFacts] = None, text: Optional[str] = None):
        """``text``: the module's text, when the caller has it: a module that never writes ``jit``,
        ``ms_function`` or ``set_context`` has no call that makes a root or PyNative mode (``_find_roots``), and its
        calls are walked only if someone asks for them (``calls``)."""
        self.module = module
        self.project = project  # ms_lint.analysis.project.ProjectView of this module, or None (file alone)
        self.imports = imports
        self.graph_mode = graph_mode
        self.classes: Dict[str, ClassInfo] = {}
        self.module_functions: Dict[str, cst.FunctionDef] = {}
        self.owner_of: Dict[cst.FunctionDef, Optional[str]] = {}
        # defs nested in a function -> that function; the function -> its nested defs by name (a closure's calls
        # of its siblings resolve there: ``train_step_func(*args)`` in a ``@jit`` closure of a factory)
        self.enclosing: Dict[cst.FunctionDef, cst.FunctionDef] = {}
        self.local_defs: Dict[cst.FunctionDef, Dict[str, List[cst.FunctionDef]]] = {}
        self.functions: Dict[cst.FunctionDef, FunctionInfo] = {}
        self.call_sites: Dict[cst.FunctionDef, List[CallSite]] = {}
        self.mapped_sites: Dict[cst.FunctionDef, List[MappedSite]] = {}
        self.overloads: Dict[str, List[cst.FunctionDef]] = {}  # MultitypeFuncGraph name -> its registered functions
        self.registered_types: Dict[cst.FunctionDef, List[Optional[str]]] = {}  # overload -> "Tensor", "Number"...
        # what this scope works out from trees alone (``known``: the editor's last scope of the same document)
        self.tree_facts = TreeFacts()
        # the previous edit's calls by statement (an editor's document), until the walk has read them
        self._known_calls = known.statement_calls if known is not None else None
        self._for_editor = known is not None
        self._walked: Optional[Tuple[List[ModuleCall], List[cst.CSTNode]]] = None  # ``calls``, ``local_binders``
        self._calls_make_roots = text is None or any(word in text for word in _ROOT_CALL_WORDS)
        # Facts the value model derives from one function's tree alone (``ms_lint.analysis.values``), kept here so
        # the several models of one function (one per argument-kind combination) share them.
        self.function_facts = self.tree_facts.function_facts
        self._collect_definitions()
        if known is not None:  # the functions the edit left alone (same nodes) keep theirs
            self.function_facts.update(
                (func, facts) for func, facts in known.function_facts.items() if func in self.owner_of)
        self._collect_overloads()
        self._mark_cells()
        self._find_roots()
        self._add_project_graph_functions()
        self._close_over_calls()

    # -- definitions ---------------------------------------------------------------------------
    def _collect_definitions(self) -> None:
        """Module functions, and every class with its methods: nested classes and classes defined inside
        functions too, keyed by qualified name as the project index writes it (``Outer.Inner``,
        ``build.<locals>.Head``)."""
        self._collect_in(self.module.body, "", in_function=False)

    def _collect_in(self, body, prefix: str, in_function: bool) -> None:
        for stmt in body:
            kind = type(stmt)  # libcst's node classes are final: ``type(x) is`` spares the ABC machinery
            if kind is cst.FunctionDef:
                if not prefix:
                    self.module_functions[stmt.name.value] = stmt
                    self.owner_of[stmt] = None
                    self._collect_local_defs(stmt)
                self._collect_in(suite_statements(stmt.body), f"{prefix}{stmt.name.value}.<locals>.", True)
            elif kind is cst.ClassDef:
                qualname = f"{prefix}{stmt.name.value}"
                info = ClassInfo(node=stmt, base_names=[])
                for base in stmt.bases:
                    if isinstance(base.value, cst.Name):
                        info.base_names.append(base.value.value)
                for inner in suite_statements(stmt.body):
                    if type(inner) is cst.FunctionDef:
                        info.methods[inner.name.value] = inner
                        self.owner_of[inner] = qualname
                self.classes.setdefault(qualname, info)
                self._collect_in(suite_statements(stmt.body), f"{qualname}.", in_function)
                for inner in info.methods.values():
                    self._collect_local_defs(inner)
                    self._collect_in(suite_statements(inner.body), f"{qualname}.{inner.name.value}.<locals>.", True)
            # anything else (definitions under module-level ``if``/``try``/``with``/loops included): not collected

    def _collect_local_defs(self, func: cst.FunctionDef) -> None:
        """The defs of ``func``'s body, in its nested blocks too (``if task == "detect": def step(...)``), and
        theirs, each with the function it is local to. A def that a later def of its block replaces is left out
        of ``local_defs`` (no call reaches it); defs of one name in different blocks are all kept."""
        kept: Dict[str, List[cst.FunctionDef]] = {}
        for block in _blocks(suite_statements(func.body)):
            last: Dict[str, cst.FunctionDef] = {}
            for stmt in block:
                if type(stmt) is cst.FunctionDef:
                    self.enclosing[stmt] = func
                    last[stmt.name.value] = stmt
                    self._collect_local_defs(stmt)
            for name, stmt in last.items():
                kept.setdefault(name, []).append(stmt)
        if kept:
            self.local_defs[func] = kept

    def _collect_overloads(self) -> None:
        """``@op.register("Tensor", ...)`` on module functions, where ``op = ...MultitypeFuncGraph(...)``."""
        multitype = set()
        for stmt in self.module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if (isinstance(small, cst.Assign) and len(small.targets) == 1
                            and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call)
                            and self.imports.qualify(small.value.func) == "mindspore.ops.MultitypeFuncGraph"):
                        multitype.add(small.targets[0].target.value)
        for func in self.module_functions.values():
            for deco in func.decorators:
                call = deco.decorator
                if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                        and call.func.attr.value == "register" and isinstance(call.func.value, cst.Name)
                        and call.func.value.value in multitype):
                    self.overloads.setdefault(call.func.value.value, []).append(func)
                    self.registered_types[func] = [
                        arg.value.evaluated_value if isinstance(arg.value, cst.SimpleString) else None
                        for arg in call.args]

    def _mapped_overloads(self, call: cst.Call):
        """(overload name, partial-bound arguments, mapped sequences) for ``mapper(op, seqs...)`` or
        ``mapper(partial(op, args...), seqs...)``; None otherwise."""
        if not self.overloads or not call.args or any(a.keyword is not None or a.star for a in call.args):
            return None
        first = call.args[0].value
        if (self.imports.qualify(call.func) or "").endswith(".partial"):
            return None  # the partial itself: the call that applies it is the mapper
        if isinstance(first, cst.Name) and first.value in self.overloads:
            return first.value, [], [a.value for a in call.args[1:]]
        if (isinstance(first, cst.Call) and first.args and (self.imports.qualify(first.func) or "").endswith(".partial")
                and isinstance(first.args[0].value, cst.Name) and first.args[0].value.value in self.overloads
                and not any(a.keyword is not None or a.star for a in first.args)):
            return first.args[0].value.value, [a.value for a in first.args[1:]], [a.value for a in call.args[1:]]
        return None

    def _mark_cells(self) -> None:
        for qualname, info in self.classes.items():
            info.is_cell = any(is_cell_base(self.imports.qualify(base.value)) for base in info.node.bases)
            if not info.is_cell and self.project is not None:
                info.is_cell = self.project.is_cell_class(qualname)
        changed = True
        while changed:  # in-module inheritance: class B(A) where A is a Cell
            changed = False
            for info in self.classes.values():
                if not info.is_cell and any(
                    name in self.classes and self.classes[name].is_cell for name in info.base_names
                ):
                    info.is_cell = changed = True

    def is_cell_class(self, name: str) -> bool:
        """A class of this module, or (with a project) one imported from another module, that is a Cell."""
        if name in self.classes:
            return self.classes[name].is_cell
        return self.project is not None and self.project.is_imported_cell(name)

    def find_method(self, class_name: Optional[str], method: str) -> Optional[cst.FunctionDef]:
        """A method by name on a class or its in-module bases."""
        seen: Set[str] = set()
        pending = [class_name] if class_name else []
        while pending:
            name = pending.pop(0)
            if name in seen or name not in self.classes:
                continue
            seen.add(name)
            info = self.classes[name]
            if method in info.methods:
                return info.methods[method]
            pending.extend(info.base_names)
        return None

    # -- roots -------------------------------------------------------------------------------------
    def decorator_names(self, func: cst.FunctionDef) -> List[str]:
        names = []
        for deco in func.decorators:
            target = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
            qualified = self.imports.qualify(target)
            if qualified:
                names.append(qualified)
        return names

    def is_compile_time_helper(self, func: cst.FunctionDef) -> bool:
        return any(name in COMPILE_TIME_DECORATORS for name in self.decorator_names(func))

    def is_jit_call(self, call: cst.Call) -> bool:
        return self.imports.qualify(call.func) in JIT_NAMES

    def _pynative_only(self, calls: List[Tuple[cst.Call, Optional[str]]]) -> bool:
        """The module sets ``mode=PYNATIVE_MODE`` and never GRAPH_MODE (nor a mode it cannot read): its Cells run
        eagerly, so their ``construct`` is not compiled (``@jit`` code still is)."""
        modes = set()
        for call, _ in calls:
            if self.imports.qualify(call.func) != "mindspore.set_context":
                continue
            if any(arg.star for arg in call.args):
                return False  # set_context(**cfg): the mode may be GRAPH_MODE
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "mode":
                    value = arg.value
                    qualified = self.imports.qualify(value)
                    literal_one = isinstance(value, cst.Integer) and value.value == "1"
                    modes.add("pynative" if qualified == "mindspore.PYNATIVE_MODE" or literal_one else "other")
        return modes == {"pynative"}

    def _find_roots(self) -> None:
        calls = self._all_calls() if self._calls_make_roots else []
        constructs_compiled = self.graph_mode == "auto" and not self._pynative_only(calls) and not (
            self.project is not None and self.project.refuses_graph_mode())
        for func in self.enclosing:  # ``@ms.jit`` on a closure (a train step a factory function returns)
            if not self.is_compile_time_helper(func) and any(
                    name in JIT_NAMES for name in self.decorator_names(func)):
                self._add(func, None, f"decorated with mindspore.jit (in {self.enclosing[func].name.value})", True)
        for func, owner in self.owner_of.items():
            if self.is_compile_time_helper(func):
                continue
            if any(name in JIT_NAMES for name in self.decorator_names(func)):
                self._add(func, owner, "decorated with mindspore.jit", True)
            elif (
                constructs_compiled
                and owner is not None
                and func.name.value == "construct"
                and self.is_cell_class(owner)
                and not (self.project is not None and self.project.eager_cell(owner))
            ):
                self._add(func, owner, f"construct of nn.Cell subclass {owner}", True)
        # ``g = ms.jit(f)`` / ``ms.jit(self.f)`` anywhere in the module.
        for call, owner in calls:
            if not self.is_jit_call(call):
                continue
            args = call_name_args(call)
            if not args:
                continue
            target = self.resolve_callable(args[0].value, owner)
            if target is not None and not self.is_compile_time_helper(target[0]):
                self._add(target[0], self.owner_of.get(target[0]), "passed to mindspore.jit", True)

    def _add_project_graph_functions(self) -> None:
        """Functions of this module that code in other modules makes graph code (a base-class method that a
        subclass's ``construct`` calls, a helper imported by another module's ``@jit`` function). Their
        parameters take the kinds of their call sites here, or unknown: the callers are elsewhere."""
        if self.project is None:
            return
        external = self.project.graph_functions()
        if not external:
            return
        for func, owner in self.owner_of.items():
            why = external.get(f"{owner}.{func.name.value}" if owner else func.name.value)
            if why is not None and func not in self.functions and not self.is_compile_time_helper(func):
                if self.graph_mode == "jit-only" and why.startswith("construct"):
                    continue
                root = why.startswith(("construct", "decorated", "passed"))
                self._add(func, owner, why, root)

    @property
    def calls(self) -> List[ModuleCall]:
        """Every call of the module, in the order a visitor meets them: for the roots and the cache rules."""
        return self._walk()[0]

    @property
    def local_binders(self) -> List[cst.CSTNode]:
        """Every def, and every assignment target inside a def (``ModuleContext.function_local_names``)."""
        return self._walk()[1]

    def _walk(self) -> Tuple[List[ModuleCall], List[cst.CSTNode]]:
        """One walk of the whole module, on first use (kept by statement only for an editor's document, ``known``
        given: a second list of every call of the module, which the command line would hold for nothing)."""
        if self._walked is None:
            self._walked = find_module_calls(self.module, self._known_calls,
                                             self.tree_facts.statement_calls if self._for_editor else None)
            self._known_calls = None
        return self._walked

    def _all_calls(self) -> List[Tuple[cst.Call, Optional[str]]]:
        """Every call with the class whose body holds it (None outside classes)."""
        body = self.module.body
        owners = [stmt.name.value if isinstance(stmt, cst.ClassDef) else None for stmt in body]
        return [(info.call, owners[info.top_index]) for info in self.calls]

    def takes_self(self, func: cst.FunctionDef) -> bool:
        """A method called with its instance first: defined in a class and not ``@staticmethod``."""
        return self.owner_of.get(func) is not None and not is_staticmethod(func)

    def resolve_callable(self, expr: cst.BaseExpression, owner: Optional[str]):
        """``f`` -> module function f; ``self.f`` -> method f of the owner class. Returns (def, bound)."""
        kind = type(expr)
        if kind is cst.Name and expr.value in self.module_functions:
            return self.module_functions[expr.value], False
        if (
            kind is cst.Attribute
            and type(expr.value) is cst.Name
            and expr.value.value == "self"
            and owner is not None
        ):
            method = self.find_method(owner, expr.attr.value)
            if method is not None:
                return method, not is_staticmethod(method)
        return None

    def inside_graph_function(self, func: cst.FunctionDef) -> bool:
        """A def nested in a graph function (at any depth): the walk of that function's body reaches it."""
        outer = self.enclosing.get(func)
        while outer is not None:
            if outer in self.functions:
                return True
            outer = self.enclosing.get(outer)
        return False

    def local_callables(self, expr: cst.BaseExpression, caller: cst.FunctionDef
                        ) -> Optional[List[Tuple[cst.FunctionDef, bool]]]:
        """What the name ``f``, read in ``caller``'s own scope, names by Python's scoping: the defs local to
        ``caller`` or to the innermost function enclosing it that binds ``f`` (each with False: not bound); a
        name defined in two branches (``if task == "detect": def step ... else: def step ...``) gives both.
        ``[]`` when no function binds ``f`` (it is the module's); None when the function that binds it does so
        otherwise too (a parameter, an assignment, an import, ``global``/``nonlocal``): unknown."""
        if type(expr) is not cst.Name:
            return []
        name = expr.value
        scope: Optional[cst.FunctionDef] = caller
        while scope is not None:
            if name in _other_bindings(scope):
                return None
            found = self.local_defs.get(scope, {}).get(name)
            if found:
                return [(func, False) for func in found]
            scope = self.enclosing.get(scope)
        return []

    def _callees(self, expr: cst.BaseExpression, caller: cst.FunctionDef, owner: Optional[str],
                 in_own_scope: bool) -> List[Tuple[cst.FunctionDef, bool]]:
        """The defs a call of ``expr`` (or ``expr`` handed to a call) written in ``caller``'s body may run: local
        defs for a name read in the caller's own scope (``local_callables``), else what ``resolve_callable``
        finds. A name read inside a lambda, a comprehension or a nested def is resolved as before, module-wide:
        their own parameters and targets may shadow a local def (and a nested def is a caller of its own)."""
        if in_own_scope:
            local = self.local_callables(expr, caller)
            if local is None:
                return []
            if local:
                return local
        target = self.resolve_callable(expr, owner)
        return [target] if target is not None else []

    def _add(self, func: cst.FunctionDef, owner: Optional[str], reason: str, is_root: bool) -> None:
        if func not in self.functions:
            self.functions[func] = FunctionInfo(node=func, owner=owner, reason=reason, is_root=is_root)

    # -- transitive closure ----------------------------------------------------------------------------
    def _close_over_calls(self) -> None:
        pending = list(self.functions)
        while pending:
            caller = pending.pop()
            owner = self.functions[caller].owner
            own = own_scope_calls(caller) if caller in self.local_defs or caller in self.enclosing else ()
            for call in self.calls_in(caller):
                in_own_scope = call in own
                for callee, bound in self._callees(call.func, caller, owner, in_own_scope):
                    self.call_sites.setdefault(callee, []).append(CallSite(caller, call, bound))
                    self._reach(callee, caller, pending)
                # Functions handed to HyperMap/partial/vmap inside graph code are graph code too.
                for arg in call.args:
                    for ref in self._callees(arg.value, caller, owner, in_own_scope):
                        self._reach(ref[0], caller, pending)
                mapped = self._mapped_overloads(call)
                if mapped is not None:  # the overloads of a MultitypeFuncGraph a HyperMap applies
                    name, bound, sequences = mapped
                    for overload in self.overloads[name]:
                        self.mapped_sites.setdefault(overload, []).append(MappedSite(caller, bound, sequences))
                        self._reach(overload, caller, pending)

    def _reach(self, callee: cst.FunctionDef, caller: cst.FunctionDef, pending: List[cst.FunctionDef]) -> None:
        if callee in self.functions or self.is_compile_time_helper(callee):
            return
        self._add(callee, self.owner_of.get(callee), f"called from graph function {caller.name.value}", False)
        pending.append(callee)

    # -- queries ---------------------------------------------------------------------------------------
    def calls_in(self, func: cst.FunctionDef) -> List[cst.Call]:
        """Every call in ``func``'s body, in visit order (nested functions included), walked once per tree."""
        return _body_calls(func)

    def function_named(self, qualname: str) -> Optional[cst.FunctionDef]:
        """A module function (``helper``) or method (``Class.method``) by the index's qualified name."""
        owner, _, name = qualname.rpartition(".")
        if not owner:
            return self.module_functions.get(name)
        info = self.classes.get(owner)
        return info.methods.get(name) if info is not None else None

    def graph_functions(self) -> List[FunctionInfo]:
        return list(self.functions.values())

    def is_graph_function(self, func: cst.FunctionDef) -> bool:
        return func in self.functions
