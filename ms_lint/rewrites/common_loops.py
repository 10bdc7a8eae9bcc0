"""Code-building helpers the loop rewrites share: replacing one node, fresh names that clash with nothing.

The analysis the rewrites ask (reads and writes, shapes, effects) lives in ``ms_lint.analysis`` (``dataflow``,
``shapes``, ``effects``); this module only builds code.
"""
from __future__ import annotations

import re
from typing import Iterable

import libcst as cst

from ms_lint.context import ModuleContext


class ReplaceNode(cst.CSTTransformer):
    """Replace one node, found by identity."""

    def __init__(self, old: cst.CSTNode, new: cst.CSTNode):
        super().__init__()
        self.old, self.new = old, new

    def on_leave(self, original_node, updated_node):
        return self.new if original_node is self.old else updated_node



# -- fresh names -------------------------------------------------------------------------------------------------
def fresh_name(context: ModuleContext, base: str, taken: Iterable[str] = ()) -> str:
    """``base`` (or ``base_2``...) when the module never spells it and it is not in ``taken``."""
    taken = set(taken)
    candidate, number = base, 1
    while candidate in taken or re.search(rf"(?<![\w.]){re.escape(candidate)}\b", context.text):
        number += 1
        candidate = f"{base}_{number}"
    return candidate


def fresh_local(base: str, taken: Iterable[str]) -> str:
    """``base`` (or ``base_2``...) not in ``taken``: for names local to a new function (parameters)."""
    taken = set(taken)
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base}_{number}"
    return candidate
