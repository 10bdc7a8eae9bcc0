"""What one module says about itself, read with the stdlib ``ast`` and no code executed.

A :class:`ModuleSummary` is the unit of the project index (``ms_lint.analysis.index``): its imports (relative ones
resolved), its classes (nested ones and those defined inside functions too) with their bases as written, their
methods, the parameters and literal defaults of every function, the calls each function makes, module constants,
``argparse`` defaults and the ``set_context(mode=...)`` calls. Summaries are plain data (picklable) so the index
can cache them by content and hand them to worker processes.
"""
from __future__ import annotations

import ast
import dataclasses
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

from ms_lint.prefilter import JIT_WORDS

NOT_LITERAL = "<expr>"  # the default of a parameter that is not a Python literal
SUPER_PREFIX = "super:"  # a construction's callee: ``super().__init__(...)`` in a class of several bases


@dataclass(frozen=True)
class InitParam:
    """A construction argument that is the enclosing ``__init__``'s own parameter, never rebound there
    (``self.decoder = Decoder(max_seq_len=max_seq_len)`` in ``Head.__init__``): it holds what the project builds
    ``owner`` with. ``module`` is filled in by the project index (``ProjectIndex.constructions``)."""
    owner: str  # qualname of the class whose ``__init__`` passes its parameter on
    name: str  # the parameter
    module: Optional[str] = None


# The key of a construction's keyword literals that says it hands on the building ``__init__``'s own ``**kwargs``
# (whatever the project builds that class with, which the index does not follow).
FORWARDED = "**kwargs"


@dataclass
class FunctionSummary:
    name: str
    qualname: str  # ``Class.method``, ``func``, ``Outer.Inner.method``
    owner: Optional[str]  # qualname of the class whose body defines it
    line: int
    params: List[str]  # positional parameters in order (``self`` included), then keyword-only ones
    defaults: Dict[str, object]  # parameter -> literal default (NOT_LITERAL when the default is an expression)
    decorators: List[str]  # dotted names as written (``ms.jit``, ``jit``)
    calls: List[str]  # dotted callees as written: ``self.helper``, ``helper``, ``layers.build``
    passed: List[str]  # dotted names passed as arguments (``ms.jit(self.step)``, ``HyperMap()(f, ...)``)
    jit_targets: List[str]  # dotted names this function hands to a ``jit`` call (``ms.jit(fn)``)
    annotations: Dict[str, str] = field(default_factory=dict)  # parameter -> class named by its annotation
    positional: int = -1  # how many of ``params`` a call can fill by position (-1: all of them)


@dataclass(frozen=True)
class Definition:
    """Where a module-level function or a method (of any class: nested ones and those defined inside functions
    too) is written; ``ms_lint.analysis.screen`` reads its text."""
    name: str
    qualname: str
    line: int  # the ``def`` line
    end_line: int  # its last line
    decorators: Tuple[str, ...]  # dotted names as written, ``<expr>`` for others
    # What ``GraphScope._close_over_calls`` may follow from its body (nested functions, lambdas and classes
    # included), sorted: the callee of each call written ``f(...)`` or ``self.f(...)``, and each argument written
    # ``f`` or ``self.f`` (``*f`` and ``**f`` too), as ``f``.
    follows: Tuple[str, ...] = ()
    # The decorators of the defs nested in its body, at any depth (``@ms.jit`` on a train-step closure that a
    # factory function returns makes that closure a root: ``GraphScope._find_roots``).
    nested_decorators: Tuple[str, ...] = ()


@dataclass
class ClassSummary:
    name: str
    qualname: str
    line: int
    bases: List[str]  # dotted names as written (``nn.Cell``, ``BaseDecoder``); others ``<expr>``
    methods: Dict[str, FunctionSummary] = field(default_factory=dict)
    # ``self.attr = Callee(...)`` in ``__init__``: attr -> callee as written (the sub-cells a construct calls)
    attribute_classes: Dict[str, str] = field(default_factory=dict)
    # ``self.attr = param`` or ``self.attr = CellList(param)`` for an ``__init__`` parameter annotated with a
    # class (``controller: Controller``): attr -> that class as written. The object is any subclass of it.
    attribute_declared: Dict[str, str] = field(default_factory=dict)
    # ``self.step = self._step`` / ``= self._step if n > 1 else self._dummy_step`` in ``__init__``: attr -> the
    # names of ``self`` it may be bound to (methods, when the class or a base defines them), in order
    method_aliases: Dict[str, List[str]] = field(default_factory=dict)

    @property
    def has_construct(self) -> bool:
        return "construct" in self.methods


@dataclass
class ModuleSummary:
    name: str  # dotted module name (``pkg.models.head``); a script outside packages: its file stem
    path: str
    digest: str
    imports: Dict[str, str] = field(default_factory=dict)  # local name -> qualified target (relative resolved)
    star_imports: List[str] = field(default_factory=list)  # ``from x import *`` targets
    classes: Dict[str, ClassSummary] = field(default_factory=dict)  # by qualname
    functions: Dict[str, FunctionSummary] = field(default_factory=dict)  # module-level functions by name
    constants: Dict[str, object] = field(default_factory=dict)  # module names bound once to a literal
    argparse_defaults: Dict[str, object] = field(default_factory=dict)  # dest -> literal default
    set_context_modes: List[Tuple[Optional[str], str]] = field(default_factory=list)  # (function qualname, mode)
    module_jit_targets: List[str] = field(default_factory=list)  # names handed to jit at module level
    # ``f`` for each ``jit(f, ...)`` / ``ms.jit(self.f)`` anywhere in the module (bodies and ``def`` / ``class``
    # headers, at every depth), sorted: the first positional argument of a call of a name ending in ``jit`` or
    # ``ms_function``, as ``Definition.follows`` writes it; what ``GraphScope`` may make a "passed to jit" root
    jit_arguments: Tuple[str, ...] = ()
    # ``if get_context("mode") != PYNATIVE_MODE: raise ...`` somewhere: the module's code refuses graph mode
    refuses_graph_mode: bool = False
    # Calls at module level: (callee as written, dotted names passed as arguments): ``step = compiled(step_fn)``.
    module_calls: List[Tuple[str, List[str]]] = field(default_factory=list)
    # Calls of capitalized names (class constructions): (callee as written, positional literals, keyword literals).
    constructions: List[Tuple[str, List[object], Dict[str, object]]] = field(default_factory=list)
    # Every module-level function and method (of nested classes and classes inside functions too), in order,
    # a name defined twice (a property and its setter) twice: what GraphScope may take for graph code.
    definitions: List[Definition] = field(default_factory=list)
    # A module with star imports: every identifier its text holds, sorted (``star_words``), which the index asks
    # before it lets a star import give a name (an assignment, a ``global`` or a ``globals()`` key may rebind
    # it; the summary records none of those). None: the text was not at hand, so any name may be rebound.
    star_words: Optional[Tuple[str, ...]] = None


class StoredSummary(ModuleSummary):
    """A ``ModuleSummary`` as the summary store keeps it (``ms_lint.cache.SummaryStore``): its name, path and
    digest at hand, the rest pickled until first asked for. Any other attribute (``__class__`` and
    ``__dict__`` too) unpickles it in place, and from then on it is a plain ``ModuleSummary``.

    Why: a run after an edit that keeps every summary's shape carries the fingerprints and the graph closure
    over (``ms_lint.analysis.carry``), and then reads the summaries of a few dozen modules; unpickling all of them
    was the largest part of its time before the analysis (0.15 s of 0.9 s on the eight packages)."""

    def __getattribute__(self, attr: str):
        if attr in _AT_HAND:
            return object.__getattribute__(self, "__dict__")[attr]
        if attr == "__reduce_ex__":  # pickled as it is, still unread (the index sent to ``ms_lint.host``)
            return object.__getattribute__(self, "_reduce_unread")
        _unpickle(self)
        return object.__getattribute__(self, attr)

    def __setattr__(self, attr: str, value: object) -> None:
        _unpickle(self)  # else the pickle read later would undo it (``ProjectIndex.module`` renames a summary)
        object.__setattr__(self, attr, value)

    def _reduce_unread(self, protocol: int) -> tuple:
        fields = object.__getattribute__(self, "__dict__")
        return stored_summary, (fields["name"], fields["path"], fields["digest"], pickled_summary(self))


_AT_HAND = frozenset({"name", "path", "digest"})


def stored_summary(name: str, path: str, digest: str, pickled) -> ModuleSummary:
    """The summary of ``pickled`` (the pickle of a ``ModuleSummary``, with this name, path and digest; or where to
    read it: an object whose ``read()`` gives it, ``cache.StoredBlob``)."""
    summary = object.__new__(StoredSummary)
    object.__setattr__(summary, "__dict__", {"name": name, "path": path, "digest": digest, _PICKLED: pickled})
    return summary


def pickled_summary(summary: ModuleSummary) -> bytes:
    """The pickle a ``stored_summary`` of ``summary`` holds: the one it was read from, while it is still unread."""
    import pickle

    if type(summary) is StoredSummary:
        with _UNPICKLING:  # not while another thread unpickles it
            pickled = (object.__getattribute__(summary, "__dict__")[_PICKLED] if type(summary) is StoredSummary
                       else None)
        if type(pickled) is bytes:
            return pickled
        try:
            if pickled is not None:
                return pickled.read()
        except OSError:
            _unpickle(summary)  # cut short since: the summary made again from its file, or none
    return pickle.dumps(summary, protocol=pickle.HIGHEST_PROTOCOL)


_PICKLED = "_pickled"


_UNREADABLE = "_unreadable"  # set on the summary of a damaged entry whose file has changed since (``same_shape``)
_UNPICKLING = threading.Lock()  # a thread reading a summary another is unpickling waits for it


def _unpickle(summary: ModuleSummary) -> None:
    import pickle

    with _UNPICKLING:
        if type(summary) is not StoredSummary:
            return  # done by another thread meanwhile
        fields = object.__getattribute__(summary, "__dict__")
        try:
            pickled = fields[_PICKLED]
            loaded = pickle.loads(pickled if type(pickled) is bytes else pickled.read())
            if type(loaded) is not ModuleSummary:
                raise TypeError(type(loaded).__name__)
            if (object.__getattribute__(loaded, "path"), object.__getattribute__(loaded, "digest")) != (
                    fields["path"], fields["digest"]):
                raise ValueError("another module's summary")  # a store whose places point elsewhere
        except Exception:  # noqa: BLE001  a damaged store
            loaded = _summary_again(fields["name"], fields["path"], fields["digest"])
        object.__setattr__(summary, "__dict__", dict(object.__getattribute__(loaded, "__dict__")))
        object.__setattr__(summary, "__class__", ModuleSummary)


def _summary_again(name: str, path: str, digest: str) -> ModuleSummary:
    """What stands for a stored summary that does not unpickle: the summary of the file, made again, when it
    still holds the bytes the entry was made from; else an empty one that has the shape of no summary
    (``same_shape``), so that nothing worked out from the lost one is carried over an edit of the file."""
    from ms_lint.analysis.index import summarize_file
    from ms_lint.analysis.layout import digest_of

    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        raw = None
    again = summarize_file(path, raw) if raw is not None and digest_of(raw) == digest else None
    if again is None:
        again = ModuleSummary(name, path, digest)
        object.__getattribute__(again, "__dict__")[_UNREADABLE] = True
    again.name = name
    return again


# Where a summary records lines: the ``line`` of classes and functions, and the span (``line``, ``end_line``) of
# each ``Definition``, which only the screen reads (``ms_lint.analysis.screen``, for the text it was made from);
# and what only the screen reads of the module's own bytes (``follows``, ``jit_arguments``): the project index
# never reads them, so the findings of other files never depend on them.
_LINE_FIELDS = ("line", "end_line", "digest", "follows", "jit_arguments")


# What functions call and pass: only the graph closure (``index._GraphClosure``) and the sub-cell call sites
# (``ProjectView.construct_call_sites``) read them (``lsp.documents._keeps_graph``).
CALL_FIELDS = frozenset({"calls", "passed"})


def same_shape(a: object, b: object, ignored: FrozenSet[str] = frozenset()) -> bool:
    """Equal summaries (or parts of them) but for the digest and the lines of classes, functions and
    definitions, and what only the screen reads: what the project index works out from them (names, Cells, graph
    closure, fingerprint recipes) is the same for both. An edit inside a function body that adds no call keeps
    the shape. ``ignored``: more fields to pass over (``CALL_FIELDS``)."""
    if a is b:
        return True  # the language server's summaries share the parts of the runs an edit left in place
    if type(a) is StoredSummary:
        _unpickle(a)
    if type(b) is StoredSummary:
        _unpickle(b)
    if type(a) is not type(b):
        return False
    if type(a) is ModuleSummary and (_UNREADABLE in a.__dict__ or _UNREADABLE in b.__dict__):
        return False
    if dataclasses.is_dataclass(a):
        return all(same_shape(getattr(a, f.name), getattr(b, f.name), ignored)
                   for f in dataclasses.fields(a) if f.name not in _LINE_FIELDS and f.name not in ignored)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_shape(a[k], b[k], ignored) for k in a)  # type: ignore[index]
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_shape(x, y, ignored) for x, y in zip(a, b))  # type: ignore[arg-type]
    # ``{0} == {False}`` and ``0.0 == -0.0``, but the literals differ, and fingerprint recipes hash their repr
    return a == b and repr(a) == repr(b)


def dotted_name(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for a name or a chain of attributes on one, else None."""
    kind = type(node)
    if kind is ast.Name:
        return node.id  # type: ignore[attr-defined]
    if kind is not ast.Attribute:
        return None
    parts = []
    while kind is ast.Attribute:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
        kind = type(node)
    if kind is not ast.Name:
        return None
    parts.append(node.id)  # type: ignore[attr-defined]
    parts.reverse()
    return ".".join(parts)


def annotation_class(node: Optional[ast.AST]) -> Optional[str]:
    """The class an annotation names: ``Controller``, ``nn.Cell``; ``List[Block]`` / ``Optional[Block]`` and
    ``Block = None`` defaults name ``Block``; anything else (unions of two classes, strings) names none."""
    if isinstance(node, ast.Subscript) and dotted_name(node.value) in (
            "List", "list", "Optional", "typing.List", "typing.Optional", "Sequence", "Tuple", "tuple"):
        inner = node.slice
        return dotted_name(inner) if isinstance(inner, (ast.Name, ast.Attribute)) else None
    return dotted_name(node) if node is not None else None


_CELL_CONTAINERS = {"CellList", "nn.CellList", "SequentialCell", "nn.SequentialCell"}


def literal(node: Optional[ast.AST]) -> object:
    """The Python value of a literal expression, else NOT_LITERAL: what ``ast.literal_eval`` gives, answered
    without it for a constant and for the names, attributes, subscripts and calls it refuses (it raises for them,
    and raising was a twentieth of the index's time)."""
    if node is None:
        return NOT_LITERAL
    kind = type(node)
    if kind is ast.Constant:
        return node.value  # type: ignore[attr-defined]
    if kind in _NEVER_LITERAL or (kind is ast.Call and not _empty_set(node)):  # type: ignore[arg-type]
        return NOT_LITERAL
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NOT_LITERAL


_NEVER_LITERAL = frozenset({ast.Name, ast.Attribute, ast.Subscript, ast.Lambda, ast.Compare, ast.BoolOp,
                            ast.JoinedStr, ast.ListComp, ast.GeneratorExp, ast.IfExp, ast.Starred})


def _empty_set(call: ast.Call) -> bool:
    """``set()``, the one call ``ast.literal_eval`` accepts."""
    return isinstance(call.func, ast.Name) and call.func.id == "set" and not call.args and not call.keywords


def resolve_relative(package: Optional[str], level: int, module: Optional[str]) -> Optional[str]:
    """``from ..x import y`` in package ``a.b.c`` -> ``a.b.x``."""
    if level == 0:
        return module
    if not package:
        return None
    parts = package.split(".")
    if level - 1 > len(parts) - 1:
        return None
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


# Nodes that hold no call: skipped by ``calls_in`` (a ``Name`` and its ``Load`` context are most of the nodes of an
# expression, and ``ast.walk`` yields both).
_NO_CALLS = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del})
_SCALAR_FIELDS = frozenset({"ctx", "id", "attr", "arg", "n", "s", "kind", "conversion", "level", "module",
                            "type_comment", "is_async", "simple"})
_EXPR_FIELDS: Dict[type, Tuple[str, ...]] = {}


def calls_in(expr: ast.AST) -> List[ast.Call]:
    """The ``Call`` nodes under ``expr`` in ``ast.walk``'s order (breadth first, children in field order), at a
    fraction of its cost: no generator per node, and no visit of names, constants and contexts."""
    fields_of = _EXPR_FIELDS
    no_calls = _NO_CALLS
    node_class = ast.AST
    call = ast.Call
    queue = [expr]
    append = queue.append
    calls: List[ast.Call] = []
    for node in queue:  # (a list grows under its own ``for``: what is appended is visited too, in order)
        kind = type(node)
        if kind is call:
            calls.append(node)  # type: ignore[arg-type]
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = tuple(f for f in kind._fields if f not in _SCALAR_FIELDS)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if type(item) not in no_calls and isinstance(item, node_class):
                        append(item)
            elif type(value) not in no_calls and isinstance(value, node_class):
                append(value)
    return calls


def _rebound_names(func: ast.AST) -> FrozenSet[str]:
    """Every name ``func``'s body may bind or unbind (at any depth: a nested def's or lambda's parameter, a
    comprehension target, an import, an ``except ... as``, a ``global`` declaration): a parameter outside the set
    holds what the caller passed wherever the body reads it."""
    names: Set[str] = set()
    for stmt in func.body:  # type: ignore[attr-defined]
        for node in ast.walk(stmt):
            kind = type(node)
            if kind is ast.Name and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                names.add(node.id)  # type: ignore[attr-defined]
            elif kind is ast.arg:
                names.add(node.arg)  # type: ignore[attr-defined]
            elif kind in (ast.Global, ast.Nonlocal):
                names.update(node.names)  # type: ignore[attr-defined]
            elif kind is ast.alias:
                names.add((node.asname or node.name).split(".")[0])  # type: ignore[attr-defined]
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                names.add(node.name)  # type: ignore[attr-defined]
            elif kind is ast.ExceptHandler and node.name:  # type: ignore[attr-defined]
                names.add(node.name)  # type: ignore[attr-defined]
            elif getattr(node, "name", None) and kind.__name__ in ("MatchAs", "MatchStar"):
                names.add(node.name)  # type: ignore[attr-defined]
            elif kind.__name__ == "MatchMapping" and getattr(node, "rest", None):
                names.add(node.rest)  # type: ignore[attr-defined]
    return frozenset(names)


class _Summarizer(ast.NodeVisitor):
    def __init__(self, summary: ModuleSummary, package: Optional[str], jit_words: bool = True):
        self.summary = summary
        self.jit_words = jit_words  # the module's text may call ``jit``: read the headers of top-level ``def``s too
        self.package = package
        self.class_stack: List[ClassSummary] = []
        self.function_stack: List[FunctionSummary] = []
        self.bound_counts: Dict[str, int] = {}
        # the ``follows`` of each definition whose body is being read, innermost last (a call in a method of a
        # class defined in a function is in the body of both)
        self.follow_stack: List[Set[str]] = []
        self.nested_stack: List[List[str]] = []  # the nested defs' decorators of each definition being read
        self.jit_arguments: Set[str] = set()
        # id(FunctionSummary) of an ``__init__`` being read -> [its class, its def, the parameters it never
        # rebinds (None until a construction passes one of its parameters)]
        self.passed_on: Dict[int, list] = {}
        self._handlers = {
            ast.Import: self.visit_Import, ast.ImportFrom: self.visit_ImportFrom, ast.ClassDef: self.visit_ClassDef,
            ast.FunctionDef: self.visit_FunctionDef, ast.AsyncFunctionDef: self.visit_FunctionDef,
            ast.Assign: self.visit_Assign, ast.AugAssign: self.visit_AugAssign,
        }

    # -- traversal ---------------------------------------------------------------------------------
    def visit(self, node: ast.AST) -> None:
        """Statements one by one (definitions, imports, assignments have handlers); inside an expression only
        the calls matter, found with ``ast.walk`` (several times cheaper than a visitor's dispatch per node)."""
        handler = self._handlers.get(type(node))
        if handler is not None:
            handler(node)
        elif isinstance(node, ast.expr):
            self._scan(node)
        else:
            self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def _scan(self, expr: ast.AST) -> None:
        if type(expr) in _NO_CALLS:
            return
        for call in calls_in(expr):
            self.visit_Call(call)

    # -- imports ---------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.summary.imports.setdefault(alias.asname, alias.name)
            else:
                head = alias.name.split(".")[0]
                self.summary.imports.setdefault(head, head)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = resolve_relative(self.package, node.level or 0, node.module)
        if base is None:
            return
        for alias in node.names:
            if alias.name == "*":
                self.summary.star_imports.append(base)
                continue
            self.summary.imports.setdefault(alias.asname or alias.name, f"{base}.{alias.name}")

    # -- definitions -------------------------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if self.follow_stack or self.jit_words:
            self._header_calls([*node.decorator_list, *node.bases, *(k.value for k in node.keywords),
                                *getattr(node, "type_params", ())])
        prefix = self._qual_prefix()
        qualname = f"{prefix}{node.name}"
        info = ClassSummary(
            name=node.name, qualname=qualname, line=node.lineno,
            bases=[dotted_name(base) or "<expr>" for base in node.bases],
        )
        self.summary.classes.setdefault(qualname, info)
        self.class_stack.append(info)
        saved, self.function_stack = self.function_stack, []
        for stmt in node.body:
            self.visit(stmt)
        self.function_stack = saved
        self.class_stack.pop()

    def _qual_prefix(self) -> str:
        if self.function_stack:
            return self.function_stack[-1].qualname + ".<locals>."
        if self.class_stack:
            return self.class_stack[-1].qualname + "."
        return ""

    def visit_FunctionDef(self, node) -> None:
        if self.follow_stack or self.jit_words:
            self._header_calls(_header_parts(node))
        owner = self.class_stack[-1] if self.class_stack and not self.function_stack else None
        qualname = f"{self._qual_prefix()}{node.name}"
        args = node.args
        positional = list(args.posonlyargs) + list(args.args)
        defaults: Dict[str, object] = {}
        for param, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
            defaults[param.arg] = literal(default)
        for param, default in zip(args.kwonlyargs, args.kw_defaults):
            if default is not None:
                defaults[param.arg] = literal(default)
        info = FunctionSummary(
            name=node.name, qualname=qualname, owner=owner.qualname if owner else None, line=node.lineno,
            params=[p.arg for p in positional] + [p.arg for p in args.kwonlyargs], defaults=defaults,
            positional=len(positional),
            decorators=[dotted_name(d.func if isinstance(d, ast.Call) else d) or "<expr>" for d in node.decorator_list],
            calls=[], passed=[], jit_targets=[],
            annotations={p.arg: found for p in positional + list(args.kwonlyargs)
                         for found in [annotation_class(p.annotation)] if found},
        )
        if owner is not None:
            owner.methods.setdefault(node.name, info)
        elif not self.function_stack and not self.class_stack:
            self.summary.functions.setdefault(node.name, info)
        defined = owner is not None or not (self.function_stack or self.class_stack)
        if defined:
            position = len(self.summary.definitions)
            self.summary.definitions.append(None)  # type: ignore[arg-type]  # filled once its body is read
            self.follow_stack.append(set())
            self.nested_stack.append([])
        elif self.function_stack and self.nested_stack:  # a def in a function's body: a closure
            self.nested_stack[-1].extend(info.decorators)
        if owner is not None and node.name == "__init__":
            self.passed_on[id(info)] = [owner.qualname, node, None]
        self.function_stack.append(info)
        for stmt in node.body:
            self.visit(stmt)
        self.function_stack.pop()
        self.passed_on.pop(id(info), None)
        if defined:
            follows = self.follow_stack.pop()
            nested = self.nested_stack.pop()
            if self.follow_stack:
                self.follow_stack[-1].update(follows)  # the enclosing definition's body holds this one
                self.nested_stack[-1].extend(nested)
            self.summary.definitions[position] = Definition(
                node.name, qualname, node.lineno, node.end_lineno or node.lineno, tuple(info.decorators),
                tuple(sorted(follows)), tuple(sorted(set(nested))))

    visit_AsyncFunctionDef = visit_FunctionDef

    # -- module constants --------------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        current = self.function_stack[-1] if self.function_stack else None
        if (current is not None and current.name == "__init__" and current.owner is not None and self.class_stack
                and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
            target = node.targets[0]
            callee = dotted_name(node.value.func)
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
                    and callee is not None):
                self.class_stack[-1].attribute_classes.setdefault(target.attr, callee)
        if current is not None and current.name == "__init__" and self.class_stack and len(node.targets) == 1:
            self._declared_sub_cell(node.targets[0], node.value, current)
            self._method_alias(node.targets[0], node.value)
        if not self.function_stack and not self.class_stack:
            for target in node.targets:
                for name in _bound_names(target):
                    self.bound_counts[name] = self.bound_counts.get(name, 0) + 1
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = literal(node.value)
                if value is not NOT_LITERAL:
                    self.summary.constants[node.targets[0].id] = value
        for target in node.targets:
            self._scan(target)
        self._scan(node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if not self.function_stack and not self.class_stack:
            for name in _bound_names(node.target):
                self.bound_counts[name] = self.bound_counts.get(name, 0) + 2
        self._scan(node.target)
        self._scan(node.value)

    def _declared_sub_cell(self, target: ast.AST, value: ast.AST, init: FunctionSummary) -> None:
        """``self.controller = controller`` / ``= CellList(controller)`` with ``controller: Controller``."""
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
            return
        if (isinstance(value, ast.Call) and dotted_name(value.func) in _CELL_CONTAINERS and len(value.args) == 1
                and not value.keywords):
            value = value.args[0]
        if isinstance(value, ast.Name) and value.id in init.annotations:
            self.class_stack[-1].attribute_declared.setdefault(target.attr, init.annotations[value.id])

    def _method_alias(self, target: ast.AST, value: ast.AST) -> None:
        """``self.step = self._step`` (or a conditional expression choosing between such attributes)."""
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
            return
        chosen: List[str] = []
        pending = [value]
        while pending:
            part = pending.pop(0)
            if isinstance(part, ast.IfExp):
                pending[:0] = [part.body, part.orelse]
            elif isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                chosen.append(part.attr)
            else:
                return  # anything else may be bound: no alias at all
        aliases = self.class_stack[-1].method_aliases.setdefault(target.attr, [])
        aliases.extend(name for name in chosen if name not in aliases and name != target.attr)

    # -- calls -------------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        """One call (its arguments' own calls come from the same ``ast.walk``)."""
        if self.follow_stack:
            self._follow(node)
        callee = dotted_name(node.func)
        self._jit_argument(node, callee)
        current = self.function_stack[-1] if self.function_stack else None
        base = self._super_init_base(node, current)
        if base is not None:  # ``super().__init__(hidden, max_len=cfg.max_len)`` builds the base class too
            self._record_construction(base, node)
        elif (callee is not None and callee.endswith(".__init__") and node.args and type(node.args[0]) is ast.Name
              and node.args[0].id == "self" and current is not None and current.name == "__init__"):  # type: ignore
            # ``Base.__init__(self, hidden, max_len=4)``: builds the base class with the arguments after ``self``
            self._record_construction(callee[: -len(".__init__")], node, skip=1)
        if callee is None and isinstance(node.func, ast.Subscript):  # ``self.blocks[i](x)``: a CellList item
            held = dotted_name(node.func.value)
            if held is not None and current is not None:
                current.calls.append(held + "[]")
        elif callee is None and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Subscript):
            held = dotted_name(node.func.value.value)  # ``self.msrl.actors[i].act(x)``: a method of an item
            if held is not None and current is not None:
                current.calls.append(f"{held}[].{node.func.attr}")
        if callee is not None:
            if current is not None:
                current.calls.append(callee)
            last = callee.rsplit(".", 1)[-1]
            if last in ("jit", "ms_function") and node.args:
                target = dotted_name(node.args[0])
                if target:
                    (current.jit_targets if current is not None else self.summary.module_jit_targets).append(target)
            if last[:1].isupper():
                self._record_construction(callee, node)
            if last == "add_argument":
                self._argparse(node)
            elif last == "set_context":
                self._set_context(node, current)
        passed = [name for name in (dotted_name(arg) for arg in node.args) if name is not None]
        if current is not None:
            current.passed.extend(passed)
        elif callee is not None and passed:
            self.summary.module_calls.append((callee, passed))

    def _follow(self, node: ast.Call) -> None:
        """Add what ``GraphScope`` may follow from this call (``resolve_callable`` of the callee and of each
        argument) to the innermost definition whose body holds it (the enclosing ones take it when it ends)."""
        follows = self.follow_stack[-1]
        found = _followed(node.func)
        if found is not None:
            follows.add(found)
        for value in node.args:
            if type(value) is ast.Name:
                follows.add(value.id)  # type: ignore[attr-defined]
            elif type(value) is not ast.Constant:
                found = _followed(value)
                if found is not None:
                    follows.add(found)
        for keyword in node.keywords:
            found = _followed(keyword.value)
            if found is not None:
                follows.add(found)

    def _jit_argument(self, node: ast.Call, callee: Optional[str]) -> None:
        """For a call of ``jit`` (``callee``: its dotted name, the last name ``jit`` or ``ms_function``), what
        ``GraphScope._find_roots`` may make a root: the first positional argument that is not starred."""
        if callee is None or callee.rsplit(".", 1)[-1] not in JIT_WORDS:
            return
        first = next((arg for arg in node.args if type(arg) is not ast.Starred), None)
        name = _followed(first) if first is not None else None
        if name is not None:
            self.jit_arguments.add(name)

    def _header_calls(self, nodes: List[ast.AST]) -> None:
        """The calls in a ``def`` or ``class`` header (decorators, defaults, annotations, bases), which the
        statement visit does not read: what they hand to ``jit``, and (in a definition's body) what they may make
        ``GraphScope`` follow."""
        for node in nodes:
            if type(node) in _NO_CALLS or (type(node) is ast.Attribute and dotted_name(node) is not None):
                continue
            for call in calls_in(node):
                if self.follow_stack:
                    self._follow(call)
                self._jit_argument(call, dotted_name(call.func))

    def _record_construction(self, callee: str, node: ast.Call, skip: int = 0) -> None:
        current = self.function_stack[-1] if self.function_stack else None
        passed_on = self.passed_on.get(id(current)) if current is not None else None

        def value(arg: ast.AST) -> object:
            if passed_on is not None and type(arg) is ast.Name and arg.id in current.params[1:]:  # type: ignore
                if passed_on[2] is None:
                    passed_on[2] = frozenset(current.params[1:]) - _rebound_names(passed_on[1])  # type: ignore
                if arg.id in passed_on[2]:  # type: ignore[attr-defined]
                    return InitParam(passed_on[0], arg.id)  # type: ignore[attr-defined]
            return literal(arg)

        kwargs = {k.arg: value(k.value) for k in node.keywords if k.arg is not None}
        if any(isinstance(a, ast.Starred) for a in node.args):
            kwargs["*"] = NOT_LITERAL  # unpacked positional arguments: any parameter may be passed
        if any(k.arg is None for k in node.keywords):
            kwargs["**"] = NOT_LITERAL  # unpacked keyword arguments: any parameter not named may be passed
            kwarg = passed_on[1].args.kwarg if passed_on is not None else None
            if kwarg is not None and any(k.arg is None and type(k.value) is ast.Name and k.value.id == kwarg.arg
                                         for k in node.keywords):
                kwargs[FORWARDED] = NOT_LITERAL  # ``super().__init__(**kwargs)``: what its own builders pass
        self.summary.constructions.append(
            (callee, [NOT_LITERAL if isinstance(a, ast.Starred) else value(a) for a in node.args[skip:]], kwargs))

    def _super_init_base(self, node: ast.Call, current: Optional[FunctionSummary]) -> Optional[str]:
        """The bases of the class whose ``__init__`` calls ``super().__init__(...)`` here, as ``super:B1,B2``
        (the project index builds the first whose chain defines ``__init__``: a mixin without one passes the call
        on)."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"):
            return None
        if current is None or current.name != "__init__" or not self.class_stack:
            return None
        bases = [b for b in self.class_stack[-1].bases if b != "<expr>"]
        if len(bases) != len(self.class_stack[-1].bases):
            return bases[0] if bases else None  # (as before: a base written as an expression is not followed)
        return f"{SUPER_PREFIX}{','.join(bases)}" if len(bases) > 1 else (bases[0] if bases else None)

    def _argparse(self, node: ast.Call) -> None:
        dest = None
        for keyword in node.keywords:
            if keyword.arg == "dest" and isinstance(keyword.value, ast.Constant):
                dest = keyword.value.value
        if dest is None:
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            long = [f for f in flags if f.startswith("--")]
            chosen = long[0] if long else (flags[0] if flags else None)
            if chosen is not None:
                dest = chosen.lstrip("-").replace("-", "_")
        if not isinstance(dest, str):
            return
        for keyword in node.keywords:
            if keyword.arg == "default":
                value = literal(keyword.value)
                if value is NOT_LITERAL:
                    value = dotted_name(keyword.value) or NOT_LITERAL
                    value = f"<name:{value}>" if value is not NOT_LITERAL else value
                self.summary.argparse_defaults.setdefault(dest, value)

    def _set_context(self, node: ast.Call, current: Optional[FunctionSummary]) -> None:
        for keyword in node.keywords:
            if keyword.arg == "mode":
                value = literal(keyword.value)
                shown = repr(value) if value is not NOT_LITERAL else (dotted_name(keyword.value) or NOT_LITERAL)
                self.summary.set_context_modes.append((current.qualname if current else None, shown))


def _followed(node: ast.AST) -> Optional[str]:
    """``f`` for ``f`` and ``self.f`` (``*f``, ``**f``: the starred value), what ``GraphScope.resolve_callable``
    may resolve; None for anything else."""
    if type(node) is ast.Starred:
        node = node.value  # type: ignore[attr-defined]
    if type(node) is ast.Name:
        return node.id  # type: ignore[attr-defined]
    if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self":  # type: ignore
        return node.attr  # type: ignore[attr-defined]
    return None


def _header_parts(node: ast.AST) -> List[ast.AST]:
    """What a ``def`` holds outside its body: decorators, defaults, annotations (and Python 3.12's type
    parameters)."""
    args = node.args  # type: ignore[attr-defined]
    every = [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]
    parts = [*node.decorator_list, *args.defaults, *args.kw_defaults, node.returns,  # type: ignore[attr-defined]
             *getattr(node, "type_params", ())]
    parts += [arg.annotation for arg in every if arg is not None]
    return [part for part in parts if part is not None]


def _bound_names(target: ast.AST) -> List[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _bound_names(element)]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    return []


def summarize(tree: ast.Module, name: str, path: str, digest: str, package: Optional[str],
              text: str = "") -> ModuleSummary:
    summary = summarize_trees([tree], name, path, digest, package, text or None)
    if "get_context" in text and "PYNATIVE_MODE" in text:  # walk only the few modules that can hold the guard
        summary.refuses_graph_mode = refuses_graph_mode(tree)
    return summary


def summarize_trees(trees: Iterable[ast.Module], name: str, path: str, digest: str,
                    package: Optional[str], text: Optional[str] = None) -> ModuleSummary:
    """The summary of a module given as consecutive runs of its top-level statements (one tree when whole;
    ``ms_lint.chunks`` for long modules, each parsed at its own lines), without the PyNative guard
    (``refuses_graph_mode``). ``text``: the module's, when at hand (a text without ``jit`` or ``ms_function``
    hands nothing to them)."""
    jit_words = text is None or any(word in text for word in JIT_WORDS)
    return join_runs((summarize_run(tree, package, jit_words) for tree in trees), name, path, digest, text)


@dataclass
class RunSummary:
    """What one run of a module's top-level statements adds to the module's summary (``join_runs``): nothing a
    run reads depends on the statements before it (the visitor's stacks are empty between top-level
    statements), so the language server keeps the runs an edit left alone (``ms_lint.lsp.runs``)."""
    part: ModuleSummary  # its name, path and digest are empty; its constants not yet judged
    bound_counts: Dict[str, int]  # module names bound, and how often (an augmented assignment counts twice)
    jit_arguments: Set[str]


def summarize_run(tree: ast.Module, package: Optional[str], jit_words: bool) -> RunSummary:
    """``jit_words``: whether the whole module's text holds ``jit`` or ``ms_function`` (``summarize_trees``)."""
    part = ModuleSummary(name="", path="", digest="")
    visitor = _Summarizer(part, package, jit_words)
    visitor.visit(tree)
    visitor._handlers.clear()  # its bound methods hold the visitor: a cycle only the collector would free
    return RunSummary(part, visitor.bound_counts, visitor.jit_arguments)


def join_runs(runs: Iterable[RunSummary], name: str, path: str, digest: str,
              text: Optional[str] = None) -> ModuleSummary:
    """The module's summary from its runs in order, each at its lines in the module (``placed``): what one
    visitor reading every run in turn gives. The runs' classes and functions are the result's. ``text``: the
    module's (its ``star_words``)."""
    summary = ModuleSummary(name=name, path=path, digest=digest)
    counts: Dict[str, int] = {}
    jit_arguments: Set[str] = set()
    for run in runs:
        part = run.part
        for key, value in part.imports.items():
            summary.imports.setdefault(key, value)
        summary.star_imports.extend(part.star_imports)
        for key, value in part.classes.items():
            summary.classes.setdefault(key, value)
        for key, value in part.functions.items():
            summary.functions.setdefault(key, value)
        summary.constants.update(part.constants)  # the last binding's value, at the first binding's place
        for key, value in part.argparse_defaults.items():
            summary.argparse_defaults.setdefault(key, value)
        summary.set_context_modes.extend(part.set_context_modes)
        summary.module_jit_targets.extend(part.module_jit_targets)
        summary.module_calls.extend(part.module_calls)
        summary.constructions.extend(part.constructions)
        summary.definitions.extend(part.definitions)
        for key, count in run.bound_counts.items():
            counts[key] = counts.get(key, 0) + count
        jit_arguments.update(run.jit_arguments)
    summary.jit_arguments = tuple(sorted(jit_arguments))
    for constant in [c for c in summary.constants if counts.get(c, 0) != 1]:
        del summary.constants[constant]
    if summary.star_imports and text is not None:
        summary.star_words = star_words(text)
    return summary


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def star_words(text: str) -> Tuple[str, ...]:
    """Every identifier ``text`` holds (in code, strings and comments alike), sorted: what
    ``ModuleSummary.star_words`` keeps. Part of the summary, not read from the disk when asked, so that a long-lived
    index answers for the text it summarized (an editor's buffer) and an edit that adds such a name changes the
    summary's shape (``same_shape``: the carried fingerprints and the memos an edit keeps)."""
    return tuple(sorted(set(_IDENTIFIER.findall(text))))


def placed(run: RunSummary, shift: int) -> RunSummary:
    """The run ``shift`` lines further down (a run parsed alone counts its first line as line 1): copies of the
    parts that hold lines (classes, functions, definitions), the rest shared."""
    def function(info: FunctionSummary) -> FunctionSummary:
        return dataclasses.replace(info, line=info.line + shift)

    part = run.part
    moved = dataclasses.replace(part)
    moved.classes = {key: dataclasses.replace(
        info, line=info.line + shift, methods={name: function(m) for name, m in info.methods.items()})
        for key, info in part.classes.items()}
    moved.functions = {key: function(info) for key, info in part.functions.items()}
    moved.definitions = [dataclasses.replace(d, line=d.line + shift, end_line=d.end_line + shift)
                         for d in part.definitions]
    return RunSummary(moved, run.bound_counts, run.jit_arguments)


def refuses_graph_mode(tree: ast.Module) -> bool:
    """``if get_context("mode") != PYNATIVE_MODE: raise ...`` (the mode read into a name first, too): code that
    runs only in PyNative mode, as mindarmour's suppress-privacy model declares itself."""
    if not any(isinstance(node, ast.If) and _may_guard(node) for node in _walk_statements(tree)):
        return False  # one walk; the search below walks every function again (nested ones once per enclosing one)
    functions = [n for n in _walk_statements(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for function in [tree] + functions:
        mode_names = set()
        for node in _walk_statements(function):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and _reads_mode(node.value)):
                mode_names.add(node.targets[0].id)
            if isinstance(node, ast.If) and _is_not_pynative(node.test, mode_names) and any(
                    isinstance(stmt, ast.Raise) for stmt in node.body):
                return True
    return False


_BLOCK_NODES = (ast.stmt, ast.excepthandler) + ((ast.match_case,) if hasattr(ast, "match_case") else ())  # 3.10+


def _walk_statements(root: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(root)`` less the nodes inside expressions: the statements (and ``except`` clauses and ``case``
    blocks) in the same breadth-first order, which decides which assignments of the mode an ``if`` sees. An
    expression holds no statement, and nine in ten of a module's nodes are in expressions (MindSpore's source and the
    eight packages: 2.64 -> 0.23 s)."""
    todo = deque([root])
    while todo:
        node = todo.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list and value and isinstance(value[0], _BLOCK_NODES):
                todo.extend(value)
        yield node


def _may_guard(node: ast.If) -> bool:
    """What ``_is_not_pynative`` and the ``raise`` ask of an ``if`` before the names that hold the mode: a ``!=``
    with a PyNative side, and a ``raise`` in its body."""
    test = node.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotEq)):
        return False
    return any(_names_pynative(side) for side in (test.left, test.comparators[0])) and any(
        isinstance(stmt, ast.Raise) for stmt in node.body)


def _names_pynative(side: ast.AST) -> bool:
    return ((dotted_name(side) or "").rsplit(".", 1)[-1] == "PYNATIVE_MODE"
            or (isinstance(side, ast.Constant) and side.value == 1))


def _reads_mode(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and (dotted_name(node.func) or "").rsplit(".", 1)[-1] == "get_context"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value == "mode")


def _is_not_pynative(test: ast.AST, mode_names: set) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotEq)):
        return False
    sides = [test.left, test.comparators[0]]
    reads = [side for side in sides if _reads_mode(side) or (isinstance(side, ast.Name) and side.id in mode_names)]
    pynative = [side for side in sides if _names_pynative(side)]
    return len(reads) == 1 and len(pynative) == 1
