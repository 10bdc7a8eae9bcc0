"""The ``ops.ForiLoop(..., unroll=False)`` rewrite of MSL103: a long constant loop compiled once, run as a loop.

Offered (always as *unsafe*: measured 5-13x slower per call on CPU) only for bodies that are a pure update of
loop-carried variables::

    h = x * 0                                  # every carried name starts as a Tensor
    for _ in range(200):                       # range(N) or range(a, b); the index unused
        y = ops.tanh(h)                        # plain assignments only
        h = y * w + h                          # w: a Tensor read but not written -> passed through the state

becomes a module-level body function and one call::

    def _step_body(_, state):
        h, w = state
        y = ops.tanh(h)
        h = y * w + h
        return h, w

    h, _ = ops.ForiLoop()(0, 200, _step_body, (h, w), unroll=False)

Facts measured on MindSpore 2.10 (CPU) that shape this: ``unroll=False`` is required (the default unrolls and
gains nothing); the body must be a named ``def`` (a lambda fails) at module level (a nested ``def`` calling an
op fails with ``The pointer[cnode_abs] is null``); with ``unroll=False`` the body cannot read the enclosing
function's tensors by closure (``Illegal AnfNode for evaluating``), so every tensor it reads travels in the
state; ``self`` and cells cannot be used inside it at all, so such bodies are refused.
"""
from __future__ import annotations

import builtins
from typing import List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.context import ModuleContext
from ms_lint.cstutil import call_name_args, suite_statements
from ms_lint.diagnostics import UNSAFE, Fix
from ms_lint.analysis.dataflow import (
    assigned_in, binds_by_walrus, declared_nonlocal, first_reads, local_names, plain_assignment, read_after, read_name_nodes, read_names, statement_block, written_names,
)
from ms_lint.analysis.effects import EffectChecker, calls_in
from ms_lint.cstutil import code_of
from ms_lint.rewrites.common_loops import fresh_local, fresh_name
from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.walk import replace_nodes

# Calls that may change a carried value's shape (ForiLoop needs the same shape and type every step).
SHAPE_CHANGING = {"concat", "cat", "stack", "expand_dims", "unsqueeze", "tile", "reshape", "pad", "broadcast_to",
                  "squeeze", "flatten", "view", "repeat", "repeat_interleave", "append", "extend", "Concat", "Stack",
                  "ExpandDims", "Tile", "Reshape", "Pad", "BroadcastTo", "Squeeze", "Flatten", "transpose",
                  "Transpose", "permute", "swapaxes", "t", "T", "split", "chunk", "unstack", "gather", "slice"}
BUILTIN_NAMES = set(dir(builtins))


class ForiLoopBuilder:
    def __init__(self, context: ModuleContext, function: cst.FunctionDef, values: FunctionValues):
        self.context = context
        self.function = function
        self.values = values
        self.owner = context.scope.owner_of.get(function)

    def for_loop(self, loop: cst.For) -> Optional[Fix]:
        bounds = _range_bounds(loop)
        if bounds is None or not isinstance(loop.target, cst.Name) or loop.orelse is not None:
            return None
        index = loop.target.value
        body = list(suite_statements(loop.body))
        if not body or not all(plain_assignment(stmt) for stmt in body):
            return None
        written = assigned_in(body)
        reads = set()
        for stmt in body:
            reads |= read_names(stmt)
        if index in reads or index in written or read_after(self.context, loop, {index}):
            return None
        if EffectChecker(self.context, self.owner).reason(loop.body) is not None:
            return None
        if binds_by_walrus(loop.body) or declared_nonlocal(self.context, loop, written | reads | {index}):
            return None  # the body moves to a module-level def: its bindings would no longer reach these names
        if any(_last_name(call.func) in SHAPE_CHANGING for call in calls_in(loop.body)):
            return None
        carried = self._ordered(body, (first_reads(body) & written) | read_after(self.context, loop, written))
        if not carried:
            return None
        locals_ = local_names(self.function)
        passed: List[str] = []
        for name in self._ordered(body, reads - written):
            if name in locals_:
                passed.append(name)
            elif not self._is_global(name):
                return None
        if any(not self._tensor_at_loop(loop, name) for name in carried + passed):
            return None
        top = self._top_statement()
        if top is None:
            return None
        return self._emit(loop, bounds, body, carried, passed, top, reads | written)

    # -- checks ----------------------------------------------------------------------------------------------
    def _is_global(self, name: str) -> bool:
        scope = self.context.scope
        return (name in self.context.imports.aliases or name in self.context.constants.nodes
                or name in scope.module_functions or name in scope.classes
                or (name in BUILTIN_NAMES and name not in _module_level_names(self.context)))

    def _tensor_at_loop(self, loop: cst.For, name: str) -> bool:
        """Is ``name`` a Tensor when the loop starts? Its last binding before the loop, in the loop's block,
        must be a Tensor expression; or it is a Tensor parameter that nothing outside the loop rebinds."""
        block, index = statement_block(self.context, loop)
        if block is None or index is None:
            return False
        for stmt in reversed(block[:index]):
            if name not in assigned_in([stmt]):
                continue
            if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
                return False
            small = stmt.body[0]
            if (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)):
                return self.values.kind(small.value) is Kind.TENSOR
            return False
        if name not in self.values.parameters or self.values.kind(cst.Name(name)) is not Kind.TENSOR:
            return False
        outside = assigned_in(suite_statements(self.function.body)) - assigned_in(suite_statements(loop.body))
        return name not in outside and not self._assigned_outside_loop(loop, name)

    def _assigned_outside_loop(self, loop: cst.For, name: str) -> bool:
        from ms_lint.cstutil import walk_statements

        inside = {id(stmt) for stmt in walk_statements(suite_statements(loop.body), into_defs=False)}
        for stmt in walk_statements(suite_statements(self.function.body), into_defs=False):
            if id(stmt) not in inside and stmt is not loop and name in written_names(stmt):
                return True
        return False

    @staticmethod
    def _ordered(body: Sequence[cst.BaseStatement], names: Set[str]) -> List[str]:
        order: List[str] = []
        for stmt in body:
            for node in read_name_nodes(stmt):
                if node.value in names and node.value not in order:
                    order.append(node.value)
            for name in written_names(stmt):
                if name in names and name not in order:
                    order.append(name)
        return order + sorted(names - set(order))

    def _top_statement(self) -> Optional[cst.BaseStatement]:
        owner = self.owner
        top = self.function if owner is None else self.context.scope.classes[owner].node
        return top if any(stmt is top for stmt in self.context.module.body) else None

    # -- building ------------------------------------------------------------------------------------------
    def _emit(self, loop: cst.For, bounds: Tuple[cst.BaseExpression, cst.BaseExpression],
              body: List[cst.BaseStatement], carried: List[str], passed: List[str], top: cst.BaseStatement,
              body_names: Set[str]) -> Optional[Fix]:
        spelled = self.context.spell("mindspore.ops.ForiLoop")
        if spelled is None:
            return None
        fori, imports = spelled
        state = carried + passed
        base = f"_{self.function.name.value}_body" if self.owner is None else \
            f"_{self.owner}_{self.function.name.value}_body"
        fn_name = fresh_name(self.context, base)
        index_param = "_" if "_" not in body_names else fresh_local("_index", body_names)
        statements: List[cst.BaseStatement] = []
        if len(state) == 1:
            state_param = state[0]
        else:
            state_param = fresh_local("state", body_names | set(state))
            statements.append(cst.parse_statement(f"{', '.join(state)} = {state_param}\n"))
        statements.extend(body)
        statements.append(cst.parse_statement(f"return {', '.join(state)}\n"))
        definition = cst.FunctionDef(
            name=cst.Name(fn_name),
            params=cst.Parameters(params=[cst.Param(cst.Name(index_param)), cst.Param(cst.Name(state_param))]),
            body=cst.IndentedBlock(body=statements),
            leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
        )
        lower, upper = (code_of(bounds[0]), code_of(bounds[1]))
        init = state[0] if len(state) == 1 else "(" + ", ".join(state) + ")"
        reuse_underscore = "_" not in read_names(self.function)
        targets = [name if name in carried or not reuse_underscore else "_" for name in state]
        call = f"{', '.join(targets)} = {fori}()({lower}, {upper}, {fn_name}, {init}, unroll=False)\n"
        replacement = cst.parse_statement(call).with_changes(leading_lines=loop.leading_lines)
        new_top = replace_nodes(top, {loop: replacement})[0]
        message = "run the loop with ops.ForiLoop(unroll=False): compiles once, runs slower per call"
        return Fix(UNSAFE, message, edits=((top, [definition, new_top]),), imports=imports)


def _module_level_names(context: ModuleContext) -> Set[str]:
    names: Set[str] = set()
    for stmt in context.module.body:
        names.update(written_names(stmt))
    return names


def _range_bounds(loop: cst.For) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(lower, upper) of ``range(n)`` / ``range(a, b)`` (no step, no keywords)."""
    it = loop.iter
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"):
        return None
    args = call_name_args(it)
    if len(args) != len(it.args) or not 1 <= len(args) <= 2:
        return None
    if len(args) == 1:
        return cst.Integer("0"), args[0].value
    return args[0].value, args[1].value


def _last_name(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Call):
        return _last_name(func.func)
    return ""
