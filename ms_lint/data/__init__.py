"""Data shipped with ms-lint: what tools/derive_mindspore_api.py read off the installed MindSpore.

Loaded on first use, without libcst (the project index asks which MindSpore classes are Cells on the warm path).
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, FrozenSet, Optional

_API: Optional[Dict[str, Any]] = None
_CELLS: Optional[FrozenSet[str]] = None


def mindspore_api() -> Dict[str, Any]:
    """The derived data (``mindspore_api.json``): return kinds of methods and functions, compile-time helpers,
    what base classes assign in ``__init__``, and MindSpore's public Cell classes."""
    global _API
    if _API is None:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mindspore_api.json"),
                  encoding="utf-8") as handle:
            _API = json.load(handle)
    return _API


def mindspore_cells() -> FrozenSet[str]:
    """MindSpore's public classes whose base chain reaches ``nn.Cell`` (``mindspore.boost.GradientAccumulation``),
    by every name they are imported under."""
    global _CELLS
    if _CELLS is None:
        _CELLS = frozenset(mindspore_api().get("cells", ()))
    return _CELLS
