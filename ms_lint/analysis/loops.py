"""Questions about loop bodies that more than one rule asks."""
from __future__ import annotations

from typing import Iterable

import libcst as cst

from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.walk import find


def calls_cell_picked_by(body: cst.CSTNode, index_names: Iterable[str], values: FunctionValues) -> bool:
    """Does the body call a cell chosen by the loop index (``self.layers[i](x)``, ``self.heads[i](h)``)? Then
    each iteration runs a different sub-network: the loop cannot become one mapped function, and unrolling it is
    the point."""
    names = set(index_names)
    if not names:
        return False
    for call in find(body, cst.Call):
        func = call.func
        if not (isinstance(func, cst.Subscript) and len(func.slice) == 1
                and isinstance(func.slice[0].slice, cst.Index)):
            continue
        index = func.slice[0].slice.value
        if isinstance(index, cst.Name) and index.value in names and values.kind(func.value) is Kind.CELL_SEQ:
            return True
    return False
