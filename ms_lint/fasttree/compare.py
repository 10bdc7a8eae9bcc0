"""Comparing a fast tree with libcst's tree of the same text, node by node (``tests/test_fasttree.py``,
``benchmarks/fasttree_compare.py``)."""
from __future__ import annotations

from typing import Iterator, Optional, Tuple

import libcst as cst

from ms_lint.walk import _child_fields

LAYOUT = {"indent", "first_colon", "second_colon", "default_indent", "default_newline", "encoding",
          "leading_whitespace"}
SCALARS = ("value", "star", "start", "end", "has_trailing_newline")


def difference(fast, real, path: str = "module") -> Optional[str]:
    """The first difference between a fast tree and libcst's outside layout, or None."""
    if isinstance(fast, (list, tuple)) and isinstance(real, (list, tuple)):
        if len(fast) != len(real):
            return f"{path}: {len(fast)} != {len(real)} items"
        for index, (one, other) in enumerate(zip(fast, real)):
            found = difference(one, other, f"{path}[{index}]")
            if found:
                return found
        return None
    if type(fast) is not type(real):
        return f"{path}: {type(fast).__name__} != {type(real).__name__}"
    if not isinstance(fast, cst.CSTNode):
        return None if fast == real else f"{path}: {fast!r} != {real!r}"
    for name in _child_fields(type(fast)):
        if name not in LAYOUT:
            found = difference(getattr(fast, name), getattr(real, name), f"{path}.{name}")
            if found:
                return found
    for name in (*SCALARS, "posonly_ind", "star_arg", "asynchronous", "second_colon"):
        if not hasattr(fast, name):
            continue
        one, other = getattr(fast, name), getattr(real, name)
        if isinstance(one, (cst.CSTNode, cst.MaybeSentinel)) or isinstance(other, (cst.CSTNode, cst.MaybeSentinel)):
            if type(one) is not type(other):
                return f"{path}.{name}: {type(one).__name__} != {type(other).__name__}"
        elif one != other:
            return f"{path}.{name}: {one!r} != {other!r}"
    return None


def twins(real, fast) -> Iterator[Tuple[object, object]]:
    """Each node of libcst's tree with the fast tree's node in its place."""
    yield real, fast
    if isinstance(real, (list, tuple)):
        for one, other in zip(real, fast):
            yield from twins(one, other)
    elif isinstance(real, cst.CSTNode):
        for name in _child_fields(type(real)):
            if name not in LAYOUT:
                yield from twins(getattr(real, name), getattr(fast, name))
