"""The value model: is an expression in graph code a Tensor (traced at run time) or a compile-time constant?

Every rule asks the same questions, so they live here:

* ``kind(expr)``: CONST (Python values, shapes, dtypes, ``len``, ``is None``, loop indices of unrolled loops,
  config attributes), TENSOR, TENSOR_SEQ (a tuple/list of tensors: grads, params), CELL / CELL_SEQ (sub-cells,
  ``nn.CellList``), OP (a Primitive or Cell object: calling it gives a tensor), or UNKNOWN.
* ``fold_int(expr)``: the integer value of a trip count when it can be seen statically.

The model is deliberately conservative: when in doubt it answers UNKNOWN, and rules only flag definite answers.
"""
from __future__ import annotations

import enum
from typing import Collection, Dict, FrozenSet, Iterable, List, Optional, Protocol, Sequence, Set, Tuple

import libcst as cst

from ms_lint.analysis.const_paths import call_constants
from ms_lint.analysis.dataflow import body_bindings, local_bindings, written_names
from ms_lint.analysis.reaching import ReachingBindings, ReachingSites, reaching_values
from ms_lint.analysis.dict_keys import keyed_name, literal_items, plain_dicts, pseudo_name
from ms_lint.analysis.frameworks import gives_tensors
from ms_lint.cstutil import (  # literal_value, is_literal: read by other modules from here too
    all_params, bind_arguments, call_name_args, code_of, is_literal, is_self_attr, is_staticmethod, literal_value,
    positional_params, suite_statements, target_names, walk_statements,
)
from ms_lint.data import mindspore_api
from ms_lint.names import ImportTable, dotted
from ms_lint.scope import GraphScope, is_cell_base
from ms_lint.treememo import tree_memo
from ms_lint.walk import find


class Kind(enum.Enum):
    CONST = "const"
    TENSOR = "tensor"
    TENSOR_SEQ = "tensor-seq"
    CELL = "cell"
    CELL_SEQ = "cell-seq"
    OP = "op"
    CONST_OP = "const-op"  # a Primitive whose result is a compile-time constant (P.Shape(), P.IsInstance())
    GRAD_OP = "grad-op"  # ``GradOperation(get_by_list=True)``: called on a network and weights, gives GRAD_FN
    GRAD_FN = "grad-fn"  # ``grad_op(net, weights)``: called on inputs, gives one gradient per weight (TENSOR_SEQ)
    # ``GradOperation()`` (get_all and get_by_list off): called on a network gives GRAD_FN_FIRST, which called on
    # inputs gives the gradient w.r.t. the first input, of that input's kind (a Tensor for a Tensor input).
    GRAD_OP_FIRST = "grad-op-first"
    GRAD_FN_FIRST = "grad-fn-first"
    UNKNOWN = "unknown"


SHAPE_ATTRIBUTES = {"shape", "ndim", "dtype", "size", "itemsize", "nbytes", "training", "phase"}
SHAPE_FUNCTIONS = {
    "mindspore.ops.shape", "mindspore.ops.rank", "mindspore.ops.dtype", "mindspore.ops.size",
    "mindspore.ops.Shape", "mindspore.ops.Rank", "mindspore.ops.DType", "mindspore.ops.tuple_len",
    "mindspore.ops.make_tuple", "mindspore.ops.typeof", "mindspore.ops.isconstant",
    "mindspore.ops.is_sequence_value_unknown", "mindspore.ops.dyn_shape", "mindspore.ops.numel",
    "mindspore.ops.is_floating_point", "mindspore.ops.is_complex", "mindspore.ops.is_tensor",
}
# ops functions on Python scalars that return Python scalars: constant exactly when their inputs are.
SCALAR_FUNCTIONS = {"mindspore.ops.scalar_cast"}
# ops that return their first argument unchanged (ordering only): the result has the argument's kind.
PASS_THROUGH_FUNCTIONS = {"mindspore.ops.depend"}
CONST_PRIMITIVES = {
    "mindspore.ops.Shape", "mindspore.ops.Rank", "mindspore.ops.DType", "mindspore.ops.IsSubClass",
    "mindspore.ops.IsInstance", "mindspore.ops.Size",
}
STRING_NODES = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_NEVER_TENSOR_LEAVES = (cst.Integer, cst.Float, cst.Imaginary) + STRING_NODES
TENSOR_VIEW_ATTRIBUTES = ("T", "real", "imag", "mT")  # attributes of a Tensor that are Tensors
# ``self.<holder>`` attributes that hold a model's configuration object: its fields are Python values
CONFIG_HOLDERS = ("config",)
SHAPE_METHODS = {"dim", "size", "ndimension", "dtype", "shape", "is_complex", "is_floating_point", "is_signed",
                 "is_contiguous", "numel", "nelement", "element_size"}
CONST_BUILTINS = {"len", "isinstance", "range", "int", "bool", "str", "float", "tuple", "list", "enumerate",
                  "zip", "min", "max", "abs", "hasattr", "getattr", "type", "issubclass", "callable", "sorted"}
# ops callables that are not tensor-producing functions.
NON_TENSOR_OPS = {"mindspore.ops.partial", "mindspore.ops.HyperMap", "mindspore.ops.Map",
                  "mindspore.ops.MultitypeFuncGraph", "mindspore.ops.GradOperation", "mindspore.ops.grad",
                  "mindspore.ops.value_and_grad", "mindspore.ops.vmap"}
TENSOR_SEQ_SOURCES = {"mindspore.ParameterTuple", "mindspore.ops.unstack", "mindspore.ops.split",
                      "mindspore.ops.chunk", "mindspore.ops.Unstack", "mindspore.ops.Split",
                      "mindspore.ops.tensor_split", "mindspore.ops.meshgrid"}
# Tensor methods that always return a tuple of Tensors (MindSpore 2.10's ``Tensor.split``/``chunk``/``unbind``...).
TENSOR_TUPLE_METHODS = frozenset({"split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit"})
# Methods of Python lists and strings that MindSpore 2.10's Tensor lacks (checked with ``hasattr``) and whose result
# is no element of the receiver (a dict of Tensors taken for a Tensor still gives Tensors through ``get``/``items``).
NOT_TENSOR_METHODS = frozenset({"count", "append", "extend", "insert", "remove", "startswith", "join", "lower"})
MAPPERS = {"mindspore.ops.HyperMap", "mindspore.ops.Map"}
TENSOR_FACTORIES = {"mindspore.Tensor", "mindspore.Parameter", "mindspore.tensor", "mindspore.numpy"}
CELL_SEQ_FACTORIES = {"mindspore.nn.CellList", "mindspore.nn.SequentialCell", "mindspore.nn.CellDict"}
PARAM_SEQ_METHODS = {"trainable_params", "get_parameters", "untrainable_params"}
# What MindSpore's base classes assign in ``__init__``: subclasses use these without assigning them.
_OPTIMIZER_ATTRIBUTES = {"global_step": Kind.TENSOR, "parameters": Kind.TENSOR_SEQ, "_parameters": Kind.TENSOR_SEQ,
                         # Python bools nn.Optimizer.__init__ sets (mindspore/nn/optim/optimizer.py, 2.10)
                         **{flag: Kind.CONST for flag in ("is_group", "is_group_lr", "is_group_params_ordered",
                                                          "dynamic_lr", "dynamic_weight_decay", "need_scale")}}
_TRAIN_STEP_ATTRIBUTES = {"weights": Kind.TENSOR_SEQ, "network": Kind.CELL, "optimizer": Kind.CELL}
BASE_CLASS_ATTRIBUTES = {
    "mindspore.nn.Optimizer": _OPTIMIZER_ATTRIBUTES,
    "mindspore.nn.TrainOneStepCell": _TRAIN_STEP_ATTRIBUTES,
    "mindspore.nn.TrainOneStepWithLossScaleCell": dict(_TRAIN_STEP_ATTRIBUTES, scale_sense=Kind.TENSOR),
}
GRADIENT_SEQ_NAMES = {"grads", "gradients", "grad", "params", "parameters", "weights", "moments", "moment1",
                      "moment2", "accum", "accums", "grads_and_vars", "inputs_tuple", "updates"}


_COMPILE_TIME: Optional[frozenset] = None


# Functional ops that return a tuple (iterating their result walks the tuple, not a tensor axis).
TUPLE_RESULTS = {
    "split", "chunk", "unstack", "unbind", "meshgrid", "topk", "sort", "unique", "unique_consecutive", "max", "min",
    "median", "mode", "kthvalue", "std_mean", "var_mean", "svd", "qr", "eig", "eigh", "slogdet", "lu", "histogram",
    "frexp", "tensor_split", "vsplit", "hsplit", "dsplit", "nonzero", "broadcast_tensors", "aminmax", "cummax",
    "cummin", "lstsq", "unique_with_pad", "shape", "dyn_shape", "tolist", "asnumpy", "numpy", "argwhere", "where",
}


# What a method or function of these names gives is no one Tensor, whatever the value model calls it.
NOT_ONE_TENSOR = frozenset(TUPLE_RESULTS | {"item"})


# What builds one Tensor: an attribute bound to it holds one (``self.stride = Parameter(Tensor(stride))``), and a
# smoke test's input built with it is one (``ms_lint.analysis.script_calls``).
SINGLE_TENSOR_BUILDERS = frozenset({"mindspore.Parameter", "mindspore.Tensor", "mindspore.tensor",
                                    "mindspore.common.parameter.Parameter", "mindspore.common.tensor.Tensor"})


def compile_time_helpers() -> frozenset:
    """MindSpore's ``@constexpr``/``@_primexpr`` functions (qualified names), listed by
    tools/derive_mindspore_api.py: their results are Python values, not the Tensors ``ops``/``numpy`` give."""
    global _COMPILE_TIME
    if _COMPILE_TIME is None:
        _COMPILE_TIME = frozenset(mindspore_api().get("compile_time", ()))
    return _COMPILE_TIME


def _derived_attribute(table: str, bases: List[str], attr: str) -> Optional[str]:
    """What tools/derive_mindspore_api.py found MindSpore's classes ``bases`` (qualified names, nearest first)
    or their own bases assign to ``self.<attr>``: its kind (``table`` "attributes") or the mapper that built it
    ("attribute_builders"). Each class's bases are read breadth first, each class once."""
    api = mindspore_api()
    found, parents = api.get(table, {}), api.get("bases", {})
    pending, seen = list(bases), set()
    while pending:
        base = pending.pop(0)
        if base in seen:
            continue
        seen.add(base)
        if attr in found.get(base, {}):
            return found[base][attr]
        pending.extend(parents.get(base, ()))
    return None


def join(kinds: Iterable[Kind]) -> Kind:
    """Flow-insensitive merge of every value a name is bound to."""
    found: Set[Kind] = set(kinds)
    if not found:
        return Kind.UNKNOWN
    if len(found) == 1:
        return found.pop()
    if Kind.TENSOR in found and found <= {Kind.TENSOR, Kind.CONST, Kind.UNKNOWN}:
        return Kind.TENSOR  # once a name holds a tensor, graph code treats it as one from there on
    if found == {Kind.TENSOR_SEQ, Kind.CONST}:
        return Kind.TENSOR_SEQ  # ``out = ()`` then ``out = out + (g,)``: a tuple of tensors being built
    return Kind.UNKNOWN


def never_tensor(expr: cst.BaseExpression) -> bool:
    """True when ``FunctionValues.kind(expr)`` cannot be TENSOR whatever the function's names hold: literals,
    ``is``/``in`` tests, comparisons with a string, and ``not``/``and``/``or`` of those (the same cases as the
    ``_kind_*`` methods below). Lets a rule skip building a value model for ``if x is None:``."""
    kind = type(expr)
    if kind in _NEVER_TENSOR_LEAVES:
        return True
    if kind is cst.Name:
        return expr.value in ("True", "False", "None")
    if kind is cst.Comparison:
        if any(isinstance(t.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for t in expr.comparisons):
            return True
        operands = [expr.left] + [t.comparator for t in expr.comparisons]
        return any(isinstance(operand, STRING_NODES) for operand in operands) or all(
            never_tensor(operand) for operand in operands)
    if kind is cst.UnaryOperation:
        return never_tensor(expr.expression)
    if kind is cst.BooleanOperation:
        return never_tensor(expr.left) and never_tensor(expr.right)
    return False


def reads_no_locals(expr: cst.BaseExpression) -> bool:
    """True when ``FunctionValues.kind(expr)`` reads nothing of the function's value model: literals, ``self.<attr>``
    (the class's attributes), attributes that name no Tensor property (``ms.float32``: the import table), and
    ``not``/``and``/``or``/comparisons of those (``self.<attr>`` is the class's attribute even where a function
    rebinds ``self``, in both). Such an expression has one kind in every method of the class,
    so ``ExpressionKinds`` without a value model gives it (``ModuleContext.class_kinds``): ``if self.has_bias:``
    needs neither the function's bindings nor the parameter kinds its callers decide."""
    kind = type(expr)
    if kind in _NEVER_TENSOR_LEAVES:
        return True
    if kind is cst.Name:
        return expr.value in ("True", "False", "None")
    if kind is cst.Attribute:
        base = expr.value
        if expr.attr.value in SHAPE_ATTRIBUTES or (isinstance(base, cst.Name) and base.value == "self"):
            return True
        # ``_kind_Attribute`` reads the base only for these (``x.T`` of a Tensor ``x``)
        return expr.attr.value not in TENSOR_VIEW_ATTRIBUTES or reads_no_locals(base)
    if kind is cst.Comparison:
        return reads_no_locals(expr.left) and all(reads_no_locals(t.comparator) for t in expr.comparisons)
    if kind is cst.UnaryOperation:
        return reads_no_locals(expr.expression)
    if kind is cst.BooleanOperation:
        return reads_no_locals(expr.left) and reads_no_locals(expr.right)
    return False


class ModuleConstants:
    """Module-level names bound exactly once, with the literal value where there is one."""

    def __init__(self, module: cst.Module):
        counts: Dict[str, int] = {}
        self.values: Dict[str, object] = {}
        self.nodes: Dict[str, cst.BaseExpression] = {}
        for stmt in module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name):
                        counts[target.value] = counts.get(target.value, 0) + 1
                        self.nodes[target.value] = small.value
        rebound = rebound_elsewhere(module)
        for name, count in counts.items():
            if count == 1 and name not in rebound and is_literal(self.nodes[name]):
                self.values[name] = literal_value(self.nodes[name])

    def is_constant(self, name: str) -> bool:
        return name in self.values


def rebound_elsewhere(module: cst.Module) -> Set[str]:
    """Module names bound other than by a top-level ``NAME = value`` line: in an ``if``/``try``/``for``/``with``
    block at module level (``if FAST: STEPS = 2``), by ``+=``, a loop, an import or a def, or declared ``global``
    in a function (``def main(): global STEPS; STEPS = args.steps``). Such a name's value is not the literal."""
    names: Set[str] = set()
    for top in module.body:  # each top-level statement's part, kept across an editor's edits that leave it alone
        names.update(_rebound_by(top))
    return names


@tree_memo
def _rebound_by(top: cst.BaseStatement) -> FrozenSet[str]:
    """The names ``rebound_elsewhere`` counts for one top-level statement."""
    names: Set[str] = set()
    for stmt in walk_statements([top], into_defs=False):
        nested = stmt is not top
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        simple = not nested and len(small.targets) == 1 and isinstance(target.target, cst.Name)
                        if not simple:
                            names.update(target_names(target.target, include_starred=True))
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    names.update(target_names(small.target, include_starred=True))
                elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname is not None else alias.name
                        while isinstance(bound, cst.Attribute):
                            bound = bound.value
                        if isinstance(bound, cst.Name):
                            names.add(bound.value)
        elif isinstance(stmt, (cst.For, cst.With)):
            names.update(_names_bound_by(stmt))
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
    for stmt in walk_statements([top], into_defs=True):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if type(small) is cst.Global:
                    names.update(item.name.value for item in small.names)
    return frozenset(names)


class ClassAttributes:
    """What ``self.<attr>`` holds, from assignments in ``__init__`` (and other methods) of a class and its bases."""

    def __init__(self, scope: GraphScope, imports: ImportTable, constants: ModuleConstants, project=None):
        self.scope = scope
        self.imports = imports
        self.constants = constants
        self.project = project  # bases in other modules are asked through their own module's analysis
        self._kinds: Dict[str, Dict[str, Kind]] = {}
        self._ints: Dict[str, Dict[str, int]] = {}
        self._origins: Dict[str, Dict[str, str]] = {}  # class -> attr -> where a constructor-default int came from
        self._made: Dict[str, Dict[str, str]] = {}  # class -> attr -> what built it (``self.map = C.HyperMap()``)
        self._set_up: Dict[str, Set[str]] = {}  # class -> the attributes an ``__init__`` of its chain assigns
        self._writers: Dict[str, Dict[str, Set[cst.FunctionDef]]] = {}  # class -> attr -> the methods assigning it
        self._mixed: Dict[str, Set[str]] = {}  # class -> attributes assigned values of different kinds
        self._inherited_kinds: Dict[Tuple[str, str], Kind] = {}
        self._envs: Dict[Tuple[cst.FunctionDef, Optional[str]], "_InitEnv"] = {}
        self._writes: Dict[Tuple[str, str, bool], Optional[List[Tuple[cst.BaseExpression, cst.FunctionDef]]]] = {}
        self._held: Dict[Tuple[Optional[str], str, str], Kind] = {}

    def _collect(self, class_name: str) -> None:
        kinds: Dict[str, List[Kind]] = {}
        ints: Dict[str, List[Optional[int]]] = {}
        set_up: Set[str] = set()
        writers: Dict[str, Set[cst.FunctionDef]] = {}
        origins: Dict[str, str] = {}
        made: Dict[str, List[Optional[str]]] = {}
        chain = self.class_chain(class_name)
        for cls in chain:
            info = self.scope.classes[cls]
            for method in info.methods.values():
                assignments = list(self_assignments(method))
                if not assignments:
                    continue  # nothing to learn here: no environment to build (two passes over its statements)
                is_init = method.name.value == "__init__"
                if is_init:
                    set_up.update(attr for attr, _ in assignments)
                env = self._method_env(method, cls if is_init else None)
                for attr, value in assignments:
                    writers.setdefault(attr, set()).add(method)
                    kinds.setdefault(attr, []).append(env.kind(value))
                    builder = value.func if isinstance(value, cst.Call) else None
                    made.setdefault(attr, []).append(
                        (self.imports.qualify(builder) or dotted(builder)) if builder is not None else None)
                    folded = env.fold(value) if is_init else None
                    ints.setdefault(attr, []).append(folded)
                    origin = env.origin_of(value) if folded is not None else None
                    if origin:
                        formula = "" if isinstance(value, cst.Name) else f" = `{code_of(value)}`"
                        origins[attr] = f"`{attr}`{formula} = {folded} with {origin}"
        self._kinds[class_name] = {attr: join(found) for attr, found in kinds.items()}
        self._set_up[class_name] = set_up
        self._writers[class_name] = writers
        self._mixed[class_name] = {attr for attr, found in kinds.items() if len(set(found)) > 1}
        self._ints[class_name] = {
            attr: found[0] for attr, found in ints.items() if len(found) == 1 and found[0] is not None
        }
        self._origins[class_name] = {attr: text for attr, text in origins.items() if attr in self._ints[class_name]}
        self._made[class_name] = {attr: found[0] for attr, found in made.items() if len(found) == 1 and found[0]}

    def assigned(self, class_name: str, uniform: bool = False) -> Dict[str, Kind]:
        """The kind of every ``self.<attr>`` the methods of the class and its in-module bases assign; ``uniform``:
        only those every assignment gives the same kind (``nn.Pad.paddings`` is a tuple or a Tensor by mode)."""
        if class_name not in self._kinds:
            self._collect(class_name)
        return {attr: kind for attr, kind in self._kinds[class_name].items()
                if not (uniform and attr in self._mixed[class_name])}

    def writes(self, class_name: Optional[str], attr: str, complete: bool = False
               ) -> Optional[List[Tuple[cst.BaseExpression, cst.FunctionDef]]]:
        """(value, method) of every ``self.<attr> = value`` in the methods of the class and its in-module bases;
        None when some write is not that plain (``+=``, a tuple target, an annotation without a value, a
        class-level binding). ``complete``: also None when a base lives in another module, whose writes are not
        seen here."""
        if class_name is None or class_name not in self.scope.classes:
            return None
        key = (class_name, attr, complete)
        if key not in self._writes:  # asked per attribute read, by several rules: each method walked once per query
            self._writes[key] = self._find_writes(class_name, attr, complete)
        return self._writes[key]

    def _find_writes(self, class_name: str, attr: str, complete: bool
                     ) -> Optional[List[Tuple[cst.BaseExpression, cst.FunctionDef]]]:
        if complete and self.external_bases(class_name):
            return None
        found: List[Tuple[cst.BaseExpression, cst.FunctionDef]] = []
        for cls in self.class_chain(class_name):
            info = self.scope.classes[cls]
            for stmt in info.node.body.body:
                if isinstance(stmt, cst.SimpleStatementLine) and attr in _names_bound_by(stmt):
                    return None  # a class-level binding: ``has_mask = False`` in the class body
            for method in info.methods.values():
                for stmt in walk_statements(suite_statements(method.body), into_defs=False):
                    for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
                        targets: List[cst.BaseExpression] = []
                        if isinstance(small, cst.Assign):
                            targets = [t.target for t in small.targets]
                        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                            targets = [small.target]
                        for target in targets:
                            if is_self_attr(target, attr):
                                if isinstance(small, cst.AugAssign) or small.value is None:
                                    return None
                                found.append((small.value, method))
                            elif any(is_self_attr(node, attr) for node in find(target, cst.Attribute)):
                                return None  # ``self.a, self.b = ...``
        return found

    def single_write(self, class_name: Optional[str], attr: str
                     ) -> Optional[Tuple[cst.BaseExpression, cst.FunctionDef]]:
        """(value, method) of the one plain write to ``self.<attr>`` (see ``writes``), or None."""
        found = self.writes(class_name, attr)
        return found[0] if found is not None and len(found) == 1 else None

    def assignments(self, class_name: Optional[str], attr: str
                    ) -> Optional[List[Tuple[cst.BaseExpression, "ExpressionKinds"]]]:
        """Every value assigned to ``self.<attr>`` (``writes(..., complete=True)``), each with the value model of
        the method that assigns it."""
        found = self.writes(class_name, attr, complete=True)
        if found is None:
            return None
        return [(value, self._method_env(method, None)) for value, method in found]

    def _method_env(self, method: cst.FunctionDef, constructed_class: Optional[str]) -> "_InitEnv":
        """The environment of a method read for its ``self.<attr>`` writes, built once (two passes over its
        statements: a large ``__init__`` is asked about by every attribute of the class)."""
        key = (method, constructed_class)
        env = self._envs.get(key)
        if env is None:
            env = self._envs[key] = _InitEnv(self, method, self.imports, constructed_class)
        return env

    def fold_in(self, method: cst.FunctionDef, class_name: Optional[str], expr: cst.BaseExpression) -> Optional[int]:
        """``expr`` folded in a method of the class as its ``self.<attr>`` writes are read (``__init__``'s
        parameters with literal int defaults, refined by the project's constructor calls)."""
        return self._method_env(method, class_name).fold(expr)

    def class_chain(self, class_name: str) -> List[str]:
        """The class and its bases defined in this module, nearest first (breadth first, each once)."""
        chain, pending = [], [class_name]
        while pending:
            name = pending.pop(0)
            if name in self.scope.classes and name not in chain:
                chain.append(name)
                pending.extend(self.scope.classes[name].base_names)
        return chain

    def kind(self, class_name: Optional[str], attr: str) -> Kind:
        if attr == "training":
            return Kind.CONST
        if class_name is None or class_name not in self.scope.classes:
            return Kind.UNKNOWN
        if class_name not in self._kinds:
            self._collect(class_name)
        own = self._kinds[class_name].get(attr)
        if own is not None and (attr in self._set_up[class_name] or not all(
                method in self.scope.functions for method in self._writers[class_name][attr])):
            return own
        # Set up by a base in another module (or MindSpore) and written only by graph code here: such a write
        # updates it (``self._accumulation_step = 0`` in ``construct`` keeps the base's Parameter)
        inherited = self._inherited_kind(class_name, attr)
        if own is None:
            return inherited
        return own if inherited is Kind.UNKNOWN else join((own, inherited))

    def _inherited_kind(self, class_name: str, attr: str) -> Kind:
        """What the bases outside this module set ``self.<attr>`` to (UNKNOWN when none is known); asked once per
        class and attribute (each read of ``self.<attr>`` asks)."""
        key = (class_name, attr)
        found = self._inherited_kinds.get(key)
        if found is None:
            found = self._inherited_kinds[key] = self._find_inherited_kind(class_name, attr)
        return found

    def _find_inherited_kind(self, class_name: str, attr: str) -> Kind:
        """Asked in this order: what MindSpore's base classes set that the value model cannot see there
        (``BASE_CLASS_ATTRIBUTES``: ``TrainOneStepCell.weights`` is the optimizer's parameters); the project's bases
        in other modules; last, what the value model saw when tools/derive_mindspore_api.py ran it on MindSpore's
        source (``TrainOneStepCell.grad``): MindSpore's source checked as a project reads its bases itself."""
        bases = self._mindspore_bases(class_name)
        known = next((BASE_CLASS_ATTRIBUTES[base][attr] for base in bases
                      if attr in BASE_CLASS_ATTRIBUTES.get(base, {})), None)
        if known is not None:
            return known
        for context, base in self.external_bases(class_name):
            kind = context.attributes.kind(base, attr)
            if kind is not Kind.UNKNOWN:
                return kind
        derived = _derived_attribute("attributes", bases, attr)
        return Kind(derived) if derived is not None else Kind.UNKNOWN  # bound methods: what they return is not modelled

    def external_bases(self, class_name: str):
        """Bases of the class chain that live in other project modules: (their module's context, class name)."""
        if self.project is None:
            return []
        found = []
        for cls in self.class_chain(class_name):
            for pair in self.project.external_bases(cls):
                if pair not in found:
                    found.append(pair)
        return found

    def _mindspore_bases(self, class_name: str) -> List[str]:
        """The qualified names the bases of the class chain resolve to (MindSpore's classes among them)."""
        return [self.imports.qualify(base.value) or "" for cls in self.class_chain(class_name)
                for base in self.scope.classes[cls].node.bases]

    def int_value(self, class_name: Optional[str], attr: str) -> Optional[int]:
        if class_name is None or class_name not in self.scope.classes:
            return None
        if class_name not in self._ints:
            self._collect(class_name)
        if attr in self._ints[class_name] or attr in self._kinds[class_name]:
            return self._ints[class_name].get(attr)
        for context, base in self.external_bases(class_name):
            value = context.attributes.int_value(base, attr)
            if value is not None:
                return value
        return None

    def holds_config(self, class_name: str, holder: str) -> bool:
        """Does ``self.<holder>`` hold the model's configuration object, whose fields are Python values (the label
        policy's "config attributes")? The class chain (in this module) binds it only to a parameter or a field of
        one (``self.config = config``, ``self.config = config.text_config``) or to a ``...Config(...)`` call, or
        never (a base in another module keeps it: ``PreTrainedModel.__init__``)."""
        writes = self.writes(class_name, holder)
        return writes is not None and all(_config_value(value) for value, _method in writes)

    def held_tensor(self, class_name: Optional[str], holder: str, attr: str) -> Kind:
        """``self.<holder>.<attr>``: TENSOR when ``self.<holder>`` is built from one class of the project
        (``self.accumulator = GradAccumulator(...)``) whose methods only ever bind ``self.<attr>`` to Tensors
        (``self.sync = ms.Parameter(...)``), and no statement of either module writes ``<other>.<attr>``;
        else UNKNOWN."""
        key = (class_name, holder, attr)
        found = self._held.get(key)
        if found is None:
            found = self._held[key] = self._find_held_tensor(class_name, holder, attr)
        return found

    def _find_held_tensor(self, class_name: Optional[str], holder: str, attr: str) -> Kind:
        made = self.made_by(class_name, holder)
        if not made:
            return Kind.UNKNOWN
        if made in self.scope.classes:
            attributes, held, modules = self, made, [self.scope.module]
        elif "." in made and self.project is not None:
            found = self.project.project_class(made)
            if found is None:
                return Kind.UNKNOWN
            context, held = found
            attributes, modules = context.attributes, [self.scope.module, context.module]
        else:
            return Kind.UNKNOWN
        if attributes.kind(held, attr) is not Kind.TENSOR or attr not in attributes.assigned(held, uniform=True):
            return Kind.UNKNOWN
        if any(written_from_outside(module, name) for module in modules for name in (attr, holder)):
            return Kind.UNKNOWN  # ``self.accumulator.sync = False`` / ``step.accumulator = Other()`` somewhere
        return Kind.TENSOR

    def made_by(self, class_name: Optional[str], attr: str) -> Optional[str]:
        """What built ``self.attr`` when one ``self.attr = Builder(...)`` in the class chain sets it: the qualified
        name (``mindspore.ops.HyperMap``) or, for a class of this module, its name. A base in another module of
        the project answers with MindSpore's classes only (``self.shape = P.Shape()`` in ``QwenModel``)."""
        if class_name is None or class_name not in self.scope.classes:
            return None
        if class_name not in self._made:
            self._collect(class_name)
        if attr in self._made[class_name] or attr in self._kinds[class_name]:
            return self._made[class_name].get(attr)
        for context, base in self.external_bases(class_name):  # a base of the project sets it (MindSpore's API)
            if attr in context.attributes.assigned(base):
                made = context.attributes.made_by(base, attr)
                return made if made is not None and made.startswith("mindspore.") else None
        return _derived_attribute("attribute_builders", self._mindspore_bases(class_name), attr)

    def api_method_kind(self, class_name: Optional[str], method: str) -> Kind:
        """What a method inherited from a MindSpore class returns, per MindSpore's docstrings
        (``self.process_loss_scale(cond)`` in a ``TrainOneStepWithLossScaleCell`` subclass is a Tensor)."""
        if class_name is None or class_name not in self.scope.classes:
            return Kind.UNKNOWN
        if self.scope.find_method(class_name, method) is not None:
            return Kind.UNKNOWN  # defined in this module: its own returns decide
        methods = mindspore_api()["methods"]
        for cls in self.class_chain(class_name):
            for base in self.scope.classes[cls].node.bases:
                documented = methods.get(f"{self.imports.qualify(base.value)}.{method}")
                if documented is not None:
                    return Kind(documented)
        for context, base in self.external_bases(class_name):
            if context.scope.find_method(base, method) is not None:
                return Kind.UNKNOWN
            kind = context.attributes.api_method_kind(base, method)
            if kind is not Kind.UNKNOWN:
                return kind
        return Kind.UNKNOWN

    def int_origin(self, class_name: Optional[str], attr: str) -> Optional[str]:
        """Where ``self.attr``'s int comes from when a constructor default or construction made it (else None)."""
        if class_name is None or class_name not in self.scope.classes:
            return None
        if class_name not in self._origins:
            self._collect(class_name)
        if attr in self._origins[class_name]:
            return self._origins[class_name][attr]
        if attr in self._kinds[class_name]:
            return None
        for context, base in self.external_bases(class_name):
            origin = context.attributes.int_origin(base, attr)
            if origin is not None:
                return origin
        return None


def written_from_outside(module: cst.Module, attr: str) -> bool:
    """Does a statement of the module bind ``<x>.<attr>`` for an ``x`` other than ``self`` (also inside a tuple
    target), or call ``setattr(<any>, "<attr>", ...)``? (A write in a third module is not seen.)"""
    for node in find(module, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Call)):
        if type(node) is cst.Call:
            args = node.args
            if (type(node.func) is cst.Name and node.func.value == "setattr" and len(args) > 1
                    and type(args[1].value) is cst.SimpleString and args[1].value.evaluated_value == attr):
                return True
            continue
        pending = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
        while pending:
            target = pending.pop()
            if type(target) in (cst.Tuple, cst.List):
                pending.extend(element.value for element in target.elements)
            elif type(target) is cst.StarredElement:
                pending.append(target.value)
            elif type(target) is cst.Attribute and target.attr.value == attr and not is_self_attr(target):
                return True
    return False


class _KindMethods(dict):
    """Node class -> the ``_kind_<NodeClass>`` method of one ``ExpressionKinds`` class (None where it has none),
    looked up once per node class (``kind`` runs for every expression a model reads)."""

    def __init__(self, owner: type):
        super().__init__()
        self.owner = owner

    def __missing__(self, node_class: type):
        found = self[node_class] = getattr(self.owner, "_kind_" + node_class.__name__, None)
        return found


class ExpressionKinds:
    """Classifies expressions given an environment of local names. Subclassed per kind of function."""

    # What an in-module function returns (the context: ``ReturnModel``), for ``@property`` reads; None: not asked.
    returns: Optional["ReturnModel"] = None
    returns_off = False
    reads_held_attributes = True  # ``self.holder.attr`` and ``@property`` reads (not while a class is collected)

    def __init__(self, imports: ImportTable, constants: ModuleConstants, attributes: Optional[ClassAttributes],
                 owner: Optional[str]):
        self.imports = imports
        self.constants = constants
        self.attributes = attributes
        self.owner = owner
        self.env: Dict[str, Kind] = {}
        self.int_env: Dict[str, int] = {}
        self.plain_dicts: Set[str] = set()  # names of string-keyed dicts read by constant keys (dict_keys.py)
        self._shadowed: Set[str] = set()  # loop variables of the comprehension being evaluated

    # -- classification ----------------------------------------------------------------------------------
    def kind(self, expr: cst.BaseExpression) -> Kind:
        method = self._kind_methods[type(expr)]  # this class's ``_kind_<NodeClass>``, or None
        return method(self, expr) if method is not None else Kind.UNKNOWN

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._kind_methods = _KindMethods(cls)

    def _kind_Integer(self, expr): return Kind.CONST
    _kind_Float = _kind_Imaginary = _kind_SimpleString = _kind_ConcatenatedString = _kind_FormattedString = _kind_Integer

    def _kind_Name(self, expr: cst.Name) -> Kind:
        if expr.value in ("True", "False", "None"):
            return Kind.CONST
        if expr.value in self._shadowed:
            return Kind.UNKNOWN  # a comprehension's own loop variable
        if expr.value in self.env:
            return self.env[expr.value]
        if self.constants.is_constant(expr.value):
            return Kind.CONST
        return Kind.UNKNOWN

    def _kind_Attribute(self, expr: cst.Attribute) -> Kind:
        attr = expr.attr.value
        if attr in SHAPE_ATTRIBUTES:
            return Kind.CONST
        if isinstance(expr.value, cst.Name) and expr.value.value == "self" and self.attributes is not None:
            return self._self_attribute(attr)
        qualified = self.imports.qualify(expr)
        if qualified and qualified.startswith("mindspore."):
            return Kind.CONST  # mindspore.float32, ms.GRAPH_MODE...
        # The base only matters for these: evaluating it for every attribute made a method chain
        # (``a.f(x).g(y).h(z)``, whose calls also evaluate their receivers) cost 2^length.
        if attr in TENSOR_VIEW_ATTRIBUTES and self.kind(expr.value) is Kind.TENSOR:
            return Kind.TENSOR
        value = expr.value
        if type(value) is cst.Attribute and is_self_attr(value) and self.reads_held_attributes \
                and self.attributes is not None and self.owner is not None:  # ``self.accumulator.sync``
            held = self.attributes.held_tensor(self.owner, value.attr.value, attr)  # type: ignore[attr-defined]
            if held is not Kind.UNKNOWN:
                return held  # (a project class named ``...Config`` that keeps a Parameter)
        holder = _config_root(value)
        if holder is not None and self.attributes is not None and self.owner is not None \
                and self.attributes.holds_config(self.owner, holder):
            return Kind.CONST  # ``self.config.chunk_length``: a field of the model's configuration
        return Kind.UNKNOWN

    def _self_attribute(self, attr: str) -> Kind:
        """``self.<attr>``: what the class's methods bind it to, else what its ``@property`` returns."""
        kind = self.attributes.kind(self.owner, attr)  # type: ignore[union-attr]
        if (kind is Kind.UNKNOWN and self.returns is not None and not self.returns_off and self.owner is not None
                and self.reads_held_attributes):
            return self._property_kind(attr)
        return kind

    def _property_kind(self, name: str) -> Kind:
        """``self.sync_gradients`` read through a ``@property`` of the class (or an in-module base) that no method
        binds: what the getter returns, when that is a Tensor or a tuple of them."""
        attributes = self.attributes
        getter = attributes.scope.find_method(self.owner, name)  # type: ignore[union-attr]
        if getter is None or not any(type(d.decorator) is cst.Name and d.decorator.value == "property"
                                     for d in getter.decorators):
            return Kind.UNKNOWN
        if attributes.writes(self.owner, name) != []:  # type: ignore[union-attr]
            return Kind.UNKNOWN  # a setter's attribute, or bound in a way the writes do not show
        kind = self.returns.return_kind(getter, {})  # type: ignore[union-attr]
        return kind if kind in (Kind.TENSOR, Kind.TENSOR_SEQ) else Kind.UNKNOWN

    def _kind_Subscript(self, expr: cst.Subscript) -> Kind:
        keyed = keyed_name(expr, self.plain_dicts)
        if keyed is not None:  # ``state["failed"]`` of a plain dict: joined like a name (analysis/dict_keys.py)
            return self.env.get(keyed, Kind.UNKNOWN)
        base = self.kind(expr.value)
        if base in (Kind.CONST, Kind.TENSOR):
            return base
        if base is Kind.TENSOR_SEQ:
            single = len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)
            return Kind.TENSOR if single else Kind.TENSOR_SEQ
        if base is Kind.CELL_SEQ:
            return Kind.CELL
        return Kind.UNKNOWN

    def _kind_BinaryOperation(self, expr: cst.BinaryOperation) -> Kind:
        left, right = self.kind(expr.left), self.kind(expr.right)
        if isinstance(expr.operator, cst.Add) and Kind.TENSOR_SEQ in (left, right) and {left, right} <= {
                Kind.TENSOR_SEQ, Kind.CONST}:
            return Kind.TENSOR_SEQ  # tuple concatenation: ``grads + (g,)``, ``() + new``
        return self._combine([left, right])

    def _kind_BooleanOperation(self, expr: cst.BooleanOperation) -> Kind:
        return self._combine([self.kind(expr.left), self.kind(expr.right)])

    def _kind_UnaryOperation(self, expr: cst.UnaryOperation) -> Kind:
        inner = self.kind(expr.expression)
        return inner if inner in (Kind.CONST, Kind.TENSOR) else Kind.UNKNOWN

    def _kind_Comparison(self, expr: cst.Comparison) -> Kind:
        if all(isinstance(t.operator, (cst.Is, cst.IsNot)) for t in expr.comparisons):
            return Kind.CONST
        if any(isinstance(t.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for t in expr.comparisons):
            return Kind.UNKNOWN
        operands = [expr.left] + [t.comparator for t in expr.comparisons]
        if any(isinstance(operand, STRING_NODES) for operand in operands):
            return Kind.CONST  # a tensor is never compared with a string: this is a Python str parameter
        return self._combine([self.kind(expr.left)] + [self.kind(t.comparator) for t in expr.comparisons])

    def _kind_IfExp(self, expr: cst.IfExp) -> Kind:
        return join([self.kind(expr.body), self.kind(expr.orelse)])

    def _kind_Tuple(self, expr) -> Kind:
        kinds = [self.kind(el.value) for el in expr.elements if not isinstance(el, cst.StarredElement)]
        if len(kinds) != len(expr.elements):
            return Kind.UNKNOWN
        if kinds and all(k is Kind.TENSOR for k in kinds):
            return Kind.TENSOR_SEQ
        if all(k is Kind.CONST for k in kinds):
            return Kind.CONST
        if kinds and all(k in (Kind.CELL, Kind.OP) for k in kinds):
            return Kind.CELL_SEQ
        return Kind.UNKNOWN

    _kind_List = _kind_Tuple

    def _kind_ListComp(self, expr: cst.ListComp) -> Kind:
        element = self._comprehension_element(expr)
        return {Kind.CELL: Kind.CELL_SEQ, Kind.TENSOR: Kind.TENSOR_SEQ}.get(element, Kind.UNKNOWN)

    _kind_GeneratorExp = _kind_ListComp  # ``tuple(ops.neg(g) for g in grads)``: what ``tuple(...)`` collects

    def _comprehension_element(self, comp) -> Kind:
        """The element's kind, its own loop variables unknown: they are the comprehension's, not the function's
        names of the same spelling (``flags = [w > 1 for w in self.sizes]`` after ``w = z + 1``)."""
        own: Set[str] = set()
        clause = comp.for_in
        while clause is not None:
            own.update(target_names(clause.target, include_starred=True))
            clause = clause.inner_for_in
        hidden = own - self._shadowed
        self._shadowed |= hidden
        try:
            return self.kind(comp.elt)
        finally:
            self._shadowed -= hidden

    def _kind_Call(self, expr: cst.Call) -> Kind:
        func = expr.func
        qualified = self.imports.qualify(func)
        args = [self.kind(a.value) for a in expr.args]
        if type(func) is cst.Name and qualified is None and func.value in CONST_BUILTINS:
            if func.value in ("len", "isinstance", "range", "hasattr", "type", "issubclass", "callable"):
                return Kind.CONST
            if func.value in ("tuple", "list") and args:
                return args[0] if args[0] in (Kind.TENSOR_SEQ, Kind.CONST, Kind.CELL_SEQ) else Kind.UNKNOWN
            return Kind.CONST if args and all(a is Kind.CONST for a in args) else Kind.UNKNOWN
        if qualified:
            return self._kind_of_qualified_call(qualified, expr, args)
        if isinstance(func, cst.Attribute):
            receiver = self.kind(func.value)
            method = func.attr.value
            if receiver is Kind.TENSOR and method in NOT_TENSOR_METHODS:
                return Kind.UNKNOWN  # ``head_mask.count(None)``: no Tensor has it, so the receiver is no Tensor
            if receiver is Kind.TENSOR:
                if method in TENSOR_TUPLE_METHODS:
                    return Kind.TENSOR_SEQ  # ``x.split(2)``: a tuple of Tensors (``if pieces:`` tests a tuple)
                return Kind.CONST if method in SHAPE_METHODS else Kind.TENSOR
            if receiver is Kind.CONST:
                # a configuration object's sub-object may hold code: ``self.config.masking.build_mask(x)`` may
                # return a Tensor, where ``"a".upper()`` gives a Python value
                return Kind.UNKNOWN if _config_root(func.value) is not None else Kind.CONST
            if receiver is Kind.TENSOR_SEQ and method in ("index", "count"):
                return Kind.CONST
            if receiver is Kind.TENSOR_SEQ and method == "clone":
                return Kind.TENSOR_SEQ
            if method in PARAM_SEQ_METHODS and isinstance(func.value, cst.Name) and func.value.value == "self":
                return Kind.TENSOR_SEQ
        callee = self.kind(func)
        if callee is Kind.GRAD_OP:
            return Kind.GRAD_FN
        if callee is Kind.GRAD_FN:
            return Kind.TENSOR_SEQ
        if callee is Kind.GRAD_OP_FIRST:
            return Kind.GRAD_FN_FIRST
        if callee is Kind.GRAD_FN_FIRST:  # the gradient w.r.t. the first input has that input's shape and kind
            first = expr.args[0] if expr.args else None
            if first is not None and first.keyword is None and not first.star and args[0] is Kind.TENSOR \
                    and not self._constant_tensor(first.value):
                return Kind.TENSOR
            return Kind.UNKNOWN
        if callee in (Kind.OP, Kind.CELL):
            return Kind.TENSOR
        if callee is Kind.CONST_OP:
            return Kind.CONST
        if isinstance(func, cst.Call):  # P.ReduceSum()(x)
            inner = self.imports.qualify(func.func)
            if inner and inner.startswith("mindspore.ops.") and inner.rsplit(".", 1)[-1][:1].isupper():
                if inner in SHAPE_FUNCTIONS or inner in CONST_PRIMITIVES:
                    return Kind.CONST
                return Kind.TENSOR_SEQ if inner in TENSOR_SEQ_SOURCES else Kind.TENSOR
        return Kind.UNKNOWN

    def _project_non_cell(self, qualified: str) -> bool:
        """A class of the project being checked that its real bases do not make a Cell, though it lives under
        ``mindspore.nn`` (MindSpore's own source checked as a project: ``CheckTuple``, a primitive of its
        distributions, gives back the tuple it checks)."""
        project = self._project()
        if project is None:
            return False
        index = project.index
        found = index.resolve(qualified)
        if found is None or not found[1] or found[0] not in index.project_modules:
            return False
        return not index.is_cell((found[0], found[1]))

    def _project(self):
        """The project view the module is checked in (``ProjectView``), or None."""
        return self.attributes.project if self.attributes is not None else None

    def _constant_tensor(self, expr: cst.BaseExpression) -> bool:
        """A Tensor graph mode holds as a constant: ``self.<attr>`` or ``Tensor(...)``. MindSpore 2.10's
        ``GradOperation()`` gives ``()`` (no gradient) for such a first input, not a Tensor (measured)."""
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return True
        if isinstance(expr, cst.Call):
            qualified = self.imports.qualify(expr.func) or ""
            return qualified in TENSOR_FACTORIES
        return False

    def _kind_of_qualified_call(self, qualified: str, expr: cst.Call, args: List[Kind]) -> Kind:
        if qualified in compile_time_helpers():
            return Kind.UNKNOWN  # ``numpy.utils_const._check_same_type``: a Python value computed while compiling
        last = qualified.rsplit(".", 1)[-1]
        if qualified in SHAPE_FUNCTIONS:
            return Kind.CONST
        if qualified in SCALAR_FUNCTIONS:
            return Kind.CONST if args and args[0] is Kind.CONST else Kind.UNKNOWN
        if qualified in PASS_THROUGH_FUNCTIONS:
            return args[0] if args else Kind.UNKNOWN
        if qualified in TENSOR_SEQ_SOURCES and (not last[:1].isupper() or qualified == "mindspore.ParameterTuple"):
            return Kind.TENSOR_SEQ  # (``ops.Unstack()`` is a Primitive object; ``ParameterTuple(...)`` is the tuple)
        if qualified in CELL_SEQ_FACTORIES:
            return Kind.CELL_SEQ
        if qualified in TENSOR_FACTORIES or qualified.startswith("mindspore.numpy."):
            return Kind.TENSOR
        if qualified in CONST_PRIMITIVES:
            return Kind.CONST_OP
        documented = mindspore_api()["functions"].get(qualified)
        if documented is not None:
            return Kind(documented)
        if qualified == "mindspore.ops.GradOperation" and _keyword_is_true(expr, "get_by_list"):
            return Kind.GRAD_OP
        if qualified == "mindspore.ops.GradOperation" and _first_input_only(expr):
            return Kind.GRAD_OP_FIRST
        if qualified.startswith(("mindspore.ops.", "mindspore.mint.")):
            if last[:1] == "_":
                return Kind.UNKNOWN  # a private helper (``math_func._check_same_type``: ``dtype1 == dtype2``), no op
            if qualified in NON_TENSOR_OPS:
                return Kind.OP
            if last[:1].isupper():
                return Kind.OP  # a Primitive instance: P.ReduceSum()
            return Kind.TENSOR
        if is_cell_base(qualified):
            return Kind.UNKNOWN if self._project_non_cell(qualified) else Kind.CELL
        if qualified.startswith("mindspore.") and last in ("dtype", "float32", "int32"):
            return Kind.CONST
        return Kind.UNKNOWN

    def _combine(self, kinds: List[Kind]) -> Kind:
        if any(k is Kind.TENSOR for k in kinds):
            return Kind.TENSOR
        if all(k is Kind.CONST for k in kinds):
            return Kind.CONST
        return Kind.UNKNOWN

    # -- constant folding ---------------------------------------------------------------------------
    def fold(self, expr: cst.BaseExpression) -> Optional[int]:
        """Integer value of an expression when statically known (literals, module constants, self.attr, + - * //)."""
        kind = type(expr)  # libcst's node classes are final: ``type(x) is`` spares ``isinstance``'s ABC machinery
        if kind is cst.Integer:
            try:
                return int(expr.value.replace("_", ""), 0)
            except ValueError:
                return None
        if kind is cst.Name:
            if expr.value in self.int_env:
                return self.int_env[expr.value]
            if expr.value not in self.env:
                value = self.constants.values.get(expr.value)
                return value if isinstance(value, int) and not isinstance(value, bool) else None
            return None
        if (kind is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self"
                and self.attributes is not None):
            return self.attributes.int_value(self.owner, expr.attr.value)
        if kind is cst.UnaryOperation and type(expr.operator) is cst.Minus:
            inner = self.fold(expr.expression)
            return -inner if inner is not None else None
        if kind is cst.BinaryOperation:
            left, right = self.fold(expr.left), self.fold(expr.right)
            if left is None or right is None:
                return None
            op = expr.operator
            if isinstance(op, cst.Add):
                return left + right
            if isinstance(op, cst.Subtract):
                return left - right
            if isinstance(op, cst.Multiply):
                return left * right
            if isinstance(op, cst.FloorDivide) and right:
                return left // right
        return None


ExpressionKinds._kind_methods = _KindMethods(ExpressionKinds)  # its subclasses get theirs in __init_subclass__


@tree_memo
def self_assignments(method: cst.FunctionDef) -> Tuple[Tuple[str, cst.BaseExpression], ...]:
    """(attribute, value) of every ``self.<attribute> = value`` statement of the method, in source order (asked
    again for each class whose chain holds the method)."""
    found: List[Tuple[str, cst.BaseExpression]] = []
    for stmt in walk_statements(suite_statements(method.body), into_defs=False):
        for small in (stmt.body if type(stmt) is cst.SimpleStatementLine else ()):
            targets: List[cst.BaseExpression] = []
            value = None
            kind = type(small)
            if kind is cst.Assign:
                targets = [t.target for t in small.targets]
                value = small.value
            elif kind is cst.AnnAssign and small.value is not None:
                targets, value = [small.target], small.value
            for target in targets:
                if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
                    found.append((target.attr.value, value))
    return tuple(found)


class _InitEnv(ExpressionKinds):
    """Environment of a method being read for ``self.attr = ...`` assignments (``__init__`` mostly)."""

    reads_held_attributes = False  # built while the class's attributes are being collected

    def __init__(self, attributes: ClassAttributes, method: cst.FunctionDef, imports: ImportTable,
                 constructed_class: Optional[str] = None):
        super().__init__(imports, attributes.constants, None, None)
        self.scope = attributes.scope
        self.class_attributes = attributes  # not ``self.attributes``: ``self.<attr>`` reads stay unknown here
        self.method = method
        self.param_origins: Dict[str, str] = {}
        for param in all_params(method, with_stars=False):
            if param.default is not None:
                self.env[param.name.value] = Kind.CONST if is_literal(param.default) else Kind.UNKNOWN
            else:
                self.env[param.name.value] = annotation_kind(param, imports)
        _bind_locals(self, method)
        if constructed_class is not None:
            self._constructor_ints(attributes, constructed_class)

    def _constructor_ints(self, attributes: ClassAttributes, class_name: str) -> None:
        """``__init__`` parameters with a literal int default are that int when the project builds the class with
        defaults (or with literals only: the largest); a parameter the method rebinds is left alone."""
        rebound = {name for _stmt, bound in body_bindings(self.method).statements for name in bound}
        for param in all_params(self.method, with_stars=False)[1:]:
            name = param.name.value
            if name in rebound or param.default is None or not isinstance(param.default, cst.Integer):
                continue
            if attributes.project is not None:
                value, origin = attributes.project.constructor_int(class_name, name)
            else:
                value, origin = self.fold(param.default), f"the default `{name}={param.default.value}`"
            if value is not None:
                self.int_env[name] = value
                self.param_origins[name] = origin

    def origin_of(self, value: cst.BaseExpression) -> Optional[str]:
        """The constructor parameter an int folded from ``value`` depends on, said as where it comes from."""
        for node in find(value, cst.Name) if not isinstance(value, cst.Name) else [value]:
            if node.value in self.param_origins:
                return self.param_origins[node.value]
        return None

    def _kind_Attribute(self, expr: cst.Attribute) -> Kind:
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return Kind.UNKNOWN
        return super()._kind_Attribute(expr)

    def _project(self):
        return self.class_attributes.project

    def _kind_Call(self, expr: cst.Call) -> Kind:
        kind = super()._kind_Call(expr)
        func = expr.func
        if kind is Kind.UNKNOWN and isinstance(func, cst.Attribute) and func.attr.value in PARAM_SEQ_METHODS:
            return Kind.TENSOR_SEQ
        if kind is Kind.UNKNOWN and _constructs_cell(self.scope, func, self.scope.owner_of.get(self.method)):
            return Kind.CELL
        if kind is Kind.UNKNOWN and self.method.name.value == "__init__" and self._python_number(expr):
            return Kind.CONST
        return kind

    def _python_number(self, call: cst.Call) -> bool:
        """``int(...)``, ``float(...)``, ``math.ceil(...)``: ``__init__`` runs in Python, where these give numbers
        (``self.width = max(int(math.ceil(dim / scales)), 1)``); not on a Tensor, whose ``int()`` may be graph
        code's."""
        qualified = self.imports.qualify(call.func)
        if qualified is not None and qualified.startswith("math."):
            return True
        func = call.func
        if type(func) is cst.Name and qualified is None and func.value in ("int", "float"):
            return all(self.kind(arg.value) is not Kind.TENSOR for arg in call.args)
        # ``max``/``min``/``abs`` of such numbers are CONST_BUILTINS already (``ExpressionKinds._kind_Call``)
        if type(func) is cst.Name and qualified is None and func.value == "round":
            return bool(call.args) and all(self.kind(arg.value) is Kind.CONST for arg in call.args)
        return False


class FunctionValues(ExpressionKinds):
    """The value model of one graph function; built once per function and shared by all rules."""

    def __init__(self, scope: GraphScope, imports: ImportTable, constants: ModuleConstants,
                 attributes: ClassAttributes, func: cst.FunctionDef, param_kinds: Dict[str, Kind],
                 returns: Optional["ReturnModel"] = None):
        owner = scope.owner_of.get(func)
        super().__init__(imports, constants, attributes, owner)
        self.scope = scope
        self.func = func
        self.returns = returns  # what an in-module function returns, given its arguments' kinds (the context)
        # Set by _bind_locals while it reads a binding of a name bound more than once (see there).
        self.returns_off = False
        self.parameters: Set[str] = set()
        self.loop_indices: Set[str] = set()
        for param in all_params(func):
            name = param.name.value
            self.parameters.add(name)
            self.env[name] = param_kinds.get(name, Kind.UNKNOWN)
        facts = _function_facts(scope, func, self.parameters)
        for name in facts.membership_tested:
            self.env[name] = Kind.CONST
        self.sequence = ReachingBindings(func, {name: self.env[name] for name in self.parameters}, facts.sites)
        self.plain_dicts = facts.plain_dicts
        _bind_locals(self, func)

    def _kind_Name(self, expr: cst.Name) -> Kind:
        found = self.sequence.kind_at(expr)
        return found if found is not None else super()._kind_Name(expr)

    def _kind_Call(self, expr: cst.Call) -> Kind:
        kind = super()._kind_Call(expr)
        if kind in (Kind.TENSOR, Kind.UNKNOWN):
            sequence = self._sequence_result(expr)
            if sequence is not None:
                return sequence
        if kind is Kind.UNKNOWN and _constructs_cell(self.scope, expr.func, self.owner):
            return Kind.CELL
        if kind is Kind.UNKNOWN and self._environment_call(expr):
            return Kind.TENSOR
        if kind is Kind.UNKNOWN and self.returns is not None and not self.returns_off:
            return self._local_call_kind(expr)
        return kind

    def _environment_call(self, call: cst.Call) -> bool:
        """A call a framework answers with Tensors (``self.msrl.collect_environment.step(action)`` in a MindSpore
        Reinforcement trainer; ``ms_lint.analysis.frameworks``)."""
        project = self.attributes.project if self.attributes is not None else None
        owner = self.owner
        if owner is None or project is None:
            return False
        return gives_tensors(dotted(call.func), lambda: project.class_chain(owner))

    def _local_call_kind(self, call: cst.Call) -> Kind:
        """``self.helper(x)`` / ``helper(x)`` defined in this module: what it returns for these arguments
        (``overflow = self.process_loss_scale(cond)`` is a Tensor when that method returns one)."""
        resolved = self._local_callee(call)
        if resolved is None:
            func = call.func
            if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                    and self.attributes is not None and _external_callable(self.attributes, func, self.owner) is None
                    and self.scope.resolve_callable(func, self.owner) is None):
                return self.attributes.api_method_kind(self.owner, func.attr.value)
            return Kind.UNKNOWN
        callee, kinds, context, _bound = resolved
        return Kind.UNKNOWN if kinds is None else context.return_kind(callee, kinds)

    def local_call_elements(self, call: cst.Call, count: int) -> Optional[Tuple[Kind, ...]]:
        """``rho, found = self._line_search(...)``: the kinds of the ``count`` items every ``return`` of the
        helper gives as a tuple (``return res, found``), or None."""
        if self.returns is None:
            return None
        resolved = None if self.returns_off else self._local_callee(call)
        if resolved is None:  # what a sub-cell gives only ever lowers a kind: asked for names bound twice too
            return self._sub_cell_elements(call, count)
        found = self._returned_items(resolved, call)
        return found if found is not None and len(found) == count else None

    def handed_kind(self, expr: cst.BaseExpression) -> Kind:
        """``kind``, except that a list grown by appending Tensors is TENSOR_SEQ (``grown_list_kind``): what a
        caller hands a helper and what a loop over a sequence walks."""
        kind = self.kind(expr)
        return (self.grown_list_kind(expr) or kind) if kind is Kind.CONST else kind  # (``[]`` reads as CONST)

    def grown_list_kind(self, expr: cst.BaseExpression) -> Optional[Kind]:
        """TENSOR_SEQ for a name every reaching binding of which is ``[]`` and that the function grows only by
        ``append`` of Tensors (``decoded = []; for ...: decoded.append(self._decode_frame(c, s))``), as a caller
        hands it on; None otherwise. (The empty display alone reads as a constant: right for a list of names or
        flags, wrong for one of Tensors. Only what is appended tells them apart.)"""
        if type(expr) is not cst.Name:
            return None
        reaching = reaching_values(self.sequence, expr) or local_bindings(self.func, expr.value)  # (bound once)
        if not reaching or any(type(value) is not cst.List or value.elements for value in reaching):
            return None
        grown = _method_calls_on_names(self.func).get(expr.value, ())
        if not grown or any(call.func.attr.value != "append" or len(call.args) != 1 or call.args[0].keyword
                            or not self._one_tensor_item(call.args[0].value) for call in grown):
            return None  # (``extend``, ``insert``, ``pop``..., or an item that is not surely a Tensor)
        return Kind.TENSOR_SEQ

    def _one_tensor_item(self, item: cst.BaseExpression, follow: bool = True) -> bool:
        """An appended item the value model reads as a Tensor that is not the result of an op that gives a tuple or
        a Python value (``ops.unbind(g)``, ``x.item()``, ``ops.Split()(x)``: the model calls those Tensors too),
        directly or through a name bound only to such results."""
        if self.kind(item) is not Kind.TENSOR:
            return False
        if type(item) is cst.Call:
            func = item.func
            return not (type(func) is cst.Call or (dotted(func) or "").rsplit(".", 1)[-1] in NOT_ONE_TENSOR)
        if type(item) is cst.Name and follow:
            return all(self._one_tensor_item(value, follow=False) for value in local_bindings(self.func, item.value))
        return True

    def call_item_kind(self, call: cst.Call, index: int) -> Kind:
        """``codes, scales = self.encode(x, mask, bw, False)``: the kind of item ``index`` of the tuple every
        ``return`` of the helper that this call can reach gives; UNKNOWN when they are not all such tuples."""
        if self.returns is None or self.returns_off:
            return Kind.UNKNOWN
        found = self._returned_items(self._local_callee(call), call)
        return found[index] if found is not None and index < len(found) else Kind.UNKNOWN

    @staticmethod
    def _returned_items(resolved, call: cst.Call) -> Optional[Tuple[Kind, ...]]:
        """The item kinds of the tuples a helper's returns give (``return_elements``): of the returns the call's
        literal arguments can reach when they rule some out (``const_paths``), else of them all."""
        if resolved is None or resolved[1] is None:
            return None
        callee, kinds, context, bound = resolved
        constants = call_constants(callee, bound, call)
        found = context.return_elements(callee, kinds, constants) if constants else None
        return found if found is not None else context.return_elements(callee, kinds)

    def _sub_cell_elements(self, call: cst.Call, count: int) -> Optional[Tuple[Kind, ...]]:
        """``embeddings, num_frames, width = self.patch_embed(x)``: what a cell returns unpacks into Tensors,
        except the items its ``construct`` returns as constants everywhere (shape ints), which stay unknown."""
        sub_cell = self._sub_cell_construct(call)
        if sub_cell is None:
            return None
        constants = self.returns.constant_returns(*sub_cell)  # type: ignore[union-attr]
        if constants is None or len(constants) != count or not any(constants):
            return None
        return tuple(Kind.UNKNOWN if constant else Kind.TENSOR for constant in constants)

    def _sub_cell_construct(self, call: cst.Call) -> Optional[Tuple[cst.FunctionDef, Dict[str, Kind]]]:
        """``self.block(x)`` where ``self.block`` is built from a Cell class of this module: its ``construct`` and
        the kinds of its parameters at this call."""
        found = self.sub_cell(call) if self.returns is not None else None
        if found is None:
            return None
        construct = found[1]
        kinds = argument_kinds(self, construct, True, call)
        return (construct, kinds) if kinds is not None else None

    def sub_cell(self, call: cst.Call) -> Optional[Tuple[str, cst.FunctionDef]]:
        """(the class, its ``construct``) of ``self.block(x)`` where ``self.block`` is built from a Cell class of
        this module."""
        func = call.func
        if not (type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self"
                and self.attributes is not None):
            return None
        made = self.attributes.made_by(self.owner, func.attr.value)
        if not made or made not in self.scope.classes or not self.scope.classes[made].is_cell:
            return None
        construct = self.scope.find_method(made, "construct")
        return (made, construct) if construct is not None else None

    def _local_callee(self, call: cst.Call):
        """(def, its parameters' kinds at this call or None, the context that models it, whether the call binds
        ``self``) of a helper of this module or an inherited/imported one of the project; None when the callee is
        not one, or is @constexpr."""
        target = self.scope.resolve_callable(call.func, self.owner)
        context, scope = self.returns, self.scope
        if target is None:
            external = _external_callable(self.attributes, call.func, self.owner)
            if external is None:
                return None
            context, callee, bound = external
            target, scope = (callee, bound), context.scope
        callee, bound = target
        if scope.is_compile_time_helper(callee):
            return None  # @constexpr: runs in Python at compile time, its result is not modelled
        return callee, argument_kinds(self, callee, bound, call), context, bound

    def _sequence_result(self, call: cst.Call) -> Optional[Kind]:
        """TENSOR_SEQ for the calls that return a tuple of tensors where the generic rule says "a Tensor": a
        ``HyperMap``/``Map`` applied to a tensor sequence (``self.hyper_map(self.add, grads, noise)``), and a
        sub-cell of this module whose ``construct`` returns one (``self.clip(grads, 1.0)``)."""
        func = call.func
        if type(func) is cst.Call:
            made = self.imports.qualify(func.func)
        elif (type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self"
              and self.attributes is not None):
            made = self.attributes.made_by(self.owner, func.attr.value)
        else:
            return None
        if made in MAPPERS:
            mapped = [self.kind(arg.value) for arg in call.args[1:]]
            return Kind.TENSOR_SEQ if Kind.TENSOR_SEQ in mapped else None
        sub_cell = self._sub_cell_construct(call) if type(func) is cst.Attribute else None
        if sub_cell is not None and self.returns.return_kind(*sub_cell) is Kind.TENSOR_SEQ:  # type: ignore[union-attr]
            return Kind.TENSOR_SEQ
        return None

    def int_origin(self, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """Where a folded int in ``expr`` comes from when a constructor default made it (``self.num_steps``, or a
        local bound once to an expression of it: ``seq_len = self.max_seq_len``)."""
        for node in find(expr, cst.Attribute) if not isinstance(expr, cst.Attribute) else [expr]:
            if isinstance(node.value, cst.Name) and node.value.value == "self" and self.attributes is not None:
                origin = self.attributes.int_origin(self.owner, node.attr.value)
                if origin is not None:
                    return origin
        if depth >= 3:
            return None
        for name in find(expr, cst.Name) if not isinstance(expr, cst.Name) else [expr]:
            if name.value in self.int_env and name.value not in self.parameters:
                bound = local_bindings(self.func, name.value)
                origin = self.int_origin(bound[0], depth + 1) if len(bound) == 1 else None
                if origin is not None:
                    return origin
        return None


    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        return self.kind(expr) is Kind.TENSOR

    def is_constant(self, expr: cst.BaseExpression) -> bool:
        return self.kind(expr) is Kind.CONST

    def is_parameter(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Name) and expr.value in self.parameters


class ReturnModel(Protocol):
    """What models helpers' results for a value model: the module's context (``ms_lint.context.ModuleContext``)."""

    scope: GraphScope

    def return_kind(self, func: cst.FunctionDef, param_kinds: Dict[str, Kind]) -> Kind: ...

    def return_elements(self, func: cst.FunctionDef, param_kinds: Dict[str, Kind]) -> Optional[Tuple[Kind, ...]]: ...

    def constant_returns(self, func: cst.FunctionDef, param_kinds: Dict[str, Kind]) -> Optional[Tuple[bool, ...]]: ...


# MindSpore's optimizer base classes: ``construct`` takes one gradient per parameter, ``self.parameters`` holds them.
NN_OPTIMIZER = frozenset({"mindspore.nn.Optimizer"})  # the one whose ``get_lr`` gives the learning rate
OPTIMIZER_BASES = NN_OPTIMIZER | {"mindspore.experimental.optim.Optimizer",
                                  "mindspore.experimental.optim.optimizer.Optimizer"}


def inherits_base(scope: GraphScope, imports: ImportTable, attributes: ClassAttributes, owner: Optional[str],
                  bases: frozenset) -> bool:
    """Does class ``owner`` (of this module) derive, through its module's class chain, from one of ``bases``
    (qualified names as the module's imports spell them)?"""
    if owner is None:
        return False
    return any(imports.qualify(base.value) in bases
               for cls in attributes.class_chain(owner) for base in scope.classes[cls].node.bases)


def _keyword_is_true(call: cst.Call, name: str) -> bool:
    return any(arg.keyword is not None and arg.keyword.value == name and isinstance(arg.value, cst.Name)
               and arg.value.value == "True" for arg in call.args)


def _first_input_only(call: cst.Call) -> bool:
    """``GradOperation()``, ``GradOperation(get_all=False, get_by_list=False, sens_param=True)``: the gradient
    w.r.t. the first input only (MindSpore 2.10 ``GradOperation`` docstring: "If get_all and get_by_list are both
    ``False``, get the gradient with respect to first input"). ``sens_param`` adds an input, not an output. Any
    positional argument, other keyword or non-literal value: not this form."""
    for arg in call.args:
        if arg.keyword is None or arg.star:
            return False
        name = arg.keyword.value
        if not (isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False")):
            return False
        if name in ("get_all", "get_by_list"):
            if arg.value.value != "False":
                return False
        elif name != "sens_param":
            return False
    return True


def _constructs_cell(scope: GraphScope, func: cst.BaseExpression, owner: Optional[str] = None) -> bool:
    """``Head(...)`` / ``heads.Head(...)``: a Cell class of this module or one imported from the project;
    ``self.Inner(...)``: a Cell class nested in the owner class."""
    name = dotted(func)
    if name is None:
        return False
    if name.startswith("self.") and owner is not None:
        return scope.is_cell_class(f"{owner}.{name[5:]}")
    return scope.is_cell_class(name)


def _external_callable(attributes: Optional[ClassAttributes], func: cst.BaseExpression, owner: Optional[str]):
    """(context, def, bound) for ``self.method`` inherited from a base in another module, or ``helper``
    imported from another project module; None otherwise."""
    project = attributes.project if attributes is not None else None
    if project is None:
        return None
    if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
            and owner is not None):
        for context, base in attributes.external_bases(owner):
            method = context.scope.find_method(base, func.attr.value)
            if method is not None:
                return context, method, not is_staticmethod(method)
        return None
    if isinstance(func, cst.Name):
        found = project.imported_function(func.value)
        if found is not None:
            return found[0], found[1], False
    if isinstance(func, cst.Attribute) and is_self_attr(func.value) and owner is not None:
        # ``self.buffer.get_data()`` with ``self.buffer = NStepBuffer(...)``: that class's method
        made = attributes.made_by(owner, func.value.attr.value)  # type: ignore[union-attr,attr-defined]
        found = project.class_method(made, func.attr.value) if made and "." in made else None
        if found is not None:
            return found[0], found[1], not is_staticmethod(found[1])
    return None


def argument_kinds(caller: ExpressionKinds, callee: cst.FunctionDef, bound: bool,
                   call: cst.Call) -> Optional[Dict[str, Kind]]:
    """The kind of each of ``callee``'s parameters at this call; None when the call unpacks ``*seq``/``**map``
    or passes arguments that go to ``*args``/``**kwargs`` (not modelled). Parameters the call leaves out take
    their default: a literal is a constant, anything else unknown."""
    binding = bind_arguments(callee, bound, call)
    if binding is None or binding[1]:
        return None
    kinds = {name: caller.kind(value) for name, value in binding[0]}
    for param in positional_params(callee, bound) + list(callee.params.kwonly_params):
        if param.name.value not in kinds:
            kinds[param.name.value] = (Kind.CONST if param.default is not None and is_literal(param.default)
                                       else Kind.UNKNOWN)
    return kinds


def return_kind(model: "FunctionValues") -> Kind:
    """The kind every ``return`` of the model's function gives; UNKNOWN when they disagree, when there is none,
    when the function is a generator or a coroutine, or when they give constants. Strict on purpose: a helper
    that returns a Tensor on one path and something unknown on another is not called a Tensor."""
    body = model.func.body
    found = find(body, (cst.Return, cst.Yield, cst.Await), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
    if not found or any(not isinstance(node, cst.Return) for node in found):
        return Kind.UNKNOWN
    kinds = {model.kind(node.value) if node.value is not None else Kind.CONST for node in found}
    kind = kinds.pop() if len(kinds) == 1 else Kind.UNKNOWN
    # A call is never a compile-time constant, whatever it returns: its body still runs in the graph (rules read
    # CONST as "no work at run time", e.g. MSL102's "does the loop body do tensor work").
    return Kind.UNKNOWN if kind is Kind.CONST else kind


def constant_returns(model: "FunctionValues") -> Optional[Tuple[bool, ...]]:
    """For each item of the tuple every ``return`` gives (one length, no starred item): whether every return gives a
    constant there (``return embeddings, num_frames, width`` with ``num_frames`` from ``x.shape``); else None."""
    tuples = returned_tuples(model)
    if tuples is None:
        return None
    return tuple(all(model.kind(t[position].value) is Kind.CONST for t in tuples) for position in range(len(tuples[0])))


def returned_tuples(model: "FunctionValues", reachable: Optional[Sequence[cst.Return]] = None
                    ) -> Optional[List[Sequence[cst.BaseElement]]]:
    """The items of every ``return`` (of those in ``reachable``, when given: ``const_paths.reachable_returns``)
    when each gives a tuple display of one length without starred items."""
    found = list(reachable) if reachable is not None else find(
        model.func.body, (cst.Return, cst.Yield, cst.Await), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
    if not found or any(not isinstance(node, cst.Return) or not isinstance(node.value, cst.Tuple) for node in found):
        return None
    tuples = [node.value.elements for node in found]  # type: ignore[union-attr]
    if len({len(t) for t in tuples}) != 1 or any(isinstance(e, cst.StarredElement) for t in tuples for e in t):
        return None
    return tuples


def return_elements(model: "FunctionValues", reachable: Optional[Sequence[cst.Return]] = None
                    ) -> Optional[Tuple[Kind, ...]]:
    """The kinds of the items when every ``return`` (of ``reachable``, when given) gives a tuple display of one
    length (``return res, found``), each item as strict as :func:`return_kind` (all returns agree, constants count
    as unknown); else None."""
    tuples = returned_tuples(model, reachable)
    if tuples is None:
        return None
    kinds = []
    for position in range(len(tuples[0])):
        seen = {model.kind(t[position].value) for t in tuples}
        kind = seen.pop() if len(seen) == 1 else Kind.UNKNOWN
        kinds.append(Kind.UNKNOWN if kind is Kind.CONST else kind)
    return tuple(kinds)


class _FunctionFacts:
    """What a value model reads from a function's tree alone, whatever kinds its parameters take."""

    __slots__ = ("membership_tested", "sites", "plain_dicts")

    def __init__(self, func: cst.FunctionDef, parameters: Set[str]):
        self.membership_tested = _membership_tested_parameters(func, parameters)
        self.sites = ReachingSites(func)
        self.plain_dicts = plain_dicts(func)


@tree_memo
def _method_calls_on_names(func: cst.FunctionDef) -> Dict[str, List[cst.Call]]:
    """name -> the calls of a method on it in ``func`` (``decoded.append(f)``), in visit order."""
    found: Dict[str, List[cst.Call]] = {}
    for call in find(func, cst.Call):
        if type(call.func) is cst.Attribute and type(call.func.value) is cst.Name:
            found.setdefault(call.func.value.value, []).append(call)
    return found


def _function_facts(scope: GraphScope, func: cst.FunctionDef, parameters: Set[str]) -> _FunctionFacts:
    """Once per function and module scope: a helper's model is rebuilt for each argument-kind combination a
    caller asks about (``return_kind``), and these facts were recomputed each time."""
    memo = getattr(scope, "function_facts", None)
    if memo is None:
        return _FunctionFacts(func, parameters)
    found = memo.get(func)
    if found is None:
        found = memo[func] = _FunctionFacts(func, parameters)
    return found


def _membership_tested_parameters(func: cst.FunctionDef, parameters: Set[str]) -> Set[str]:
    """Parameters the function tests with ``p in (0, 1)`` / ``p not in ("a", "b")`` against literals.

    A Tensor cannot be a member test's left side against a tuple of Python literals in graph code, so such a
    parameter is a Python value (``ClipGradients.construct(self, grads, clip_type, clip_value)`` in the model
    zoo starts with ``if clip_type not in (0, 1): return grads``)."""
    found: Set[str] = set()
    for comparison in find(func.body, cst.Comparison):
        left = comparison.left
        if not (isinstance(left, cst.Name) and left.value in parameters) or len(comparison.comparisons) != 1:
            continue
        target = comparison.comparisons[0]
        if isinstance(target.operator, (cst.In, cst.NotIn)) and isinstance(target.comparator, (cst.Tuple, cst.List, cst.Set)) \
                and target.comparator.elements and all(is_literal(e.value) for e in target.comparator.elements):
            found.add(left.value)
    return found


_PYTHON_SCALARS = {"int", "bool", "str", "float", "None"}
# Containers whose annotation says what they hold: ``List[float]``, ``Optional[int]``, ``Tuple[int, ...]``.
_PYTHON_CONTAINERS = {"list", "tuple", "List", "Tuple", "Sequence", "Optional", "Union", "typing.List",
                      "typing.Tuple", "typing.Sequence", "typing.Optional", "typing.Union"}


def _python_values_only(ann: cst.BaseExpression) -> bool:
    """The annotation names Python scalars only, in containers or unions of them (``List[List[int]]``,
    ``Optional[float]``, ``Union[int, Tuple[int, int]]``): never a Tensor."""
    if isinstance(ann, cst.Name) and ann.value in _PYTHON_SCALARS:
        return True
    if not isinstance(ann, cst.Subscript) or dotted(ann.value) not in _PYTHON_CONTAINERS:
        return False
    for element in ann.slice:
        item = element.slice
        if not isinstance(item, cst.Index):
            return False
        if isinstance(item.value, cst.Ellipsis):
            continue
        if not _python_values_only(item.value):
            return False
    return True


def optional_member(ann: cst.BaseExpression) -> cst.BaseExpression:
    """``T`` for ``Optional[T]``, ``Union[T, None]``, ``Union[None, T]`` or ``T | None``; the annotation itself
    otherwise. A ``None`` default is decided when the graph is compiled, so a parameter annotated
    ``Optional[Tensor] = None`` is a Tensor wherever the code reads it as one, as ``x: Tensor = None`` is."""
    if isinstance(ann, cst.Subscript) and dotted(ann.value) in ("Optional", "typing.Optional") and len(ann.slice) == 1 \
            and isinstance(ann.slice[0].slice, cst.Index):
        return ann.slice[0].slice.value
    if isinstance(ann, cst.Subscript) and dotted(ann.value) in ("Union", "typing.Union") and len(ann.slice) == 2:
        items = [element.slice.value for element in ann.slice if isinstance(element.slice, cst.Index)]
        others = [item for item in items if not (isinstance(item, cst.Name) and item.value == "None")]
        if len(items) == 2 and len(others) == 1:
            return others[0]
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        sides = [ann.left, ann.right]
        others = [side for side in sides if not (isinstance(side, cst.Name) and side.value == "None")]
        if len(others) == 1:
            return others[0]
    return ann


def _none_or_absent(default: Optional[cst.BaseExpression]) -> bool:
    return default is None or (isinstance(default, cst.Name) and default.value == "None")


def annotation_kind(param: cst.Param, imports: ImportTable) -> Kind:
    if param.annotation is None:
        return Kind.UNKNOWN
    ann = param.annotation.annotation
    if not (isinstance(ann, cst.Subscript) and _python_values_only(ann)):
        member = optional_member(ann)
        if member is not ann and not _none_or_absent(param.default):
            return Kind.UNKNOWN  # ``output_attentions: Optional[Tensor] = False``: the default says otherwise
        ann = member
    name = dotted(ann) if isinstance(ann, (cst.Name, cst.Attribute)) else None
    if name in ("int", "bool", "str", "float") or (isinstance(ann, cst.Subscript) and _python_values_only(ann)):
        return Kind.CONST
    qualified = imports.qualify(ann) if name else None
    if qualified in ("mindspore.Tensor", "mindspore.Parameter") or name == "Tensor":
        return Kind.TENSOR
    return Kind.UNKNOWN


# Annotations that say nothing against a Tensor, or name one in any case (``mindspore.common.tensor.Tensor``,
# ``COOTensor``, and ``ms.tensor``, the function mindone's models write as a type)
_OPEN_ANNOTATIONS = {"Any", "object", "typing.Any", "numpy.ndarray"}  # (a NumPy input may become a Tensor)
_TENSOR_CLASS_ENDINGS = ("tensor", "parameter")


def _declared_other_class(param: cst.Param, imports: ImportTable, local_classes: Collection[str]) -> bool:
    """The parameter is annotated with a class that is no Tensor, defined in this module or imported
    (``session: InferenceSession``, ``cell: nn.Cell``): the entry-point guess (a Tensor) does not hold for it. A
    name this module binds otherwise (``Array = ms.Tensor``) or a builtin (``tuple``) is no such evidence."""
    annotation = param.annotation.annotation if param.annotation is not None else None
    if not isinstance(annotation, (cst.Name, cst.Attribute)):
        return False
    name = dotted(annotation)
    qualified = imports.qualify(annotation)
    if name is None or name in _OPEN_ANNOTATIONS or qualified in _OPEN_ANNOTATIONS:
        return False
    if name.lower().endswith(_TENSOR_CLASS_ENDINGS) or (qualified or "").lower().endswith(_TENSOR_CLASS_ENDINGS):
        return False
    return qualified is not None or name in local_classes


def root_param_kinds(func: cst.FunctionDef, imports: ImportTable, bound: bool,
                     local_classes: Collection[str] = ()) -> Dict[str, Kind]:
    """Parameters of a graph entry point: Tensors unless they have a literal default or a Python-type annotation."""
    kinds: Dict[str, Kind] = {}
    params = all_params(func, with_stars=False)
    if bound and params:
        params = params[1:]
    for param in params:
        name = param.name.value
        annotated = annotation_kind(param, imports)
        if annotated is not Kind.UNKNOWN:
            kinds[name] = annotated
        elif param.default is not None:
            kinds[name] = Kind.CONST if is_literal(param.default) else Kind.UNKNOWN
        elif name in GRADIENT_SEQ_NAMES:
            kinds[name] = Kind.TENSOR_SEQ
        elif _declared_other_class(param, imports, local_classes):
            kinds[name] = Kind.UNKNOWN  # ``inference_session: Sam2VideoInferenceSession``: no Tensor by its type
        else:
            kinds[name] = Kind.TENSOR
    star = func.params.star_arg
    if isinstance(star, cst.Param):
        kinds[star.name.value] = Kind.TENSOR_SEQ
    return kinds


def _bind_locals(model: ExpressionKinds, func: cst.FunctionDef) -> None:
    """Two passes over the function's assignments in source order, joining every binding of each name (and, for
    names it rebinds, remembering each binding's kind: ``ReachingBindings`` gives a use the join of the bindings
    that reach it, not of all of them).

    A name bound once takes its kind as soon as its binding is read, so the statements after it see it in the same
    pass: ``a = x * 2; b = a + 1; c = b + 1; if c > 0`` is a Tensor test however long the chain. (Names bound more
    than once get the join of all their bindings at the end of a pass; the second pass gives uses before a
    binding, in loops, what the first one found.)"""
    sequence: Optional[ReachingBindings] = getattr(model, "sequence", None)
    bindings: Dict[str, List[Kind]] = {}
    int_bindings: Dict[str, List[Optional[int]]] = {}
    fixed = dict(model.env)
    loop_indices: Set[str] = getattr(model, "loop_indices", set())
    statements, rebound = body_bindings(func)
    for _ in range(2):
        if sequence is not None:
            sequence.new_pass()
        bindings = {}
        int_bindings = {}
        for stmt, bound in statements:
            # What an in-module call returns counts only for names bound once: joined with a name's other
            # bindings it would make the name a Tensor everywhere (``for item in features`` over the list a
            # backbone returned, before ``features = self.pool(features)`` rebinds it). A use that sees only its
            # reaching bindings (ReachingBindings) may take it: those get a second evaluation with it.
            model.returns_off = bool(rebound & bound)
            for target, kind, value in _statement_bindings(model, stmt, loop_indices):
                bindings.setdefault(target, []).append(kind)
                int_bindings.setdefault(target, []).append(value)
                if sequence is not None and not model.returns_off:
                    sequence.record(stmt, target, kind)
                if target.isidentifier() and target not in rebound and target not in fixed:
                    # its only binding (a dict key's pseudo-name may have several): its kind from here on
                    model.env[target] = kind
                    if value is not None:
                        model.int_env[target] = value
            if sequence is not None and model.returns_off:
                model.returns_off = False
                for target, kind, _value in _statement_bindings(model, stmt, loop_indices):
                    sequence.record(stmt, target, kind)
        model.returns_off = False
        for name, kinds in bindings.items():
            if name in fixed:
                kinds = kinds + [fixed[name]]
            model.env[name] = join(kinds)
        model.int_env = {
            name: values[0] for name, values in int_bindings.items()
            if len(values) == 1 and values[0] is not None and name not in fixed
        }


def _names_bound_by(stmt: cst.BaseStatement) -> Set[str]:
    return set(written_names(stmt))


def _statement_bindings(model: ExpressionKinds, stmt: cst.BaseStatement, loop_indices: Set[str]):
    kind = type(stmt)  # libcst's node classes are final: ``type(x) is`` spares ``isinstance``'s ABC machinery
    if kind is cst.SimpleStatementLine:
        for small in stmt.body:
            small_kind = type(small)
            if small_kind is cst.Assign:
                for target in small.targets:
                    yield from _unpack(model, target.target, small.value)
            elif small_kind is cst.AnnAssign and small.value is not None:
                yield from _unpack(model, small.target, small.value)
            elif small_kind is cst.AugAssign and type(small.target) is cst.Name:
                combined = model._combine([model.kind(small.target), model.kind(small.value)])
                yield small.target.value, combined, None
                yield small.target.value, combined, None  # a rebinding: never a single folded value
            elif small_kind is cst.AugAssign:
                keyed = keyed_name(small.target, model.plain_dicts)  # ``state["nfev"] += n``
                if keyed is not None:
                    yield keyed, model._combine([model.kind(small.target), model.kind(small.value)]), None
    elif kind is cst.For:
        yield from _loop_target_bindings(model, stmt, loop_indices)
    elif kind is cst.With:
        for item in stmt.items:
            if item.asname is not None and type(item.asname.name) is cst.Name:
                yield item.asname.name.value, Kind.UNKNOWN, None


def _unpack(model: ExpressionKinds, target: cst.BaseExpression, value: cst.BaseExpression):
    keyed = keyed_name(target, model.plain_dicts)
    if keyed is not None:  # ``state["failed"] = ...``
        yield keyed, model.kind(value), None
        return
    is_name = type(target) is cst.Name  # libcst's node classes are final: ``type(x) is`` spares the ABC machinery
    if is_name and target.value in model.plain_dicts:
        for key, item in (literal_items(value) or {}).items():  # ``state = {"failed": f, ...}``
            yield pseudo_name(target.value, key), model.kind(item), None
    if is_name:
        if (type(value) is cst.BinaryOperation and type(value.operator) is cst.Add
                and type(value.left) is cst.Name and value.left.value == target.value
                and model.kind(value.right) is Kind.TENSOR_SEQ):
            yield target.value, Kind.TENSOR_SEQ, None  # ``out = out + (g,)``: accumulating a tuple of tensors
            return
        yield target.value, model.kind(value), model.fold(value)
    elif type(target) is cst.Tuple or type(target) is cst.List:
        value_kind = model.kind(value)
        elements = value.elements if type(value) is cst.Tuple or type(value) is cst.List else None
        returned = (model.local_call_elements(value, len(target.elements))
                    if type(value) is cst.Call and isinstance(model, FunctionValues) else None)
        if returned is not None and all(type(e.value) is cst.Name for e in target.elements):
            for element, kind in zip(target.elements, returned):  # ``rho, found = self._line_search(...)``
                yield element.value.value, kind, None
            return
        for index, element in enumerate(target.elements):
            inner = element.value
            if elements is not None and len(elements) == len(target.elements):
                yield from _unpack(model, inner, elements[index].value)
            elif type(inner) is cst.Name:
                if value_kind is Kind.CONST:
                    kind = Kind.CONST
                elif value_kind is Kind.TENSOR_SEQ:
                    kind = Kind.TENSOR
                elif value_kind is Kind.TENSOR and isinstance(value, cst.Call):
                    # ``loss, overflow, scale = self.train_network(x)``: what a cell or op returns unpacks into
                    # tensors (a tuple of them, or slices along the first axis)
                    kind = Kind.TENSOR
                else:
                    kind = Kind.UNKNOWN
                yield inner.value, kind, None


def _loop_target_bindings(model: ExpressionKinds, loop: cst.For, loop_indices: Set[str]):
    """Loop variables: indices of unrolled loops are constants; elements take the iterable's element kind."""
    iterable = loop.iter
    target = loop.target
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
        fname = iterable.func.value
        args = call_name_args(iterable)
        if fname == "range":
            for name in target_names(target):
                loop_indices.add(name)
                yield name, Kind.CONST, None
            return
        if fname == "enumerate" and args and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            index, element = target.elements[0].value, target.elements[1].value
            if isinstance(index, cst.Name):
                loop_indices.add(index.value)
                yield index.value, Kind.CONST, None
            zipped = _zip_arguments(args[0].value)
            if zipped is not None and isinstance(element, cst.Tuple) and len(element.elements) == len(zipped):
                for part, arg in zip(element.elements, zipped):  # for i, (g, p) in enumerate(zip(grads, params))
                    yield from _element_binding(model, part.value, model.kind(arg.value))
                return
            yield from _element_binding(model, element, model.kind(args[0].value))
            return
        if fname == "zip" and isinstance(target, cst.Tuple) and len(target.elements) == len(args):
            for element, arg in zip(target.elements, args):
                yield from _element_binding(model, element.value, model.kind(arg.value))
            return
    yield from _element_binding(model, target, model.kind(iterable))


def _zip_arguments(expr: cst.BaseExpression) -> Optional[List[cst.Arg]]:
    """The sequences of a plain ``zip(a, b)`` call (no star arguments), else None."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "zip":
        args = call_name_args(expr)
        if args and len(args) == len(expr.args):
            return args
    return None


def _element_binding(model: ExpressionKinds, target: cst.BaseExpression, sequence_kind: Kind):
    element_kind = {
        Kind.TENSOR_SEQ: Kind.TENSOR,
        Kind.TENSOR: Kind.TENSOR,
        Kind.CELL_SEQ: Kind.CELL,
        Kind.CONST: Kind.CONST,
    }.get(sequence_kind, Kind.UNKNOWN)
    for name in target_names(target):
        yield name, element_kind, None


def _config_root(expr: cst.BaseExpression) -> Optional[str]:
    """``config`` for ``self.config`` and ``self.config.vision`` (a chain of plain attributes under it), else None."""
    while type(expr) is cst.Attribute:
        if is_self_attr(expr):
            return expr.attr.value if expr.attr.value in CONFIG_HOLDERS else None
        expr = expr.value
    return None


def _config_value(value: cst.BaseExpression) -> bool:
    """A value a configuration holder may be bound to: a name or a chain of attributes (``config``,
    ``config.text_config``), or a call of a class named ``...Config``."""
    if type(value) is cst.Call:
        callee = dotted(value.func)
        return callee is not None and callee.rsplit(".", 1)[-1].endswith("Config")
    while type(value) is cst.Attribute:
        value = value.value
    return type(value) is cst.Name and value.value != "self"
