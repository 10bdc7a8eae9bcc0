"""What a per-element loop body does, for mapping it with ``ops.MultitypeFuncGraph`` + ``ops.HyperMap``.

A loop over parameters/gradients/optimizer state (``for p, m, g in zip(params, moments, grads)``, ``for i in
range(len(params))``) becomes one registered function applied to every element. That computes the same when:

* each iteration only writes its own elements (``assign(m, ...)`` with ``m`` a loop element): a map has no order
  between elements, the loop does, so a write to anything shared (``self.global_step``) is refused;
* no value flows from one iteration to the next: every name the body assigns is assigned before it is read on
  every path through the body (:func:`carried`), and none is read after the loop (the rule checks that);
* the position is only used to pick the element of a sequence (``grads[i]``, ``lrs[index]``) (:func:`position_reads`);
* nothing leaves the body early (:func:`body_blocker`);
* every loop-invariant value handed to the function has a type ``MultitypeFuncGraph.register`` can name
  (:func:`register_type`): Primitives and Cells are ``"Function"``, Tensors and Parameters ``"Tensor"``, Python
  numbers ``"Number"``, bools ``"Bool"``, strings ``"String"``.

Tests on compile-time constants (``if self.clip_type == 0``, ``lrs[index] if self.is_group_lr else lrs``) are
found by :func:`constant_tests` so the rewrite can choose between whole maps in Python instead of branching per
element: measured on MindSpore 2.10, a mapped function that branches on a bound Python number and calls a sub-cell
fails to compile (``The pointer[func_graph->get_return()] is null``), plain function or MultitypeFuncGraph alike.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import read_name_nodes
from ms_lint.analysis.init_numbers import is_number
from ms_lint.analysis.shapes import init_assignment, init_value  # where ``self.x = ...`` is found (value, method)
from ms_lint.analysis.values import NN_OPTIMIZER, FunctionValues, Kind, inherits_base
from ms_lint.cstutil import code_of, suite_statements
from ms_lint.walk import find

ASSIGN_EFFECTS = {"assign", "assignadd", "assign_add", "assignsub", "assign_sub"}
# ``nn.Optimizer.get_lr()``: the learning-rate Parameter (or schedule output), one per group when is_group_lr.
OPTIMIZER_LR = "get_lr"


def body_blocker(body: Sequence[cst.BaseStatement]) -> Optional[str]:
    """Why the statements cannot be the body of a mapped function: an early exit, a nested loop or scope."""
    for stmt in body:
        for node in code_nodes(stmt):
            if isinstance(node, (cst.Break, cst.Continue)):
                return f"the body has a `{'break' if isinstance(node, cst.Break) else 'continue'}`"
            if isinstance(node, cst.Return):
                return "the body has a `return`"
            if isinstance(node, (cst.Yield, cst.Await)):
                return "the body yields"
            if isinstance(node, (cst.For, cst.While)):
                return "the body has a nested loop"
            if isinstance(node, (cst.Try, cst.With, cst.Global, cst.Nonlocal, cst.Del, cst.Raise, cst.Assert)):
                return f"the body has a `{type(node).__name__.lower()}` statement"
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.GeneratorExp,
                                 cst.SetComp, cst.DictComp, cst.NamedExpr)):
                return "the body has a nested scope (def, lambda, comprehension) or `:=`"
    return None


def code_nodes(root: cst.CSTNode) -> List[cst.CSTNode]:
    """Every code node under ``root`` (``root`` included), in visit order."""
    return find(root, cst.CSTNode)


def assigned_names(body: Sequence[cst.BaseStatement]) -> Set[str]:
    """Plain names the statements bind (``x = ...``, ``x += ...``, ``a, b = ...``)."""
    names: Set[str] = set()
    for node in (n for stmt in body for n in code_nodes(stmt)):
        if isinstance(node, cst.AssignTarget):
            names.update(_target_names(node.target))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            names.update(_target_names(node.target))
    return names


def _target_names(target: cst.BaseExpression) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    return []


def carried(body: Sequence[cst.BaseStatement], ready: Set[str], assigned: Set[str]) -> Optional[str]:
    """A name the body assigns that some path reads before assigning it: its value would come from the previous
    element (or from before the loop), which a map does not have. ``ready``: names bound on entry (the elements)."""
    found: List[str] = []
    _definite(body, set(ready), assigned, found)
    return found[0] if found else None


def _definite(body: Sequence[cst.BaseStatement], ready: Set[str], assigned: Set[str], found: List[str]) -> Set[str]:
    """Walk ``body`` with the names surely bound so far; record early reads; return the names surely bound after."""
    for stmt in body:
        if found:
            return ready
        if isinstance(stmt, cst.If):
            _check_reads(stmt.test, ready, assigned, found)
            then = _definite(suite_statements(stmt.body), set(ready), assigned, found)
            if stmt.orelse is None:
                other = set(ready)
            elif isinstance(stmt.orelse, cst.If):
                other = _definite([stmt.orelse], set(ready), assigned, found)
            else:
                other = _definite(suite_statements(stmt.orelse.body), set(ready), assigned, found)
            ready = then & other
            continue
        for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
            value = getattr(small, "value", None)
            if value is not None:
                _check_reads(value, ready, assigned, found)
            if isinstance(small, cst.AugAssign):
                _check_reads(small.target, ready, assigned, found)
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    if not isinstance(target.target, (cst.Name, cst.Tuple, cst.List)):
                        _check_reads(target.target, ready, assigned, found)
                    ready |= set(_target_names(target.target))
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                ready |= set(_target_names(small.target))
    return ready


def _check_reads(node: cst.CSTNode, ready: Set[str], assigned: Set[str], found: List[str]) -> None:
    for name in read_name_nodes(node):
        if name.value in assigned and name.value not in ready and name.value not in found:
            found.append(name.value)


def position_reads(body: Sequence[cst.BaseStatement], index: str) -> Tuple[List[cst.Subscript], Optional[str]]:
    """Every read of the position ``index`` as ``seq[index]`` (the whole subscript), or why some read is not one
    (``index + 1``, ``seq[index - 1]``, ``x[index, 0]``: a map hands over elements, not positions)."""
    subscripts: List[cst.Subscript] = []
    allowed: Set[int] = set()
    for node in (n for stmt in body for n in code_nodes(stmt)):
        if (isinstance(node, cst.Subscript) and len(node.slice) == 1
                and isinstance(node.slice[0].slice, cst.Index)
                and isinstance(node.slice[0].slice.value, cst.Name) and node.slice[0].slice.value.value == index
                and isinstance(node.value, (cst.Name, cst.Attribute))):
            subscripts.append(node)
            allowed.add(id(node.slice[0].slice.value))
    for name in (n for stmt in body for n in read_name_nodes(stmt)):
        if name.value == index and id(name) not in allowed:
            return [], f"the body reads the position `{index}` other than to pick an element (`seq[{index}]`)"
    return subscripts, None


def constant_tests(values: FunctionValues, body: Sequence[cst.BaseStatement], varying: Set[str]
                   ) -> List[cst.CSTNode]:
    """Top-level ``if`` statements and ``name = a if test else b`` values whose test is a compile-time constant
    that does not depend on the element (``self.clip_type == 0``, ``self.is_group_lr``): the rewrite decides them
    once, in Python, around the map. ``varying``: the elements, the position and the names the body assigns."""
    found: List[cst.CSTNode] = []
    for stmt in body:
        if isinstance(stmt, cst.If) and _constant(values, stmt.test, varying):
            found.append(stmt)
        elif isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(
                stmt.body[0], cst.Assign) and isinstance(stmt.body[0].value, cst.IfExp) and _constant(
                values, stmt.body[0].value.test, varying):
            found.append(stmt.body[0].value)
    return found


def _constant(values: FunctionValues, test: cst.BaseExpression, varying: Set[str]) -> bool:
    if values.kind(test) is not Kind.CONST:
        return False
    return not any(n.value in varying for n in read_name_nodes(test))


def effect_target(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The state an assign-family call writes (its first argument), or None for any other effect."""
    if name.lower() not in ASSIGN_EFFECTS:
        return None
    args = [a for a in call.args if a.keyword is None and not a.star]
    if args:
        return args[0].value
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("variable", "ref",
                                                                                              "input", "x")), None)


def register_type(ctx, values: FunctionValues, expr: cst.BaseExpression, at: cst.CSTNode) -> Optional[str]:
    """The ``MultitypeFuncGraph.register`` type name of a loop-invariant value (``self.cast`` -> "Function",
    ``self.global_step`` -> "Tensor", ``self.beta1 = 0.9`` -> "Number"), or None when it cannot be told."""
    if isinstance(expr, cst.Name) and expr.value not in values.parameters:
        bound = _local_bindings(values, expr.value)
        if len(bound) == 1 and isinstance(bound[0], cst.Attribute) and isinstance(bound[0].value, cst.Name) \
                and bound[0].value.value == "self":
            return register_type(ctx, values, bound[0], at)  # ``b1 = self.beta1``
    kind = values.kind(expr)
    if kind in (Kind.OP, Kind.CONST_OP, Kind.CELL):
        return "Function"
    if kind is Kind.TENSOR:
        return "Tensor"
    if isinstance(expr, cst.Name) and _bound_to_lr(ctx, values, expr.value):
        return "Tensor"
    if kind not in (Kind.CONST, Kind.UNKNOWN):
        return None
    literal = _literal_of(ctx, values, expr)
    if literal is not None:
        return literal
    if isinstance(expr, cst.Name) and is_number(ctx, values.func, expr, at):
        return "Number"
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        found = init_assignment(ctx, values.owner, expr.attr.value)
        if found is not None:
            value, method = found
            statement = _statement_assigning(method, expr.attr.value)
            if statement is not None and is_number(ctx, method, value, statement):
                return "Number"
            if isinstance(value, cst.Name) and _validated_number(ctx, method, value.value, value.value):
                return "Number"
        unpacked = _unpacked_parameter(ctx, values.owner, expr.attr.value)
        if unpacked is not None and _validated_number(ctx, unpacked[0], unpacked[1], unpacked[2]):
            return "Number"
    return None


# MindSpore's argument checkers that raise unless the value is a Python number (bools excluded).
NUMBER_CHECKS = {"check_float_range", "check_positive_float", "check_non_negative_float", "check_number_range",
                 "check_positive_int", "check_non_negative_int", "check_int_range", "check_is_float", "check_is_int",
                 "check_float", "check_int", "check_positive_number", "check_non_negative_number"}


def _validated_number(ctx, method: cst.FunctionDef, parameter: str, text: str) -> bool:
    """``__init__`` checks ``text`` (``lambd``, ``etas[1]``: built from its parameter ``parameter``, never rebound
    there) with ``validator.check_value_type(name, text, [float])`` or a range check such as
    ``validator.check_float_range(text, ...)``: it is a Python number whenever the Cell exists."""
    params = {p.name.value for p in method.params.params}
    if parameter not in params or parameter in assigned_names(list(suite_statements(method.body))):
        return False
    for node in code_nodes(method.body):
        if not isinstance(node, cst.Call):
            continue
        qualified = ctx.imports.qualify(node.func) or ""
        if not qualified.startswith("mindspore._checkparam."):
            continue
        check = qualified.rsplit(".", 1)[-1]
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if check in NUMBER_CHECKS and any(code_of(a) == text for a in args):
            return True
        if check == "check_value_type" and len(args) >= 3 and code_of(args[1]) == text and isinstance(
                args[2], (cst.List, cst.Tuple)) and args[2].elements and all(
                isinstance(e.value, cst.Name) and e.value.value in ("float", "int") for e in args[2].elements):
            return True
    return False


def _unpacked_parameter(ctx, owner: Optional[str], attr: str) -> Optional[Tuple[cst.FunctionDef, str, str]]:
    """``self.a, self.b = etas`` (the only assignment to ``self.b``, from a parameter of the method): (the method,
    ``etas``, ``etas[1]``)."""
    if owner is None:
        return None
    found = []
    for cls in ctx.attributes.class_chain(owner):
        for method in ctx.scope.classes[cls].methods.values():
            for node in code_nodes(method.body):
                if not isinstance(node, cst.Assign):
                    continue
                for target in node.targets:
                    if isinstance(target.target, cst.Attribute) and target.target.attr.value == attr:
                        found.append(None)
                    if not isinstance(target.target, cst.Tuple):
                        continue
                    for position, element in enumerate(target.target.elements):
                        value = element.value
                        if (isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name)
                                and value.value.value == "self" and value.attr.value == attr):
                            found.append((method, node.value, position)
                                         if isinstance(node.value, cst.Name) else None)
    if len(found) != 1 or found[0] is None:
        return None
    method, name, position = found[0]
    return method, name.value, f"{name.value}[{position}]"


def _literal_of(ctx, values: FunctionValues, expr: cst.BaseExpression) -> Optional[str]:
    value: Optional[cst.BaseExpression] = expr
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        value = init_value(ctx, values.owner, expr.attr.value)
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    if isinstance(value, (cst.Integer, cst.Float)):
        return "Number"
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return "Bool"
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
        return "String"
    return None


def _statement_assigning(method: cst.FunctionDef, attr: str) -> Optional[cst.CSTNode]:
    for node in code_nodes(method.body):
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                if isinstance(small, cst.Assign) and any(
                        isinstance(t.target, cst.Attribute) and t.target.attr.value == attr for t in small.targets):
                    return node
    return None


def _bound_to_lr(ctx, values: FunctionValues, name: str) -> bool:
    """``lrs = self.get_lr()`` in an ``nn.Optimizer`` subclass that does not define ``get_lr``: a Tensor (or, with
    parameter groups, a tuple of them, which the rewrite maps instead of binding)."""
    bound = [small.value for stmt in suite_statements(values.func.body)
             for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ())
             if isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                     for t in small.targets)]
    if len(bound) != 1 or not isinstance(bound[0], cst.Call) or bound[0].args:
        return False
    func = bound[0].func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
            and func.attr.value == OPTIMIZER_LR):
        return False
    if ctx.scope.find_method(values.owner, OPTIMIZER_LR) is not None:
        return False
    return _is_optimizer(ctx, values.owner)


def _is_optimizer(ctx, owner: Optional[str]) -> bool:
    """An ``nn.Optimizer`` subclass (the class whose ``get_lr`` gives the learning rate)."""
    return inherits_base(ctx.scope, ctx.imports, ctx.attributes, owner, NN_OPTIMIZER)


def self_roots(nodes: Sequence[cst.CSTNode]) -> List[cst.Attribute]:
    """Every ``self.<attr>`` (the first level of a ``self.a.b`` chain) in the code, in order."""
    found: List[cst.Attribute] = []
    for root in nodes:
        for node in code_nodes(root):
            if (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                    and node.value.value == "self"):
                found.append(node)
    return found


def bare_self(nodes: Sequence[cst.CSTNode]) -> bool:
    """``self`` used other than as ``self.<attr>`` (passed on, or called)."""
    inside = {id(n.value) for root in nodes for n in code_nodes(root) if isinstance(n, cst.Attribute)}
    return any(n.value == "self" and id(n) not in inside for root in nodes for n in read_name_nodes(root))


def group_by_text(nodes: Sequence[cst.CSTNode]) -> Dict[str, List[cst.CSTNode]]:
    out: Dict[str, List[cst.CSTNode]] = {}
    for node in nodes:
        out.setdefault(code_of(node), []).append(node)
    return out


def _local_bindings(values: FunctionValues, name: str) -> List[Optional[cst.BaseExpression]]:
    """Every value bound to the local ``name`` in the function (None for a binding that is not ``name = v``)."""
    found: List[Optional[cst.BaseExpression]] = []
    for node in code_nodes(values.func.body):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    found.append(node.value)
                elif name in _target_names(target.target):
                    found.append(None)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)) and name in _target_names(node.target):
            found.append(None)
    return found


def state_sequence(ctx, values: FunctionValues, expr: cst.BaseExpression) -> bool:
    """A sequence of the Cell's own, distinct Parameters: ``self.<attr>`` set in ``__init__`` to a ``ParameterTuple``
    of something other than a literal list (``ParameterTuple(params)``), to a ``.clone(...)`` of one
    (``self.moments = self.params.clone(prefix="m")``), or ``nn.Optimizer``'s own ``_parameters``/``parameters``;
    or a local bound once to such an attribute (``params = self._parameters``). Not ``(self.total,) * n`` or
    ``ParameterTuple([self.w, self.b])``: their elements alias Parameters the body may also reach another way,
    so elements would not each be written once, independently of the others."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        value = init_value(ctx, values.owner, expr.attr.value)
        if value is None:
            return expr.attr.value in OPTIMIZER_SEQUENCES
        return _distinct_parameters(value)
    if isinstance(expr, cst.Name) and expr.value not in values.parameters:
        bound = _local_bindings(values, expr.value)
        return len(bound) == 1 and bound[0] is not None and state_sequence(ctx, values, bound[0])
    return False


# Sequences ``nn.Optimizer.__init__`` builds from the parameters it is given (a ParameterTuple each).
OPTIMIZER_SEQUENCES = ("_parameters", "parameters")


def _distinct_parameters(value: cst.BaseExpression) -> bool:
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    name = func.attr.value if isinstance(func, cst.Attribute) else (func.value if isinstance(func, cst.Name) else "")
    if name == "clone":
        return True
    if name == "ParameterTuple" and value.args:
        items = value.args[0].value
        if isinstance(items, (cst.List, cst.Tuple)):  # fresh Parameters only: ``[Parameter(...), ...]``
            return all(_new_parameter(e.value) for e in items.elements if isinstance(e, cst.Element))
        if isinstance(items, (cst.ListComp, cst.GeneratorExp)):
            return _new_parameter(items.elt)
        return not isinstance(items, cst.BinaryOperation)  # ``[self.w] * n`` repeats one Parameter
    return False


def _new_parameter(expr: cst.BaseExpression) -> bool:
    """``Parameter(...)`` / ``ms.Parameter(...)``: a Parameter made here, reachable through no other name."""
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    return (func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")) == "Parameter"
