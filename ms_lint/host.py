"""The analysis host: a process forked at the start of a cached run, which imports the parser and the rules
while this process loads the project index, then analyzes the files it is sent, on workers it forks (they inherit
what it imported and the index it was sent).

Why: after an edit, a run loads its index from the cache in about a quarter of a second; each analysis worker
then spent about 0.2 s importing libcst and the rules, after it. On two cores the host does that while this
process loads the index: the eight packages after a comment appended to ``callback.py``, 0.67 -> 0.57 s
(benchmarks/README.md).

Forked with ``os.fork`` as soon as the run is known not to be warm, before the stored stamps say which files
changed (a run with only touched files stops it then). Nothing here imports ``multiprocessing`` (20 ms) or
``tempfile`` in this process: the host talks over two pipes (length-prefixed pickles) and gets the index through a
memory file (``os.memfd_create``) both hold. (Forked before the project's stamps were read, it cost every warm
run 3.5 ms: 75.5 -> 79-83 ms on the packages.)

A run whose edit changed what the index says (a call of a project function, a new definition) works every
cross-file fingerprint out before it knows which other files to analyze; it has the host analyze the files whose
bytes changed meanwhile (``speculate``), whatever the fingerprints turn out to be.

Only where the analysis workers are forked (the host hands its own imports on to them) and only while the
analysis is not imported here yet (a test run, an editor: the workers forked from this process inherit it
already). Anything that goes wrong with the host (it dies, cannot be forked, cannot be sent the index, misses a
stored summary) leaves the files to ``runner.analyze_files`` here, as without one.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

# Above this many summaries read in this process before the index was sent (it is sent as soon as it is built, so
# only where sending failed at first), the index costs more to send than the host saves (``_summaries_read``).
MOST_SUMMARIES_SENT = 300
# Up to this many files the host analyzes them itself and on children it forks (``_analyzed``), not on
# ``runner.analyze_files``'s pool, whose ``multiprocessing`` import (26 ms) came before the first file: past it,
# the pool's batches of neighbours, sharing, retiring and crash reports pay.
FEW_FILES = 24
# The first item of the message ``AnalysisHost.speculate`` sends (``analyze``'s starts with its list of tasks).
SPECULATE = "speculate"


def wanted() -> bool:
    """Would a host save time here: the analysis workers are forked (``ms_lint.pool`` starts them by
    ``multiprocessing``'s default method), ``os.fork`` and ``os.memfd_create`` exist (Linux), and the analysis
    is not imported yet."""
    if "ms_lint.engine" in sys.modules or not hasattr(os, "fork") or not hasattr(os, "memfd_create"):
        return False
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is not None:
        return multiprocessing.get_start_method() == "fork"
    return sys.platform.startswith("linux") and sys.version_info < (3, 14)  # the default there


class AnalysisHost:
    """A forked process importing the analysis; ``analyze`` hands it the files once the index is built."""

    def __init__(self, store=None) -> None:
        """``store``: the summary store this process builds its index from (``cache.SummaryStore``). The host
        loads it too, and the index is sent with references to the stored summaries this process has not read."""
        # The index and the tasks go through a memory file both processes hold, the pipe only says where: a write
        # larger than the pipe's buffer (the tasks' tables: 0.5 MB on the packages) would wait for the host to
        # read it, which it does only once it has imported the analysis.
        self.shared = os.memfd_create("ms-lint-index", os.MFD_CLOEXEC)
        fds = [self.shared]
        try:
            from_parent, to_host = os.pipe()
            fds += [from_parent, to_host]
            from_host, to_parent = os.pipe()
            fds += [from_host, to_parent]
            parent = os.getpid()

            def host() -> None:
                os.close(to_host)
                os.close(from_host)
                _host_main(from_parent, to_parent, self.shared, store, parent)

            pid = _forked(host)
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        os.close(from_parent)
        os.close(to_parent)
        self.pid = pid
        self.to_host = to_host
        self.from_host = from_host
        self.by_reference = store is not None
        self.sent = False  # the index (``send_index``)
        self.failed = False  # ... could not be sent
        self.written = 0  # bytes of the memory file written
        self.stopped = False
        self.died = False  # ended without answering ``analyze``: maybe of one of the files (``runner``)
        self.working = False  # sent files to analyze: it may have forked children (``stop``)

    @classmethod
    def start(cls, store=None) -> Optional["AnalysisHost"]:
        try:
            return cls(store)
        except OSError:
            return None

    def send_index(self, project) -> None:
        """Send the index as soon as it is built, so that the host loads it while this process works the
        fingerprints out. The stored summaries this process has not read go as references to the host's own
        copies (``_by_reference``): 10 MB and 0.016 s to pickle on the eight packages, else."""
        if self.sent:
            return
        self.sent = True
        try:
            self._put(_pickled_index(_sent_index(project), self.by_reference))
        except Exception:  # noqa: BLE001  something that does not pickle, a host already gone, a full memory
            self.failed = True

    def speculate(self, paths: List[str], config_of: Callable[[str], Any]) -> None:
        """Have the host analyze ``paths`` (files whose bytes changed) while this process works every fingerprint
        out, which takes it 0.6-0.9 s on the eight packages: the host, done importing, would only wait. It works
        out the tables from the index it holds, as this process does (``analyze`` sends them later, for the
        other files); a result is kept for a task of the same file and configuration (``_speculated``)."""
        import pickle

        from ms_lint.runner import numbered_configs

        if not paths or not self.sent or self.failed or self.stopped:
            return
        configs, tasks = numbered_configs(paths, config_of)
        try:
            self._put(pickle.dumps((SPECULATE, tasks, configs), protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:  # noqa: BLE001  a host already gone: ``analyze`` finds out
            pass

    def _put(self, data) -> None:
        """Write ``data`` after what the memory file holds, and tell the host where it is."""
        data = memoryview(data)
        start = self.written
        while data:  # a write may take part of it
            done = os.pwrite(self.shared, data, self.written)
            data = data[done:]
            self.written += done
        _send(self.to_host, start.to_bytes(8, "little") + (self.written - start).to_bytes(8, "little"))

    def analyze(self, paths: List[str], config_of: Callable[[str], Any], jobs: Optional[int], project,
                meanwhile: Optional[Callable[[], None]] = None) -> Optional[list]:
        """``runner.analyze_files(paths, config_of, jobs, project)`` on the host, with the tables ``project`` has
        worked out or carried over since it was sent (``derived_tables``); ``meanwhile`` runs here while it
        works. None when the host could not do it (``pays_for``; ``died``: it ended without answering): the
        caller analyzes the files itself (and runs ``meanwhile`` unless it has run)."""
        import pickle

        if not self.pays_for(project):
            self.stop()
            return None
        from ms_lint.runner import numbered_configs

        self.send_index(project)
        configs, tasks = numbered_configs(paths, config_of)
        try:
            if self.failed:
                raise OSError("the index was not sent")
            self._put(pickle.dumps((tasks, configs, jobs, project.derived_tables()), protocol=pickle.HIGHEST_PROTOCOL))
            self.working = True
        except Exception as error:  # noqa: BLE001  something that does not pickle, a host already gone
            self.died = isinstance(error, BrokenPipeError)  # gone: maybe of a file it speculated on
            self.stop()
            if meanwhile is not None:
                meanwhile()
            return None
        if meanwhile is not None:
            meanwhile()
        try:
            answer = pickle.loads(_received(self.from_host))
        except Exception as error:  # noqa: BLE001  the host died (EOF), or its answer does not load
            self.died = isinstance(error, EOFError)
            self.stop(wait=False)
            return None
        self.release()  # it ends by itself, reaped once the run has reported (``reap_ended``)
        return answer if isinstance(answer, list) else None

    def pays_for(self, project) -> bool:
        """Would the host save time: yes once it holds the index, sent before this process read the rest of the
        summaries (to work every fingerprint out): the tables worked out from them follow with the files
        (``derived_tables``), and workers forked from here would each import the analysis first (the eight
        packages, a call of a project function added to ``callback.py``: 1.82 -> 1.37 s with ``speculate``). Else not
        when this process has read over ``MOST_SUMMARIES_SENT`` summaries: sending them would cost about 0.3 ms
        each."""
        if self.sent and not self.failed:
            return True
        return _summaries_read(project) <= MOST_SUMMARIES_SENT

    def stop(self, wait: bool = True) -> None:
        """End the host; again, nothing. Killed at once while it has no children; once it was sent files
        (Ctrl-C while it analyzes them) asked to end (SIGTERM), which it does after killing and reaping its
        children (``_end_with_children``): killed, it would leave them to init, which in a container may reap
        nothing. ``wait``: until it has ended (killed after ``ENDING`` seconds); else it is reaped later
        (``reap_ended``)."""
        if self.stopped:
            return
        self._close()
        try:
            os.kill(self.pid, signal.SIGTERM if self.working else signal.SIGKILL)
        except ProcessLookupError:
            pass
        _UNREAPED.append(self.pid)
        if wait:
            reap_ended(within=ENDING)
        else:
            reap_ended(block=False)

    def release(self) -> None:
        """Its answer read: let it end by itself (it reaps its own workers first, which killing it would leave
        to init: where init reaps nothing, a container's ``sleep infinity``, they would stay zombies), to be
        reaped by ``reap_ended``."""
        if not self.stopped:
            self._close()
            _UNREAPED.append(self.pid)

    def _close(self) -> None:
        self.stopped = True
        for fd in (self.to_host, self.from_host, self.shared):
            try:
                os.close(fd)
            except OSError:
                pass


# Seconds a host asked to end (``stop``) has to end its children before it is killed.
ENDING = 2.0
# Hosts stopped or released and not yet waited for.
_UNREAPED: List[int] = []


def reap_ended(block: bool = True, within: float = 10.0) -> None:
    """Wait for the hosts this process stopped or released (``block``; one still running after ``within`` seconds
    is killed), or reap those that have ended. The command line does it once it has reported (``cli.entry``):
    they end while it writes its results; a long-lived process leaves at most the last run's."""
    import time

    deadline = time.monotonic() + within
    try:
        for pid in list(_UNREAPED):
            while True:
                try:
                    ended, _status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    ended = pid
                if ended or not block:
                    break
                if time.monotonic() > deadline:
                    _kill(pid)
                    deadline = float("inf")
                time.sleep(0.001)
            if ended:
                _UNREAPED.remove(pid)
    except KeyboardInterrupt:  # Ctrl-C while waiting: kill what is left, reap it, and let the caller report
        for pid in list(_UNREAPED):
            _kill(pid)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            _UNREAPED.remove(pid)
        raise


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _send(fd: int, payload: bytes) -> None:
    """``payload`` with its length before it (``_received``)."""
    data = memoryview(len(payload).to_bytes(8, "little") + payload)
    while data:
        data = data[os.write(fd, data):]


def _received(fd: int) -> bytes:
    """What ``_send`` sent; EOFError when the other end closed first."""
    size = int.from_bytes(_read_exactly(fd, 8), "little")
    return _read_exactly(fd, size)


def _taken(shared: int, where: bytes) -> bytes:
    """What ``AnalysisHost._put`` wrote to the memory file, ``where`` being the message that said where."""
    start, size = int.from_bytes(where[:8], "little"), int.from_bytes(where[8:], "little")
    chunks = []
    while size:  # a read may give part of it
        chunk = os.pread(shared, size, start)
        if not chunk:
            raise OSError(f"the memory file ends {size} bytes short")
        chunks.append(chunk)
        start += len(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_exactly(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError("the other end of the pipe closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _summaries_read(project) -> int:
    """How many of the index's summaries were unpickled (or made) in this process: sending the index costs about
    0.3 ms for each, against about a microsecond for one still unread (``summary.StoredSummary``)."""
    from ms_lint.analysis.summary import StoredSummary

    return sum(type(summary) is not StoredSummary for summary in project.by_path.values())


def _sent_index(project):
    """The index as the host gets it: without the summary store, which only this process saves, nor the
    summaries the edited files had before (``SummaryCache.replaced``), which only the carry here compares."""
    import copy

    sent = copy.copy(project)
    sent.summary_store = None
    sent.cache = copy.copy(project.cache)
    sent.cache.replaced = {}
    return sent


def _pickled_index(project, by_reference: bool) -> memoryview:
    """The pickle of ``project`` for the host; ``by_reference``: its unread stored summaries as references to the
    host's own copies."""
    import copyreg
    import io
    import pickle

    from ms_lint.analysis.summary import StoredSummary

    if not by_reference:
        return memoryview(pickle.dumps(project, protocol=pickle.HIGHEST_PROTOCOL))
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, StoredSummary: _by_reference}
    pickler.dump(project)
    return buffer.getbuffer()


def _by_reference(summary) -> tuple:
    """How a still unread ``StoredSummary`` is pickled for the host: by what names it (``_stored_summary``), its
    module name, path and the digest of the bytes it was made from, which say what it holds (one unread here is
    unchanged since it was loaded: setting an attribute reads it)."""
    return _stored_summary, _key_of(summary)


def _key_of(summary) -> Tuple[str, str, str]:
    fields = object.__getattribute__(summary, "__dict__")  # an unread summary's name, path and digest
    return fields["name"], fields["path"], fields["digest"]


# In the host: the summaries it loaded from the store, by (name, path, digest); None for a key two of them share.
_STORED: Dict[Tuple[str, str, str], Any] = {}


def _stored_summary(name: str, path: str, digest: str):
    """The host's own copy of a summary sent by reference. Raises when it has none (the store changed between
    the two loads; the parent then analyzes the files itself)."""
    found = _STORED.get((name, path, digest))
    if found is None:
        raise LookupError(f"the host holds no stored summary of {path}")
    return found


def _load_stored(store) -> None:
    """Load the summary store into ``_STORED`` (first thing, before the parent can save it again)."""
    from ms_lint.analysis.summary import StoredSummary

    try:
        entries = store.load() if store is not None else None
    except Exception:  # noqa: BLE001  every summary sent by reference then fails to load: the parent analyzes
        entries = None
    for entry in (entries or {}).values():
        summary = entry[2]
        if type(summary) is StoredSummary:
            key = _key_of(summary)
            _STORED[key] = None if key in _STORED else summary


def _host_main(from_parent: int, to_parent: int, shared: int, store, parent: int) -> None:
    """The host's life, in the forked process (which ends when this returns)."""
    import pickle

    from ms_lint.processes import die_with_parent

    die_with_parent(parent)  # and its workers die with it (``stop`` kills it)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it ends this process
    signal.signal(signal.SIGTERM, _end_with_children)
    _load_stored(store)
    _warm_up()
    try:
        where = _received(from_parent)
    except (EOFError, OSError):
        return  # not needed after all
    try:
        project = pickle.loads(_taken(shared, where))
        message = pickle.loads(_taken(shared, _received(from_parent)))
        ready: Dict[str, Tuple[str, Any]] = {}
        if message[0] == SPECULATE:
            ready = _speculated(message[1], message[2], project, from_parent)
            message = pickle.loads(_taken(shared, _received(from_parent)))
        tasks, configs, jobs, tables = message
        if tables is not None:
            project.adopt_tables(*tables)  # (not where the speculation worked them out: the same tables)
        config_at = {path: configs[number] for path, number in tasks}
        done, left = [], []
        for path, number in tasks:  # a speculated result counts for the configuration it was worked out with
            kept = ready.get(path)
            if kept is not None and kept[0] == configs[number].fingerprint():
                done.append(kept[1])
            else:
                left.append(path)
        answer: Any = done + _analyzed(left, config_at.__getitem__, jobs, project)
    except Exception as error:  # noqa: BLE001  the parent analyzes the files itself
        answer = f"{type(error).__name__}: {error}"
    try:
        _send(to_parent, pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001  the parent is gone, or the answer does not pickle (it analyzes them)
        pass
    pool = sys.modules.get("ms_lint.pool")
    if pool is not None:  # many files: reap the pool's workers (asked to end), so that none is left to init
        pool.join_left_workers()


def _end_with_children(_signum, _frame) -> None:
    """The host's SIGTERM (``AnalysisHost.stop``): kill its children (the pool's workers, ``_analyzed``'s), reap
    them, and end; again until none is left or ``ENDING`` seconds have passed (one forked meanwhile dies with this
    process, ``die_with_parent``)."""
    import time

    deadline = time.monotonic() + ENDING
    while time.monotonic() < deadline:
        children = _children()
        for pid in children:
            _kill(pid)
        try:
            while True:
                pid, _status = os.waitpid(-1, os.WNOHANG)
                if not pid:
                    break
                _FORKED.discard(pid)  # reaped: its number may be another process's soon
        except ChildProcessError:
            break  # none left
        if not children:
            time.sleep(0.001)
    os._exit(1)


# The children ``_analyzed`` forked and has not reaped (``_children``).
_FORKED: Set[int] = set()


def _children() -> List[int]:
    """This process's children not yet reaped: those the kernel lists (``/proc/self/task/*/children``, missing
    from kernels built without ``CONFIG_PROC_CHILDREN``), those ``_analyzed`` forked, and the pool's workers
    (``multiprocessing``'s, not yet reaped: a reaped one's number may be another process's)."""
    found = set(_kernel_children()) | _FORKED
    process = sys.modules.get("multiprocessing.process")
    for child in list(getattr(process, "_children", ())):
        popen = getattr(child, "_popen", None)
        if popen is not None and getattr(popen, "returncode", 0) is None:
            found.add(popen.pid)
    return sorted(found)


def _kernel_children() -> List[int]:
    """This process's children as the kernel lists them (none where it does not)."""
    found: List[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children", "rb") as handle:
                found.extend(int(pid) for pid in handle.read().split())
    except (OSError, ValueError):
        pass
    return found


def _speculated(tasks: List[Tuple[str, int]], configs: list, project, from_parent: int
                ) -> Dict[str, Tuple[str, Any]]:
    """path -> (its configuration's fingerprint, its result) for the files ``AnalysisHost.speculate`` named,
    analyzed one after the other until the parent's tasks come (asked between files: they wait for the file
    being analyzed then, one file at most, even where it turns out not to be pending). A file's result depends
    on its bytes, its configuration and the index, which the parent's run holds alike (an analysis that fails
    gives an internal-error finding here as there)."""
    import select

    from ms_lint.runner import analyze_here

    ready: Dict[str, Tuple[str, Any]] = {}
    waiting = select.poll()  # (``select.select`` refuses descriptors past 1023)
    waiting.register(from_parent, select.POLLIN)
    for path, number in tasks:
        if waiting.poll(0):
            break  # the tasks are here (or the parent is gone)
        config = configs[number]
        try:
            ready[path] = (config.fingerprint(), analyze_here([path], lambda _path, config=config: config, project)[0])
        except Exception:  # noqa: BLE001  analyzed again with the tasks, where a failure is reported as ever
            pass
    return ready


def _forked(run: Callable[[], None]) -> int:
    """Fork a child that runs ``run`` and ends (it never returns into the caller's code); its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            _FORKED.clear()  # its parent's children are not its own
            run()
        finally:
            os._exit(0)
    return pid


def _analyzed(paths: List[str], config_of: Callable[[str], Any], jobs: Optional[int], project) -> list:
    """What ``runner.analyze_files`` gives. Up to ``FEW_FILES`` files: the files cut into one part per worker
    ``analyze_files`` would start, equal by its weights (``runner.graph_weight``), the heaviest part analyzed here
    and each other on a child forked from here, which sends its results back; a child that dies leaves its part
    to this process (a file that kills it kills this process too, and the parent's pool then reports it)."""
    import pickle

    from ms_lint.processes import die_with_parent, worker_count
    from ms_lint.runner import analyze_files, analyze_here, file_weights, graph_weight

    if not paths:
        return []
    if len(paths) > FEW_FILES:
        return list(analyze_files(paths, config_of, jobs, project, join=False))  # joined once the answer is sent
    parts = _parts(file_weights(paths, graph_weight(project)), worker_count(jobs, len(paths)))
    children = []
    host = os.getpid()
    for part in parts[1:]:
        readable, writable = os.pipe()

        def child(readable=readable, writable=writable, part=part) -> None:
            os.close(readable)
            die_with_parent(host)
            _send(writable, pickle.dumps(analyze_here(part, config_of, project), protocol=pickle.HIGHEST_PROTOCOL))

        pid = _forked(child)
        _FORKED.add(pid)
        os.close(writable)
        children.append((readable, part, pid))
    results = analyze_here(parts[0], config_of, project)
    for readable, part, pid in children:
        try:
            received = pickle.loads(_received(readable))
        except Exception:  # noqa: BLE001  the child died
            received = None
        os.close(readable)
        try:
            os.waitpid(pid, 0)  # it has sent its results (or died) and ends: none is left to init
        except ChildProcessError:  # reaped already: SIGCHLD ignored by whoever started the command
            pass
        _FORKED.discard(pid)
        # (reaped first: a file that killed the child kills this process too, which must not leave it to init)
        results.extend(received if received is not None else analyze_here(part, config_of, project))
    return results


def _parts(weights: Dict[str, int], count: int) -> List[List[str]]:
    """The files of ``weights`` (path -> weight, ``runner.file_weights``) in ``count`` parts of about equal
    weight, the heaviest part first (each file to the lightest part so far, the heaviest files first)."""
    parts: List[List[str]] = [[] for _ in range(count)]
    loads = [0] * count
    for path in sorted(weights, key=lambda path: -weights[path]):
        lightest = loads.index(min(loads))
        parts[lightest].append(path)
        loads[lightest] += weights[path]
    order = sorted(range(count), key=lambda number: -loads[number])
    return [parts[number] for number in order if parts[number]]


def _warm_up() -> None:
    """Import the parser and the rules. (Analyzing a small model file as well, to build the per-process tables a
    first file builds, bought nothing: 0.58 / 0.58 s on the packages, 1.04 / 1.01 s on MindSpore's source.)"""
    from ms_lint.gcpolicy import collect_less
    from ms_lint.runner import import_analysis

    collect_less()
    import_analysis()
