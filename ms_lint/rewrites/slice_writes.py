"""The one-statement rewrite of a loop that only writes slices of one tensor (MSL101, safe).

Two shapes, each the same computation as one slice assignment::

    for i in range(mask.shape[0]):          ->   mask[:, :, k:] = 0
        mask[i, :, k:] = 0

    for i in range(buf.shape[0] - 1):       ->   buf[:-1] = buf[1:]
        buf[i] = buf[i + 1]

The fill is safe when the value is a compile-time constant (a Python number, a constant name): every row gets the
same value, and the trip count is the tensor's own first axis (fewer rows would leave some unwritten). The shift
is safe because step ``i`` reads row ``i + c``, which no earlier step wrote (they wrote rows ``< i``): the loop
copies the old rows ``c..n-1`` onto ``0..n-1-c``, which is what the slice assignment does. Both keep shapes,
dtypes and values bit for bit (a copy); the loop index must not be read after the loop.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from ms_lint.context import ModuleContext
from ms_lint.cstutil import call_name_args, suite_statements
from ms_lint.diagnostics import SAFE, Fix
from ms_lint.analysis.dataflow import read_after, read_names
from ms_lint.analysis.shapes import int_literal
from ms_lint.cstutil import code_of
from ms_lint.analysis.values import FunctionValues, Kind

FILL = "write all rows at once with one slice assignment"


def slice_write_fix(context: ModuleContext, values: FunctionValues, loop: cst.For) -> Optional[Fix]:
    if loop.orelse is not None or not isinstance(loop.target, cst.Name):
        return None
    it = loop.iter
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"):
        return None
    args = call_name_args(it)
    if len(args) != 1 or len(it.args) != 1:
        return None
    stop = args[0].value
    body = list(suite_statements(loop.body))
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    small = body[0].body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Subscript)):
        return None
    target = small.targets[0].target
    index = loop.target.value
    if not isinstance(target.value, cst.Name) or not target.slice or read_after(context, loop, {index}):
        return None
    tensor = target.value.value
    first = target.slice[0].slice
    if not (isinstance(first, cst.Index) and isinstance(first.value, cst.Name) and first.value.value == index):
        return None
    rest = list(target.slice[1:])
    if any(index in read_names(element) for element in rest):
        return None
    new = _fill(values, tensor, stop, small, rest, index) or _shift(tensor, stop, small, rest, index)
    if new is None:
        return None
    statement = body[0].with_changes(body=[new], leading_lines=loop.leading_lines)
    return Fix(SAFE, FILL, edits=((loop, statement),))


def _fill(values: FunctionValues, tensor: str, stop, small: cst.Assign, rest, index: str):
    """``T[i, rest] = constant`` over ``range(T.shape[0])`` -> ``T[:, rest] = constant``."""
    value = small.value
    if code_of(stop) != f"{tensor}.shape[0]" or values.kind(value) is not Kind.CONST:
        return None
    if read_names(value) & {index, tensor}:
        return None
    whole = cst.SubscriptElement(slice=cst.Slice(lower=None, upper=None))
    target = small.targets[0].target.with_changes(slice=_commas([whole] + rest))
    return small.with_changes(targets=[small.targets[0].with_changes(target=target)])


def _shift(tensor: str, stop, small: cst.Assign, rest, index: str):
    """``T[i] = T[i + c]`` over ``range(T.shape[0] - c)`` -> ``T[:-c] = T[c:]``."""
    value = small.value
    if rest or not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name)
                    and value.value.value == tensor and len(value.slice) == 1
                    and isinstance(value.slice[0].slice, cst.Index)):
        return None
    moved = value.slice[0].slice.value
    if not (isinstance(moved, cst.BinaryOperation) and isinstance(moved.operator, cst.Add)
            and isinstance(moved.left, cst.Name) and moved.left.value == index):
        return None
    known, offset = int_literal(moved.right)
    if not known or offset is None or offset <= 0 or code_of(stop) != f"{tensor}.shape[0] - {offset}":
        return None
    return cst.parse_statement(f"{tensor}[:-{offset}] = {tensor}[{offset}:]\n").body[0]


def _commas(elements):
    out = []
    for position, element in enumerate(elements):
        last = position == len(elements) - 1
        out.append(element.with_changes(comma=cst.MaybeSentinel.DEFAULT if last else cst.Comma(
            whitespace_after=cst.SimpleWhitespace(" "))))
    return out
