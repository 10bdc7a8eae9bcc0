"""The ``vmap`` rewrite of MSL101: a per-slice loop whose results are stacked becomes one vectorized map.

Offered only for the shape whose equivalence is easy to see (and that the MindSpore tests prove)::

    out = []                                   # an empty list, not used before the loop
    for i in range(x.shape[0]):                # or: for row in x / for row in ops.unstack(x, axis)
        y = f(x[i], w)                         # plain assignments; i used only to slice tensors
        out.append(g(y, z[i]))                 # one append, last
    res = ops.stack(out, axis)                 # the very next statement stacks the list, once

becomes ``res = ms.vmap(fn, in_axes=(0, 0), out_axes=axis)(x, z)`` with ``fn`` a lambda (one expression) or
a nested ``def`` (several statements). Loop-invariant values (``w``, ``self.dense``) are captured by closure,
which vmap supports. Anything else is refused: loop-carried state, conditions, ``break``/``continue``,
random ops (vmap would give every lane the same numbers), side effects, ``i`` used other than as a slice
index, names the loop leaves behind that later code reads, or a list used elsewhere.

Several lists grown by the same body (``a.append(u); b.append(v)``, or tuples ``a += (u,)``) are one vmap too
when the statements right after the loop are exactly ``name = ops.stack(acc, axis)`` once per list: the function
returns ``(u, v)``, ``out_axes`` has one axis per list, and the result is unpacked into those names.

When no rewrite is built, ``refusal`` says what vmap itself could not compile, and ``unbuilt`` says which part
of the body is not a shape the rewrite builds; the rule puts either in the finding's detail.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from ms_lint.context import ModuleContext
from ms_lint.cstutil import call_name_args, code_of, cut, is_self_attr, suite_statements
from ms_lint.diagnostics import SAFE, UNSAFE, Fix, ImportRequest
from ms_lint.analysis.dataflow import (
    assigned_in, binds_by_walrus, contains_node, declared_nonlocal, enclosing_statement, first_reads, local_names, plain_assignment, read_after, read_name_nodes, read_names, statement_block, written_names,
)
from ms_lint.analysis.effects import EffectChecker
from ms_lint.analysis.pieces import pieces_of
from ms_lint.analysis.shapes import (
    ShapeRef, init_value, int_argument, primitive_of, same_batch_length,
)
from ms_lint.fasttree import parenthesized
from ms_lint.rewrites.common_loops import fresh_local, fresh_name
from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.analysis.vmap_compile import VmapCompileCheck
from ms_lint.walk import find, replace_nodes

STACK_FUNCTIONS = {"mindspore.ops.stack": "axis", "mindspore.mint.stack": "dim"}
STACK_PRIMITIVE = "mindspore.ops.Stack"
# Concatenation of rows that each carry a new length-1 axis ``a`` (``row.unsqueeze(a)``) is a stack on ``a``.
CONCAT_FUNCTIONS = {"mindspore.ops.concat": "axis", "mindspore.ops.cat": "axis", "mindspore.mint.cat": "dim",
                    "mindspore.mint.concat": "dim"}
UNSQUEEZE_FUNCTIONS = {"mindspore.ops.unsqueeze": "dim", "mindspore.ops.expand_dims": "axis",
                       "mindspore.mint.unsqueeze": "dim"}
UNSQUEEZE_METHODS = {"unsqueeze": "dim", "expand_dims": "axis"}
UNSTACK_FUNCTIONS = {"mindspore.ops.unstack": "axis"}
UNSTACK_PRIMITIVE = "mindspore.ops.Unstack"

Comprehension = Union[cst.ListComp, cst.GeneratorExp]



def stack_axis(context: ModuleContext, owner: Optional[str], call: cst.Call, sequence: cst.CSTNode) -> Optional[int]:
    """The axis when ``call`` stacks exactly ``sequence`` (``ops.stack(seq, 1)``, ``P.Stack(1)(seq)``...)."""
    args = call_name_args(call)
    if not args or args[0].value is not sequence:
        return None
    qualified = context.imports.qualify(call.func)
    if qualified in STACK_FUNCTIONS:
        if len(call.args) > 2:
            return None
        known, axis = int_argument(call, 1, STACK_FUNCTIONS[qualified], 0)
        return axis if known else None
    if len(call.args) != 1:
        return None
    primitive = primitive_of(context, owner, call.func)
    if primitive != STACK_PRIMITIVE:
        return None
    construction = call.func if isinstance(call.func, cst.Call) else None
    if construction is None:
        construction = init_value(context, owner, call.func.attr.value)  # type: ignore[union-attr]
    if not isinstance(construction, cst.Call):
        return None
    known, axis = int_argument(construction, 0, "axis", 0)
    return axis if known else None


def concat_axis(context: ModuleContext, call: cst.Call, sequence: cst.CSTNode) -> Optional[int]:
    """The axis when ``call`` is ``ops.concat(sequence, axis)`` / ``ops.cat`` / ``mint.cat`` with a literal axis."""
    args = call_name_args(call)
    if not args or args[0].value is not sequence or len(call.args) > 2:
        return None
    qualified = context.imports.qualify(call.func)
    if qualified not in CONCAT_FUNCTIONS:
        return None
    known, axis = int_argument(call, 1, CONCAT_FUNCTIONS[qualified], 0)
    return axis if known and axis is not None and axis >= 0 else None


def unsqueezed_row(context: ModuleContext, values: FunctionValues, expr: cst.BaseExpression, axis: int
                   ) -> Optional[cst.BaseExpression]:
    """``row`` when ``expr`` is ``row.unsqueeze(axis)`` / ``ops.unsqueeze(row, axis)`` / ``ops.expand_dims(row,
    axis)`` with that literal axis: the row before the length-1 axis was added."""
    if not isinstance(expr, cst.Call) or parenthesized(expr) or any(arg.star for arg in expr.args):
        return None
    func = expr.func
    qualified = context.imports.qualify(func)
    if qualified in UNSQUEEZE_FUNCTIONS:
        args = call_name_args(expr)
        if not args or len(expr.args) != 2:
            return None
        known, found = int_argument(expr, 1, UNSQUEEZE_FUNCTIONS[qualified], None)
        return args[0].value if known and found == axis else None
    if isinstance(func, cst.Attribute) and func.attr.value in UNSQUEEZE_METHODS and qualified is None \
            and len(expr.args) == 1 and values.kind(func.value) is Kind.TENSOR:
        known, found = int_argument(expr, 0, UNSQUEEZE_METHODS[func.attr.value], None)
        return func.value if known and found == axis else None
    return None


def unstack_source(context: ModuleContext, owner: Optional[str], expr: cst.BaseExpression
                   ) -> Optional[Tuple[cst.BaseExpression, int]]:
    """(tensor, axis) when ``expr`` is ``ops.unstack(x, axis)`` / ``P.Unstack(axis)(x)`` / ``self.unstack(x)``."""
    if not isinstance(expr, cst.Call):
        return None
    args = call_name_args(expr)
    qualified = context.imports.qualify(expr.func)
    if qualified in UNSTACK_FUNCTIONS and args and len(expr.args) <= 2:
        known, axis = int_argument(expr, 1, UNSTACK_FUNCTIONS[qualified], 0)
        return (args[0].value, axis) if known and axis is not None else None
    if len(expr.args) == 1 and args and primitive_of(context, owner, expr.func) == UNSTACK_PRIMITIVE:
        construction = expr.func if isinstance(expr.func, cst.Call) else None
        if construction is None and isinstance(expr.func, cst.Attribute):
                construction = init_value(context, owner, expr.func.attr.value)
        if isinstance(construction, cst.Call):
            known, axis = int_argument(construction, 0, "axis", 0)
            if known and axis is not None:
                return args[0].value, axis
    return None


@dataclass
class _Mapped:
    """One tensor argument of the vmap: the expression passed, its in_axis, the lane parameter's name."""

    expr: cst.BaseExpression
    axis: int
    param: str = ""
    slices: List[cst.Subscript] = field(default_factory=list)


class VmapBuilder:
    """Builds the vmap fix for one graph function's loop or comprehension; None whenever it is not provably safe."""

    def __init__(self, context: ModuleContext, function: cst.FunctionDef, values: FunctionValues):
        self.context = context
        self.function = function
        self.values = values
        self.owner = context.scope.owner_of.get(function)
        self.refusal: Optional[str] = None  # set when the only obstacle is what vmap itself cannot compile
        self.unbuilt: Optional[str] = None  # set when the body is not a shape the rewrite builds (see _unbuilt)

    # -- the iteration: which tensors are sliced, on which axis ------------------------------------------------
    def _index_slices(self, nodes: Sequence[cst.CSTNode], index: str, trip: ShapeRef, written: Set[str],
                      at: Optional[cst.BaseStatement] = None) -> Optional[List[_Mapped]]:
        """Every use of ``index`` must be ``t[:, ..., index, rest]`` on a loop-invariant Tensor ``t``, one of them the
        tensor whose shape gives the trip count, or (axis 0 only) a name that provably has as many rows as it when
        statement ``at`` runs (``q = self.conv(x)``, see :func:`same_batch_length`). None (with the reason
        recorded) otherwise."""
        if trip.tensor is None or trip.axis is None or trip.axis < 0:
            return self._unbuilt(f"runs to `{cut(trip.origin, 40)}`, not one axis of a Tensor the body slices")
        mapped: Dict[str, _Mapped] = {}
        used: Set[int] = set()
        for sub in (found for node in nodes for found in find(node, cst.Subscript)):
            position = _index_position(sub, index)
            if position is None:
                continue
            base = sub.value
            said = cut(code_of(base), 30)
            if not (isinstance(base, cst.Name) or is_self_attr(base)):
                return self._unbuilt(f"slices `{said}` by `{index}`, not a name or a `self` attribute")
            if isinstance(base, cst.Name) and (base.value in written or base.value == index):
                return self._unbuilt(f"slices `{said}` by `{index}` and reassigns `{said}`")
            if self.values.kind(base) is not Kind.TENSOR:
                return self._unbuilt(f"slices `{said}` by `{index}`, and `{said}` is not known to be a Tensor")
            key = code_of(base)
            entry = mapped.setdefault(key, _Mapped(base, position))
            if entry.axis != position:
                return self._unbuilt(f"slices `{said}` by `{index}` on two different axes")
            entry.slices.append(sub)
            used.add(id(sub.slice[position].slice.value))  # type: ignore[union-attr]
        for node in nodes:
            for name in read_name_nodes(node):
                if name.value == index and id(name) not in used:
                    return self._unbuilt(f"uses `{index}` other than as the whole index of one axis (`t[{index}]`, "
                                         f"`t[:, {index}]`)")
        trip_key = code_of(trip.tensor)
        if (trip_key not in mapped or mapped[trip_key].axis != trip.axis) and not self._same_rows(mapped, trip, at):
            sliced = ", ".join(f"`{cut(key, 20)}`" for key in list(mapped)[:3]) or "nothing"
            return self._unbuilt(f"runs to `{cut(trip.origin, 30)}` but slices {sliced} by `{index}`, whose length "
                                 "along that axis is not known to be the trip count")
        return list(mapped.values())

    def _same_rows(self, mapped: Dict[str, _Mapped], trip: ShapeRef, at: Optional[cst.BaseStatement]) -> bool:
        """Is every tensor sliced provably as long as the trip tensor along the sliced axis (``range(x.shape[0])``
        over ``q[b]``, ``k[b]`` with ``q = self.conv(x)``...)? Only when the trip is axis 0 of a plain name, and
        each sliced tensor is that name itself or one :func:`same_batch_length` proves, sliced on axis 0: vmap
        maps every row of every argument, the loop only the first ``x.shape[0]`` of each."""
        if at is None or trip.axis != 0 or not isinstance(trip.tensor, cst.Name) or not mapped:
            return False
        source = trip.tensor.value
        return all(entry.axis == 0 and isinstance(entry.expr, cst.Name)
                   and (entry.expr.value == source
                        or same_batch_length(self.context, self.function, entry.expr.value, source, at))
                   for entry in mapped.values())

    def _trip_is_current(self, trip: ShapeRef, iterable: cst.BaseExpression, statement: cst.BaseStatement) -> bool:
        """Does ``trip.tensor`` still name the tensor whose shape gave the trip count when the loop runs?

        ``n = x.shape[0]; x = x.T; for i in range(n): ... x[i]`` loops n times over the rows of the new ``x``;
        a vmap over the new ``x`` would map all of its rows, a different count. The shape must be read in the
        loop header itself, or earlier in the same block with no rebinding of the tensor's name in between.
        """
        tensor = trip.tensor
        if tensor is None:
            return False
        if contains_node(iterable, tensor):
            return True
        if not isinstance(tensor, cst.Name):
            return False
        block, index = statement_block(self.context, statement)
        if block is None or index is None:
            return False
        for prior in reversed(block[:index]):
            if tensor.value in assigned_in([prior]):
                return False
            if contains_node(prior, tensor):
                return True
        return False

    def _vmap_problem(self, stmts: Sequence[cst.CSTNode], params: Set[str]) -> Optional[str]:
        """Why the body would not compile under vmap in MindSpore 2.10, or None (see :class:`VmapCompileCheck`).
        The check reads a copy: the substituted body shares the loop's own nodes (``replace_nodes``), through
        which the value model would answer with the bindings that reach the loop, where the check has always
        read (and was measured with) the kinds joined over the whole function."""
        copies = [stmt.deep_clone() for stmt in stmts]
        self.refusal = VmapCompileCheck(self.context, self.values).check(copies, set(params), self.owner, 0)
        return self.refusal

    def _element_source(self, iterable: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, int]]:
        found = unstack_source(self.context, self.owner, iterable)
        if found is not None:
            tensor, axis = found
            return (tensor, axis) if axis >= 0 and self.values.kind(tensor) is Kind.TENSOR else None
        if self.values.kind(iterable) is Kind.TENSOR:
            return iterable, 0
        return None

    # -- the for-statement form ----------------------------------------------------------------------------------
    def _unbuilt(self, why: str) -> None:
        """Record why the body is not a shape the rewrite builds (``self.unbuilt``); the loop may still be
        dependent, so the rule words it as "if the iterations are independent". Returns None for ``return``."""
        if self.unbuilt is None and self.refusal is None:
            self.unbuilt = why
        return None

    def for_loop(self, loop: cst.For, trip: Optional[ShapeRef]) -> Optional[Fix]:
        if loop.orelse is not None or loop.asynchronous is not None:
            return self._unbuilt("has an `else` clause or is `async`")
        if not isinstance(loop.target, cst.Name):
            return self._unbuilt(f"unpacks its loop target `{code_of(loop.target)}`")
        block, index = statement_block(self.context, loop)
        if block is None or index is None or index + 1 >= len(block):
            return self._unbuilt("is the last statement of its block: nothing after it stacks the results")
        body = list(suite_statements(loop.body))
        grown = _accumulations(body)
        peeled = _first_term_peeled(body, loop.target.value)
        if not grown and peeled is not None:
            return self._unbuilt(f"sums into `{peeled}` with the first term set apart (`if {loop.target.value} == 0:`); "
                                 "the map-and-sum rewrite (unsafe) takes only `total = 0` then `total += term`")
        if not grown:
            return self._unbuilt("does not end in `acc.append(value)` or `acc += (value,)`")
        prefix = body[:len(body) - len(grown)]
        odd = next((stmt for stmt in prefix if not plain_assignment(stmt)), None)
        if odd is not None:
            return self._unbuilt(f"holds {_statement_kind(odd)}; the rewrite moves only plain assignments "
                                 "followed by the appends")
        accs = [acc for acc, _value, _kind in grown]
        if len(set(accs)) != len(accs):
            return self._unbuilt(f"appends to `{_first_repeat(accs)}` more than once per iteration")
        written = assigned_in(prefix)
        loop_var = loop.target.value
        if loop_var in written:
            return self._unbuilt(f"rebinds its loop variable `{loop_var}`")
        values = [value for _acc, value, _kind in grown]
        for acc in accs:
            if acc in written or any(acc in read_names(node) for node in list(prefix) + values):
                return self._unbuilt(f"reads or rebinds `{acc}` while it grows")
        inputs = first_reads(prefix + [cst.SimpleStatementLine(body=[cst.Expr(v)]) for v in values])
        if inputs & written:
            return self._unbuilt(f"reads `{sorted(inputs & written)[0]}` before assigning it (loop-carried)")
        if trip is None and unstack_source(self.context, self.owner, loop.iter) is None \
                and pieces_of(self.context, self.owner, loop.iter) is not None:
            return self._unbuilt(f"iterates the pieces of `{code_of(loop.iter)}`, which keep the split axis "
                                 "that vmap's lanes would drop")
        effect = EffectChecker(self.context, self.owner).reason(loop.body)
        if effect is not None:
            return self._unbuilt(f"is not provably free of effects: {effect}; a vmapped body must be pure")
        if binds_by_walrus(loop.body) or declared_nonlocal(self.context, loop, written | {loop_var}):
            # the moved body would bind these names in a new scope, not where later code reads them
            return self._unbuilt("binds a name with `:=`, `global` or `nonlocal`, which a moved body would not")
        # Each list: ``acc = []`` before the loop, untouched until the loop; stacked right after it, once.
        inits = []
        for acc, _value, kind in grown:
            init = _list_init(block, index, acc, kind)
            if init is None:
                empty = "[]" if kind == "list" else "()"
                return self._unbuilt(f"grows `{acc}`, which is not set to `{empty}` before the loop and left alone")
            inits.append(init)
        if len(grown) == 1:
            return self._single(loop, trip, block, index, prefix, written, grown[0], inits[0])
        return self._several(loop, trip, block, index, prefix, written, grown, inits)

    def _single(self, loop: cst.For, trip: Optional[ShapeRef], block, index: int, prefix, written: Set[str],
                grown: Tuple[str, cst.BaseExpression, str], init: cst.SimpleStatementLine) -> Optional[Fix]:
        """One list, stacked (or concatenated) by the statement right after the loop."""
        acc, value, _kind = grown
        stack_stmt = block[index + 1]
        stack_call = self._stack_use(stack_stmt, acc)
        if stack_call is None:
            return self._unbuilt(f"grows `{acc}`, but the next statement does not stack or concatenate it "
                                 "(once, with a literal axis)")
        call, axis, concatenated = stack_call
        merged = False
        if concatenated:  # ``ops.concat(rows, a)`` of ``row.unsqueeze(a)``: the rows stacked on ``a``
            row = unsqueezed_row(self.context, self.values, value, axis)
            merged = row is None  # else rows concatenated on their own axis a: stacked on a, then a and a+1 merged
            value = value if row is None else row
        loop_var = loop.target.value  # type: ignore[union-attr]
        if self._leaks(loop, set(written) | {loop_var}):
            return None
        if acc not in written_names(stack_stmt) and read_after(self.context, loop, {acc}, skip=1):
            return self._unbuilt(f"grows `{acc}`, which later code reads again after it is stacked")
        mapped_body = self._mapped_body(loop, trip, prefix, value, written)
        if mapped_body is None:
            return None
        mapped, new_prefix, new_value = mapped_body
        return self._emit(loop, init, stack_stmt, call, axis, acc, mapped, new_prefix, new_value, merged)

    def _several(self, loop: cst.For, trip: Optional[ShapeRef], block, index: int, prefix, written: Set[str],
                 grown: List[Tuple[str, cst.BaseExpression, str]], inits: List[cst.SimpleStatementLine]
                 ) -> Optional[Fix]:
        """Several lists (``a.append(u); b.append(v)``), each stacked by one of the statements right after the
        loop, each of them exactly ``name = ops.stack(acc, axis)`` (or a concat of unsqueezed rows): one vmap
        whose function returns ``(u, v)`` with one out_axis per list, unpacked into those names."""
        count = len(grown)
        if index + count >= len(block):
            return self._unbuilt(f"grows {count} lists, but fewer statements than that follow the loop")
        value_of = {acc: value for acc, value, _kind in grown}
        stacks = block[index + 1:index + 1 + count]
        order: List[Tuple[str, str, int, cst.BaseExpression]] = []  # (target, acc, axis, row)
        for stmt in stacks:
            found = self._stacked_into_name(stmt, value_of)
            if found is None:
                return self._unbuilt(f"grows {count} lists, but the {count} statements after the loop are not "
                                     "each `name = ops.stack(acc, axis)` of one of them")
            order.append(found)
        accs = [acc for _target, acc, _axis, _row in order]
        targets = [target for target, _acc, _axis, _row in order]
        if sorted(accs) != sorted(value_of) or len(set(targets)) != count:
            return self._unbuilt(f"grows {count} lists, but the statements after the loop do not stack each once")
        for position, stmt in enumerate(stacks):
            later = set().union(*(read_names(other) for other in stacks[position + 1:])) if position + 1 < count \
                else set()
            if targets[position] in later:
                return self._unbuilt(f"stacks into `{targets[position]}`, which a later stacking statement reads")
        loop_var = loop.target.value  # type: ignore[union-attr]
        if self._leaks(loop, set(written) | {loop_var}):
            return None
        unbound = set(accs) - set(targets)
        if unbound and read_after(self.context, loop, unbound, skip=count):
            return self._unbuilt("grows lists that later code reads again after they are stacked")
        rows = [row for _target, _acc, _axis, row in order]
        together = cst.Tuple(elements=[cst.Element(row) for row in rows], lpar=[], rpar=[])
        mapped_body = self._mapped_body(loop, trip, prefix, together, written)
        if mapped_body is None:
            return None
        mapped, new_prefix, new_value = mapped_body
        params = {m.param for m in mapped}
        for element, target in zip(new_value.elements, targets):  # type: ignore[attr-defined]
            if not _depends_on(new_prefix, element.value, params):
                return self._unbuilt(f"stacks into `{target}` values that do not depend on the slice")
        return self._emit_several(loop, inits, stacks, targets, [a for _t, _c, a, _r in order], mapped,
                                  new_prefix, new_value)

    def sum_loop(self, loop: cst.For, trip: Optional[ShapeRef]) -> Optional[Fix]:
        """``total = 0; for i in ...: <plain assignments>; total += term`` -> ``total = vmap(fn)(x).sum(axis=0)``.

        Unsafe: the terms are added in another order (a tree reduction instead of left to right), so float
        results may differ by rounding. ``total`` must start at a literal 0 right before the loop, with nothing
        between them mentioning it, and be read nowhere in the body but where it grows."""
        if loop.orelse is not None or loop.asynchronous is not None or not isinstance(loop.target, cst.Name):
            return self._unbuilt("has an `else` clause, is `async` or unpacks its target")
        if trip is not None and trip.tensor is None:
            return self._unbuilt(f"runs to `{cut(trip.origin, 40)}`, not one axis of a Tensor the body slices")
        block, index = statement_block(self.context, loop)
        body = list(suite_statements(loop.body))
        summed = _summed_term(body[-1]) if body else None
        if block is None or index is None or summed is None:
            return self._unbuilt("does not end in `total += term`")
        total, term = summed
        prefix = body[:-1]
        odd = next((stmt for stmt in prefix if not plain_assignment(stmt)), None)
        if odd is not None:
            return self._unbuilt(f"holds {_statement_kind(odd)}; the rewrite moves only plain assignments")
        written = assigned_in(prefix)
        loop_var = loop.target.value
        if loop_var in written or total in written or any(total in read_names(n) for n in list(prefix) + [term]):
            return self._unbuilt(f"reads or rebinds `{total}` other than where it grows")
        if first_reads(prefix + [cst.SimpleStatementLine(body=[cst.Expr(term)])]) & written:
            return self._unbuilt("reads a name before assigning it (loop-carried)")
        effect = EffectChecker(self.context, self.owner).reason(loop.body)
        if effect is not None:
            return self._unbuilt(f"is not provably free of effects: {effect}; a vmapped body must be pure")
        if binds_by_walrus(loop.body) or declared_nonlocal(self.context, loop, written | {loop_var, total}):
            return self._unbuilt("binds a name with `:=`, `global` or `nonlocal`, which a moved body would not")
        init = _zero_init(block, index, total)
        if init is None:
            return self._unbuilt(f"sums into `{total}`, which does not start at a literal 0 right before the loop")
        if self._leaks(loop, set(written) | {loop_var}):
            return None
        mapped_body = self._mapped_body(loop, trip, prefix, term, written)
        if mapped_body is None:
            return None
        mapped, new_prefix, new_term = mapped_body
        spelled = self._vmap_name()
        if spelled is None:
            return None
        vmap_name, imports = spelled
        params = [m.param for m in mapped]
        taken = read_names(self.function) | local_names(self.function)
        lines = list(init.leading_lines) + list(loop.leading_lines)
        if new_prefix:
            fn_name = fresh_name(self.context, f"_{total}_term", taken)
            function_expr: cst.BaseExpression = cst.Name(fn_name)
            statements: List[cst.BaseStatement] = [
                _function_def(fn_name, params, new_prefix, new_term).with_changes(leading_lines=lines)]
            lines = []
        else:
            function_expr, statements = _lambda(params, new_term), []
        vmap_call = _vmap_call(vmap_name, function_expr, mapped, 0)
        total_sum = cst.parse_expression("__terms__.sum(axis=0)").visit(_ReplaceName("__terms__", vmap_call))
        statements.append(cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(total))], value=total_sum)], leading_lines=lines))
        return Fix(UNSAFE, "compute the terms with vmap and add them with .sum(axis=0) (unsafe: the float sum is "
                           "added in another order, so it may differ by rounding)",
                   edits=((init, None), (loop, statements)), imports=imports)

    def _stacked_into_name(self, stmt: cst.BaseStatement, value_of: Dict[str, cst.BaseExpression]
                           ) -> Optional[Tuple[str, str, int, cst.BaseExpression]]:
        """(target, acc, axis, row) when ``stmt`` is exactly ``target = ops.stack(acc, axis)`` (or ``ops.concat`` of
        rows that are ``row.unsqueeze(axis)``) for one of the grown lists."""
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1):
            return None
        assign = stmt.body[0]
        target = assign.targets[0].target
        if not isinstance(target, cst.Name) or not isinstance(assign.value, cst.Call):
            return None
        for acc, value in value_of.items():
            used = self._stack_use(stmt, acc)
            if used is None or used[0] is not assign.value:
                continue
            call, axis, concatenated = used
            if not concatenated:
                return target.value, acc, axis, value
            row = unsqueezed_row(self.context, self.values, value, axis)
            return (target.value, acc, axis, row) if row is not None else None
        return None

    def _leaks(self, loop: cst.For, leaked: Set[str]) -> bool:
        """Does later code read a name the loop leaves behind (the index, a temporary)? Records why."""
        read = read_after(self.context, loop, leaked)
        if read:
            self._unbuilt(f"leaves `{sorted(read)[0]}` behind, and later code reads it")
        return bool(read)

    def _mapped_body(self, loop: cst.For, trip: Optional[ShapeRef], prefix, value: cst.BaseExpression,
                     written: Set[str]):
        """(mapped tensors, body, value) with every slice by the index replaced by a lane parameter; None (with a
        recorded reason) when the index is used otherwise, or the body cannot be compiled under vmap."""
        loop_var = loop.target.value  # type: ignore[union-attr]
        if trip is not None:
            if not self._trip_is_current(trip, loop.iter, loop):
                return self._unbuilt(f"runs to `{trip.origin}`, read before `{code_of(trip.tensor)}` is rebound")
            mapped = self._index_slices(prefix + [value], loop_var, trip, written, loop)
            if mapped is None:
                return self._unbuilt(f"uses `{loop_var}` other than to index one axis of Tensors it does not "
                                     f"reassign, among them `{code_of(trip.tensor)}`")
            taken = read_names(self.function) | local_names(self.function)
            for entry in mapped:
                entry.param = fresh_local(f"{_base_name(entry.expr)}_{loop_var}", taken)
                taken.add(entry.param)
        else:
            source = self._element_source(loop.iter)
            if source is None:
                return self._unbuilt(f"iterates `{code_of(loop.iter)}`, not known to be one Tensor or "
                                     "`ops.unstack` of one")
            mapped = [_Mapped(source[0], source[1], loop_var)]
        new_body = _substitute(prefix, value, mapped)
        if new_body is None:
            return self._unbuilt("slices tensors in a way the rewrite cannot substitute")
        new_prefix, new_value = new_body
        params = {m.param for m in mapped}
        if not _depends_on(new_prefix, new_value, params):
            return self._unbuilt("appends values that do not depend on the slice")
        if self._vmap_problem(list(new_prefix) + [cst.Expr(new_value)], params) is not None:
            return None
        return mapped, new_prefix, new_value

    def _stack_use(self, stmt: cst.BaseStatement, acc: str) -> Optional[Tuple[cst.Call, int, bool]]:
        """(call, axis, is_concat) for the one call in ``stmt`` that stacks or concatenates ``acc``."""
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None
        uses = [name for name in read_name_nodes(stmt) if name.value == acc]
        if len(uses) != 1:
            return None
        for call in find(stmt, cst.Call):
            args = call_name_args(call)
            if args and args[0].value is uses[0]:
                axis = stack_axis(self.context, self.owner, call, uses[0])
                if axis is not None:
                    return call, axis, False
                axis = concat_axis(self.context, call, uses[0])
                return (call, axis, True) if axis is not None else None
        return None

    def _emit(self, loop: cst.For, init: cst.SimpleStatementLine, stack_stmt: cst.SimpleStatementLine,
              call: cst.Call, axis: int, acc: str, mapped: List[_Mapped], prefix: List[cst.BaseStatement],
              value: cst.BaseExpression, merged: bool = False) -> Optional[Fix]:
        spelled = self._vmap_name()
        if spelled is None:
            return None
        vmap_name, imports = spelled
        flatten = self.context.spell("mindspore.ops.flatten") if merged else None
        if merged and flatten is None:
            return None
        adjacent_init = init is not None and _is_previous(loop, init, self.context)
        carried_lines = list(init.leading_lines) if adjacent_init else []
        edits: List[Tuple[cst.CSTNode, object]] = [(init, None)]
        if prefix:
            fn_name = fresh_name(self.context, f"_{acc}_item", read_names(self.function) | local_names(self.function))
            definition = _function_def(fn_name, [m.param for m in mapped], prefix, value)
            definition = definition.with_changes(leading_lines=carried_lines + list(loop.leading_lines))
            edits.append((loop, definition))
            function_expr: cst.BaseExpression = cst.Name(fn_name)
            moved_lines: List[cst.EmptyLine] = []
        else:
            function_expr = _lambda([m.param for m in mapped], value)
            edits.append((loop, None))
            moved_lines = carried_lines + list(loop.leading_lines)
        vmap_call = _vmap_call(vmap_name, function_expr, mapped, axis)
        if flatten is not None:
            vmap_call, imports = _merged(flatten[0], vmap_call, axis), tuple(imports) + tuple(flatten[1])
        new_stmt = replace_nodes(stack_stmt, {call: vmap_call})[0]
        new_stmt = new_stmt.with_changes(leading_lines=moved_lines + list(stack_stmt.leading_lines))
        edits.append((stack_stmt, new_stmt))
        return Fix(SAFE, "map the body over the axis with vmap", edits=tuple(edits), imports=imports)

    def _emit_several(self, loop: cst.For, inits: List[cst.SimpleStatementLine], stacks, targets: List[str],
                      axes: List[int], mapped: List[_Mapped], prefix: List[cst.BaseStatement],
                      value: cst.Tuple) -> Optional[Fix]:
        """The inits and the loop go; the first stacking statement becomes ``t1, t2 = vmap(fn, ..., out_axes=(a1,
        a2))(...)`` and the others go (the lists' comments move above the new function)."""
        spelled = self._vmap_name()
        if spelled is None:
            return None
        vmap_name, imports = spelled
        carried_lines = [line for init in inits for line in init.leading_lines]
        edits: List[Tuple[cst.CSTNode, object]] = [(init, None) for init in inits]
        params = [m.param for m in mapped]
        if prefix:
            taken = read_names(self.function) | local_names(self.function)
            fn_name = fresh_name(self.context, f"_{targets[0]}_item", taken)
            definition = _function_def(fn_name, params, prefix, value)
            edits.append((loop, definition.with_changes(leading_lines=carried_lines + list(loop.leading_lines))))
            function_expr: cst.BaseExpression = cst.Name(fn_name)
            moved_lines: List[cst.EmptyLine] = []
        else:
            function_expr = _lambda(params, value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
            edits.append((loop, None))
            moved_lines = carried_lines + list(loop.leading_lines)
        vmap_call = _vmap_call(vmap_name, function_expr, mapped, "(" + ", ".join(map(str, axes)) + ")")
        unpacked = cst.Tuple(elements=[cst.Element(cst.Name(t)) for t in targets], lpar=[], rpar=[])
        first = stacks[0]
        assign = cst.Assign(targets=[cst.AssignTarget(unpacked)], value=vmap_call)
        edits.append((first, first.with_changes(body=[assign], leading_lines=moved_lines + list(first.leading_lines))))
        edits.extend((stmt, None) for stmt in stacks[1:])
        return Fix(SAFE, "map the body over the axis with vmap", edits=tuple(edits), imports=imports)

    # -- the comprehension form ---------------------------------------------------------------------------------
    def comprehension(self, comp: Comprehension, stack_call: cst.Call, axis: int, trip: Optional[ShapeRef],
                      concatenated: bool = False) -> Optional[Fix]:
        """``concatenated``: ``stack_call`` concatenates on ``axis``, so the element must be ``row.unsqueeze(axis)``
        and ``row`` is what is mapped."""
        clause = comp.for_in
        element = comp.elt
        merged = False
        if concatenated:
            row = unsqueezed_row(self.context, self.values, element, axis)
            merged = row is None
            element = element if row is None else row
        if clause.inner_for_in is not None or clause.ifs or clause.asynchronous is not None:
            return self._unbuilt("has a second `for`, an `if` filter or `async`")
        if not isinstance(clause.target, cst.Name):
            return self._unbuilt(f"unpacks its target `{code_of(clause.target)}`")
        var = clause.target.value
        effect = EffectChecker(self.context, self.owner).reason(comp.elt)
        if effect is not None:
            return self._unbuilt(f"is not provably free of effects: {effect}; a vmapped body must be pure")
        if binds_by_walrus(comp):
            # ``y := ...`` in a comprehension binds y in the function; in a lambda it would not
            return self._unbuilt("binds a name with `:=`, which a lambda would not")
        if trip is not None:
            statement = enclosing_statement(self.context, comp)
            if statement is None or not self._trip_is_current(trip, clause.iter, statement):
                return self._unbuilt(f"runs to `{trip.origin}`, read before `{code_of(trip.tensor)}` is rebound")
            mapped = self._index_slices([element], var, trip, set(), statement)
            if mapped is None:
                return self._unbuilt(f"uses `{var}` other than to index one axis of Tensors, among them "
                                     f"`{code_of(trip.tensor)}`")
            taken = read_names(self.function) | local_names(self.function)
            for entry in mapped:
                entry.param = fresh_local(f"{_base_name(entry.expr)}_{var}", taken)
                taken.add(entry.param)
        else:
            source = self._element_source(clause.iter)
            if source is None:
                return self._unbuilt(f"iterates `{code_of(clause.iter)}`, not known to be one Tensor or "
                                     "`ops.unstack` of one")
            mapped = [_Mapped(source[0], source[1], var)]
        substituted = _substitute([], element, mapped)
        params = {m.param for m in mapped}
        if substituted is None or not _depends_on([], substituted[1], params):
            return self._unbuilt("computes elements that do not depend on the slice")
        if self._vmap_problem([cst.Expr(substituted[1])], params) is not None:
            return None
        spelled = self._vmap_name()
        if spelled is None:
            return None
        vmap_name, imports = spelled
        vmap_call = _vmap_call(vmap_name, _lambda([m.param for m in mapped], substituted[1]), mapped, axis)
        if merged:
            flatten = self.context.spell("mindspore.ops.flatten")
            if flatten is None:
                return None
            vmap_call, imports = _merged(flatten[0], vmap_call, axis), tuple(imports) + tuple(flatten[1])
        return Fix(SAFE, "map the expression over the axis with vmap", edits=((stack_call, vmap_call),),
                   imports=imports)

    def _vmap_name(self) -> Optional[Tuple[str, Tuple[ImportRequest, ...]]]:
        for qualified in ("mindspore.vmap", "mindspore.ops.vmap"):
            local = self.context.existing_reference(qualified)
            if local is not None:
                return local, ()
        spelled = self.context.spell("mindspore.vmap")
        if spelled is None:
            self._unbuilt("is in a file where ms-lint finds no safe spelling for `mindspore.vmap` (`vmap` and "
                          "`mindspore` are both used as names, or in comments and strings)")
        return spelled


def _accumulations(body: Sequence[cst.BaseStatement]) -> List[Tuple[str, cst.BaseExpression, str]]:
    """(name, value, "list" or "tuple") for the run of ``acc.append(value)`` / ``acc += (value,)`` statements that
    ends the body, in order (empty when the last statement is neither)."""
    found: List[Tuple[str, cst.BaseExpression, str]] = []
    for stmt in reversed(body):
        appended = _append_call(stmt)
        kind = "list"
        if appended is None:
            appended, kind = tuple_accumulation(stmt), "tuple"
        if appended is None:
            break
        found.append((appended[0], appended[1], kind))
    return found[::-1]


def _statement_kind(stmt: cst.BaseStatement) -> str:
    """A few words for a statement the rewrite does not move: ``a `for` loop``, ``an `if` ``, ``a call statement``."""
    words = {cst.For: "a `for` loop", cst.While: "a `while` loop", cst.If: "an `if`", cst.With: "a `with`",
             cst.Try: "a `try`"}
    for kind, said in words.items():
        if isinstance(stmt, kind):
            return said
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, (cst.Break, cst.Continue, cst.Return)):
            return f"a `{code_of(small).split()[0]}`"
        if isinstance(small, cst.Expr):
            return f"the statement `{cut(code_of(small), 40)}`"
        if isinstance(small, cst.Assign):
            return f"the assignment to `{cut(code_of(small.targets[0].target), 30)}`"
    return f"the statement `{cut(code_of(stmt).strip(), 40)}`"


def _summed_term(stmt: cst.BaseStatement) -> Optional[Tuple[str, cst.BaseExpression]]:
    """(total, term) for a statement that is exactly ``total += term`` or ``total = total + term``."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign) \
            and isinstance(small.target, cst.Name):
        return small.target.value, small.value
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        name = small.targets[0].target.value
        value = small.value
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) \
                and isinstance(value.left, cst.Name) and value.left.value == name and not parenthesized(value.left):
            return name, value.right
    return None


def _first_term_peeled(body: Sequence[cst.BaseStatement], index: str) -> Optional[str]:
    """``total`` when the body is only ``if i == 0: total = term  else: total = total + term`` (PDE-Net's weighted
    sum): a sum, but not in the ``total += term`` form the map-and-sum rewrite takes."""
    if len(body) != 1 or not isinstance(body[0], cst.If) or not isinstance(body[0].orelse, cst.Else):
        return None
    test = body[0].test
    if not (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == index
            and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal)
            and isinstance(test.comparisons[0].comparator, cst.Integer) and test.comparisons[0].comparator.value == "0"):
        return None
    first, rest = list(suite_statements(body[0].body)), list(suite_statements(body[0].orelse.body))
    summed = _summed_term(rest[0]) if len(rest) == 1 else None
    if summed is None or len(first) != 1 or summed[0] not in assigned_in(first):
        return None
    return summed[0]


def _zero_init(block: Sequence[cst.BaseStatement], index: int, total: str) -> Optional[cst.SimpleStatementLine]:
    """The ``total = 0`` (or ``0.0``) line before the loop, with nothing between it and the loop mentioning
    ``total``."""
    for position in range(index - 1, -1, -1):
        stmt = block[position]
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == total):
                zero = isinstance(small.value, (cst.Integer, cst.Float)) and not parenthesized(small.value) \
                    and float(small.value.value.replace("_", "")) == 0.0
                return stmt if zero else None
        if total in read_names(stmt) or total in _all_written(stmt):
            return None
    return None


def _first_repeat(names: List[str]) -> str:
    return next(name for position, name in enumerate(names) if name in names[:position])


def _append_call(stmt: cst.BaseStatement) -> Optional[Tuple[str, cst.BaseExpression]]:
    """(list name, appended value) for a statement that is exactly ``acc.append(value)``."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return None
    call = small.value
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name)):
        return None
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return func.value.value, call.args[0].value


def tuple_accumulation(stmt: cst.CSTNode) -> Optional[Tuple[str, cst.BaseExpression]]:
    """(tuple name, added value) for a statement that is exactly ``acc = acc + (value,)`` (or ``acc += (value,)``),
    the tuple form of ``acc.append(value)``; the value must not read ``acc``."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        acc = small.targets[0].target.value
        added = small.value
        if not (isinstance(added, cst.BinaryOperation) and isinstance(added.operator, cst.Add)
                and isinstance(added.left, cst.Name) and added.left.value == acc and not parenthesized(added.left)):
            return None
        added = added.right
    elif isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign) \
            and isinstance(small.target, cst.Name):
        acc, added = small.target.value, small.value
    else:
        return None
    if not (isinstance(added, cst.Tuple) and len(added.elements) == 1):
        return None
    element = added.elements[0]
    if not isinstance(element, cst.Element) or acc in read_names(element.value):
        return None
    return acc, element.value


def _list_init(block: Sequence[cst.BaseStatement], index: int, acc: str, collected: str = "list"
               ) -> Optional[cst.SimpleStatementLine]:
    """The ``acc = []`` (``acc = ()`` for a tuple) line before the loop, with nothing between it and the loop
    mentioning ``acc``."""
    for position in range(index - 1, -1, -1):
        stmt = block[position]
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == acc):
                kind = cst.List if collected == "list" else cst.Tuple
                empty = isinstance(small.value, kind) and not small.value.elements
                return stmt if empty else None
        if acc in read_names(stmt) or acc in _all_written(stmt):
            return None
    return None


def _all_written(stmt: cst.BaseStatement) -> Set[str]:
    return assigned_in([stmt])


def _is_previous(loop: cst.For, init: cst.SimpleStatementLine, context: ModuleContext) -> bool:
    block, index = statement_block(context, loop)
    return block is not None and index is not None and index > 0 and block[index - 1] is init


def _index_position(sub: cst.Subscript, index: str) -> Optional[int]:
    """k when ``sub`` is ``t[:, ..k.., index, rest...]`` (bare ``:`` before the index, no index in the rest)."""
    for position, element in enumerate(sub.slice):
        inner = element.slice
        if isinstance(inner, cst.Index) and isinstance(inner.value, cst.Name) and inner.value.value == index:
            if inner.star is not None:
                return None
            before = sub.slice[:position]
            if all(isinstance(e.slice, cst.Slice) and e.slice.lower is None and e.slice.upper is None
                   and e.slice.step is None for e in before):
                return position
            return None
    return None


def _base_name(expr: cst.BaseExpression) -> str:
    return expr.value if isinstance(expr, cst.Name) else expr.attr.value  # type: ignore[union-attr]


def _substitute(prefix: List[cst.BaseStatement], value: cst.BaseExpression, mapped: List[_Mapped]):
    """The body with every ``t[..., i, rest]`` replaced by the lane parameter (``t_i`` or ``t_i[rest]``)."""
    replacements: Dict[cst.CSTNode, cst.BaseExpression] = {}
    for entry in mapped:
        for sub in entry.slices:
            rest = list(sub.slice[:entry.axis]) + list(sub.slice[entry.axis + 1:])
            if all(_is_full_slice(e) for e in rest):
                replacements[sub] = cst.Name(entry.param)
            else:
                elements = [e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in rest]
                replacements[sub] = cst.Subscript(value=cst.Name(entry.param), slice=elements)
    done: Set[cst.CSTNode] = set()
    new_prefix = []
    for stmt in prefix:
        new_stmt, replaced = replace_nodes(stmt, replacements)
        new_prefix.append(new_stmt)
        done |= replaced
    new_value, replaced = replace_nodes(value, replacements)
    if len(done | replaced) != len(replacements):
        return None
    return new_prefix, new_value


def _is_full_slice(element: cst.SubscriptElement) -> bool:
    inner = element.slice
    return isinstance(inner, cst.Slice) and inner.lower is None and inner.upper is None and inner.step is None


def _depends_on(prefix: List[cst.BaseStatement], value: cst.BaseExpression, params: Set[str]) -> bool:
    """Does the appended value depend on a lane parameter (else vmap has nothing to map)?"""
    tainted = set(params)
    for stmt in prefix:
        if read_names(stmt) & tainted:
            tainted.update(written_names(stmt))
    return bool(read_names(value) & tainted)


def _lambda(params: List[str], body: cst.BaseExpression) -> cst.Lambda:
    return cst.Lambda(
        params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
        body=body,
    )


def _function_def(name: str, params: List[str], prefix: List[cst.BaseStatement], value: cst.BaseExpression
                  ) -> cst.FunctionDef:
    body = list(prefix) + [cst.SimpleStatementLine(body=[cst.Return(value=value)])]
    return cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
        body=cst.IndentedBlock(body=body),
    )


def _vmap_call(vmap_name: str, function: cst.BaseExpression, mapped: List[_Mapped], out_axis: Union[int, str]
               ) -> cst.Call:
    """``vmap(function, in_axes=..., out_axes=...)(*mapped)``, written ``f(a, k=v)``. Built from nodes (the mapped
    expressions are the loop's own), not by parsing the text: the language server builds every fix again at each
    edit."""
    if len(mapped) == 1:
        in_axes = str(mapped[0].axis)
    else:
        in_axes = "(" + ", ".join(str(m.axis) for m in mapped) + ")"
    transform = cst.Call(_fixed_expression(vmap_name), [
        cst.Arg(function, comma=_comma()),
        cst.Arg(_fixed_expression(in_axes), keyword=cst.Name("in_axes"), equal=_keyword_equal(), comma=_comma()),
        cst.Arg(_fixed_expression(str(out_axis)), keyword=cst.Name("out_axes"), equal=_keyword_equal())])
    last = len(mapped) - 1
    return cst.Call(transform, [
        cst.Arg(_as_argument(m.expr), comma=_comma() if number < last else cst.MaybeSentinel.DEFAULT)
        for number, m in enumerate(mapped)])


def _comma() -> cst.Comma:
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _keyword_equal() -> cst.AssignEqual:
    return cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _as_argument(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` as one argument among others: a bare generator or ``yield`` needs its own parentheses there."""
    if isinstance(expr, (cst.GeneratorExp, cst.Yield)) and not expr.lpar:
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


@functools.lru_cache(maxsize=512)
def _parsed_once(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _fixed_expression(code: str) -> cst.BaseExpression:
    """``code`` (a name as the module spells it, an axis) parsed: once per text, each caller getting its own copy
    of the nodes."""
    return _parsed_once(code).deep_clone()


def _merged(flatten_name: str, vmap_call: cst.Call, axis: int) -> cst.Call:
    """``ops.concat(rows, a)`` of rows without a new axis: the vmap stacks them on ``a`` (row ``i`` at index ``i``
    of axis ``a``, its own axis ``a`` moved to ``a + 1``); merging axes ``a`` and ``a + 1`` (C order) puts row ``i``'s
    element ``j`` at ``i * k + j``, where the concat puts it."""
    template = cst.parse_expression(f"{flatten_name}(__vmapped__, start_dim={axis}, end_dim={axis + 1})")
    return template.visit(_ReplaceName("__vmapped__", vmap_call))


class _ReplaceName(cst.CSTTransformer):
    def __init__(self, name: str, new: cst.BaseExpression):
        super().__init__()
        self.name, self.new = name, new

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name):
        return self.new if original_node.value == self.name else updated_node
