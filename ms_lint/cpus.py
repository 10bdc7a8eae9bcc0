"""How many CPUs this process may use, and how many workers a pool would start: without ``ms_lint.pool``, which
imports ``multiprocessing`` (20 ms: a cached run asks before it knows whether it will analyze anything,
``runner._host_pays``, and the index asks whether to summarize on workers, ``SummaryCache.fill``)."""
from __future__ import annotations

import os
from typing import Optional


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
