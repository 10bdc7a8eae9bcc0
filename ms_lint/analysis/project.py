"""What the analysis of one module may ask about the rest of the project (:class:`ProjectView`).

The index (``ms_lint.analysis.index``) knows modules, classes and graph scope from ``ast`` summaries; questions about
values in another module (what ``self.scale`` holds when a base class in another file sets it, what an imported
helper returns) are answered by that module's own libcst analysis, built on first use and kept for the run, so
there is one value model whichever file a value comes from.
"""
from __future__ import annotations

import os
import re
import weakref
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from ms_lint.analysis.index import ProjectIndex, constructor_value
from ms_lint.cstutil import parse_module
from ms_lint.fasttree import parse_for_analysis

# Module contexts per process: (index id, module name) -> context or None. Built for cross-module questions or
# by the file's own check (``remember``): a worker parses each module with libcst once, whichever asks first.
_CONTEXTS: Dict[Tuple[int, str], object] = {}
_MAX_CONTEXTS = 256

# Whether the contexts built here are of ``fasttree`` trees (``ms-lint check``) or of libcst's (fixes, the editor, a
# check that needs libcst's trees after all); each kind has its own store, swapped in by ``use_fast_trees``.
_FAST_TREES = False
_OTHER_STORE: Dict[Tuple[int, str], object] = {}


def use_fast_trees(fast: bool) -> bool:
    """Build (and find) other modules' contexts on fast trees or on libcst's; returns the setting before."""
    global _FAST_TREES, _CONTEXTS, _OTHER_STORE
    before = _FAST_TREES
    if fast != before:
        _CONTEXTS, _OTHER_STORE = _OTHER_STORE, _CONTEXTS
        _FAST_TREES = fast
    return before


_OWNERS: Dict[int, "weakref.ref"] = {}  # id(index) -> the index those contexts were built for

# The modules each slot's contexts asked about (``ProjectView.context_for``), by slot: what the context in the slot
# may have worked out from their text. Kept when the slot's context is replaced (the language server seeds an open
# buffer's slot over a context built from the file), so that an edit still finds every context that depends on it;
# dropped with the slot (``forget``).
_ASKED: Dict[Tuple[int, str], Set[str]] = {}

# Slots the language server seeded with an open document's buffer: the store's limit never clears them (questions
# about the document would read its file on disk until the next check reseeds them).
_PINNED: Set[Tuple[int, str]] = set()


def claim(index: ProjectIndex) -> None:
    """Make the stored contexts keyed by ``id(index)`` this index's: an index that was freed may have left
    contexts under an id that Python now gives a new index (one process, several runs: tests, an editor)."""
    key = id(index)
    owner = _OWNERS.get(key)
    if owner is not None and owner() is index:
        return
    for store in (_CONTEXTS, _OTHER_STORE):
        for stale in [k for k in store if k[0] == key]:
            del store[stale]
    for stale in [k for k in _ASKED if k[0] == key]:
        del _ASKED[stale]
    _PINNED.difference_update([k for k in _PINNED if k[0] == key])
    _OWNERS[key] = weakref.ref(index)


def forget(key: Tuple[int, str]) -> None:
    """Drop a slot's context and what it asked about."""
    _CONTEXTS.pop(key, None)
    _OTHER_STORE.pop(key, None)
    _ASKED.pop(key, None)
    _PINNED.discard(key)


def pin(key: Tuple[int, str], context) -> None:
    """Seed a slot with an open document's buffer (``context``, or None for a buffer that does not parse)."""
    _CONTEXTS[key] = context
    _PINNED.add(key)


def asked_by(key: Tuple[int, str]) -> Set[str]:
    """The modules the contexts that have held this slot asked about."""
    return _ASKED.get(key, set())


def _store(key: Tuple[int, str], context) -> None:
    """Keep ``context`` under ``key``; at the limit, forget the others first, but for the slots pinned to open
    documents' buffers (the language server's; ``pin``). Replacing a slot never forgets: the
    language server seeds one slot per open buffer before an analysis, whose own context then takes its slot, and
    clearing there would send the questions about the other buffers to their files on disk."""
    if key not in _CONTEXTS and len(_CONTEXTS) >= _MAX_CONTEXTS:
        for stale in [k for k in _CONTEXTS if k not in _PINNED]:
            del _CONTEXTS[stale]
            _ASKED.pop(stale, None)
    _CONTEXTS[key] = context


class ProjectView:
    def __init__(self, index: ProjectIndex, path: str, config):
        self.index = index
        self.path = os.path.abspath(path)
        self.config = config
        summary = index.by_path.get(self.path)
        self.module = summary.name if summary is not None else None
        self._graph: Optional[Dict[str, str]] = None

    # -- classes and graph scope ----------------------------------------------------------------------
    def is_cell_class(self, qualname: str) -> bool:
        return self.module is not None and self.index.is_cell((self.module, qualname))

    def is_imported_cell(self, dotted: str) -> bool:
        if self.module is None:
            return False
        if self.index.outside_project(self.index.qualify(self.module, dotted)):
            return False  # the standard library, numpy...: no Cell there (no class of theirs defines ``construct``)
        ref = self.index.class_ref(self.module, dotted)
        return ref is not None and ref[0] != self.module and self.index.is_cell(ref)

    def refuses_graph_mode(self) -> bool:
        """This module raises unless the mode is PyNative (``if get_context("mode") != PYNATIVE_MODE: raise``):
        its Cells' ``construct`` methods run eagerly (``@jit`` code still compiles)."""
        summary = self.index.by_path.get(self.path)
        return summary is not None and summary.refuses_graph_mode

    def class_chain(self, qualname: str) -> List[Tuple[str, str]]:
        """(module, qualname) of a class of this module and of its readable bases, in method-resolution order."""
        return self.index.method_owner_chain((self.module, qualname)) if self.module is not None else []

    def eager_cell(self, qualname: str) -> bool:
        """A Cell of this module runs eagerly: its module is named for PyNative mode and no graph model outside
        such modules holds it (``ProjectIndex.eager_cell``)."""
        return self.module is not None and self.index.eager_cell((self.module, qualname))

    def graph_functions(self) -> Dict[str, str]:
        if self._graph is None:
            self._graph = self.index.graph_functions_in(self.path) if self.module is not None else {}
        return self._graph

    # -- values in other modules ------------------------------------------------------------------------
    def context_for(self, module: str):
        """The libcst analysis of another module of the project (None when it cannot be read or parsed)."""
        claim(self.index)
        if self.module is not None:  # this module's analysis may work something out from ``module``'s text
            _ASKED.setdefault((id(self.index), self.module), set()).add(module)
        key = (id(self.index), module)
        if key in _CONTEXTS:
            return _CONTEXTS[key]
        from ms_lint.context import ModuleContext
        from ms_lint.source import UnreadableSource, read_source

        summary = self.index.module(module)
        context = None
        if summary is not None:
            try:
                source = read_source(summary.path)
                tree = parse_for_analysis(source.text) if _FAST_TREES else parse_module(source.text)
                context = ModuleContext(tree, source.text, summary.path, self.config,
                                        project=ProjectView(self.index, summary.path, self.config))
            except (UnreadableSource, cst.ParserSyntaxError, RecursionError, MemoryError, ValueError):
                context = None
        _store(key, context)
        return context

    def module_text(self, module: str, path: str) -> Optional[str]:
        """The text questions about ``module`` are answered from, without parsing it: its stored context's (an
        editor's buffer), else the file's (None when it cannot be read)."""
        found = _CONTEXTS.get((id(self.index), module))
        if found is not None:
            return found.text
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError:
            return None

    def own_context(self, text: str):
        """This file's context when another file's check already built it from the same text and config (then
        the check reuses its tree instead of parsing again), else None."""
        if self.module is None:
            return None
        claim(self.index)
        found = _CONTEXTS.get((id(self.index), self.module))
        if found is None or not self._is_indexed_module() or found.text != text or found.path != self.path:  # type: ignore[attr-defined]
            return None
        config = found.config  # type: ignore[attr-defined]
        return found if config is self.config or config.fingerprint() == self.config.fingerprint() else None

    def remember(self, context) -> None:
        """Keep this file's own context for the cross-module questions of the files checked after it (only when
        the index's module of that name is this file: two scripts outside packages may share a name)."""
        if self.module is not None and self._is_indexed_module():
            claim(self.index)
            _store((id(self.index), self.module), context)

    def _is_indexed_module(self) -> bool:
        summary = self.index.modules.get(self.module) if self.module is not None else None
        return summary is not None and summary.path == self.path

    def external_bases(self, class_qualname: str) -> List[Tuple[object, str]]:
        """(context, class qualname) of the bases of a class of this module that live in other modules,
        nearest first (the whole readable chain above them included)."""
        if self.module is None:
            return []
        chain = self.index.method_owner_chain((self.module, class_qualname))
        found = []
        for module, qualname in chain[1:]:
            if module == self.module:
                continue
            context = self.context_for(module)
            if context is not None and qualname in context.scope.classes:
                found.append((context, qualname))
        return found

    def find_method(self, class_qualname: str, method: str) -> Optional[Tuple[object, cst.FunctionDef]]:
        """A method a class of this module inherits from a base in another module: (its module's context, def)."""
        for context, qualname in self.external_bases(class_qualname):
            node = context.scope.classes[qualname].methods.get(method)
            if node is not None:
                return context, node
        return None

    def imported_class(self, dotted: str) -> Optional[Tuple[object, str]]:
        """A class of another project module that ``dotted`` (as written here) names: (that module's context, the
        class qualname). None for a class of this module, of an installed package, or one that cannot be read."""
        if self.module is None:
            return None
        ref = self.index.class_ref(self.module, dotted)
        if ref is None or ref[0] == self.module or ref[0] not in self.index.project_modules:
            return None
        context = self.context_for(ref[0])
        return (context, ref[1]) if context is not None and ref[1] in context.scope.classes else None

    def imported_function(self, name: str) -> Optional[Tuple[object, cst.FunctionDef]]:
        """A module function of another project module that ``name`` (as written here) refers to."""
        if self.module is None:
            return None
        target = self.index.definition(self.module, name)
        if target is None or target[0] == self.module or target[0] not in self.index.project_modules:
            return None
        context = self.context_for(target[0])
        if context is None:
            return None
        node = context.scope.module_functions.get(target[1])
        return (context, node) if node is not None else None

    def project_class(self, qualified_class: str) -> Optional[Tuple[object, str]]:
        """(its module's context, qualname) of a project class named by its qualified name (``pkg.buffer.NStepBuffer``,
        what ``self.buffer = NStepBuffer(...)`` built); None when it is no class of the project that can be read."""
        found = self.index.resolve(qualified_class)
        if found is None or not found[1] or found[0] not in self.index.project_modules:
            return None
        context = self.context_for(found[0])
        if context is None or found[1] not in context.scope.classes:
            return None
        return context, found[1]

    def class_method(self, qualified_class: str, method: str) -> Optional[Tuple[object, cst.FunctionDef]]:
        """A method of a project class named by its qualified name: (its module's context, def), inherited ones
        included."""
        found = self.project_class(qualified_class)
        if found is None:
            return None
        context = found[0]
        node = context.scope.find_method(found[1], method)
        if node is not None:
            return context, node
        return context.project.find_method(found[1], method) if context.project is not None else None

    def project_target(self, dotted: str) -> Optional[Tuple[str, str]]:
        """(module, name) of the project function or class ``dotted`` (as written here) names, else None."""
        if self.module is None:
            return None
        target = self.index.definition(self.module, dotted)
        return target if target is not None and target[0] in self.index.project_modules else None

    def importing_modules(self) -> List[Tuple[str, str]]:
        """(module name, path) of each project module that imports from this one, in name order."""
        if self.module is None:
            return []
        return [(name, self.index.modules[name].path) for name in sorted(self.index.importers_of(self.module))]

    def argparse_default(self, holder: str, dest: str) -> object:
        """The default an ``argparse`` option gives ``holder.dest`` (``args.mode``): a parser of this module, or of
        the module ``holder`` is imported from (``from config import args``); NOT_LITERAL when none is seen. A
        default written as a name (``default=ms.GRAPH_MODE``) comes back qualified (``mindspore.GRAPH_MODE``)."""
        from ms_lint.analysis.summary import NOT_LITERAL

        if self.module is None:
            return NOT_LITERAL
        summary = self.index.module(self.module)
        owner = summary
        if summary is not None and holder in summary.imports:
            owner = self.index.module_holding(summary.imports[holder])
        if owner is None or dest not in owner.argparse_defaults:
            return NOT_LITERAL
        value = owner.argparse_defaults[dest]
        if isinstance(value, str) and value.startswith("<name:"):
            return self.index.qualify(owner.name, value[6:-1]) or NOT_LITERAL
        return value

    def external_call_sites(self, func: cst.FunctionDef, owner: Optional[str]):
        """(caller's context, caller def, call) for each call of this module's ``func`` from graph code in other
        modules, found through the index's call edges; None when some caller cannot be read (then the
        parameters' kinds are not known from the callers)."""
        sites = []
        for site in self.each_external_call_site(func, owner):
            if site is None:
                return None
            sites.append(site)
        return sites

    def each_external_call_site(self, func: cst.FunctionDef, owner: Optional[str]):
        """``external_call_sites`` one at a time, each caller's module parsed when its turn comes (a caller that
        has the answer already need not read the others: a helper of MindSpore's ``ops`` has hundreds); a None
        stands for a caller that cannot be read, and ends them."""
        if self.module is None:
            return
        qualname = f"{owner}.{func.name.value}" if owner else func.name.value
        for module, caller_qualname in self.index.callers_of((self.module, qualname)):
            if module == self.module:
                continue
            context = self.context_for(module)
            caller = context.scope.function_named(caller_qualname) if context is not None else None
            if caller is None:
                yield None
                return
            for call in context.calls_in(caller):
                name = call.func.attr.value if isinstance(call.func, cst.Attribute) else (
                    call.func.value if isinstance(call.func, cst.Name) else None)
                if name == func.name.value:
                    yield context, caller, call

    def construct_call_sites(self, class_qualname: str):
        """(caller's context, caller def, call) for each call of a sub-cell of this class from graph code of the
        project (``self.block(x, c)`` where ``self.block = Block(...)``), or None when there is none or one cannot
        be read: then ``construct``'s parameters keep the entry-point kinds."""
        if self.module is None:
            return None
        sites = []
        for name, method, attr in self._holder_calls(class_qualname):
            context = self.context_for(name)
            caller = context.scope.function_named(method.qualname) if context is not None else None
            if caller is None:
                return None
            for call in context.calls_in(caller):
                func = call.func.value if type(call.func) is cst.Subscript else call.func  # ``self.blocks[i]``
                if (type(func) is cst.Attribute and func.attr.value == attr
                        and type(func.value) is cst.Name and func.value.value == "self"):
                    sites.append((context, caller, call))
        return sites or None

    def _holder_calls(self, class_qualname: str):
        """(module, method summary, attribute) for each graph method of a holder of this class of this module
        (``index.sub_cell_holders``) that calls ``self.<attribute>`` or an item of it."""
        index = self.index
        graph = index.graph_functions()
        for name, owner, attr in index.sub_cell_holders((self.module, class_qualname)):
            for method in index.modules[name].classes[owner].methods.values():
                if (name, method.qualname) in graph and (
                        f"self.{attr}" in method.calls or f"self.{attr}[]" in method.calls):
                    yield name, method, attr

    def kept_out_of_graph(self, class_qualname: str) -> bool:
        """No graph code of the project can reach an instance of this class of this module, as far as the
        project's text shows: no holder's graph method calls one (``construct_call_sites``), no project class
        derives from it, and every module that names it only imports it, constructs it in a method whose result
        goes into attributes of ``self`` that no other code reads (``script_calls.kept_out_of_graph``: mindocr's
        ``CascadeROIHeads`` keeps its ``BBoxAssigner``s in a ``CellList`` nothing calls) or, in this module, calls
        it from script code. What then says what ``construct`` takes is the module's own smoke test."""
        memo = self.__dict__.setdefault("_kept_out", {})
        if class_qualname not in memo:
            memo[class_qualname] = self._kept_out_of_graph(class_qualname)
        return memo[class_qualname]

    def _kept_out_of_graph(self, class_qualname: str) -> bool:
        from ms_lint.analysis import script_calls

        index, module = self.index, self.module
        if module is None or "." in class_qualname or index.subclasses((module, class_qualname)):
            return False
        if next(self._holder_calls(class_qualname), None) is not None:
            return False
        graph = index.graph_functions()
        mention = re.compile(rf"\b{re.escape(class_qualname)}\b")
        held: Set[Tuple[str, str, str]] = set()
        texts = {name: self.module_text(name, index.modules[name].path) or "" for name in index.project_modules}

        def script_function(fname: str) -> bool:  # no graph code, and no other module names it
            word = re.compile(rf"\b{re.escape(fname)}\b")
            return (module, fname) not in graph and not any(
                other != module and word.search(text) for other, text in texts.items())

        for name in sorted(index.project_modules):
            text = texts[name]
            if not mention.search(text):
                continue
            context = self.context_for(name)
            if context is None:
                return False
            found = script_calls.kept_out_of_graph(context.module, context.imports, class_qualname, name == module,
                                                   script_function)
            if found is None:
                return False
            held.update((name, owner, attr) for owner, attr in found)
        for name, owner, attr in held:
            attribute = re.compile(rf"\.{re.escape(attr)}\b")
            if index.subclasses((name, owner)) or any(
                    other != name and attribute.search(text) for other, text in texts.items()):
                return False  # (a subclass or a base in another module may read the attribute)
            context = self.context_for(name)
            if context is None or script_calls.attribute_read_outside_init(context.module, owner, attr):
                return False
        return True

    def subclassed_elsewhere(self, class_qualname: str) -> bool:
        """Does a class of another module of the project derive from this class of this module?"""
        return self.module is not None and any(
            module != self.module for module, _ in self.index.subclasses((self.module, class_qualname)))

    def constructor_int(self, class_qualname: str, param: str) -> Tuple[Optional[int], str]:
        """The int ``__init__`` parameter ``param`` of a class of this module takes when the project builds it
        (its literal default, or the literals its constructions pass), with where that comes from."""
        if self.module is None:
            return None, ""
        return constructor_value(self.index, (self.module, class_qualname), param)


def method_of(context, class_qualname: str, name: str) -> Optional[Tuple[object, cst.FunctionDef]]:
    """(context, def) of a method of a class of ``context``'s module, defined on the class, on a base in the same
    module, or on a base in another project module."""
    node = context.scope.find_method(class_qualname, name)
    if node is not None:
        return context, node
    return context.project.find_method(class_qualname, name) if context.project is not None else None
