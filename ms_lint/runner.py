"""Run the analysis over many files: cache lookups first, then the rest on worker processes.

What makes a cold run fast (measured on MindSpore's own source, see benchmarks/README.md):

* most files never reach the parser (``ms_lint.prefilter``); the few that do cost 100 to 1000 times more than the
  rest;
* files go to workers in a few batches of neighbouring paths (``neighbour_batches``): a worker keeps the modules
  it parsed for cross-module questions, and neighbours ask about the same modules;
* the configuration goes to each worker once (pool initializer), not once per file;
* workers return the file's stamp (mtime, size, digest of the bytes they analyzed), so the parent never reads a
  file again to fill the cache;
* the cyclic garbage collector runs less often while indexing and analyzing (``ms_lint.gcpolicy.FEWER_COLLECTIONS``):
  a parse allocates about a million libcst nodes, none in a reference cycle, so the default threshold (a
  collection every 700 allocations) spent over 10% of a cold run collecting nothing; reference counting still
  frees every tree.

A warm run (everything cached) stats each file, reads one JSON file and never imports libcst.
"""
from __future__ import annotations

import itertools
import os
import sys
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Set, Tuple, Union

from ms_lint.blake import blake2b
from ms_lint.cache import ResultsCache, Stamp
from ms_lint.config import Config
from ms_lint.diagnostics import Finding

# Below this many files to analyze, worker start-up costs more than it saves, unless they are heavy: at least
# PARALLEL_WEIGHT bytes as ``neighbour_batches`` weighs them (graph code about 2 s per MB on this machine: the two
# 450 KB modules MindSpore's source re-checks after an edit of ``math_func.py`` took 0.9 and 0.65 s one after the
# other).
PARALLEL_THRESHOLD = 24
PARALLEL_WEIGHT = 200_000
# Batches of neighbouring files per worker (``neighbour_batches``): few, so modules that ask about each other are
# checked by one worker; more than one, so the last batch does not leave a worker idle for long.
BATCHES_PER_WORKER = 3
# A worker ends after the file that grew its resident memory by more than this since it started
# (``_over_memory``), and a fresh one goes on with the rest of its batch. A worker keeps every module it parsed for
# the next files' questions (about 2 KB per line of source, ``ms_lint.analysis.project``): mindone 0.5.0 (1,729
# files, 949k lines) grew one to 767 MB. Past the limit a fresh process, which parses again what it is asked, is
# cheaper than freeing in place (benchmarks/README.md, "Memory on a large project"). Growth, not size: a worker
# forked from a large process (a test run, an editor) starts with the parent's pages counted in its own.
WORKER_MEMORY_GROWTH = 180 * 2**20

Result = Tuple[str, List[Finding], Optional[Stamp]]
_WORKER_CONFIGS: List[Config] = []
_WORKER_INDEX = None  # the ProjectIndex, sent to each worker once
_WORKER_START_RESIDENT: Optional[int] = None  # a worker's resident memory when it started


def display_path(path: str) -> str:
    """Paths as the user gave them, relative to the current folder where possible."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") and not path.startswith("..") else rel


def default_jobs() -> int:
    """The CPUs this process may run on (a container's limit, not the host's core count)."""
    from ms_lint.processes import cpu_count

    return cpu_count()


# ``ms-lint check`` analyzes on trees built from ``ast`` (``ms_lint.fasttree``); MS_LINT_TREES=libcst analyzes on
# libcst's, as ``fix`` and the editor do (the two give the same findings: benchmarks/diff_engines.py compares them).
FAST_TREES = os.environ.get("MS_LINT_TREES", "fast") != "libcst"


def _analyze_one(path: str, config: Config, index=None) -> Result:
    from ms_lint.analysis.index import serves
    from ms_lint.engine import analyze_path, unanalyzable  # parser imports only in processes that analyze

    if not serves(index, config):  # a sub-project's own index options: the engine builds that index
        index = None

    shown = display_path(path)
    try:
        before = os.stat(path)
    except OSError:
        before = None
    try:
        result = analyze_path(path, config, shown, index=index, fast_trees=FAST_TREES)
        findings = result.findings
    except Exception as exc:  # an ms-lint bug must not end the run: report it on the file
        return path, [unanalyzable(shown, f"internal error ({type(exc).__name__}: {exc})")], None
    for finding in findings:
        finding.fix_object = None  # not picklable across processes, not needed by check
    stamp = None
    if before is not None and result.source is not None and len(result.source.raw) == before.st_size:
        # stat before reading: if the file changes after the read, its new mtime invalidates this entry
        stamp = (before.st_mtime_ns, before.st_size, digest_bytes(result.source.raw), result.config_reads)
    return path, findings, stamp


def digest_bytes(raw: bytes) -> str:
    return blake2b(raw, digest_size=16).hexdigest()


def _init_worker(configs: List[Config], index=None) -> None:
    global _WORKER_CONFIGS, _WORKER_INDEX, _WORKER_START_RESIDENT
    _WORKER_CONFIGS = configs
    _WORKER_INDEX = index
    _WORKER_START_RESIDENT = _resident_bytes()
    from ms_lint.gcpolicy import collect_less

    collect_less()


def _analyze_in_worker(task: Tuple[str, int]) -> Result:
    path, index = task
    return _analyze_one(path, _WORKER_CONFIGS[index], _WORKER_INDEX)


def _resident_bytes() -> Optional[int]:
    """This process's resident memory now (None where ``/proc`` does not tell)."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _over_memory() -> bool:
    """This worker grew past ``WORKER_MEMORY_GROWTH`` (never, outside a worker)."""
    resident = _resident_bytes()
    start = _WORKER_START_RESIDENT
    return resident is not None and start is not None and resident - start > WORKER_MEMORY_GROWTH


def _crashed(task: Tuple[str, int], why: str) -> Result:
    from ms_lint.engine import unanalyzable

    path = task[0]
    return path, [unanalyzable(display_path(path), f"internal error: the process analyzing it died ({why})")], None


ConfigFor = Union[Config, Callable[[str], Config]]


def analyze_files(paths: List[str], config: ConfigFor, jobs: Optional[int] = None,
                  project=None, meanwhile: Optional[Callable[[], None]] = None,
                  join: bool = True, isolated: bool = False) -> Iterable[Result]:
    """(path, findings, stamp) for each path, in no particular order; on worker processes when it pays.

    ``config``: one Config for all, or a function giving each path's. Workers: ``--jobs`` capped at the number
    of files and of cores (``ms_lint.processes.worker_count``). A worker that dies costs only the file it was on.
    ``meanwhile``: run on a thread of this process while the workers analyze (``run_batches``), or before the
    files are analyzed here. ``join``: wait for the workers to end (``run_batches``). ``isolated``: on workers
    however few the files are (one of them may kill the process that analyzes it)."""
    from ms_lint.processes import worker_count

    config_of = config if callable(config) else (lambda _path: config)
    workers = worker_count(jobs, len(paths))
    weigh = graph_weight(project) if project is not None else None
    if not isolated and (workers <= 1 or (len(paths) < PARALLEL_THRESHOLD
                                          and _weight(paths, weigh) < PARALLEL_WEIGHT)):
        if meanwhile is not None:
            meanwhile()  # first: the analysis here shares the index (and would add what it looks up)
        return analyze_here(paths, config_of, project)  # under check_files' fewer collections
    from ms_lint.pool import run_batches  # (``multiprocessing``: 20 ms to import, only where workers start)

    configs, tasks = numbered_configs(paths, config_of)
    return run_batches(tasks, _analyze_in_worker, workers, 1, _crashed, initializer=_init_worker,
                       initargs=(configs, project), batches=neighbour_batches(tasks, workers, weigh),
                       retire=_over_memory, meanwhile=meanwhile, join=join)


def analyze_here(paths: List[str], config_of: Callable[[str], Config], project=None) -> List[Result]:
    """(path, findings, stamp) for each path, analyzed one after the other in this process."""
    return [_analyze_one(path, config_of(path), project) for path in paths]


def numbered_configs(paths: List[str], config_of: Callable[[str], Config]
                     ) -> Tuple[List[Config], List[Tuple[str, int]]]:
    """The distinct configurations of ``paths`` and (path, number of its configuration) for each: what goes to
    another process, each configuration once."""
    configs: List[Config] = []
    numbers: Dict[int, int] = {}
    tasks = []
    for path in paths:
        cfg = config_of(path)
        if id(cfg) not in numbers:
            numbers[id(cfg)] = len(configs)
            configs.append(cfg)
        tasks.append((path, numbers[id(cfg)]))
    return configs, tasks


# What a file the index finds no graph code in costs, against one that holds graph code, per byte: it is read and
# screened, never parsed (MindSpore's source: 1,877 of 2,142 files under 3 ms, 99 files 11 of 13 s).
NO_GRAPH_SHARE = 20


def graph_weight(project) -> Callable[[str, int], int]:
    """A file's weight for ``neighbour_batches``: its size, or a ``NO_GRAPH_SHARE``-th of it when the project's
    index holds its summary and no graph function in it."""
    def weigh(path: str, size: int) -> int:
        if os.path.abspath(path) in project.by_path and not project.graph_functions_in(path):
            return max(1, size // NO_GRAPH_SHARE)
        return size

    return weigh


def _weight(paths: List[str], weigh: Optional[Callable[[str, int], int]]) -> int:
    """The files' summed weight (``neighbour_batches``), stopping once it reaches PARALLEL_WEIGHT."""
    total = 0
    for path in paths:
        try:
            size = os.stat(path).st_size
        except OSError:
            continue
        total += weigh(path, size) if weigh is not None else size
        if total >= PARALLEL_WEIGHT:
            break
    return total


def neighbour_batches(tasks: List[Tuple[str, int]], workers: int,
                      weigh: Optional[Callable[[str, int], int]] = None) -> List[List[Tuple[str, int]]]:
    """The tasks cut into about ``workers * BATCHES_PER_WORKER`` runs of neighbouring paths (in path order, about
    equal in bytes), the heaviest first. A folder is not cut between two runs unless it weighs more than two runs'
    share: on MindSpore's source, cuts inside ``ops/function`` (whose modules ask about each other's callers) made
    the two workers parse 148k lines where one parses 108k; cut at folders, 119k.

    A file's check parses the modules it asks about (a base class, a helper it calls, the Cells that call its
    ``construct``) and the worker keeps them for the next files: modules of one folder or package ask about each
    other, so a worker that checks neighbours parses each of them once, where files dealt out by size made both
    workers parse most of them (the eight model packages: 699 libcst parses of 490 modules on two workers
    against 523 on one). Heaviest first, so no worker is left with a long tail. ``weigh(path, size)``: the
    weight a file counts with (default: its size)."""
    sizes = file_weights([path for path, _ in tasks], weigh)
    target = max(1, sum(sizes.values()) // (workers * BATCHES_PER_WORKER))
    weighed: List[Tuple[int, List[Tuple[str, int]]]] = []
    current: List[Tuple[str, int]] = []
    weight = 0
    for _folder, group in itertools.groupby(sorted(tasks), key=lambda task: os.path.dirname(task[0])):
        folder_tasks = list(group)
        folder_weight = sum(sizes[task[0]] for task in folder_tasks)
        if current and weight + folder_weight > target and folder_weight <= 2 * target:
            weighed.append((weight, current))  # a folder that fits a batch is not cut between two
            current, weight = [], 0
        for task in folder_tasks:
            current.append(task)
            weight += sizes[task[0]]
            if weight >= target and folder_weight > 2 * target:  # a folder too big for one batch is cut
                weighed.append((weight, current))
                current, weight = [], 0
        if weight >= target:
            weighed.append((weight, current))
            current, weight = [], 0
    if current:
        weighed.append((weight, current))
    weighed.sort(key=lambda item: -item[0])
    return [batch for _, batch in weighed]


def file_weights(paths: List[str], weigh: Optional[Callable[[str, int], int]] = None) -> Dict[str, int]:
    """Each file's weight for cutting work between processes: its size (at least 1: empty files still count, they
    spread too), or ``weigh(path, size)`` (at least 1)."""
    weights: Dict[str, int] = {}
    for path in paths:
        try:
            weights[path] = max(1, os.stat(path).st_size)
        except OSError:
            weights[path] = 1
        if weigh is not None:
            weights[path] = max(1, weigh(path, weights[path]))
    return weights


def build_index(files: List[str], config: Config, use_cache: bool = True, cache_dir: Optional[str] = None,
                jobs: Optional[int] = None, listings=None, save: bool = True):
    """The project index of the checked files' packages (``ms_lint.analysis.index``), its summaries cached
    (unpickled under check_files' fewer collections: 0.33 -> 0.18 s on MindSpore's source). ``listings``: the
    run's folder listings (``ms_lint.analysis.layout.Listings``). ``save``: store new summaries now (else the
    caller does, ``save_summaries``)."""
    from ms_lint.analysis.index import ProjectIndex, SummaryCache
    from ms_lint.cache import SummaryStore
    from ms_lint.gcpolicy import keep_alive_objects, keep_to_the_end

    store = SummaryStore(config.root, cache_dir) if use_cache else None
    summaries = SummaryCache(store.load() if store else None)
    index = ProjectIndex.for_files(files, summaries, jobs=jobs, listings=listings, meanwhile=import_analysis,
                                   **config.index_options())
    keep_alive_objects()
    keep_to_the_end(index)
    index.summary_store = store
    if save:
        save_summaries(index)
    return index


def import_analysis() -> None:
    """Import the parser and the rules, which the analysis workers, forked later, then inherit instead of each
    importing them (about 0.35 s per worker). Run while the index's workers summarize, when this process only
    waits for them: a run that summarizes that much analyzes files too."""
    try:
        from ms_lint.engine import analyze_source  # noqa: F401  (libcst, the context, the value model)
        from ms_lint.rules import all_rules

        all_rules()
    except Exception:  # noqa: BLE001  a worker's own import then reports it where it belongs, on a file
        pass


def save_summaries(index) -> None:
    """Store the index's summaries when some are new: those of the project's modules, read when the index is
    built, and those of installed modules, read when a name first resolves to one (the cross-file fingerprints
    of a run with a touched file read about a hundred of them; saved only at build time, every such run parsed
    them again)."""
    store = index.summary_store
    if store is not None and index.cache.dirty:
        store.save(index.cache.entries)
        index.cache.dirty = False


def _same_index_options(config_of: Callable[[str], Config], first: Config) -> Callable[[str], bool]:
    """``path`` -> does its config set the index options of ``first`` (the config the run's index is built
    with)? Asked once per distinct config."""
    answers: Dict[int, bool] = {}

    def same(path: str) -> bool:
        cfg = config_of(path)
        if id(cfg) not in answers:
            answers[id(cfg)] = cfg is first or cfg.index_options() == first.index_options()
        return answers[id(cfg)]

    return same


class _Filled(NamedTuple):
    """What ``_fill_fingerprints`` leaves to store with the fingerprints."""
    recipes: Dict[str, tuple]
    outside: Dict[str, tuple]  # stamps of stored modules outside the project this run's index did not read
    located: Dict[str, Optional[str]]  # every module name looked up by a module-finding walk -> file (or None)
    # what the whole project's summaries give (``ProjectIndex.derived_tables``), or the token of the stored tables
    tables: Union[tuple, str, None]


class _FingerprintWork:
    """The fingerprints of the files a run finds none stored for: carried over from the stored recipes when the
    project is the one they were stored for and the edit kept every summary's shape (``ms_lint.analysis.carry``),
    else worked out by the index (``work_out``, for some files now and for the others later: ``check_files``).
    ``fingerprints`` holds those loaded for this project (a check of some of its files stored them): what they
    were computed from is kept with them (``filled``), since this run's index may not look up the names nor read
    the modules they needed."""

    def __init__(self, fingerprints: Dict[str, str], index, store, stamps: Dict[str, Tuple[int, int]],
                 roots: List[str], salt: str, state: str):
        from ms_lint.cache import stored_recipes

        self.fingerprints = fingerprints
        self.index = index
        self.store = store
        self.stamps = stamps
        self.roots = roots
        self.salt = salt
        self.state = state
        self.paired = store.paired_stamps(salt)
        self.recipes = stored_recipes(self.paired) if self.paired is not None else {}
        self.loaded = bool(fingerprints)
        self.worked_out: Dict[str, tuple] = {}
        self.carried: Optional[_Filled] = None

    def carry(self, missing: List[Tuple[str, str]]) -> bool:
        """Carry the fingerprints of ``missing`` (path as given, absolute path) over, when that can be done."""
        from ms_lint.analysis.carry import carried_fingerprints
        from ms_lint.cache import same_project, stored_located

        if self.paired is None or self.loaded or not same_project(self.paired, self.stamps, self.roots):
            return False
        carried = carried_fingerprints(self.paired["files"], self.recipes, self.index, self.stamps,
                                       [key for _, key in missing])
        if carried is None:
            return False
        self.fingerprints.update(carried[0])
        tables = self.store.load_tables(self.paired)
        if tables is not None:  # what the same shapes give: the analysis and its batching read them
            self.index.adopt_tables(*tables)
        self.carried = _Filled(self.recipes, carried[1], stored_located(self.paired), tables)
        return True

    def work_out(self, missing: List[Tuple[str, str]]) -> None:
        index = self.index
        for path, key in missing:
            recipe = index.fingerprint_recipe(path)
            self.fingerprints[key] = index.fingerprint_from(recipe)
            if recipe is not None:
                self.worked_out[key] = recipe

    def save(self) -> None:
        """Store the fingerprints with what they were worked out from, and the summaries the index read: as soon as
        they are worked out (what an analysis in this process looks up later is no fingerprint's)."""
        from ms_lint.analysis.index import content_stamps

        filled = self.filled()
        self.store.save(self.state, self.fingerprints, {**filled.outside, **content_stamps(self.index, self.stamps)},
                        self.salt, filled.recipes, self.stamps, filled.located,
                        self.index.derived_tables() or filled.tables)
        save_summaries(self.index)

    def filled(self) -> _Filled:
        """What to store with the fingerprints (the tables, where this run's index holds none worked out)."""
        from ms_lint.cache import stored_files, stored_located, stored_tables_token

        if self.carried is not None:
            return self.carried
        if self.loaded and self.paired is not None:
            store = self.store
            kept = store.refreshed if store.refreshed is not None else stored_files(self.paired)
            outside = {path: stamp for path, stamp in kept.items() if path not in self.stamps}
            return _Filled({**self.recipes, **self.worked_out}, outside,
                           {**stored_located(self.paired), **self.index.located}, stored_tables_token(self.paired))
        return _Filled(self.worked_out, {}, dict(self.index.located), None)


class _WorkedOutMeanwhile:
    """``work_out`` of the fingerprints of files the results cache holds nothing for, then ``save``: on a thread
    while the workers analyze (``analyze_files(meanwhile=...)``), or before the files are analyzed in this
    process; what it raised is raised by ``finish``."""

    def __init__(self, work: _FingerprintWork, missing: List[Tuple[str, str]]):
        self.work = work
        self.missing = missing
        self.done = False
        self.error: Optional[BaseException] = None

    def __call__(self) -> None:
        try:
            self.work.work_out(self.missing)
            self.work.save()
        except BaseException as error:  # noqa: BLE001  raised again on the main thread, by ``finish``
            self.error = error
        self.done = True

    def finish(self) -> None:
        if not self.done:
            self()
        if self.error is not None:
            raise self.error


def _host_pays(config: Config, cache_dir: Optional[str], jobs: Optional[int]):
    """The summary store an analysis host (``ms_lint.host``) would load, where one pays; else None. One is started
    for a run that may have to build its index from stored summaries: it imports the analysis on another core
    while this process loads them. Started as soon as the run is known not to be warm, before the stored stamps
    say whether any file changed (a run with only touched files stops it then: about 6 ms more for it). Not where
    the summaries are made now (their workers would share the cores with it, and this process imports the
    analysis while they work), nor with one core or ``--jobs 1`` (one process at a time)."""
    from ms_lint import processes
    from ms_lint.cache import SummaryStore
    from ms_lint.host import wanted

    if (jobs is not None and jobs < 2) or processes.cpu_count() < 2 or not wanted():
        return None
    store = SummaryStore(config.root, cache_dir)
    return store if os.path.exists(store.file) else None


def _loaded_still_hold(store, stamps: Dict[str, Tuple[int, int]], roots: List[str], salt: str) -> bool:
    """Before fingerprints loaded for the project are saved again with those of other files of it: their stamps
    file is there (it says what they were computed from), and the module names they looked up still find the
    same files. An unchanged project's state does not look them up (a new module is seen at the next change):
    a save that merged today's lookups over theirs would hide the change for good."""
    from ms_lint.cache import same_project

    if store.refreshed is not None:
        return True  # loaded across touched files: ``load`` checked ``same_project`` already
    paired = store.paired_stamps(salt)
    return paired is not None and same_project(paired, stamps, roots)


def check_files(files: List[str], config: ConfigFor, jobs: Optional[int] = None,
                use_cache: bool = True, cache_dir: Optional[str] = None, listings=None) -> List[Finding]:
    """Findings of every file. One results cache per configuration: in ``cache_dir`` when given, else in
    ``.ms_lint_cache`` next to the configuration's pyproject.toml (the current folder without one).
    ``listings``: the folder listings discovery read (``ms_lint.analysis.layout.Listings``)."""
    from ms_lint.gcpolicy import fewer_collections

    hosts: List = []  # the analysis host, where one is started (``ms_lint.host``)
    try:
        with fewer_collections():  # once the summaries are loaded, a full collection walks millions of objects
            return _check_files(files, config, jobs, use_cache, cache_dir, listings, hosts)
    finally:
        for host in hosts:
            host.stop()


def _check_files(files: List[str], config: ConfigFor, jobs: Optional[int], use_cache: bool,
                 cache_dir: Optional[str], listings, hosts: List) -> List[Finding]:
    config_of = config if callable(config) else (lambda _path: config)
    caches: Dict[Tuple[str, str], ResultsCache] = {}  # one per cache file: (folder, fingerprint)

    keys: Dict[int, Tuple[str, str]] = {}

    def cache_of(path: str) -> ResultsCache:
        cfg = config_of(path)
        key = keys.get(id(cfg))
        if key is None:
            key = keys[id(cfg)] = (cache_dir or cfg.root, cfg.fingerprint())
        found = caches.get(key)
        if found is None:
            found = caches[key] = ResultsCache(cfg.root, key[1], folder=cache_dir)
        return found

    first = config_of(files[0]) if files else Config()
    built = []

    def project(save: bool = True):
        """The run's index, built on first use (``save``: its new summaries stored then; the fingerprints' work
        stores them with those it reads)."""
        if not built:
            built.append(build_index(files, first, use_cache, cache_dir, jobs, listings, save=save))
        return built[0]

    from ms_lint.analysis.layout import absolute_paths

    absolute = absolute_paths(files)
    fingerprints: Dict[str, str] = {}
    stamps: Dict[str, Tuple[int, int]] = {}
    own_index = _same_index_options(config_of, first)
    deferred: Optional[_WorkedOutMeanwhile] = None  # fingerprints worked out while the files are analyzed
    deferred_keys: Set[str] = set()
    if use_cache:
        from ms_lint.analysis.layout import project_files, project_stamps, project_state
        from ms_lint.cache import FingerprintStore

        store = FingerprintStore(first.root, cache_dir)
        project_paths, roots = project_files(files, absolute, listings)
        stamps = project_stamps(project_paths)
        # the roots, in order, and the folders installed packages are found in (``sys.path``, '' being the current
        # folder), with the configuration: the same files checked with another root (a loose file's folder), the
        # roots in another order, another PYTHONPATH or environment, resolve module names to other files
        found_in = [entry or os.getcwd() for entry in sys.path if isinstance(entry, str)]
        salt = "\0".join([first.fingerprint(), *roots, "\1", *found_in])
        state = project_state(stamps, salt)
        summaries = _host_pays(first, cache_dir, jobs) if store.warm(state) is None else None
        if summaries is not None:
            from ms_lint.host import AnalysisHost

            host = AnalysisHost.start(summaries)  # as soon as the run is not warm
            if host is not None:
                hosts.append(host)
        fingerprints = store.load(state, stamps, salt, roots)
        missing = [(path, key) for path, key in zip(files, absolute) if key not in fingerprints]
        if hosts and not missing:
            hosts.pop().stop(wait=False)  # only touched files: nothing to analyze
        if missing and fingerprints and not _loaded_still_hold(store, stamps, roots, salt):
            fingerprints, missing = {}, list(zip(files, absolute))
        if missing:
            work = _FingerprintWork(fingerprints, project(save=False), store, stamps, roots, salt, state)
            if hosts:
                hosts[0].send_index(project())  # the host loads it while the fingerprints are worked out here
            carried = work.carry(missing)
            edited = set(project().cache.replaced)  # files summarized again: their bytes changed
            project().cache.replaced.clear()  # only the carry compared them: the old summaries can go
            # A file the results cache holds nothing for is analyzed whatever its fingerprint: those are worked out
            # while the workers analyze (on a first run, every file's: 1.4 s of this process's time on MindSpore's
            # source, which the workers used to wait for); the others now, for the lookups below.
            later = [] if carried else [(path, key) for path, key in missing
                                        if not own_index(path) or key not in cache_of(path).entries]
            deferred_keys = {key for _, key in later}
            if not carried:
                if hosts:
                    hosts[0].speculate([path for path, key in missing if key in edited and own_index(path)],
                                       config_of)
                work.work_out([(path, key) for path, key in missing if key not in deferred_keys])
                if hosts and not hosts[0].pays_for(project()):
                    hosts.pop().stop(wait=False)  # the workers fork from here: the host's core is theirs now
            # saved while the files are analyzed, with the fingerprints worked out then (if any)
            deferred = _WorkedOutMeanwhile(work, later)
        elif store.refreshed is not None:  # only touched files: the same fingerprints under the new state
            from ms_lint.cache import stored_located, stored_recipes, stored_tables_token

            paired = store.paired_stamps(salt) or {}
            store.save(state, fingerprints, store.refreshed, salt, stored_recipes(paired), stamps,
                       stored_located(paired), stored_tables_token(paired))
    findings: List[Finding] = []
    pending: List[str] = []
    for path, key in zip(files, absolute):
        if key in deferred_keys:
            pending.append(path)  # no stored result to look up: its fingerprint comes later
            continue
        # the project's stamps were taken just now: the cache need not stat the file again, unless ``..`` in the
        # path makes its absolute spelling name another file (``link/../x.py`` with ``link`` a symlink)
        stat = stamps.get(key) if ".." not in path else None
        # a file whose own config sets other index options is analyzed with its own index, uncached: its
        # fingerprint comes from the run's index
        cached = cache_of(path).lookup(path, fingerprints[key], key, stat) if use_cache and own_index(path) else None
        if cached is None:
            pending.append(path)
        elif cached:
            shown = display_path(path)  # only for files with findings: relpath is a third of a warm run's time
            for finding in cached:
                finding.path = shown
            findings.extend(cached)
    analyzed: List[Result] = []
    if pending:  # a warm run imports neither the worker pool nor the parsers
        index = project()
        hosted = hosts[0].analyze(pending, config_of, jobs, index, meanwhile=deferred) if hosts else None
        if hosted is None:
            meanwhile = None if deferred is None or deferred.done else deferred
            # a host that died may have died of one of the files: each is analyzed on a worker then, whose death
            # costs only that file (reported), not this process
            isolated = bool(hosts) and hosts[0].died
            hosted = list(analyze_files(pending, config_of, jobs, index, meanwhile=meanwhile, isolated=isolated))
        analyzed = hosted
    if deferred is not None:
        deferred.finish()
    for path, file_findings, stamp in analyzed:
        findings.extend(file_findings)
        if use_cache and stamp is not None and own_index(path):
            cache_of(path).store(path, file_findings, stamp, fingerprints[os.path.abspath(path)])
    for cache in caches.values():
        cache.save()
    findings.sort(key=Finding.sort_key)
    return findings
