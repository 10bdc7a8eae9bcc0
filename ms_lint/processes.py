"""What a process needs to know or ask about processes without ``ms_lint.pool``, which imports ``multiprocessing``
(20-26 ms): the CPUs it may use and how many workers a pool would start (a cached run asks before it knows whether
it will analyze anything, ``runner._host_pays``; the index asks whether to summarize on workers,
``SummaryCache.fill``), and ending with its parent (``ms_lint.host``'s own workers)."""
from __future__ import annotations

import os
import signal
import sys
from typing import Optional

PR_SET_PDEATHSIG = 1  # prctl(2)


def cpu_count() -> int:
    """The CPUs this process may run on (a container's limit, not the host's core count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(jobs: Optional[int], items: int) -> int:
    """``--jobs`` capped at the number of items and of cores (``None``: all cores). ``--jobs 999`` on a 2-core
    machine starts 2 workers: each imports libcst (about 0.35 s), so more workers than cores only cost."""
    return max(1, min(jobs or cpu_count(), cpu_count(), items))


def die_with_parent(parent) -> None:
    """Have the kernel end this process when ``parent`` (its pid, or a ``multiprocessing`` process; None: no
    parent to follow) ends (Linux; elsewhere nothing): a worker of an analysis host that was killed
    (``ms_lint.host``), a host whose parent was killed. Their pipes alone may not tell them: a process forked
    later holds the parent's end of each pipe made before it."""
    parent_pid = getattr(parent, "pid", parent)
    if not sys.platform.startswith("linux") or parent_pid is None:
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # it ended before the request was made
        os._exit(1)
