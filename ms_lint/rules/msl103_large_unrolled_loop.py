"""MSL103 large-unrolled-loop: a constant-trip loop in graph code at or above ``unroll-threshold`` iterations.

Graph mode unrolls the loop: compile time grows with the trip count, and around 500 iterations of a small body
MindSpore 2.10 stops with ``Exceed function call depth limit 1000``. Flagged: ``for`` loops and comprehensions
over ``range(<constant>)`` (literals, module constants, ``self.n`` set once in ``__init__``, local constants) and
``while`` loops with a Python-int counter and a constant bound. Not flagged: trip counts below the threshold,
loops that index or call cells or sequences by the loop index (each element is a different object: the
unrolling is the point), bodies that build no graph nodes, and loops in ``@constexpr`` helpers.

The fix (``ops.ForiLoop(..., unroll=False)``, see :mod:`ms_lint.rewrites.fori_loop`) is unsafe: the loop
compiles once but each call runs slower.
"""
from __future__ import annotations

import re

from typing import Optional

import libcst as cst

from ms_lint.cstutil import call_name_args, cut
from ms_lint.analysis.dataflow import inside_compile_time_helper, read_name_nodes
from ms_lint.analysis.effects import does_graph_work
from ms_lint.analysis.shapes import while_counter
from ms_lint.cstutil import code_of
from ms_lint.rewrites.fori_loop import ForiLoopBuilder
from ms_lint.rules.base import ComprehensionHooks, Invalid, Rule
from ms_lint.analysis.values import Kind
from ms_lint.walk import run_visitor

CURE = ("`ops.ForiLoop()(lower, upper, body, init, unroll=False)` or a `while` loop with a Tensor counter compiles "
        "the body once but runs 5-13x slower per call (measured on MindSpore 2.10 CPU): worth it when compile "
        "time or the depth limit is the problem; `ms.set_recursion_limit(n)` only lifts the limit")

SHORT_CURE = "use `ops.ForiLoop(..., unroll=False)`"


def _short_origin(origin: Optional[str]) -> str:
    """`` (default `max_len=25`)`` for a count a constructor default gives; the whole story is in the detail."""
    if not origin:
        return ""
    match = re.search(r"the default (`[^`]+`)", origin)
    return f" (default {match.group(1)})" if match else " (as the project builds it)"


class LargeUnrolledLoop(ComprehensionHooks, Rule):
    code = "MSL103"
    name = "large-unrolled-loop"
    summary = "Constant loop with many iterations in graph code: unrolled, slow to compile, may hit the depth limit"
    fix_applicability = "unsafe"

    VALID = [
        # Below the threshold (16 by default).
        """
        import mindspore as ms


        @ms.jit
        def refine(x):
            for _ in range(3):
                x = x * 0.5 + 1.0
            return x
        """,
        # A loop over cells: each iteration runs a different layer, the unrolling is the point.
        """
        from mindspore import nn

        NUM_LAYERS = 24


        class Encoder(nn.Cell):
            def __init__(self):
                super().__init__()
                self.layers = nn.CellList([nn.Dense(64, 64) for _ in range(NUM_LAYERS)])

            def construct(self, x):
                for i in range(NUM_LAYERS):
                    x = self.layers[i](x)
                return x
        """,
        # A @constexpr helper runs in Python at compile time.
        """
        import mindspore as ms
        from mindspore import ops


        @ops.constexpr
        def make_mask(n):
            return tuple(1 if i % 2 else 0 for i in range(256))


        @ms.jit
        def masked(x):
            return x * ms.Tensor(make_mask(256))
        """,
    ]

    INVALID = [
        Invalid(
            """
            import mindspore as ms


            @ms.jit
            def func(input_x, input_y):
                output = input_x
                for _ in range(200):
                    output = input_x + input_x * input_y + output
                return output
            """,
            fixed="""
            import mindspore as ms


            def _func_body(_, state):
                output, input_x, input_y = state
                output = input_x + input_x * input_y + output
                return output, input_x, input_y


            @ms.jit
            def func(input_x, input_y):
                output = input_x
                output, _, _ = ms.ops.ForiLoop()(0, 200, _func_body, (output, input_x, input_y), unroll=False)
                return output
            """,
            unsafe=True,
        ),
        # Trip count from __init__; the body reads `self`, so it stays a flagged loop without a rewrite.
        Invalid(
            """
            from mindspore import nn, ops


            class GreedyDecoder(nn.Cell):
                def __init__(self, vocab=32, hidden=16):
                    super().__init__()
                    self.max_len = 64
                    self.embed = nn.Embedding(vocab, hidden)
                    self.cell = nn.GRUCell(hidden, hidden)
                    self.proj = nn.Dense(hidden, vocab)

                def construct(self, token, h):
                    tokens = []
                    for _ in range(self.max_len):
                        h = self.cell(self.embed(token), h)
                        token = ops.argmax(self.proj(h), dim=-1)
                        tokens.append(token)
                    return ops.stack(tokens, axis=1)
            """
        ),
    ]

    # -- for loops ---------------------------------------------------------------------------------------------
    def visit_For(self, node: cst.For) -> None:
        if inside_compile_time_helper(self.context, node, self.function):
            return
        trip = self._range_trip(node.iter)
        if trip is None or trip < self.context.config.unroll_threshold:
            return
        if not does_graph_work(node.body, self.values) or self._indexes_objects(node.body, node.target):
            return
        fix = ForiLoopBuilder(self.context, self.function, self.values).for_loop(node)
        origin = self.values.int_origin(node.iter)
        unrolled = "each unrolled" if origin else "each unrolled into the graph"
        self.report(node, f"`{cut(code_of(node.iter), 40)}` runs {trip} iterations{_short_origin(origin)}, {unrolled}; "
                          f"{SHORT_CURE}", fix=fix,
                    detail=f"`{code_of(node.iter)}` runs {trip} iterations{f' ({origin})' if origin else ''}: MindSpore "
                           f"unrolls the loop, compiling one copy of the body per iteration (compile time grows with the "
                           f"count; at several hundred iterations MindSpore 2.10 fails with `Exceed function call depth "
                           f"limit`); {CURE}")

    def _range_trip(self, iterable: cst.BaseExpression) -> Optional[int]:
        if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name)
                and iterable.func.value == "range" and iterable.func.value not in self.context.imports.aliases):
            return None
        args = call_name_args(iterable)
        if not 1 <= len(args) <= 3 or len(args) != len(iterable.args):
            return None
        folded = [self.values.fold(arg.value) for arg in args]
        if any(value is None for value in folded) or (len(folded) == 3 and folded[2] == 0):
            return None
        return len(range(*folded))

    def _indexes_objects(self, body: cst.CSTNode, target: cst.BaseExpression) -> bool:
        """Does the body use the loop index to pick an object (``self.layers[i]``, ``params[i]``,
        ``getattr(self, f"head{i}")``)? Then every iteration runs different code or data: not a ForiLoop."""
        if not isinstance(target, cst.Name):
            return False
        index = target.value
        values = self.values

        class _Finder(cst.CSTVisitor):
            found = False

            def visit_Subscript(self, node: cst.Subscript) -> None:
                if any(n.value == index for n in read_name_nodes(node.slice[0]) if node.slice) \
                        and values.kind(node.value) is not Kind.TENSOR:
                    self.found = True

            def visit_Call(self, node: cst.Call) -> None:
                if isinstance(node.func, cst.Name) and node.func.value == "getattr" and any(
                        n.value == index for n in read_name_nodes(node)):
                    self.found = True

        finder = _Finder()
        run_visitor(body, finder)
        return finder.found

    # -- while loops -------------------------------------------------------------------------------------------
    def visit_While(self, node: cst.While) -> None:
        if inside_compile_time_helper(self.context, node, self.function):
            return
        counter = while_counter(self.context, node, self.values)
        if counter is None:
            return
        stop = self.values.fold(counter.bound)
        trip = counter.trip_count(stop) if stop is not None else None
        if trip is None or trip < self.context.config.unroll_threshold:
            return
        if not does_graph_work(node.body, self.values) or self._indexes_objects(node.body, cst.Name(counter.name)):
            return
        self.report(node, f"`while` on int `{cut(counter.name, 20)}` runs {trip} iterations, each unrolled; "
                          "use a Tensor counter or `ops.ForiLoop(..., unroll=False)`",
                    detail=f"`while` loop with the Python-int counter `{counter.name}` runs {trip} iterations: "
                           "MindSpore unrolls it like a `for`, compiling one copy of the body per iteration (at "
                           "several hundred iterations MindSpore 2.10 fails with `Exceed function call depth "
                           f"limit`); {CURE}")

    # -- comprehensions ----------------------------------------------------------------------------------------
    def visit_comprehension(self, node) -> None:
        if inside_compile_time_helper(self.context, node, self.function):
            return
        clause = node.for_in
        trip = 1
        while clause is not None:
            count = self._range_trip(clause.iter)
            if count is not None:
                trip *= count
            clause = clause.inner_for_in
        parts = [node.key, node.value] if isinstance(node, cst.DictComp) else [node.elt]
        if trip < self.context.config.unroll_threshold or self._range_trip(node.for_in.iter) is None:
            return
        if not any(does_graph_work(part, self.values) for part in parts):
            return
        if any(self._indexes_objects(part, node.for_in.target) for part in parts):
            return
        self.report(node, f"comprehension over `{cut(code_of(node.for_in.iter), 40)}` builds {trip} elements, each "
                          f"unrolled; {SHORT_CURE}",
                    detail=f"comprehension over `{code_of(node.for_in.iter)}` builds {trip} elements: MindSpore "
                           "unrolls it, compiling one copy of the expression per element (at several hundred "
                           f"MindSpore 2.10 fails with `Exceed function call depth limit`); {CURE}")
