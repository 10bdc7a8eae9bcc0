"""MSL101 loop-over-tensor-axis: a loop in graph code whose trip count is a tensor's size along an axis.

Graph mode unrolls every Python loop: ``for i in range(x.shape[0])`` compiles one copy of the body per row, so
compile time grows with the batch (measured on MindSpore 2.10 CPU: 10.0 s for 200 rows; 0.16 s as ``vmap``).
Flagged: ``for`` loops and comprehensions over ``range(<shape-derived int>)``, over a Tensor itself or over
``ops.unstack(x)``; ``while`` loops whose Python-int counter runs up to a shape-derived bound. Not flagged:
``range(x.ndim)``/``range(len(x.shape))`` (the rank, not an axis), loops over cells, config lists and tuples of
tensors (MSL102), bodies that build no graph nodes, and loops inside ``@constexpr`` helpers.

The fix (``ms.vmap``) is offered only for independent iterations stacked into one tensor (or into several, one
list each); see :mod:`ms_lint.rewrites.vmap` for the exact shape. Loops that only add per-slice terms into a total
starting at 0 get the unsafe vmap + ``.sum(axis=0)`` rewrite (another order of float additions). Other
loop-carried loops get the message about ``ForiLoop``, and those a real ``while`` can run get the unsafe
Tensor-counter rewrite (:mod:`ms_lint.rewrites.tensor_counter`); those that grow one list stacked on axis 0 right
after (RNN steps) get the unsafe peeled-buffer rewrite (:mod:`ms_lint.rewrites.peeled_buffer`). Without a fix, the
detail says why after "no automatic rewrite:".
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple, Union

import libcst as cst

from ms_lint.cstutil import call_name_args, cut, suite_statements, target_names
from ms_lint.analysis.dataflow import assigned_in, first_reads, inside_compile_time_helper, read_name_nodes
from ms_lint.analysis.effects import does_graph_work
from ms_lint.analysis.narrowing import narrowed_names
from ms_lint.analysis.shapes import (ShapeRef, ShapeResolver, collecting_caller_evidence, parents_in,
                                     passed_a_sequence, surely_tensor, tensor_by_callers, trusting_docstrings,
                                     while_counter)
from ms_lint.analysis.values import Kind
from ms_lint.cstutil import code_of
from ms_lint.rewrites.slice_writes import slice_write_fix
from ms_lint.rewrites.peeled_buffer import MESSAGE as PEELED_MESSAGE, PeeledBufferBuilder
from ms_lint.analysis.pieces import even_pieces_of, pieces_through, rows_through
from ms_lint.rewrites.vmap import VmapBuilder, concat_axis, stack_axis, tuple_accumulation, unstack_source
from ms_lint.rules.base import ComprehensionHooks, Invalid, Rule
from ms_lint.walk import find, run_visitor

Comprehension = Union[cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp]

VMAP_FACT = ("one compiled copy instead of one per slice (measured on MindSpore 2.10 CPU: 61x faster first call "
             "for 200 rows, 10.0 s -> 0.16 s)")
PEELED_FACT = "a 32-step ConvGRU compiled in 836 ms instead of 2.97 s, 20.7 ms instead of 17 ms per call"
CARRIED_CURE = ("each iteration reads {names} from the previous one, so `vmap` does not apply; a `while` loop "
                "with a Tensor counter or `ops.ForiLoop(..., unroll=False)` compiles the body once but runs "
                "5-13x slower per call (MindSpore 2.10 CPU): it trades compile time for run time")


class LoopOverTensorAxis(ComprehensionHooks, Rule):
    code = "MSL101"
    name = "loop-over-tensor-axis"
    summary = "Loop over a tensor axis in graph code: compiled once per slice; use vmap"
    fix_applicability = "safe"

    VALID = [
        # The rank, not an axis: a handful of iterations over dimensions.
        """
        import mindspore as ms


        @ms.jit
        def transpose_perm(x):
            perm = ()
            for i in range(x.ndim):
                perm = perm + (x.ndim - 1 - i,)
            return x.transpose(perm)
        """,
        # Loops over cells and small literal tuples are not loops over a tensor axis.
        """
        from mindspore import nn


        class Tower(nn.Cell):
            def __init__(self):
                super().__init__()
                self.blocks = nn.CellList([nn.Dense(8, 8) for _ in range(4)])

            def construct(self, x):
                for block in self.blocks:
                    x = block(x)
                for scale in (1.0, 0.5, 0.25):
                    x = x * scale
                return x
        """,
        # Not graph code: a plain Python function may loop however it likes.
        """
        import mindspore as ms


        def rows_in_python(x):
            return [x[i] for i in range(x.shape[0])]
        """,
        # A @constexpr helper runs in Python at compile time.
        """
        import mindspore as ms
        from mindspore import ops


        @ops.constexpr
        def axis_sizes(shape):
            return tuple(shape[i] for i in range(len(shape)))


        @ms.jit
        def total(x):
            return x.reshape(axis_sizes(x.shape))
        """,
        # A list built per cell of a CellList is no list of rows of a Tensor.
        """
        import mindspore as ms
        from mindspore import nn


        class Heads(nn.Cell):
            def __init__(self):
                super().__init__()
                self.heads = nn.CellList([nn.Dense(8, 8) for _ in range(3)])

            def construct(self, x: ms.Tensor):
                outs = [head(x) for head in self.heads]
                for out in outs:
                    x = x + out
                return x
        """,
    ]

    INVALID = [
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def row_softmax(x):
                out = []
                for i in range(x.shape[0]):
                    out.append(ops.softmax(x[i], axis=-1))
                return ops.stack(out)
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def row_softmax(x):
                return ms.vmap(lambda x_i: ops.softmax(x_i, axis=-1), in_axes=0, out_axes=0)(x)
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def per_sample_loss(logits, labels, weight):
                n = logits.shape[0]
                losses = []
                for i in range(n):
                    logp = ops.log_softmax(logits[i], axis=-1)
                    nll = -(logp * labels[i]).sum()
                    losses.append(nll * weight)
                losses = ops.stack(losses, axis=0)
                return losses.mean()
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def per_sample_loss(logits, labels, weight):
                n = logits.shape[0]
                def _losses_item(logits_i, labels_i):
                    logp = ops.log_softmax(logits_i, axis=-1)
                    nll = -(logp * labels_i).sum()
                    return nll * weight
                losses = ms.vmap(_losses_item, in_axes=(0, 0), out_axes=0)(logits, labels)
                return losses.mean()
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def column_norms(x):
                return ops.stack([ops.norm(x[:, j]) for j in range(x.shape[1])])
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def column_norms(x):
                return ms.vmap(lambda x_j: ops.norm(x_j), in_axes=1, out_axes=0)(x)
            """,
        ),
        # Loop-carried: an RNN over time steps. Flagged, no vmap (the message names ForiLoop/while).
        Invalid(
            """
            from mindspore import nn, ops


            class SimpleRNN(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.cell = nn.RNNCell(16, 32)

                def construct(self, x, h):
                    outputs = []
                    for t in range(x.shape[1]):
                        h = self.cell(x[:, t], h)
                        outputs.append(h)
                    return ops.stack(outputs, axis=1), h
            """
        ),
        # Rows gathered into a tuple (``t = t + (row,)``) and concatenated: each row gets a new length-1 axis 0,
        # so the concat is a stack on axis 0 and the iterations are independent.
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def triplet_margin(anchor, positive, negative):
                rows = ()
                for i in range(anchor.shape[0]):
                    d_pos = ((anchor[i] - positive[i]) ** 2).sum()
                    d_neg = ((anchor[i] - negative[i]) ** 2).sum()
                    rows = rows + (ops.relu(d_pos - d_neg + 0.2).unsqueeze(0),)
                return ops.concat(rows)
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def triplet_margin(anchor, positive, negative):
                def _rows_item(anchor_i, positive_i, negative_i):
                    d_pos = ((anchor_i - positive_i) ** 2).sum()
                    d_neg = ((anchor_i - negative_i) ** 2).sum()
                    return ops.relu(d_pos - d_neg + 0.2)
                return ms.vmap(_rows_item, in_axes=(0, 0, 0), out_axes=0)(anchor, positive, negative)
            """,
        ),
        # Loop-carried with a body a real loop takes (only ``x[step]`` reads and writes, nothing grown): the
        # counter becomes a Tensor, so the loop compiles once (unsafe: slower per call).
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def discounted_returns(reward, value):
                returns = ops.zeros_like(reward)
                step = reward.shape[0] - 1
                while step >= 0:
                    value = reward[step] + 0.9 * value
                    returns[step] = value
                    step -= 1
                return returns
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def discounted_returns(reward, value):
                returns = ops.zeros_like(reward)
                step = ms.Tensor(reward.shape[0] - 1, ms.int32)
                while step >= 0:
                    value = reward[step] + 0.9 * value
                    returns[step] = value
                    step = step - 1
                return returns
            """,
            unsafe=True,
        ),
        # A loop that only writes one slice per row of one tensor: one slice assignment (safe).
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def mask_tail(scores):
                mask = ops.ones_like(scores)
                for i in range(mask.shape[0]):
                    mask[i, :, 3:] = 0
                return scores * mask
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def mask_tail(scores):
                mask = ops.ones_like(scores)
                mask[:, :, 3:] = 0
                return scores * mask
            """,
        ),
        # Several lists grown in one body, each stacked right after the loop: one vmap whose function returns a
        # tuple, one out_axes entry per list.
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def mean_and_spread(x):
                means = []
                spreads = []
                for i in range(x.shape[0]):
                    centered = x[i] - x[i].mean()
                    means.append(x[i].mean())
                    spreads.append((centered * centered).mean())
                means = ops.stack(means)
                spreads = ops.stack(spreads)
                return means, spreads
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def mean_and_spread(x):
                def _means_item(x_i):
                    centered = x_i - x_i.mean()
                    return x_i.mean(), (centered * centered).mean()
                means, spreads = ms.vmap(_means_item, in_axes=0, out_axes=(0, 0))(x)
                return means, spreads
            """,
        ),
        # A loop that only adds one per-slice term into a total starting at 0: the terms by one vmap, added with
        # ``.sum(axis=0)``. Unsafe: the float additions happen in another order (results may differ by rounding).
        Invalid(
            """
            import mindspore as ms


            @ms.jit
            def total_variation_rows(x):
                total = 0
                for i in range(x.shape[0]):
                    d = x[i, 1:] - x[i, :-1]
                    total += (d * d).sum()
                return total
            """,
            fixed="""
            import mindspore as ms


            @ms.jit
            def total_variation_rows(x):
                def _total_term(x_i):
                    d = x_i[1:] - x_i[:-1]
                    return (d * d).sum()
                total = ms.vmap(_total_term, in_axes=0, out_axes=0)(x).sum(axis=0)
                return total
            """,
            unsafe=True,
        ),
        # Loop-carried steps that grow a list stacked on axis 0 (RNN, ConvGRU): the first step runs before the
        # loop, the stack becomes a buffer allocated from its row, the other steps a real `while` (unsafe).
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def elman_steps(x, h, w):
                outputs = []
                for t in range(x.shape[0]):
                    h = ops.tanh(x[t] + ops.matmul(h, w))
                    outputs.append(h)
                return ops.stack(outputs), h
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def elman_steps(x, h, w):
                h = ops.tanh(x[0] + ops.matmul(h, w))
                outputs = ops.zeros((x.shape[0],) + h.shape, h.dtype)
                outputs[0] = h
                t = ms.Tensor(1, ms.int32)
                while t < x.shape[0]:
                    h = ops.tanh(x[t] + ops.matmul(h, w))
                    outputs[t] = h
                    t = t + 1
                return outputs, h
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class LengthRegulator(nn.Cell):
                def expand(self, x, duration):
                    out = ()
                    for frames, times in zip(x, duration):
                        out += (ops.repeat_elements(frames, 2, 0) * times,)
                    return out

                def construct(self, x, duration):
                    return self.expand(x, duration)


            class VarianceAdaptor(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.regulator = LengthRegulator()

                def construct(self, h, log_duration):
                    duration = ops.round(ops.exp(log_duration))
                    return self.regulator(h, duration)
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class Masks(nn.Cell):
                def construct(self, input_ids: ms.Tensor, mask: ms.Tensor):
                    lengths = [row.sum() for row in input_ids]
                    for i, n in enumerate(lengths):
                        mask[i, :n] = 1
                    return mask
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class MaskedAttention(nn.Cell):
                def construct(self, logits, valid_masks):
                    out = ()
                    for logit, mask in zip(logits, valid_masks):
                        out += (ops.select(mask, logit, ops.zeros_like(logit)),)
                    return out


            class Decoder(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.attention = MaskedAttention()

                def decode(self, logits, valid_masks):
                    \"\"\"Apply the attention.

                    Args:
                        logits (Tensor): attention logits, (batch, length).
                        valid_masks (`mindspore.Tensor` of shape `(batch, length)`): valid positions.
                    \"\"\"
                    return self.attention(logits, valid_masks)

                def construct(self, logits, valid_masks):
                    return self.decode(logits, valid_masks)
            """,
        ),
        Invalid(
            """
            import numpy as np
            import mindspore as ms
            from mindspore import nn, ops


            def assign(rois, gts):
                picked = []
                for i in range(len(rois)):
                    picked.append(ops.sort(rois[i] * gts[i])[0])
                return ops.stack(picked)


            class Assigner(nn.Cell):
                def construct(self, rois, gts):
                    return assign(rois, gts)


            if __name__ == "__main__":
                net = Assigner()
                rois = ms.Tensor(np.ones((2, 100, 4), np.float32))
                out = net(rois, rois)
            """,
        ),
    ]

    def __init__(self, context):
        super().__init__(context)
        self._resolvers: dict = {}
        self._sum_fixes: dict = {}  # id(loop) -> (the map-and-sum fix or None, why not)
        self._by_callers = None  # the call that makes the iterable a Tensor (``tensor_by_callers``), per loop
        self._named_pieces = None  # (name, the Tensor it holds the pieces of) (``pieces_through``), per loop
        self._named_rows = None  # (name, the Tensor it holds one item per row of) (``rows_through``), per loop
        self._documented = None  # the name only a docstring makes a Tensor (``trusting_docstrings``), per loop

    def _resolver(self) -> ShapeResolver:
        assert self.function is not None
        if self.function not in self._resolvers:
            self._resolvers[self.function] = ShapeResolver(self.context, self.function, self.values)
        return self._resolvers[self.function]

    # -- for loops ---------------------------------------------------------------------------------------------
    def visit_For(self, node: cst.For) -> None:
        if inside_compile_time_helper(self.context, node, self.function):
            return
        what = self._iteration(node.iter, node.target)
        if what is None or not does_graph_work(node.body, self.values) or _calls_by_index(node):
            return
        if self._named_pieces is not None and _branches_on_index(node):
            return  # ``if i == 0: q = self.q(piece)``: other code for each piece, a structure, not a map
        description, trip = what
        carried, sums = _carried(node.body, set(target_names(node.target)))
        if self._named_rows is not None:
            self.report(node, f"{self._rows_short_what()}: unrolled per slice; {self._rows_cure(short=True)}",
                        fix=None, detail=f"{description}: MindSpore unrolls it, compiling one copy of the body per "
                                         f"row; {self._rows_cure(short=False)}; {self._no_fix_note()}")
            return
        if self._by_callers is not None or self._named_pieces is not None or self._documented is not None:
            cure = _cure(carried, sums) if carried else (
                f"if the iterations are independent, map the body over the axis with `ms.vmap`, {VMAP_FACT}")
            short = _short_cure(carried, sums, False, builder_refused=False)
            self.report(node, f"{_short_what(description)}: unrolled per slice; {short}", fix=None,
                        detail=f"{description}: MindSpore unrolls it, compiling one copy of the body per slice; "
                               f"{cure}; {self._no_fix_note()}")
            return
        fix = None
        by_counter = False
        written_slices = slice_write_fix(self.context, self.values, node) if carried else None
        if written_slices is not None:
            fix = written_slices
            carried = set()
            cure = ("the loop only writes slices of one tensor: one slice assignment writes them all, one graph "
                    "node instead of one per slice")
        elif carried and carried == sums and len(sums) == 1 and self._sum_fix(node, trip) is not None:
            fix = self._sum_fix(node, trip)
            cure = _cure(carried, sums) + ("; the fix (unsafe) does exactly that: the float sum is added in another "
                                           "order, so it may differ by rounding")
        elif carried:
            counted = PeeledBufferBuilder(self.context, self.function, self.values)
            fix = counted.for_loop(node)
            by_counter = fix is not None
            why_no_sum = self._sum_refusal(node) if carried == sums else None
            if fix is None and why_no_sum:  # a sum: why no map-and-sum first, then why no Tensor counter
                cure = _cure(carried, sums) + f"; no automatic rewrite: the body {why_no_sum}"
                if counted.refusal:
                    cure += f"; nor a Tensor counter: {counted.refusal}"
            else:
                cure = _cure(carried, sums) + _counter_note(fix, counted.refusal)
        else:
            builder = VmapBuilder(self.context, self.function, self.values)
            if trip is None or trip.tensor is not None:
                fix = builder.for_loop(node, trip)
            else:
                fix = None
                builder.unbuilt = (f"runs to `{_origin(trip.origin)}`, which the rewrite cannot tie to one Tensor the "
                                   "body slices by the index")
            if fix is not None:
                cure = f"the iterations are independent: `ms.vmap` maps the body over the axis, {VMAP_FACT}"
            elif builder.refusal:
                cure = f"the iterations look independent; no automatic rewrite: the body {builder.refusal}"
            else:
                cure = (f"if the iterations are independent, map the body over the axis with `ms.vmap`, {VMAP_FACT}"
                        "; otherwise a `while` loop with a Tensor counter or `ops.ForiLoop(..., unroll=False)` "
                        "compiles once but runs slower per call")
                if builder.unbuilt:
                    cure += f"; no automatic rewrite: the body {builder.unbuilt}"
        if written_slices is not None:
            short = "write the slices with one slice assignment"
        else:
            short = _short_cure(carried, sums, fix is not None,
                                builder_refused=not carried and bool(builder.refusal),
                                counted=by_counter)
        self.report(node, f"{_short_what(description)}: unrolled per slice; {short}", fix=fix,
                    detail=f"{description}: MindSpore unrolls it, compiling one copy of the body per slice; {cure}")

    def _sum_fix(self, node: cst.For, trip: Optional[ShapeRef]):
        """The unsafe vmap + ``.sum(axis=0)`` fix of a loop that only sums per-slice terms (memoized per loop, with
        the builder's reason when there is none)."""
        if id(node) not in self._sum_fixes:
            builder = VmapBuilder(self.context, self.function, self.values)
            self._sum_fixes[id(node)] = (builder.sum_loop(node, trip), builder.refusal or builder.unbuilt)
        return self._sum_fixes[id(node)][0]

    def _sum_refusal(self, node: cst.For) -> Optional[str]:
        """Why the vmap + sum fix was not built for ``node`` (after :meth:`_sum_fix`), or None."""
        found = self._sum_fixes.get(id(node))
        return found[1] if found else None

    def _iteration(self, iterable: cst.BaseExpression, target: cst.BaseExpression):
        """(description, ShapeRef or None) when the loop runs over a tensor axis; ``_by_callers`` is the call
        whose argument makes the iterable a Tensor when only a caller says so (``tensor_by_callers``)."""
        self._by_callers = None
        self._named_pieces = None
        self._named_rows = None
        self._documented = None
        resolver = self._resolver()
        if _is_builtin_call(iterable, "range"):
            args = call_name_args(iterable)  # type: ignore[arg-type]
            if not 1 <= len(args) <= 3 or len(args) != len(iterable.args):  # type: ignore[attr-defined]
                return None
            bounds = [args[0].value] if len(args) == 1 else [args[1].value, args[0].value]  # stop, then start
            shape = next((found for found in map(resolver.shape_int, bounds) if found is not None), None)
            if shape is None:  # last resort: ``len(rois)`` of a parameter only a caller shows to be one Tensor
                with collecting_caller_evidence() as sites:
                    shape = next((found for found in map(resolver.shape_int, bounds) if found is not None), None)
                if shape is not None and sites:
                    self._by_callers = sites[0]
                else:
                    shape = None
            if shape is None or self._reads_narrowed(iterable, bounds):
                return None  # (``range(len(mask))`` under ``if isinstance(mask, list):`` counts list items)
            exact = shape if len(args) == 1 and shape.tensor is not None and isinstance(target, cst.Name) \
                else ShapeRef(shape.origin)
            return f"loop trip count `{shape.origin}` comes from a Tensor's shape", exact
        if _is_builtin_call(iterable, "enumerate") or _is_builtin_call(iterable, "zip"):
            zipped = [arg.value for arg in call_name_args(iterable)]  # type: ignore[arg-type]
            if any(self.values.kind(value) is Kind.CELL_SEQ for value in zipped):
                return None  # ``zip(features, self.heads)``: one cell per step, a layer stack (as ``seq[i](x)``)
            if self._reads_narrowed(iterable, [value for value in zipped if isinstance(value, cst.Name)]):
                return None  # ``zip(masks, enc)`` with ``masks`` a Python list there: as many steps as it has
            for value in zipped:
                if self._tensor_iterable(value):
                    if self._named_pieces is not None:
                        return f"loop iterates the pieces in `{code_of(value)}` one by one", None
                    if self._named_rows is not None:
                        return self._rows_description(), None
                    return f"loop iterates Tensor `{code_of(value)}` row by row", ShapeRef(code_of(value))
            return None
        if self._tensor_iterable(iterable):
            if self._named_rows is not None:
                return self._rows_description(), None
            return f"loop iterates `{code_of(iterable)}` slice by slice", None
        return None

    def _rows_cure(self, short: bool) -> str:
        """The cure for a walk over a list with one item per row (``rows_through``): a Python list takes neither a
        Tensor counter nor ``ms.vmap``; the work must become Tensor ops over the Tensor the list came from."""
        _name, source = self._named_rows
        tensor = cut(code_of(source), 24 if short else 40)
        if short:
            return f"compute it with Tensor ops over `{tensor}`"
        return (f"a Python list takes neither a Tensor counter nor `ms.vmap`: compute its items and this work as "
                f"Tensor ops over `{tensor}` (a mask from comparing `ops.arange` with a Tensor of the items, a "
                "gather), or stack the items into one Tensor and map over it")

    def _rows_description(self) -> str:
        name, source = self._named_rows
        return f"loop iterates `{code_of(name)}`, one item per row of `{cut(code_of(source), 40)}`"

    def _rows_short_what(self) -> str:
        """The one-line form of ``_rows_description`` (as ``_short_what`` gives the others')."""
        name, source = self._named_rows
        return f"loop over `{cut(code_of(name), 24)}` (one per row of `{cut(code_of(source), 24)}`)"

    def _tensor_iterable(self, expr: cst.BaseExpression) -> bool:
        """A Tensor (or ``ops.unstack(x)``, ``self.split(x)``: a Tensor's pieces) iterated directly; see
        ``surely_tensor`` for the evidence needed."""
        owner = self.context.scope.owner_of.get(self.function)
        found = (unstack_source(self.context, owner, expr) is not None
                 or even_pieces_of(self.context, owner, expr, self._resolver().bindings()) is not None
                 or surely_tensor(self._resolver(), expr, self.function))
        if not found and type(expr) is cst.Name:
            source = pieces_through(self.context, owner, expr, self._resolver().bindings(), self.values.parameters)
            self._named_pieces = (expr, source) if source is not None else None
            found = source is not None
        if not found:
            self._by_callers = tensor_by_callers(self._resolver(), expr, self.function)
            found = self._by_callers is not None
        if not found and type(expr) is cst.Name:
            source = rows_through(expr, self.function, self._resolver().bindings(), self.values.parameters,
                                  self._rows_source)
            self._named_rows = (expr, source) if source is not None else None
            found = source is not None
        if not found and type(expr) is cst.Name:
            found = self._documented_tensor(expr)
        if found and type(expr) is cst.Name and (self._comprehension_target(expr)
                                                 or self._reads_narrowed(expr, [expr])):
            self._by_callers = self._named_pieces = self._named_rows = self._documented = None
            return False  # a comprehension's own target, or a name an ``isinstance(x, list)`` test holds true for
        return found

    def _documented_tensor(self, expr: cst.Name) -> bool:
        """The same evidence with parameters' docstring types taken as annotations (``valid_width_masks
        (Tensor): ...`` in the docstring of the caller that passes it on): found that way, the loop is reported
        without a fix, since a docstring is not checked against the code. Not when a call of this function hands
        the parameter a sequence."""
        if self.values.kind(expr) in (Kind.TENSOR_SEQ, Kind.CELL_SEQ):
            return False  # the value model reads a sequence here
        if expr.value in self.values.parameters and passed_a_sequence(self.context, self.function, expr.value):
            return False
        with trusting_docstrings():
            if surely_tensor(self._resolver(), expr, self.function):
                self._documented = expr
                return True
            site = tensor_by_callers(self._resolver(), expr, self.function)
        if site is None:
            return False
        self._by_callers, self._documented = site, expr
        return True

    def _rows_source(self, expr: cst.BaseExpression) -> bool:
        """What a comprehension that ``rows_through`` follows must iterate: one Tensor, by the evidence
        ``_tensor_iterable`` asks before it reports a comprehension over it (a list built from a split's pieces
        is not followed: ``test_a_list_built_from_the_pieces_is_not_taken_for_them``)."""
        resolver = self._resolver()
        return (surely_tensor(resolver, expr, self.function)
                or tensor_by_callers(resolver, expr, self.function) is not None) and not self._reads_narrowed(
            expr, [expr])  # (``if isinstance(ids, ms.Tensor): return ...`` before it: a list there)

    def _reads_narrowed(self, at: cst.CSTNode, parts: List[cst.BaseExpression]) -> bool:
        """``parts`` read a name that an ``isinstance`` or ``type`` test proves a Python value where ``at`` is
        evaluated (``narrowing.narrowed_names``)."""
        names = {name.value for part in parts for name in
                 ([part] if isinstance(part, cst.Name) else read_name_nodes(part))}
        return bool(names) and bool(names & narrowed_names(self.context, at, self.function, self._parents().get))

    def _comprehension_target(self, name: cst.Name) -> bool:
        """``name`` is read inside a comprehension that binds it as a target (``[... for s in scales] for scales
        in self.levels``): in the element, a condition or a later clause, not in the clause's own iterable."""
        parents = self._parents()
        child, node = name, parents.get(name)
        while node is not None and node is not self.function:
            if isinstance(node, cst.CompFor) and child is not node.iter and name.value in target_names(node.target):
                return True
            if isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)) \
                    and child is not node.for_in:
                clause: Optional[cst.CompFor] = node.for_in
                while clause is not None:
                    if name.value in target_names(clause.target):
                        return True
                    clause = clause.inner_for_in
            child, node = node, parents.get(node)
        return False

    def _parents(self) -> Dict[cst.CSTNode, cst.CSTNode]:
        """Each node's parent in the current function (``context.parent`` may not hold a comprehension's yet)."""
        assert self.function is not None
        return parents_in(self.function)

    def _no_fix_note(self) -> str:
        """Why a loop found through ``tensor_by_callers`` or ``pieces_through`` gets no fix."""
        if self._named_pieces is not None:
            name, source = self._named_pieces
            return (f"no automatic rewrite: it walks `{code_of(name)}`, a tuple of the pieces of "
                    f"`{cut(code_of(source), 40)}` (or of a map over them), which the rewrite does not map")
        if self._named_rows is not None:
            name, source = self._named_rows
            return (f"no automatic rewrite: it walks `{code_of(name)}`, a list with one item per row of "
                    f"`{cut(code_of(source), 40)}`, which the rewrite does not map")
        if self._documented is not None:
            return (f"no automatic rewrite: only a docstring says `{code_of(self._documented)}` is one Tensor, and "
                    "docstrings are not checked against the code")
        site = self._by_callers
        assert site is not None
        who = f"`{site.caller.name.value}`" if site.caller is not None else "the module's script code"
        return (f"no automatic rewrite: it walks a Tensor as {who} passes it "
                f"(`{cut(code_of(site.call), 60)}`), and a caller ms-lint does not read (an alias, `ops.Partial`, "
                "`getattr`, another module) may pass a tuple")

    # -- while loops -------------------------------------------------------------------------------------------
    def visit_While(self, node: cst.While) -> None:
        if inside_compile_time_helper(self.context, node, self.function):
            return
        counter = while_counter(self.context, node, self.values)
        if counter is None:
            return
        shape = self._resolver().shape_int(counter.bound)
        direction = "up to"
        if shape is None and counter.start_expr is not None and counter.exact and counter.step < 0:
            shape = self._resolver().shape_int(counter.start_expr)  # counting down from a shape: ``t = n - 1``
            direction = "down from"
        if shape is None or not does_graph_work(node.body, self.values) or _calls_by_index(node, counter.name):
            return
        carried, sums = _carried(node.body, {counter.name})
        fix = None
        if carried:
            counted = PeeledBufferBuilder(self.context, self.function, self.values)
            fix = counted.while_loop(node, counter) if counter.exact else None
            cure = _cure(carried, sums) + _counter_note(fix, counted.refusal)
        else:
            cure = (f"if the iterations are independent, map the body over the axis with `ms.vmap`, {VMAP_FACT}; "
                    "otherwise a Tensor counter makes it a real loop (compiled once, slower per call)")
        short = _short_cure(carried, sums, False, builder_refused=False, loop="a Tensor counter",
                            counted=fix is not None)
        self.report(node, f"`while` on int `{cut(counter.name, 16)}` {direction} `{_origin(shape.origin)}` (Tensor shape): "
                          f"unrolled per slice; {short}", fix=fix,
                    detail=f"`while` loop with the Python-int counter `{counter.name}` runs to `{shape.origin}`, "
                           "which comes from a Tensor's shape: MindSpore unrolls it like a `for`, compiling one copy "
                           f"of the body per slice; {cure}")

    # -- comprehensions ----------------------------------------------------------------------------------------
    def visit_comprehension(self, node: Comprehension) -> None:
        if inside_compile_time_helper(self.context, node, self.function):
            return
        clause = node.for_in
        what = None
        while clause is not None and what is None:
            what = self._iteration(clause.iter, clause.target)
            if what is None:
                clause = clause.inner_for_in
        if what is None or clause is None:
            return
        parts = [node.key, node.value] if isinstance(node, cst.DictComp) else [node.elt]
        if not any(does_graph_work(part, self.values) for part in parts) or _comprehension_calls_by_index(
                parts, clause):
            return
        description, trip = what
        fix, why = None, "iterates in an inner `for` clause"
        if (self._by_callers is not None or self._named_pieces is not None or self._named_rows is not None
                or self._documented is not None):
            why = self._no_fix_note().replace("no automatic rewrite: ", "", 1)
        elif clause is node.for_in and isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            fix, why = self._comprehension_fix(node, trip)
        elif clause is node.for_in:
            why = "builds a set or a dict, not rows to stack"
        cure = (f"the elements are independent: `ms.vmap` maps the expression over the axis, {VMAP_FACT}" if fix
                else f"if the elements are independent, map the expression with `ms.vmap`, {VMAP_FACT}; "
                     f"no automatic rewrite: the comprehension {why}")
        what = (self._rows_short_what() if self._named_rows is not None else _short_what(description)).replace(
            "loop ", "comprehension ", 1)
        how = "map the expression with `ms.vmap`" if fix else "if the elements are independent, use `ms.vmap`"
        if self._named_rows is not None:
            cure, how = f"{self._rows_cure(short=False)}; no automatic rewrite: the comprehension {why}", \
                self._rows_cure(short=True)
        self.report(node, f"{what}: unrolled per slice; {how}", fix=fix,
                    detail=f"comprehension {description[5:] if description.startswith('loop ') else description}: "
                           f"MindSpore unrolls it, compiling one copy of the expression per slice; {cure}")

    def _comprehension_fix(self, node, trip: Optional[ShapeRef]) -> Tuple[Optional[object], Optional[str]]:
        """(fix, None), or (None, why not) in a few words that follow "the comprehension"."""
        if trip is not None and trip.tensor is None:
            return None, (f"runs to `{_origin(trip.origin)}`, which the rewrite cannot tie to one Tensor it slices "
                          "by the index")
        arg = self.context.parent(node)
        call = self.context.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call):
            return None, "is kept as a Python list or tuple, not stacked into one Tensor where it is built"
        owner = self.context.scope.owner_of.get(self.function)
        axis = stack_axis(self.context, owner, call, node)
        concatenated = False
        if axis is None:  # ``ops.cat([row.unsqueeze(a) for ...], a)``: the rows stacked on ``a``
            axis = concat_axis(self.context, call, node)
            concatenated = True
        if axis is None:
            return None, (f"is passed to `{cut(code_of(call.func), 30)}`, not to a stack or concat with a literal "
                          "axis")
        builder = VmapBuilder(self.context, self.function, self.values)
        fix = builder.comprehension(node, call, axis, trip, concatenated)
        return fix, None if fix is not None else (builder.refusal or builder.unbuilt or "cannot be rewritten")


def _is_builtin_call(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == name


def _calls_by_index(loop: Union[cst.For, cst.While], counter: Optional[str] = None) -> bool:
    """The body calls ``seq[i](...)`` or ``getattr(obj, ...i...)``: a loop over cells, not over a tensor axis
    (``i`` the loop variable, or the index of ``for i, piece in enumerate(pieces)``)."""
    indices = _index_names(loop) if isinstance(loop, cst.For) else {counter or ""}
    if not indices:
        return False

    class _Finder(cst.CSTVisitor):
        found = False

        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if isinstance(func, cst.Subscript) and any(n.value in indices for n in read_name_nodes(func)):
                self.found = True
            if isinstance(func, cst.Name) and func.value == "getattr" and any(
                    n.value in indices for n in read_name_nodes(call)):
                self.found = True

    finder = _Finder()
    run_visitor(loop.body, finder)
    return finder.found


def _index_names(loop: cst.For) -> Set[str]:
    """The names that count a ``for`` loop's steps: its target when a name, the index of ``for i, x in
    enumerate(...)``, and a counter the body steps by one (``i = 0`` before, ``i += 1`` in it: Res2Net's)."""
    target = loop.target
    if isinstance(target, cst.Tuple) and _is_builtin_call(loop.iter, "enumerate") and len(target.elements) == 2:
        target = target.elements[0].value
    found = {target.value} if isinstance(target, cst.Name) else set()
    for stmt in suite_statements(loop.body):
        for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
            if (isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign)
                    and isinstance(small.target, cst.Name) and isinstance(small.value, cst.Integer)
                    and small.value.value == "1"):
                found.add(small.target.value)
    return found


def _branches_on_index(loop: cst.For) -> bool:
    """An ``if`` (or conditional expression) in the body tests a name that counts the loop's steps."""
    indices = _index_names(loop)
    return bool(indices) and any(
        name.value in indices for node in find(loop.body, (cst.If, cst.IfExp)) for name in read_name_nodes(node.test))


def _comprehension_calls_by_index(parts: List[cst.BaseExpression], clause: cst.CompFor) -> bool:
    """The element calls ``seq[i](...)`` with ``i`` a target of the clause that runs over the axis
    (``sum(self.embed_tokens[k](x[:, k]) for k in range(x.shape[1]))``): one cell per step, as ``_calls_by_index``
    says of a loop."""
    targets = set(target_names(clause.target))
    return any(isinstance(call.func, cst.Subscript) and len(call.func.slice) == 1
               and isinstance(call.func.slice[0].slice, cst.Index)
               and isinstance(call.func.slice[0].slice.value, cst.Name)
               and call.func.slice[0].slice.value.value in targets  # exactly ``seq[k]``: ``seq[top[k]]`` is no
               for part in parts for call in find(part, cst.Call))  # cell per step (a per-token expert pick)


def _carried(body_block: cst.BaseSuite, loop_vars: Set[str]) -> Tuple[Set[str], Set[str]]:
    """(carried, sums): names the body reads from the previous iteration (read before written, a list read while
    it grows, a name written into by subscript), and among them those only summed into (``total += term``)."""
    body = list(suite_statements(body_block))
    written = assigned_in(body)
    carried = (first_reads(body) & written) - loop_vars
    appended: List[str] = []
    summed: Dict[str, int] = {}
    other_writes: Set[str] = set()
    grown: List[str] = []  # ``t = t + (expr,)``: the tuple form of ``t.append(expr)``
    growing: Set[int] = set()

    class _Scan(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, line: cst.SimpleStatementLine) -> None:
            found = tuple_accumulation(line)
            if found is not None:
                grown.append(found[0])
                growing.add(id(line.body[0]))

        def visit_Assign(self, node: cst.Assign) -> Optional[bool]:
            return False if id(node) in growing else None

        def visit_AugAssign(self, node: cst.AugAssign) -> Optional[bool]:
            if id(node) in growing:
                return False
            if isinstance(node.target, cst.Name):
                if isinstance(node.operator, cst.AddAssign):
                    summed[node.target.value] = summed.get(node.target.value, 0) + 1
                else:
                    other_writes.add(node.target.value)
            return None

        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if (isinstance(func, cst.Attribute) and func.attr.value == "append"
                    and isinstance(func.value, cst.Name)):
                appended.append(func.value.value)

        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            inner = target.target
            if isinstance(inner, cst.Subscript) and isinstance(inner.value, cst.Name) \
                    and inner.value.value not in written:
                carried.add(inner.value.value)
            other_writes.update(target_names(inner))

    run_visitor(body_block, _Scan())
    reads = [n.value for n in read_name_nodes(body_block)]
    for name in set(appended):
        if reads.count(name) > appended.count(name):
            carried.add(name)
    for name in set(grown):
        # Only read where it grows (``t + (...)``, ``t += (...)``), never otherwise bound: each iteration adds
        # its own element.
        plain = sum(1 for line in body if _grows_by_assign(line, name))
        if name in carried and name not in other_writes and reads.count(name) == plain \
                and name not in appended and name not in summed:
            carried.discard(name)
    sums = {name for name in carried if name in summed and name not in other_writes
            and reads.count(name) == summed[name]}
    return carried, sums


def _grows_by_assign(stmt: cst.CSTNode, name: str) -> bool:
    found = tuple_accumulation(stmt)
    return found is not None and found[0] == name


_WHAT_PATTERNS = (
    ("loop trip count `", "` comes from a Tensor's shape", "loop to `{}` (Tensor shape)"),
    ("loop iterates Tensor `", "` row by row", "loop over Tensor `{}` row by row"),
    ("loop iterates `", "` slice by slice", "loop over `{}`"),
)


def _short_what(description: str) -> str:
    """The one-line form of ``_iteration``'s description: the code excerpt cut to fit a short message."""
    for head, tail, short in _WHAT_PATTERNS:
        if description.startswith(head) and description.endswith(tail):
            return short.format(_origin(description[len(head):-len(tail)]))
    return cut(description, 60)


def _origin(origin: str) -> str:
    """A trip count's origin for a one-line message: ``n` = `x.shape[0]`` whole when short, else its shape."""
    if len(origin) > 28 and "` = `" in origin:
        origin = origin.split("` = `")[-1]
    return cut(origin, 32)


def _names(found: Set[str]) -> str:
    return cut(", ".join(f"`{n}`" for n in sorted(found)), 30)


def _short_cure(carried: Set[str], sums: Set[str], fixed: bool, builder_refused: bool,
                loop: str = "`ops.ForiLoop(unroll=False)`", counted: bool = False) -> str:
    if counted:
        return "loop-carried: count with a Tensor"
    if carried and carried == sums:
        return f"sums into {_names(sums)}: `ms.vmap` + `.sum(axis=0)`"
    if carried:
        return f"carries {_names(carried)}: try {loop}"
    if fixed:
        return "map the body with `ms.vmap`"
    if builder_refused:
        return "use `ms.vmap` by hand (no automatic rewrite)"
    return "if iterations are independent, use `ms.vmap`"


def _cure(carried: Set[str], sums: Set[str]) -> str:
    if carried and carried == sums:
        names = ", ".join(f"`{n}`" for n in sorted(sums))
        return (f"the loop only sums per-slice terms into {names}: compute the terms with `ms.vmap` ({VMAP_FACT}) "
                "and add them up with `.sum(axis=0)`")
    return CARRIED_CURE.format(names=", ".join(f"`{n}`" for n in sorted(carried)))


def _counter_note(fix, refusal: Optional[str]) -> str:
    """What the detail says about the Tensor-counter rewrite: offered (unsafe), or why not."""
    if fix is not None and fix.message == PEELED_MESSAGE:
        return ("; the fix (unsafe) runs the first step before the loop, allocates the stacked result as a buffer "
                "from that step's row, and writes the other rows in a real `while` with a Tensor counter: "
                f"{PEELED_FACT} (MindSpore 2.10 CPU)")
    if fix is not None:
        return ("; the fix (unsafe) makes the counter a Tensor (`ms.Tensor(start, ms.int32)`), so the loop is a "
                "real `while`: a 100-step recurrence compiled in 0.38 s instead of 15.0 s, 11.6 ms instead of 11.0 ms "
                "per call (MindSpore 2.10 CPU)")
    if refusal:
        return f"; no automatic rewrite: {refusal}"
    return ""
