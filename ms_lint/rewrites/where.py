"""The select rewrite of a Tensor-valued branch: ``if c: v = a else: v = b`` -> ``v = ops.where(c, a, b)``.

A select evaluates **both** sides on every call, so it is the same program only when both sides are cheap, free of
side effects, tensors (a Python number on one side keeps a Python scalar in the ``if`` form), and of the same
shape. Everything that decides whether a branch qualifies lives here, so the rule only matches statement shapes:

* :func:`classify_call` sorts a call into cheap / hazard (may give inf/NaN when the guard is false: ``/``, ``log``,
  ``sqrt``, ``pow``...) / effect (``assign``, ``print``, optimizer primitives) / random / cell / unknown.
  MSL102's HyperMap rewrite reuses it to keep side effects and random ops out of a mapped function.
* :func:`branch_problems` -> (why no fix, why the fix is unsafe) for one branch expression.
* :func:`boolean_condition` turns the ``if`` test into a bool tensor expression (``not c`` -> ``ops.logical_not(c)``)
  or says why it can't (``if x:`` on a float tensor is truthiness, ``ops.where`` needs a bool condition).
* :func:`condition_may_be_shape_one` spots conditions on Parameters declared with shape ``[1]``
  (``global_step``) and on the step argument of learning-rate schedules (``Optimizer.get_lr`` passes its
  ``global_step``): ``ops.where`` broadcasts, so 0-d branches would come back with shape ``(1,)``.

Measured on MindSpore 2.10 (CPU): ``ops.where(c, x, 0.0)`` works, but ``if c: r = x else: r = 0.0`` does not
compile (``Type Join Failed``), and with two Python numbers the ``if`` returns a Python float where the select
returns a Tensor; branches of different dtypes don't compile as an ``if``; a shape-``(1,)`` condition with 0-d
branches gives shape ``()`` as an ``if`` and ``(1,)`` as a select.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from ms_lint import fasttree
from ms_lint.cstutil import all_params, call_name_args, code_of, suite_statements, target_names, walk_statements
from ms_lint.analysis.init_numbers import is_number
from ms_lint.analysis.values import FunctionValues, Kind, rebound_elsewhere, is_literal, literal_value
from ms_lint.analysis.shapes import init_assignment, init_value
from ms_lint.names import dotted
from ms_lint.walk import iter_nodes, run_visitor

# The ops the select rewrites write (``ops.where`` and the ``ops.logical_*`` of converted conditions).
EMITTED_OPS = {"where", "logical_and", "logical_or", "logical_not"}
CHEAP, HAZARD, EFFECT, RANDOM, CELL, UNKNOWN, CONST = (
    "cheap", "hazard", "effect", "random", "cell", "unknown", "const")

# Functional ops (last segment of the canonical name, ``mindspore.ops.<name>``/``mint``) and Tensor methods.
CHEAP_FUNCTIONS = {
    "add", "sub", "subtract", "mul", "multiply", "neg", "negative", "abs", "absolute", "maximum", "minimum",
    "clip_by_value", "clamp", "clip", "cast", "zeros_like", "ones_like", "full_like", "fill", "fills", "zeros",
    "ones", "full", "square", "sign", "tanh", "sigmoid", "relu", "floor", "ceil", "round", "trunc", "select",
    "where", "logical_and", "logical_or", "logical_not", "logical_xor", "equal", "not_equal", "greater",
    "greater_equal", "less", "less_equal", "gt", "ge", "lt", "le", "eq", "ne", "reshape", "expand_dims",
    "unsqueeze", "stop_gradient", "scalar_to_tensor", "isfinite", "isnan", "isinf", "masked_fill",
    "cos", "sin", "erf", "lerp", "div_no_nan", "astype", "float", "half", "int", "bool", "view", "sum", "mean",
    "max", "min", "all", "any", "prod", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_all", "dtype",
    "reduce_any", "reduce_prod", "tensor_to_scalar", "item", "copy", "squeeze", "flatten", "to",
    # no state, finite for finite inputs, no more work than their input's size: one_hot/argmax only pick
    "one_hot", "argmax", "argmin", "transpose", "permute",
}
HAZARD_FUNCTIONS = {
    "div", "divide", "true_divide", "floor_div", "floor_divide", "floor_mod", "mod", "remainder", "realdiv",
    "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "exp", "exp2", "expm1", "pow", "power", "float_power",
    "reciprocal", "acos", "asin", "atanh", "acosh", "arccos", "arcsin", "arctanh", "arccosh", "xlogy", "xdivy",
    "logit", "lgamma", "digamma", "tan", "cosh", "sinh", "atan2", "arctan2",
    "softmax",  # a row of -inf (a fully masked attention row) is NaN: the select's untaken side reaches the gradient
}
EFFECT_FUNCTIONS = {
    "assign", "assign_add", "assign_sub", "scatter_update", "scatter_nd_update", "scatter_add", "scatter_nd_add",
    "scatter_sub", "scatter_nd_sub", "scatter_max", "scatter_min", "scatter_mul", "scatter_div", "print_",
    "print", "tensor_dump", "depend", "inplace_update", "inplace_add", "inplace_sub", "copy_", "assign_value",
}
RANDOM_FUNCTIONS = {
    "uniform", "normal", "gamma", "poisson", "multinomial", "random_categorical", "random_poisson",
    "random_gamma", "dropout", "dropout1d", "dropout2d", "dropout3d", "rand", "randn", "randint", "rand_like",
    "randn_like", "randint_like", "randperm", "shuffle", "standard_normal", "standard_laplace", "bernoulli",
    "choice_with_mask", "log_uniform_candidate_sampler", "uniform_candidate_sampler",
}
# Primitive classes (``P.Cast()``) by category; prefixes catch the optimizer and scatter families.
PRIMITIVES = {
    CHEAP: {
        "Cast", "Mul", "Add", "Sub", "Neg", "Abs", "Maximum", "Minimum", "OnesLike", "ZerosLike", "Fill",
        "Fills", "Square", "Sign", "Tanh", "Sigmoid", "ReLU", "Floor", "Ceil", "Round", "Select", "Reshape",
        "ExpandDims", "Squeeze", "Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual",
        "LogicalAnd", "LogicalOr", "LogicalNot", "IsFinite", "IsNan", "IsInf", "DivNoNan", "Cos", "Sin", "Erf",
        "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceAll", "ReduceAny", "ScalarToTensor",
        "StopGradient", "MaskedFill", "Identity", "OneHot", "Argmax", "Argmin", "Transpose",
    },
    HAZARD: {
        "RealDiv", "Div", "FloorDiv", "FloorMod", "Mod", "Log", "Log1p", "Sqrt", "Rsqrt", "Exp", "Expm1", "Pow",
        "Reciprocal", "Acos", "Asin", "Atanh", "Acosh", "Xlogy", "Xdivy", "Lgamma", "Digamma", "Tan", "Cosh",
        "Sinh", "Atan2", "Softmax",
    },
    EFFECT: {"Assign", "AssignAdd", "AssignSub", "Print", "TensorDump", "Depend", "UpdateState", "Load"},
    RANDOM: {"StandardNormal", "UniformInt", "UniformReal", "RandomChoiceWithMask", "Gamma", "Poisson",
             "Multinomial", "RandomCategorical", "RandomGamma", "RandomPoisson", "Randperm", "Bernoulli",
             "StandardLaplace", "LogUniformCandidateSampler", "UniformCandidateSampler"},
}
EFFECT_PREFIXES = ("Apply", "SparseApply", "FusedSparse", "Scatter", "Inplace", "Assign", "Adam", "LARS",
                   "FusedAdam", "FusedCast")
RANDOM_PREFIXES = ("Random", "Dropout", "Uniform")
BOOL_FUNCTIONS = {
    "all", "any", "reduce_all", "reduce_any", "isfinite", "isnan", "isinf", "isclose", "logical_and",
    "logical_or", "logical_not", "logical_xor", "equal", "not_equal", "greater", "greater_equal", "less",
    "less_equal", "gt", "ge", "lt", "le", "eq", "ne", "is_close", "bool",
}
BOOL_PRIMITIVES = {"Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual", "LogicalAnd",
                   "LogicalOr", "LogicalNot", "IsFinite", "IsNan", "IsInf", "ReduceAll", "ReduceAny"}
# Calls that reduce to a 0-d tensor when given only the tensor (no axis): their result is never shape (1,).
FULL_REDUCTIONS = {"sum", "mean", "max", "min", "all", "any", "prod", "reduce_sum", "reduce_mean", "reduce_max",
                   "reduce_min", "reduce_all", "reduce_any", "reduce_prod", "norm"}
MAX_BRANCH_CALLS = 6
MAX_FOLLOW_DEPTH = 2  # helpers called from helpers, followed into


# -- class attributes ----------------------------------------------------------------------------------
def _assign_parts(small: cst.BaseSmallStatement):
    if isinstance(small, cst.Assign):
        return [t.target for t in small.targets], small.value
    if isinstance(small, cst.AnnAssign) and small.value is not None:
        return [small.target], small.value
    return [], None


def primitive_name(ctx, owner: Optional[str], func: cst.BaseExpression) -> Optional[str]:
    """``P.Cast()`` / ``self.cast`` (set to ``P.Cast()`` in ``__init__``) -> ``"Cast"``."""
    value: Optional[cst.BaseExpression] = func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        value = init_value(ctx, owner, func.attr.value)
    if isinstance(value, cst.Call):
        qualified = ctx.imports.qualify(value.func)
        if qualified and qualified.startswith("mindspore.ops."):
            last = qualified.rsplit(".", 1)[-1]
            if last[:1].isupper():
                return last
    return None


def module_primitive(ctx, func: cst.BaseExpression) -> Optional[str]:
    """``keepdim_sum(x, -1)`` / ``functions.keepdim_sum(x, -1)`` where a module of the project binds
    ``keepdim_sum = ops.ReduceSum(keep_dims=True)`` once at module level -> ``"ReduceSum"``; None otherwise."""
    name = dotted(func)
    if name is None:
        return None
    if isinstance(func, cst.Name):
        if func.value in ctx.scope.module_functions:
            return None
        value = _module_binding(ctx, func.value)
        return primitive_name(ctx, None, value) if value is not None else None
    project = getattr(ctx, "project", None)
    if project is None or project.module is None:
        return None
    qualified = project.index.qualify(project.module, name)
    if qualified is None or "." not in qualified:
        return None
    module, attr = qualified.rsplit(".", 1)
    if module == project.module or module not in project.index.project_modules:
        return None
    context = project.context_for(module)
    value = _module_binding(context, attr) if context is not None else None
    return primitive_name(context, None, value) if value is not None else None


def _module_binding(ctx, name: str) -> Optional[cst.BaseExpression]:
    """The value of the one top-level ``name = value`` of the module, when nothing else binds ``name``."""
    found: List[cst.BaseExpression] = []
    for stmt in ctx.module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for target in targets:
                        if name in target_names(target, include_starred=True):
                            if not (isinstance(small, cst.Assign) and isinstance(target, cst.Name)):
                                return None
                            found.append(small.value)
    if len(found) != 1 or name in rebound_elsewhere(ctx.module):
        return None
    return found[0]


# -- calls ---------------------------------------------------------------------------------------------
def _primitive_category(name: str) -> str:
    for category, names in PRIMITIVES.items():
        if name in names:
            return category
    if name.startswith(EFFECT_PREFIXES):
        return EFFECT
    if name.startswith(RANDOM_PREFIXES):
        return RANDOM
    return UNKNOWN


def _function_category(name: str) -> str:
    if name in EFFECT_FUNCTIONS:
        return EFFECT
    if name in RANDOM_FUNCTIONS:
        return RANDOM
    if name in HAZARD_FUNCTIONS:
        return HAZARD
    if name in CHEAP_FUNCTIONS:
        return CHEAP
    return UNKNOWN


def call_target(ctx, values: FunctionValues, call: cst.Call) -> Tuple[str, str]:
    """(kind, name): kind is "function" (ops.xxx), "primitive" (P.Xxx), "method" (tensor method), "cell",
    "builtin", or "other"; name is the op's short name."""
    func = call.func
    qualified = ctx.imports.qualify(func)
    if qualified and qualified.startswith(("mindspore.ops.", "mindspore.mint.", "mindspore.numpy.")):
        last = qualified.rsplit(".", 1)[-1]
        return ("primitive" if last[:1].isupper() else "function"), last
    if isinstance(func, cst.Call):  # P.Cast()(x, t)
        inner = ctx.imports.qualify(func.func)
        if inner and inner.startswith("mindspore.ops.") and inner.rsplit(".", 1)[-1][:1].isupper():
            return "primitive", inner.rsplit(".", 1)[-1]
        return "other", ""
    prim = primitive_name(ctx, values.owner, func)
    if prim is None and isinstance(func, cst.Name) and func.value not in values.parameters:
        bound = _bindings(values, func.value)  # ``op_cast = P.Cast()`` once in the function
        prim = primitive_name(ctx, values.owner, bound[0]) if len(bound) == 1 else None
    if prim is None and not (qualified or "").startswith("mindspore.") and not (
            isinstance(func, cst.Name) and (func.value in values.parameters or func.value in values.env)):
        prim = module_primitive(ctx, func)
    if prim is not None:
        return "primitive", prim
    if isinstance(func, cst.Name) and qualified is None:
        return "builtin", func.value
    if qualified is None and isinstance(func, cst.Attribute) and func.attr.value in EMITTED_OPS:
        # A select an earlier rewrite of this chain built (``ops.where`` whose import the fix adds).
        spelled = ctx.spell(f"mindspore.ops.{func.attr.value}")
        if spelled is not None and spelled[0] == code_of(func):
            return "function", func.attr.value
    if isinstance(func, cst.Attribute):
        receiver = values.kind(func.value)
        if receiver is Kind.TENSOR:
            return "method", func.attr.value
        if receiver is Kind.CONST:
            return "builtin", func.attr.value
        if isinstance(func.value, cst.Name) and func.value.value == "self" and values.kind(func) is Kind.CELL:
            return "cell", func.attr.value
    return "other", ""


def classify_call(ctx, values: FunctionValues, call: cst.Call) -> Tuple[str, str]:
    """(category, short name) of a call in graph code; see the module docstring for the categories."""
    kind, name = call_target(ctx, values, call)
    if kind == "primitive":
        return _primitive_category(name), name
    if kind in ("function", "method"):
        return _function_category(name), name
    if kind == "cell":
        return CELL, name
    if kind == "builtin":
        if name == "print":
            return EFFECT, name
        if name in ("len", "isinstance", "int", "float", "bool", "tuple", "list", "abs", "min", "max"):
            return CONST if values.kind(call) is Kind.CONST else UNKNOWN, name
        return UNKNOWN, name
    return UNKNOWN, code_of(call.func)


# -- branches ------------------------------------------------------------------------------------------
def _helper_expressions(func: cst.FunctionDef) -> Optional[List[cst.BaseExpression]]:
    """The right-hand sides and the returned value of a helper whose body is a docstring, ``name = expr`` /
    ``name op= expr`` lines and one final ``return expr``; None for anything else, and for ``param op= expr`` on a
    parameter: graph mode updates the caller's Tensor in place there (measured, MSL201 page), which a select
    would then do whichever way the condition goes."""
    statements = list(suite_statements(func.body))
    params = {p.name.value for p in all_params(func)}
    found: List[cst.BaseExpression] = []
    for index, stmt in enumerate(statements):
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None
        for small in stmt.body:
            if isinstance(small, cst.Expr) and index == 0 and isinstance(
                    small.value, (cst.SimpleString, cst.ConcatenatedString)):
                continue
            if isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name) for t in small.targets):
                found.append(small.value)
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) \
                    and small.target.value not in params:
                found.append(small.value)
            elif isinstance(small, cst.Return) and small.value is not None and index == len(statements) - 1:
                found.append(small.value)
            else:
                return None
    returns = statements and isinstance(statements[-1], cst.SimpleStatementLine) and isinstance(
        statements[-1].body[-1], cst.Return)
    return found if returns else None


class _BranchScan:
    """What a select would now run on every call: effects and unknown calls block it, ``/``, ``**`` and the like
    are hazards, a sub-cell makes it unsafe. ``scan(node)`` meets the nodes in a visitor's order (``walk``)."""

    _PRUNED = (cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)
    _WANTED = (cst.Call, cst.BinaryOperation, cst.Subscript, cst.Yield, cst.NamedExpr) + _PRUNED

    def __init__(self, ctx, values: FunctionValues, depth: int = 0):
        self.ctx = ctx
        self.values = values
        self.depth = depth  # helpers followed to get here
        self.blocker: Optional[str] = None
        self.hazard: Optional[str] = None
        self.cell: Optional[str] = None  # the first sub-cell the branch calls
        self.calls = 0
        self._gradient_free: Optional[bool] = None  # a learning-rate schedule's construct (where_schedule)

    def scan(self, node: cst.CSTNode) -> None:
        handlers = {cst.Call: self.visit_Call, cst.BinaryOperation: self.visit_BinaryOperation,
                    cst.Subscript: self.visit_Subscript, cst.Yield: self.visit_Yield,
                    cst.NamedExpr: self.visit_NamedExpr}
        for found in iter_nodes(node, self._WANTED, prune=self._PRUNED):
            handler = handlers.get(type(found))
            if handler is not None:
                handler(found)
            elif isinstance(found, cst.Lambda):
                self._block("a branch defines a lambda")
            else:
                self._block("a branch has a comprehension")

    def _hazard(self, name: str, node: cst.CSTNode) -> None:
        """Record the first numeric hazard, unless its inf/NaN provably reaches nothing here."""
        from ms_lint.rewrites.where_schedule import gradient_free_schedule, harmless_hazard

        if self.hazard is not None:
            return
        if self._gradient_free is None:
            self._gradient_free = gradient_free_schedule(self.ctx, self.values)
        if not harmless_hazard(self.ctx, self.values, node, self._gradient_free):
            self.hazard = name

    def _block(self, why: str) -> None:
        if self.blocker is None:
            self.blocker = why

    def visit_Call(self, node: cst.Call) -> None:
        category, name = classify_call(self.ctx, self.values, node)
        self.calls += 1
        if category == UNKNOWN:
            followed = self._follow(node, name)
            if followed is not None:
                return
        if category == EFFECT:
            self._block(f"a branch calls `{name}` (a side effect): a select would run it whichever way the "
                        "condition goes")
        elif category == RANDOM:
            self._block(f"a branch calls the random op `{name}`: a select would draw it on every call")
        elif category == CELL and self.cell is None:
            self.cell = name  # a select runs it on every call: unsafe unless its purity is proven
        elif category == UNKNOWN:
            self._block(f"a branch calls `{name}`: cannot see that it is cheap and free of side effects")
        elif category == HAZARD:
            self._hazard(name, node)

    def _follow(self, call: cst.Call, name: str) -> Optional[bool]:
        """A helper of the project (``self.scale(k, ref)``, ``helper(x)``, an inherited method) whose body is only
        name assignments and one final ``return``: its expressions are scanned as if written here, in the
        helper's own module (effects, random ops, unknown calls block; ``/``, ``sqrt``... are hazards). None when
        the call is not to such a helper (the caller blocks it as unknown)."""
        if self.depth >= MAX_FOLLOW_DEPTH:
            return None
        resolved = self.values._local_callee(call)
        if resolved is None or resolved[1] is None or not hasattr(resolved[2], "_model"):
            return None
        callee, kinds, context, _bound = resolved
        expressions = _helper_expressions(callee)
        if expressions is None:
            self._block(f"a branch calls `{name}`, whose body is not only name assignments and a `return`: a "
                        "select would run it on every call")
            return True
        scan = _BranchScan(context, context._model(callee, kinds), self.depth + 1)
        for expr in expressions:
            scan.scan(expr)
        self.calls += scan.calls
        if scan.blocker is not None:
            self._block(f"in `{name}`, {scan.blocker}")
        if scan.hazard is not None and self.hazard is None:
            self.hazard = scan.hazard
        if scan.cell is not None and self.cell is None:
            self.cell = scan.cell
        return True

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        op = node.operator
        if isinstance(op, cst.MatrixMultiply):
            self._block("a branch does a matrix product: a select would compute it on every call")
        elif isinstance(op, (cst.Divide, cst.FloorDivide, cst.Modulo)):
            if not self.values.is_constant(node.right):
                self._hazard("/", node)
        elif isinstance(op, cst.Power):
            exponent = node.right
            whole = isinstance(exponent, cst.Integer) and literal_value(exponent) >= 0
            if not whole:
                self._hazard("**", node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        for element in node.slice:
            index = element.slice
            parts = [index.value] if isinstance(index, cst.Index) else [
                p for p in (index.lower, index.upper, index.step) if p is not None]
            if any(not self.values.is_constant(part) and not self._clamped(part) for part in parts):
                self._block(f"a branch indexes with a Tensor (`{code_of(node)}`): a "
                            "select evaluates it even when the condition guards the index, where it may be out "
                            "of range")
                return

    def _clamped(self, index: cst.BaseExpression) -> bool:
        """``ops.clamp(i, 0, n - 1)`` with literal bounds: the index a table-clamping rewrite wrote."""
        if not isinstance(index, cst.Call) or len(index.args) != 3:
            return False
        kind, name = call_target(self.ctx, self.values, index)
        return kind == "function" and name == "clamp" and all(is_literal(a.value) for a in index.args[1:])

    def visit_Yield(self, node) -> None:
        self._block("a branch yields")

    def visit_NamedExpr(self, node) -> None:
        self._block("a branch assigns with `:=`")


def branch_problems(ctx, values: FunctionValues, expr: cst.BaseExpression) -> Tuple[Optional[str], Optional[str]]:
    """(blocker, hazard) for one side of a select: why it can't be a select at all, or which op makes it unsafe."""
    if values.kind(expr) is not Kind.TENSOR:
        if is_literal(expr) or values.kind(expr) is Kind.CONST:
            return ("a branch is a Python value: the `if` keeps a Python scalar, a select would make a Tensor "
                    "(and an `if` joining a Tensor with a number does not compile)"), None
        return "cannot see that both branches are Tensors", None
    scan = _BranchScan(ctx, values)
    scan.scan(expr)
    if scan.blocker is None and scan.calls > MAX_BRANCH_CALLS:
        scan.blocker = f"a branch makes {scan.calls} calls: a select would compute them on every call"
    return scan.blocker, _hazard_of(scan)


def _hazard_of(scan: "_BranchScan") -> Optional[str]:
    """The numeric hazard (gradients) first; else the sub-cell call, as ``"cell:<name>"``."""
    if scan.hazard is None and scan.cell is not None:
        return f"cell:{scan.cell}"
    return scan.hazard


def expression_problems(ctx, values: FunctionValues, expr: cst.BaseExpression
                        ) -> Tuple[Optional[str], Optional[str]]:
    """(blocker, hazard) of an expression a select would now evaluate on every call, whatever its kind (a
    temporary that a branch computes and a later statement reads)."""
    scan = _BranchScan(ctx, values)
    scan.scan(expr)
    if scan.blocker is None and scan.calls > MAX_BRANCH_CALLS:
        scan.blocker = f"a branch makes {scan.calls} calls: a select would compute them on every call"
    return scan.blocker, _hazard_of(scan)


def shapes_visibly_differ(values: FunctionValues, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """True when one side is a full reduction (0-d) and the other is a plain tensor name, or the two sides
    cast to different dtypes: cases where the sides can be seen to differ in shape or dtype."""
    ra, rb = _is_full_reduction(a), _is_full_reduction(b)
    if ra != rb and (isinstance(a, cst.Name) or isinstance(b, cst.Name)):
        return True
    ca, cb = _cast_target(a), _cast_target(b)
    return ca is not None and cb is not None and ca != cb


def _short(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return ""


def _is_full_reduction(expr: cst.BaseExpression) -> bool:
    if not isinstance(expr, cst.Call):
        return False
    name = _short(expr.func)
    if name not in FULL_REDUCTIONS or any(a.keyword is not None for a in expr.args):
        return False
    positional = call_name_args(expr)
    if isinstance(expr.func, cst.Attribute) and name in ("sum", "mean", "max", "min", "all", "any", "prod"):
        # x.sum() (method) or ops.sum(x) (function: one positional argument)
        return len(positional) == (1 if _looks_like_module(expr.func.value) else 0)
    return len(positional) == 1


def _looks_like_module(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value in ("ops", "F", "P", "mint", "C", "np", "mnp")


def _cast_target(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.Call) and _short(expr.func) in ("astype", "cast", "to"):
        args = call_name_args(expr)
        if args:
            target = args[-1].value
            return code_of(target)
    return None


# -- the condition -------------------------------------------------------------------------------------
COMPARISONS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)


def _bindings(values: FunctionValues, name: str) -> List[cst.BaseExpression]:
    """Values assigned to a local name in the function (simple ``name = value`` statements only)."""
    found: List[cst.BaseExpression] = []
    for stmt in walk_statements(suite_statements(values.func.body), into_defs=False):
        for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
            if isinstance(small, (cst.AugAssign,)) and isinstance(small.target, cst.Name) \
                    and small.target.value == name:
                return []
            targets, value = _assign_parts(small)
            for target in targets:
                if isinstance(target, cst.Name) and target.value == name:
                    found.append(value)
                elif isinstance(target, (cst.Tuple, cst.List)) and any(
                        isinstance(e.value, cst.Name) and e.value.value == name for e in target.elements):
                    return []
    return found


def is_boolean(ctx, values: FunctionValues, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """True when ``expr`` is visibly a bool tensor: a comparison, ``.all()``, ``ops.isfinite``, a logical op..."""
    if depth > 4 or values.kind(expr) is not Kind.TENSOR:
        return False
    if isinstance(expr, cst.Comparison):
        return len(expr.comparisons) == 1 and isinstance(expr.comparisons[0].operator, COMPARISONS)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return is_boolean(ctx, values, expr.expression, depth + 1)
    if isinstance(expr, cst.BooleanOperation) or (
            isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitOr, cst.BitAnd, cst.BitXor))):
        return is_boolean(ctx, values, expr.left, depth + 1) and is_boolean(ctx, values, expr.right, depth + 1)
    if isinstance(expr, cst.Call):
        kind, name = call_target(ctx, values, expr)
        if kind == "primitive":
            return name in BOOL_PRIMITIVES
        if kind in ("function", "method"):
            return name in BOOL_FUNCTIONS
        return False
    if isinstance(expr, cst.Name) and expr.value not in values.parameters:
        bound = _bindings(values, expr.value)
        return bool(bound) and all(is_boolean(ctx, values, value, depth + 1) for value in bound)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return boolean_attribute_problem(ctx, values, expr.attr.value) is None
    return False


def boolean_attribute_problem(ctx, values: FunctionValues, attr: str) -> Optional[str]:
    """Why ``self.<attr>`` is not visibly a bool Tensor (None when it is): every write to it, in the class and its
    in-module bases, must give one in the method that makes it (``self.has_pad = ops.logical_not(mask.all())``,
    ``self.flag = x > 0``). A Python bool among them (``self.has_pad = False`` when there is no mask) is not a
    Tensor: ``ops.where`` rejects it (MindSpore 2.10: "Failed calling Select with condition=Bool")."""
    found = ctx.attributes.assignments(values.owner, attr)
    if not found:
        return f"cannot see every value `self.{attr}` is set to (a write ms-lint does not follow, or none)"
    for value, env in found:
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            return (f"`self.{attr}` is also set to the Python bool `{value.value}`, and ops.where needs a Tensor "
                    "condition")
        if env.kind(value) is not Kind.TENSOR or not _boolean_in(ctx, env, value):
            return f"cannot see that every value `self.{attr}` is set to is a bool tensor"
    return None


def _boolean_in(ctx, env, value: cst.BaseExpression) -> bool:
    """``value`` is a bool Tensor in the method ``env`` models: a comparison of Tensors, or a bool-valued op
    (``ops.logical_not``, ``ops.isfinite``, ``P.Equal()(...)``, a Tensor's ``.all()``)."""
    if isinstance(value, cst.Comparison):
        return len(value.comparisons) == 1 and isinstance(value.comparisons[0].operator, COMPARISONS)
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    qualified = ctx.imports.qualify(func)
    if qualified and qualified.startswith(("mindspore.ops.", "mindspore.mint.", "mindspore.numpy.")):
        return qualified.rsplit(".", 1)[-1] in BOOL_FUNCTIONS
    if isinstance(func, cst.Call):
        inner = ctx.imports.qualify(func.func) or ""
        return inner.startswith("mindspore.ops.") and inner.rsplit(".", 1)[-1] in BOOL_PRIMITIVES
    if isinstance(func, cst.Attribute) and env.kind(func.value) is Kind.TENSOR:
        return func.attr.value in BOOL_FUNCTIONS
    return False


def boolean_condition(ctx, values: FunctionValues, cond: cst.BaseExpression
                      ) -> Tuple[Optional[cst.BaseExpression], Tuple, Optional[str]]:
    """(condition for ops.where, imports it needs, why not). ``not c`` -> ``ops.logical_not(c)``, ``a and b``
    -> ``ops.logical_and(a, b)``; anything not visibly a bool tensor is refused."""
    if not is_boolean(ctx, values, cond):
        bare = _strip_parens(cond)
        if isinstance(bare, cst.Attribute) and isinstance(bare.value, cst.Name) and bare.value.value == "self":
            return None, (), boolean_attribute_problem(ctx, values, bare.attr.value)
        return None, (), ("cannot see that the condition is a bool tensor (ops.where needs one; `if x:` on a "
                          "number tensor tests truthiness)")
    imports: List = []
    converted = _convert_condition(ctx, cond, imports)
    if converted is None:
        return None, (), "cannot spell ops.logical_not/logical_and here"
    return converted, tuple(imports), None


def _convert_condition(ctx, cond: cst.BaseExpression, imports: List) -> Optional[cst.BaseExpression]:
    if isinstance(cond, cst.UnaryOperation) and isinstance(cond.operator, cst.Not):
        inner = _convert_condition(ctx, cond.expression, imports)
        return ops_call(ctx, "logical_not", [inner], imports) if inner is not None else None
    if isinstance(cond, cst.BooleanOperation):
        left = _convert_condition(ctx, cond.left, imports)
        right = _convert_condition(ctx, cond.right, imports)
        name = "logical_and" if isinstance(cond.operator, cst.And) else "logical_or"
        return ops_call(ctx, name, [left, right], imports) if left is not None and right is not None else None
    return _strip_parens(cond)


def _strip_parens(expr: cst.BaseExpression) -> cst.BaseExpression:
    if getattr(expr, "lpar", None):
        return expr.with_changes(lpar=[], rpar=[])
    return expr


def ops_call(ctx, name: str, args: Sequence[Optional[cst.BaseExpression]], imports: List
              ) -> Optional[cst.Call]:
    spelled = ctx.spell(f"mindspore.ops.{name}")
    if spelled is None or any(a is None for a in args):
        return None
    text, needed = spelled
    imports.extend(needed)
    return cst.Call(func=cst.parse_expression(text), args=_args(args))


def _args(values: Sequence[cst.BaseExpression]) -> List[cst.Arg]:
    out = []
    for index, value in enumerate(values):
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if index < len(values) - 1 else \
            cst.MaybeSentinel.DEFAULT
        out.append(cst.Arg(value=_strip_parens(value) if not isinstance(value, cst.IfExp) else value,
                           comma=comma))
    return out


def condition_may_be_shape_one(ctx, values: FunctionValues, cond: cst.BaseExpression, depth: int = 0
                               ) -> Optional[str]:
    """The name of a Parameter attribute in the condition that may have shape ``(1,)`` (not under a full
    reduction), e.g. ``self.global_step`` made with ``initializer(0, [1], ms.int32)``; None if none is seen."""
    if depth > 4:
        return None
    if _is_full_reduction(cond):
        return None
    if isinstance(cond, cst.Attribute) and isinstance(cond.value, cst.Name) and cond.value.value == "self":
        if values.kind(cond) is not Kind.TENSOR:
            return None
        assigned = init_assignment(ctx, values.owner, cond.attr.value)
        zero_d = assigned is not None and is_zero_d_factory(ctx, assigned[0], assigned[1])
        return None if zero_d else f"self.{cond.attr.value}"
    if isinstance(cond, cst.Name):
        if cond.value in values.parameters:
            return cond.value if _step_parameter(ctx, values, cond.value) else None
        for value in _bindings(values, cond.value):
            found = condition_may_be_shape_one(ctx, values, value, depth + 1)
            if found:
                return found
        return None
    children: List[cst.BaseExpression] = []
    if isinstance(cond, cst.Comparison):
        children = [cond.left] + [c.comparator for c in cond.comparisons]
    elif isinstance(cond, (cst.BinaryOperation, cst.BooleanOperation)):
        children = [cond.left, cond.right]
    elif isinstance(cond, cst.UnaryOperation):
        children = [cond.expression]
    elif isinstance(cond, cst.Call):
        children = [a.value for a in cond.args]
        if isinstance(cond.func, cst.Attribute) and not (
                isinstance(cond.func.value, cst.Name) and cond.func.value.value == "self"):
            children.append(cond.func.value)
    elif isinstance(cond, cst.Subscript):
        children = [cond.value]
    for child in children:
        found = condition_may_be_shape_one(ctx, values, child, depth + 1)
        if found:
            return found
    return None


def _step_parameter(ctx, values: FunctionValues, name: str) -> bool:
    """A parameter that usually holds an optimizer's ``global_step`` (shape ``(1,)``): named so, or the step
    argument of an ``nn.LearningRateSchedule`` (``Optimizer.get_lr`` passes ``self.global_step``)."""
    if "global_step" in name:
        return True
    owner = values.owner
    if owner is None or values.func.name.value != "construct":
        return False
    for cls in ctx.attributes.class_chain(owner):
        if any(is_lr_schedule(ctx.imports.qualify(b.value)) for b in ctx.scope.classes[cls].node.bases):
            return True
    return False


def is_lr_schedule(qualified: Optional[str]) -> bool:
    """``nn.LearningRateSchedule``; in MindSpore 2.10 it is only importable from
    ``mindspore.nn.learning_rate_schedule``, which the import table does not shorten."""
    return qualified in ("mindspore.nn.LearningRateSchedule",
                         "mindspore.nn.learning_rate_schedule.LearningRateSchedule")


def is_zero_d_factory(ctx, value: cst.BaseExpression, method: Optional[cst.FunctionDef] = None) -> bool:
    """``Parameter(Tensor(0, ms.int32))``, ``Tensor(1.0)``, ``Tensor(limit)`` with ``limit=10.0`` a parameter of
    ``__init__``, ``initializer(0, [], ...)``: visibly 0-d."""
    if not isinstance(value, cst.Call):
        return False
    qualified = ctx.imports.qualify(value.func) or ""
    args = call_name_args(value)
    last = qualified.rsplit(".", 1)[-1]
    if last == "Parameter" and args:
        return is_zero_d_factory(ctx, args[0].value, method)
    if last in ("Tensor", "tensor") and args:
        first = args[0].value
        if isinstance(first, cst.Name) and method is not None:
            first = scalar_default(method, first.value) or first
        if is_literal(first) and isinstance(literal_value(first), (int, float)):
            return True
        return method is not None and is_number(ctx, method, args[0].value, args[0].value)
    if last == "initializer" and len(args) >= 2:
        shape = args[1].value
        return is_literal(shape) and literal_value(shape) == ()
    return _zero_d_reduction(ctx, value)


def _zero_d_reduction(ctx, value: cst.BaseExpression, depth: int = 0) -> bool:
    """``mask.all()``, ``ops.reduce_sum(x)`` (no axis: 0-d), and elementwise ops of those and Python numbers
    (``ops.logical_not(mask.all())``)."""
    from ms_lint.rewrites.where_shapes import ELEMENTWISE, FULL_REDUCTION_FUNCTIONS, FULL_REDUCTION_METHODS

    if depth > 3 or not isinstance(value, cst.Call) or any(a.keyword is not None or a.star for a in value.args):
        return False
    qualified = ctx.imports.qualify(value.func) or ""
    if qualified.startswith(("mindspore.ops.", "mindspore.mint.")):
        name = qualified.rsplit(".", 1)[-1]
        if name in FULL_REDUCTION_FUNCTIONS:
            return len(value.args) == 1
        return name in ELEMENTWISE and bool(value.args) and all(
            (is_literal(a.value) and isinstance(literal_value(a.value), (int, float)))
            or _zero_d_reduction(ctx, a.value, depth + 1) for a in value.args)
    return (qualified == "" and isinstance(value.func, cst.Attribute) and not value.args
            and value.func.attr.value in FULL_REDUCTION_METHODS and not _looks_like_module(value.func.value))


def scalar_default(method: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
    params = list(method.params.params) + list(method.params.kwonly_params)
    for param in params:
        if param.name.value == name and param.default is not None and is_literal(param.default):
            return param.default
    return None


# -- building the call ---------------------------------------------------------------------------------
def where_call(ctx, cond: cst.BaseExpression, a: cst.BaseExpression, b: cst.BaseExpression,
               imports: Sequence = ()) -> Optional[Tuple[cst.Call, Tuple]]:
    """``ops.where(cond, a, b)`` spelled for this module, with the imports it needs (None: no spelling)."""
    needed: List = list(imports)
    call = ops_call(ctx, "where", [cond, a, b], needed)
    if call is None:
        return None
    return call, tuple(dict.fromkeys(needed))


def hazard_message(name: str) -> str:
    if name.startswith("cell:"):
        return (f"a branch calls the sub-cell `self.{name[5:]}`: the select computes both sides, cells included, "
                "on every call, and the cell is not proven cheap and free of side effects")
    shown = {"/": "a division", "**": "a power"}.get(name, f"`{name}`")
    return (f"a branch computes {shown}: a select evaluates it even when the condition guards against it, and "
            "its inf/NaN reaches the gradient (measured: [1, 0] became [nan, nan]); check the gradient first")


def comments_inside(node: cst.CSTNode, own_leading: Sequence[cst.EmptyLine] = ()) -> List[cst.EmptyLine]:
    """Every comment inside ``node`` (except its own leading lines) as full-line comments, to keep them."""
    if fasttree.surely_uncommented(node):  # a statement of a fast tree: no ``#`` where its comments could be
        return []
    if "#" not in code_of(node):
        return []  # no comment is written without one; the code is a third of the visitor's cost, which rebuilds nodes
    if fasttree.trees_alive() and (fasttree.is_fast_made(node) or fasttree.holds_fast_node(node)):
        raise fasttree.NeedsRealTree("comments")  # a fast tree keeps none
    collector = _Comments()
    run_visitor(node, collector)
    own = {id(line.comment) for line in own_leading if line.comment is not None}
    return [cst.EmptyLine(indent=True, comment=c) for c in collector.found if id(c) not in own]


class _Comments(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.found: List[cst.Comment] = []

    def visit_Comment(self, node: cst.Comment) -> None:
        self.found.append(node)
