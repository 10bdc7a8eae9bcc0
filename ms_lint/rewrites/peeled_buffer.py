"""The peeled-buffer rewrite of MSL101's loop-carried loops that grow a list (RNN, ConvGRU steps).

A loop that appends one row per step and stacks the rows on axis 0 right after::

    outputs = []
    for t in range(x.shape[0]):
        h, hidden = self.cell(x[t], hidden)
        outputs.append(h)
    y = ops.stack(outputs, 0)

becomes (always *unsafe*: a real ``while`` trades run time for compile time)::

    h, hidden = self.cell(x[0], hidden)
    outputs = ops.zeros((x.shape[0],) + h.shape, h.dtype)
    outputs[0] = h
    t = ms.Tensor(1, ms.int32)
    while t < x.shape[0]:
        h, hidden = self.cell(x[t], hidden)
        outputs[t] = h
        t = t + 1
    y = outputs

The first step runs before the loop (peeled), so the buffer's row shape and dtype come from a real row (the
cell's output, which nothing before the loop proves), and a carried value may start as ``None``
(ConvGRU's ``hidden_state=None``, which a ``while`` cannot join with a Tensor). A zero-length axis fails both
ways (``ops.stack`` of no rows, ``x[0]``). ``v = x[t:t + 1]`` followed by ``v = ops.Squeeze(0)(v)`` is read as
``v = x[t]`` (a slice with a Tensor counter does not compile in MindSpore 2.10: "The type of input of the
MakeSlice operator must be int64"). An append in both branches of an ``if`` on a compile-time constant
(``if self.is_lstm:``) is allowed.

Rows stacked on another axis (``ops.stack(rows, 1)``, ``P.Stack(axis=1)``) are the buffer with its first axis
moved there, ``ops.moveaxis(buffer, 0, 1)``: the same data in the same places.

Statements between the loop and the stack that neither read nor bind the list stay where they are (``mask = 1 -
done`` before ``q = ops.stack(q_steps, 0)[1:]``): the list is the buffer from the loop on, and only the stack reads
it. Nothing else may reach the list by another way: no nested function or lambda of the function reads it, and no
``locals``/``vars``/``eval``/``exec`` call sits between the loop and the stack; nor may a statement in between
rebind a name the stack call is spelled with (``stack = ops.concat``).

Refused, each with its reason: several lists, a list not started as ``[]`` right before (in the same block), not
stacked by the first statement after the loop that uses it (one that may bind the list before it reads
it, other than one plain assignment such as ``acc = ops.stack(acc)[1:]``, is refused), or read anywhere else, an
appended value that is not a plain name (``h``, ``h[0]``), a start other than the literal 0 or a step other than 1,
and everything the Tensor-counter rewrite refuses (:mod:`ms_lint.rewrites.tensor_counter`).
"""
from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import assigned_in, read_after, read_name_nodes, read_names, statement_block
from ms_lint.analysis.shapes import WhileCounter, int_literal
from ms_lint.analysis.values import Kind
from ms_lint.cstutil import call_name_args, code_of, suite_statements
from ms_lint.diagnostics import UNSAFE, Fix
from ms_lint.rewrites.tensor_counter import TensorCounterBuilder, range_call
from ms_lint.rewrites.vmap import stack_axis
from ms_lint.walk import find, run_visitor

ZEROS = ("mindspore.ops.zeros",)
MOVEAXIS = ("mindspore.ops.moveaxis",)
SQUEEZE_PRIMITIVES = ("mindspore.ops.Squeeze", "mindspore.ops.operations.Squeeze",
                      "mindspore.ops.operations.array_ops.Squeeze")
SQUEEZE_FUNCTIONS = ("mindspore.ops.squeeze",)
MESSAGE = ("run the first step before the loop, write each step's row into a buffer allocated from it, and count "
           "the other steps with a Tensor so the loop is a real `while`: compiled once, each call may run slower "
           "(a compile-time/run-time trade-off; `ms-lint verify` measures it)")


def appended_lists(loop) -> List[str]:
    """Names ``acc`` of ``acc.append(...)`` calls anywhere in the loop's body, in source order, once each."""
    found: List[str] = []

    class _Appends(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name) \
                    and func.value.value not in found:
                found.append(func.value.value)

    run_visitor(loop.body, _Appends())
    return found


class PeeledBufferBuilder(TensorCounterBuilder):
    """The Tensor-counter builder, plus the peeled-buffer form for loops that grow one list."""

    def for_loop(self, loop: cst.For) -> Optional[Fix]:
        if not appended_lists(loop):
            return super().for_loop(loop)
        bounds = range_call(loop.iter)
        if bounds is None or not isinstance(loop.target, cst.Name) or loop.orelse is not None:
            self.refusal = "the loop is not `for i in range(...)` without `else`"
            return None
        start, stop, step = bounds
        if isinstance(start, str):  # ``range(n)``: 0 (read as a literal, never printed: ``_tensor_call``)
            start = cst.Integer(start)
        return self._peeled(loop, loop.target.value, start, stop, step, init=None, step_lines=set())

    def while_loop(self, loop: cst.While, counter: WhileCounter) -> Optional[Fix]:
        if not appended_lists(loop):
            return super().while_loop(loop, counter)
        if counter.operator != "<" or counter.step != 1 or loop.orelse is not None:
            self.refusal = "the loop is not `while i < n:` stepping by 1 without `else`"
            return None
        init, why = self._counter_start(loop, counter)
        if init is None:
            self.refusal = why or self.refusal
            return None
        step_lines = self._step_lines(loop, counter)
        body = list(suite_statements(loop.body))
        if len(step_lines) != 1 or id(body[-1]) not in step_lines:
            self.refusal = f"the counter `{counter.name}` is not stepped once, by the body's last line"
            return None
        return self._peeled(loop, counter.name, init.body[0].value, counter.bound, 1, init=init,
                            step_lines=step_lines)

    # -- the shared checks and the code --------------------------------------------------------------------------
    def _peeled(self, loop, counter: str, start: cst.BaseExpression, stop: cst.BaseExpression, step: int,
                init: Optional[cst.SimpleStatementLine], step_lines: Set[int]) -> Optional[Fix]:
        why, found = self._peel_refusal(loop, counter, start, stop, step)
        if why is not None:
            self.refusal = why
            return None
        acc, first, empty, stacked, call, sites, pairs, axis = found
        self.allowed_list = acc
        exempt = {id(stmt) for pair in pairs for stmt in pair}
        if not self._body_fits(loop, counter, step_lines | exempt):
            return None
        zeros = self._spell(ZEROS)
        moved = self._spell(MOVEAXIS) if axis != 0 else ("", ())
        counted = self._tensor_call(str(first + 1))
        if zeros is None or counted is None or moved is None:
            return None
        init_code, imports = counted
        imports = imports + zeros[1] + moved[1]
        body = list(suite_statements(loop.body))
        looped = _Rebuild(acc, counter, sites, pairs, step_lines, peel=None, zeros=zeros[0], stop=stop)
        peeled = _Rebuild(acc, counter, sites, pairs, step_lines, peel=first, zeros=zeros[0], stop=stop)
        loop_body = [stmt.visit(looped) for stmt in body]
        loop_body = [s for s in loop_body if not isinstance(s, cst.RemovalSentinel)]
        peel_body = [stmt.visit(peeled) for stmt in body]
        peel_body = _flatten([s for s in peel_body if not isinstance(s, cst.RemovalSentinel)])
        peel_body[0] = peel_body[0].with_changes(leading_lines=loop.leading_lines)
        new_init = cst.parse_statement(f"{counter} = {init_code}\n")
        edits: List[Tuple[cst.CSTNode, object]] = [(empty, None)]
        if isinstance(loop, cst.For):
            increment = cst.parse_statement(f"{counter} = {counter} + 1\n")
            while_loop = cst.While(test=cst.parse_expression(f"{counter} < {code_of(stop)}"),
                                   body=loop.body.with_changes(body=loop_body + [increment]),
                                   whitespace_after_while=cst.SimpleWhitespace(" "),
                                   whitespace_before_colon=loop.whitespace_before_colon)
            edits.append((loop, peel_body + [new_init, while_loop]))
        else:
            assert init is not None
            edits.append((init, init.with_changes(body=new_init.body)))
            edits.append((loop, peel_body + [loop.with_changes(leading_lines=[],
                                                               body=loop.body.with_changes(body=loop_body))]))
        if axis != 0:  # the rows stacked on another axis: the buffer (rows on axis 0) with that axis moved there
            edits.append((call, cst.parse_expression(f"{moved[0]}({acc}, 0, {axis})")))
        elif _rebinds_only(stacked, acc, call):
            edits.append((stacked, None))
        else:
            edits.append((call, cst.Name(acc)))
        return Fix(UNSAFE, MESSAGE, edits=tuple(edits), imports=imports)

    def _peel_refusal(self, loop, counter: str, start, stop, step: int):
        """(why not, None) or (None, (list name, start, its ``[]`` line, the stacking statement, the stack call,
        ids of the append lines, the slice-and-squeeze pairs))."""
        lists = appended_lists(loop)
        if len(lists) > 1:
            return "the body grows several lists", None
        acc = lists[0]
        known, first = int_literal(start)
        if not known or first is None:
            return f"the counter starts at `{code_of(start)}`, not an int literal (the first step is peeled)", None
        if first != 0:
            return f"the counter starts at {first}, not 0 (buffer row `i` would hold step `i + {first}`)", None
        if step != 1:
            return "the counter steps by more than 1", None
        body = list(suite_statements(loop.body))
        if read_names(stop) & assigned_in(body):
            return "the bound is recomputed by the body (a `while` reads it on every step)", None
        block, index = statement_block(self.context, loop)
        if block is None or index is None:
            return "the loop is not in a block of statements", None
        empty = next((stmt for stmt in reversed(block[:index]) if acc in assigned_in([stmt])), None)
        if not _is_empty_list(empty, acc):
            return f"`{acc}` does not start as `[]` before the loop in its block", None
        between = block[next(i for i, stmt in enumerate(block) if stmt is empty) + 1:index]
        if any(acc in read_names(stmt) for stmt in between):
            return f"`{acc}` is read between `{acc} = []` and the loop", None
        sites, why = self._append_sites(body, acc)
        if why is not None:
            return why, None
        reads = [n for n in read_name_nodes(loop.body) if n.value == acc]
        if len(reads) != len(sites):
            return f"the body reads `{acc}` while it grows (a buffer row is not written until its step)", None
        after = next((i for i in range(index + 1, len(block)) if acc in read_names(block[i]) | assigned_in([block[i]])),
                     None)
        if after is None:
            return f"`{acc}` is not stacked after the loop", None
        stacked = block[after]
        call = _stack_call(self.context, self.context.scope.owner_of.get(self.function), stacked, acc)
        if call is None:
            return (f"`{acc}` is not stacked by the first statement after the loop that uses it "
                    f"(`ops.stack({acc}, 0)`)"), None
        if acc in assigned_in([stacked]) and not _assigns_after_reading(stacked):
            return f"the statement that stacks `{acc}` may bind it before it reads it", None
        gap = block[index + 1:after]
        if any(_dynamic_scope_call(stmt) for stmt in gap):
            return f"a `locals`/`vars`/`eval`/`exec` call between the loop and the stack may read `{acc}`", None
        if read_names(call[1].func) & assigned_in(gap):
            return f"a statement between the loop and the stack rebinds `{code_of(call[1].func)}`", None
        if _closure_reads(self.function, acc):
            return f"a nested function or lambda reads `{acc}`", None
        axis, call = call
        rebound = _rebinds_only(stacked, acc, call) or (
            acc in assigned_in([stacked]) and _assigns_after_reading(stacked))  # later reads see the new value
        if not rebound and read_after(self.context, stacked, {acc}):
            return f"`{acc}` is read again after it is stacked", None
        pairs = _slice_squeeze_pairs(self.context, body, counter)
        return None, (acc, first, empty, stacked, call, sites, pairs, axis)

    def _append_sites(self, body, acc: str):
        """ids of the ``acc.append(v)`` lines (top level, or the two branches of an ``if`` on a compile-time
        constant), or a reason."""
        sites: Set[int] = set()
        for stmt in body:
            if _append_value(stmt, acc) is not None:
                sites.add(id(stmt))
            elif isinstance(stmt, cst.If) and acc in read_names(stmt):
                orelse = stmt.orelse
                if not isinstance(orelse, cst.Else) or self.values.kind(stmt.test) != Kind.CONST:
                    return None, (f"`{acc}` grows inside an `if` that is not an `if`/`else` on a compile-time "
                                  "constant")
                for branch in (stmt.body, orelse.body):
                    lines = [s for s in suite_statements(branch) if _append_value(s, acc) is not None]
                    if len(lines) != 1:
                        return None, f"a branch of `if {code_of(stmt.test)}` does not append to `{acc}` once"
                    sites.add(id(lines[0]))
        for stmt in body:
            for line in [stmt] + (list(suite_statements(stmt.body)) + list(suite_statements(stmt.orelse.body))
                                  if isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.Else) else []):
                if id(line) in sites:
                    value = _append_value(line, acc)
                    if not _plain(value):
                        return None, (f"the appended value `{code_of(value)}` is not a plain name (`h`, `h[0]`): the "
                                      "buffer is allocated from it")
        return sites, None


# -- code builders -----------------------------------------------------------------------------------------------
class _Rebuild(cst.CSTTransformer):
    """The body as the loop runs it (``acc[t] = v``, ``v = x[t]`` for a slice and squeeze, ``t = t + 1``) or, with
    ``peel`` set, as the peeled first step (the counter replaced by the literal, the append allocating the
    buffer, the step dropped)."""

    def __init__(self, acc, counter, sites, pairs, step_lines, peel, zeros, stop):
        super().__init__()
        self.acc, self.counter, self.sites, self.step_lines = acc, counter, sites, step_lines
        self.slices = {id(first): second for first, second in pairs}
        self.squeezes = {id(second) for _, second in pairs}
        self.peel, self.zeros, self.stop = peel, zeros, stop
        self.not_reads: Set[int] = set()

    def leave_SimpleStatementLine(self, original, updated):
        if id(original) in self.squeezes:
            return cst.RemovalSentinel.REMOVE
        if id(original) in self.step_lines:
            if self.peel is not None:
                return cst.RemovalSentinel.REMOVE
            return updated.with_changes(body=cst.parse_statement(f"{self.counter} = {self.counter} + 1\n").body)
        if id(original) in self.slices:
            assign = updated.body[0]
            source = assign.value.value  # ``x`` of ``x[t:t + 1]``
            index = cst.Integer(str(self.peel)) if self.peel is not None else cst.Name(self.counter)
            value = cst.Subscript(value=source, slice=[cst.SubscriptElement(slice=cst.Index(value=index))])
            return updated.with_changes(body=[assign.with_changes(value=value)])
        if id(original) in self.sites:
            value = code_of(_append_value(updated, self.acc))
            if self.peel is None:
                return updated.with_changes(body=cst.parse_statement(f"{self.acc}[{self.counter}] = {value}\n").body)
            allocate = cst.parse_statement(
                f"{self.acc} = {self.zeros}(({code_of(self.stop)},) + {value}.shape, {value}.dtype)\n")
            first = cst.parse_statement(f"{self.acc}[{self.peel}] = {value}\n")
            return cst.FlattenSentinel([allocate.with_changes(leading_lines=updated.leading_lines), first])
        return updated

    def visit_Attribute(self, node) -> None:
        self.not_reads.add(id(node.attr))  # ``obj.t``: an attribute's name, not the counter

    def visit_Arg(self, node) -> None:
        if node.keyword is not None:
            self.not_reads.add(id(node.keyword))

    def leave_Name(self, original, updated):
        if self.peel is not None and original.value == self.counter and id(original) not in self.not_reads:
            return cst.Integer(str(self.peel))
        return updated


def _flatten(statements):
    out = []
    for stmt in statements:
        if isinstance(stmt, cst.FlattenSentinel):
            out.extend(stmt.nodes)
        else:
            out.append(stmt)
    return out


# -- recognizers -------------------------------------------------------------------------------------------------
def _is_empty_list(stmt, acc: str) -> bool:
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return False
    assign = stmt.body[0]
    return (len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
            and assign.targets[0].target.value == acc and isinstance(assign.value, cst.List)
            and not assign.value.elements)


def _append_value(stmt, acc: str) -> Optional[cst.BaseExpression]:
    """``v`` when ``stmt`` is the line ``acc.append(v)``."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return None
    call = stmt.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "append"
            and isinstance(call.func.value, cst.Name) and call.func.value.value == acc):
        return None
    args = call_name_args(call)
    return args[0].value if len(args) == 1 == len(call.args) else None


def _plain(value) -> bool:
    """``h``, ``h[0]``, ``self.h``: a read the rewrite may repeat (allocation and first write)."""
    if isinstance(value, cst.Name):
        return True
    if isinstance(value, cst.Attribute):
        return _plain(value.value)
    if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index):
        known, _ = int_literal(value.slice[0].slice.value)
        return known and _plain(value.value)
    return False


def _stack_call(context, owner, stmt, acc: str):
    """(axis, the call) when ``stmt`` reads ``acc`` once, as the sequence a stack call stacks."""
    reads = [n for n in read_name_nodes(stmt) if n.value == acc]
    if len(reads) != 1:
        return None
    found = None
    for call in _calls(stmt):
        args = call_name_args(call)
        if args and args[0].value is reads[0]:
            axis = stack_axis(context, owner, call, reads[0])
            if axis is not None:
                found = (axis, call)
    return found


def _assigns_after_reading(stmt) -> bool:
    """One plain assignment (``q = self.stack(q)[:, 1:]``) with no ``:=`` in its value: the value is read before
    its targets are bound."""
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], (cst.Assign, cst.AnnAssign)) and stmt.body[0].value is not None
            and not find(stmt.body[0].value, cst.NamedExpr))


_DYNAMIC_SCOPE = frozenset(("locals", "vars", "eval", "exec"))


def _dynamic_scope_call(stmt: cst.CSTNode) -> bool:
    """A call of ``locals``, ``vars``, ``eval`` or ``exec``: code that can read a local by its name's text."""
    return any(isinstance(call.func, cst.Name) and call.func.value in _DYNAMIC_SCOPE for call in _calls(stmt))


def _closure_reads(function: cst.FunctionDef, name: str) -> bool:
    """Does a function or lambda nested in ``function`` read ``name`` (its own parameters aside)?"""
    nested = find(function.body, (cst.FunctionDef, cst.Lambda), prune=(cst.FunctionDef, cst.Lambda))
    return any(name in read_names(node.body if isinstance(node, cst.FunctionDef) else node) for node in nested)


def _calls(node) -> List[cst.Call]:
    out: List[cst.Call] = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            out.append(call)

    run_visitor(node, _Calls())
    return out


def _rebinds_only(stmt, acc: str, call) -> bool:
    """``acc = stack(acc)``: the statement only turns the list into the stacked tensor under the same name."""
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].targets[0].target, cst.Name)
            and stmt.body[0].targets[0].target.value == acc and stmt.body[0].value is call)


def _slice_squeeze_pairs(context, body, counter: str) -> List[Tuple[cst.SimpleStatementLine, cst.SimpleStatementLine]]:
    """``v = x[t:t + 1]`` (or ``x[t:t + 1:1]``) directly followed by ``v = ops.Squeeze(0)(v)``
    (``ops.squeeze(v, 0)``, ``v.squeeze(0)``): together ``v = x[t]``."""
    pairs = []
    for first, second in zip(body, body[1:]):
        name = _unit_slice(first, counter)
        if name is not None and _squeezes(context, second, name):
            pairs.append((first, second))
    return pairs


def _single_assign(stmt) -> Optional[Tuple[str, cst.BaseExpression]]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign) \
            and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].targets[0].target, cst.Name):
        return stmt.body[0].targets[0].target.value, stmt.body[0].value
    return None


def _unit_slice(stmt, counter: str) -> Optional[str]:
    assigned = _single_assign(stmt)
    if assigned is None:
        return None
    name, value = assigned
    if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and len(value.slice) == 1
            and isinstance(value.slice[0].slice, cst.Slice)):
        return None
    piece = value.slice[0].slice
    lower, upper, stride = piece.lower, piece.upper, piece.step
    if not (isinstance(lower, cst.Name) and lower.value == counter and isinstance(upper, cst.BinaryOperation)
            and isinstance(upper.operator, cst.Add) and isinstance(upper.left, cst.Name)
            and upper.left.value == counter and int_literal(upper.right) == (True, 1)):
        return None
    if stride is not None and int_literal(stride) != (True, 1):
        return None
    return name


def _squeezes(context, stmt, name: str) -> bool:
    """``name = ops.Squeeze(0)(name)`` / ``ops.squeeze(name, 0)`` / ``name.squeeze(0)``."""
    assigned = _single_assign(stmt)
    if assigned is None or assigned[0] != name or not isinstance(assigned[1], cst.Call):
        return False
    call = assigned[1]
    args = call.args
    if any(arg.keyword is not None or arg.star for arg in args):
        return False
    func = call.func
    if isinstance(func, cst.Call) and context.imports.qualify(func.func) in SQUEEZE_PRIMITIVES:
        return (len(args) == 1 and _is_name(args[0].value, name) and len(func.args) == 1
                and func.args[0].keyword is None and int_literal(func.args[0].value) == (True, 0))
    if context.imports.qualify(func) in SQUEEZE_FUNCTIONS:
        return len(args) == 2 and _is_name(args[0].value, name) and int_literal(args[1].value) == (True, 0)
    if isinstance(func, cst.Attribute) and func.attr.value == "squeeze" and _is_name(func.value, name):
        return len(args) == 1 and int_literal(args[0].value) == (True, 0)
    return False


def _is_name(node, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name
