"""Code-building helpers the loop rewrites share: fresh names that clash with nothing (replacing nodes is
``ms_lint.walk.replace_nodes``).

The analysis the rewrites ask (reads and writes, shapes, effects) lives in ``ms_lint.analysis`` (``dataflow``,
``shapes``, ``effects``); this module only builds code.
"""
from __future__ import annotations

import re
from typing import Iterable

from ms_lint.context import ModuleContext


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
