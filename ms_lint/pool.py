"""Worker processes that cost only their own file when they die.

``multiprocessing.Pool`` loses the task of a worker that dies (libcst's native parser can crash the process with
SIGSEGV, the kernel can kill it for memory) and ``ProcessPoolExecutor`` fails every pending task with
``BrokenProcessPool``. Here each worker gets one batch at a time over its own pipe, so the parent always knows
what a dead worker was doing: the other items of its batch are retried one by one on a fresh worker, and an item
that kills a worker on its own becomes ``crashed(item, why)``. Everything else is reported as usual.

A worker may also retire between two items (``retire``, asked after each): it sends what it has done and ends,
and the rest of its batch goes first to a fresh worker. Ending a process is the cheap way to free what it
gathered: a worker's module contexts sit in reference cycles, which the run collects rarely
(``ms_lint.gcpolicy``), and a full collection cost more time than the parses it saved (benchmarks/README.md).

Once no batch is left to hand out and a worker stands idle, a busy worker is asked to share (``SHARE``): after its
current item it sends what it has done, keeps the first half of the rest and the idle worker takes the second.
Batches are cut by guesses of their cost (bytes): on MindSpore's source the last batch of one analysis worker ran
0.12-0.41 s after the other had finished; with sharing the workers end within about one item of each other.
"""
from __future__ import annotations

import multiprocessing
import signal
import threading
from collections import deque
from multiprocessing.connection import wait
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple, TypeVar

from ms_lint.processes import die_with_parent

T = TypeVar("T")
R = TypeVar("R")

SHARE = "share"  # parent -> busy worker: hand back the rest of the batch after the current item
# worker -> parent, with the items done: how the batch ended
FINISHED, RETIRED, SHARED = "finished", "retired", "shared"


def _worker_main(conn, work: Callable, initializer: Optional[Callable], initargs: Tuple,
                 retire: Optional[Callable[[], bool]]) -> None:
    die_with_parent(multiprocessing.parent_process())
    if initializer is not None:
        initializer(*initargs)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        if batch == SHARE:
            continue  # asked as its batch ended: nothing is left to share
        done = []
        ended = FINISHED
        for item in batch:
            done.append(work(item))
            if retire is not None and retire():
                conn.send((done, RETIRED))  # the parent gives the rest of the batch to a fresh worker
                return
            if len(batch) - len(done) >= 2 and conn.poll():  # one item left is not worth sharing: asked later
                try:
                    message = conn.recv()
                except (EOFError, OSError):
                    return  # the parent is gone
                if message is None:
                    return
                ended = SHARED
                break
        conn.send((done, ended))


class _Worker:
    def __init__(self, context, work, initializer, initargs, retire):
        parent, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, work, initializer, initargs, retire),
                                       daemon=True)
        self.process.start()
        child.close()
        self.conn = parent
        self.batch: Optional[List[Any]] = None
        self.asked = False  # asked to share its batch (``SHARE``)

    def hand(self, batch: List[Any]) -> None:
        """Give it ``batch`` to work on."""
        self.batch = batch
        self.asked = False
        self.tell(batch)

    def tell(self, message: Any) -> None:
        """Send ``message`` down its pipe; one that died already is left for ``recv`` to tell."""
        try:
            self.conn.send(message)
        except (OSError, ValueError):
            pass

    def ask_to_end(self) -> None:
        self.tell(None)
        self.conn.close()

    def join(self) -> None:
        _joined(self.process)


def _joined(process) -> None:
    """Wait for a worker asked to end (``_Worker.ask_to_end``), killing it after 5 s."""
    process.join(timeout=5)
    if process.is_alive():
        process.kill()
        process.join()


def join_left_workers() -> None:
    """Wait for the workers ``run_batches(join=False)`` left, asked to end."""
    for process in multiprocessing.active_children():
        _joined(process)


def _ask_to_share(pool: List[_Worker]) -> None:
    """Ask the busy worker with the longest batch (as handed: what it has left is its own to know) to share it, one
    worker asked at a time (an idle worker takes one half)."""
    if any(w.asked and w.batch is not None for w in pool):
        return
    busy = [w for w in pool if w.batch is not None and len(w.batch) >= 3]
    if not busy:
        return
    chosen = max(busy, key=lambda w: len(w.batch))  # type: ignore[arg-type]
    chosen.asked = True
    chosen.tell(SHARE)


def describe_exit(code: Optional[int]) -> str:
    if code is None:
        return "it did not exit"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def run_batches(items: Sequence[T], work: Callable[[T], R], workers: int, chunk: int,
                crashed: Callable[[T, str], R], initializer: Optional[Callable] = None,
                initargs: Tuple = (), batches: Optional[List[List[T]]] = None,
                meanwhile: Optional[Callable[[], None]] = None,
                retire: Optional[Callable[[], bool]] = None, join: bool = True) -> List[R]:
    """``work(item)`` for every item on ``workers`` processes, ``chunk`` items per batch, in no particular order
    (or the given ``batches``, handed out in their order, instead of ``items`` cut in chunks). ``meanwhile``: run on
    a thread of this process, which only waits for the workers: started once the first workers are forked, and
    finished before any other worker is forked (one that replaces a dead or retired worker) and before this
    returns, so that no worker is forked while the thread may hold a lock (an import's) that the child would
    inherit held.
    ``retire``: asked in a worker after each item; True ends that worker (see the module's docstring).
    ``join``: wait for the workers to end before this returns (they are asked to end either way); a process with
    something more urgent to do first (``ms_lint.host`` answering) waits later (``join_left_workers``).

    ``work``, ``initializer`` and the items must be picklable where processes are spawned (module-level
    functions). ``crashed(item, why)`` stands in for the result of an item whose worker died while it ran alone.
    """
    context = multiprocessing.get_context()
    if batches is None:
        batches = [list(items[i:i + chunk]) for i in range(0, len(items), max(1, chunk))]
    queue: Deque[List[T]] = deque(batch for batch in batches if batch)
    results: List[R] = []
    pool: List[_Worker] = []
    thread: Optional[threading.Thread] = None  # ``meanwhile``'s, once the first workers are forked
    try:
        while queue or any(w.batch is not None for w in pool):
            while queue and len([w for w in pool if w.batch is not None]) < workers:
                idle = next((w for w in pool if w.batch is None), None)
                if idle is None:
                    if thread is not None:
                        thread.join()  # a worker that replaces a dead or retired one: no fork while the thread runs
                    idle = _Worker(context, work, initializer, initargs, retire)
                    pool.append(idle)
                idle.hand(queue.popleft())
            if not queue and len([w for w in pool if w.batch is not None]) < workers:
                _ask_to_share(pool)
            if meanwhile is not None and thread is None:
                thread = threading.Thread(target=meanwhile, daemon=True)
                thread.start()
            busy: Dict[Any, _Worker] = {w.conn: w for w in pool if w.batch is not None}
            for conn in wait(list(busy)):
                worker = busy[conn]
                batch, worker.batch = worker.batch, None
                try:
                    done, ended = conn.recv()
                except (EOFError, OSError):
                    pass
                else:
                    results.extend(done)
                    assert batch is not None
                    if ended == SHARED:  # the first half of the rest stays with it, the second goes to the queue
                        rest = batch[len(done):]
                        half = (len(rest) + 1) // 2
                        worker.hand(rest[:half])
                        queue.append(rest[half:])
                    elif ended == RETIRED:
                        if len(done) < len(batch):
                            queue.appendleft(batch[len(done):])
                        worker.process.join()
                        pool.remove(worker)
                        conn.close()
                    continue
                worker.process.join()
                why = describe_exit(worker.process.exitcode)
                pool.remove(worker)
                conn.close()
                assert batch is not None
                if len(batch) == 1:
                    results.append(crashed(batch[0], why))
                else:  # which one killed it is unknown: each again, alone
                    queue.extendleft([item] for item in reversed(batch))
    finally:
        # all asked first: their ends overlap (freeing a worker's memory takes the kernel about 12 ms; joined one
        # after the other, two workers cost a cold run 24 ms at the end of each phase)
        for worker in pool:
            worker.ask_to_end()
        for worker in pool if join else ():
            worker.join()
        if thread is not None:
            thread.join()
    return results
