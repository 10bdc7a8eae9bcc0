"""Can ``ops.where(cond, a, b)`` change the shape of what ``if cond: a else: b`` gives? A conservative proof.

``ops.where`` broadcasts its three inputs, an ``if`` does not: measured on MindSpore 2.10 (CPU, graph mode),
``s = x.sum(); if s > 0: s = v`` returns shape ``()`` or ``(3,)`` depending on the branch taken, the select
``(3,)`` both times; a shape-``(1,)`` condition turns 0-d branches into shape ``(1,)``. The select is the same
program only when both sides have one shape and the condition's shape broadcasts into it.

The proof tracks *shape leaves*: the set of tensors whose broadcast gives an expression's shape. Elementwise
operations (arithmetic, comparisons, ``ops.abs``/``cast``/``zeros_like``/``where``..., their Primitive and Tensor
method forms) take the union of their operands' leaves; Python numbers and visibly 0-d values (full reductions
such as ``x.sum()``, ``ms.Tensor(1.0)`` attributes, in-module methods that return only such values) add none;
anything else (a reshape, a matmul, an unknown call) is one opaque leaf named by its source text, equal only to
the same text. A local name is followed to its bindings when they all agree on their leaves (a binding that
reads the name itself, ``s = s + 1``, may only add leaves already there) and everything they read is stable (an
argument never rebound, or a local followed the same way): then every value the name ever holds has that shape.
Otherwise the name is its own leaf, which is sound only where both sides read it at the same moment.

Then ``leaves(a) == leaves(b)`` proves the sides have one shape, and ``leaves(cond) <= leaves(a)`` proves the
condition broadcasts into it.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from ms_lint.cstutil import call_name_args, code_of, short_code, suite_statements, walk_statements
from ms_lint.analysis.init_numbers import is_number, number_or_none
from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.walk import iter_nodes

Leaves = FrozenSet[str]
NONE: Leaves = frozenset()

# ops functions / Tensor methods whose result has the broadcast shape of all their tensor inputs.
ELEMENTWISE = {
    "add", "sub", "subtract", "mul", "multiply", "neg", "negative", "abs", "absolute", "maximum", "minimum",
    "clip_by_value", "clamp", "clip", "square", "sign", "tanh", "sigmoid", "relu", "floor", "ceil", "round",
    "trunc", "select", "where", "logical_and", "logical_or", "logical_not", "logical_xor", "equal", "not_equal",
    "greater", "greater_equal", "less", "less_equal", "gt", "ge", "lt", "le", "eq", "ne", "isfinite", "isnan",
    "isinf", "masked_fill", "cos", "sin", "erf", "lerp", "div_no_nan", "div", "divide", "true_divide",
    "floor_div", "floor_divide", "floor_mod", "mod", "remainder", "realdiv", "log", "log1p", "log2", "log10",
    "sqrt", "rsqrt", "exp", "exp2", "expm1", "pow", "power", "float_power", "reciprocal", "acos", "asin", "atanh",
    "acosh", "arccos", "arcsin", "arctanh", "arccosh", "xlogy", "xdivy", "logit", "lgamma", "digamma", "tan",
    "cosh", "sinh", "atan2", "arctan2",
}
# ... whose result has the shape of their first tensor input (the rest are dtypes or fill values).
LIKE_FIRST = {"cast", "astype", "zeros_like", "ones_like", "full_like", "to", "float", "half", "int", "bool",
              "stop_gradient", "copy"}
# Calls that reduce everything to a 0-d tensor when given only the tensor (function or method form).
# ``ops.max``/``ops.min`` are left out: the functions return (values, indices).
FULL_REDUCTION_FUNCTIONS = {"sum", "mean", "all", "any", "prod", "reduce_sum", "reduce_mean", "reduce_max",
                            "reduce_min", "reduce_all", "reduce_any", "reduce_prod", "norm"}
FULL_REDUCTION_METHODS = FULL_REDUCTION_FUNCTIONS | {"max", "min"}
PRIMITIVE_ELEMENTWISE = {
    "Mul", "Add", "Sub", "Neg", "Abs", "Maximum", "Minimum", "Square", "Sign", "Tanh", "Sigmoid", "ReLU", "Floor",
    "Ceil", "Round", "Select", "Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual", "LogicalAnd",
    "LogicalOr", "LogicalNot", "IsFinite", "IsNan", "IsInf", "DivNoNan", "Cos", "Sin", "Erf", "RealDiv", "Div",
    "FloorDiv", "FloorMod", "Mod", "Log", "Log1p", "Sqrt", "Rsqrt", "Exp", "Expm1", "Pow", "Reciprocal", "Acos",
    "Asin", "Atanh", "Acosh", "Xlogy", "Xdivy", "Lgamma", "Digamma", "Tan", "Cosh", "Sinh", "Atan2", "MaskedFill",
}
PRIMITIVE_LIKE_FIRST = {"Cast", "OnesLike", "ZerosLike", "StopGradient", "Identity"}
# ``P.ReduceSum()(x)`` (constructed without ``keep_dims``, called with the tensor only) is 0-d.
PRIMITIVE_REDUCTIONS = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceAll", "ReduceAny",
                        "ReduceProd"}
# Module constants that are Python floats (``self.pi = math.pi``): they broadcast like any number.
PYTHON_NUMBERS = {"math.pi", "math.e", "math.tau", "math.inf", "numpy.pi", "numpy.e", "numpy.inf"}
MAX_DEPTH = 40  # expression nesting; name cycles are cut by the resolution stack


class ShapeLeaves:
    """Shape leaves of expressions in one graph function (see the module docstring)."""

    def __init__(self, ctx, values: FunctionValues, depth: int = 0):
        self.ctx = ctx
        self.values = values
        self.depth = depth
        self._bindings: Dict[str, Optional[List[cst.BaseExpression]]] = {}
        self._resolving: List[str] = []  # local names being followed to their bindings, innermost last
        self._self_reference: Dict[str, bool] = {}  # whether the binding being followed read its own name

    # -- the public questions ----------------------------------------------------------------------------
    def of(self, expr: cst.BaseExpression) -> Leaves:
        return self._leaves(expr, 0, strict=False) or NONE

    def is_zero_d(self, expr: cst.BaseExpression) -> bool:
        return self._leaves(expr, 0, strict=True) == NONE

    # -- the walk -----------------------------------------------------------------------------------------
    def _leaves(self, expr: cst.BaseExpression, depth: int, strict: bool) -> Optional[Leaves]:
        """Leaves of ``expr``; with ``strict``, None when a name it reads was bound more than once (its value
        may be an older one than the expression saw)."""
        if depth > MAX_DEPTH:
            return None if strict else self._opaque(expr, strict)
        kind = self.values.kind(expr)
        if kind is Kind.CONST:
            # A Python number broadcasts like a 0-d value; a Python tuple/list becomes a 1-d Tensor in arithmetic.
            return self._opaque(expr, strict) if self._may_be_sequence(expr) else NONE
        if isinstance(expr, cst.Name):
            return self._name(expr, depth, strict)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, depth, strict)
        if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.MatrixMultiply):
            return self._union([expr.left, expr.right], depth, strict)
        if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
            return self._leaves(expr.expression, depth + 1, strict)
        if isinstance(expr, cst.Comparison) and all(
                not isinstance(t.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for t in expr.comparisons):
            return self._union([expr.left] + [t.comparator for t in expr.comparisons], depth, strict)
        if isinstance(expr, cst.IfExp):
            body = self._leaves(expr.body, depth + 1, strict)
            orelse = self._leaves(expr.orelse, depth + 1, strict)
            if body is None or orelse is None:
                return None
            return body if body == orelse else self._opaque(expr, strict)
        if isinstance(expr, cst.Call):
            return self._call(expr, depth, strict)
        return self._opaque(expr, strict)

    def _may_be_sequence(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """A compile-time constant that is (or may be) a tuple or list rather than a number."""
        if depth > 3:
            return True
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
            return False
        if isinstance(expr, cst.UnaryOperation):
            return self._may_be_sequence(expr.expression, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return self._may_be_sequence(expr.left, depth + 1) or self._may_be_sequence(expr.right, depth + 1)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return True
        if isinstance(expr, cst.Subscript):
            return False  # x.shape[0], config[i]: one item
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in ("shape", "strides"):
                return True
            if isinstance(expr.value, cst.Name) and expr.value.value == "self":
                from ms_lint.analysis.shapes import init_assignment
                from ms_lint.rewrites.where import scalar_default

                assigned = init_assignment(self.ctx, self.values.owner, expr.attr.value)
                if assigned is None:
                    return True
                value, method = assigned
                if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
                    return False
                if number_or_none(self.ctx, method, value, value):
                    return False
                if isinstance(value, cst.Name):  # ``self.steps = steps``: the ``__init__`` default says
                    default = scalar_default(method, value.value)
                    return default is None or _literal_sequence(default)
                return _literal_sequence(value) if isinstance(
                    value, (cst.Integer, cst.Float, cst.UnaryOperation, cst.BinaryOperation, cst.Tuple,
                            cst.List)) else True
            root = expr.value
            while isinstance(root, cst.Attribute):
                root = root.value
            # ``self.config.image_mean``: a configuration field is as often a list as a number
            return isinstance(root, cst.Name) and root.value == "self"  # else ms.float32 and the like
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return False
            constant = self.ctx.constants.values.get(expr.value)
            if constant is not None:
                return isinstance(constant, (tuple, list))
            bound = self._binding_values(expr.value)
            if bound:
                return any(self._may_be_sequence(v, depth + 1) for v in bound)
            return expr.value not in self.values.parameters or self._parameter_may_be_sequence(expr.value)
        return True

    def _parameter_may_be_sequence(self, name: str) -> bool:
        """A constant argument: a sequence unless its default is a number."""
        func = self.values.func
        params = list(func.params.posonly_params) + list(func.params.params) + list(func.params.kwonly_params)
        for param in params:
            if param.name.value == name:
                return param.default is None or _literal_sequence(param.default)
        return True

    def _opaque(self, expr: cst.BaseExpression, strict: bool = False) -> Optional[Leaves]:
        """The expression as its own leaf. Under ``strict`` (inside a binding that is read later) only when every
        local it reads is an argument never rebound: the same text could have another shape later otherwise."""
        if strict:
            for name in _names_of(expr):
                if (name in self.values.env or name in self.values.parameters) and not (
                        name in self.values.parameters and self._binding_values(name) == []):
                    return None
        return frozenset({" ".join(code_of(expr).split())})

    def _union(self, parts: List[cst.BaseExpression], depth: int, strict: bool) -> Optional[Leaves]:
        found: Set[str] = set()
        for part in parts:
            leaves = self._leaves(part, depth + 1, strict)
            if leaves is None:
                return None
            found |= leaves
        return frozenset(found)

    def _name(self, expr: cst.Name, depth: int, strict: bool) -> Optional[Leaves]:
        """A never-rebound argument is its own leaf. A local whose every binding has the same leaves L (a binding
        that reads the name itself counts its own leaves as L: by induction over the assignments, every value
        it ever holds has the shape of L) has leaves L. Anything else is the name itself, or None under
        ``strict``."""
        name = expr.value
        bound = self._binding_values(name)
        if name in self.values.parameters:
            if bound == []:
                return frozenset({name})
            return None if strict else frozenset({name})
        if self._resolving and self._resolving[-1] == name:
            self._self_reference[name] = True
            return NONE  # a direct self-reference: its leaves are checked against L below
        if bound and name not in self._resolving:
            self._resolving.append(name)
            found = []
            try:
                for value in bound:
                    self._self_reference[name] = False
                    found.append((self._leaves(value, depth + 1, strict=True), self._self_reference[name]))
            finally:
                self._resolving.pop()
            # Bindings that do not read the name must agree on L; those that do (``s = s + 1``) may add no
            # tensor outside L. The first binding to run cannot read the name, so every value has L's shape.
            plain = {leaves for leaves, recursive in found if not recursive}
            if None not in plain and len(plain) == 1:
                common = next(iter(plain))
                if all(leaves is not None and leaves <= common for leaves, recursive in found if recursive):
                    return common
        return None if strict else frozenset({name})

    def _attribute(self, expr: cst.Attribute, depth: int, strict: bool) -> Optional[Leaves]:
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            from ms_lint.analysis.shapes import init_assignment

            assigned = init_assignment(self.ctx, self.values.owner, expr.attr.value)
            if assigned is not None and self._zero_d_value(*assigned):
                return NONE
            # ``self.zero = Tensor(0, ms.int64)`` written twice in ``__init__``: 0-d when every write of it is
            writes = self.ctx.attributes.writes(self.values.owner, expr.attr.value)
            if writes and all(self._zero_d_value(value, method) for value, method in writes):
                return NONE
            return self._opaque(expr, strict)
        return self._opaque(expr, strict)

    def _zero_d_arithmetic(self, value: cst.BaseExpression, method: cst.FunctionDef, depth: int) -> bool:
        """``self.decay_steps = total_steps - self.decay_start_steps`` in ``__init__``: arithmetic of Python
        numbers and attributes that hold 0-d tensors (at least one), so a 0-d tensor."""
        from ms_lint.analysis.shapes import init_assignment
        from ms_lint.rewrites.where import is_zero_d_factory

        if depth > 4 or not isinstance(value, cst.BinaryOperation) or isinstance(
                value.operator, cst.MatrixMultiply):
            return False
        tensors = 0
        for side in (value.left, value.right):
            if isinstance(side, cst.Attribute) and isinstance(side.value, cst.Name) and side.value.value == "self":
                assigned = init_assignment(self.ctx, self.values.owner, side.attr.value)
                if assigned is None or not (is_zero_d_factory(self.ctx, assigned[0], assigned[1])
                                            or self._zero_d_arithmetic(assigned[0], assigned[1], depth + 1)):
                    return False
                tensors += 1
            elif isinstance(side, cst.BinaryOperation) and self._zero_d_arithmetic(side, method, depth + 1):
                tensors += 1
            elif not is_number(self.ctx, method, side, value):
                return False
        return tensors > 0

    def _zero_d_value(self, value: cst.BaseExpression, method: cst.FunctionDef) -> bool:
        """A value written to ``self.<attr>`` in ``method`` that is 0-d: a 0-d Tensor factory, a Python number, or
        arithmetic of those."""
        from ms_lint.rewrites.where import is_zero_d_factory

        return (is_zero_d_factory(self.ctx, value, method) or self.ctx.imports.qualify(value) in PYTHON_NUMBERS
                or self._zero_d_arithmetic(value, method, 0) or number_or_none(self.ctx, method, value, value))

    def _call(self, expr: cst.Call, depth: int, strict: bool) -> Optional[Leaves]:
        from ms_lint.analysis.shapes import init_value
        from ms_lint.rewrites.where import call_target

        kind, name = call_target(self.ctx, self.values, expr)
        func = expr.func
        positional = call_name_args(expr)
        keywords = [a for a in expr.args if a.keyword is not None]
        receiver: List[cst.BaseExpression] = []
        if kind == "method" and isinstance(func, cst.Attribute):
            receiver = [func.value]
        if kind in ("function", "method"):
            if not keywords and not any(a.star for a in expr.args):
                if kind == "function" and name in FULL_REDUCTION_FUNCTIONS and len(positional) == 1:
                    return NONE
                if kind == "method" and name in FULL_REDUCTION_METHODS and not positional:
                    return NONE
            if name in ELEMENTWISE and not any(a.star for a in expr.args):
                return self._union(receiver + [a.value for a in expr.args], depth, strict)
            if name in LIKE_FIRST:
                first = receiver or [a.value for a in positional[:1]]
                if first:
                    return self._union(first, depth, strict)
            return self._opaque(expr, strict)
        if kind == "primitive" and not any(a.star for a in expr.args):
            args = [a.value for a in expr.args]
            if name in PRIMITIVE_ELEMENTWISE:
                return self._union(args, depth, strict)
            if name in PRIMITIVE_LIKE_FIRST and args:
                return self._union(args[:1], depth, strict)
            if name in PRIMITIVE_REDUCTIONS and len(args) == 1 and not keywords:
                constructor = func if isinstance(func, cst.Call) else None
                if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                        and func.value.value == "self"):
                    value = init_value(self.ctx, self.values.owner, func.attr.value)
                    constructor = value if isinstance(value, cst.Call) else None
                if constructor is not None and not constructor.args:
                    return NONE
            return self._opaque(expr, strict)
        if self._returns_zero_d(expr):
            return NONE
        return self._opaque(expr, strict)

    def _returns_zero_d(self, call: cst.Call) -> bool:
        """``self.helper(...)`` / ``helper(...)`` defined in this module, every ``return`` of which is 0-d."""
        if self.depth >= 2:
            return False
        target = self.ctx.scope.resolve_callable(call.func, self.values.owner)
        if target is None or not self.ctx.scope.is_graph_function(target[0]):
            return False
        func = target[0]
        returns = [small.value for stmt in walk_statements(suite_statements(func.body), into_defs=False)
                   for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ())
                   if isinstance(small, cst.Return)]
        if not returns or any(value is None for value in returns):
            return False
        inner = ShapeLeaves(self.ctx, self.ctx.values(func), self.depth + 1)
        return all(inner.is_zero_d(value) for value in returns)

    # -- bindings -------------------------------------------------------------------------------------------
    def _binding_values(self, name: str) -> Optional[List[cst.BaseExpression]]:
        """Values bound to ``name`` by plain ``name = value`` statements; None when any other binding form
        (augmented, unpacking, loop target, ``with``, ``:=``) binds it too."""
        if name not in self._bindings:
            self._bindings[name] = plain_bindings(self.values.func, name)
        return self._bindings[name]


def _literal_sequence(expr: cst.BaseExpression) -> bool:
    """Not visibly a number: a tuple/list literal, or anything that is not a numeric literal expression."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return False
    if isinstance(expr, cst.UnaryOperation):
        return _literal_sequence(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _literal_sequence(expr.left) or _literal_sequence(expr.right)
    return True


def plain_bindings(func: cst.FunctionDef, name: str) -> Optional[List[cst.BaseExpression]]:
    found: List[cst.BaseExpression] = []
    for stmt in walk_statements(suite_statements(func.body), into_defs=False):
        if isinstance(stmt, (cst.For, cst.With)) and name in _bound_names(stmt):
            return None
        for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
            if isinstance(small, (cst.AugAssign, cst.AnnAssign)) and name in _target_names(small.target):
                if isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target,
                                                                                               cst.Name):
                    found.append(small.value)
                    continue
                spelled = _augmented_value(small) if isinstance(small, cst.AugAssign) else None
                if spelled is None:
                    return None
                found.append(spelled)  # ``t += 1`` binds what ``t = t + 1`` binds
                continue
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        if target.target.value == name:
                            found.append(small.value)
                    elif name in _target_names(target.target):
                        return None
            if isinstance(small, (cst.Global, cst.Nonlocal, cst.Del)) and name in _names_of(small):
                return None
    walrus = any(isinstance(n.target, cst.Name) and n.target.value == name
                 for n in iter_nodes(func.body, cst.NamedExpr))
    return None if walrus else found


# ``x op= v`` -> the binary operator of ``x = x op v`` (arithmetic only: ``@=`` and the bitwise ones stay refused)
_AUGMENTED = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
              cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
              cst.PowerAssign: cst.Power}


def _augmented_value(small: cst.AugAssign) -> Optional[cst.BaseExpression]:
    """``t += 1`` as the value ``t + 1`` it binds (its target is the name read), or None for another operator or
    target."""
    operator = _AUGMENTED.get(type(small.operator))
    if operator is None or not isinstance(small.target, cst.Name):
        return None
    return cst.BinaryOperation(left=small.target, operator=operator(), right=small.value)


def names_bound_in(stmts) -> Set[str]:
    """Every name the statements bind (assignments, loop targets, ``with``), nested blocks included."""
    bound: Set[str] = set()
    for stmt in walk_statements(list(stmts), into_defs=False):
        bound |= _bound_names(stmt)
        for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    bound |= _names_of(target.target)
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                bound |= _names_of(small.target)
    return bound


def names_read(node: cst.CSTNode) -> Set[str]:
    return _names_of(node)


def _bound_names(stmt: cst.BaseStatement) -> Set[str]:
    if isinstance(stmt, cst.For):
        return _names_of(stmt.target)
    if isinstance(stmt, cst.With):
        return set().union(*(_names_of(item.asname.name) for item in stmt.items if item.asname is not None))
    return set()


def _target_names(target: cst.BaseExpression) -> Set[str]:
    """The names an assignment target binds: ``a, (b, *c)`` binds a, b, c; ``x[i] = v`` and ``o.f = v`` bind no
    name (they read ``x``, ``i``, ``o``)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(element.value) for element in target.elements))
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


def _names_of(node: cst.CSTNode) -> Set[str]:
    return {name.value for name in iter_nodes(node, cst.Name)}


def select_shape_problem(ctx, values: FunctionValues, cond: cst.BaseExpression, a: cst.BaseExpression,
                         b: cst.BaseExpression, b_value: Optional[cst.BaseExpression] = None
                         ) -> Optional[Tuple[str, str]]:
    """Why ``ops.where(cond, a, b)`` may not have the shape the ``if`` gives, or None when it provably does:
    ("sides", why) when the two sides may differ in shape, ("condition", why) when the condition may not
    broadcast into them. ``b_value``: what ``b`` (a name) holds at the ``if``, when the caller can see it."""
    shapes = ShapeLeaves(ctx, values)
    leaves_a, leaves_b = shapes.of(a), shapes.of(b)
    if leaves_a != leaves_b and b_value is not None:
        leaves_b = shapes.of(b_value)
    if leaves_a != leaves_b:
        return "sides", (f"cannot see that `{short_code(a, 30)}` and `{short_code(b, 30)}` have one shape: "
                         "ops.where broadcasts them, an `if` keeps the shape of the side it takes")
    leaves_cond = frozenset().union(*(shapes.of(operand) for operand in _truth_operands(cond)))
    if not leaves_cond <= leaves_a:
        return "condition", (f"cannot see that the condition `{short_code(cond, 30)}` is 0-d or shaped like the "
                             "branches: ops.where broadcasts the result to it (a shape-(1,) condition gives 0-d "
                             "branches shape (1,))")
    return None


def _truth_operands(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    """What ``not``/``and``/``or`` combine: the select form joins them with ``ops.logical_*``, which broadcast."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _truth_operands(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return _truth_operands(test.left) + _truth_operands(test.right)
    return [test]
