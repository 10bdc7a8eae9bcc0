"""MSL102 loop-over-tensor-sequence: a per-element loop or comprehension over gradients / parameters / optimizer
state in graph code.

Graph mode unrolls a Python loop over a tuple into one copy of the body per element. For tuples whose length grows
with the model (one entry per parameter) that is hundreds of copies: measured on MindSpore 2.10 (CPU), a loop over
200 gradients compiles 19x slower than ``ops.HyperMap``, and at 500 it fails (``Exceed function call depth
limit``). The fix maps the per-element work with ``ops.HyperMap`` (see :mod:`ms_lint.rewrites.hypermap`); loops
that update each element's state, or branch on a constant, get one ``ops.MultitypeFuncGraph`` per decided branch
(see :mod:`ms_lint.rewrites.multitype_update`).

Which sequences count (:class:`_Origins`): tuples the value model knows are tensor sequences (``ParameterTuple``,
``trainable_params()``), names of gradient/parameter/optimizer-state sequences (``grads``, ``self.moments``,
``zip(self.params, grads)``), helper parameters fed such sequences, and literal tuples of more than 8 tensors.
Not: ``nn.CellList``/``SequentialCell``/lists of Cells, short literal tuples, config values, ``*inputs``, and
loops whose body does no tensor work on the element (bookkeeping).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.cstutil import (all_params, call_name_args, cut, positional_params, short_code, suite_statements,
                             walk_statements)
from ms_lint.diagnostics import SAFE, UNSAFE, Fix
from ms_lint.rewrites.addn_sum import MESSAGE as SUM_MESSAGE, accumulation
from ms_lint.rewrites.hypermap import plan_map
from ms_lint.rewrites.multitype_update import plan_update
from ms_lint.rewrites.where import CELL, EFFECT, RANDOM, UNKNOWN, classify_call, comments_inside
from ms_lint.prefilter import GRAPH_CODE
from ms_lint.rules.base import Invalid, Rule
from ms_lint.analysis.dataflow import body_bindings, enclosing_statement, read_after, written_names
from ms_lint.analysis.effects import EffectChecker
from ms_lint.analysis.loops import calls_cell_picked_by
from ms_lint.analysis.per_element import assigned_names
from ms_lint.analysis.reaching import ENTRY, reaching_values
from ms_lint.analysis.narrowing import narrowed_names
from ms_lint.analysis.shapes import (ShapeResolver, init_assignment, init_value, parents_in, surely_tensor,
                                    tensor_by_callers)
from ms_lint.treememo import tree_memo
from ms_lint.walk import find, run_visitor
from ms_lint.analysis.values import OPTIMIZER_BASES, FunctionValues, Kind, inherits_base, returned_tuples

# Sequences with one entry per parameter. Plural forms only: ``weight``/``moment`` are single tensors.
SEQUENCE_NAME = re.compile(
    r"^_?(?:[a-z0-9]+_)*(?:grads|gradients|params|parameters|weights|moments|moment[12]|accums?|accumulators|"
    r"variances|velocities|momentums|exp_avgs?|exp_avg_sqs?|trainable_params|parameter_tuple)(?:_[a-z0-9]+)*$"
)
LITERAL_LIMIT = 8
MAPPERS = {"mindspore.ops.HyperMap", "mindspore.ops.Map"}
BOOKKEEPING_METHODS = {"append", "extend", "insert", "pop", "keys", "items", "values", "get", "update",
                       "setdefault", "format", "index", "count", "copy"}
LIST_AGNOSTIC_CALLS = {"tuple", "len"}
LIST_AGNOSTIC_OPS = {"mindspore.ops.addn", "mindspore.ops.stack", "mindspore.ops.concat", "mindspore.ops.cat",
                     "mindspore.ops.AddN", "mindspore.ops.Stack", "mindspore.ops.Concat",
                     "mindspore.mint.cat", "mindspore.mint.concat", "mindspore.mint.stack"}
WHY = ("graph mode unrolls it into one copy of the body per element, and this sequence grows with the model "
       "(MindSpore 2.10: 19x slower to compile than ops.HyperMap at 200 tensors; at 500 the loop fails with "
       "`Exceed function call depth limit`)")
UPDATE_MESSAGE = "apply each element's update with one ops.MultitypeFuncGraph mapped by ops.HyperMap"
BRANCH_MESSAGE = ("map the per-element work with ops.HyperMap over ops.MultitypeFuncGraph functions, the constant "
                  "test decided once around the map")



@dataclass
class Origin:
    description: str
    container: str  # "tuple", "list", or "unknown" (a list passed to a jit function stays a list)
    # why the loop gets no rewrite whatever its body is (a caller in another module gives the evidence), or None
    unfixable: Optional[str] = None


# What a parameter sequence is built from in ``__init__``: ``ParameterTuple(...)``, ``net.trainable_params()``,
# ``self.params.clone(...)``, ``optimizer.parameters``. Anything else (``config.loss_weights``, a literal, a dict
# entry) is not evidence, whatever the attribute is called.
PARAMETER_SOURCES = {"trainable_params": "list", "get_parameters": "list", "untrainable_params": "list",
                     "clone": "tuple"}
PARAMETER_ATTRIBUTES = {"parameters": "tuple", "_parameters": "tuple", "weights": "tuple", "params": "tuple"}
# ``__init__(self, params)``: cells are handed their parameters under these names (``weights`` is as often a
# list of loss weights).
PARAMETER_ARGUMENT = re.compile(r"^_?(?:[a-z0-9]+_)*(?:params|parameters|grads|gradients)$")
GRAD_NAME = re.compile(r"grad")  # grads, gradients, accu_grads, grads_and_vars: gradients whatever made them
GRAD_MAKERS = {"mindspore.ops.GradOperation", "mindspore.ops.grad", "mindspore.ops.value_and_grad"}
LAYER_COUNT = re.compile(r"(?i)layer|depth|block")  # ``num_layers``, ``config.num_hidden_layers``, ``depth``


# Why a sequence that is a list grown by ``append`` gets no rewrite: an append under a test or after a ``break`` makes
# it shorter than what it comes from, and ``zip`` of it stops where ``HyperMap`` refuses (a review measured both).
GROWN_UNFIXABLE = ("it is a list the code grows by `append`, which may be shorter than the sequence it comes from: "
                   "`zip` stops at the shortest, `HyperMap` refuses lists of different lengths")


class _Origins:
    """Is an expression a tensor sequence whose length grows with the model? (description, container)"""

    def __init__(self, ctx, values: FunctionValues):
        self.ctx = ctx
        self.values = values

    def of(self, expr: cst.BaseExpression, depth: int = 0) -> Optional[Origin]:
        if depth > 4:
            return None
        if self._mapped(expr):  # the value model calls a HyperMap result a Tensor: it is a sequence
            return self._call(expr, depth) if isinstance(expr, cst.Call) else self._name(expr, Kind.UNKNOWN, depth)
        if isinstance(expr, cst.Name) and expr.value not in self.values.parameters:
            item = self._sub_cell_item(expr, depth)  # before the kind: a cell's result items all read as Tensors
            if item is not None:
                return item
        kind = self.values.kind(expr)
        if kind is Kind.CONST and isinstance(expr, cst.Name) and self.values.grown_list_kind(expr) is not None:
            found = self._name(expr, Kind.TENSOR_SEQ, depth)  # ``decoded = []`` grown by appending Tensors
            return Origin(found.description, found.container, found.unfixable or GROWN_UNFIXABLE) if found else None
        if kind in (Kind.CELL_SEQ, Kind.CELL, Kind.CONST, Kind.OP, Kind.TENSOR) or kind.value == "const-op":
            return None
        if isinstance(expr, (cst.Tuple, cst.List)):
            count = len(expr.elements)
            if count > LITERAL_LIMIT and kind is Kind.TENSOR_SEQ:
                return Origin(f"a literal of {count} tensors", "tuple" if isinstance(expr, cst.Tuple) else "list")
            return None
        if isinstance(expr, cst.Subscript):
            if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice):
                return self.of(expr.value, depth + 1)
            return None
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)) and kind is Kind.TENSOR_SEQ:
            return self._comprehension(expr, depth)
        if (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply)
                and isinstance(expr.left, (cst.List, cst.Tuple)) and kind is not Kind.CONST):
            count = self.values.fold(expr.right)  # ``[h0] * self.forecast_steps``
            if count is not None and count * len(expr.left.elements) > LITERAL_LIMIT:
                return Origin(f"a list of {count * len(expr.left.elements)} tensors", "list")
            return None
        if isinstance(expr, cst.Call):
            return self._call(expr, depth)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, kind)
        if isinstance(expr, cst.Name):
            return self._name(expr, kind, depth)
        return None

    def _call(self, expr: cst.Call, depth: int) -> Optional[Origin]:
        func = expr.func
        args = call_name_args(expr)
        if isinstance(func, cst.Name) and func.value in ("tuple", "list", "reversed") and len(args) == 1:
            inner = self.of(args[0].value, depth + 1)
            if inner is None:
                return None
            container = {"tuple": "tuple", "list": "list"}.get(func.value, inner.container)
            return Origin(inner.description, container, inner.unfixable)
        if self._is_mapper(func):  # ops.HyperMap()(f, grads): a tuple as long as grads
            for arg in args[1:]:
                inner = self.of(arg.value, depth + 1)
                if inner is not None:
                    return inner
            return None
        qualified = self.ctx.imports.qualify(func)
        if qualified == "mindspore.ParameterTuple":
            return Origin(f"`{short_code(expr)}`", "tuple")
        if self.values.kind(func) is Kind.GRAD_FN:  # GradOperation(get_by_list=True)(net, weights)(...)
            return Origin(f"the gradients `{short_code(expr)}` (one per weight)", "tuple")
        if isinstance(func, cst.Attribute):
            if func.attr.value in ("trainable_params", "get_parameters") and _is_self(func.value):
                return Origin(f"`{short_code(expr)}`", "list")
            if func.attr.value == "clone":
                inner = self.of(func.value, depth + 1)
                return Origin(f"`{short_code(expr)}`", "tuple", inner.unfixable) if inner else None
        return None

    def _comprehension(self, expr, depth: int) -> Optional[Origin]:
        """``[f(x[i]) for i in range(x.shape[0])]``: one tensor per row of ``x``; ``[g(h) for h in seq]``: as long
        as ``seq``."""
        clause = expr.for_in
        if clause.inner_for_in is not None or clause.ifs:
            return None
        iterable = clause.iter
        if (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"
                and len(iterable.args) == 1 and any(a.attr.value == "shape" for a in find(iterable, cst.Attribute))):
            return Origin(f"a list with one tensor per `{short_code(iterable.args[0].value)}`", "list")
        inner = self.of(iterable, depth + 1)
        return Origin(inner.description, "list", inner.unfixable) if inner is not None else None

    def _mapped(self, expr: cst.BaseExpression) -> bool:
        """``ops.HyperMap()(f, seq)``, or a local name bound only to such calls."""
        if isinstance(expr, cst.Call):
            return self._is_mapper(expr.func)
        if isinstance(expr, cst.Name) and expr.value not in self.values.parameters:
            bound = _bindings(self.values.func, expr.value)
            return bool(bound) and all(isinstance(v, cst.Call) and self._is_mapper(v.func) for v in bound)
        return False

    def _is_mapper(self, func: cst.BaseExpression) -> bool:
        value = func.func if isinstance(func, cst.Call) else None
        if isinstance(func, cst.Attribute) and _is_self(func.value):
            value = init_value(self.ctx, self.values.owner, func.attr.value)
            value = value.func if isinstance(value, cst.Call) else None
        return value is not None and self.ctx.imports.qualify(value) in MAPPERS

    def _built_by_loop(self, name: str, depth: int) -> Optional[Origin]:
        """``out += (f(g),)`` / ``out.append(...)`` in a loop over a model-sized sequence: as long as it."""
        for stmt in walk_statements(suite_statements(self.values.func.body), into_defs=False):
            if not isinstance(stmt, cst.For):
                continue
            appended = [found[1] for found in map(_collection, (
                small for inner in walk_statements(suite_statements(stmt.body), into_defs=False)
                for small in (inner.body if isinstance(inner, cst.SimpleStatementLine) else ())))
                if found is not None and found[0] == name]
            if not appended:
                continue
            header = parse_header(stmt.iter, stmt.target)
            found = self.of_length(header.length, depth + 1) if header.length is not None else next(
                (o for o in (self.of(seq, depth + 1) for seq in header.sequences) if o is not None), None)
            if found is None and header.length is None:
                found = self._rows_of(stmt, header, appended) or self._per_layer(stmt, header, appended, name)
            if found is not None:
                return found
        return None

    def _rows_of(self, loop: cst.For, header: "Header", appended: List[cst.BaseExpression]) -> Optional[Origin]:
        """A loop over the rows of one certain Tensor that appends one Tensor per row (``appended``: what it adds to
        the list, each a Tensor) (``zip(x,
        duration)`` in mindaudio's ``LengthRegulator.LR``, where a holder passes ``x`` and ``duration`` from ops): a
        list with one tensor per row. The evidence MSL101 asks of a loop over a Tensor (``surely_tensor``,
        ``tensor_by_callers``), and its exemptions: a loop that calls a cell per step (a ``CellList`` zipped in,
        ``seq[i](...)``), one under an ``isinstance(x, list)`` test, one that may stop early. Never fixed: a helper
        handed such a list may be handed the Tensor itself elsewhere, which ``HyperMap`` would not walk by rows."""
        func = self.values.func
        if any(self.values.kind(value) is not Kind.TENSOR for value in appended):
            return None  # ``lens.append(r.shape[0])``: Python ints
        if (find(loop.body, (cst.Break, cst.Return), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
                or any(self.values.kind(seq) is Kind.CELL_SEQ for seq in header.sequences)
                or any(isinstance(call.func, cst.Subscript) for call in find(loop.body, cst.Call))):
            return None
        narrowed = narrowed_names(self.ctx, loop, func, parents_in(func).get)
        resolver = ShapeResolver(self.ctx, func, self.values)
        for seq in header.sequences:
            if isinstance(seq, cst.Name) and seq.value in narrowed:
                continue
            if surely_tensor(resolver, seq, func) or tensor_by_callers(resolver, seq, func):
                return Origin(f"a list with one tensor per row of `{short_code(seq)}`", "list",
                              f"it holds one tensor per row of `{short_code(seq)}`: where the helper is handed the "
                              "Tensor itself, `HyperMap` would not walk its rows")
        return None

    def _per_layer(self, loop: cst.For, header: "Header", appended: List[cst.BaseExpression], name: str
                   ) -> Optional[Origin]:
        """``for layer in self.layers: h = layer(h); all_hidden += (h,)``: one output per layer of a ``CellList``
        built over ``range(N)``, N a count of layers (``config.num_hidden_layers``: not a small literal). Such a
        tuple is as long as the model is deep (cpmant's ``all_attentions``, 48 by default). Not when the loop may
        skip or stop (``continue``, ``break``, ``return``), nor when an append sits in an inner loop or under a
        test of anything the loop binds (the layer, its index, a counter kept by hand: EoMT keeps the outputs of
        the last ``config.num_blocks`` layers only, a backbone those of ``self.out_indices``). Never fixed: the
        items are what each layer returns, which ms-lint does not prove are all Tensors."""
        if len(header.sequences) != 1 or header.elements is None or len(header.elements) != 1:
            return None
        seq = header.sequences[0]
        if not (isinstance(seq, cst.Attribute) and _is_self(seq.value) and self.values.kind(seq) is Kind.CELL_SEQ):
            return None
        element = header.elements[0]
        nested = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
        guards = _append_guards(suite_statements(loop.body), name)
        bound_here = set(header.names).union(*(written_names(stmt) for stmt in walk_statements(
            suite_statements(loop.body), into_defs=False)))
        if (find(loop.body, (cst.Break, cst.Return, cst.Continue), prune=nested) or guards is None
                or _mentions(guards, bound_here)
                or not any(isinstance(c.func, cst.Name) and c.func.value == element for c in find(loop.body, cst.Call))
                or any(self.values.kind(value) is Kind.CONST for value in appended)):
            return None
        count = self._layer_count(seq.attr.value)
        if count is None:
            return None
        where = f"`self.{seq.attr.value}`"
        return Origin(f"one output per layer of {where}", "unknown",
                      f"it holds one output per layer of {where} ({count}), each what that layer returns, which "
                      "ms-lint does not prove is a Tensor")

    def _layer_count(self, attr: str) -> Optional[str]:
        """``N`` of ``self.<attr> = nn.CellList([Block(...) for _ in range(N)])`` (or of a list comprehension bound
        to a local first) when it is a count of layers: more than LITERAL_LIMIT when it folds, else spelled as one
        (``num_layers``, ``config.num_hidden_layers``, ``depth``)."""
        found = init_assignment(self.ctx, self.values.owner, attr)
        if found is None:
            return None
        value, method = found
        if not (isinstance(value, cst.Call) and value.args
                and self.ctx.imports.qualify(value.func) in ("mindspore.nn.CellList", "mindspore.nn.SequentialCell")):
            return None
        builder = self.ctx.scope.owner_of.get(method) if method.name.value == "__init__" else None
        built = value.args[0].value
        if isinstance(built, cst.Name):
            bound = _bindings(method, built.value)
            built = bound[0] if len(bound) == 1 else None
        if not (isinstance(built, (cst.ListComp, cst.GeneratorExp)) and built.for_in.inner_for_in is None
                and not built.for_in.ifs):
            return None
        iterable = built.for_in.iter
        if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name)
                and iterable.func.value == "range" and len(iterable.args) == 1 and iterable.args[0].keyword is None):
            return None
        count = iterable.args[0].value
        if self._counts_entries(count, method):
            return None  # ``range(len(depths))``, ``self.num_layers = len(depths)``: one per stage of a config list
        folded = self.ctx.attributes.fold_in(method, builder, count)
        if folded is None and _is_self(getattr(count, "value", None)):
            folded = self.values.fold(count)
        if (folded is None and builder is not None and isinstance(count, cst.Name) and self.ctx.project is not None
                and count.value in {param.name.value for param in method.params.params}):
            folded = self.ctx.project.constructor_int(builder, count.value)[0]  # a required ``num_blocks``
        if folded is None and builder is None and isinstance(count, cst.Name) and count.value in {
                param.name.value for param in all_params(method)}:
            return None  # a parameter of a helper method: what its callers pass is not read here
        if folded is not None:
            return f"{folded} layers" if folded > LITERAL_LIMIT else None
        return f"`{short_code(count)}`" if LAYER_COUNT.search(short_code(count)) else None

    def _counts_entries(self, count: cst.BaseExpression, method: cst.FunctionDef) -> bool:
        """``len(...)``, or ``self.<attr>`` / a local of ``method`` bound once to it."""
        if isinstance(count, cst.Attribute) and _is_self(count.value):
            count = init_value(self.ctx, self.values.owner, count.attr.value)
        elif isinstance(count, cst.Name):
            bound = _bindings(method, count.value)
            count = bound[0] if len(bound) == 1 else count
        return isinstance(count, cst.Call) and isinstance(count.func, cst.Name) and count.func.value == "len"

    def _sub_cell_item(self, use: cst.Name, depth: int) -> Optional[Origin]:
        """``hidden, all_attentions = self.encoder(x)``: an item of what a sub-cell returns (a Cell class of this
        module whose every ``return`` is a tuple display as wide as the target) is what its ``construct`` gives
        there: a tuple it builds per layer is one here too. The value model calls such items Tensors, so this is
        asked before the kind."""
        statements = _binding_statements(self.values, use)
        if not statements:
            return None
        found: Optional[Origin] = None
        for stmt in statements:
            unpacked = _unpacked_call(stmt, use.value)
            if unpacked is None:
                return None
            call, position, width = unpacked
            sub_cell = self.values.sub_cell(call)
            if sub_cell is None:
                return None
            made, construct = sub_cell
            model = self.ctx.values(construct)
            tuples = returned_tuples(model)
            if tuples is None or len(tuples[0]) != width:
                return None
            for items in tuples:
                inner = _Origins(self.ctx, model).of(items[position].value, depth + 1)
                if inner is None:
                    return None
                found = found or Origin(f"`{use.value}`", "unknown",
                                        f"`{use.value}` is what the sub-cell `{made}.construct` returns as "
                                        f"`{cut(short_code(items[position].value), 30)}`, and a loop over another "
                                        "cell's result is not rewritten"
                                        + (f"; {inner.unfixable}" if inner.unfixable else ""))
        return found

    def _attribute(self, expr: cst.Attribute, kind: Kind) -> Optional[Origin]:
        if not _is_self(expr.value):
            return None
        attr = expr.attr.value
        assigned = _self_assignments(self.ctx, self.values.owner, attr)
        value = assigned[0] if len(assigned) == 1 else None
        if isinstance(value, (cst.Tuple, cst.List)):  # a literal in __init__: its length is fixed
            return self.of(value, 1) if len(value.elements) > LITERAL_LIMIT else None
        if kind is Kind.TENSOR_SEQ:
            containers = {self._source_container(v) for v in assigned} - {None}
            container = containers.pop() if len(containers) == 1 else "unknown"
            if not assigned and self._inherits_optimizer() and attr in ("parameters", "_parameters"):
                container = "tuple"  # nn.Optimizer.__init__: ParameterTuple
            return Origin(f"`self.{attr}`", container)
        if kind is not Kind.UNKNOWN or not SEQUENCE_NAME.match(attr):
            return None
        if not assigned:  # set by a base class this module does not show: the name is all there is
            return Origin(f"`self.{attr}`", "unknown")
        containers = [self._source_container(v) for v in assigned]
        if any(c is None for c in containers):
            return None  # ``self.loss_weights = config.loss_weights``: not a parameter sequence
        return Origin(f"`self.{attr}`", containers[0] if len(set(containers)) == 1 else "unknown")

    def _source_container(self, value: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """The container of a parameter sequence assigned in ``__init__`` ("unknown" when it is one but its
        container is not visible), or None when the value is not visibly a parameter sequence."""
        if depth > 3:
            return None
        if isinstance(value, cst.Call):
            if self.ctx.imports.qualify(value.func) == "mindspore.ParameterTuple":
                return "tuple"
            if isinstance(value.func, cst.Name) and value.func.value in ("tuple", "list") and value.args:
                inner = self._source_container(value.args[0].value, depth + 1)
                return value.func.value if inner is not None else None
            if isinstance(value.func, cst.Attribute) and value.func.attr.value in PARAMETER_SOURCES:
                return PARAMETER_SOURCES[value.func.attr.value]
            return None
        if isinstance(value, cst.Attribute):
            if value.attr.value in ("parameters", "_parameters"):
                return "tuple"  # optimizer.parameters / self.optimizer.parameters: a ParameterTuple
            if value.attr.value in PARAMETER_ATTRIBUTES and _is_self(value.value):
                inner = _self_assignments(self.ctx, self.values.owner, value.attr.value)
                containers = {self._source_container(v, depth + 1) for v in inner}
                if inner and None not in containers:
                    return containers.pop() if len(containers) == 1 else "unknown"
                if not inner and self._inherits_optimizer():
                    return "tuple"
            return None
        if isinstance(value, cst.Name) and (self._inherits_optimizer() or PARAMETER_ARGUMENT.match(value.value)):
            return "unknown"  # ``self.params = params``: the parameters the cell was given
        return None

    def _inherits_optimizer(self) -> bool:
        return inherits_base(self.ctx.scope, self.ctx.imports, self.ctx.attributes, self.values.owner,
                             OPTIMIZER_BASES)

    def _name(self, expr: cst.Name, kind: Kind, depth: int) -> Optional[Origin]:
        name = expr.value
        func = self.values.func
        star = func.params.star_arg
        if isinstance(star, cst.Param) and star.name.value == name and not SEQUENCE_NAME.match(name):
            return None  # ``*inputs``: the network's inputs, not one entry per parameter
        if name in self.values.parameters:
            root = self.ctx.scope.functions.get(func)
            if root is not None and root.is_root:
                # An entry point's argument has only its name to go on. ``grads``/``gradients`` are gradients;
                # ``weights``/``params`` as often a per-sample weight Tensor or a dict of settings, except in
                # an optimizer, whose ``construct`` receives the gradients of its parameters.
                if SEQUENCE_NAME.match(name) and kind in (Kind.TENSOR_SEQ, Kind.UNKNOWN) and (
                        GRAD_NAME.search(name) or self._inherits_optimizer()):
                    return Origin(f"`{name}`", "tuple" if self._inherits_optimizer() else "unknown")
                return None
            if SEQUENCE_NAME.match(name) and GRAD_NAME.search(name) and kind in (Kind.TENSOR_SEQ, Kind.UNKNOWN):
                return Origin(f"`{name}`", "unknown")
            if kind in (Kind.TENSOR_SEQ, Kind.UNKNOWN):
                return self._from_call_sites(name, depth, "of")
            return None
        bindings = _bindings(func, name)
        for value in bindings:
            found = self.of(value, depth + 1)
            if found is not None:
                return Origin(f"`{name}`", found.container if len(bindings) == 1 else "unknown", found.unfixable)
        if SEQUENCE_NAME.match(name) and GRAD_NAME.search(name) and kind in (Kind.TENSOR_SEQ, Kind.UNKNOWN) \
                and bindings and not any(isinstance(v, (cst.Tuple, cst.List)) for v in bindings):
            made_by_grad = all(self._is_gradient_call(v) for v in bindings)
            return Origin(f"`{name}`", "tuple" if made_by_grad else "unknown")
        built = self._built_by_loop(name, depth)
        if built is not None:
            empty = {_empty_container(v) for v in bindings}
            return Origin(f"`{name}`", empty.pop() if len(empty) == 1 and None not in empty else "unknown",
                          built.unfixable)
        return None

    def _is_gradient_call(self, value: cst.BaseExpression) -> bool:
        """``self.grad(net, weights)(x)`` / ``ops.GradOperation(...)(net, w)(x)``: a tuple of gradients."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Call)):
            return False
        maker = value.func.func
        if isinstance(maker, cst.Attribute) and _is_self(maker.value):
            made = init_value(self.ctx, self.values.owner, maker.attr.value)
            maker = made.func if isinstance(made, cst.Call) else None
        elif isinstance(maker, cst.Call):
            maker = maker.func
        return maker is not None and self.ctx.imports.qualify(maker) in GRAD_MAKERS

    def container(self, expr: cst.BaseExpression) -> str:
        """"tuple", "list" or "unknown": what a sequence handed to HyperMap is (HyperMap returns the same, and
        refuses a mix)."""
        found = self.of(expr)
        if found is not None and found.container != "unknown":
            return found.container
        if isinstance(expr, cst.Tuple) or (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name)
                                           and expr.func.value == "tuple"):
            return "tuple"
        if isinstance(expr, (cst.List, cst.ListComp)) or (isinstance(expr, cst.Call) and isinstance(
                expr.func, cst.Name) and expr.func.value == "list"):
            return "list"
        if isinstance(expr, cst.Attribute) and _is_self(expr.value):
            assigned = _self_assignments(self.ctx, self.values.owner, expr.attr.value)
            if len(assigned) == 1 and not isinstance(assigned[0], cst.Attribute):
                return self.container(assigned[0]) if not isinstance(assigned[0], cst.Name) else "unknown"
        if isinstance(expr, cst.Name):  # a rebound name: what every binding that reaches this use assigns
            assigned = reaching_values(self.values.sequence, expr)
            if assigned:
                found = {self.container(value) if not isinstance(value, cst.Name) else "unknown" for value in assigned}
                return found.pop() if len(found) == 1 else "unknown"
        return "unknown"

    def of_length(self, expr: cst.BaseExpression, depth: int = 0) -> Optional[Origin]:
        """``len(grads)``, or a name bound to it (``n = len(self.params)``, a helper parameter fed one)."""
        if depth > 4:
            return None
        if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len"
                and len(expr.args) == 1):
            return self.of(expr.args[0].value, depth + 1)
        if isinstance(expr, cst.Name):
            if expr.value in self.values.parameters:
                return self._from_call_sites(expr.value, depth, "of_length")
            for value in _bindings(self.values.func, expr.value):
                found = self.of_length(value, depth + 1)
                if found is not None:
                    return found
        return None

    def _from_call_sites(self, name: str, depth: int, how: str) -> Optional[Origin]:
        """A helper parameter is model-sized when a graph call site passes it a model-sized sequence (``how="of"``)
        or the length of one (``how="of_length"``)."""
        func = self.values.func
        names = [p.name.value for p in positional_params(func, self.ctx.scope.takes_self(func))]
        if name not in names:
            return None
        position = names.index(name)
        found_any: Optional[Origin] = None
        containers = set()
        sites = [(self.ctx, site.caller, site.call) for site in self.ctx.scope.call_sites.get(func, [])]
        project = self.ctx.project
        unfixable = None
        if project is not None and not sites:  # a helper of ``utils.py`` that another module's graph code calls
            owner = self.ctx.scope.owner_of.get(func)
            sites = [site for site in project.each_external_call_site(func, owner) if site is not None]
            unfixable = ("a caller in another module gives the sequence; a rewrite of the helper would be made for "
                         "every caller")
        for context, caller, call in sites:
            positional = [a for a in call.args if a.keyword is None and not a.star]
            arg = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if arg is None and position < len(positional):
                arg = positional[position].value
            if arg is None:
                continue
            found = getattr(_Origins(context, context.values(caller)), how)(arg, depth + 1)
            if found is not None:
                if how == "of_length":
                    return found if unfixable is None else Origin(found.description, found.container, unfixable)
                found_any = found_any or found
                containers.add(found.container)
            else:
                containers.add("unknown")
                if how == "of" and context.values(caller).kind(arg) is Kind.TENSOR and unfixable is None:
                    unfixable = (f"`{caller.name.value}` also passes `{cut(short_code(arg), 30)}`, which may be one "
                                 "Tensor: `HyperMap` would apply the function to it whole, not row by row")
        if found_any is None:
            return None
        return Origin(f"`{name}`", containers.pop() if len(containers) == 1 else "unknown",
                      unfixable or found_any.unfixable)


def _starts_empty(func: cst.FunctionDef, seq: cst.BaseExpression) -> bool:
    """``seq`` is a name the function binds to ``[]`` somewhere (a list it grows: its length is what the appends
    make it)."""
    return type(seq) is cst.Name and any(
        type(small) is cst.Assign and type(small.value) is cst.List and not small.value.elements
        and any(type(t.target) is cst.Name and t.target.value == seq.value for t in small.targets)
        for small in find(func, cst.Assign, prune=(cst.Lambda,)))


def _self_assignments(ctx, owner: Optional[str], attr: str) -> List[cst.BaseExpression]:
    """Every value assigned to ``self.<attr>`` in the owner class and its in-module bases."""
    if owner is None:
        return []
    found: List[cst.BaseExpression] = []
    for cls in ctx.attributes.class_chain(owner):
        for method in ctx.scope.classes[cls].methods.values():
            for stmt in walk_statements(suite_statements(method.body), into_defs=False):
                for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
                    pairs = ([(t.target, small.value) for t in small.targets] if isinstance(small, cst.Assign)
                             else [(small.target, small.value)] if isinstance(small, cst.AnnAssign)
                             and small.value is not None else [])
                    for target, value in pairs:
                        if (isinstance(target, cst.Attribute) and _is_self(target.value)
                                and target.attr.value == attr):
                            found.append(value)
    return found


def _is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"


def _append_guards(statements: Sequence[cst.BaseStatement], name: str,
                   tests: Tuple[cst.BaseExpression, ...] = ()) -> Optional[List[cst.BaseExpression]]:
    """The tests of the ``if``s around each append to ``name`` (``_collection``) in a loop body; None when one sits
    in an inner loop (more than one per iteration) or in a statement this does not read (``try``, ``match``)."""
    found: List[cst.BaseExpression] = []
    for stmt in statements:
        if isinstance(stmt, cst.SimpleStatementLine):
            if any((hit := _collection(small)) is not None and hit[0] == name for small in stmt.body):
                found.extend(tests)
        elif isinstance(stmt, cst.If):
            arms = [suite_statements(stmt.body)]
            orelse = stmt.orelse
            if isinstance(orelse, cst.If):
                arms.append([orelse])
            elif orelse is not None:
                arms.append(suite_statements(orelse.body))
            for arm in arms:
                inner = _append_guards(arm, name, tests + (stmt.test,))
                if inner is None:
                    return None
                found.extend(inner)
        elif isinstance(stmt, cst.With):
            inner = _append_guards(suite_statements(stmt.body), name, tests)
            if inner is None:
                return None
            found.extend(inner)
        elif not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and _mentions([stmt], {name}):
            return None
    return found


def _binding_statements(values: FunctionValues, use: cst.Name) -> Optional[List[cst.BaseStatement]]:
    """The statements whose binding of ``use``'s name reaches it (every binding when the function binds the name
    once); None when the name may be unbound there or is bound in a way the reaching analysis does not track."""
    sequence = values.sequence
    if use.value in sequence.tracked:
        sites = sequence.sites.get(id(use))
        if not sites or ENTRY in sites:
            return None
        return [sequence.statements[site] for site in sites]
    found = [stmt for stmt, bound in body_bindings(values.func).statements if use.value in bound]
    return found if len(found) == 1 else None


def _unpacked_call(stmt: cst.BaseStatement, name: str) -> Optional[Tuple[cst.Call, int, int]]:
    """(the ``self.<cell>(...)`` call, the name's position, the target's width) of ``a, name, b = self.cell(x)``."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1):
        return None
    target, value = stmt.body[0].targets[0].target, stmt.body[0].value
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute) and _is_self(value.func.value)):
        return None
    names = [e.value.value if isinstance(e, cst.Element) and isinstance(e.value, cst.Name) else None
             for e in target.elements]
    if None in names or names.count(name) != 1:
        return None
    return value, names.index(name), len(names)


@tree_memo
def _builtin_len(module: cst.Module) -> bool:
    """``len`` is Python's in this module, as far as its code shows: every name ``len`` in it is called
    (``len(x)``), so nothing binds it (an assignment, an import, ``global``, a walrus, a ``for`` or ``with``
    target, a ``match`` capture all write the name elsewhere), and no ``import *`` may. A patch of ``builtins``
    from another module is not seen."""
    called: Set[int] = set()
    for node in find(module, (cst.Call, cst.Name, cst.ImportFrom)):  # one walk: a call comes before its callee
        if type(node) is cst.Call:
            called.add(id(node.func))
        elif type(node) is cst.ImportFrom:
            if isinstance(node.names, cst.ImportStar):
                return False
        elif node.value == "len" and id(node) not in called:
            return False
    return True


def _len_argument(expr: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """X of ``len(X)`` (one positional argument), else None."""
    if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len"
            and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star):
        return expr.args[0].value
    return None


def _bindings(func: cst.FunctionDef, name: str) -> List[cst.BaseExpression]:
    found: List[cst.BaseExpression] = []
    for stmt in walk_statements(suite_statements(func.body), into_defs=False):
        for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name) and target.target.value == name:
                        found.append(small.value)
    return found


@dataclass
class Header:
    """What a ``for`` clause iterates: the sequences (zipped), the element names, an enumerate index."""

    sequences: List[cst.BaseExpression]
    elements: Optional[List[str]]  # None: a target the rewrite does not handle
    index: Optional[str] = None
    by_position: bool = False  # ``for i in range(len(grads))``
    length: Optional[cst.BaseExpression] = None  # the ``range`` argument of a by-position loop
    names: Set[str] = field(default_factory=set)  # every name the loop binds


def parse_header(iterable: cst.BaseExpression, target: cst.BaseExpression) -> Header:
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and not any(
            a.keyword is not None or a.star for a in iterable.args):
        fname, args = iterable.func.value, [a.value for a in iterable.args]
        if fname == "zip" and args:
            names = _tuple_names(target)
            header = Header(args, names if names is not None and len(names) == len(args) else None)
            header.names = set(_all_names(target))
            return header
        if fname == "enumerate" and len(args) == 1 and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            index = target.elements[0].value
            inner = parse_header(args[0], target.elements[1].value)
            inner.index = index.value if isinstance(index, cst.Name) else None
            if inner.index is None:
                inner.elements = None
            inner.names = set(_all_names(target))
            return inner
        if fname == "range" and len(args) == 1:
            header = Header([], None, by_position=True, length=args[0])
            header.names = set(_all_names(target))
            return header
    header = Header([iterable], [target.value] if isinstance(target, cst.Name) else None)
    header.names = set(_all_names(target))
    return header


def _tuple_names(target: cst.BaseExpression) -> Optional[List[str]]:
    if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
        return [e.value.value for e in target.elements]
    return None


def _all_names(target: cst.BaseExpression) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _all_names(e.value)]
    return []


class _NameUse(cst.CSTVisitor):
    """Loads of a set of names (Attribute.attr and keyword names are not loads)."""

    def __init__(self, names: Set[str], skip: Sequence[cst.CSTNode] = ()):
        super().__init__()
        self.names = names
        self.skip = set(map(id, skip))
        self.found: List[cst.Name] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.skip:
            return False
        if isinstance(node, cst.Attribute):
            run_visitor(node.value, self)
            return False
        if isinstance(node, cst.Arg):
            run_visitor(node.value, self)
            return False
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            bound: Set[str] = set()
            clause = node.for_in
            while clause is not None:
                bound.update(_all_names(clause.target))
                clause = clause.inner_for_in
            if bound & self.names:  # the comprehension's own variables: only its first iterable is outside
                run_visitor(node.for_in.iter, self)
                return False
        if isinstance(node, cst.Name) and node.value in self.names:
            self.found.append(node)
        return True


def _mentions(nodes: Sequence[cst.CSTNode], names: Set[str]) -> bool:
    use = _NameUse(names)
    for node in nodes:
        run_visitor(node, use)
    return bool(use.found)


class _TensorWork(cst.CSTVisitor):
    """Does the code do tensor work on the element (a call or arithmetic that reads it, not bookkeeping)?"""

    def __init__(self, values: FunctionValues, names: Set[str]):
        super().__init__()
        self.values = values
        self.names = names
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in BOOKKEEPING_METHODS:
            return
        if isinstance(func, cst.Name) and func.value in ("len", "isinstance", "print", "tuple", "list", "range",
                                                         "zip", "enumerate", "getattr", "hasattr", "str", "type"):
            return
        self._check(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._check(node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if (isinstance(node.value, cst.Name) and node.value.value in self.names  # ``a[:, :, k:]`` of the element
                and any(isinstance(element.slice, cst.Slice) for element in node.slice)):
            self._check(node)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if not isinstance(node.operator, cst.Not):
            self._check(node)

    def _check(self, node: cst.CSTNode) -> None:
        if not self.found and self.values.kind(node) is not Kind.CONST:
            use = _NonConstantUse(self.values, self.names)
            run_visitor(node, use)
            self.found = bool(use.found)


class _NonConstantUse(_NameUse):
    """Reads of the names outside compile-time constant parts: in ``total = total + g.size`` the element is only
    read through ``g.size`` (a constant), whatever the value model makes of ``total``."""

    def __init__(self, values: FunctionValues, names: Set[str]):
        super().__init__(names)
        self.values = values

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseExpression) and not isinstance(node, cst.Name) \
                and self.values.kind(node) is Kind.CONST:
            return False
        return super().on_visit(node)


class _Effects(cst.CSTVisitor):
    def __init__(self, ctx, values: FunctionValues):
        super().__init__()
        self.ctx = ctx
        self.values = values
        self.found: Optional[str] = None
        self.state = False  # what was found is a state update (the MultitypeFuncGraph rewrite may take it)

    def visit_Call(self, node: cst.Call) -> None:
        if self.found is None:
            batchnorm = _batchnorm_cell(self.ctx, self.values.owner, node)
            if batchnorm is not None:
                self.found = (f"the sub-cell `self.{batchnorm}` is or holds a BatchNorm: ops.HyperMap over it fails "
                              "to compile (MindSpore 2.10)")
                return
            category, name = classify_call(self.ctx, self.values, node)
            if category == EFFECT and name.lower() == "depend":
                self.found = "the body orders side effects with `depend`"
            elif category == EFFECT:
                self.found = (f"the body updates state (`{name}`): put one element's update in a function and "
                              "apply it with ops.HyperMap, as MindSpore's optimizers do")
                self.state = True
            elif category == RANDOM:
                self.found = f"the body draws random numbers (`{name}`)"
            elif category in (CELL, UNKNOWN):  # a map runs it once per element, not necessarily in the loop's order
                why = EffectChecker(self.ctx, self.values.owner).call_reason(node)
                if why is not None:
                    self.found = f"`{name}` is not provably free of side effects: {why}"

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if self.found is None and isinstance(node.target, (cst.Attribute, cst.Subscript)):
            self.found = f"the body assigns `{short_code(node.target)}`"


def _batchnorm_cell(ctx, owner: Optional[str], call: cst.Call) -> Optional[str]:
    """The ``self.<attr>`` a call runs when that sub-cell is, or (through classes of this module) holds, a
    BatchNorm: measured on MindSpore 2.10, ``ops.HyperMap`` over a function that calls a BatchNorm cell fails to
    compile (``The pointer[cnode_abs] is null``), in training and in eval mode alike, plain function or
    ``MultitypeFuncGraph``; a Conv2d or ClipByNorm sub-cell compiles."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and _is_self(func.value)):
        return None
    values = _self_assignments(ctx, owner, func.attr.value)
    return func.attr.value if any(_builds_batchnorm(ctx, v, 0) for v in values) else None


def _builds_batchnorm(ctx, value: cst.BaseExpression, depth: int) -> bool:
    if depth > 3:
        return False
    for call in find(value, cst.Call):
        qualified = ctx.imports.qualify(call.func) or ""
        if qualified.startswith("mindspore.") and "BatchNorm" in qualified.rsplit(".", 1)[-1]:
            return True
        if isinstance(call.func, cst.Name) and call.func.value in ctx.scope.classes:
            init = ctx.scope.classes[call.func.value].methods.get("__init__")
            if init is not None and _builds_batchnorm(ctx, init.body, depth + 1):
                return True
    return False


class LoopOverTensorSequence(Rule):
    code = "MSL102"
    name = "loop-over-tensor-sequence"
    summary = "per-element loop over gradients/parameters in graph code: unrolled once per tensor; use ops.HyperMap"
    fix_applicability = SAFE
    requires_text = GRAPH_CODE  # check_module only judges the loops the hooks collected in graph code

    VALID = [
        """
        import mindspore as ms
        from mindspore import nn


        class Backbone(nn.Cell):
            def __init__(self, depth=24):
                super().__init__()
                self.blocks = nn.CellList([nn.Dense(64, 64) for _ in range(depth)])
                self.heads = [nn.Dense(64, 10), nn.Dense(64, 2)]

            def construct(self, x):
                for block in self.blocks:
                    x = block(x)
                outs = ()
                for head in self.heads:
                    outs += (head(x),)
                return outs
        """,
        """
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def fuse(p3, p4, p5, weights=(0.5, 0.3, 0.2)):
            out = ops.zeros_like(p3)
            for feat, w in zip((p3, p4, p5), weights):
                out = out + feat * w
            return out
        """,
        """
        import mindspore as ms
        from mindspore import nn


        class TrainStep(nn.Cell):
            def __init__(self, network, names):
                super().__init__()
                self.network = network
                self.names = names

            def construct(self, grads):
                named = {}
                for index, value in enumerate(grads):
                    named[self.names[index]] = value
                return named
        """,
        """
        import mindspore as ms
        from mindspore import nn, ops


        class MultiScale(nn.Cell):
            def __init__(self, scales=(1.0, 0.5, 0.25)):
                super().__init__()
                self.scales = scales

            def construct(self, x):
                outs = ()
                for s in self.scales:
                    outs += (x * s,)
                return outs
        """,
        """
        import mindspore as ms
        from mindspore import nn


        class ControlNet(nn.Cell):
            def __init__(self, num_layers=12, hidden=64):
                super().__init__()
                self.blocks = nn.CellList([nn.Dense(hidden, hidden) for _ in range(num_layers)])
                self.zero_convs = nn.CellList([nn.Dense(hidden, hidden) for _ in range(num_layers)])

            def construct(self, x):
                samples = ()
                for block in self.blocks:
                    x = block(x)
                    samples = samples + (x,)
                projected = ()
                for sample, zero_conv in zip(samples, self.zero_convs):
                    projected = projected + (zero_conv(sample),)
                return projected
        """,
    ]
    INVALID = [
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def clip_grads(grads):
                return tuple(ops.clip_by_value(g, -1.0, 1.0) for g in grads)
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            def _map_g(g):
                return ops.clip_by_value(g, -1.0, 1.0)


            @ms.jit
            def clip_grads(grads):
                return tuple(ops.HyperMap()(_map_g, grads))
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class GradScaler(nn.Cell):
                def __init__(self, network):
                    super().__init__()
                    self.network = network
                    self.weights = ms.ParameterTuple(network.trainable_params())
                    self.grad = ops.GradOperation(get_by_list=True)

                def construct(self, x, scale):
                    grads = self.grad(self.network, self.weights)(x)
                    scaled = ()
                    for g in grads:
                        scaled += (g * scale,)
                    return scaled
            """,
            fixed="""
            import mindspore as ms
            from mindspore import nn, ops


            def _map_g(scale, g):
                return g * scale


            class GradScaler(nn.Cell):
                def __init__(self, network):
                    super().__init__()
                    self.network = network
                    self.weights = ms.ParameterTuple(network.trainable_params())
                    self.grad = ops.GradOperation(get_by_list=True)

                def construct(self, x, scale):
                    grads = self.grad(self.network, self.weights)(x)
                    scaled = ops.HyperMap()(ops.partial(_map_g, scale), grads)
                    return scaled
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class Decay(nn.Cell):
                def __init__(self, params, weight_decay=1e-4):
                    super().__init__()
                    self.params = ms.ParameterTuple(params)
                    self.weight_decay = weight_decay

                def construct(self, gradients):
                    out = []
                    for p, g in zip(self.params, gradients):
                        out.append(g + self.weight_decay * p)
                    return tuple(out)
            """,
            fixed="""
            import mindspore as ms
            from mindspore import nn, ops


            def _map_p(weight_decay, p, g):
                return g + weight_decay * p


            class Decay(nn.Cell):
                def __init__(self, params, weight_decay=1e-4):
                    super().__init__()
                    self.params = ms.ParameterTuple(params)
                    self.weight_decay = weight_decay

                def construct(self, gradients):
                    out = ops.HyperMap()(ops.partial(_map_p, self.weight_decay), self.params, tuple(gradients))
                    return tuple(out)
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class ClipEach(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.hyper_map = ops.HyperMap()
                    self.clip = nn.ClipByNorm()
                    self.max_norm = ms.Tensor(1.0, ms.float32)

                def construct(self, grads):
                    return tuple(self.clip(g, self.max_norm) for g in grads)
            """,
            fixed="""
            import mindspore as ms
            from mindspore import nn, ops


            def _map_g(clip, max_norm, g):
                return clip(g, max_norm)


            class ClipEach(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.hyper_map = ops.HyperMap()
                    self.clip = nn.ClipByNorm()
                    self.max_norm = ms.Tensor(1.0, ms.float32)

                def construct(self, grads):
                    return tuple(self.hyper_map(ops.partial(_map_g, self.clip, self.max_norm), grads))
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def global_norm(grads):
                squares = [ops.reduce_sum(ops.square(g)) for g in grads]
                return ops.sqrt(ops.addn(squares))
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            def _map_g(g):
                return ops.reduce_sum(ops.square(g))


            @ms.jit
            def global_norm(grads):
                squares = ops.HyperMap()(_map_g, grads)
                return ops.sqrt(ops.addn(squares))
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def grad_norm(grads):
                total = ops.zeros((), ms.float32)
                for g in grads:
                    total = total + ops.reduce_sum(g * g)
                return ops.sqrt(total)
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            def _map_g(g):
                return ops.reduce_sum(g * g)


            @ms.jit
            def grad_norm(grads):
                total = ops.zeros((), ms.float32)
                total = total + ops.addn(ops.HyperMap()(_map_g, grads))
                return ops.sqrt(total)
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class PlainSGD(nn.Cell):
                def __init__(self, params, lr=0.01):
                    super().__init__()
                    self.params = ms.ParameterTuple(params)
                    self.lr = lr

                def construct(self, grads):
                    for p, g in zip(self.params, grads):
                        ops.assign(p, p - self.lr * g)
                    return grads
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class MomentumStep(nn.Cell):
                def __init__(self, params, beta1=0.9, lr=0.01):
                    super().__init__()
                    self.params = ms.ParameterTuple(params)
                    self.moments = self.params.clone(prefix="m", init="zeros")
                    self.beta1 = float(beta1)
                    self.lr = float(lr)

                def construct(self, grads):
                    m = self.moments
                    params = self.params
                    for i in range(len(params)):
                        ops.assign(m[i], self.beta1 * m[i] + (1 - self.beta1) * grads[i])
                        ops.assign(params[i], params[i] - self.lr * m[i])
                    return True
            """,
            fixed="""
            import mindspore as ms
            from mindspore import nn, ops


            _update_param = ops.MultitypeFuncGraph("_update_param")


            @_update_param.register("Number", "Number", "Tensor", "Tensor", "Tensor")
            def _update_param_tensors(beta1, lr, m_i, grad, param):
                ops.assign(m_i, beta1 * m_i + (1 - beta1) * grad)
                ops.assign(param, param - lr * m_i)
                return True


            class MomentumStep(nn.Cell):
                def __init__(self, params, beta1=0.9, lr=0.01):
                    super().__init__()
                    self.params = ms.ParameterTuple(params)
                    self.moments = self.params.clone(prefix="m", init="zeros")
                    self.beta1 = float(beta1)
                    self.lr = float(lr)

                def construct(self, grads):
                    m = self.moments
                    params = self.params
                    ops.HyperMap()(ops.partial(_update_param, self.beta1, self.lr), m, tuple(grads), params)
                    return True
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class ClipGrads(nn.Cell):
                def __init__(self, clip_type=1, clip_value=1.0):
                    super().__init__()
                    self.clip_type = int(clip_type)
                    self.clip_value = float(clip_value)
                    self.clip_by_norm = nn.ClipByNorm()
                    self.max_norm = ms.Tensor(clip_value, ms.float32)

                def construct(self, grads):
                    new_grads = ()
                    for g in grads:
                        if self.clip_type == 0:
                            g = ops.clip_by_value(g, -self.clip_value, self.clip_value)
                        else:
                            g = self.clip_by_norm(g, self.max_norm)
                        new_grads += (g,)
                    return new_grads
            """,
            fixed="""
            import mindspore as ms
            from mindspore import nn, ops


            _update_g = ops.MultitypeFuncGraph("_update_g")


            @_update_g.register("Number", "Tensor")
            def _update_g_tensors(clip_value, g):
                g = ops.clip_by_value(g, -clip_value, clip_value)
                return g


            _update_g_2 = ops.MultitypeFuncGraph("_update_g_2")


            @_update_g_2.register("Function", "Tensor", "Tensor")
            def _update_g_2_tensors(clip_by_norm, max_norm, g):
                g = clip_by_norm(g, max_norm)
                return g


            class ClipGrads(nn.Cell):
                def __init__(self, clip_type=1, clip_value=1.0):
                    super().__init__()
                    self.clip_type = int(clip_type)
                    self.clip_value = float(clip_value)
                    self.clip_by_norm = nn.ClipByNorm()
                    self.max_norm = ms.Tensor(clip_value, ms.float32)

                def construct(self, grads):
                    if self.clip_type == 0:
                        new_grads = tuple(ops.HyperMap()(ops.partial(_update_g, self.clip_value), grads))
                    else:
                        new_grads = tuple(ops.HyperMap()(ops.partial(_update_g_2, self.clip_by_norm, self.max_norm),
                                                         grads))
                    return new_grads
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn


            class Encoder(nn.Cell):
                def __init__(self, num_layers=24, hidden=64):
                    super().__init__()
                    self.layers = nn.CellList([nn.Dense(hidden, hidden) for _ in range(num_layers)])

                def construct(self, x, output_hidden_states=False):
                    all_hidden = () if output_hidden_states else None
                    for layer in self.layers:
                        x = layer(x)
                        if output_hidden_states:
                            all_hidden += (x,)
                    return x, all_hidden


            class PromptModel(nn.Cell):
                def __init__(self, prompt_length=4):
                    super().__init__()
                    self.encoder = Encoder()
                    self.prompt_length = prompt_length

                def construct(self, x):
                    x, all_hidden = self.encoder(x, True)
                    trimmed = ()
                    for hidden in all_hidden:
                        trimmed += (hidden[:, self.prompt_length:],)
                    return x, trimmed
            """,
        ),
    ]

    def __init__(self, context):
        super().__init__(context)
        self._pending: List[Tuple[cst.CSTNode, cst.FunctionDef]] = []
        self._new_names: Set[str] = set()  # helper functions named by this run's fixes (applied together)

    # Analysis waits for the end of the walk, when every parent is recorded (uses after the loop matter).
    def visit_For(self, node: cst.For) -> None:
        self._pending.append((node, self.function))

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._pending.append((node, self.function))

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._pending.append((node, self.function))

    def check_module(self) -> None:
        for node, func in self._pending:
            if self.context.enclosing_function(node) is not func:
                continue  # inside a nested def: its names are not the graph function's
            values = self.context.values(func)
            if isinstance(node, cst.For):
                self._check_loop(values, node)
            else:
                self._check_comprehension(values, node)

    # -- for loops ----------------------------------------------------------------------------------------
    def _check_loop(self, values: FunctionValues, node: cst.For) -> None:
        header = parse_header(node.iter, node.target)
        origin = self._origin(values, header)
        if origin is None or (header.index and calls_cell_picked_by(node.body, [header.index], values)):
            return  # a different cell per element (``self.cells[i](x)``): not one function to map
        work = _TensorWork(values, _tainted(values, node.body, header.names))
        run_visitor(node.body, work)
        if not work.found:
            return
        fix, why = self._loop_fix(values, node, header, origin)
        self._report(node, origin, fix, why)

    def _origin(self, values: FunctionValues, header: Header) -> Optional[Origin]:
        if any(values.kind(seq) is Kind.CELL_SEQ for seq in header.sequences):
            return None  # ``zip(samples, self.blocks)``: a different cell per element, not one function to map
        origins = _Origins(self.context, values)
        if header.length is not None:
            return origins.of_length(header.length)
        for seq in header.sequences:
            found = origins.of(seq)
            if found is not None:
                return found
        return None

    def _report(self, node: cst.CSTNode, origin: Origin, fix: Optional[Fix], why: Optional[str]) -> None:
        head = f"per-element loop over {origin.description}: {WHY}"
        what = f"per-element loop over {cut(origin.description, 50)}: unrolled per element"
        if fix is not None and fix.message == SUM_MESSAGE:
            message = f"{head}; it sums across elements: one ops.addn over the ops.HyperMap of the terms"
            self.report(node, f"{what}; sum it with one `ops.addn` over `ops.HyperMap`", fix, detail=message)
            return
        if fix is not None:
            message = f"{head}; map the per-element work with ops.HyperMap"
        else:
            message = f"{head}; map the per-element work with ops.HyperMap by hand (no automatic rewrite: {why})"
        short = f"{what}; map it with `ops.HyperMap`" if fix is not None else \
            f"{what}; use `ops.HyperMap` by hand (no automatic rewrite)"
        self.report(node, short, fix, detail=message)

    def _loop_fix(self, values: FunctionValues, node: cst.For, header: Header, origin: Origin
                  ) -> Tuple[Optional[Fix], Optional[str]]:
        if origin.unfixable:
            return None, origin.unfixable
        if len(header.sequences) > 1 and any(_starts_empty(values.func, seq) for seq in header.sequences):
            return None, GROWN_UNFIXABLE  # (``zip(grads, big)`` with ``big`` grown under a test: shorter)
        effects = _Effects(self.context, values)
        run_visitor(node.body, effects)
        if effects.found and effects.state:
            return self._update_fix(values, node, header)
        if effects.found:
            return None, effects.found
        if header.by_position:
            return None, "it indexes the sequence by position: write the per-element work as a function of the " \
                         "element and map it with ops.HyperMap"
        lines = list(suite_statements(node.body))
        smalls = [s.body[0] if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 else None for s in lines]
        summed = self._sum_fix(values, node, header, lines, smalls)
        if summed is not None:
            return summed, None
        if any(s is None for s in smalls) or node.orelse is not None:
            accumulated = self._accumulation(values, node, header)
            if accumulated is None and node.orelse is None and smalls[-1] is not None \
                    and _collection(smalls[-1]) is not None:
                return self._branching_collect_fix(values, node, header, lines, smalls[-1])
            return None, accumulated or "the body has control flow or several statements per line"
        collected = _collection(smalls[-1])
        if collected is None:
            accumulated = self._accumulation(values, node, header)
            if accumulated is None and any(_collection(small) for small in smalls):
                carried = _carried(smalls, set(header.elements or ()))
                accumulated = (f"`{carried}` is carried between elements" if carried
                               else "the body goes on after collecting the element's result")
            return None, accumulated or "the loop does not collect one result per element"
        result_name, element_expr, style = collected
        if header.elements is None:
            return None, "the loop target is unpacked in a way the rewrite does not handle"
        if header.index is not None and _mentions(lines, {header.index}):
            return None, f"the body uses the position `{header.index}`"
        temporaries: Set[str] = set()
        for small in smalls[:-1]:
            target = _simple_target(small)
            if target is None or target == result_name:
                return None, "the body assigns something other than per-element temporaries"
            temporaries.add(target)
        ready = set(header.elements)
        for small in smalls:  # a temporary read before this element assigns it is carried from the last one
            carried = (_reads_of(small) & (temporaries - ready)) - {result_name}
            if carried:
                name = sorted(carried)[0]
                return None, self._accumulation(values, node, header) or f"`{name}` is carried between elements"
            target = _simple_target(small)
            if target is not None:
                ready.add(target)
        if _mentions([element_expr] + lines[:-1], {result_name}):
            return None, "the per-element result depends on earlier results"
        leaked = self._leaked(values, node, temporaries | set(header.elements))
        if leaked:
            return None, f"`{leaked}` is used after the loop"
        init = self._init_statement(node, result_name)
        if init is None:
            return None, f"`{result_name}` does not start as an empty tuple or list just before the loop"
        init_stmt, container = init
        if style == "append":
            container = "list" if container == "list" else None
        if container is None:
            return None, f"`{result_name}` mixes tuple and list building"
        if container == "list" and not self._list_uses_agnostic(values, result_name, [init_stmt, node]):
            return None, (f"`{result_name}` is a list used as a list afterwards; ops.HyperMap returns the "
                         "container it is given, and the input is not known to be a list")
        blocker = _map_blocker(header, lines)
        if blocker is not None:
            return None, blocker
        inputs, produced = self._map_inputs(values, header.sequences)
        wrap = "tuple" if container == "tuple" and produced != "tuple" else None
        plan, why = plan_map(self.context, values, header.elements, inputs, lines[:-1], element_expr, wrap,
                             self._new_names)
        if plan is None:
            return None, why
        leading = list(init_stmt.leading_lines) + comments_inside(init_stmt, init_stmt.leading_lines)
        leading += list(node.leading_lines) + comments_inside(node, node.leading_lines)
        statement = cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(result_name))], value=plan.call)],
            leading_lines=leading)
        edits = [(init_stmt, None), (node, statement)]
        if plan.new_def is not None:
            edits.append((plan.anchor, [plan.anchor, plan.new_def]))
        return Fix(SAFE, "map the per-element work with ops.HyperMap", edits=tuple(edits), imports=plan.imports), None

    def _update_fix(self, values: FunctionValues, node: cst.For, header: Header
                    ) -> Tuple[Optional[Fix], Optional[str]]:
        """A loop that updates each element's state (``ops.assign(m, ...)``, ``self.assign(param, ...)``), by
        element or by position: one ``ops.MultitypeFuncGraph`` mapped with ``ops.HyperMap`` (see
        :mod:`ms_lint.rewrites.multitype_update`), run for its updates."""
        if node.orelse is not None:
            return None, "the loop has an `else`"
        index = header.index
        length_of = None
        if header.by_position:
            if not isinstance(node.target, cst.Name):
                return None, "the loop target is unpacked in a way the rewrite does not handle"
            index = node.target.value
            length_of = self._length_sequence(values, header.length)
            if length_of is None:
                return None, f"cannot see which sequence `range({short_code(header.length)})` runs over"
            elements, sequences = [], []
        elif header.elements is None:
            return None, "the loop target is unpacked in a way the rewrite does not handle"
        else:
            elements, sequences = list(header.elements), list(header.sequences)
        lines = list(suite_statements(node.body))
        count = self._count_statement(values, node, header.length) if header.by_position else None
        return self._multitype_fix(values, node, header, elements, sequences, index, length_of, lines, None, None,
                                   count)

    def _count_statement(self, values: FunctionValues, node: cst.For, length: cst.BaseExpression
                         ) -> Optional[cst.SimpleStatementLine]:
        """``n = len(params)`` just before ``for i in range(n):``, when nothing else reads or binds ``n``: the map
        leaves it unused (ruff's F841 on the fixed file), so the fix removes it. ``len`` of the sequence the map
        walks computes nothing else."""
        before = self._statements_before(node)
        stmt = before[-1] if before else None
        if not isinstance(length, cst.Name) or not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1):
            return None
        assign = stmt.body[0]
        value = assign.value
        if _simple_target(assign) != length.value or not isinstance(_len_argument(value), (cst.Name, cst.Attribute)):
            return None
        func = values.func
        if length.value in body_bindings(func).rebound:
            return None
        reads = [name for name in find(func, cst.Name) if name.value in (length.value, "locals", "vars", "dir", "eval",
                                                                           "exec", "globals")]
        if [name for name in reads if name is not assign.targets[0].target and name is not value.func] != [length]:
            return None  # read elsewhere (an attribute's name counts too: a miss, not a wrong fix), or dynamically
        return stmt

    def _branching_collect_fix(self, values: FunctionValues, node: cst.For, header: Header, lines,
                               last: cst.BaseSmallStatement) -> Tuple[Optional[Fix], Optional[str]]:
        """``out += (f(g),)`` after an ``if`` in the body (gradient clipping by a constant ``clip_type``): one
        registered function per decided branch, mapped with ``ops.HyperMap`` (see
        :mod:`ms_lint.rewrites.multitype_update`)."""
        if header.elements is None or header.by_position:
            return None, "the body has control flow or several statements per line"
        result_name, element_expr, style = _collection(last)
        body = lines[:-1]
        if header.index is not None and _mentions(lines, {header.index}):
            return None, f"the body uses the position `{header.index}`"
        if _mentions(body + [element_expr], {result_name}):
            return None, "the per-element result depends on earlier results"
        init = self._init_statement(node, result_name)
        if init is None:
            return None, f"`{result_name}` does not start as an empty tuple or list just before the loop"
        init_stmt, container = init
        if style == "append":
            container = "list" if container == "list" else None
        if container is None:
            return None, f"`{result_name}` mixes tuple and list building"
        if container == "list" and not self._list_uses_agnostic(values, result_name, [init_stmt, node]):
            return None, (f"`{result_name}` is a list used as a list afterwards; ops.HyperMap returns the "
                          "container it is given, and the input is not known to be a list")
        _, produced = self._map_inputs(values, header.sequences)
        wrap = container == "tuple" and produced != "tuple"

        def assign_to(call: cst.BaseExpression) -> cst.BaseStatement:
            value = cst.Call(func=cst.Name("tuple"), args=[cst.Arg(call)]) if wrap else call
            return cst.SimpleStatementLine(
                body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(result_name))], value=value)])

        fix, why = self._multitype_fix(values, node, header, list(header.elements), list(header.sequences), None,
                                       None, body, element_expr, assign_to, init_stmt)
        return fix, why

    def _multitype_fix(self, values: FunctionValues, node: cst.For, header: Header, elements, sequences, index,
                       length_of, body, result, assign_to, init_stmt=None,
                       count_stmt=None) -> Tuple[Optional[Fix], Optional[str]]:
        """``init_stmt``: the statement that starts the collected result (removed); ``count_stmt``: the
        ``n = len(seq)`` only the loop's ``range`` read (removed)."""
        for call in find(node.body, cst.Call):
            batchnorm = _batchnorm_cell(self.context, values.owner, call)
            if batchnorm is not None:
                return None, (f"the sub-cell `self.{batchnorm}` is or holds a BatchNorm: ops.HyperMap over it fails "
                              "to compile (MindSpore 2.10)")
        if elements:
            blocker = _map_blocker(header, body + ([result] if result is not None else []))
            if blocker is not None:
                return None, blocker
        bound_here = assigned_names(body) | set(elements) | ({index} if index else set())
        leaked = self._leaked(values, node, bound_here)
        if leaked:
            return None, f"`{leaked}` is used after the loop"
        plan, why = plan_update(self.context, values, node, elements, sequences, index, length_of,
                                lambda seqs: self._map_inputs(values, seqs), result, body, assign_to,
                                self._new_names)
        if plan is None:
            return None, why
        replacement = plan.replacement  # the body's comments move into the registered function with it
        removed = [stmt for stmt in (init_stmt, count_stmt) if stmt is not None]
        for stmt in removed:  # the removed statement's blank lines and comments stay, above the map
            leading = list(stmt.leading_lines) + comments_inside(stmt, stmt.leading_lines)
            replacement = [replacement[0].with_changes(leading_lines=leading + list(replacement[0].leading_lines))] \
                + replacement[1:]
        edits: List = [(node, replacement if len(replacement) > 1 else replacement[0])]
        edits[:0] = [(stmt, None) for stmt in removed]
        edits.append((plan.anchor, [plan.anchor] + plan.new_defs))
        message = UPDATE_MESSAGE if assign_to is None else BRANCH_MESSAGE
        return Fix(SAFE, message, edits=tuple(edits), imports=plan.imports), None

    def _length_sequence(self, values: FunctionValues, length: cst.BaseExpression
                         ) -> Optional[cst.BaseExpression]:
        """``len(X)`` (or a name bound once to it) in ``range(...)``: X; None where ``len`` may not be Python's
        (``_builtin_len``): the map walks X whatever that ``len`` counts."""
        if not _builtin_len(self.context.module):
            return None
        if isinstance(length, cst.Name):
            bound = _bindings(values.func, length.value)
            length = bound[0] if len(bound) == 1 else None
        return _len_argument(length)

    def _sum_fix(self, values: FunctionValues, node: cst.For, header: Header, lines, smalls) -> Optional[Fix]:
        """``for g in grads: acc = acc + term(g)`` -> ``acc = acc + ops.addn(HyperMap(term, grads))`` (unsafe:
        see :mod:`ms_lint.rewrites.addn_sum`)."""
        if not smalls or any(s is None for s in smalls) or node.orelse is not None or header.elements is None:
            return None
        if _collection(smalls[-1]) is not None:
            return None  # ``out += (f(g),)`` collects one result per element: a map, not a sum
        found = accumulation(self.context, values, smalls[-1])
        if found is None or isinstance(found[1], (cst.Tuple, cst.List)):
            return None
        name, term, rebuild = found
        if header.index is not None and _mentions(lines, {header.index}):
            return None
        if name in header.names or _mentions([term] + lines[:-1], {name}):
            return None
        temporaries: Set[str] = set()
        ready = set(header.elements)
        for small in smalls[:-1]:
            target = _simple_target(small)
            if target is None or not isinstance(small, cst.Assign) or _reads_of(small) & (temporaries - ready):
                return None
            temporaries.add(target)
            ready.add(target)
        if _reads_of(smalls[-1]) & (temporaries - ready) or self._leaked(values, node, temporaries | set(
                header.elements)):
            return None
        if _map_blocker(header, lines) is not None:
            return None
        addn = self.context.spell("mindspore.ops.addn")
        if addn is None:
            return None
        inputs, _ = self._map_inputs(values, header.sequences)
        plan, _ = plan_map(self.context, values, header.elements, inputs, lines[:-1], term, None, self._new_names)
        if plan is None:
            return None
        total = cst.Call(func=cst.parse_expression(addn[0]), args=[cst.Arg(plan.call)])
        leading = list(node.leading_lines) + comments_inside(node, node.leading_lines)
        statement = cst.SimpleStatementLine(body=[rebuild(total)], leading_lines=leading)
        edits: List = [(node, statement)]
        if plan.new_def is not None:
            edits.append((plan.anchor, [plan.anchor, plan.new_def]))
        return Fix(UNSAFE, SUM_MESSAGE, edits=tuple(edits), imports=tuple(plan.imports) + tuple(addn[1]))

    def _map_inputs(self, values: FunctionValues, sequences: Sequence[cst.BaseExpression]
                    ) -> Tuple[List[cst.BaseExpression], str]:
        """The sequences to hand to HyperMap, and the container it returns ("tuple", "list" or "unknown").

        HyperMap returns the container it is given (a list passed to a jit function stays a list) and refuses a
        mix of tuples and lists (``the types of arguments in HyperMap must be consistent``), where ``zip`` took
        any. Several sequences not all known to be of one kind are each wrapped in ``tuple(...)``."""
        origins = _Origins(self.context, values)
        containers = [origins.container(seq) for seq in sequences]
        if len(set(containers)) == 1 and (containers[0] != "unknown" or len(sequences) == 1):
            return list(sequences), containers[0]
        wrapped = [seq if kind == "tuple" else cst.Call(func=cst.Name("tuple"), args=[cst.Arg(seq)])
                   for seq, kind in zip(sequences, containers)]
        return wrapped, "tuple"

    def _accumulation(self, values: FunctionValues, node: cst.For, header: Header) -> Optional[str]:
        for stmt in walk_statements(suite_statements(node.body)):
            for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
                target = _simple_target(small)
                if target is None or target in header.names or _collection(small) is not None:
                    continue  # collecting one result per element is what a map does
                if isinstance(small, cst.AugAssign) or target in _reads_of(small):
                    if isinstance(small, cst.AugAssign) and not isinstance(small.operator, cst.AddAssign):
                        return f"it accumulates `{target}` across elements (not a map)"
                    return (f"it accumulates `{target}` across elements: a sum is one ops.addn(...) over the mapped "
                            "values, not a loop")
        return None

    def _leaked(self, values: FunctionValues, node: cst.For, names: Set[str]) -> Optional[str]:
        """A name the loop binds that code after the loop may read before rebinding it (a binding before the loop
        does not help: after the loop the name holds the last element's value, which a map would not leave)."""
        live = read_after(self.context, node, names)
        return min(live) if live else None

    def _statements_before(self, node: cst.For) -> List[cst.BaseStatement]:
        """The statements of the loop's block before it, in order (none outside an indented block)."""
        parent = self.context.parent(node)
        if not isinstance(parent, cst.IndentedBlock):
            return []
        body = list(parent.body)
        return body[:next(i for i, stmt in enumerate(body) if stmt is node)]

    def _init_statement(self, node: cst.For, name: str) -> Optional[Tuple[cst.SimpleStatementLine, str]]:
        body = self._statements_before(node)
        index = len(body)
        for position in range(index - 1, -1, -1):
            stmt = body[position]
            small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
            if small is not None and _simple_target(small) == name and isinstance(small, cst.Assign):
                container = _empty_container(small.value)
                if container is None or _mentions(body[position + 1:index], {name}):
                    return None
                return stmt, container
            if _mentions([stmt], {name}):
                return None
        return None

    def _list_uses_agnostic(self, values: FunctionValues, name: str, skip: Sequence[cst.CSTNode]) -> bool:
        """Every later read of the list is one a tuple serves the same way: ``tuple(r)``, ``len(r)``,
        ``r[i]``, ``for x in r``, ``ops.addn(r)``/``stack``/``concat``."""
        use = _NameUse({name}, skip=skip)
        run_visitor(values.func.body, use)
        for found in use.found:
            parent = self.context.parent(found)
            if isinstance(parent, cst.Arg):
                call = self.context.parent(parent)
                if not isinstance(call, cst.Call) or parent.star or parent.keyword is not None:
                    return False
                if isinstance(call.func, cst.Name) and call.func.value in LIST_AGNOSTIC_CALLS:
                    continue
                if self.context.imports.qualify(call.func) in LIST_AGNOSTIC_OPS:
                    continue
                return False
            if isinstance(parent, cst.Subscript) and parent.value is found:
                if len(parent.slice) == 1 and isinstance(parent.slice[0].slice, cst.Index) and not isinstance(
                        self.context.parent(parent), cst.AssignTarget):
                    continue
                return False
            if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is found:
                continue
            return False
        return True

    # -- comprehensions -----------------------------------------------------------------------------------
    def _check_comprehension(self, values: FunctionValues, node) -> None:
        clause = node.for_in
        if clause.inner_for_in is not None or clause.asynchronous is not None:
            return
        header = parse_header(clause.iter, clause.target)
        origin = self._origin(values, header)
        if origin is None:
            return
        work = _TensorWork(values, header.names)
        run_visitor(node.elt, work)
        if not work.found:
            return
        wrapper = self._wrapper(node)
        reported = wrapper if wrapper is not None else node
        fix, why = self._comprehension_fix(values, node, header, origin, wrapper)
        self._report(reported, origin, fix, why)

    def _wrapper(self, node) -> Optional[cst.Call]:
        """``tuple(<comp>)`` / ``list(<comp>)`` / ``sum(<comp>)`` around the comprehension, if any."""
        parent = self.context.parent(node)
        if isinstance(parent, cst.Arg):
            call = self.context.parent(parent)
            if (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and len(call.args) == 1
                    and call.func.value in ("tuple", "list", "sum")):
                return call
        return None

    def _comprehension_fix(self, values: FunctionValues, node, header: Header, origin: Origin,
                           wrapper: Optional[cst.Call]) -> Tuple[Optional[Fix], Optional[str]]:
        if origin.unfixable:
            return None, origin.unfixable
        if len(header.sequences) > 1 and any(_starts_empty(values.func, seq) for seq in header.sequences):
            return None, GROWN_UNFIXABLE  # (``zip(grads, big)`` with ``big`` grown under a test: shorter)
        effects = _Effects(self.context, values)
        run_visitor(node.elt, effects)
        if effects.found:
            return None, effects.found
        if wrapper is not None and wrapper.func.value == "sum":
            return None, "it sums over the sequence: a sum is one ops.addn(...) over the mapped values"
        if node.for_in.ifs:
            return None, "the comprehension filters elements"
        if header.elements is None or header.by_position:
            return None, "the loop target is unpacked in a way the rewrite does not handle"
        if header.index is not None and _mentions([node.elt], {header.index}):
            return None, f"the element uses the position `{header.index}`"
        blocker = _map_blocker(header, [node.elt])
        if blocker is not None:
            return None, blocker
        inputs, produced = self._map_inputs(values, header.sequences)
        if wrapper is not None and wrapper.func.value == "tuple":
            replaced: cst.CSTNode = wrapper
            wrap = "tuple" if produced != "tuple" else None
        else:
            replaced = wrapper if wrapper is not None else node
            if isinstance(node, cst.GeneratorExp) and wrapper is None:
                return None, "a generator used directly"
            if produced != "list" and not self._list_result_agnostic(values, replaced):
                return None, ("it builds a list that is used as a list; ops.HyperMap returns the container it is "
                              "given, and the input is not known to be a list")
            wrap = None
        plan, why = plan_map(self.context, values, header.elements, inputs, [], node.elt, wrap, self._new_names)
        if plan is None:
            return None, why
        call = plan.call
        if getattr(replaced, "lpar", None):
            call = call.with_changes(lpar=replaced.lpar, rpar=replaced.rpar)
        edits: List = [(replaced, call)]
        # the element's own comments move into the new def; on the ``ops.partial(op, ...)`` path there is none
        kept = {id(c.comment) for c in comments_inside(node.elt)} if plan.new_def is not None else set()
        lost = [line for line in comments_inside(replaced) if id(line.comment) not in kept]
        statement = enclosing_statement(self.context, replaced) if lost else None
        if isinstance(statement, cst.SimpleStatementLine):  # the comments between the clauses go above it
            edits = [(statement, statement.deep_replace(replaced, call).with_changes(
                leading_lines=list(statement.leading_lines) + lost))]
        elif lost:
            return None, "a comment inside the comprehension would be lost"
        if plan.new_def is not None:
            edits.append((plan.anchor, [plan.anchor, plan.new_def]))
        return Fix(SAFE, "map the per-element work with ops.HyperMap", edits=tuple(edits), imports=plan.imports), None

    def _list_result_agnostic(self, values: FunctionValues, node: cst.CSTNode) -> bool:
        """A list-producing comprehension whose list-ness does not matter: an argument of ``tuple``/``ops.addn``..
        or assigned to a name whose every later read is tuple-agnostic."""
        parent = self.context.parent(node)
        if isinstance(parent, cst.Arg) and parent.keyword is None and not parent.star:
            call = self.context.parent(parent)
            if isinstance(call, cst.Call) and ((isinstance(call.func, cst.Name) and call.func.value
                                                in LIST_AGNOSTIC_CALLS)
                                               or self.context.imports.qualify(call.func) in LIST_AGNOSTIC_OPS):
                return True
            return False
        if (isinstance(parent, cst.Assign) and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name)):
            name = parent.targets[0].target.value
            if len(_bindings(values.func, name)) != 1:
                return False
            return self._list_uses_agnostic(values, name, [parent])
        return False


def _map_blocker(header: Header, code: Sequence[cst.CSTNode]) -> Optional[str]:
    """Why HyperMap cannot take these sequences as the loop took them.

    ``reversed(grads)`` works in a graph-mode ``for`` but HyperMap rejects it (measured: ``unsupported operand
    type(s) ... 'reversed'``). HyperMap maps *into* elements that are tuples when every sequence's element is
    one, where the loop hands the tuple over: a body that indexes the element (``gv[0]`` of ``grads_and_vars``)
    shows the elements are pairs."""
    for seq in header.sequences:
        if isinstance(seq, cst.Call) and isinstance(seq.func, cst.Name) and seq.func.value == "reversed":
            return "it iterates `reversed(...)`, which ops.HyperMap does not take"
    if len(header.sequences) == 1 and header.elements:
        indexed = _ElementIndex(set(header.elements))
        for node in code:
            run_visitor(node, indexed)
        if indexed.found:
            return (f"the body indexes the element (`{short_code(indexed.found)}`): if the elements are tuples, "
                    "ops.HyperMap maps into them instead of handing each one over")
    return None


class _ElementIndex(cst.CSTVisitor):
    def __init__(self, names: Set[str]):
        super().__init__()
        self.names = names
        self.found: Optional[cst.Subscript] = None

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if (self.found is None and isinstance(node.value, cst.Name) and node.value.value in self.names
                and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
                and isinstance(node.slice[0].slice.value, cst.Integer)):
            self.found = node


def _carried(smalls: Sequence[cst.BaseSmallStatement], ready: Set[str]) -> Optional[str]:
    """A name the body reads before it assigns it: its value comes from the previous element."""
    assigned = {t for t in map(_simple_target, smalls) if t is not None}
    ready = set(ready)
    for small in smalls:
        early = (_reads_of(small) & assigned) - ready
        if isinstance(small, cst.AugAssign) or _collection(small) is not None:
            early -= {_simple_target(small) or ""}
        if early:
            return sorted(early)[0]
        target = _simple_target(small)
        if target is not None:
            ready.add(target)
    return None


def _tainted(values: FunctionValues, body: cst.BaseSuite, names: Set[str]) -> Set[str]:
    """The loop's names plus every name the body computes from them (``g = gradients[i]``), not counting reads
    inside compile-time constants (``n = n + g.size``)."""
    tainted = set(names)
    statements = list(walk_statements(suite_statements(body), into_defs=False))
    for _ in range(2):
        for stmt in statements:
            for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
                value = getattr(small, "value", None)
                if not isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) or value is None:
                    continue
                use = _NonConstantUse(values, tainted)
                run_visitor(value, use)
                if use.found:
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for target in targets:
                        tainted.update(_all_names(target))
    return tainted


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    finder = _Find(inner)
    run_visitor(outer, finder)
    return finder.found


class _Find(cst.CSTVisitor):
    def __init__(self, wanted: cst.CSTNode):
        super().__init__()
        self.wanted = wanted
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.wanted:
            self.found = True
        return not self.found


def _simple_target(small: Optional[cst.BaseSmallStatement]) -> Optional[str]:
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    if isinstance(small, (cst.AugAssign, cst.AnnAssign)) and isinstance(small.target, cst.Name):
        return small.target.value
    return None


def _reads_of(small: cst.BaseSmallStatement) -> Set[str]:
    value = getattr(small, "value", None)
    if value is None:
        return set()
    use = _NameUse(_names_in(value))
    run_visitor(value, use)
    reads = {n.value for n in use.found}
    if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
        reads.add(small.target.value)
    return reads


def _names_in(node: cst.CSTNode) -> Set[str]:
    collector = _AllNames()
    run_visitor(node, collector)
    return collector.names


class _AllNames(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.names: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def _empty_container(value: cst.BaseExpression) -> Optional[str]:
    if isinstance(value, cst.Tuple) and not value.elements:
        return "tuple"
    if isinstance(value, cst.List) and not value.elements:
        return "list"
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and not value.args:
        return {"tuple": "tuple", "list": "list"}.get(value.func.value)
    return None


def _collection(small: Optional[cst.BaseSmallStatement]) -> Optional[Tuple[str, cst.BaseExpression, str]]:
    """``r.append(e)`` / ``r += (e,)`` / ``r = r + (e,)`` (or ``[e]``) -> (r, e, "append"|"concat")."""
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        func = call.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name)
                and len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star):
            return func.value.value, call.args[0].value, "append"
        return None
    if isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign) and isinstance(
            small.target, cst.Name):
        single = _single_element(small.value)
        return (small.target.value, single, "concat") if single is not None else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        name = small.targets[0].target.value
        value = small.value
        if (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add)
                and isinstance(value.left, cst.Name) and value.left.value == name):
            single = _single_element(value.right)
            return (name, single, "concat") if single is not None else None
    return None


def _single_element(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    if isinstance(expr, (cst.Tuple, cst.List)) and len(expr.elements) == 1 and not isinstance(
            expr.elements[0], cst.StarredElement):
        return expr.elements[0].value
    return None
