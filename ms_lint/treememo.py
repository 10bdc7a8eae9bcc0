"""Facts of a libcst tree alone, remembered by node.

libcst nodes are immutable and hashed by identity, so what a function works out from a node's tree alone holds
for as long as the node lives: several rules and rewrites of one check ask it again, and so does the editor's
next check for the statements an edit left alone (``ms_lint.lsp.incremental`` keeps their nodes). Each memo is
bounded, since an entry keeps its node alive; ``forget`` empties them all (the command line does, before each
file: another file's nodes are of no use there).
"""
from __future__ import annotations

import functools
from typing import Callable, List, TypeVar

F = TypeVar("F", bound=Callable)

_MEMOS: List[Callable] = []


def tree_memo(maxsize: int) -> Callable[[F], F]:
    """``functools.lru_cache(maxsize)`` for a function of nodes whose answer depends on their trees alone."""

    def wrap(function: F) -> F:
        memo = functools.lru_cache(maxsize=maxsize)(function)
        _MEMOS.append(memo)
        return memo  # type: ignore[return-value]

    return wrap


def forget() -> None:
    """Let go of every node the memos keep."""
    for memo in _MEMOS:
        memo.cache_clear()  # type: ignore[attr-defined]
