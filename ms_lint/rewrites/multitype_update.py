"""The MultitypeFuncGraph rewrite of a per-element loop that updates state or branches on a constant:

    for p, m, g in zip(self.params, self.moments, grads):        _update_p = ops.MultitypeFuncGraph("_update_p")
        ops.assign(m, self.beta * m + (1 - self.beta) * g)
        ops.assign(p, p - self.lr * m)                  ->      @_update_p.register("Number", "Number", "Tensor", ...)
                                                                def _update_p_tensors(beta, lr, p, m, g):
                                                                    ops.assign(m, beta * m + (1 - beta) * g)
                                                                    ops.assign(p, p - lr * m)
                                                                    return True

    ops.HyperMap()(ops.partial(_update_p, self.beta, self.lr), self.params, self.moments, grads)

This is the form MindSpore's own optimizers use (``_adam_opt.register("Function", ..., "Tensor")``). Why not a plain
function under ``ops.partial`` (what :mod:`ms_lint.rewrites.hypermap` builds): the registered types make MindSpore
specialize the function per argument type; measured on MindSpore 2.10, the plain form with a bound Python number,
an ``if`` on it and a sub-cell call fails to compile.

The loop-invariant values the body reads (``self.cast``, ``self.global_step``, ``self.beta``, local Tensors) become
the leading, bound arguments; the loop's sequences (and, for position loops, every ``seq[i]`` the body picks) are
mapped. Tests on compile-time constants (``if self.clip_type == 0``, ``lrs[index] if self.is_group_lr else lrs``)
are decided once in a Python ``if`` around whole maps, each with its own registered function: a map inside the
branch that sub-cell call needs, and ``lrs`` mapped (one learning rate per parameter group) or bound (one for all).

Only builds code; what may be mapped is :mod:`ms_lint.analysis.per_element`'s question.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import read_name_nodes
from ms_lint.analysis.effects import EffectChecker
from ms_lint.analysis.per_element import (assigned_names, bare_self, body_blocker, carried, constant_tests,
                                          effect_target, position_reads, register_type, self_roots,
                                          state_sequence, code_nodes)
from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.cstutil import code_of, suite_statements
from ms_lint.diagnostics import ImportRequest
from ms_lint.rewrites.hypermap import anchor_statement, existing_hypermap, unique_name
from ms_lint.rewrites.where import EFFECT, RANDOM, classify_call

MAX_TESTS = 2  # constant tests decided around the map: 2 ** MAX_TESTS registered functions at most


@dataclass
class UpdatePlan:
    """The loop's replacement (statements), the module-level definitions and where they go, the imports."""

    replacement: List[cst.BaseStatement]
    new_defs: List[cst.BaseStatement]
    anchor: cst.CSTNode
    imports: Tuple[ImportRequest, ...]
    hoisted: int = 0  # constant tests decided around the map


@dataclass
class _Variant:
    conditions: Tuple[Tuple[cst.BaseExpression, bool], ...]
    body: List[cst.BaseStatement]
    result: Optional[cst.BaseExpression]
    params: List[str] = field(default_factory=list)
    types: List[str] = field(default_factory=list)
    bound: List[cst.BaseExpression] = field(default_factory=list)
    sequences: List[cst.BaseExpression] = field(default_factory=list)
    lead: str = ""  # the element that names the function: the first zipped one, or that of ``range(len(X))``'s X


def plan_update(ctx, values: FunctionValues, loop: cst.For, elements: List[str], sequences: List[cst.BaseExpression],
                index: Optional[str], length_of: Optional[cst.BaseExpression],
                map_inputs: Callable[[List[cst.BaseExpression]], Tuple[List[cst.BaseExpression], str]],
                result: Optional[cst.BaseExpression], body: Sequence[cst.BaseStatement],
                assign_to: Optional[Callable[[cst.BaseExpression], cst.BaseStatement]],
                reserved: Set[str]) -> Tuple[Optional[UpdatePlan], Optional[str]]:
    """Plan the rewrite of ``loop`` or say why not (one line, for the finding's detail).

    ``elements``/``sequences``: the zipped names and what they iterate; ``index``: the position name (enumerate,
    or the ``range`` loop's target) and ``length_of`` the sequence a ``range(len(...))`` loop runs over; ``body``
    the statements mapped (for a collecting loop, without the collecting statement, whose element is ``result``);
    ``assign_to`` makes the statement that takes the map's value (None: the map is run for its updates)."""
    blocker = body_blocker(body)
    if blocker is not None:
        return None, blocker
    assigned = assigned_names(body)
    if index is not None and index in assigned:
        return None, f"the body rebinds the position `{index}` (a map hands over one element per position)"
    texts = [code_of(seq) for seq in sequences]
    if len(set(texts)) != len(texts):
        twice = next(t for t in texts if texts.count(t) > 1)
        return None, f"`{twice}` is zipped twice: its elements would be written through two names at once"
    varying = set(elements) | assigned | ({index} if index else set())
    early = carried(list(body) + ([_expr_line(result)] if result is not None else []), set(elements) | (
        {index} if index else set()), assigned)
    if early is not None:
        return None, f"`{early}` is carried between elements (read before the body assigns it)"
    owners = {e: seq for e, seq in zip(elements, sequences) if e not in assigned}
    why = _effects_blocker(ctx, values, body, owners, index)
    if why is not None:
        return None, why
    tests = constant_tests(values, body, varying)
    why = _kept_test_with_cell(values, body, tests)
    if why is not None:
        return None, why
    if len(tests) > MAX_TESTS:
        return None, f"the body has {len(tests)} constant tests (at most {MAX_TESTS} are decided around the map)"
    variants: List[_Variant] = []
    for choice in itertools.product((True, False), repeat=len(tests)):
        chosen = dict(zip(map(id, tests), choice))
        special = _Specialize(chosen)
        spec_body = _flatten([stmt.visit(special) for stmt in body])
        spec_result = result.visit(special) if result is not None else None
        conditions = tuple((_test_of(t), c) for t, c in zip(tests, choice))
        if assign_to is not None and any(isinstance(n, (cst.If, cst.IfExp)) for stmt in spec_body
                                         for n in code_nodes(stmt)):
            return None, ("the body has control flow that depends on the element (only tests of constants are "
                          "decided around the map)")
        variant, why = _variant(ctx, values, loop, elements, sequences, index, length_of, spec_body, spec_result,
                                conditions, assigned)
        if variant is None:
            return None, why
        variants.append(variant)
    return _build(ctx, values, loop, elements, variants, map_inputs, assign_to, reserved, len(tests))


def _kept_test_with_cell(values: FunctionValues, body, tests) -> Optional[str]:
    """A test on a Python constant left inside the mapped function (nested, or an ``elif``) next to a sub-cell call:
    measured on MindSpore 2.10, a mapped function with a bound Python number, an ``if`` on it and a sub-cell call
    fails to compile, so only tests decided around the map are taken when a sub-cell is called."""
    nodes = [n for stmt in body for n in code_nodes(stmt)]
    calls_cell = any(isinstance(n, cst.Call) and values.kind(n.func) is Kind.CELL for n in nodes)
    decided = {id(t) for t in tests}
    for node in nodes:
        if calls_cell and isinstance(node, (cst.If, cst.IfExp)) and id(node) not in decided \
                and values.kind(node.test) is Kind.CONST:
            return (f"a constant test (`{code_of(node.test)}`) stays inside the mapped function with a sub-cell "
                    "call, which fails to compile (MindSpore 2.10)")
    return None


def _expr_line(expr: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(value=expr)])


def _effects_blocker(ctx, values: FunctionValues, body, owners: Dict[str, cst.BaseExpression],
                     index: Optional[str]) -> Optional[str]:
    """Why the body's effects are not each element's own: every effect must be an assign-family write to a loop
    element (or to ``seq[index]``) of a sequence of the Cell's own state (``self.moments``, or a local bound to
    it), not of an argument such as ``grads`` (Parameters are what MindSpore orders reads and writes of); random
    ops, prints and writes to shared state are refused."""
    checker = EffectChecker(ctx, values.owner)
    for node in (n for stmt in body for n in code_nodes(stmt)):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) \
                and isinstance(node.target, (cst.Attribute, cst.Subscript)):
            return f"the body assigns `{code_of(node.target)}`"
        if not isinstance(node, cst.Call):
            continue
        category, name = classify_call(ctx, values, node)
        if category == RANDOM:
            return f"the body draws random numbers (`{name}`)"
        if category != EFFECT:
            hidden = checker.call_reason(node)  # a helper, method or sub-cell may write state or draw numbers
            if hidden is not None:
                return (f"the body calls `{code_of(node.func)}`, which is not known to be free of effects "
                        f"({hidden})")
            continue
        if name.lower() == "depend":
            return "the body orders side effects with `depend`"
        target = effect_target(node, name)
        if target is None:
            return f"the body calls `{name}` for its effect: only assigns to the loop's own elements are mapped"
        sequence = None
        if isinstance(target, cst.Name) and target.value in owners:
            sequence = owners[target.value]
        elif (index is not None and isinstance(target, cst.Subscript) and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index)
                and isinstance(target.slice[0].slice.value, cst.Name) and target.slice[0].slice.value.value == index):
            sequence = target.value
        if sequence is not None:
            if state_sequence(ctx, values, sequence):
                continue
            return (f"the body writes `{code_of(target)}`, an element of `{code_of(sequence)}`, which is not known "
                    "to hold distinct Parameters (only the Cell's own ParameterTuples and their clones are mapped)")
        return (f"the body writes `{code_of(target)}`, which is not the element's own state (the loop orders "
                "such writes, a map does not)")
    return None


def _test_of(node: cst.CSTNode) -> cst.BaseExpression:
    return node.test  # an If or an IfExp


class _Specialize(cst.CSTTransformer):
    """Replace each decided ``if`` by the statements of the chosen branch, each decided ``a if t else b`` by the
    chosen value."""

    def __init__(self, chosen: Dict[int, bool]):
        super().__init__()
        self.chosen = chosen
        self.ids: Dict[int, int] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        return True

    def leave_If(self, original: cst.If, updated: cst.If):
        if id(original) not in self.chosen:
            return updated
        if self.chosen[id(original)]:
            return cst.FlattenSentinel(list(suite_statements(updated.body)))
        if updated.orelse is None:
            return cst.RemovalSentinel.REMOVE
        if isinstance(updated.orelse, cst.If):
            return updated.orelse.with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel(list(suite_statements(updated.orelse.body)))

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        if id(original) not in self.chosen:
            return updated
        chosen = updated.body if self.chosen[id(original)] else updated.orelse
        return chosen.with_changes(lpar=[], rpar=[]) if hasattr(chosen, "lpar") else chosen


def _flatten(items) -> List[cst.BaseStatement]:
    out: List[cst.BaseStatement] = []
    for item in items:
        if isinstance(item, cst.FlattenSentinel):
            out.extend(item.nodes)
        elif isinstance(item, cst.RemovalSentinel):
            continue
        else:
            out.append(item)
    return out


def _variant(ctx, values, loop, elements, sequences, index, length_of, body, result, conditions, assigned
             ) -> Tuple[Optional[_Variant], Optional[str]]:
    """One registered function: its parameters (bound invariants, then mapped elements), their types, the values
    bound and the sequences mapped, with ``self.x`` and ``seq[i]`` replaced by parameters in the body."""
    code: List[cst.CSTNode] = list(body) + ([_expr_line(result)] if result is not None else [])
    if bare_self(code):
        return None, "the per-element code uses `self` itself (not an attribute of it)"
    taken: Set[str] = set(elements) | assigned | {n.value for c in code for n in read_name_nodes(c)}
    if index is not None:
        taken.add(index)
    mapping: Dict[int, str] = {}
    variant = _Variant(conditions, [], None)
    params: List[str] = list(elements)
    mapped: List[cst.BaseExpression] = list(sequences)
    if index is not None:
        picks, why = position_reads(code, index)
        if why is not None:
            return None, why
        by_text: Dict[str, str] = {}
        for pick in picks:
            text = code_of(pick.value)
            if any(n.value in assigned for n in read_name_nodes(pick.value)):
                return None, f"`{text}` is reassigned in the body"
            if text not in by_text:
                name = _element_name(pick.value, index, taken)
                taken.add(name)
                by_text[text] = name
                params.append(name)
                mapped.append(pick.value)
            mapping[id(pick)] = by_text[text]
        if length_of is not None and code_of(length_of) not in by_text:
            return None, (f"the loop runs over `len({code_of(length_of)})` but does not pick its elements: a map "
                          "would run over the picked sequences instead")
        if length_of is not None:
            variant.lead = by_text[code_of(length_of)]
    if not mapped:
        return None, "the body picks no element of any sequence"
    picked = _Substitute(mapping)  # ``seq[i]`` -> its element first: ``self.x`` inside a pick is mapped, not bound
    body = [stmt.visit(picked) for stmt in body]
    result = result.visit(picked) if result is not None else None
    code = list(body) + ([_expr_line(result)] if result is not None else [])
    mapping = {}
    bound: List[Tuple[str, cst.BaseExpression, str]] = []
    roots: Dict[str, str] = {}
    for root in self_roots(code):
        attr = root.attr.value
        if attr not in roots:
            if ctx.scope.find_method(values.owner, attr) is not None:
                return None, f"the body calls the method `self.{attr}` (a map needs it as a value)"
            kind = register_type(ctx, values, root, loop)
            if kind is None and values.kind(root) in (Kind.TENSOR_SEQ, Kind.CELL_SEQ):
                return None, f"the body reads the whole sequence `self.{attr}`, not only this element of it"
            if kind is None:
                return None, (f"cannot tell what `self.{attr}` is (MultitypeFuncGraph registers each argument's "
                              "type: Function, Tensor, Number, Bool, String)")
            name = attr if attr not in taken else unique_name(ctx, attr + "_", taken)
            taken.add(name)
            roots[attr] = name
            bound.append((name, root, kind))
        mapping[id(root)] = roots[attr]
    substitute = _Substitute(mapping)
    new_body = [stmt.visit(substitute) for stmt in body]
    new_result = result.visit(substitute) if result is not None else None
    seen: Set[str] = set(roots.values())
    new_code = list(new_body) + ([_expr_line(new_result)] if new_result is not None else [])
    for name in (n for c in new_code for n in read_name_nodes(c)):
        local = name.value in values.env or name.value in values.parameters
        if not local or name.value in params or name.value in assigned or name.value == index:
            continue
        if name.value == "self" or name.value in seen:
            continue
        kind = register_type(ctx, values, cst.Name(name.value), loop)
        if kind is None:
            return None, (f"cannot tell what `{name.value}` is (MultitypeFuncGraph registers each argument's type: "
                          "Function, Tensor, Number, Bool, String)")
        seen.add(name.value)
        bound.append((name.value, cst.Name(name.value), kind))
    variant.body = new_body
    variant.result = new_result
    variant.params = [b[0] for b in bound] + params
    variant.types = [b[2] for b in bound] + ["Tensor"] * len(params)
    variant.bound = [b[1] for b in bound]
    variant.sequences = mapped
    variant.lead = variant.lead or params[0]
    return variant, None


def _element_name(seq: cst.BaseExpression, index: str, taken: Set[str]) -> str:
    """``grads[i]`` -> ``grad``, ``self.moments[i]`` -> ``moment``, ``m[i]`` -> ``m_i``."""
    base = seq.attr.value if isinstance(seq, cst.Attribute) else seq.value
    base = base.lstrip("_") or "element"
    name = base[:-1] if base.endswith("s") and len(base) > 2 else f"{base}_{index}"
    candidate, counter = name, 2
    while candidate in taken:
        candidate = f"{name}_{counter}"
        counter += 1
    return candidate


class _Substitute(cst.CSTTransformer):
    def __init__(self, mapping: Dict[int, str]):
        super().__init__()
        self.mapping = mapping

    def on_leave(self, original_node, updated_node):
        if id(original_node) in self.mapping:
            return cst.Name(self.mapping[id(original_node)])
        return updated_node


def _build(ctx, values, loop, elements, variants: List[_Variant], map_inputs, assign_to, reserved: Set[str],
           hoisted: int) -> Tuple[Optional[UpdatePlan], Optional[str]]:
    imports: List[ImportRequest] = []
    spelled = {}
    for qualified in ("mindspore.ops.MultitypeFuncGraph", "mindspore.ops.partial"):
        found = ctx.spell(qualified)
        if found is None:
            return None, f"cannot spell {qualified.replace('mindspore.', '')} in this module"
        spelled[qualified] = found[0]
    mapper = existing_hypermap(ctx, values.owner)
    if mapper is None:
        found = ctx.spell("mindspore.ops.HyperMap")
        if found is None:
            return None, "cannot spell ops.HyperMap in this module"
        mapper = f"{found[0]}()"
    anchor = anchor_statement(ctx, values.func)
    if anchor is None:
        return None, "no module-level statement to put the mapped function after"
    for qualified in ("mindspore.ops.MultitypeFuncGraph", "mindspore.ops.partial") + (
            ("mindspore.ops.HyperMap",) if not mapper.startswith("self.") else ()):
        imports.extend(ctx.spell(qualified)[1])
    base = "_update_" + variants[0].lead.lstrip("_")
    taken = set(reserved)
    new_defs: List[cst.BaseStatement] = []
    calls: List[cst.BaseStatement] = []
    for variant in variants:
        graph = unique_name(ctx, base, taken)
        taken.add(graph)
        function = unique_name(ctx, graph + "_tensors", taken)
        taken.add(function)
        types = ", ".join(f'"{t}"' for t in variant.types)
        header = cst.parse_module(
            f'{graph} = {spelled["mindspore.ops.MultitypeFuncGraph"]}("{graph}")\n\n\n'
            f"{_wrap(f'@{graph}.register(', types.split(', '))}\n"
            f"{_wrap(f'def {function}(', variant.params)}:\n    pass\n")
        assign_graph, definition = header.body
        returned = variant.result if variant.result is not None else cst.Name("True")
        body = list(variant.body) + [cst.SimpleStatementLine(body=[cst.Return(value=returned)])]
        definition = definition.with_changes(body=cst.IndentedBlock(body=body),
                                             leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        new_defs += [assign_graph.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()]), definition]
        inputs, _ = map_inputs(list(variant.sequences))
        indent = _column(ctx, values, loop) + 4 * hoisted
        prefix = code_of(assign_to(cst.Name("__call__"))).index("__call__") if assign_to is not None else 0
        text = _call_text(mapper, spelled["mindspore.ops.partial"], graph, [code_of(b) for b in variant.bound],
                          [code_of(s) for s in inputs], indent + prefix)
        # libcst writes the block's indentation before each continuation line itself: keep only the offset
        call = cst.parse_expression("\n".join([text.split("\n")[0]] + [line[indent:] for line in text.split("\n")[1:]]))
        calls.append(assign_to(call) if assign_to is not None else cst.SimpleStatementLine(body=[cst.Expr(call)]))
    reserved.update(taken)
    replacement = _choose(variants, calls, 0)
    leading = list(loop.leading_lines)
    replacement = [replacement[0].with_changes(leading_lines=leading)] + replacement[1:]
    return UpdatePlan(replacement, new_defs, anchor, tuple(dict.fromkeys(imports)), hoisted), None


def _wrap(opening: str, items: Sequence[str], limit: int = 110, column: int = 0, closing: str = ")") -> str:
    """``opening + ", ".join(items) + closing`` written at ``column``, its items on continuation lines (aligned
    after the parenthesis) when a line would pass ``limit`` characters."""
    line = opening + ", ".join(items) + closing
    if column + len(line) <= limit:
        return line
    lines, current, start = [], opening, column
    for position, item in enumerate(items):
        piece = item + (", " if position < len(items) - 1 else closing)
        if start + len(current) + len(piece.rstrip()) > limit and current.strip() != opening.strip():
            lines.append(current.rstrip())
            current, start = " " * (column + len(opening)), 0
        current += piece
    lines.append(current)
    return "\n".join(lines)


def _call_text(mapper: str, partial: str, graph: str, bound: List[str], sequences: List[str], column: int) -> str:
    """``mapper(partial(graph, *bound), *sequences)`` wrapped to fit at ``column`` (the statement's indentation
    plus what precedes the call on its line)."""
    opening = f"{mapper}("
    if not bound:
        return _wrap(opening, [graph] + sequences, column=column)
    inner = _wrap(f"{partial}(", [graph] + bound, column=column + len(opening))
    text = opening + inner
    last = text.split("\n")[-1]
    start = column if "\n" not in text else 0
    rest = ", ".join(sequences) + ")"
    if start + len(last) + 2 + len(rest) <= 110:
        return text + ", " + rest
    return text + ",\n" + _wrap(" " * (column + len(opening)), sequences, column=0).lstrip("\n")


def _column(ctx, values: FunctionValues, node: cst.CSTNode) -> int:
    """The indentation (in characters) of a statement in a module-level function or a method of a module-level
    class: the indents of the blocks around it (parents are recorded up to the graph function)."""
    blocks: List[cst.IndentedBlock] = []
    parent = ctx.parent(node)
    while parent is not None and parent is not values.func:
        if isinstance(parent, cst.IndentedBlock):
            blocks.append(parent)
        parent = ctx.parent(parent)
    if isinstance(values.func.body, cst.IndentedBlock) and values.func.body not in blocks:
        blocks.append(values.func.body)
    owner = ctx.scope.owner_of.get(values.func)
    if owner is not None and isinstance(ctx.scope.classes[owner].node.body, cst.IndentedBlock):
        blocks.append(ctx.scope.classes[owner].node.body)
    return sum(len((b.indent if b.indent is not None else ctx.module.default_indent).replace("\t", "    "))
               for b in blocks)


def _choose(variants: List[_Variant], calls: List[cst.BaseStatement], depth: int) -> List[cst.BaseStatement]:
    """The Python ``if`` tree over the decided tests (variants are in ``itertools.product`` order: true first)."""
    if len(variants) == 1:
        return [calls[0]]
    half = len(variants) // 2
    test = variants[0].conditions[depth][0]
    then = _choose(variants[:half], calls[:half], depth + 1)
    other = _choose(variants[half:], calls[half:], depth + 1)
    test = test.with_changes(lpar=[], rpar=[]) if hasattr(test, "lpar") else test
    return [cst.If(test=test, body=cst.IndentedBlock(body=then),
                   orelse=cst.Else(body=cst.IndentedBlock(body=other)))]
