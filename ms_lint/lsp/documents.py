"""Checking editor buffers: the text of an open document, with the config, project index and noqa that
``ms-lint check`` would use for the same file on disk.

The project index (``ms_lint.analysis.index.index_for``: one per package and config, kept by this process) holds
the summaries of every open document's buffer, not of the file on disk, so a Cell defined in an unsaved buffer is
seen from the others. The last analysis of each document is kept (its libcst module, context and fix objects):
code actions and "fix all" are answered from it without analyzing again.
"""
from __future__ import annotations

import io
import os
import tokenize
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from ms_lint import treememo
from ms_lint.config import Config, ConfigError, find_pyproject, load_config
from ms_lint.diagnostics import Finding
from ms_lint.lsp.incremental import IncrementalParser
from ms_lint.source import SourceFile, UnreadableSource, decode_source


@dataclass
class Checked:
    """One document version's findings and what the code actions need."""

    path: str
    version: Optional[int]
    text: str
    findings: List[Finding] = field(default_factory=list)
    config: Optional[Config] = None
    source: Optional[SourceFile] = None
    analysis: object = None  # ms_lint.engine.FileAnalysis, None when nothing was analyzed
    _variants: Optional[List[Tuple[Finding, str]]] = None
    _fixed: Dict[bool, str] = field(default_factory=dict)
    # Gives the project index this buffer's summary again: fixing analyzes the fixed text under the same path.
    restore: Optional[Callable[[], object]] = field(default=None, repr=False)

    def variants(self) -> List[Tuple[Finding, str]]:
        """(finding, the text with only its fix applied) for each fixable finding, unsafe ones included."""
        if self._variants is None:
            from ms_lint.fixer import single_fix_variants

            self._variants = []
            if self.source is not None and self.config is not None and any(f.fix for f in self.findings):
                try:
                    self._variants = single_fix_variants(self.source, self.config, self.path)
                finally:
                    self._restore()
        return self._variants

    def fixed(self, unsafe: bool) -> str:
        """The text ``ms-lint fix --apply`` (``--unsafe-fixes``) would write."""
        if unsafe not in self._fixed:
            from ms_lint.fixer import fix_text

            text = self.text
            if self.source is not None and self.config is not None and any(f.fix for f in self.findings):
                try:
                    outcome = fix_text(self.source, self.config, unsafe=unsafe, path=self.path)
                finally:
                    self._restore()
                if outcome.changed and not outcome.error:
                    text = outcome.fixed
            self._fixed[unsafe] = text
        return self._fixed[unsafe]

    def _restore(self) -> None:
        if self.restore is not None:
            self.restore()


class ConfigCache:
    """The Config of a document's folder: that of the nearest configuring pyproject.toml (as ``check``), read
    again when that file changes."""

    def __init__(self) -> None:
        self._loaded: Dict[str, Tuple[Optional[int], Config]] = {}

    def for_path(self, path: str) -> Config:
        pyproject = find_pyproject(os.path.dirname(os.path.abspath(path)))
        if pyproject is None:
            return self._loaded.setdefault("", (None, Config()))[1]
        try:
            stamp: Optional[int] = os.stat(pyproject).st_mtime_ns
        except OSError:
            stamp = None
        known = self._loaded.get(pyproject)
        if known is None or known[0] != stamp:
            known = (stamp, load_config(path=pyproject))  # ConfigError goes to the caller
            self._loaded[pyproject] = known
        return known[1]


def source_of(path: str, text: str) -> SourceFile:
    """The buffer as ``read_source`` would give the saved file: encoded in its declared encoding (so fixes are
    checked against it), NUL bytes and undecodable text rejected the same way."""
    raw = text.encode("utf-8", "surrogateescape")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError:
        encoding = "utf-8"
    if encoding not in ("utf-8", "utf-8-sig"):
        try:
            raw = text.encode(encoding)
        except (UnicodeEncodeError, LookupError):
            pass  # decode_source reports it, as for the file on disk
    return decode_source(path, raw)


class Checker:
    """Checks documents; remembers each open document's last result and buffer."""

    def __init__(self) -> None:
        self.configs = ConfigCache()
        self.results: Dict[str, Checked] = {}  # by absolute path
        self.buffers: Dict[str, bytes] = {}  # raw bytes of open documents, by absolute path
        self.parsers: Dict[str, IncrementalParser] = {}  # per open document: its analysis' trees
        self.shadows: Dict[str, IncrementalParser] = {}  # per open document: the trees of its cross-module context

    def check(self, path: str, text: str, version: Optional[int] = None) -> Checked:
        """Findings of ``text`` as the file ``path``; never raises (an internal error is one MSL900)."""
        from ms_lint.engine import unanalyzable

        key = os.path.abspath(path)
        result = Checked(path, version, text)
        try:
            result.config = self.configs.for_path(path)
        except ConfigError as exc:
            result.findings = [unanalyzable(path, f"bad configuration: {exc}")]
            self.results[key] = result
            return result
        if result.config.is_excluded(path, check_parents=True):
            self.results[key] = result  # excluded by the project's config: nothing to say (as --force-exclude)
            return result
        try:
            result.source = source_of(path, text)
        except UnreadableSource as exc:
            result.findings = [unanalyzable(path, exc.reason, exc.line or 1)]
            self.results[key] = result
            # questions about the document get what an unreadable file gives (no context), not its last buffer
            self.buffers[key] = text.encode("utf-8", errors="surrogatepass")
            return result
        try:
            self.buffers[key] = result.source.raw
            analysis = self._analyze(result.source, result.config, path)
            source, config = result.source, result.config
            result.restore = lambda: self._restore(source, config)
            result.analysis = analysis
            result.findings = analysis.findings
        except Exception as exc:  # an ms-lint bug must not stop the server: report it on the file
            result.findings = [unanalyzable(path, f"internal error ({type(exc).__name__}: {exc})")]
            result.source = None
        treememo.prune()  # the facts of nodes this edit replaced go at the next check (ms_lint/treememo.py)
        self.results[key] = result
        return result

    def close(self, path: str) -> None:
        """The document is closed: the index goes back to the file on disk, and so do the questions about it
        (its slot and what other contexts worked out from its buffer are dropped, even when the buffer's text is
        the file's: a buffer that did not parse left its slot empty)."""
        key = os.path.abspath(path)
        closed = self.results.pop(key, None)
        self.parsers.pop(key, None)
        self.shadows.pop(key, None)
        if self.buffers.pop(key, None) is not None:
            self._sync_disk(key, closed.config if closed is not None else None, forget=True)
            if not os.path.exists(key):  # deleted while open: its buffer was the index's text
                _follow_files(key)

    def saved(self, path: str) -> None:
        """Another tool may have written the file: the index re-reads what is not open. A file an index does not
        hold may be a new module (open in the editor or not): those indexes look names up again."""
        key = os.path.abspath(path)
        if key not in self.buffers:
            try:
                config = self.configs.for_path(path)
            except ConfigError:
                config = None
            self._sync_disk(key, config)
        _follow_files(key)

    def _sync_disk(self, key: str, config: Optional[Config], forget: bool = False) -> None:
        from ms_lint.analysis import index as index_module

        holders = [index for index in list(index_module._INDEXES.values()) if key in index.by_path]
        if not holders:  # a file no index reads (a log, a checkpoint): not read either
            return
        try:
            with open(key, "rb") as handle:
                raw = handle.read()
        except OSError:
            return
        for index in holders:
            if forget:
                _forget_contexts(index, {key})
            _update(index, key, raw)
            if config is not None:
                self._reseed(index, config)

    def _analyze(self, source: SourceFile, config: Config, path: str):
        from ms_lint.engine import analyze_source

        key = os.path.abspath(source.path)
        index = self._index(source, config)
        self._reseed(index, config)
        parser = self.parsers.setdefault(key, IncrementalParser())
        return analyze_source(source, config, path, index=index, trees=parser)

    def _restore(self, source: SourceFile, config: Config) -> None:
        """After a fix was analyzed under this document's path: the index holds its buffer again, and so does the
        slot other documents' cross-module questions read (else their code actions read the file on disk)."""
        self._reseed(self._index(source, config), config)

    def _reseed(self, index, config: Config) -> None:
        """Every open document of the index answers questions about it from its buffer again (after an edit
        dropped contexts, or a fix was analyzed under a document's path): the index gets each buffer's text first
        (a file in two indexes, a root script and a package's, was edited through the other one)."""
        for other, raw in self.buffers.items():  # the other open buffers of this project, not their files
            if other in index.by_path:
                _update(index, other, raw, self._summarizer(other))
        for other, raw in self.buffers.items():
            if other in index.by_path:
                self._seed_context(index, other, raw, config)

    def _index(self, source: SourceFile, config: Config):
        """The project index of the document's package (``index_for``'s: one per package and config, kept by this
        process), built on first use as ``check`` builds it, with this buffer's summary."""
        from ms_lint.analysis.index import _INDEXES, index_for, index_key
        from ms_lint.analysis.layout import package_of

        package, root = package_of(source.path)
        anchor = os.path.join(root, package.split(".")[0]) if package else os.path.abspath(source.path)
        known = _INDEXES.get(index_key(anchor, config))
        if known is not None:
            key = os.path.abspath(source.path)
            _update(known, key, source.raw, self._summarizer(key))  # before index_for's own update: see _update
        return index_for(source, config)

    def _summarizer(self, key: str):
        """``summarize_file`` for the document ``key``, parsing only the runs of statements its last text did not
        have (``lsp.runs``)."""
        return self.parsers.setdefault(key, IncrementalParser()).runs.summary

    def _seed_context(self, index, key: str, raw: bytes, config: Config) -> None:
        """Questions other modules' analyses ask about an open document (``ProjectView.context_for``) are answered
        from its buffer, not from the file on disk: its context is built from the buffer when first asked."""
        from ms_lint.analysis import project
        from ms_lint.analysis.layout import digest_of

        summary = index.by_path.get(key)
        if summary is None:
            return
        project.claim(index)
        slot = (id(index), summary.name)
        found = project._CONTEXTS.get(slot)
        if isinstance(found, _BufferContext) and found.raw == raw and found.config is config:
            return
        if summary.digest != digest_of(raw):
            # the buffer did not parse (the index keeps the summary of its last text that did: a half-typed edit):
            # questions about it get what ``context_for`` gives for a file that does not parse, no context
            project.pin(slot, None)
            return
        shadow = self.shadows.setdefault(key, IncrementalParser())
        project.pin(slot, _BufferContext(index, summary.path, raw, config, shadow))


class _BufferContext:
    """A ``ModuleContext`` of an open document's buffer, built on first use (as ``context_for`` builds one from
    the file: its own tree, its own project view)."""

    def __init__(self, index, path: str, raw: bytes, config: Config, parser: IncrementalParser):
        self.index, self.path, self.raw, self.config, self.parser = index, path, raw, config, parser
        self.text = decode_source(path, raw).text  # as a ModuleContext's: read without building the context
        self._context = None

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        context = self.__dict__.get("_context")
        if context is None:
            from ms_lint.analysis.project import ProjectView
            from ms_lint.context import ModuleContext

            context = ModuleContext(self.parser.parse(self.text), self.text, self.path, self.config,
                                    project=ProjectView(self.index, self.path, self.config),
                                    known=self.parser.tree_facts)
            self.parser.tree_facts = context.scope.tree_facts
            self.__dict__["_context"] = context
        return getattr(context, name)


def _update(index, key: str, raw: bytes, summarize=None) -> None:
    """Give the index this text of the file. ``ProjectIndex.update_file`` forgets everything the index worked out
    (graph closure, resolved names); when the new summary differs from the old one only in line numbers (which
    nothing the index keeps depends on), the summary is swapped in and the rest kept: typing inside a function
    does not rebuild the project's graph closure, and only the module contexts built from the old text (its own,
    and those that asked about it) are dropped. Otherwise every context of the index goes: any of them may hold
    what the index answered from the old summary (a class being a Cell, graph scope). The caller seeds the open
    buffers' slots again (``Checker._reseed``). ``summarize``: what gives the summary of ``raw`` (by default
    ``summarize_file``; an open document's ``DocumentRuns.summary``)."""
    from ms_lint.analysis.index import summarize_file
    from ms_lint.analysis.layout import digest_of
    from ms_lint.analysis.summary import same_shape

    known = index.by_path.get(key)
    if known is not None and known.digest == digest_of(raw):
        return
    summary = None
    if known is not None and index.modules.get(known.name) is known:
        summary = (summarize or summarize_file)(key, raw)
        if summary is None:  # the buffer does not parse: the index keeps the last summary that did
            _forget_contexts(index, {key})
            return
        if same_shape(known, summary):
            _forget_contexts(index, {key})
            index.by_path[key] = summary
            index.modules[summary.name] = summary
            return
        if _keeps_graph(index, key, raw, known, summary):
            _forget_contexts(index, {key})
            return
    _forget_contexts(index, {key}, everything=True)
    index.update_file(key, raw, summary)  # nothing to do when ``_keeps_graph`` did it


def _keeps_graph(index, key: str, raw: bytes, known, summary) -> bool:
    """An edit that changed only what the module's functions call (the summaries have the same shape but for
    ``CALL_FIELDS``), and after which the project's graph code, its call edges and the module's calls of
    ``self.<attribute>`` are what they were: the index takes the new summary, and the other modules' contexts
    keep what they worked out. Those fields are read by the graph closure, and, of the calls of
    ``self.<attribute>``, by ``ProjectView.construct_call_sites`` alone; every other question a context asked
    the index has the same answer. (The contexts built from the old text, and those that asked about it, go as
    for any edit.) Adding ``y = abs(x)`` to a ``construct`` is such an edit. Not for a module the index read
    lazily (a root script's index holding a package module open in the editor): ``update_file`` makes it a project
    module, which changes what names resolve to. False otherwise (the index may have taken the summary: the
    caller then drops every context)."""
    from ms_lint.analysis.summary import CALL_FIELDS, same_shape

    before = index.known_graph()
    if before is None or known.name not in index.project_modules or not same_shape(known, summary, CALL_FIELDS):
        return False
    graph, callers = list(before[0].items()), dict(before[1])
    index.update_file(key, raw, summary)
    index.graph_functions()
    after = index.known_graph()
    return (after is not None and list(after[0].items()) == graph and after[1] == callers
            and _self_calls(known) == _self_calls(summary))


def _self_calls(summary) -> set:
    """The calls of ``self.<something>`` each method of the module makes."""
    return {(method.qualname, call) for info in summary.classes.values() for method in info.methods.values()
            for call in method.calls if call.startswith("self.")}


def _follow_files(key: str) -> None:
    """``key``, a file or folder the editor reports, may be new or gone. An index whose project walk would list
    it (or a file under it), or that holds it as a project file, is dropped and built again at the next check
    (module names, owners of a shared name, packages all follow the files: an ``__init__.py`` renames a folder's
    modules); an index that read it lazily drops it when it is gone; the others look module names up again (an
    import that found nothing, or a folder listed before, may find it now)."""
    from ms_lint.analysis import index as index_module

    python = key.endswith(".py")
    exists = os.path.isfile(key) if python else os.path.isdir(key)
    if not python and not exists and os.path.exists(key):
        return  # another kind of file (a log, a checkpoint)
    inside = key + os.sep
    for slot, index in list(index_module._INDEXES.items()):
        if python:
            held = [key] if key in index.by_path else []
            if held and exists:
                continue  # re-read by ``_sync_disk``, or an open buffer
            listed = index.is_project_path(key)
        else:  # a folder created, renamed or deleted
            held = [path for path in index.by_path if path.startswith(inside)]
            listed = index.is_project_path(os.path.join(key, "__init__.py"))
        project = listed or any(index.by_path[path].name in index.project_modules for path in held)
        _forget_contexts(index, set(), everything=True)
        if project:
            del index_module._INDEXES[slot]  # built again, with the open buffers, at the next check
            continue
        for path in held:  # a module read lazily, gone
            index.remove_file(path)
        index.forget_lookups()


def _forget_contexts(index, paths, everything: bool = False) -> None:
    """Drop the cross-module analyses (``ms_lint.analysis.project``) built from these files' old text: their own
    contexts and every context that asked about one of them (``project.asked_by``: a base class's context holds
    value models its callers' text decided), transitively; with ``everything``, every context of the index. A slot
    that holds no context (a module that does not parse) stays, unless it is one of these files'."""
    from ms_lint.analysis import project

    names = {summary.name for path in paths
             for summary in [index.by_path.get(os.path.abspath(path))] if summary is not None}
    slots = [k for k in project._CONTEXTS if k[0] == id(index)]
    if everything:
        stale = set(slots)
    else:
        stale = set()
        while True:
            more = {k for k in slots if k not in stale and (k[1] in names or project.asked_by(k) & names)}
            if not more:
                break
            stale |= more
            names |= {k[1] for k in more}
    for key in stale:
        if project._CONTEXTS.get(key) is not None or key[1] in names:
            project.forget(key)
