"""The Tensor-counter rewrite of MSL101's loop-carried loops: a real ``while`` loop, compiled once.

Offered (always as *unsafe*: it trades run time for compile time) for loops over a tensor axis whose
iterations depend on each other (RNN steps, discounted returns, L-BFGS two-loop recursions)::

    step = reward.shape[0] - 1                      for index in range(n - 1, -1, -1):
    while step >= 0:                                    q = q - self._dot(a[index], q) * y[index]
        v = reward[step] + gamma * v
        out[step] = v
        step -= 1

become, with the counter a Tensor (``ms.Tensor(start, ms.int32)``), a loop MindSpore compiles once instead of
once per step::

    step = ms.Tensor(reward.shape[0] - 1, ms.int32) index = ms.Tensor(n - 1, ms.int32)
    while step >= 0:                                while index > -1:
        ...                                             ...
                                                        index = index - 1

Measured on MindSpore 2.10 CPU (see the MSL101 rule page): a 100-step discounted return compiles in 0.38 s
instead of 15.0 s and runs 11.6 ms instead of 11.0 ms per call (`ms-lint verify`: verified, gradients match); a
30-step L-BFGS recursion 3.6 s -> 0.42 s first call; outputs equal bit for bit.

The step is written ``i = i + 1``, never ``i += 1``: measured on MindSpore 2.10, an in-place ``+=``/``-=`` on the
Tensor counter makes ``ms.grad`` of the loop fail (``Graph cycle exists``), the plain assignment does not.

What a real ``while`` cannot do, so such loops are refused: grow a list or tuple (``outputs.append(h)``; one
list stacked on axis 0 right after is :mod:`ms_lint.rewrites.peeled_buffer`'s), index a parameter that some caller
in the project passes as a Python list (``self.gru([h] * n, s)``), use
the counter as a Python int (only ``x[i]`` reads and writes are allowed: no ``range(i)``, slices or
arithmetic), draw random numbers (one op run N times draws differently from N unrolled copies), leave the
loop early (``break``/``continue``/``return``), or change a carried value's shape (a carried value must keep
one shape and dtype every step; a first step that broadcasts it is the reason this stays unsafe).
"""
from __future__ import annotations

from typing import Optional, Sequence, Set, Tuple, Union

import libcst as cst

from ms_lint.context import ModuleContext
from ms_lint.cstutil import call_name_args, cut, param_names, suite_statements, walk_statements
from ms_lint.diagnostics import UNSAFE, Fix
from ms_lint.analysis.dataflow import (
    assigned_in, first_reads, number_start, read_after, read_names, statement_block, written_names,
)
from ms_lint.analysis.effects import calls_in
from ms_lint.analysis.shapes import WhileCounter, int_literal
from ms_lint.cstutil import code_of, is_self_attr
from ms_lint.fasttree import parenthesized
from ms_lint.rewrites.fori_loop import SHAPE_CHANGING
from ms_lint.rewrites.vmap import tuple_accumulation
from ms_lint.rewrites.where import RANDOM, classify_call
from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.walk import find, run_visitor

TENSOR_MAKERS = ("mindspore.Tensor", "mindspore.common.tensor.Tensor", "mindspore.ops.scalar_to_tensor")
INT32_NAMES = ("mindspore.int32", "mindspore.common.dtype.int32", "mindspore.common.mstype.int32",
               "mindspore.numpy.int32")
GROWING_METHODS = {"append", "extend", "insert", "pop"}
MESSAGE = ("count with a Tensor so the loop is a real `while`: compiled once, each call may run slower "
           "(a compile-time/run-time trade-off; `ms-lint verify` measures it)")


class TensorCounterBuilder:
    def __init__(self, context: ModuleContext, function: cst.FunctionDef, values: FunctionValues):
        self.context = context
        self.function = function
        self.values = values
        self.refusal: Optional[str] = None
        self.allowed_list: Optional[str] = None  # the list the peeled-buffer rewrite turns into a buffer

    # -- entry points ------------------------------------------------------------------------------------------
    def for_loop(self, loop: cst.For) -> Optional[Fix]:
        """``for i in range([start,] stop[, step])`` -> ``i = Tensor(start); while i < stop: ...; i += step``."""
        bounds = range_call(loop.iter)
        if bounds is None or not isinstance(loop.target, cst.Name) or loop.orelse is not None:
            return None
        start, stop, step = bounds
        counter = loop.target.value
        if not self._body_fits(loop, counter, set()):
            return None
        if read_names(stop) & assigned_in(list(suite_statements(loop.body))):
            self.refusal = "the bound is recomputed by the body (a `while` reads it on every step)"
            return None
        spelled = self._tensor_call(start)
        if spelled is None:
            return None
        init_code, imports = spelled
        init = cst.parse_statement(f"{counter} = {init_code}\n").with_changes(leading_lines=loop.leading_lines)
        increment = cst.parse_statement(f"{counter} = {counter} {'+' if step > 0 else '-'} {abs(step)}\n")
        operator = "<" if step > 0 else ">"
        test = cst.parse_expression(f"{counter} {operator} {code_of(stop)}")
        body = loop.body.with_changes(body=list(loop.body.body) + [increment])
        while_loop = cst.While(test=test, body=body, whitespace_after_while=cst.SimpleWhitespace(" "),
                               whitespace_before_colon=loop.whitespace_before_colon)
        return Fix(UNSAFE, MESSAGE, edits=((loop, [init, while_loop]),), imports=imports)

    def _counter_start(self, loop: cst.While, counter: WhileCounter
                       ) -> Tuple[Optional[cst.SimpleStatementLine], Optional[str]]:
        """The plain assignment that starts the ``while`` counter, earlier in the loop's block and not read between
        it and the loop; else (None, why) (a read in between is recorded as the refusal)."""
        block, index = statement_block(self.context, loop)
        if block is None or index is None:
            return None, None
        init_index = next((i for i in range(index - 1, -1, -1) if counter.name in assigned_in([block[i]])), None)
        if init_index is None:
            return None, None
        init = block[init_index]
        if not (isinstance(init, cst.SimpleStatementLine) and len(init.body) == 1
                and isinstance(init.body[0], cst.Assign) and len(init.body[0].targets) == 1):
            return None, f"the counter `{counter.name}` does not start with a plain assignment"
        if any(counter.name in read_names(stmt) for stmt in block[init_index + 1:index]):
            self.refusal = f"the counter `{counter.name}` is read between its start and the loop"
            return None, self.refusal
        return init, None

    @staticmethod
    def _step_lines(loop: cst.While, counter: WhileCounter) -> Set[int]:
        """The body's simple statements that rebind the counter (``t += 1``)."""
        return {id(stmt) for stmt in suite_statements(loop.body)
                if isinstance(stmt, cst.SimpleStatementLine) and counter.name in assigned_in([stmt])}

    def while_loop(self, loop: cst.While, counter: WhileCounter) -> Optional[Fix]:
        """``t = 0; while t < n: ...; t += 1`` -> ``t = Tensor(0)``: the same loop, now a real one."""
        init, _why = self._counter_start(loop, counter)
        if init is None:
            return None
        step_lines = self._step_lines(loop, counter)
        if not self._body_fits(loop, counter.name, step_lines):
            return None
        assign = init.body[0]
        spelled = self._tensor_call(assign.value)
        if spelled is None:
            return None
        value, imports = spelled
        new_init = init.with_changes(body=[assign.with_changes(value=cst.parse_expression(value))])
        edits = [(init, new_init)]
        for stmt in suite_statements(loop.body):  # ``t += 1`` -> ``t = t + 1`` (see the module docstring)
            small = stmt.body[0] if id(stmt) in step_lines and len(stmt.body) == 1 else None
            if isinstance(small, cst.AugAssign):
                operator = "+" if isinstance(small.operator, cst.AddAssign) else "-"
                plain = cst.parse_statement(f"{counter.name} = {counter.name} {operator} {code_of(small.value)}\n")
                edits.append((stmt, stmt.with_changes(body=plain.body)))
        return Fix(UNSAFE, MESSAGE, edits=tuple(edits), imports=imports)

    # -- checks ------------------------------------------------------------------------------------------------
    def _body_fits(self, loop, counter: str, step_lines: Set[int]) -> bool:
        why = self._body_refusal(loop, counter, step_lines)
        if why is not None:
            self.refusal = why
            return False
        if self._read_later(loop, counter):
            self.refusal = f"`{counter}` is read after the loop"
            return False
        body = list(suite_statements(loop.body))
        for name in sorted((first_reads(body) & assigned_in(body)) - {counter}):
            literal = number_start(self.context, loop, name)
            if literal is not None:
                # measured: ``total = 0; while i < n: total += x[i].sum()`` fails with "Type Join Failed:
                # AbstractRefTensor cannot join with AbstractScalar" (tests/test_loop_rewrites_mindspore.py)
                self.refusal = (f"`{name}` enters the loop as the Python number `{literal}`: a real loop's state must "
                                "keep one type, and MindSpore 2.10 cannot join a number with a Tensor")
                return False
        return True

    def _body_refusal(self, loop, counter: str, step_lines: Set[int]) -> Optional[str]:
        if isinstance(loop.body, cst.SimpleStatementSuite):
            return "the body is on the loop's line"
        escape = _Escapes()
        run_visitor(loop.body, escape)
        if escape.found:
            return f"the body has `{escape.found}`, which a real loop does not take"
        body = list(suite_statements(loop.body))
        if counter in assigned_in([s for s in body if id(s) not in step_lines]) or _binds_nested(loop, counter):
            return f"the body rebinds `{counter}`"
        for stmt in walk_statements(body, into_defs=False):
            if tuple_accumulation(stmt) is not None or (isinstance(stmt, cst.SimpleStatementLine) and any(
                    find(_built_part(small), (cst.Tuple, cst.List)) for small in stmt.body)):
                if _rebuilds_same_tuple(loop, body, stmt):
                    continue
                return "the body builds a tuple or list, which a real loop cannot carry"
        for call in calls_in(loop.body):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name) \
                    and func.value.value == self.allowed_list:
                continue
            if isinstance(func, cst.Attribute) and func.attr.value in GROWING_METHODS:
                return f"the body grows a list (`.{func.attr.value}`), which a real loop cannot carry"
            if classify_call(self.context, self.values, call)[0] == RANDOM:
                return "the body draws random numbers: one op run each step draws differently from unrolled copies"
        uses = _CounterUses(counter, self.values)
        for stmt in body:
            if id(stmt) not in step_lines:
                run_visitor(stmt, uses)
        if uses.bad:
            return f"the body uses `{counter}` as a Python int (`{uses.bad}`), not only as an index"
        params = set(param_names(self.function))
        for indexed in sorted(uses.indexed & params):
            passed = self.context.sequence_passed_for(self.function, indexed)
            if passed is not None:
                # measured (MindSpore 2.10): dgmr's ConvGRU fed ``[h] * n`` compiles unrolled, fails with the counter
                return (f"a caller passes `{indexed}` a Python list (`{cut(code_of(passed), 30)}`), which a Tensor "
                        "counter cannot index")
        written = assigned_in(body)
        carried = (first_reads(body) & written) - {counter}
        for stmt in body:
            if not (isinstance(stmt, cst.SimpleStatementLine) and assigned_in([stmt]) & carried):
                continue
            for call in calls_in(stmt):
                name = _last_name(call.func)
                if name in SHAPE_CHANGING and name not in ("squeeze", "Squeeze", "reshape", "view", "gather"):
                    return f"a carried value goes through `{name}`, which may change its shape from step to step"
        return None

    def _tensor_call(self, start: Union[cst.BaseExpression, str]):
        """``Tensor(start, int32)`` spelled with the module's names (``ops.scalar_to_tensor`` when the text
        already uses ``Tensor`` for something the rewrite cannot see is the class); ``start``: an expression of the
        file, or the text of a number the rewrite works out (``range(n)``'s 0: not a node, whose code a check on
        ``ast``-built trees could not tell from a rebuilt one's, ``ms_lint.fasttree.code_for``)."""
        maker = self._spell(TENSOR_MAKERS)
        int32 = self._spell(INT32_NAMES)
        if maker is None or int32 is None:
            return None
        start_code = start if isinstance(start, str) else code_of(start)
        return f"{maker[0]}({start_code}, {int32[0]})", maker[1] + int32[1]

    def _spell(self, names: Sequence[str]):
        for name in names:
            existing = self.context.existing_reference(name)
            if existing is not None:
                return existing, ()
        for name in names:
            spelled = self.context.spell(name)
            if spelled is not None:
                return spelled
        return None

    def _read_later(self, loop, name: str) -> bool:
        """``read_after``, except that a later ``for name in ...`` at the function's top level rebinds the name
        before its body reads it (L-BFGS's two loops over ``index``)."""
        if not read_after(self.context, loop, {name}):
            return False
        top = list(suite_statements(self.function.body))
        if not any(stmt is loop for stmt in top):
            return True
        after = top[next(i for i, stmt in enumerate(top) if stmt is loop) + 1:]
        for stmt in after:
            if isinstance(stmt, cst.For) and isinstance(stmt.target, cst.Name) and stmt.target.value == name \
                    and name not in read_names(stmt.iter):
                if stmt.orelse is not None and name in read_names(stmt.orelse):
                    return True
                continue
            if name in read_names(stmt):
                return True
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(
                    stmt.body[0], cst.Assign) and name in assigned_in([stmt]) and name not in read_names(stmt):
                return False
        return False


class _Escapes(cst.CSTVisitor):
    """``break``/``continue``/``return``/``yield`` and nested definitions in a loop body (inner loops own their
    own ``break``)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: Optional[str] = None
        self.depth = 0

    def _set(self, what: str) -> None:
        self.found = self.found or what

    def visit_For(self, node) -> None:
        self.depth += 1

    def leave_For(self, node) -> None:
        self.depth -= 1

    def visit_While(self, node) -> None:
        self.depth += 1

    def leave_While(self, node) -> None:
        self.depth -= 1

    def visit_Break(self, node) -> None:
        if not self.depth:
            self._set("break")

    def visit_Continue(self, node) -> None:
        if not self.depth:
            self._set("continue")

    def visit_Return(self, node) -> None:
        self._set("return")

    def visit_Yield(self, node) -> None:
        self._set("yield")

    def visit_FunctionDef(self, node) -> bool:
        self._set("def")
        return False

    def visit_Lambda(self, node) -> bool:
        self._set("lambda")
        return False

    def visit_ClassDef(self, node) -> bool:
        self._set("class")
        return False


class _CounterUses(cst.CSTVisitor):
    """Reads of the counter that are not a plain index ``a[i]`` of a value that is not a Python sequence."""

    def __init__(self, counter: str, values: FunctionValues):
        super().__init__()
        self.counter = counter
        self.values = values
        self.bad: Optional[str] = None
        self.indexed: Set[str] = set()  # names indexed by the counter (``x`` of ``x[i]``)

    def visit_Subscript(self, node: cst.Subscript) -> Optional[bool]:
        if (len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
                and isinstance(node.slice[0].slice.value, cst.Name)
                and node.slice[0].slice.value.value == self.counter):
            if self.values.kind(node.value) in (Kind.CELL_SEQ, Kind.TENSOR_SEQ, Kind.CONST, Kind.CELL):
                self.bad = self.bad or code_of(node)
            if isinstance(node.value, cst.Name):
                self.indexed.add(node.value.value)
            run_visitor(node.value, self)
            return False
        return None

    def visit_Comparison(self, node: cst.Comparison) -> Optional[bool]:
        """``mask = lengths > t`` with ``lengths`` a Tensor: a Tensor either way (measured on MindSpore 2.10 in
        variable_recurrent's ``seq_length > t``: the same selects, tests/test_rnn_buffer_mindspore.py)."""
        if len(node.comparisons) != 1:
            return None
        left, right = node.left, node.comparisons[0].comparator
        for mine, other in ((left, right), (right, left)):
            if isinstance(mine, cst.Name) and mine.value == self.counter and not parenthesized(mine) \
                    and self.values.kind(other) == Kind.TENSOR:
                run_visitor(other, self)
                return False
        return None

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.counter and self.bad is None:
            self.bad = self.counter

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        run_visitor(node.value, self)
        return False


def _rebuilds_same_tuple(loop, body, stmt) -> bool:
    """Is ``stmt`` exactly ``state = (a, b)``, rebuilding a carried tuple with its own structure?

    Measured on MindSpore 2.10 CPU (GRAPH_MODE, tests/test_rnn_buffer_mindspore.py): a ``while`` with a Tensor
    counter carries ``state = (s0, s1)`` rebuilt each step, outputs equal to the unrolled loop and gradients
    within 5e-7. Only that case: ``state`` read before it is written in the body, read there only whole or as
    ``state[k]`` with every literal ``k`` of ``range(len)`` (the tuple carried in has that length), each element a
    name the body binds by a call (a Tensor, not a tuple or list), and any other binding of ``state`` in the
    body in the other branch of an ``if self.flag:`` (a constant of the Cell, so one structure compiles).
    Lists, tuples that grow (``state + (h,)``) and other displays stay refused."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return False
    assign = stmt.body[0]
    display = assign.value
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
            or not isinstance(display, cst.Tuple) or len(display.elements) < 2:
        return False
    name = assign.targets[0].target.value
    if name not in first_reads(body) or not all(
            isinstance(element, cst.Element) and isinstance(element.value, cst.Name) for element in display.elements):
        return False
    elements = {element.value.value for element in display.elements}
    if name in elements or len(elements) != len(display.elements):
        return False
    bound_by_call, others = set(), []
    for other in walk_statements(body, into_defs=False):
        if other is stmt or not isinstance(other, cst.SimpleStatementLine):
            if other is not stmt and not isinstance(other, (cst.If, cst.SimpleStatementLine)) \
                    and name in written_names(other):
                return False  # bound by an inner loop's target or a with/try
            continue
        for small in other.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call):
                bound_by_call.add(small.targets[0].target.value)
        if name in written_names(other):
            others.append(other)
    if not elements <= bound_by_call:
        return False
    indices = set()
    for subscript in find(loop.body, cst.Subscript):
        if isinstance(subscript.value, cst.Name) and subscript.value.value == name:
            index = subscript.slice[0].slice if len(subscript.slice) == 1 else None
            known, literal = int_literal(index.value) if isinstance(index, cst.Index) else (False, None)
            if not known or literal is None:
                return False
            indices.add(literal)
    if indices != set(range(len(display.elements))):
        return False
    return all(_other_branch_of_cell_flag(body, stmt, other) for other in others)


def _other_branch_of_cell_flag(body, one, other) -> bool:
    """Are ``one`` and ``other`` in opposite branches of an ``if self.flag:`` in ``body``?"""
    for node in walk_statements(body, into_defs=False):
        if not (isinstance(node, cst.If) and is_self_attr(node.test) and isinstance(node.orelse, cst.Else)):
            continue
        then = {id(s) for s in walk_statements(suite_statements(node.body), into_defs=False)}
        orelse = {id(s) for s in walk_statements(suite_statements(node.orelse.body), into_defs=False)}
        if (id(one) in then and id(other) in orelse) or (id(one) in orelse and id(other) in then):
            return True
    return False


def _built_part(small: cst.BaseSmallStatement) -> cst.CSTNode:
    """Where a simple statement may build a tuple or list: an assignment's value (``h, c = cell(x)`` unpacks the
    cell's result into names, it builds nothing the loop carries), else the whole statement."""
    return small.value if isinstance(small, cst.Assign) else small


def _binds_nested(loop, name: str) -> bool:
    """Is ``name`` bound below the body's top level (an inner loop's target, a branch)?"""
    top = {id(s) for s in suite_statements(loop.body)}
    return any(id(stmt) not in top and name in written_names(stmt)
               for stmt in walk_statements(suite_statements(loop.body), into_defs=False))


def range_call(iterable: cst.BaseExpression):
    """(start, stop, step) of ``range(...)`` with a literal int step (default 1), or None; ``start`` is the text
    ``"0"`` when the call leaves it out."""
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"):
        return None
    args = call_name_args(iterable)
    if len(args) != len(iterable.args) or not 1 <= len(args) <= 3:
        return None
    if len(args) == 1:
        return "0", args[0].value, 1
    step = 1
    if len(args) == 3:
        known, step = int_literal(args[2].value)
        if not known or not step:
            return None
    return args[0].value, args[1].value, step


def _last_name(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Call):
        return _last_name(func.func)
    return ""
