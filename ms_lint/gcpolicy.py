"""How often the cyclic garbage collector runs while ms-lint parses and analyzes.

The default thresholds (700, 10, 10) collect every 700 allocations, and a full collection walks every object
alive. A parse allocates hundreds of thousands of nodes (libcst's or ``ast``'s), none in a reference cycle, and
a run keeps the project index's summaries alive (about two million objects on MindSpore's source): with the
defaults, every allocation-heavy step after they were loaded paid full collections over them for nothing (over
10% of a cold run; 0.1 s of a one-file check after an edit). Reference counting still frees every tree.
"""
from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import Iterator, List

FEWER_COLLECTIONS = (100_000, 50, 100)


def collect_less() -> None:
    """Set the thresholds of a process that parses (a worker's initializer, the language server)."""
    gc.set_threshold(*FEWER_COLLECTIONS)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """``FEWER_COLLECTIONS`` while the block runs in this process."""
    before = gc.get_threshold()
    gc.set_threshold(*FEWER_COLLECTIONS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


_SHORT_LIVED: List[bool] = []


def short_lived_process() -> None:
    """This process is one ``ms-lint`` command, which ends with its run: collect less for all of it, and let
    ``keep_alive_objects`` take what is alive out of the collector's reach."""
    collect_less()
    _SHORT_LIVED[:] = [True]


def keep_alive_objects() -> None:
    """Everything alive now lives until the process ends (the project index and its summaries, about two million
    objects on MindSpore's source): ``gc.freeze`` them, in a short-lived process only, so that no full
    collection walks them again, neither during the run nor at the interpreter's exit (0.14 s and about as much
    again after loading MindSpore's summaries). Objects frozen are still freed when their last reference goes;
    garbage in a reference cycle that is alive at the freeze is kept to the end of the process (a few MB at most:
    reference counting frees nearly everything ms-lint drops). A long-lived process (the language server, a test
    run calling the CLI in-process) does not freeze: that garbage would never be collected there."""
    if _SHORT_LIVED:
        gc.freeze()


_KEPT: List[object] = []  # what ``keep_to_the_end`` holds


def keep_to_the_end(thing: object) -> None:
    """In a short-lived process (``short_lived_process``), hold ``thing`` until the process ends, which skips
    the teardown (``end_short_lived``): a project index dropped as its run returns is freed object by object
    (after every fingerprint was worked out, all its summaries read: 0.04-0.06 s on the eight packages; 0.06 s
    at the end of a cold run of MindSpore's source). Elsewhere nothing: a long-lived process frees it when it is
    done with it."""
    if _SHORT_LIVED:
        _KEPT.append(thing)


def end_short_lived(code: int) -> int:
    """In a short-lived process (``short_lived_process``), flush the standard streams and end the process with
    ``code`` now, skipping the interpreter's teardown: it frees every object still alive one at a time (the
    project index; the trees and value models kept for cross-module questions), 3 of the 18 s of a check of a
    55,000-line file of Cells, and nothing of what a run writes is left open by then (every file ms-lint writes is
    closed where it is written; worker processes have been joined). Elsewhere it returns ``code``. Output that
    cannot be written (a closed pipe) ends the process with status 2, as ``ms_lint.cli.main`` does. Under a
    profiler or a tracer (``python -m cProfile -m ms_lint``, coverage; ``sys.monitoring`` tools from Python 3.12)
    the interpreter ends the process, so that they write what they gathered."""
    if not _SHORT_LIVED or _observed():
        return code
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with the descriptor closed
            continue
        try:
            stream.flush()
        except (OSError, ValueError):  # ValueError: a stream closed already
            if stream is sys.stdout:
                code = 2
    os._exit(code)


def _observed() -> bool:
    """A profiler or tracer is attached to this process."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12+: cProfile and coverage may register here instead
    return monitoring is not None and any(monitoring.get_tool(tool) is not None for tool in range(6))
