"""The analysis host: a process forked at the start of a cached run that has to build the project index, which
imports the parser and the rules while this process loads the index, then analyzes the files it is sent, on
workers it forks (they inherit what it imported and the index it was sent).

Why: after an edit, a run loads its index from the cache in about a quarter of a second; each analysis worker
then spent about 0.2 s importing libcst and the rules, after it. On two cores the host does that while this
process loads the index: the eight packages after a comment appended to ``callback.py``, 0.67 -> 0.57 s
(benchmarks/README.md).

Only where processes are forked (the host must inherit this process's configuration and hand its own imports on
to its workers), and only while the analysis is not imported here yet (a test run, an editor: the workers
forked from this process inherit it already). Anything that goes wrong with the host (it dies, cannot be forked,
cannot be sent the index) leaves the files to ``runner.analyze_files`` here, as without one.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
from typing import Any, Callable, List, Optional

# Above this many summaries read in this process (a run that worked the fingerprints out reads them all), the
# index costs more to send than the host saves (``_summaries_read``).
MOST_SUMMARIES_SENT = 300


def wanted() -> bool:
    """Would a host save time here: processes are forked, and the analysis is not imported yet."""
    return multiprocessing.get_start_method() == "fork" and "ms_lint.engine" not in sys.modules


class AnalysisHost:
    """A forked process importing the analysis; ``analyze`` hands it the files once the index is built."""

    def __init__(self) -> None:
        import tempfile

        context = multiprocessing.get_context("fork")
        parent, child = context.Pipe()
        # The index goes through a file both processes hold (unlinked: nothing is left behind), not the pipe: a
        # write of 10 MB to the pipe would wait for the host to read it, which it does only once it has imported
        # the analysis.
        self.shared = tempfile.TemporaryFile()
        # not a daemon: a daemonic process may not fork the workers
        self.process = context.Process(target=_host_main, args=(child, parent, self.shared.fileno()),
                                       daemon=False)
        self.process.start()
        child.close()
        self.conn = parent
        self.sent = False  # the index (``send_index``)
        self.failed = False  # ... could not be sent

    @classmethod
    def start(cls) -> Optional["AnalysisHost"]:
        try:
            return cls()
        except OSError:
            return None

    def send_index(self, project) -> None:
        """Send the index as soon as it is built, its summaries still unread (10 MB on the packages: 0.025 s to
        pickle, 0.02 s to load), so that the host loads it while this process works the fingerprints out."""
        if self.sent:
            return
        self.sent = True
        try:
            pickled = memoryview(pickle.dumps(_sent_index(project), protocol=pickle.HIGHEST_PROTOCOL))
            written = 0
            while written < len(pickled):  # a write may take part of it
                written += os.pwrite(self.shared.fileno(), pickled[written:], written)
            self.conn.send(len(pickled))
        except Exception:  # noqa: BLE001  something that does not pickle, a host already gone, a full disk
            self.failed = True

    def analyze(self, paths: List[str], config_of: Callable[[str], Any], jobs: Optional[int], project,
                meanwhile: Optional[Callable[[], None]] = None) -> Optional[list]:
        """``runner.analyze_files(paths, config_of, jobs, project)`` on the host, with the tables ``project`` has
        worked out or carried over since it was sent (``derived_tables``); ``meanwhile`` runs here while it
        works. None when the host could not do it, or this process has read too many summaries since
        (``pays_for``): the caller analyzes the files itself (and runs ``meanwhile`` unless it has run)."""
        if not self.pays_for(project):
            self.stop()
            return None
        from ms_lint.runner import numbered_configs

        self.send_index(project)
        configs, tasks = numbered_configs(paths, config_of)
        try:
            if self.failed:
                raise OSError("the index was not sent")
            self.conn.send_bytes(pickle.dumps((tasks, configs, jobs, project.derived_tables()),
                                              protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:  # noqa: BLE001  something that does not pickle, a host already gone
            self.stop()
            if meanwhile is not None:
                meanwhile()
            return None
        if meanwhile is not None:
            meanwhile()
        try:
            answer = self.conn.recv()
        except (EOFError, OSError):
            return None
        finally:
            self.stop()
        return answer if isinstance(answer, list) else None

    @staticmethod
    def pays_for(project) -> bool:
        """Would the host save time: not when this process has read over ``MOST_SUMMARIES_SENT`` summaries (it
        worked every fingerprint out; workers forked from here inherit what it worked out with them, which the
        host's copy of the index would work out again, and sending it instead would cost about 0.3 ms a
        summary)."""
        return _summaries_read(project) <= MOST_SUMMARIES_SENT

    def stop(self) -> None:
        """End the host at once (its answer, if any, has been read)."""
        try:
            self.conn.close()
        except OSError:
            pass
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.shared.close()


def _summaries_read(project) -> int:
    """How many of the index's summaries were unpickled (or made) in this process: sending the index costs about
    0.3 ms for each, against about a microsecond for one still unread (``summary.StoredSummary``)."""
    from ms_lint.analysis.summary import StoredSummary

    return sum(type(summary) is not StoredSummary for summary in project.by_path.values())


def _sent_index(project):
    """The index as the host gets it: without the summary store, which only this process saves."""
    import copy

    sent = copy.copy(project)
    sent.summary_store = None
    return sent


def _host_main(conn, parents_end, shared: int) -> None:
    from ms_lint.pool import die_with_parent

    parents_end.close()  # so that the parent's end closing (it ended) reads as EOF here
    die_with_parent()  # and its workers die with it (``stop`` kills it)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it ends this process
    _warm_up()
    try:
        size = conn.recv()
    except (EOFError, OSError):
        os._exit(0)  # not needed after all
    try:
        pickled = os.pread(shared, size, 0)
        if len(pickled) != size:
            raise OSError(f"read {len(pickled)} of the index's {size} bytes")
        project = pickle.loads(pickled)
        tasks, configs, jobs, tables = pickle.loads(conn.recv_bytes())
        if tables is not None:
            project.adopt_tables(*tables)
        from ms_lint.runner import analyze_files

        config_at = {path: configs[number] for path, number in tasks}
        results = analyze_files([path for path, _ in tasks], config_at.__getitem__, jobs, project)
        answer: Any = list(results)
    except Exception as error:  # noqa: BLE001  the parent analyzes the files itself
        answer = f"{type(error).__name__}: {error}"
    try:
        conn.send(answer)
    except (OSError, ValueError):
        pass
    conn.close()
    os._exit(0)  # nothing to flush or free: the parent reports


def _warm_up() -> None:
    """Import the parser and the rules. (Analyzing a small model file as well, to build the per-process tables a
    first file builds, bought nothing: 0.58 / 0.58 s on the packages, 1.04 / 1.01 s on MindSpore's source.)"""
    from ms_lint.gcpolicy import collect_less
    from ms_lint.runner import import_analysis

    collect_less()
    import_analysis()
