"""Everything a rule may ask about the module being checked, computed once per file."""
from __future__ import annotations

import io
import itertools
import re
import tokenize
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

import libcst as cst

from ms_lint.config import Config
from ms_lint.cstutil import bind_arguments, param_names, positional_params
from ms_lint.diagnostics import ImportRequest
from ms_lint.names import ImportTable
from ms_lint.scope import GraphScope, TreeFacts
from ms_lint.treememo import tree_memo
from ms_lint.walk import find
from ms_lint.analysis.const_paths import reachable_returns
from ms_lint.analysis.dataflow import own_code_names
from ms_lint.analysis.values import (
    ClassAttributes, ExpressionKinds, FunctionValues, Kind, ModuleConstants, constant_returns, is_literal,
    return_elements, return_kind, root_param_kinds,
)


def code_identifiers(text: str) -> Set[str]:
    """The names ``text`` uses on their own: every NAME token (keywords too) outside strings and comments that
    does not follow a dot (``ops`` in ``mindspore.ops`` or ``x.ops`` is an attribute, not a name of the module).
    A file that does not tokenize (it parsed, so this is rare) counts every word not after a dot as used, which
    only makes spellings more cautious."""
    names: Set[str] = set()
    after_dot = False
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and not after_dot:
                names.add(tok.string)
            if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                after_dot = tok.type == tokenize.OP and tok.string == "."
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set(re.findall(r"(?<![\w.])[A-Za-z_]\w*", text))
    return names


# MultitypeFuncGraph registration names of Python values (``@op.register("Number", "Tensor")``).
PYTHON_TYPES = {"Number", "Bool", "String", "Int", "Float", "UInt", "Int32", "Int64", "Float32", "Float64", "None"}


class ModuleContext:
    def __init__(self, module: cst.Module, text: str, path: str, config: Config, project=None,
                 known: Optional[TreeFacts] = None):
        """``known``: what an earlier scope of the same document worked out from its trees alone
        (``GraphScope.tree_facts``), for the editor, whose incremental parser keeps the nodes of the statements
        an edit left alone."""
        self.module = module
        self.text = text
        self._identifiers: Optional[Set[str]] = None
        self.path = path
        self.config = config
        self.project = project  # ms_lint.analysis.project.ProjectView, or None for a file analysed alone
        self.imports = ImportTable(module, path)
        if project is not None:
            self.imports.reexported = project.index.mindspore_name
        self.scope = GraphScope(module, self.imports, config.graph_mode, project, known, text)
        self.constants = ModuleConstants(module)
        self.attributes = ClassAttributes(self.scope, self.imports, self.constants, project)
        self.parents: Dict[cst.CSTNode, cst.CSTNode] = {}
        self._values: Dict[cst.FunctionDef, FunctionValues] = {}
        self._param_stack: set = set()
        self._returns: Dict[Tuple[cst.FunctionDef, tuple], Kind] = {}
        self._returning: Set[cst.FunctionDef] = set()
        self._elements: Dict[Tuple[cst.FunctionDef, tuple], Optional[Tuple[Kind, ...]]] = {}
        self._reachable: Dict[Tuple[cst.FunctionDef, tuple], Optional[List[cst.Return]]] = {}  # ``const_paths``
        self._constants: Dict[Tuple[cst.FunctionDef, tuple], Optional[Tuple[bool, ...]]] = {}
        self._local_names: Optional[Set[str]] = None
        self._class_kinds: Dict[Optional[str], ExpressionKinds] = {}

    def calls_in(self, func: cst.FunctionDef) -> List[cst.Call]:
        """Every call in ``func``'s body, in visit order (nested functions included; asked for each sub-cell and
        helper whose call sites the function may hold, so walked once: ``GraphScope.calls_in``)."""
        return self.scope.calls_in(func)

    # -- the value model ----------------------------------------------------------------------------
    def values(self, func: cst.FunctionDef) -> FunctionValues:
        """The value model of a graph function (parameter kinds come from its call sites for helpers)."""
        if func not in self._values:
            self._values[func] = self._model(func, self._param_kinds(func))
        return self._values[func]

    def class_kinds(self, func: cst.FunctionDef) -> ExpressionKinds:
        """Kinds of expressions that read nothing of ``func`` (``values.reads_no_locals``: ``self.has_bias``,
        ``self.k > 1``): the same as ``values(func).kind`` gives them, without building the value model."""
        owner = self.scope.owner_of.get(func)
        found = self._class_kinds.get(owner)
        if found is None:
            found = self._class_kinds[owner] = ExpressionKinds(self.imports, self.constants, self.attributes, owner)
            found.returns = self  # ``self.<property>`` reads what the getter returns, as ``values(func)`` does
        return found

    def _model(self, func: cst.FunctionDef, param_kinds: Dict[str, Kind]) -> FunctionValues:
        return FunctionValues(self.scope, self.imports, self.constants, self.attributes, func, param_kinds,
                              returns=self)

    def return_kind(self, func: cst.FunctionDef, param_kinds: Dict[str, Kind]) -> Kind:
        """What an in-module function returns when called with arguments of these kinds (cached per kinds;
        UNKNOWN for a function already being evaluated, so recursion ends)."""
        return self._result_of(self._returns, return_kind, Kind.UNKNOWN, func, param_kinds)

    def return_elements(self, func: cst.FunctionDef, param_kinds: Dict[str, Kind],
                        constants: Optional[Dict[str, object]] = None) -> Optional[Tuple[Kind, ...]]:
        """The item kinds of the tuple every ``return`` of an in-module function gives (``return res, found``);
        with ``constants`` (parameters a call fills with literals), of the returns such a call can reach
        (``const_paths.reachable_returns``), None when they rule none out."""
        if not constants:
            return self._result_of(self._elements, return_elements, None, func, param_kinds)
        key = (func, tuple(sorted((name, repr(value)) for name, value in constants.items())))
        if key not in self._reachable:
            self._reachable[key] = reachable_returns(func, constants)
        reachable = self._reachable[key]
        if reachable is None:
            return None
        return self._result_of(self._elements, lambda model: return_elements(model, reachable), None, func,
                               param_kinds, tuple(id(node) for node in reachable))  # (what the reading depends on)

    def constant_returns(self, func: cst.FunctionDef, param_kinds: Dict[str, Kind]) -> Optional[Tuple[bool, ...]]:
        """Which items of the tuple every ``return`` of an in-module function gives are constants everywhere."""
        return self._result_of(self._constants, constant_returns, None, func, param_kinds)

    def _result_of(self, table: dict, read, recursing, func: cst.FunctionDef, param_kinds: Dict[str, Kind],
                   also: tuple = ()):
        """``read(model)`` of the function's value model for these argument kinds, cached in ``table`` (under
        ``also`` too: what else ``read`` depends on); ``recursing`` while the function is already being
        evaluated."""
        key = (func, tuple(sorted((name, kind.value) for name, kind in param_kinds.items())), *also)
        if key in table:
            return table[key]
        if func in self._returning:
            return recursing
        self._returning.add(func)
        try:
            found = read(self._model(func, param_kinds))
        finally:
            self._returning.discard(func)
        table[key] = found
        return found

    def _param_kinds(self, func: cst.FunctionDef) -> Dict[str, Kind]:
        info = self.scope.functions.get(func)
        bound = self.scope.takes_self(func)
        if info is None or info.is_root:
            kinds = root_param_kinds(func, self.imports, bound, self.scope.classes)
            if info is not None and func.name.value == "construct" and self.project is not None:
                kinds.update(self._sub_cell_argument_kinds(func, info.owner))
            elif info is not None and info.reason.startswith("decorated"):
                kinds.update(self._graph_caller_kinds(func, bound))
            return kinds
        # A helper: a parameter is a Tensor only when every call site in graph code passes one.
        if func in self._param_stack:
            return {}
        if not _reads_parameters(func, bound):
            return {}  # no kind of a parameter is ever asked here: its callers (other modules) need not be read
        self._param_stack.add(func)
        try:
            return self._param_kinds_from_calls(func, bound)
        finally:
            self._param_stack.discard(func)

    def _sub_cell_argument_kinds(self, func: cst.FunctionDef, owner: Optional[str]) -> Dict[str, Kind]:
        """A Cell's ``construct`` called as a sub-cell by graph code of the project (``self.block(x, c)``): a
        parameter every such call passes the same kind of value takes that kind (a Python int computed from a
        shape stays an int; a Tensor step passed for a parameter annotated ``int`` is a Tensor)."""
        if owner is None or func in self._param_stack:
            return {}
        self._param_stack.add(func)
        try:
            sites = self.project.construct_call_sites(owner)
            if not sites:
                return {}
            seen = _kinds_passed(func, True, sites)
            if seen is None:
                return {}
            return {name: found[0] for name, found in seen.items()
                    if len(found) == len(sites) and len(set(found)) == 1
                    and found[0] in (Kind.TENSOR, Kind.CONST, Kind.TENSOR_SEQ)}
        finally:
            self._param_stack.discard(func)

    def _graph_caller_kinds(self, func: cst.FunctionDef, bound: bool) -> Dict[str, Kind]:
        """A ``@jit`` function that graph code of the project calls (an optimizer's ``construct`` calling its
        ``@jit`` ``implementation`` with ``group["weight_decay"]``): the call is compiled into the caller's graph
        and each argument keeps what the caller passes, a Python number staying a constant. A parameter is a
        Tensor (the entry-point guess) only where some such call passes a Tensor; where every call passes a
        constant it is a constant, otherwise unknown. Nothing changes for a function no graph code calls, or
        when a call cannot be matched to the parameters."""
        if func in self._param_stack:
            return {}
        sites = [(self, site.caller, site.call) for site in self.scope.call_sites.get(func, [])
                 if site.caller is not func]
        if self.project is not None:
            external = self.project.external_call_sites(func, self.scope.owner_of.get(func))
            if external is None:
                return {}
            sites += external
        if not sites:
            return {}
        self._param_stack.add(func)
        try:
            seen = _kinds_passed(func, bound, sites)
            if seen is None:
                return {}
            kinds: Dict[str, Kind] = {}
            for name, found in seen.items():
                if len(found) != len(sites) or Kind.TENSOR in found or Kind.TENSOR_SEQ in found:
                    continue  # not passed by every call, or a Tensor somewhere: the entry-point kind stands
                kinds[name] = Kind.CONST if set(found) == {Kind.CONST} else Kind.UNKNOWN
            return kinds
        finally:
            self._param_stack.discard(func)

    def sequence_passed_for(self, func: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
        """An argument that graph code of the project passes for ``func``'s parameter ``name`` and that is a Python
        list or tuple of Tensors (``[h] * n``, a list comprehension, a name bound to one), or None. A ``construct``
        annotated ``x: Tensor`` may still be called as a sub-cell with a list: dgmr's ``ConvGRU``."""
        owner = self.scope.owner_of.get(func)
        sites = [(self, site.caller, site.call) for site in self.scope.call_sites.get(func, [])]
        if func.name.value == "construct" and owner is not None and self.project is not None:
            sites += self.project.construct_call_sites(owner) or []
        for context, caller_def, call in sites:
            binding = bind_arguments(func, self.scope.takes_self(func), call)
            if binding is None:
                continue
            caller = context.values(caller_def)
            for param, value in binding[0]:
                if param == name and (_python_sequence(value) or caller.kind(value) == Kind.TENSOR_SEQ
                                      or _bound_to_sequence(caller_def, value)):
                    return value
        return None

    def _param_kinds_from_calls(self, func: cst.FunctionDef, bound: bool) -> Dict[str, Kind]:
        params = positional_params(func, bound)
        observed: List[Dict[str, Kind]] = []  # one per call site: what it passes each parameter
        sites: Iterable = [(self, site.caller, site.call) for site in self.scope.call_sites.get(func, [])]
        if self.project is not None:  # graph code in other modules that calls this function
            sites = itertools.chain(sites, self.project.each_external_call_site(func, self.scope.owner_of.get(func)))
        unknown = _UnknownParams(func, bound)
        for site in sites:
            if site is None:  # a caller that cannot be read
                return {}
            context, caller_def, call = site
            binding = bind_arguments(func, bound, call)
            if binding is None:
                return {}
            caller = context.values(caller_def)
            observed.append({name: caller.handed_kind(value) for name, value in binding[0]})
            if unknown.all_after(observed[-1]):
                # every parameter is UNKNOWN whatever the other sites pass: the same as no kinds. The callers not
                # read are modelled when first asked, outside this helper's recursion guard: in a cycle of helpers
                # calling each other such a model may see more than it would have here (findings on the three
                # benchmark corpora: identical, benchmarks/diff_engines.py)
                return {}
        registered = self.scope.registered_types.get(func, [])
        for site in self.scope.mapped_sites.get(func, []):  # hyper_map(partial(op, a), seq): op's overloads
            caller = self.values(site.caller)
            passed = {}
            for position, param in enumerate(params):
                if position < len(site.bound):
                    passed[param.name.value] = caller.kind(site.bound[position])
                elif position - len(site.bound) < len(site.sequences):
                    sequence = caller.kind(site.sequences[position - len(site.bound)])
                    passed[param.name.value] = {Kind.TENSOR_SEQ: Kind.TENSOR, Kind.CONST: Kind.CONST}.get(
                        sequence, Kind.UNKNOWN)
                # MindSpore picks this overload only for arguments of the registered types: a "Number", "Bool" or
                # "String" parameter is a Python value whatever the caller seems to pass; "Tensor" ones are what
                # the caller passes (a tuple of Python flags registered as "Tensor" stays a constant).
                declared = registered[position] if position < len(registered) else None
                if declared in PYTHON_TYPES:
                    passed[param.name.value] = Kind.CONST
                elif declared is not None and declared != "Tensor":
                    passed[param.name.value] = Kind.UNKNOWN
            observed.append(passed)
        kinds: Dict[str, Kind] = {}
        for name in {name for passed in observed for name in passed}:
            found = [passed.get(name) for passed in observed]
            unique = set(found)
            kinds[name] = found[0] if len(unique) == 1 and found[0] is not None else Kind.UNKNOWN
        for param in params:  # parameters no call site passes take their default
            if param.name.value not in kinds and param.default is not None:
                kinds[param.name.value] = Kind.CONST if is_literal(param.default) else Kind.UNKNOWN
        return kinds

    # -- tree navigation -------------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """Parent of a node inside graph code (recorded by the engine's walk)."""
        return self.parents.get(node)

    def enclosing_function(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, cst.FunctionDef):
            current = self.parents.get(current)
        return current

    # -- spelling names for rewrites --------------------------------------------------------------------
    def spell(self, qualified_name: str) -> Optional[Tuple[str, Tuple[ImportRequest, ...]]]:
        """How a rewrite should write ``qualified_name`` here, and the import to add if one is needed.

        Reuses the module's aliases (``ms.vmap`` with ``import mindspore as ms``); otherwise imports the
        parent (``from mindspore import ops`` for ``mindspore.ops.where``) or the name itself, never
        shadowing a name the module already uses. None when there is no safe spelling.
        """
        existing = self.existing_reference(qualified_name)
        if existing is not None:
            return existing, ()
        parts = qualified_name.split(".")
        if len(parts) == 1:
            name = parts[0]
            return (name, (ImportRequest(f"import {name}"),)) if not self._name_used(name) else None
        if len(parts) >= 3:
            parent, child = parts[-2], ".".join(parts[:-2])
            if not self._name_used(parent):
                return f"{parent}.{parts[-1]}", (ImportRequest(f"from {child} import {parent}"),)
        else:
            name = parts[-1]
            if not self._name_used(name):
                return name, (ImportRequest(f"from {parts[0]} import {name}"),)
        top = parts[0]
        if not self._name_used(top):
            return qualified_name, (ImportRequest(f"import {top}"),)
        return None

    def existing_reference(self, qualified_name: str) -> Optional[str]:
        """How the module's own imports spell ``qualified_name`` (``ms.vmap``), never through an alias that some
        function shadows; None when they do not."""
        return self.imports.local_reference(qualified_name, avoid=self.function_local_names())

    def function_local_names(self) -> Set[str]:
        """Names some function binds as a parameter or by assignment: an import alias of the same name is
        shadowed there (``def f(x, ops)``), so a rewrite must not rely on it."""
        if self._local_names is None:
            names: Set[str] = set()
            for node in self.scope.local_binders:  # every def, and each assignment target inside one
                names.update(_binder_names(node))
            self._local_names = names
        return self._local_names

    def _name_used(self, name: str) -> bool:
        """Does the module's code (not its strings or comments) use ``name`` as an identifier anywhere? A new
        import of ``name`` would then shadow or be shadowed; a docstring that mentions "Tensor" does not count."""
        if self._identifiers is None:
            self._identifiers = code_identifiers(self.text)
        return name in self._identifiers


@tree_memo
def _binder_names(node: cst.CSTNode) -> FrozenSet[str]:
    """A def's parameters; every name in an assignment target."""
    if type(node) is cst.FunctionDef:
        return frozenset(param_names(node))
    return frozenset(n.value for n in find(node, cst.Name))


def _kinds_passed(func: cst.FunctionDef, bound: bool, sites) -> Optional[Dict[str, List[Kind]]]:
    """Parameter -> the kind each call site passes it, read in the caller's value model; ``sites`` are
    (caller's context, caller def, call). None when a call cannot be matched to the parameters (an unpacked
    argument, one no named parameter takes)."""
    seen: Dict[str, List[Kind]] = {}
    for context, caller_def, call in sites:
        binding = bind_arguments(func, bound, call)
        if binding is None or binding[1]:
            return None
        caller = context.values(caller_def)
        for name, value in binding[0]:
            seen.setdefault(name, []).append(caller.kind(value))
    return seen


def _reads_parameters(func: cst.FunctionDef, bound: bool) -> bool:
    """Does the function's own code (not a nested function's or class's: those have their own value models)
    name one of its named parameters? ``_get_cache_prim(cls)`` uses ``cls`` only in the functions it returns."""
    names = {param.name.value for param in positional_params(func, bound)}
    names.update(param.name.value for param in func.params.kwonly_params)  # ``gate(x, score=s)``
    return bool(names) and not names.isdisjoint(own_code_names(func))


def _python_sequence(value: cst.BaseExpression) -> bool:
    """A list or tuple display, a list comprehension, or one multiplied by a number (``[h] * n``)."""
    if isinstance(value, (cst.List, cst.Tuple, cst.ListComp)):
        return True
    return isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply) and (
        _python_sequence(value.left) or _python_sequence(value.right))


def _bound_to_sequence(func: cst.FunctionDef, value: cst.BaseExpression) -> bool:
    """``value`` is a name some plain assignment in ``func`` binds to a Python sequence (``states = [h] * n``)."""
    if not isinstance(value, cst.Name):
        return False
    for assign in find(func.body, cst.Assign):
        if any(isinstance(t.target, cst.Name) and t.target.value == value.value for t in assign.targets) \
                and _python_sequence(assign.value):
            return True
    return False


class _UnknownParams:
    """Which parameters of a helper are UNKNOWN whatever the call sites not read yet pass
    (``ModuleContext._param_kinds_from_calls``): one passed two kinds, or passed UNKNOWN, or left out by one site
    and passed by another; or passed by no site so far and without a literal default (it ends UNKNOWN whether a
    later site passes it or none does). When all are, reading the other callers changes nothing."""

    def __init__(self, func: cst.FunctionDef, bound: bool):
        self.names = sorted(param_names(func))
        self.literal_defaults = {param.name.value for param in positional_params(func, bound)
                                 if param.default is not None and is_literal(param.default)}
        self.passed: Dict[str, Set[Optional[Kind]]] = {name: set() for name in self.names}

    def all_after(self, passed: Dict[str, Kind]) -> bool:
        """Add one more site's kinds; are all parameters UNKNOWN now, whatever comes next?"""
        for name in self.names:
            self.passed[name].add(passed.get(name))  # None: not passed at this site
        return all(self._settled(name) for name in self.names)

    def _settled(self, name: str) -> bool:
        kinds = self.passed[name]
        if kinds == {None}:
            return name not in self.literal_defaults
        return len(kinds) > 1 or Kind.UNKNOWN in kinds
