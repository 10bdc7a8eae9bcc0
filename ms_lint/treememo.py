"""Facts of a libcst tree alone, remembered by node.

libcst nodes are immutable and hashed by identity, so what a function works out from a node's tree alone holds
for as long as the node lives: several rules and rewrites of one check ask it again, and so does the editor's
next check for the statements an edit left alone (``ms_lint.lsp.incremental`` keeps their nodes).

An entry keeps its node alive (libcst nodes take no weak references), so the memos keep two generations: what was
asked since the last ``prune`` and, for one more round, what was asked before it. The editor prunes after each
check: the nodes an edit replaced are asked no more and go at the next prune, while those it left alone move to
the new generation when the next check asks them again (a bounded LRU instead kept up to its size in old
versions of edited statements: 40 MB more after 600 edits of a file of Cells). The command line ``forget``s them
all before each file: another file's nodes are of no use there.
"""
from __future__ import annotations

from typing import Callable, Dict, List, NamedTuple


class MemoInfo(NamedTuple):
    currsize: int


class TreeMemo:
    """A function of one node, remembered for two generations (see the module's docstring)."""

    def __init__(self, function: Callable):
        self.__wrapped__ = function
        self.__name__ = getattr(function, "__name__", "memo")
        self.__doc__ = function.__doc__
        self._current: Dict[object, object] = {}
        self._previous: Dict[object, object] = {}

    def __call__(self, node):
        current = self._current
        if node in current:
            return current[node]
        previous = self._previous
        if node in previous:
            found = current[node] = previous.pop(node)
            return found
        found = current[node] = self.__wrapped__(node)
        return found

    def prune(self) -> None:
        """Start a new generation: what was not asked since the last prune is let go."""
        self._previous = self._current
        self._current = {}

    def cache_clear(self) -> None:
        self._current = {}
        self._previous = {}

    def cache_info(self) -> MemoInfo:
        return MemoInfo(len(self._current) + len(self._previous))


_MEMOS: List[TreeMemo] = []


def tree_memo(function: Callable) -> TreeMemo:
    """Remember ``function``, a function of one node whose answer depends on the node's tree alone."""
    memo = TreeMemo(function)
    _MEMOS.append(memo)
    return memo


def prune() -> None:
    """After an editor's check: let go of the nodes no check asked about since the prune before."""
    for memo in _MEMOS:
        memo.prune()


def forget() -> None:
    """Let go of every node the memos keep."""
    for memo in _MEMOS:
        memo.cache_clear()
