"""``if`` conditions the value model cannot take for a Tensor, told from the stdlib tree before libcst parses a file.

The screen (``ms_lint.analysis.screen``) keeps a graph function whose text holds an ``if`` unless every test in it
is cleared, and MSL201 reports a test only when ``values.FunctionValues.kind`` gives it TENSOR. :func:`never_tensor`
clears what no name decides (``x is None``); :func:`not_tensor` also clears what the value model decides without
the function's own bindings, by the same rules (``ExpressionKinds._kind_*``):

* ``x.shape``, ``x.ndim``, ``x.dtype``, ``self.training`` (``values.SHAPE_ATTRIBUTES``): CONST whatever ``x`` is;
  any other attribute but ``self.<attr>``, ``self.<holder>.<attr>`` and a Tensor view (``x.T``): CONST
  (``ms.float16``) or UNKNOWN (``config.use_bias``); subscripts of those;
* ``len(...)``, ``isinstance(...)`` and the other builtins ``_kind_Call`` takes for CONST, in a module that imports
  no such name (``ImportTable.qualify`` would then name it);
* ``self.<attr>`` in a method of class C (:class:`SelfAttributes`): ``ClassAttributes.kind`` joins the kinds of the
  values the methods of C and its in-module bases assign to it, and asks other modules only when they assign none;
  ``self.<holder>.<attr>`` likewise, cleared unless a method of C's chain binds ``self.<holder>`` to a call
  (``ClassAttributes.held_tensor``);
* comparisons, arithmetic, ``not``, ``and``/``or`` of those: ``_combine`` gives TENSOR only for a TENSOR operand;
* names (:class:`LocalNames`): one the function never binds, or binds only to what is cleared here.

Every expression cleared here is CONST or UNKNOWN to the value model, never a sequence of tensors either: a
subscript of one is cleared too, and an operand of one is never a tuple of tensors.
"""
from __future__ import annotations

import ast
import warnings
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from ms_lint.analysis.values import SHAPE_ATTRIBUTES, TENSOR_VIEW_ATTRIBUTES

# The builtins ``ExpressionKinds._kind_Call`` takes for CONST whatever their arguments are.
CONST_CALLS = frozenset({"len", "isinstance", "range", "hasattr", "type", "issubclass", "callable"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# ``match`` patterns that bind a name (Python 3.10+; none on 3.9, whose ``ast`` has no such node)
_MATCH_CAPTURES = tuple(getattr(ast, name) for name in ("MatchAs", "MatchStar") if hasattr(ast, name))
_MATCH_MAPPING = getattr(ast, "MatchMapping", None)


def never_tensor(expr: ast.expr) -> bool:
    """``values.never_tensor`` on the stdlib tree (it clears nothing the libcst version keeps): constants (numbers,
    strings, and ``True``/``False``/``None``, which libcst writes as names), ``is``/``in`` tests, comparisons with
    a string, ``not`` and the other unary operators, ``and``/``or`` of those. ``...`` is not cleared (the libcst
    version does not clear ``cst.Ellipsis``)."""
    kind = type(expr)
    if kind is ast.Constant:
        return expr.value is not Ellipsis
    if kind is ast.JoinedStr:
        return True
    if kind is ast.Compare:
        if any(type(op) in (ast.In, ast.NotIn, ast.Is, ast.IsNot) for op in expr.ops):
            return True
        operands = [expr.left] + expr.comparators
        return any(_is_string(operand) for operand in operands) or all(never_tensor(o) for o in operands)
    if kind is ast.UnaryOp:
        return never_tensor(expr.operand)
    if kind is ast.BoolOp:
        return all(never_tensor(value) for value in expr.values)
    return False


def _is_string(expr: ast.expr) -> bool:
    return type(expr) is ast.JoinedStr or (type(expr) is ast.Constant and isinstance(expr.value, (str, bytes)))


def not_tensor(expr: ast.expr, self_attribute: Callable[[str], bool], const_calls: FrozenSet[str],
               name: Optional[Callable[[str], bool]] = None) -> bool:
    """The value model cannot give ``expr`` the kind TENSOR in the function it is written in. ``self_attribute``:
    whether ``self.<attr>`` is cleared there (:meth:`SelfAttributes.never_tensor` for the method's class);
    ``const_calls``: the builtins of CONST_CALLS the module does not import a name for; ``name``: whether a name
    is cleared (none is without it)."""
    if never_tensor(expr):
        return True
    kind = type(expr)
    if kind is ast.Name:
        return name is not None and name(expr.id)
    if kind is ast.Attribute:
        return _attribute_not_tensor(expr, self_attribute)
    if kind is ast.Subscript:  # ``x.shape[0]``: CONST or UNKNOWN as its base (a name's may be a dict's key)
        return type(expr.value) is ast.Attribute and _attribute_not_tensor(expr.value, self_attribute)
    if kind is ast.Call:
        return type(expr.func) is ast.Name and expr.func.id in const_calls
    if kind is ast.Compare:
        return all(not_tensor(o, self_attribute, const_calls, name) for o in [expr.left] + expr.comparators)
    if kind is ast.BinOp:  # ``_combine`` of CONST and UNKNOWN operands (never a tuple: ``grads + (g,)``)
        return (not_tensor(expr.left, self_attribute, const_calls, name)
                and not_tensor(expr.right, self_attribute, const_calls, name))
    if kind is ast.UnaryOp:
        return not_tensor(expr.operand, self_attribute, const_calls, name)
    if kind is ast.BoolOp:
        return all(not_tensor(value, self_attribute, const_calls, name) for value in expr.values)
    return False


def _attribute_not_tensor(expr: ast.Attribute, self_attribute: Callable[[str], bool]) -> bool:
    """``ExpressionKinds._kind_Attribute`` gives CONST or UNKNOWN: a shape attribute of anything; ``self.<attr>``
    that ``self_attribute`` clears; any other attribute but a Tensor view (``x.T``) of a Tensor (a MindSpore name,
    ``ms.float16``, is CONST, and the rest UNKNOWN)."""
    if expr.attr in SHAPE_ATTRIBUTES:
        return True
    value = expr.value
    if type(value) is ast.Name and value.id == "self":
        return self_attribute(expr.attr)
    if expr.attr in TENSOR_VIEW_ATTRIBUTES:
        return False  # ``self.coef.real``: a Tensor's view
    if type(value) is ast.Attribute and type(value.value) is ast.Name and value.value.id == "self":
        return self_attribute(f"{value.attr}.{expr.attr}")  # ``self.accumulator.sync``: ``ClassAttributes.held_tensor``
    return True


def any_attribute(attr: str) -> bool:
    """Every ``self.<attr>`` cleared (what ``_InitEnv`` reads them as, and the test's best case)."""
    return True


def const_calls_of(imports: Iterable[str], star_imports: List[str]) -> FrozenSet[str]:
    """The builtins of CONST_CALLS a module with these imported names leaves as builtins (none after a ``*``
    import, which may bring any name)."""
    if star_imports:
        return frozenset()
    return CONST_CALLS - set(imports)


class SelfAttributes:
    """Which ``self.<attr>`` ``values.ClassAttributes.kind`` cannot make a Tensor, per class, from the module's
    stdlib tree (parsed on the first question).

    ``kind(C, attr)`` is CONST for ``training``. Otherwise, when the methods of C and its in-module bases assign
    ``self.<attr>`` (``self_assignments``: ``self.a = v`` and ``self.a: T = v`` statements of the method bodies and
    of their blocks, ``ClassAttributes._collect``), it is the join of those values' kinds, and the join of CONST and
    UNKNOWN is never TENSOR; with no such assignment it asks MindSpore's base classes and other modules, which is
    not cleared here. An attribute is cleared when one such assignment is written in a method (its body or the
    blocks of its ``if``, ``for``, ``try``... statements, not a nested ``def``: ``_assigned_in_blocks``), and every
    write of ``self.<attr>`` anywhere in those methods (nested functions included) is a plain one whose value
    ``_InitEnv`` gives CONST or UNKNOWN (``_harmless_value``): what :func:`not_tensor` clears with every
    ``self.<attr>`` taken for UNKNOWN (a literal, ``config.use_bias``, ``len(x)``, comparisons of those), and
    parameters of the function that it never rebinds and that have a default, no annotation or an
    ``int``/``bool``/``str``/``float`` one.
    Classes and methods are collected as ``GraphScope._collect_in`` does, so the chain and its methods are the
    ones ``ClassAttributes._collect`` reads.
    """

    def __init__(self, text: str, const_calls: FrozenSet[str] = frozenset(), mindspore_outside: bool = False):
        self.text = text
        self.const_calls = const_calls
        # names imported from ``mindspore`` build no object of the project (not so when MindSpore's own source is
        # the project): ``False`` takes every callee for one that may
        self.mindspore_outside = mindspore_outside
        self._imported: Optional[Dict[str, Set[str]]] = None  # local name -> every module an import binds it from
        self._classes: Optional[Dict[str, Tuple[List[str], Dict[str, ast.AST]]]] = None
        self._harmless: Dict[int, Dict[str, bool]] = {}  # id(method) -> attr -> every write of it there is harmless
        self._tree: Optional[ast.Module] = None
        self._bound: Set[str] = set()

    def never_tensor(self, owner: Optional[str], attr: str) -> bool:
        """``attr`` may also be ``holder.attr``, for ``self.holder.attr``: cleared unless a method of the class chain
        binds ``self.holder`` to a call (``ClassAttributes.held_tensor`` reads such an object's class)."""
        if attr == "training":
            return True
        if owner is None or not self._read():
            return False
        assert self._classes is not None
        if owner not in self._classes:
            return False
        methods = [method for name in self._chain(owner) for method in self._classes[name][1].values()]
        if "." in attr:
            return not _binds_to_a_call(methods, attr.split(".", 1)[0], self._may_build_project_object)
        if not _assigned_in_blocks(methods, attr):
            return False
        for method in methods:
            if id(method) not in self._harmless:
                try:
                    self._harmless[id(method)] = _harmless_writes(method, self.const_calls)
                except RecursionError:
                    return False
            if not self._harmless[id(method)].get(attr, True):
                return False
        return True

    def _may_build_project_object(self, func: ast.expr) -> bool:
        """Can calling ``func`` build an object of a class of the project (what ``ClassAttributes.made_by`` names
        and ``held_tensor`` reads)? Not a name every binding of which in the module is an import from MindSpore
        (``nn.Dense``, with MindSpore outside the project), nor a bare name that is neither bound nor a class of
        the module (``dict``); anything else may."""
        name = _dotted(func)
        if name is None or not self.mindspore_outside:
            return True
        root = name.split(".", 1)[0]
        imported = self._imports().get(root)
        if imported is not None:
            return not all(target == "mindspore" or target.startswith("mindspore.") for target in imported)
        assert self._classes is not None
        return "." in name or name in self._classes or root in self._bound

    def _imports(self) -> Dict[str, Set[str]]:
        """Every import anywhere in the module (``try``/``except`` fallbacks, function bodies): local name -> the
        modules it may come from (a relative import counts as the project's); ``_bound``: names bound otherwise."""
        if self._imported is None:
            imported: Dict[str, Set[str]] = {}
            bound: Set[str] = set()
            tree = self._tree
            for node in ast.walk(tree) if tree is not None else ():
                if type(node) is ast.Import:
                    for alias in node.names:  # type: ignore[attr-defined]
                        local = alias.asname or alias.name.split(".")[0]
                        imported.setdefault(local, set()).add(alias.name if alias.asname else local)
                elif type(node) is ast.ImportFrom:
                    source = "." if node.level else (node.module or "")  # type: ignore[attr-defined]
                    for alias in node.names:  # type: ignore[attr-defined]
                        imported.setdefault(alias.asname or alias.name, set()).add(source)
                elif type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                    bound.add(node.name)  # type: ignore[attr-defined]
                elif type(node) is ast.Name and type(node.ctx) is ast.Store:  # type: ignore[attr-defined]
                    bound.add(node.id)  # type: ignore[attr-defined]
            for name in bound & set(imported):
                imported[name].add("<bound>")  # also assigned: not only MindSpore's
            self._imported, self._bound = imported, bound
        return self._imported

    def _read(self) -> bool:
        if self._classes is None:
            try:
                with warnings.catch_warnings():  # ``1if x else 2``: a SyntaxWarning the user's tools report, not ours
                    warnings.simplefilter("ignore")
                    tree = ast.parse(self.text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._classes = {}
                return False
            self._classes = {}
            self._tree = tree
            _collect_classes(tree.body, "", self._classes)
        return bool(self._classes)

    def _chain(self, owner: str) -> List[str]:
        assert self._classes is not None
        chain: List[str] = []
        pending = [owner]
        while pending:
            name = pending.pop(0)
            if name in self._classes and name not in chain:
                chain.append(name)
                pending.extend(self._classes[name][0])
        return chain


def _dotted(node: ast.expr) -> Optional[str]:
    if type(node) is ast.Name:
        return node.id  # type: ignore[attr-defined]
    if type(node) is ast.Attribute:
        base = _dotted(node.value)  # type: ignore[attr-defined]
        return f"{base}.{node.attr}" if base else None  # type: ignore[attr-defined]
    return None


def _binds_to_a_call(methods: List[ast.AST], attr: str, may_build: Callable[[ast.expr], bool]) -> bool:
    """Does a statement anywhere in the methods bind ``self.<attr> = <call>`` (or ``self.<attr>: T = <call>``) of a
    callee ``may_build`` keeps?"""
    for method in methods:
        for node in ast.walk(method):
            kind = type(node)
            if kind is ast.Assign:
                targets, value = node.targets, node.value  # type: ignore[attr-defined]
            elif kind is ast.AnnAssign:
                targets, value = [node.target], node.value  # type: ignore[attr-defined]
            else:
                continue
            if type(value) is ast.Call and may_build(value.func) and any(  # type: ignore[attr-defined]
                    type(t) is ast.Attribute and t.attr == attr and type(t.value) is ast.Name and t.value.id == "self"
                    for t in targets):
                return True
    return False


class LocalNames:
    """Which names of a graph function ``values.FunctionValues`` cannot make a Tensor, from its stdlib tree.

    The model's kind of a name is its parameter kind, the kind of the bindings of it in the function's statements
    that reach the use (``_bind_locals``, ``ReachingBindings``: ``Assign``, ``AnnAssign``, ``AugAssign``, ``for``
    and ``with`` targets), CONST for a module constant, else UNKNOWN (``ExpressionKinds._kind_Name``). So a name
    that is no parameter and that the function never binds is never a Tensor, and neither is one whose every
    binding anywhere in the function (nested functions, lambdas and comprehensions included, each counted as the
    function's) is a plain ``name = value`` whose value :func:`not_tensor` clears with the same names cleared (no
    cycle). Any other binding (a parameter, a tuple or loop target, ``+=``, ``del``, an import, a ``def``, an
    ``except ... as``, ``global``, a lambda's argument) keeps the name."""

    def __init__(self, function: ast.AST, const_calls: FrozenSet[str]):
        self.const_calls = const_calls
        args = function.args  # type: ignore[attr-defined]
        self._kept: Set[str] = {a.arg for a in list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)}
        self._kept.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
        self._plain: Dict[str, List[ast.expr]] = {}
        self._tests: Dict[Callable[[str], bool], Callable[[str], bool]] = {}
        plain_targets: Set[int] = set()  # a plain assignment comes off the stack before its target
        pending: List[ast.AST] = list(function.body)  # type: ignore[attr-defined]
        while pending:
            node = pending.pop()
            kind = type(node)
            if kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:  # type: ignore
                plain_targets.add(id(node.targets[0]))  # type: ignore[attr-defined]
                self._plain.setdefault(node.targets[0].id, []).append(node.value)  # type: ignore[attr-defined]
            elif kind is ast.AnnAssign and type(node.target) is ast.Name and node.value is not None:  # type: ignore
                plain_targets.add(id(node.target))  # type: ignore[attr-defined]
                self._plain.setdefault(node.target.id, []).append(node.value)  # type: ignore[attr-defined]
            elif kind is ast.Name:
                if type(node.ctx) is not ast.Load and id(node) not in plain_targets:  # type: ignore[attr-defined]
                    self._kept.add(node.id)  # type: ignore[attr-defined]
            elif kind is ast.arg:
                self._kept.add(node.arg)  # type: ignore[attr-defined]
            else:
                self._kept.update(_other_bindings(node))
            pending.extend(_children(node))

    def cleared(self, self_attribute: Callable[[str], bool]) -> Callable[[str], bool]:
        """The names cleared where ``self.<attr>`` is cleared by ``self_attribute`` (one test per predicate, its
        answers remembered: ``a1 = a0 + a0; a2 = a1 + a1 ...`` asks each name once, not 2**n times)."""
        found = self._tests.get(self_attribute)
        if found is None:
            found = self._tests[self_attribute] = self._name_test(self_attribute)
        return found

    def _name_test(self, self_attribute: Callable[[str], bool]) -> Callable[[str], bool]:
        active: Set[str] = set()
        known: Dict[str, bool] = {}  # a False found under a cycle's cut stays False: sound, at most less cleared

        def name(identifier: str) -> bool:
            if identifier in self._kept:
                return False
            if identifier in known:
                return known[identifier]
            values = self._plain.get(identifier)
            if values is None:
                return True  # never bound here: a module constant or UNKNOWN
            if identifier in active:
                return False
            active.add(identifier)
            try:
                known[identifier] = all(not_tensor(value, self_attribute, self.const_calls, name) for value in values)
            finally:
                active.discard(identifier)
            return known[identifier]

        return name


def _assigned_in_blocks(methods: List[ast.AST], attr: str) -> bool:
    """A statement of one of the methods assigns ``self.<attr>``, where ``values.self_assignments`` reads it (so
    ``ClassAttributes._collect`` joins its kind): a plain or annotated assignment in the method's body or in the
    blocks of its compound statements (``if``, ``for``, ``try``, ``with``, ``match`` cases...), not inside a
    ``def`` or ``class`` nested in it (``cstutil.walk_statements(..., into_defs=False)``)."""
    for method in methods:
        pending: List[ast.AST] = list(method.body)  # type: ignore[attr-defined]
        while pending:
            stmt = pending.pop()
            kind = type(stmt)
            if kind in _FUNCTIONS or kind is ast.ClassDef:
                continue
            targets = stmt.targets if kind is ast.Assign else (  # type: ignore[attr-defined]
                [stmt.target] if kind is ast.AnnAssign and stmt.value is not None else [])  # type: ignore
            if any(_self_attribute(target) == attr for target in targets):
                return True
            for field in _BODIES:
                for child in getattr(stmt, field, None) or ():
                    pending.extend(child.body if type(child) in _CLAUSES else [child])  # type: ignore
    return False


_CLAUSES = (ast.ExceptHandler,) + tuple(getattr(ast, name) for name in ("match_case",) if hasattr(ast, name))


def _collect_classes(body: List[ast.stmt], prefix: str,
                     classes: Dict[str, Tuple[List[str], Dict[str, ast.AST]]]) -> None:
    """``GraphScope._collect_in`` on the stdlib tree: classes by qualname (the first of a name), with the names of
    their one-name bases and their methods (the last ``def`` of a name); classes under a block are not collected."""
    for stmt in body:
        if isinstance(stmt, _FUNCTIONS):
            _collect_classes(stmt.body, f"{prefix}{stmt.name}.<locals>.", classes)
        elif isinstance(stmt, ast.ClassDef):
            qualname = f"{prefix}{stmt.name}"
            # libcst's ``Arg`` of ``*Base`` holds the name too (``GraphScope`` keeps it)
            bases = [base.id if type(base) is ast.Name else base.value.id  # type: ignore[attr-defined]
                     for base in stmt.bases
                     if type(base) is ast.Name or (type(base) is ast.Starred and type(base.value) is ast.Name)]
            methods = {inner.name: inner for inner in stmt.body if isinstance(inner, _FUNCTIONS)}
            classes.setdefault(qualname, (bases, methods))
            _collect_classes(stmt.body, f"{qualname}.", classes)
            for inner in methods.values():
                _collect_classes(inner.body, f"{qualname}.{inner.name}.<locals>.", classes)


def _self_attribute(node: ast.AST) -> Optional[str]:
    if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self":
        return node.attr
    return None


def _harmless_writes(method: ast.AST, const_calls: FrozenSet[str]) -> Dict[str, bool]:
    """attr -> whether every write of ``self.<attr>`` in the method is harmless (see :class:`SelfAttributes`)."""
    verdicts: Dict[str, bool] = {}
    bound: Dict[int, Set[str]] = {}  # id(function) -> the names it binds, read once
    plain: Set[int] = set()  # the targets of plain assignments, judged with their statement
    for function, stmt in _statements_with_function(method):
        kind = type(stmt)
        if kind is ast.Assign:
            targets, value = stmt.targets, stmt.value
        elif kind is ast.AnnAssign:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        for target in targets:
            attr = _self_attribute(target)
            if attr is None:
                continue
            plain.add(id(target))
            # ``self.a: int`` assigns nothing
            good = value is None or _harmless_value(value, function, bound, const_calls)
            verdicts[attr] = verdicts.get(attr, True) and good
    for node in _written_attributes(method):  # any other write (``+=``, a tuple or loop target, ``del``): not cleared
        attr = _self_attribute(node)
        if attr is not None and id(node) not in plain:
            verdicts[attr] = False
    return verdicts


_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _written_attributes(root: ast.AST) -> List[ast.Attribute]:
    """The ``Attribute`` nodes under ``root`` written or deleted (``ast.walk``'s nodes, without visiting names)."""
    found: List[ast.Attribute] = []
    pending = [root]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.Name:
            continue
        if kind is ast.Attribute and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
            found.append(node)  # type: ignore[arg-type]
        pending.extend(_children(node))
    return found


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements_with_function(method: ast.AST):
    """(innermost enclosing function, statement) for every statement of the method's body: only statement lists
    are entered (``except`` and ``case`` clauses hold theirs), which holds every statement."""
    pending: List[Tuple[ast.AST, ast.AST]] = [(method, method)]
    while pending:
        function, node = pending.pop()
        for field in _BODIES:
            for child in getattr(node, field, None) or ():
                if isinstance(child, ast.stmt):
                    yield function, child
                pending.append((child if isinstance(child, _FUNCTIONS) else function, child))


def _harmless_value(value: ast.expr, function: Optional[ast.AST], bound: Dict[int, Set[str]],
                    const_calls: FrozenSet[str]) -> bool:
    """The value model of the assigning method (``values._InitEnv``) cannot make ``value`` a Tensor: what
    :func:`not_tensor` clears where every ``self.<attr>`` is UNKNOWN (``_InitEnv._kind_Attribute``) and a
    parameter that the function never rebinds and that has a default, no annotation or an ``int``/``bool``/``str``/
    ``float`` one is CONST or UNKNOWN (``_annotation_kind``): a literal, ``config.use_bias``, ``has_bias``,
    ``num_layers > 1 and use_cache``."""
    if function is None:
        return not_tensor(value, any_attribute, const_calls)
    args = function.args  # type: ignore[attr-defined]
    positional = list(args.posonlyargs) + list(args.args)
    defaulted = {p.arg for p in positional[len(positional) - len(args.defaults):]}
    defaulted |= {p.arg for p, default in zip(args.kwonlyargs, args.kw_defaults) if default is not None}
    params = {p.arg: p for p in positional + list(args.kwonlyargs)}

    def parameter(name: str) -> bool:
        param = params.get(name)
        if param is None:
            return False
        if name not in defaulted and param.annotation is not None and not (
                type(param.annotation) is ast.Name and param.annotation.id in _SCALAR_ANNOTATIONS):
            return False  # ``x: Tensor`` (or a class that may name it): its annotation decides (``_annotation_kind``)
        if id(function) not in bound:
            bound[id(function)] = _bound_names(function)
        return name not in bound[id(function)]

    return not_tensor(value, any_attribute, const_calls, parameter)


_SCALAR_ANNOTATIONS = frozenset({"int", "bool", "str", "float"})


def _bound_names(function: ast.AST) -> Set[str]:
    """Every name a statement or expression inside ``function`` binds or deletes (nested functions included)."""
    bound: Set[str] = set()
    pending = [function]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                bound.add(node.id)  # type: ignore[attr-defined]
            continue
        if node is not function:
            bound.update(_other_bindings(node))
        pending.extend(_children(node))
    return bound


def _other_bindings(node: ast.AST) -> Iterable[str]:
    """The names ``node`` binds otherwise than as an ``ast.Name`` target: an import, a ``def`` or ``class``, an
    ``except ... as``, ``global``/``nonlocal``, a ``match`` capture."""
    kind = type(node)
    if kind in (ast.Import, ast.ImportFrom):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]  # type: ignore[attr-defined]
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return [node.name]  # type: ignore[attr-defined]
    if kind is ast.ExceptHandler and node.name:  # type: ignore[attr-defined]
        return [node.name]  # type: ignore[attr-defined]
    if kind in (ast.Global, ast.Nonlocal):
        return node.names  # type: ignore[attr-defined]
    if kind in _MATCH_CAPTURES and node.name:  # type: ignore[attr-defined]
        return [node.name]  # type: ignore[attr-defined]
    if kind is _MATCH_MAPPING and node.rest:  # type: ignore[attr-defined]
        return [node.rest]  # type: ignore[attr-defined]
    return ()


def _children(node: ast.AST) -> List[ast.AST]:
    """The child nodes of ``node`` but constants and contexts (``ast.iter_child_nodes`` without its generator)."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(kind._fields)
    children: List[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            children.extend(item for item in value if isinstance(item, ast.AST) and type(item) not in _SKIPPED)
        elif isinstance(value, ast.AST) and type(value) not in _SKIPPED:
            children.append(value)
    return children


_SKIPPED = frozenset({ast.Constant, ast.Load, ast.Store, ast.Del})  # nodes that hold no name
