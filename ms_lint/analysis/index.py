"""The project index: every module of the checked packages, summarized once per run, and the facts that cross files.

Built with the stdlib ``ast`` (about ten times cheaper than libcst) and no code executed. It answers:

* which module a dotted name refers to (``from ..heads import BaseHead``, re-exports through ``__init__.py``),
  for the project's own modules and for installed packages whose source can be read (found with
  ``importlib.machinery.PathFinder``, which locates files without importing anything);
* whether a class is an ``nn.Cell``, through bases in any module;
* which functions of the whole project are graph code: ``construct`` of Cells, ``@jit`` functions, functions
  handed to ``jit`` or to a project function that hands its argument to ``jit``, and everything they call, across
  modules (``self.helper`` found on a base class in another file, ``helper`` imported from a sibling);
* the literal arguments with which the project constructs each class (constructor defaults as trip counts).

The per-file libcst analysis (``ms_lint.context.ModuleContext``) asks it through :class:`ProjectView`.
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import os
import sys
import warnings
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

from ms_lint.analysis.frameworks import dispatched_methods, may_dispatch
from ms_lint.analysis.layout import (STDLIB_NAMES, ModuleLocator, checked_tops, digest_of, module_name_of,
                                    module_names, package_of, project_files, walked)
from ms_lint.analysis.qualnames import canonical, is_cell_base, known_mindspore_name
from ms_lint.analysis.summary import (
    CALL_FIELDS, FORWARDED, NOT_LITERAL, SUPER_PREFIX, ClassSummary, FunctionSummary, InitParam, ModuleSummary,
    same_shape, summarize, summarize_trees,
)
from ms_lint.blake import blake2b
from ms_lint.chunks import ast_runs, chunk_bounds
from ms_lint.prefilter import JIT_WORDS

CELL_ROOT = "mindspore.nn.Cell"
# ``qualify`` here keeps the module a name was imported from: each spelling of ``jit`` (MindSpore 2.10 defines it in
# ``mindspore.graph.api``; ``mindspore.common`` re-exports it) is listed.
JIT_NAMES = {"mindspore.jit", "mindspore.ms_function", "mindspore.common.api.jit", "mindspore.common.api.ms_function",
             "mindspore.graph.api.jit", "mindspore.graph.api.ms_function"}
# The summary fields an edit may change and leave every table of the index as it was, where what changed is inert
# (``ProjectIndex.only_inert_changes``): what functions call and pass, what the module constructs, what each class's
# ``__init__`` builds into attributes of ``self``.
INERT_FIELDS = CALL_FIELDS | {"constructions", "attribute_classes"}
COMPILE_TIME_DECORATORS = {"mindspore.ops.constexpr", "mindspore.ops._primexpr", "mindspore.ops.primitive.constexpr",
                           "mindspore.ops.primitive._primexpr"}
# Packages never read from the installed copy: MindSpore's own classes are known by name (``ms_lint.scope``),
# and reading its 2,000 modules to learn that ``nn.Dense`` is a Cell would cost more than the whole check.
NOT_READ = ("mindspore",)
# Installed packages that cannot re-export a function or class of a project that uses MindSpore (they do not import
# it): the standard library and the scientific packages model code imports. A question "which project function or
# class does ``np.sum`` name?" is answered None without reading them (``outside_project``): resolving such names
# summarized 133 of their modules on MindSpore's source, most of them once per worker, and on the eight packages
# cost 0.8 s in the parent while both workers waited. Other questions (is a class built on one of them a Cell,
# can a script's call of one compile a graph) still read them. A package of such a name among the project's
# modules or under its source roots is the project's.
EXTERNAL_TOPS = STDLIB_NAMES | frozenset(
    {"numpy", "scipy", "matplotlib", "PIL", "pandas", "sklearn", "cv2", "yaml", "tqdm"})

_INSTALLED_DIRS: List[str] = []


def _installed_file(path: str) -> bool:
    """Is ``path`` in the standard library's folders or in a site-packages folder?"""
    if not _INSTALLED_DIRS:
        import site
        import sysconfig

        folders = {folder for key, folder in sysconfig.get_paths().items()
                   if key in ("stdlib", "platstdlib", "purelib", "platlib")}
        try:
            folders.update(site.getsitepackages())
            folders.add(site.getusersitepackages())
        except AttributeError:  # an embedded interpreter's trimmed ``site``
            pass
        _INSTALLED_DIRS.extend(os.path.join(os.path.realpath(folder), "") for folder in folders)
    real = os.path.realpath(path)
    return any(real.startswith(folder) for folder in _INSTALLED_DIRS)


ClassRef = Tuple[str, str]  # (module name, class qualname)
FunctionRef = Tuple[str, str]  # (module name, function qualname)
Holders = Dict[ClassRef, List[Tuple[str, str, str]]]  # class -> (module, class, attribute) holding one
Constructions = Dict[ClassRef, List[Tuple[List[object], Dict[str, object]]]]  # class -> (args, kwargs) it is built with
# ``ProjectIndex.derived_tables``
DerivedTables = Tuple[Dict[FunctionRef, str], Dict[FunctionRef, List[FunctionRef]], Optional[Tuple[Holders, Holders]],
                      Optional[Constructions]]


def summarize_file(path: str, raw: Optional[bytes] = None) -> Optional[ModuleSummary]:
    """The summary of one file, or None when it cannot be read or parsed (the file's own check reports that)."""
    try:
        if raw is None:
            with open(path, "rb") as handle:
                raw = handle.read()
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    name, package, _ = module_name_of(path)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))  # generated code (op-info builder chains) nests deeply
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bounds = chunk_bounds(text)
            if len(bounds) > 1 and not ("get_context" in text and "PYNATIVE_MODE" in text):
                summary = _summarize_runs(text, bounds, path, name, digest_of(raw), package)
                if summary is not None:
                    return summary
            tree = ast.parse(text, path)
        return summarize(tree, name, os.path.abspath(path), digest_of(raw), package, text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    finally:
        sys.setrecursionlimit(limit)


def _summarize_runs(text: str, bounds, path: str, name: str, digest: str, package: Optional[str]
                    ) -> Optional[ModuleSummary]:
    """The summary of a long module read one run of top-level statements at a time (``ms_lint.chunks.ast_runs``);
    None when a run does not parse (a cut inside a string or a bracket, or a real error: the whole module
    decides). Not for modules whose PyNative guard (``refuses_graph_mode``) may need the whole tree."""
    try:
        return summarize_trees(ast_runs(text, bounds, path), name, os.path.abspath(path), digest, package, text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# A file's cross-file fingerprint before the digests: (what the summaries say about it, the paths of the modules
# whose digests complete it). ``ProjectIndex.fingerprint_recipe``.
Recipe = Tuple[str, List[str]]


def fingerprint_of(recipe: Recipe, digests: Dict[str, str]) -> str:
    """The fingerprint a recipe makes with these digests of its modules (by absolute path; a module without one
    counts as absent)."""
    said, paths = recipe
    stamp = blake2b(said.encode(), digest_size=12)
    for path in paths:
        stamp.update(f"{path}:{digests.get(path, '')};".encode())
    return stamp.hexdigest()


def content_stamps(index: "ProjectIndex", stamps: Dict[str, Tuple[int, int]]
                   ) -> Dict[str, Tuple[int, int, Optional[str]]]:
    """``stamps`` with the content digest the index summarized each file from (None where it holds no summary
    of those bytes: a file that does not parse), and the stamps of the modules outside them that the index read
    (their digests are in the fingerprints too), for ``FingerprintStore.save``."""
    out: Dict[str, Tuple[int, int, Optional[str]]] = {}
    for path, (mtime_ns, size) in stamps.items():
        entry = index.cache.entries.get(path)
        same = entry is not None and entry[0] == mtime_ns and entry[1] == size
        out[path] = (mtime_ns, size, entry[2].digest if same else None)
    for path in index.by_path:  # modules outside the project the fingerprints read: a sibling package, a base class
        entry = index.cache.entries.get(path)
        if path not in out and entry is not None:
            out[path] = (entry[0], entry[1], entry[2].digest)
    for path in index.located.values():  # found but not summarized (it does not parse): a module once it does
        if path is not None and os.path.abspath(path) not in out:
            try:
                st = os.stat(path)
            except OSError:
                continue
            out[os.path.abspath(path)] = (st.st_mtime_ns, st.st_size, None)
    return out


# Summaries are made on worker processes from this many files, or this many bytes of them, on: below both, starting
# workers costs more than it saves. Bytes too, for a project of few long files (the Cell corpus: 156 files, one of
# 55k lines, 1.0 s of the 1.6 s its summaries took in one process).
PARALLEL_SUMMARIES = 200
PARALLEL_SUMMARY_BYTES = 1_000_000
SUMMARY_BATCH = 32  # files per batch at most


def _summarize_entry(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return path, None
    summary = summarize_file(path)
    return path, (st.st_mtime_ns, st.st_size, summary) if summary is not None else None


def summary_batches(sizes: Dict[str, int], workers: int) -> List[List[str]]:
    """The files cut into batches for the summarizing workers, the heaviest first: at most ``SUMMARY_BATCH`` files
    and about a twentieth of a worker's share of the bytes each, so that the run does not end with one worker
    still busy with a long file (or a batch of them) while the others wait; a longer file is a batch alone."""
    share = max(1, sum(sizes.values()) // (workers * 20))
    batches: List[List[str]] = []
    current: List[str] = []
    weight = 0
    for path in sorted(sizes, key=lambda p: (-sizes[p], p)):
        if current and (weight + sizes[path] > share or len(current) == SUMMARY_BATCH):
            batches.append(current)
            current, weight = [], 0
        current.append(path)
        weight += sizes[path]
    if current:
        batches.append(current)
    return batches


class SummaryCache:
    """Summaries by absolute path, reused while (mtime, size) or the content digest are unchanged."""

    def __init__(self, entries: Optional[Dict[str, Tuple[int, int, ModuleSummary]]] = None):
        self.entries = entries or {}
        self.dirty = False
        # path -> the summary an entry held before this run summarized the file's new bytes (``ms_lint.analysis.
        # carry`` compares them)
        self.replaced: Dict[str, ModuleSummary] = {}

    def _replace(self, path: str, entry: Tuple[int, int, ModuleSummary]) -> None:
        old = self.entries.get(path)
        if old is not None and old[2].digest != entry[2].digest:
            self.replaced.setdefault(path, old[2])
        self.entries[path] = entry
        self.dirty = True

    def fill(self, paths: Iterable[str], jobs: Optional[int], names: Optional[Dict[str, str]] = None,
             meanwhile: Optional[Callable[[], None]] = None) -> None:
        """Summarize on worker processes the files whose (mtime, size) the cache does not hold, when there are
        many (MindSpore's 2,142 files: 6.5 s in one process, 4.4 s on two, the summaries' pickling included).
        ``names``: the module name each path has in the project's layout now (``get``). ``meanwhile``: run on a
        thread of this process while the workers summarize (this process only waits for them then), and
        finished before ``fill`` returns; not run when nothing is summarized on workers."""
        from ms_lint.processes import worker_count

        names = names or {}
        missing: Dict[str, int] = {}  # path -> size
        for path in dict.fromkeys(os.path.abspath(p) for p in paths):
            entry = self.entries.get(path)
            try:
                st = os.stat(path)
            except OSError:
                continue
            if (entry is None or entry[0] != st.st_mtime_ns or entry[1] != st.st_size
                    or entry[2].name != names.get(path, entry[2].name)):
                missing[path] = st.st_size
        workers = worker_count(jobs, len(missing))
        if workers <= 1 or (len(missing) < PARALLEL_SUMMARIES and sum(missing.values()) < PARALLEL_SUMMARY_BYTES):
            return  # ``get`` summarizes them one by one (no pool: ``multiprocessing`` costs 20 ms to import)
        from ms_lint.gcpolicy import collect_less
        from ms_lint.pool import run_batches

        for path, entry in run_batches([], _summarize_entry, workers, SUMMARY_BATCH, lambda item, why: (item, None),
                                       initializer=collect_less, meanwhile=meanwhile,
                                       batches=summary_batches(missing, workers)):
            if entry is not None:
                self._replace(path, entry)

    def get(self, path: str, name: Optional[str] = None) -> Optional[ModuleSummary]:
        """The summary of the file's bytes now. ``name``: the module name the project's layout gives it now; a
        summary made under another (an ``__init__.py`` added or removed above it since) is made again: its
        name and the package its relative imports start from are those of the old layout."""
        key = os.path.abspath(path)
        try:
            st = os.stat(key)
        except OSError:
            return None
        entry = self.entries.get(key)
        if entry is not None and name is not None and entry[2].name != name:
            entry = None
        if entry is not None and entry[0] == st.st_mtime_ns and entry[1] == st.st_size:
            return entry[2]
        try:
            with open(key, "rb") as handle:
                raw = handle.read()
        except OSError:
            return None
        if entry is not None and entry[2].digest == digest_of(raw):
            self.entries[key] = (st.st_mtime_ns, st.st_size, entry[2])
            self.dirty = True
            return entry[2]
        summary = summarize_file(key, raw)
        if summary is not None:
            self._replace(key, (st.st_mtime_ns, st.st_size, summary))
        return summary


def _owner_order(roots: List[str]) -> Callable[[str], Tuple[int, str]]:
    """The order files are added in, so that of two files with one module name (``train.py`` in two folders) the
    one an import would find keeps the name (``ProjectIndex._own_name``): the file under the earlier source root
    (``ModuleLocator.in_roots``' order), then ``x.py`` before ``x/__init__.py``; not the order the files were
    given in, which the stored fingerprints' project state does not record."""
    rank = {root: number for number, root in enumerate(roots)}
    memo: Dict[str, Tuple[Optional[str], str]] = {}

    def order(path: str) -> Tuple[int, str]:
        return rank.get(package_of(path, memo)[1], len(rank)), path

    return order


class ProjectIndex:
    """Summaries of the project's modules (read eagerly) and of installed modules (read when first named)."""

    def __init__(self, cache: Optional[SummaryCache] = None, cell_bases: Iterable[str] = (),
                 unresolved_construct_is_cell: bool = True, pynative_packages: Iterable[str] = ("pynative",)):
        self.cache = cache or SummaryCache()
        self.summary_store = None  # ms_lint.cache.SummaryStore that keeps ``cache`` between runs (set by the runner)
        self.modules: Dict[str, ModuleSummary] = {}
        self.by_path: Dict[str, ModuleSummary] = {}
        self.roots: List[str] = []  # source roots, searched before installed packages
        self.project_modules: Set[str] = set()
        cell_bases = tuple(cell_bases)
        self.cell_bases = set(cell_bases)
        self.unresolved_construct_is_cell = unresolved_construct_is_cell
        self.pynative_packages = tuple(pynative_packages)
        # what ``Config.index_options`` gives for the configurations this index answers for
        self.options = {"cell_bases": cell_bases, "unresolved_construct_is_cell": unresolved_construct_is_cell,
                        "pynative_packages": self.pynative_packages}
        self._missing: Set[str] = set()
        # module name -> the file ``locate`` found for it (None: none), for each name outside the project this
        # index looked up: a new file that shadows or provides one makes other fingerprints (``analysis.carry``)
        self.located: Dict[str, Optional[str]] = {}
        self._locator: Optional[ModuleLocator] = None
        self.walked_tops: Set[str] = set()  # top package folders of the files ``for_files`` was given
        self._cell: Dict[ClassRef, bool] = {}
        self._resolved: Dict[str, Optional[Tuple[str, str]]] = {}
        self._mindspore_names: Dict[str, Optional[str]] = {}
        # the names ``resolve`` and ``mindspore_name`` are working out, outermost first (``_remembered``)
        self._resolving: List[list] = []
        self._naming: List[list] = []
        self._class_refs: Dict[Tuple[str, str], Optional[ClassRef]] = {}
        self._qualified: Dict[Tuple[str, str], Optional[str]] = {}  # (module, dotted) -> ``qualify``'s answer
        self._chains: Dict[ClassRef, List[ClassRef]] = {}
        self._graph: Optional[Dict[FunctionRef, str]] = None
        self._callers: Dict[FunctionRef, List[FunctionRef]] = {}
        self._constructions: Optional[Dict[ClassRef, List[Tuple[List[object], Dict[str, object]]]]] = None
        # what ``passed_on_holders`` and ``fingerprint_recipe`` read of the constructions table, by class: a base
        # every class of a module builds (``super().__init__``) is read once per class of it (the Cell corpus's
        # 3,000 classes: 3.5 s of fingerprints, most of it the same 3,000 constructions again and again)
        self._passed_on: Dict[ClassRef, List[ClassRef]] = {}
        self._constructions_text: Dict[ClassRef, str] = {}
        self._holders: Optional[Tuple[Holders, Holders]] = None  # (built by __init__, declared by annotation)
        self._subclasses: Optional[Dict[ClassRef, List[ClassRef]]] = None  # project class -> its direct subclasses
        self._graph_by_module: Optional[Dict[str, Dict[str, str]]] = None
        self._importers: Optional[Dict[str, Set[str]]] = None  # module -> project modules importing from it
        self._outside: Dict[str, bool] = {}  # top-level name -> ``outside_project``'s answer

    # -- building --------------------------------------------------------------------------------
    @classmethod
    def for_files(cls, files: Iterable[str], cache: Optional[SummaryCache] = None, jobs: Optional[int] = 1,
                  listings=None, meanwhile: Optional[Callable[[], None]] = None, **options) -> "ProjectIndex":
        """Index every Python file of the packages that hold ``files`` (and the files themselves); ``jobs``
        worker processes summarize what the cache does not hold; ``listings``: the run's folder listings
        (``ms_lint.analysis.layout.Listings``), when it has read some; ``meanwhile``: ``SummaryCache.fill``'s."""
        index = cls(cache, **options)
        files = list(files)
        paths, index.roots = project_files(files, listings=listings)
        index.walked_tops = checked_tops(files)
        names = module_names(paths)
        index.cache.fill(paths, jobs, names, meanwhile)
        for path in sorted(paths, key=_owner_order(index.roots)):
            index.add_file(path, name=names.get(path))
        return index

    def add_file(self, path: str, project: bool = True, name: Optional[str] = None) -> Optional[ModuleSummary]:
        """Add the file's summary; ``name``: its module name in the layout now (``SummaryCache.get``)."""
        key = os.path.abspath(path)
        if key in self.by_path:
            return self.by_path[key]
        summary = self.cache.get(key, name)
        if summary is None:
            return None
        summary = self._own_name(summary)
        self.by_path[key] = summary
        self.modules.setdefault(summary.name, summary)
        if project:
            self.project_modules.add(summary.name)
        self._forget()
        return summary

    def _own_name(self, summary: ModuleSummary) -> ModuleSummary:
        """Two files with one module name (``train.py`` scripts in two folders, outside any package): the first
        keeps the name imports resolve to, the others get ``train#2``..., so each is still analysed as itself
        (its own argparse defaults, Cells and graph functions), though no import reaches them."""
        known = self.modules.get(summary.name)
        if known is None or known.path == summary.path:
            return summary
        number = 2
        while f"{summary.name}#{number}" in self.modules and self.modules[f"{summary.name}#{number}"].path != summary.path:
            number += 1
        return dataclasses.replace(summary, name=f"{summary.name}#{number}")

    def update_file(self, path: str, raw: bytes, summary: Optional[ModuleSummary] = None) -> None:
        """Summarize ``path`` from these bytes (the text being checked), replacing what the disk said; ``summary``:
        the caller's ``summarize_file(path, raw)``, when it has made one."""
        key = os.path.abspath(path)
        known = self.by_path.get(key)
        if known is not None and known.digest == digest_of(raw):
            return
        if summary is None or summary.digest != digest_of(raw):
            summary = summarize_file(key, raw)
        if summary is None:
            return
        if known is not None and known.name != summary.name:
            summary = dataclasses.replace(summary, name=known.name)  # keeps the name add_file gave it
        # a project module with a new text; not a module read lazily, which this makes a project module: the
        # holders table and the importers map are built over the project modules and did not see it
        replaced = (known is not None and self.modules.get(summary.name) is known
                    and summary.name in self.project_modules)
        self.by_path[key] = summary
        self.modules[summary.name] = summary
        self.project_modules.add(summary.name)
        self._forget(kept_memos(known, summary) if replaced else frozenset())

    def remove_file(self, path: str) -> None:
        """The file is gone (a long-lived index: the language server's): its module is no longer the index's, and
        what was worked out from it or resolved through it is worked out again."""
        summary = self.by_path.pop(os.path.abspath(path), None)
        if summary is None:
            return
        if self.modules.get(summary.name) is summary:
            del self.modules[summary.name]
        self.project_modules.discard(summary.name)
        self.forget_lookups()

    def is_project_path(self, path: str) -> bool:
        """Would the project walk of the files this index was built for list ``path`` (absolute)?"""
        return walked(path, self.walked_tops)

    def forget_lookups(self) -> None:
        """A file appeared that the index does not hold (a long-lived index: the language server's): module names
        found nowhere before, and folders listed before, are looked up again, and what was resolved through them
        is worked out again."""
        self._locator = None
        self._missing.clear()
        self._forget()

    def _forget(self, keep: FrozenSet[str] = frozenset()) -> None:
        """Drop what was worked out from the summaries, except the groups in ``keep`` (``kept_memos``)."""
        self._graph = None
        self._outside.clear()
        self._constructions = None
        self._passed_on.clear()
        self._constructions_text.clear()
        self._graph_by_module = None
        if NAMES not in keep:
            self._resolved.clear()
            self._mindspore_names.clear()
            self._class_refs.clear()
            self._qualified.clear()
            self._importers = None
        if BASES not in keep:
            self._cell.clear()
            self._chains.clear()
            self._subclasses = None
        if HOLDERS not in keep:
            self._holders = None

    def module(self, name: str) -> Optional[ModuleSummary]:
        """A module by dotted name: the project's, else an installed one read on first use (None if neither)."""
        found = self.modules.get(name)
        if found is not None or name in self._missing:
            return found
        if name.split(".")[0] in NOT_READ:
            self._missing.add(name)
            return None
        path = self.located[name] = self.locate(name)
        if path is not None:
            summary = self.cache.get(path)
            if summary is not None:
                summary.name = name  # installed packages have no __init__ walk of their own above site-packages
                self.modules[name] = summary
                self.by_path[os.path.abspath(path)] = summary
                return summary
        self._missing.add(name)
        return None

    def outside_project(self, qualified: Optional[str]) -> bool:
        """Can the qualified name (``numpy.sum``, ``os.path.join``) name no function or class of the project? True
        for a name under ``EXTERNAL_TOPS`` that is no project module's top-level name, that no source root holds
        (a package or a plain folder), and that the import path finds nowhere or in the standard library's or an
        installed packages' folder (not in a folder of ``PYTHONPATH`` holding the user's own ``code`` package): such
        a package does not import the project, so nothing it defines or re-exports is the project's."""
        if not qualified:
            return False
        top = qualified.split(".")[0]
        if top not in EXTERNAL_TOPS:
            return False
        found = self._outside.get(top)
        if found is None:
            locator = self._module_locator()
            if any(name == top or name.startswith(top + ".") for name in self.project_modules):
                found = False
            elif locator.under_roots(top):
                found = False
            else:
                origin = locator.installed(top)
                found = origin is None or _installed_file(origin)
            self._outside[top] = found
        return found

    def locate(self, name: str) -> Optional[str]:
        """The file module ``name`` would be read from (``layout.ModuleLocator``), or None."""
        return self._module_locator().locate(name)

    def _module_locator(self) -> ModuleLocator:
        """The locator of the current source roots (made again when they changed)."""
        if self._locator is None or self._locator.roots != self.roots:
            self._locator = ModuleLocator(list(self.roots))
        return self._locator

    # -- names -----------------------------------------------------------------------------------
    def qualify(self, module: str, dotted: str) -> Optional[str]:
        """The qualified name ``dotted`` has in ``module`` (through its imports; a local definition stays local).
        Remembered (with the other name lookups, ``_forget``): the graph closure qualifies every call of the project
        when it holds a jit wrapper, 96k calls of 37k distinct (module, name) pairs on MindSpore's source."""
        key = (module, dotted)
        if key not in self._qualified:
            self._qualified[key] = self._qualify(module, dotted)
        return self._qualified[key]

    def _qualify(self, module: str, dotted: str) -> Optional[str]:
        summary = self.module(module)
        if summary is None:
            return None
        head, _, rest = dotted.partition(".")
        if head in summary.classes or head in summary.functions:
            return f"{module}.{dotted}"
        target = summary.imports.get(head)
        if target is None:
            for star in self._readable_stars(summary):
                found = self.resolve(star, dotted, depth=1)
                if found is not None:
                    return found[0] + "." + found[1] if found[1] else found[0]
            return self.mindspore_name(f"{module}.{dotted}")  # a MindSpore name a star import of MindSpore gives
        qualified = f"{target}.{rest}" if rest else target
        # ``layers.Cell`` where the project's ``layers`` re-exports MindSpore's
        return self.mindspore_name(qualified) or qualified

    def mindspore_name(self, qualified: str, depth: int = 0) -> Optional[str]:
        """The MindSpore name a project module re-exports under ``qualified`` (``tinyms.layers.Cell`` when
        ``tinyms/layers.py`` runs ``from mindspore.nn import Cell``; ``tinyms.primitives.Partial`` through its
        ``from mindspore.ops.composite import *``), canonical; None when the project defines the name or it leads
        elsewhere. Through star imports only a name the module's text never names itself (no assignment can rebind
        it), taken from the last star import that gives it; one of MindSpore's counts only when MindSpore's derived
        data knows it (MindSpore itself is never read, so which of its modules exports what is unknown)."""
        if qualified.split(".")[0] in NOT_READ:
            return None
        if depth > 8:
            return _cut_short(self._naming)
        if qualified in self._mindspore_names:
            return self._mindspore_names[qualified]
        return _remembered(self._mindspore_names, self._naming, qualified,
                           lambda: self._mindspore_name(qualified, depth))

    def _mindspore_name(self, qualified: str, depth: int) -> Optional[str]:
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            summary = self.modules.get(".".join(parts[:cut]))
            if summary is None or summary.name not in self.project_modules:
                continue
            rest = parts[cut:]
            if rest[0] in summary.classes or rest[0] in summary.functions:
                return None
            target = summary.imports.get(rest[0])
            if target is not None:
                full = ".".join([target] + rest[1:])
                return canonical(full) if full.split(".")[0] in NOT_READ else self.mindspore_name(full, depth + 1)
            if not summary.star_imports or self._names_itself(summary, rest[0]):
                return None  # bound by an assignment the summary does not record, or named in some other way
            for star in reversed(summary.star_imports):  # the last ``import *`` that gives the name wins
                full = f"{star}.{'.'.join(rest)}"
                if star.split(".")[0] in NOT_READ:
                    if known_mindspore_name(canonical(full)):
                        return canonical(full)
                    return None  # MindSpore is not read: whether that module gives the name is unknown
                if self.resolve(star, ".".join(rest), depth=depth + 1) is not None:
                    return None  # the project's own definition
                found = self.mindspore_name(full, depth + 1)
                if found is not None:
                    return found
            return None
        return None

    @staticmethod
    def _names_itself(summary: ModuleSummary, name: str) -> bool:
        """The module's text names ``name`` anywhere (an assignment, a ``global``, a comment): a star import's
        name it could rebind (any name, where the summary was made without its text)."""
        words = summary.star_words
        if words is None:
            return True
        at = bisect.bisect_left(words, name)
        return at < len(words) and words[at] == name

    def resolve(self, qualified_or_module: str, attr: str = "", depth: int = 0) -> Optional[Tuple[str, str]]:
        """(module name, name inside it) that a qualified name denotes, following re-exports; None when no module
        that holds it can be read. The name part is '' for a module, a class qualname or a function name."""
        if depth > 8:
            return _cut_short(self._resolving)
        full = f"{qualified_or_module}.{attr}" if attr else qualified_or_module
        if full in self._resolved:
            return self._resolved[full]
        return _remembered(self._resolved, self._resolving, full, lambda: self._resolve(full, depth))

    def _resolve(self, full: str, depth: int) -> Optional[Tuple[str, str]]:
        parts = full.split(".")
        deepest = 0
        while deepest < len(parts) and self.module(".".join(parts[: deepest + 1])) is not None:
            deepest += 1
        for cut in range(deepest, 0, -1):
            module_name = ".".join(parts[:cut])
            summary = self.module(module_name)
            assert summary is not None
            rest = parts[cut:]
            if not rest:
                return module_name, ""
            inner = ".".join(rest)
            if inner in summary.classes or rest[0] in summary.functions:
                return module_name, inner if inner in summary.classes else rest[0]
            target = summary.imports.get(rest[0])
            if target is not None and target != full:
                return self.resolve(".".join([target] + rest[1:]), depth=depth + 1)
            for star in self._readable_stars(summary):
                found = self.resolve(star, inner, depth=depth + 1)
                if found is not None:
                    return found
            return None
        return None

    def _readable_stars(self, summary: ModuleSummary) -> Iterator[str]:
        """The modules ``summary`` star-imports that can be read: what one that cannot be read (a compiled
        extension, ``from ._cythonized_array_utils import *`` in SciPy's ``linalg``) exports is unknown. Asked for
        by the name ``star.inner`` instead, the walk would find the star's package in its place and look the
        module's own name up there, through the same star imports again: the names grow by one part each time
        (``linalg._cythonized_array_utils._cythonized_array_utils.dft``) until the depth limit, and nothing of
        such a walk is kept (``_remembered``), so each question asked again cost 7,380 lookups (two names of
        the eight packages: 0.13 s of every fingerprint work-out)."""
        for star in summary.star_imports:
            if self.module(star) is not None:
                yield star

    def module_holding(self, qualified: str) -> Optional[ModuleSummary]:
        """The readable module a qualified name lives in (``detr.config.args`` -> ``detr.config``), following a
        re-export when the name is a class or function."""
        found = self.resolve(qualified)
        if found is not None:
            return self.module(found[0])
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            summary = self.module(".".join(parts[:cut]))
            if summary is not None:
                return summary
        return None

    def class_ref(self, module: str, dotted: str) -> Optional[ClassRef]:
        """The class ``dotted`` (as written in ``module``) refers to, when it can be read."""
        key = (module, dotted)
        if key not in self._class_refs:
            self._class_refs[key] = self._class_ref(module, dotted)
        return self._class_refs[key]

    def project_class_ref(self, module: str, dotted: str) -> Optional[ClassRef]:
        """``class_ref`` where only a class of the project matters (the tables of constructions, holders and
        subclasses, asked about project classes only): None at once for a name ``outside_project``."""
        if self.outside_project(self.qualify(module, dotted)):
            return None
        return self.class_ref(module, dotted)

    def definition(self, module: str, dotted: str) -> Optional[Tuple[str, str]]:
        """(module, class qualname or function name) that ``dotted``, as written in ``module``, names (through the
        module's imports and re-exports); None for a module, or a name that cannot be read."""
        qualified = self.qualify(module, dotted)
        found = self.resolve(qualified) if qualified is not None else None
        return found if found is not None and found[1] else None

    def _class_ref(self, module: str, dotted: str) -> Optional[ClassRef]:
        summary = self.module(module)
        if summary is not None and dotted in summary.classes:
            return module, dotted
        found = self.definition(module, dotted)
        if found is None:
            return None
        owner = self.module(found[0])
        return (found[0], found[1]) if owner is not None and found[1] in owner.classes else None

    def class_summary(self, ref: ClassRef) -> Optional[ClassSummary]:
        summary = self.module(ref[0])
        return summary.classes.get(ref[1]) if summary is not None else None

    # -- cells -------------------------------------------------------------------------------------
    def named_pynative(self, module: str) -> bool:
        """A module of a package named for PyNative mode (``pynative-packages``: ``mindformers.pynative.optimizer
        .adamw``) that does not set GRAPH_MODE itself: its Cells run eagerly, as the code around them chooses at run
        time (``if get_context("mode") == PYNATIVE_MODE: return PyNativeModel(config)``), which no static reading
        follows. Only a whole part of the dotted name counts (``non_pynative`` is not one)."""
        summary = self.modules.get(module)
        if summary is None or not any(part in self.pynative_packages for part in module.split(".")):
            return False
        return not any(names_mode(mode, "GRAPH_MODE") for _, mode in summary.set_context_modes)

    def eager_cell(self, ref: ClassRef, _seen: Optional[Set[ClassRef]] = None) -> bool:
        """A Cell of a module named for PyNative mode (``named_pynative``) whose every holder (a class that keeps
        it as a sub-cell) and every subclass is eager too: a graph-mode model outside the package that holds it,
        directly or through other Cells of the package, or a subclass outside it (which inherits ``construct``),
        compiles its ``construct``."""
        if not self.named_pynative(ref[0]):
            return False
        seen = set() if _seen is None else _seen
        if ref in seen:
            return True  # a cycle of holders adds no graph model
        seen.add(ref)
        holders = [(module, owner) for module, owner, _ in self.sub_cell_holders(ref)]
        return all(self.eager_cell(other, seen) for other in holders + self._direct_subclasses(ref))

    def subclasses(self, ref: ClassRef) -> List[ClassRef]:
        """The project's classes that name ``ref`` as a base."""
        return list(self._direct_subclasses(ref))

    def _direct_subclasses(self, ref: ClassRef) -> List[ClassRef]:
        if self._subclasses is None:
            found: Dict[ClassRef, List[ClassRef]] = {}
            for name in sorted(self.project_modules):
                for qual, info in self.modules[name].classes.items():
                    for base in info.bases:
                        target = self.project_class_ref(name, base) if base != "<expr>" else None
                        if target is not None:
                            found.setdefault(target, []).append((name, qual))
            self._subclasses = found
        return self._subclasses.get(ref, [])

    def is_cell(self, ref: ClassRef) -> bool:
        """The class's bases reach ``nn.Cell`` (or a declared ``cell-bases`` class) through modules we can read.
        A base that can be read nowhere makes a class with a ``construct`` method a Cell
        (``unresolved_construct_is_cell``): ``construct`` is MindSpore's name."""
        if ref in self._cell:
            return self._cell[ref]
        self._cell[ref] = False  # cycles end here
        info = self.class_summary(ref)
        result = False
        if info is not None:
            for base in info.bases:
                verdict = self._base_is_cell(ref[0], base, info)
                if verdict:
                    result = True
                    break
        self._cell[ref] = result
        return result

    def _base_is_cell(self, module: str, base: str, info: ClassSummary) -> bool:
        qualified = self.qualify(module, base) if base != "<expr>" else None
        if qualified is not None:
            if is_cell_base(canonical(qualified)) or qualified in self.cell_bases or canonical(qualified) in self.cell_bases:
                return True
            if qualified.split(".")[0] in NOT_READ:
                return False
        ref = self.class_ref(module, base) if base != "<expr>" else None
        if ref is not None:
            return self.is_cell(ref)
        if base in ("object", "<expr>") or (qualified is None and base in _BUILTIN_BASES):
            return False
        return self.unresolved_construct_is_cell and info.has_construct

    def method_owner_chain(self, ref: ClassRef) -> List[ClassRef]:
        """The class and its readable bases, in method-resolution order (depth first, duplicates dropped)."""
        if ref in self._chains:
            return self._chains[ref]
        chain: List[ClassRef] = []
        self._chains[ref] = chain
        chain.extend(self._owners(ref))
        return chain

    def _owners(self, ref: ClassRef) -> Iterator[ClassRef]:
        """``method_owner_chain``, one class at a time: a class's bases are resolved (and their modules read)
        only when the walk goes on past it."""
        seen: List[ClassRef] = []
        pending = [ref]
        while pending:
            current = pending.pop(0)
            if current in seen:
                continue
            info = self.class_summary(current)
            if info is None:
                continue
            seen.append(current)
            yield current
            bases = [self.class_ref(current[0], base) for base in info.bases if base != "<expr>"]
            pending[0:0] = [b for b in bases if b is not None]

    def find_method(self, ref: ClassRef, method: str) -> Optional[Tuple[ClassRef, FunctionSummary]]:
        """The first class of ``method_owner_chain`` that defines ``method``, and its summary. The chain is walked
        only as far as that class when it is not known yet: the constructions table asks every class the project
        builds for its ``__init__``, and most define one (on MindSpore's source the chains read 15 installed modules
        per worker, 4 of them for nothing)."""
        known = self._chains.get(ref)
        for owner in known if known is not None else self._owners(ref):
            info = self.class_summary(owner)
            if info is not None and method in info.methods:
                return owner, info.methods[method]
        return None

    # -- graph code across modules -------------------------------------------------------------------
    def graph_functions(self) -> Dict[FunctionRef, str]:
        """Every project function or method that is graph code -> why (one line)."""
        if self._graph is None:
            self._graph = _GraphClosure(self).run()
        return self._graph

    def known_graph(self) -> Optional[Tuple[Dict[FunctionRef, str], Dict[FunctionRef, List[FunctionRef]]]]:
        """The graph closure and its call edges (``callers_of``) as last worked out; None when the summaries
        changed since."""
        return (self._graph, self._callers) if self._graph is not None else None

    def derived_tables(self) -> Optional[DerivedTables]:
        """What the summaries of the whole project give and a run may carry over (``adopt_tables``): the graph
        closure, its call edges, the sub-cell holders table and the constructions table (each of the last two
        None where not worked out); None before the graph closure is worked out."""
        if self._graph is None:
            return None
        return self._graph, self._callers, self._holders, self._constructions

    def adopt_tables(self, graph: Dict[FunctionRef, str], callers: Dict[FunctionRef, List[FunctionRef]],
                     holders: Optional[Tuple[Holders, Holders]], constructions: Optional[Constructions]) -> None:
        """Take the tables a run over summaries of the same shape worked out (``derived_tables``; ``ms_lint.
        analysis.carry``) instead of working them out again: each reads every summary of the project (on
        MindSpore's source the graph closure costs 0.25 s, the constructions 0.43 s with the summaries
        unpickled). A summary the index takes later drops them as it drops its own (``_forget``)."""
        if self._graph is None:
            self._graph, self._callers, self._graph_by_module = graph, callers, None
        if self._holders is None and holders is not None:
            self._holders = holders
        if self._constructions is None and constructions is not None:
            self._constructions = constructions

    def sub_cell_holders(self, ref: ClassRef) -> List[Tuple[str, str, str]]:
        """(module, class, attribute) of every project class whose ``__init__`` sets ``self.attribute = Ref(...)``,
        or stores a constructor argument annotated with ``Ref`` or one of its bases (``controller: Controller``,
        ``self.controller = CellList(controller)``): the object such an attribute holds may be a ``Ref``."""
        if self._holders is None:
            built_by: Holders = {}
            declared: Holders = {}
            for name in sorted(self.project_modules):
                for owner, info in self.modules[name].classes.items():
                    for table, held in ((built_by, info.attribute_classes), (declared, info.attribute_declared)):
                        for attr, callee in held.items():
                            # built_by is asked about project classes only; declared about their bases too
                            target = (self.project_class_ref if table is built_by else self.class_ref)(name, callee)
                            if target is not None:
                                table.setdefault(target, []).append((name, owner, attr))
            self._holders = (built_by, declared)
        built_by, declared = self._holders
        found = list(built_by.get(ref, []))
        for base in self.method_owner_chain(ref):
            found += [holder for holder in declared.get(base, []) if holder not in found]
        return found

    def callers_of(self, ref: FunctionRef) -> List[FunctionRef]:
        """The graph functions (any module) whose calls reach this one."""
        self.graph_functions()
        return self._callers.get(ref, [])

    def graph_functions_in(self, path: str) -> Dict[str, str]:
        """Qualnames of the graph functions defined in ``path`` -> why."""
        summary = self.by_path.get(os.path.abspath(path))
        if summary is None:
            return {}
        if self._graph_by_module is None:
            by_module: Dict[str, Dict[str, str]] = {}
            for (module, qual), why in self.graph_functions().items():
                by_module.setdefault(module, {})[qual] = why
            self._graph_by_module = by_module
        return dict(self._graph_by_module.get(summary.name, {}))

    def constructions(self, ref: ClassRef) -> List[Tuple[List[object], Dict[str, object]]]:
        """The argument lists (literal values, an ``InitParam`` for a parameter of the building class's
        ``__init__`` passed on unchanged, NOT_LITERAL otherwise) with which project code builds the class
        (directly, through a subclass that inherits its ``__init__``, or by a subclass's ``super().__init__``)."""
        if self._constructions is None:
            self._constructions = self._all_constructions()
        return self._constructions.get(ref, [])

    def _all_constructions(self) -> Dict[ClassRef, List[Tuple[List[object], Dict[str, object]]]]:
        found: Dict[ClassRef, List[Tuple[List[object], Dict[str, object]]]] = {}
        for name in sorted(self.project_modules):
            summary = self.modules[name]
            for callee, args, kwargs in summary.constructions:
                built = self._super_target(name, callee) if callee.startswith(SUPER_PREFIX) else \
                    self.project_class_ref(name, callee)
                if built is None:
                    continue
                if any(type(value) is InitParam for value in (*args, *kwargs.values())):
                    args = [_in_module(value, name) for value in args]
                    kwargs = {key: _in_module(value, name) for key, value in kwargs.items()}
                found.setdefault(built, []).append((args, kwargs))
                init = self.find_method(built, "__init__")  # a subclass that inherits its base's __init__
                if init is not None and init[0] != built:
                    found.setdefault(init[0], []).append((args, kwargs))
        return found

    def _super_target(self, module: str, callee: str) -> Optional[ClassRef]:
        """The project class ``super().__init__(...)`` builds in a class whose bases are ``super:B1,B2``: the first
        base, in order, whose chain defines ``__init__`` (a mixin without one passes the call on); None when a base
        before it is not the project's (what its ``__init__`` does is not read)."""
        for base in callee[len(SUPER_PREFIX):].split(","):
            ref = self.project_class_ref(module, base)
            if ref is None:
                return None
            if self.find_method(ref, "__init__") is not None:
                return ref
        return None

    def passed_on_holders(self, ref: ClassRef) -> List[ClassRef]:
        """The classes whose ``__init__`` passes one of its own parameters on to a construction of ``ref``, or of
        such a class, at any depth (what ``constructor_value`` may read), sorted."""
        found_before = self._passed_on.get(ref)
        if found_before is None:
            found_before = self._passed_on[ref] = self._passed_on_holders(ref)
        return found_before

    def constructions_text(self, ref: ClassRef) -> str:
        """``repr`` of ``constructions(ref)`` (what a fingerprint says of them), worked out once."""
        text = self._constructions_text.get(ref)
        if text is None:
            text = self._constructions_text[ref] = repr(self.constructions(ref))
        return text

    def _passed_on_holders(self, ref: ClassRef) -> List[ClassRef]:
        found: Set[ClassRef] = set()
        queue = [ref]
        while queue:
            for args, kwargs in self.constructions(queue.pop()):
                for value in (*args, *kwargs.values()):
                    if type(value) is InitParam and value.module is not None:  # type: ignore[attr-defined]
                        holder = (value.module, value.owner)  # type: ignore[attr-defined]
                        if holder not in found and holder != ref:
                            found.add(holder)
                            queue.append(holder)
        return sorted(found)

    def fingerprint_for(self, path: str) -> str:
        """What the file's findings owe to other files, for the results cache (``fingerprint_recipe``, with the
        digests the modules it names have now)."""
        return self.fingerprint_from(self.fingerprint_recipe(path))

    def fingerprint_from(self, recipe: Optional[Recipe]) -> str:
        """The fingerprint of a recipe with the digests of the modules the index holds now."""
        if recipe is None:
            return ""
        return fingerprint_of(recipe, {path: self.by_path[path].digest for path in recipe[1] if path in self.by_path})

    def fingerprint_recipe(self, path: str) -> Optional[Recipe]:
        """The file's cross-file fingerprint in two parts (``fingerprint_of`` joins them): what the project's
        summaries say about it (the graph functions the project makes of it, with why, and how the project
        constructs its classes), and the paths of the modules whose bytes its findings may read: those it imports
        from, those its classes' bases live in, the modules of the graph functions that call it, of the classes
        that hold its Cells, and of the scripts that call a helper of its that sets the mode. The first part
        depends on the summaries (line numbers and digests left out: ``summary.same_shape``) and on where names
        resolve (the project's files, ``located``): an edit that keeps both keeps it (``ms_lint.analysis.carry``).

        One import deep on purpose: following every import transitively costs more than the check on a large
        package. A change two imports away (a helper's helper) is seen after the file itself or a direct
        dependency changes, or with ``--no-cache``."""
        summary = self.by_path.get(os.path.abspath(path))
        if summary is None:
            return None
        said = blake2b(digest_size=12)
        graph = self.graph_functions_in(path)
        modules = self._direct_dependencies(summary.name)
        for qual in graph:
            modules.update(caller for caller, _ in self.callers_of((summary.name, qual)))
        for qual, why in sorted(graph.items()):
            said.update(f"{qual}={why};".encode())
        if any(function is not None for function, _ in summary.set_context_modes) or self._smoke_tested(summary):
            # MSL301 reports a helper's ``set_context`` for the scripts that call it (they import this module); a
            # smoke test's call of a Cell is MSL101's evidence only while no importer's graph code can reach one
            # (``ProjectView.kept_out_of_graph``)
            modules.update(self.importers_of(summary.name))
        for qual in sorted(summary.classes):
            for owner in self.method_owner_chain((summary.name, qual)):
                said.update(f"{owner}:{self.constructions_text(owner)};".encode())
                for holder in self.passed_on_holders(owner):  # their defaults are in their modules' bytes
                    said.update(f"{holder}:{self.constructions_text(holder)};".encode())
                    modules.add(holder[0])
            # their calls give construct's kinds
            modules.update(holder for holder, _, _ in self.sub_cell_holders((summary.name, qual)))
        modules.discard(summary.name)
        read = sorted({os.path.abspath(self.modules[name].path) for name in modules if name in self.modules})
        return said.hexdigest(), read

    def _smoke_tested(self, summary: ModuleSummary) -> bool:
        """The module defines a class with ``construct`` and calls an instance at module level (``net(rois,
        gts)`` under ``__main__``: a plain name that is no import, function or class), or a test function of it
        (``def test_head(): net = Head(); ...``) calls such a class. (A factory such as MindSpore's ``nanmean``,
        which builds a Cell in Python, is neither: counting it would tie ``math_func.py`` to its hundreds of
        importers. A smoke test in a function named otherwise is evidence whose dependence on the importers the
        cache does not record: ``--no-cache`` sees their changes.)"""
        cells = {name for name, info in summary.classes.items() if info.has_construct}
        if not cells:
            return False
        return any("." not in callee and callee not in summary.imports and callee not in summary.functions
                   and callee not in summary.classes for callee, _ in summary.module_calls) or any(
            (name.startswith("test") or name.endswith("_test")) and any(callee in cells for callee in function.calls)
            for name, function in summary.functions.items())

    def only_inert_changes(self, before: ModuleSummary, after: ModuleSummary) -> bool:
        """Two summaries of one project module (``after``: the one this index holds) that differ at most in what
        no table of the index follows: calls and passed names the graph closure resolves nowhere
        (``_GraphClosure.inert``: ``ops.abs(x)``, ``x.sum()``, ``self.dense(x)`` for a sub-cell attribute),
        constructions of classes that are not the project's (``ops.ReLU()``, ``Tensor(...)``), in any number and
        anywhere, and sub-cell attributes that hold no project class and shadow no attribute that does
        (``_inert_attributes``). Every table and fingerprint recipe this index works out is then the same with
        either: the closure sees the same calls it follows, in the same order, and the same held classes, the
        constructions and holders tables the same entries; the other tables and the recipes read none of these, but
        for the smoke tests' calls of the module's Cells, compared here. ``ms_lint.analysis.carry`` carries the
        fingerprints over such an edit, which adding ``self.act = nn.ReLU()`` to an ``__init__`` and
        ``x = self.act(x)`` to the ``construct`` is."""
        if after.name not in self.project_modules or self.modules.get(after.name) is not after:
            return False
        if not same_shape(before, after, INERT_FIELDS) or self._smoke_tested(before) != self._smoke_tested(after):
            return False
        if not same_shape(self._read_constructions(after.name, before.constructions),
                          self._read_constructions(after.name, after.constructions)):
            return False
        closure = _GraphClosure(self)
        # (in order: the holders table lists a class's sub-cells in the order its ``__init__`` sets them)
        changed = [(after.name, qual) for qual, info in after.classes.items()
                   if list(before.classes[qual].attribute_classes.items()) != list(info.attribute_classes.items())]
        if changed and not self._inert_attributes(
                {ref: before.classes[ref[1]].attribute_classes for ref in changed},
                {ref: after.classes[ref[1]].attribute_classes for ref in changed}, closure):
            return False
        for old, new in zip(_GraphClosure._all_functions(before), _GraphClosure._all_functions(after)):
            for field in CALL_FIELDS:
                was, now = getattr(old, field), getattr(new, field)
                if was != now and closure.followed(after.name, old, was) != closure.followed(after.name, new, now):
                    return False
        return True

    def _inert_attributes(self, was: Dict[ClassRef, Dict[str, str]], now: Dict[ClassRef, Dict[str, str]],
                          closure: "_GraphClosure") -> bool:
        """Classes of one module whose ``attribute_classes`` changed from ``was`` to ``now`` (``self.act =
        nn.ReLU()`` added to an ``__init__``), and the tables read the same of either: the same sub-cells of project
        classes, in order (``sub_cell_holders``), and the same project class held under each changed attribute for
        every class whose chain holds one of them (``_classes_below``; ``_GraphClosure._held_class``: an attribute
        set in a class shadows a base's of the same name, for the subclasses too, whose chains may meet other bases
        after it), all the changed classes taken as before or all as after: two of them can each hide the other's
        change (``C(X, Y, Q)`` with both ``X`` and ``Y`` setting ``self.a``)."""
        def held(ref: ClassRef, attributes: Dict[str, str]) -> list:
            return [(attr, target) for attr, callee in attributes.items()
                    for target in [self.project_class_ref(ref[0], callee)] if target is not None]

        if any(held(ref, was[ref]) != held(ref, now[ref]) for ref in was):
            return False
        changed = sorted({attr for ref in was for attr in {*was[ref], *now[ref]}
                          if was[ref].get(attr) != now[ref].get(attr)})
        below = list(dict.fromkeys(owner for ref in was for owner in self._classes_below(ref)))
        return all(closure._held_class(owner, attr, was) == closure._held_class(owner, attr, now)
                   for attr in changed for owner in below)

    def _classes_below(self, ref: ClassRef) -> List[ClassRef]:
        """``ref`` and every project class whose method chain holds it: its project subclasses at any depth, and
        the classes that reach it through a base outside the project (``class Leaf(Mid, Other)`` with ``Mid`` a
        sibling package's subclass of ``ref``), which the subclass table, of project classes, does not link. A
        base in an installed package (``outside_project``) cannot lead back: such a package does not import the
        project."""
        classes = [ref]
        for name in sorted(self.project_modules):
            for qual, info in self.modules[name].classes.items():
                if ((name, qual) != ref and any(self._base_outside(name, base) for base in info.bases)
                        and ref in self.method_owner_chain((name, qual))):
                    classes.append((name, qual))
        seen = set(classes)
        for current in classes:  # and their subclasses, at any depth
            for sub in self._direct_subclasses(current):
                if sub not in seen:
                    seen.add(sub)
                    classes.append(sub)
        return classes

    def _base_outside(self, module: str, base: str) -> bool:
        """A base as written in ``module`` that is no class of a project module (a sibling package's, one that
        cannot be read) and may still lead back into them: not in an installed package (``outside_project``)."""
        if base == "<expr>":
            return False
        target = self.project_class_ref(module, base)
        if target is not None:
            return target[0] not in self.project_modules
        return not self.outside_project(self.qualify(module, base))

    def _read_constructions(self, module: str, constructions: list) -> list:
        """The constructions of a module's summary that ``_all_constructions`` reads: of a project class, or
        ``super().__init__`` calls."""
        return [entry for entry in constructions
                if entry[0].startswith(SUPER_PREFIX) or self.project_class_ref(module, entry[0]) is not None]

    def importers_of(self, name: str) -> Set[str]:
        """The project modules that import a name from module ``name`` (or the module itself)."""
        if self._importers is None:
            importers: Dict[str, Set[str]] = {}
            tops = {module.split(".")[0] for module in self.project_modules}
            for module in self.project_modules:
                summary = self.modules[module]
                for target in list(summary.imports.values()) + summary.star_imports:
                    if target.split(".")[0] not in tops:
                        continue  # an installed package: never a project module
                    holder = self.module_holding(target)
                    if holder is not None and holder.name != module:
                        importers.setdefault(holder.name, set()).add(module)
            self._importers = importers
        return self._importers.get(name, set())

    def _direct_dependencies(self, name: str) -> Set[str]:
        """Modules ``name`` imports names from, and the modules of its classes' readable base chains."""
        summary = self.modules.get(name)
        found: Set[str] = set()
        if summary is None:
            return found
        for target in list(summary.imports.values()) + summary.star_imports:
            holder = self.module_holding(target)
            if holder is not None:
                found.add(holder.name)
        for qual in summary.classes:
            found.update(module for module, _ in self.method_owner_chain((name, qual)))
        return found


def names_mode(mode: str, name: str) -> bool:
    """Does a summary's ``set_context(mode=...)`` text name ``GRAPH_MODE`` (or 0) / ``PYNATIVE_MODE`` (or 1)?"""
    return mode == {"GRAPH_MODE": "0", "PYNATIVE_MODE": "1"}[name] or mode.endswith(name)


_BUILTIN_BASES = {"object", "Exception", "ValueError", "TypeError", "RuntimeError", "dict", "list", "tuple",
                  "str", "int", "float", "enum.Enum", "Enum", "IntEnum", "ABC", "abc.ABC", "NamedTuple",
                  "typing.NamedTuple", "Generic", "Protocol"}


def _remembered(memo: dict, working: List[list], key: str, work: Callable[[], object]):
    """``key``'s answer, not in ``memo`` (its callers look there first, as they did before this helper: no call and no
    closure for an answer kept), worked out by ``work`` and kept there when it holds. ``working`` holds [name,
    lowest] for each name being worked out, outermost first. The walks behind ``resolve`` and ``mindspore_name`` can
    meet a name they are still working out (re-exports through star imports in a cycle): there it counts as not
    found, and each answer worked out while that name was in progress above it is not kept (``lowest``: the
    outermost such name's place), only the answer of the name the walk met. Kept as it was before (``None`` stood
    for every name in progress), what an index remembered depended on which name it was asked first: a fresh index
    and one that had answered other questions gave ``b.Z`` different answers (an independent review of the carried
    fingerprints)."""
    for place, (name, _) in enumerate(working):
        if name == key:
            working[-1][1] = min(working[-1][1], place)
            return None
    working.append([key, len(working)])
    try:
        found = work()
    finally:
        _, lowest = working.pop()
    if lowest >= len(working):  # it met no name in progress outside it: its answer holds whoever asks
        memo[key] = found
    elif working:
        working[-1][1] = min(working[-1][1], lowest)
    return found


def _cut_short(working: List[list]) -> None:
    """A walk cut at its depth limit: nothing it was working out is kept (``_remembered``); not found."""
    if working:
        working[-1][1] = -1
    return None


class _GraphClosure:
    """Roots of graph code in every project module, closed over calls across modules."""

    def __init__(self, index: ProjectIndex):
        self.index = index
        self.found: Dict[FunctionRef, str] = {}
        self.callers: Dict[FunctionRef, List[FunctionRef]] = {}  # graph function -> graph functions that call it
        self.pending: List[Tuple[str, FunctionSummary]] = []
        self._by_folder: Optional[Dict[str, List[ClassRef]]] = None  # folder -> its modules' classes

    def run(self) -> Dict[FunctionRef, str]:
        index = self.index
        wrappers = self._jit_wrappers()
        for name in sorted(index.project_modules):
            summary = index.modules[name]
            pynative_only = self._pynative_only(summary)
            for qual, info in summary.classes.items():
                if (not pynative_only and info.has_construct and index.is_cell((name, qual))
                        and not index.eager_cell((name, qual))):
                    self._add(name, info.methods["construct"], f"construct of nn.Cell subclass {info.name}")
            for function in self._all_functions(summary):
                decorators = [index.qualify(name, d) for d in function.decorators]
                if any(d in JIT_NAMES or d in wrappers for d in decorators if d):
                    self._add(name, function, "decorated with mindspore.jit")
            for owner, targets in self._jit_handoffs(summary):
                for target in targets:
                    callee = self._callee(name, owner, target)
                    if callee is not None:
                        self._add(callee[0], callee[1], "passed to mindspore.jit")
            if not wrappers:
                continue  # no call can be a jit wrapper's: qualifying every call of the project cost 0.4 s
            for function in self._all_functions(summary):
                for call in function.calls:
                    if index.qualify(name, call) in wrappers:
                        for target in function.passed:
                            callee = self._callee(name, function, target)
                            if callee is not None:
                                self._add(callee[0], callee[1], "passed to a jit wrapper")
            for call, passed in summary.module_calls:
                if index.qualify(name, call) in wrappers:
                    for target in passed:
                        callee = self._callee(name, None, target)
                        if callee is not None:
                            self._add(callee[0], callee[1], "passed to a jit wrapper")
        while self.pending:
            module, function = self.pending.pop()
            for dotted in function.calls + function.passed:
                callee = self._callee(module, function, dotted)
                if callee is not None:
                    self._reach(module, function, callee, f"called from graph function {function.name} ({module})")
                    for override in self._overrides(module, function, dotted, callee):
                        self._reach(module, function, override,
                                    f"called from graph function {function.name} ({module}) on a subclass")
                    continue
                for owner, method in self._dispatched(module, function, dotted):
                    self._reach(module, function, (owner[0], method),
                                f"called from graph function {function.name} ({module}) through `{dotted}`")
                for alias in self._aliased(module, function, dotted):
                    self._reach(module, function, alias,
                                f"called from graph function {function.name} ({module}) through `{dotted}`, "
                                f"which `__init__` binds to `self.{alias[1].name}`")
        self.index._callers = self.callers
        return self.found

    @staticmethod
    def _all_functions(summary: ModuleSummary) -> Iterable[FunctionSummary]:
        yield from summary.functions.values()
        for info in summary.classes.values():
            yield from info.methods.values()

    def _jit_wrappers(self) -> Set[str]:
        """Project functions that hand one of their own parameters to ``jit`` (``def compiled(fn): return
        ms.jit(fn)``): calling them on a function makes it graph code."""
        wrappers: Set[str] = set()
        for name in self.index.project_modules:
            summary = self.index.modules[name]
            for function in summary.functions.values():
                if any(t in function.params for t in function.jit_targets):
                    jit_calls = [c for c in function.calls if self.index.qualify(name, c) in JIT_NAMES]
                    if jit_calls:
                        wrappers.add(f"{name}.{function.name}")
        return wrappers

    def _jit_handoffs(self, summary: ModuleSummary):
        if summary.module_jit_targets:
            yield None, summary.module_jit_targets
        for function in self._all_functions(summary):
            if function.jit_targets:
                yield function, function.jit_targets

    def _callee(self, module: str, caller: Optional[FunctionSummary], dotted: str
                ) -> Optional[Tuple[str, FunctionSummary]]:
        index = self.index
        summary = index.modules.get(module)
        if summary is None:
            return None
        head, _, rest = dotted.partition(".")
        if head == "self" and rest and "." not in rest and caller is not None and caller.owner is not None:
            found = index.find_method((module, caller.owner), rest)
            if found is None:
                return None
            return found[0][0], found[1]
        if head == "self" and rest.count(".") == 1 and caller is not None and caller.owner is not None:
            # ``self.svd.svd(ab)`` with ``self.svd = SVD()`` in ``__init__``: a method of an object the class holds
            attribute, method = rest.split(".")
            held = self._held_class((module, caller.owner), attribute)
            found = index.find_method(held, method) if held is not None else None
            if found is None or found[0][0] not in index.project_modules:
                return None
            return found[0][0], found[1]
        if not rest and head in summary.functions:
            return module, summary.functions[head]
        if index.outside_project(index.qualify(module, dotted)):
            return None  # ``np.sum``: no project function, whatever numpy's modules say
        target = index.definition(module, dotted)
        if target is None:
            return None
        owner = index.modules.get(target[0])
        if owner is None or target[0] not in index.project_modules:
            return None
        function = owner.functions.get(target[1])
        return (target[0], function) if function is not None else None

    def inert(self, module: str, caller: FunctionSummary, dotted: str) -> bool:
        """A call or passed name of ``caller`` (a function of ``module``) that ``run`` follows nowhere: no project
        function it names (``_callee``), nothing a framework dispatches it to, no method alias; and no ``jit``, which
        makes jit wrappers and roots (``_jit_wrappers``)."""
        qualified = self.index.qualify(module, dotted)
        if (may_dispatch(dotted) or dotted.rsplit(".", 1)[-1] in JIT_WORDS or qualified in JIT_NAMES
                or self._names_module_function(qualified)):
            return False
        return self._callee(module, caller, dotted) is None and not self._aliased(module, caller, dotted)

    def _names_module_function(self, qualified: Optional[str]) -> bool:
        """``<project module>.<a function it defines>``: what ``run`` matches a call's qualified name against to
        find the calls of jit wrappers (``_jit_wrappers``), whether ``_callee`` resolves the call there or not
        (``resolve`` prefers a submodule of the same name: ``pkg.wrap`` the module, not ``wrap`` in
        ``pkg/__init__.py``)."""
        if not qualified:
            return False
        owner, _, name = qualified.rpartition(".")
        summary = self.index.modules.get(owner) if owner in self.index.project_modules else None
        return summary is not None and name in summary.functions

    def followed(self, module: str, caller: FunctionSummary, names: List[str]) -> List[str]:
        """``names`` (a function's calls or passed names, in order) less the inert ones: what ``run`` reads of them."""
        return [dotted for dotted in names if not self.inert(module, caller, dotted)]

    def _overrides(self, module: str, caller: FunctionSummary, dotted: str, callee: Tuple[str, FunctionSummary]
                   ) -> List[Tuple[str, FunctionSummary]]:
        """For ``self.<m>(...)`` in a method of class B: the overrides of ``m`` in the project's subclasses of B
        whose compiled ``construct`` is B's code and that inherit the calling method (``_runs_base_construct``). A
        base decoder's ``construct`` that calls ``self.decode_step(x)`` runs the subclass's ``decode_step`` on the
        subclass's instances; the subclass's method is graph code then."""
        head, _, rest = dotted.partition(".")
        if head != "self" or not rest or "." in rest or caller.owner is None:
            return []
        index = self.index
        base = (module, caller.owner)
        above = set(index.method_owner_chain(base))
        found: List[Tuple[str, FunctionSummary]] = []
        seen: Set[ClassRef] = {base}
        pending = list(index._direct_subclasses(base))
        while pending:
            subclass = pending.pop(0)
            if subclass in seen:
                continue
            seen.add(subclass)
            pending.extend(index._direct_subclasses(subclass))
            if not self._runs_base_construct(subclass, above, caller.name):
                continue
            target = index.find_method(subclass, rest)
            if (target is not None and target[0][0] in index.project_modules
                    and (target[0][0], target[1]) != callee and (target[0][0], target[1]) not in found):
                found.append((target[0][0], target[1]))
        return found

    def _runs_base_construct(self, subclass: ClassRef, above: Set[ClassRef], caller: str) -> bool:
        """Does a compiled ``construct`` of ``subclass`` run the base's code: it is a Cell that its module compiles,
        and no class of its chain outside the base's (``above``) defines ``construct`` or the caller (in any order
        of its bases: with ``class Both(Left, Right)``, ``Right.construct`` may be the one that runs)."""
        index = self.index
        summary = index.modules.get(subclass[0])
        if summary is None or self._pynative_only(summary) or not index.is_cell(subclass) or index.eager_cell(subclass):
            return False
        for owner in index.method_owner_chain(subclass):
            info = index.class_summary(owner)
            if owner not in above and info is not None and ("construct" in info.methods or caller in info.methods):
                return False
        return True

    @staticmethod
    def _pynative_only(summary: ModuleSummary) -> bool:
        """The module refuses graph mode, or sets only ``PYNATIVE_MODE``: its Cells' ``construct`` is not compiled."""
        return summary.refuses_graph_mode or (bool(summary.set_context_modes) and all(
            names_mode(mode, "PYNATIVE_MODE") for _, mode in summary.set_context_modes))

    def _aliased(self, module: str, caller: FunctionSummary, dotted: str) -> List[Tuple[str, FunctionSummary]]:
        """The methods a call of a method alias may run: ``self.step(g)`` or ``self.accumulator.step(g)`` where
        ``__init__`` binds ``self.step = self._step if n > 1 else self._dummy_step`` (mindone's ``GradAccumulator``):
        each such method of the class, or of a base, in the project."""
        head, _, rest = dotted.partition(".")
        if head != "self" or not rest or rest.count(".") > 1 or caller.owner is None:
            return []
        index = self.index
        holder: Optional[ClassRef] = (module, caller.owner)
        if "." in rest:
            attribute, rest = rest.split(".")
            holder = self._held_class(holder, attribute)  # type: ignore[arg-type]
        if holder is None:
            return []
        found: List[Tuple[str, FunctionSummary]] = []
        for owner in index.method_owner_chain(holder):
            info = index.class_summary(owner)
            for name in (info.method_aliases.get(rest, ()) if info is not None else ()):
                method = index.find_method(holder, name)
                if (method is not None and method[0][0] in index.project_modules
                        and (method[0][0], method[1]) not in found):
                    found.append((method[0][0], method[1]))
            if info is not None and rest in info.method_aliases:
                break  # the nearest class that binds the alias decides
        return found

    def _held_class(self, ref: ClassRef, attribute: str,
                    instead: Optional[Dict[ClassRef, Dict[str, str]]] = None) -> Optional[ClassRef]:
        """The project class of ``self.<attribute>``: built in an ``__init__`` of the class or a base
        (``self.svd = SVD()``) or handed to it under a class annotation; None when unknown or not the project's.
        ``instead``: classes and the ``attribute_classes`` to read for them (``only_inert_changes``)."""
        index = self.index
        for owner in index.method_owner_chain(ref):
            info = index.class_summary(owner)
            if info is None:
                continue
            built = instead.get(owner, info.attribute_classes) if instead else info.attribute_classes
            written = built.get(attribute) or info.attribute_declared.get(attribute)
            if written is not None:
                held = index.class_ref(owner[0], written)
                return held if held is not None and held[0] in index.project_modules else None
        return None

    def _reach(self, module: str, caller: FunctionSummary, callee: Tuple[str, FunctionSummary], why: str) -> None:
        edge = self.callers.setdefault((callee[0], callee[1].qualname), [])
        if (module, caller.qualname) not in edge:
            edge.append((module, caller.qualname))
        self._add(callee[0], callee[1], why)

    def _dispatched(self, module: str, caller: FunctionSummary, dotted: str) -> List[Tuple[ClassRef, FunctionSummary]]:
        """Methods a framework runs for a call the names do not resolve (``ms_lint.analysis.frameworks``): those
        of the project's classes in the caller's folder."""
        if caller.owner is None or not may_dispatch(dotted):
            return []
        index = self.index
        owner: str = caller.owner
        found = dispatched_methods(dotted, lambda: index.method_owner_chain((module, owner)),
                                   self._classes_beside(module), index.method_owner_chain, index.find_method)
        return [(ref, method) for ref, method in found if ref[0] in index.project_modules]

    def _classes_beside(self, module: str) -> List[ClassRef]:
        """The classes of the project modules whose files share the folder of ``module``'s file."""
        if self._by_folder is None:
            self._by_folder = {}
            for name in sorted(self.index.project_modules):
                summary = self.index.modules[name]
                folder = os.path.dirname(os.path.abspath(summary.path))
                self._by_folder.setdefault(folder, []).extend((name, qual) for qual in summary.classes)
        summary = self.index.modules[module]
        return self._by_folder.get(os.path.dirname(os.path.abspath(summary.path)), [])

    def _add(self, module: str, function: FunctionSummary, why: str) -> None:
        key = (module, function.qualname)
        if key in self.found or self._compile_time(module, function):
            return
        self.found[key] = why
        self.pending.append((module, function))

    def _compile_time(self, module: str, function: FunctionSummary) -> bool:
        return any(self.index.qualify(module, d) in COMPILE_TIME_DECORATORS for d in function.decorators)


def literal_int(value: object) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _in_module(value: object, module: str) -> object:
    return dataclasses.replace(value, module=module) if type(value) is InitParam else value


# How many ``__init__``s a constructor parameter may be passed down through (``Head(max_seq_len=40)`` builds
# ``Decoder(max_seq_len=max_seq_len)``, which builds ``Attention(max_seq_len=max_seq_len)``: three).
PASSED_ON_DEPTH = 4


def constructor_value(index: ProjectIndex, ref: ClassRef, param: str,
                      _seen: FrozenSet[Tuple[ClassRef, str]] = frozenset()) -> Tuple[Optional[int], str]:
    """The largest int the project builds class ``ref`` with for ``__init__`` parameter ``param``, and where it
    comes from: the literal default when no construction passes it, the literals constructions pass, and for a
    construction in another ``__init__`` that passes its own parameter on (``InitParam``), what the project
    builds that class with; None when some construction passes something else (or unpacks ``*`` arguments). A
    construction that unpacks ``**`` arguments without naming ``param`` counts as one that may leave the default
    (the dict is a config the index does not read: mindocr's ``SARHead(..., **sar_args)``), and the origin says
    so."""
    if (ref, param) in _seen or len(_seen) >= PASSED_ON_DEPTH:
        return None, ""
    found = index.find_method(ref, "__init__")
    if found is None:
        return None, ""
    init = found[1]
    default = literal_int(init.defaults.get(param, NOT_LITERAL))
    if param not in init.params:
        return None, ""
    index_of = init.params.index(param)  # a keyword-only parameter (after ``*args`` or ``*``) takes no position
    position = index_of - 1 if init.positional < 0 or index_of < init.positional else -1  # ``self`` is not passed
    values: List[int] = []
    passed_on: Set[str] = set()  # where the values passed on by other ``__init__``s come from
    through = 0  # how many of the values they are
    omitted = unpacked = False
    for args, kwargs in index.constructions(ref):
        if "*" in kwargs or FORWARDED in kwargs:
            return None, ""  # ``Cls(*args)``, or ``super().__init__(**kwargs)`` handing on what its builders pass
        if param in kwargs:
            passed = kwargs[param]
        elif 0 <= position < len(args):
            passed = args[position]
        else:  # not passed, or (``SARHead(..., **sar_args)``) passed or not by the dict
            omitted = True
            unpacked = unpacked or "**" in kwargs
            continue
        if type(passed) is InitParam and passed.module is not None:  # type: ignore[attr-defined]
            holder = (passed.module, passed.owner)  # type: ignore[attr-defined]
            value, origin = constructor_value(index, holder, passed.name, _seen | {(ref, param)})  # type: ignore
            passed_on.add(f"{origin}, passed on by {holder[1].rsplit('.', 1)[-1]}")
            through += 1
        else:
            value = literal_int(passed)
        if value is None:
            return None, ""
        values.append(value)
    if omitted or not values:
        if default is None:
            return None, ""
        values.append(default)
    path = index.modules[found[0][0]].path
    where = f"{os.path.relpath(path, package_of(path)[1]).replace(os.sep, '/')}:{init.line}"
    unsure = "; a construction that unpacks `**` arguments may set it" if unpacked else ""
    if len(values) == 1 and default is not None and values[0] == default and not passed_on:
        return default, f"the default `{param}={default}` ({where}{unsure})"
    if len(passed_on) == 1 and through == len(values) and len(set(values)) == 1 and not unpacked:
        return values[0], passed_on.pop()
    return max(values), f"`{param}` as the project builds {ref[1]} ({where}{unsure})"


# Indexes built for files analysed one at a time (the flake8 plugin, tests, the fixer): one per package and
# configuration, per process.
_INDEXES: Dict[tuple, ProjectIndex] = {}


def serves(index: Optional[ProjectIndex], config) -> bool:
    """Does ``index`` answer for files of ``config`` (``check`` builds one index, with the first file's config;
    a file whose own pyproject.toml sets other index options gets its own)?"""
    return index is not None and getattr(index, "options", None) == config.index_options()


def index_key(anchor: str, config) -> tuple:
    """Where ``index_for`` keeps the index of the package at ``anchor`` under this configuration."""
    return (anchor,) + tuple(sorted(config.index_options().items()))


# What ``ProjectIndex._forget`` may keep when one module's summary is replaced (``kept_memos``).
NAMES = "names"  # how dotted names resolve (``resolve``, ``class_ref``) and who imports whom
BASES = "bases"  # class chains, which classes are Cells, direct subclasses
HOLDERS = "holders"  # which classes hold which as sub-cells (``sub_cell_holders``)


def kept_memos(old: ModuleSummary, new: ModuleSummary) -> FrozenSet[str]:
    """The memo groups of the index still true after ``old`` is replaced by ``new`` (same module): names resolve
    through each module's imports and the names it defines, so they hold while those are equal; class chains and
    Cell verdicts also read each class's bases and whether it defines ``construct``; sub-cell holders also read
    ``attribute_classes``/``attribute_declared``. Typing in a function body changes none of these: the project's
    names are not resolved again on every edit (on dgmr.py's package that was about a quarter of a check)."""
    if (old.imports != new.imports or old.star_imports != new.star_imports or old.star_words != new.star_words
            or list(old.classes) != list(new.classes) or list(old.functions) != list(new.functions)):
        return frozenset()
    if any(old.classes[name].bases != new.classes[name].bases
           or list(old.classes[name].methods) != list(new.classes[name].methods) for name in old.classes):
        return frozenset({NAMES})
    if any(list(old.classes[name].attribute_classes.items()) != list(new.classes[name].attribute_classes.items())
           or list(old.classes[name].attribute_declared.items()) != list(new.classes[name].attribute_declared.items())
           for name in old.classes):  # in order: the holders table lists a class's sub-cells in that order
        return frozenset({NAMES, BASES})
    return frozenset({NAMES, BASES, HOLDERS})


def index_for(source, config) -> ProjectIndex:
    """The index of the project ``source`` (a ``SourceFile``) belongs to, with this file's summary taken from
    the text being checked (an editor's buffer may differ from the disk)."""
    package, root = package_of(source.path)
    anchor = os.path.join(root, package.split(".")[0]) if package else os.path.abspath(source.path)
    key = index_key(anchor, config)
    index = _INDEXES.get(key)
    if index is None:
        if len(_INDEXES) > 32:
            _INDEXES.clear()
        index = ProjectIndex.for_files([source.path], **config.index_options())
        _INDEXES[key] = index
    index.update_file(source.path, source.raw)
    return index
