"""The HyperMap rewrite of a per-element loop: ``tuple(f(g) for g in grads)`` -> ``ops.HyperMap()(f, grads)``.

Graph mode unrolls a Python loop over a tuple of N tensors into N copies of its body (N = number of gradients or
parameters: it grows with the model); ``ops.HyperMap`` maps a function over the sequence as one node. Measured on
MindSpore 2.10 (CPU, first call): 19x faster to compile at N=200, and at N=500 the loop no longer compiles
(``Exceed function call depth limit``) while HyperMap compiles in 1.5 s.

What the mapped function is:

* ``f(g)`` -> ``f``; ``f(c1, c2, g)`` -> ``ops.partial(f, c1, c2)`` when ``f`` is an ops function, a Primitive or
  Cell attribute (``self.cast``), a method, or a module-level function;
* anything else -> a new module-level function ``_map_<element>`` holding the per-element statements, with the
  loop-invariant values it reads (locals, ``self.<attr>`` chains) as leading parameters bound with
  ``ops.partial``. Module-level names (``ops``, ``ms``, constants) stay as they are.

Checked on MindSpore 2.10 inside ``@ms.jit`` and ``Cell.construct``: plain ``def``s, ``ops.partial`` with Python
floats, Primitive instances, bound methods and sub-Cells as bound arguments all work; ``HyperMap`` returns the
container type of its input (a list in, a list out), which callers handle with ``wrap``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.cstutil import code_of, suite_statements, walk_statements
from ms_lint.diagnostics import ImportRequest
from ms_lint.analysis.shapes import init_assignment, init_value
from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.walk import run_visitor


@dataclass
class MapPlan:
    """The rewrite: the expression that replaces the loop's result, plus a helper def and where it goes."""

    call: cst.BaseExpression
    imports: Tuple[ImportRequest, ...]
    new_def: Optional[cst.FunctionDef] = None
    anchor: Optional[cst.CSTNode] = None  # top-level statement the new def goes after



def existing_hypermap(ctx, owner: Optional[str]) -> Optional[str]:
    """``self.hyper_map`` when the class already holds a ``HyperMap()`` (no arguments) in an attribute, or
    inherits ``nn.Optimizer``, whose ``__init__`` sets one."""
    if owner is None:
        return None
    own = init_assignment(ctx, owner, "hyper_map")
    assigned_anywhere = _assigns_attribute(ctx, owner, "hyper_map")
    for cls in ctx.attributes.class_chain(owner):
        bases = ctx.scope.classes[cls].node.bases
        if any(ctx.imports.qualify(base.value) == "mindspore.nn.Optimizer" for base in bases):
            # nn.Optimizer.__init__ sets self.hyper_map = C.HyperMap(); a subclass may have replaced it
            # (``C.HyperMap(fn)``, ``C.Map()``), then it is not the plain HyperMap this rewrite needs.
            if not assigned_anywhere or (own is not None and _plain_hypermap(ctx, own[0])):
                return "self.hyper_map"
            break
        init = ctx.scope.classes[cls].methods.get("__init__")
        if init is None:
            continue
        for stmt in walk_statements(suite_statements(init.body), into_defs=False):
            for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
                    continue
                target = small.targets[0].target
                value = small.value
                if (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                        and target.value.value == "self" and isinstance(value, cst.Call) and not value.args
                        and ctx.imports.qualify(value.func) == "mindspore.ops.HyperMap"
                        and init_value(ctx, owner, target.attr.value) is value):
                    return f"self.{target.attr.value}"
    return None


def _plain_hypermap(ctx, value: cst.BaseExpression) -> bool:
    return (isinstance(value, cst.Call) and not value.args
            and ctx.imports.qualify(value.func) == "mindspore.ops.HyperMap")


def _assigns_attribute(ctx, owner: str, attr: str) -> bool:
    """Some method of the class or an in-module base assigns ``self.<attr>`` (once or more)."""
    for cls in ctx.attributes.class_chain(owner):
        for method in ctx.scope.classes[cls].methods.values():
            for stmt in walk_statements(suite_statements(method.body), into_defs=False):
                for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
                    targets = ([t.target for t in small.targets] if isinstance(small, cst.Assign)
                               else [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else [])
                    if any(isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name)
                           and t.value.value == "self" and t.attr.value == attr for t in targets):
                        return True
    return False


class _Reads(cst.CSTVisitor):
    """Names read by an expression, and maximal ``self.<attr>...`` chains, in order of first appearance."""

    def __init__(self):
        super().__init__()
        self.names: List[cst.Name] = []
        self.self_chains: List[cst.Attribute] = []
        self.bare_self = False
        self.nested_scope = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and root.value == "self":
            self.self_chains.append(node)
            return False
        run_visitor(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        run_visitor(node.value, self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "self":
            self.bare_self = True
        self.names.append(node)

    def visit_Lambda(self, node) -> bool:
        self.nested_scope = True
        return False

    visit_ListComp = visit_GeneratorExp = visit_SetComp = visit_DictComp = visit_Lambda


class _Substitute(cst.CSTTransformer):
    def __init__(self, mapping: Dict[cst.CSTNode, str]):
        super().__init__()
        self.mapping = mapping

    def on_leave(self, original_node, updated_node):
        if original_node in self.mapping:
            return cst.Name(self.mapping[original_node])
        return updated_node


def _is_local(values: FunctionValues, name: str) -> bool:
    return name in values.env or name in values.parameters


def unique_name(ctx, base: str, taken: Set[str]) -> str:
    name, counter = base, 2
    while name in taken or ctx._name_used(name):
        name = f"{base}_{counter}"
        counter += 1
    return name


def _simple_callable(ctx, values: FunctionValues, func: cst.BaseExpression) -> bool:
    """A callee that can be handed to HyperMap/partial as it is."""
    qualified = ctx.imports.qualify(func)
    if qualified and qualified.startswith("mindspore."):
        return True
    if isinstance(func, cst.Name):
        return func.value in ctx.scope.module_functions and not _is_local(values, func.value)
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        kind = values.kind(func)
        return kind in (Kind.OP, Kind.CELL) or ctx.scope.find_method(values.owner, func.attr.value) is not None
    return False


def _call_node(ctx, qualified: str, args: Sequence[cst.BaseExpression], imports: List[ImportRequest]
               ) -> Optional[cst.Call]:
    spelled = ctx.spell(qualified)
    if spelled is None:
        return None
    text, needed = spelled
    imports.extend(needed)
    return cst.Call(func=cst.parse_expression(text), args=_arg_list(args))


def _arg_list(args: Sequence[cst.BaseExpression]) -> List[cst.Arg]:
    out = []
    for index, value in enumerate(args):
        last = index == len(args) - 1
        out.append(cst.Arg(value=value, comma=cst.MaybeSentinel.DEFAULT if last else
                           cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
    return out


def plan_map(ctx, values: FunctionValues, elements: Sequence[str], sequences: Sequence[cst.BaseExpression],
             statements: Sequence[cst.SimpleStatementLine], result: cst.BaseExpression,
             wrap: Optional[str] = None, reserved: Optional[Set[str]] = None
             ) -> Tuple[Optional[MapPlan], Optional[str]]:
    """Plan ``HyperMap(fn, *sequences)`` computing ``result`` per element (after ``statements``, the per-element
    temporaries), or say why not. ``wrap="tuple"`` wraps the call in ``tuple(...)`` (input may be a list).
    ``reserved``: helper names other fixes of the same run already use (updated with the one chosen here)."""
    reserved = reserved if reserved is not None else set()
    imports: List[ImportRequest] = []
    mapper = existing_hypermap(ctx, values.owner)
    if mapper is not None:
        mapper_expr: cst.BaseExpression = cst.parse_expression(mapper)
    else:
        spelled = ctx.spell("mindspore.ops.HyperMap")
        if spelled is None:
            return None, "cannot spell ops.HyperMap in this module"
        imports.extend(spelled[1])
        mapper_expr = cst.Call(func=cst.parse_expression(spelled[0]))

    fn, new_def, why = _direct_function(ctx, values, elements, statements, result, imports)
    if fn is None and why is None:
        fn, new_def, why = _helper_function(ctx, values, elements, statements, result, imports, reserved)
    if fn is None:
        return None, why
    call: cst.BaseExpression = cst.Call(func=mapper_expr, args=_arg_list([fn] + list(sequences)))
    if wrap == "tuple":
        call = cst.Call(func=cst.Name("tuple"), args=[cst.Arg(call)])
    anchor = None
    if new_def is not None:
        anchor = anchor_statement(ctx, values.func)
        if anchor is None:
            return None, "no module-level statement to put the mapped function after"
    return MapPlan(call, tuple(dict.fromkeys(imports)), new_def, anchor), None


def _direct_function(ctx, values, elements, statements, result, imports):
    """``f(c, g)`` -> ``ops.partial(f, c)``; (None, None, None) when the element is not such a call."""
    if statements or not isinstance(result, cst.Call):
        return None, None, None
    args = result.args
    if any(a.keyword is not None or a.star for a in args) or len(args) < len(elements):
        return None, None, None
    trailing = [a.value for a in args[len(args) - len(elements):]]
    if not all(isinstance(t, cst.Name) and t.value == e for t, e in zip(trailing, elements)):
        return None, None, None
    leading = [a.value for a in args[:len(args) - len(elements)]]
    if not all(_evaluated_once_is_fine(value) for value in leading):
        return None, None, None  # ``f(self.dropout(x), g)``: the loop calls it per element; keep it per element
    reads = _Reads()
    for node in [result.func] + leading:
        run_visitor(node, reads)
    if reads.nested_scope or any(n.value in elements for n in reads.names):
        return None, None, None
    if not _simple_callable(ctx, values, result.func):
        return None, None, None
    func = result.func.with_changes(lpar=[], rpar=[]) if hasattr(result.func, "lpar") else result.func
    if not leading:
        return func, None, None
    partial = _call_node(ctx, "mindspore.ops.partial", [func] + leading, imports)
    if partial is None:
        return None, None, "cannot spell ops.partial in this module"
    return partial, None, None


def _evaluated_once_is_fine(expr: cst.BaseExpression) -> bool:
    """A bound argument of ``ops.partial`` is evaluated once, where the loop evaluated it per element: only
    names, ``a.b.c`` chains and literals, whose value the loop cannot change (calls may draw random numbers or
    update state)."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.Attribute):
        return _evaluated_once_is_fine(expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _evaluated_once_is_fine(expr.expression)
    return False


def _helper_function(ctx, values, elements, statements, result, imports, reserved: Set[str]):
    """A module-level ``def _map_<element>(<loop invariants>, <elements>)`` and its ``ops.partial``."""
    reads = _Reads()
    for stmt in statements:
        run_visitor(stmt, reads)
    run_visitor(result, reads)
    if reads.nested_scope:
        return None, None, "the per-element code has a lambda or comprehension"
    if reads.bare_self:
        return None, None, "the per-element code uses `self` itself"
    temporaries = _assigned_names(statements)
    mapping: Dict[cst.CSTNode, str] = {}
    bound: List[Tuple[str, cst.BaseExpression]] = []  # (parameter name, value passed to partial), in order
    taken: Set[str] = set(elements) | temporaries | {n.value for n in reads.names}
    chains = {id(c): c for c in reads.self_chains}
    names = {id(n): n for n in reads.names}
    by_chain: Dict[str, str] = {}
    for node in _walk_order(statements, result):
        if id(node) in chains:
            text = code_of(node)
            if text not in by_chain:
                base = node.attr.value
                name = base if base not in taken else unique_name(ctx, base + "_", taken)
                taken.add(name)
                by_chain[text] = name
                bound.append((name, node))
            mapping[node] = by_chain[text]
        elif id(node) in names:
            name = node.value
            if name in elements or name in temporaries or not _is_local(values, name):
                continue
            if all(name != existing for existing, _ in bound):
                bound.append((name, cst.Name(name)))
    fname = unique_name(ctx, f"_map_{elements[0]}", taken | reserved)
    reserved.add(fname)
    params = [name for name, _ in bound] + list(elements)
    body: List[cst.BaseStatement] = [stmt.visit(_Substitute(mapping)) for stmt in statements]
    body.append(cst.SimpleStatementLine(body=[cst.Return(value=result.visit(_Substitute(mapping)))]))
    new_def = cst.parse_statement(f"def {fname}({', '.join(params)}):\n    pass\n")
    new_def = new_def.with_changes(body=cst.IndentedBlock(body=body),
                                   leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    if bound:
        fn = _call_node(ctx, "mindspore.ops.partial", [cst.Name(fname)] + [value for _, value in bound], imports)
        if fn is None:
            return None, None, "cannot spell ops.partial in this module"
    else:
        fn = cst.Name(fname)
    return fn, new_def, None


def _walk_order(statements, result) -> List[cst.CSTNode]:
    collector = _Collect()
    for stmt in statements:
        run_visitor(stmt, collector)
    run_visitor(result, collector)
    return collector.nodes


class _Collect(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.nodes: List[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes.append(node)
        return True


def _assigned_names(statements: Sequence[cst.SimpleStatementLine]) -> Set[str]:
    names: Set[str] = set()
    for stmt in statements:
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        names.add(target.target.value)
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and isinstance(small.target, cst.Name):
                names.add(small.target.value)
    return names


def anchor_statement(ctx, func: cst.FunctionDef) -> Optional[cst.CSTNode]:
    """The module-level statement just before the class or function that holds ``func``."""
    body = list(ctx.module.body)
    owner = ctx.scope.owner_of.get(func)
    holder = ctx.scope.classes[owner].node if owner is not None else func
    for index, stmt in enumerate(body):
        if stmt is holder:
            return body[index - 1] if index > 0 else None
    return None
