"""Whether graph code does tensor work, and why a body is not a pure function of its inputs (a random op, a write to
a Parameter, a print): what decides that a loop may be vmapped or mapped, or that a select may run both branches.

Over-matching a name only costs a rewrite, never a finding.
"""
from __future__ import annotations

import builtins
import re
from typing import List, Optional, Set, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import local_bindings, read_name_nodes
from ms_lint.analysis.project import method_of
from ms_lint.analysis.shapes import init_value, is_self_attr
from ms_lint.analysis.values import CONST_BUILTINS, FunctionValues, Kind
from ms_lint.context import ModuleContext
from ms_lint.cstutil import code_of, cut
from ms_lint.walk import find


# Last component of a call's name (lower-cased) that marks a random op: vmap gives every lane the same numbers,
# and a ForiLoop body must be a pure function. Over-matching (``normalize``) only costs a rewrite, never a finding.
RANDOM_NAME = re.compile(
    r"random|dropout|uniform|normal|multinomial|bernoulli|shuffle|gamma|poisson|rand|laplace|truncated|choice|sample"
)
# Ops and methods that write state (Parameters, summaries, prints) or are in-place (``add_``).
SIDE_EFFECT_NAME = re.compile(
    r"^(assign\w*|print\w*|scatter_\w+|\w*summary|insert_gradient_of|set_data|update|hookbackward|\w*[a-z0-9]_)$"
)
# ``ValueError`` and the like: constructing one (to raise it) has no effect.
BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                               if isinstance(value, type) and issubclass(value, BaseException))
# nn classes that are not pure per call: random, or updating statistics while training.
IMPURE_CELLS = re.compile(r"dropout|batchnorm|groupnorm_stats|random|noise", re.IGNORECASE)
# NumPy constructors that only build an array from their arguments (graph mode folds them into constants): pure.
# A curated list, not "all of numpy": ``numpy.random.*`` draws numbers, ``numpy.empty`` holds whatever memory held.
PURE_NUMPY = frozenset(f"numpy.{name}" for name in (
    "ones", "zeros", "full", "ones_like", "zeros_like", "full_like", "arange", "eye", "identity", "linspace",
    "array", "asarray",
))


_Followed = Tuple[int, Optional[str], int]  # (id of a def, its owner class, id of its module's context)


# -- effects ---------------------------------------------------------------------------------------------------
class EffectChecker:
    """Why a loop body is not a pure function of its inputs (a random op, a side effect), or None.

    Calls into the module's own graph code (``self.helper(x)``, ``helper(x)``, a Cell class defined here) are
    followed, and so are calls into other modules of the project (a sub-cell whose class is imported from a sibling
    module: its ``construct`` and the methods that calls; an imported helper function), up to ``MAX_MODULE_DEPTH``
    modules away. Calls whose code cannot be seen (an installed package other than MindSpore) count as effects.
    """

    MAX_MODULE_DEPTH = 3  # module hops followed from the checked one; deeper calls count as unknown effects

    def __init__(self, context: ModuleContext, owner: Optional[str], _seen: Optional[Set[_Followed]] = None,
                 _depth: int = 0):
        self.context = context
        self.owner = owner
        self._seen: Set[_Followed] = set() if _seen is None else _seen  # shared across modules: a cycle ends here
        self._depth = _depth
        self._function: Optional[cst.FunctionDef] = None  # the function being followed (its local names)

    def reason(self, node: cst.CSTNode) -> Optional[str]:
        for call in _calls(node):
            why = self._call_reason(call)
            if why:
                return why
        return None

    def call_reason(self, call: cst.Call) -> Optional[str]:
        """Why this one call (not the calls in its arguments) is not pure, following local code it runs."""
        return self._call_reason(call)

    def _call_reason(self, call: cst.Call) -> Optional[str]:
        context = self.context
        func = call.func
        qualified = context.imports.qualify(func)
        if isinstance(func, cst.Call):  # ops.Dropout()(x), P.Assign()(p, v)
            return self._class_reason(context.imports.qualify(func.func), func)
        if qualified is not None:
            return self._name_reason(qualified) or self._class_reason(qualified, call)
        if isinstance(func, cst.Name):
            if func.value in ("print",):
                return "print"
            target = context.scope.module_functions.get(func.value)
            if target is not None:
                return self._follow(target, None)
            if func.value in context.scope.classes:
                return None  # constructing an object: its construct runs only when called
            if func.value in CONST_BUILTINS or func.value in BUILTIN_EXCEPTIONS:
                return None  # ``raise ValueError(...)``: building the exception changes nothing
            value = context.constants.nodes.get(func.value)  # ``hswish = ops.HSwish()`` at module level
            if isinstance(value, cst.Call):
                return self._held_object_reason(value, func.value)
            local = local_bindings(self._function, func.value) if self._function is not None else []
            if len(local) == 1 and isinstance(local[0], cst.Call):
                # ``reshape = ops.Reshape()`` then ``reshape(x, shape)``: the object that name holds
                return self._held_object_reason(local[0], func.value)
            return self._name_reason(func.value) or f"`{func.value}` (a callable ms-lint cannot see into)"
        if isinstance(func, cst.Attribute):
            if is_self_attr(func):
                method = context.scope.find_method(self.owner, func.attr.value)
                if method is not None:
                    return self._follow(method, self.owner)
                value = init_value(context, self.owner, func.attr.value)
                if isinstance(value, cst.Call):
                    return self._held_object_reason(value, code_of(func))
                return f"`{code_of(func)}` (a callable ms-lint cannot see)"
            return self._name_reason(func.attr.value)
        return "a call ms-lint cannot see into"

    @staticmethod
    def _name_reason(name: str) -> Optional[str]:
        last = name.rsplit(".", 1)[-1]
        lowered = last.lower()
        if RANDOM_NAME.search(lowered):
            return f"random op `{last}`"
        if SIDE_EFFECT_NAME.match(lowered) and not lowered.startswith("tensor_scatter"):
            return f"side effect `{last}`"
        return None

    def _held_object_reason(self, construction: cst.Call, name: str) -> Optional[str]:
        """Why calling what ``name = construction`` holds is not pure: an object built from a class (a Primitive,
        a Cell: ``ops.Reshape()``, ``nn.ReLU()``, a class of the project) is judged as that class; what a function
        returns (``ops.partial(ops.assign_add, p)``) is a callable ms-lint cannot see into."""
        func = construction.func
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return f"`{name}` (a callable ms-lint cannot see into)"
        qualified = self.context.imports.qualify(func) or _local_class(construction)
        last = (qualified or code_of(func)).rsplit(".", 1)[-1]
        if not last.lstrip("_")[:1].isupper():  # ``_M2K``: a private class is still a class
            return f"`{name}` holds what `{cut(code_of(func), 30)}(...)` returns (a callable ms-lint cannot see into)"
        return self._class_reason(qualified, construction)

    def _class_reason(self, qualified: Optional[str], construction: cst.Call) -> Optional[str]:
        local = _local_class(construction)
        # A class of this module (it may qualify as its own bare name): its construct is followed.
        if local is not None and local in self.context.scope.classes and qualified in (None, local):
            construct = self.context.scope.find_method(local, "construct")
            return self._follow(construct, local) if construct is not None else None
        if qualified is None:
            return "a callable ms-lint cannot see into"
        last = qualified.rsplit(".", 1)[-1]
        # Code of the project is read, not judged by its name (``PixelShuffle`` draws nothing at random).
        found = None if qualified.startswith("mindspore.") else self._project_code(construction.func)
        if found is not None:
            return self._follow_elsewhere(*found, last)
        if RANDOM_NAME.search(last.lower()) or IMPURE_CELLS.search(last):
            return f"`{last}` (random or stateful)"
        if SIDE_EFFECT_NAME.match(last.lower()):
            return f"side effect `{last}`"
        if qualified.startswith("mindspore.") or qualified in PURE_NUMPY:
            return None
        return f"`{last}` (a callable ms-lint cannot see into)"

    def _project_code(self, func: cst.BaseExpression) -> Optional[Tuple[ModuleContext, cst.FunctionDef, Optional[str]]]:
        """(context, def, owner) of the code that calling ``func`` runs when it names a Cell class (its
        ``construct``) or a function of another module of the project; None otherwise."""
        project = self.context.project
        if project is None or not isinstance(func, (cst.Name, cst.Attribute)):
            return None
        dotted = code_of(func)
        found_class = project.imported_class(dotted)
        if found_class is not None:
            other, qualname = found_class
            construct = method_of(other, qualname, "construct") if other.scope.is_cell_class(qualname) else None
            return (construct[0], construct[1], qualname) if construct is not None else None
        found_function = project.imported_function(dotted)
        return (found_function[0], found_function[1], None) if found_function is not None else None

    def _follow_elsewhere(self, context: ModuleContext, func: cst.FunctionDef, owner: Optional[str], name: str
                          ) -> Optional[str]:
        """Follow code of another module with that module's names (a checker over its context)."""
        if self._depth >= self.MAX_MODULE_DEPTH:
            return f"`{name}` (calls more modules deep than ms-lint follows)"
        return EffectChecker(context, owner, self._seen, self._depth + 1)._follow(func, owner)

    def _follow(self, func: cst.FunctionDef, owner: Optional[str]) -> Optional[str]:
        key = (id(func), owner, id(self.context))  # a base's construct reads each subclass's own attributes
        if key in self._seen:
            return None
        self._seen.add(key)
        saved = self.owner, self._function
        self.owner, self._function = owner, func
        try:
            return self.reason(func.body)
        finally:
            self.owner, self._function = saved


def _local_class(call: cst.Call) -> Optional[str]:
    return call.func.value if isinstance(call.func, cst.Name) else None


def _calls(node: cst.CSTNode) -> List[cst.Call]:
    """Every call in ``node``, in the order a visitor meets them."""
    return find(node, cst.Call)


def calls_in(node: cst.CSTNode) -> List[cst.Call]:
    return _calls(node)


def does_graph_work(node: cst.CSTNode, values: FunctionValues) -> bool:
    """Does a loop body build graph nodes (calls other than Python builtins, or tensor arithmetic)?

    A body of pure Python int/tuple bookkeeping is folded by the parser and costs little to unroll.
    """
    for call in _calls(node):
        func = call.func
        if isinstance(func, cst.Name) and func.value in CONST_BUILTINS:
            continue
        if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert", "index", "count"):
            if values.kind(func.value) is not Kind.TENSOR:
                continue
        return True
    static = _static_reads(node)
    for name in read_name_nodes(node):
        if id(name) not in static and values.kind(name) is Kind.TENSOR:
            return True
    return False


def _static_reads(node: cst.CSTNode) -> Set[int]:
    """Names read only for what is known at compile time: ``x.shape``/``x.ndim``/``x.dtype`` and ``len(x)``.
    A body that uses a Tensor only that way (``sizes += (x.shape[1] * i,)``) is folded away by the compiler."""
    found: Set[int] = set()
    for attribute in find(node, cst.Attribute):
        if attribute.attr.value in ("shape", "ndim", "dtype") and isinstance(attribute.value, cst.Name):
            found.add(id(attribute.value))
    for call in find(node, cst.Call):
        if (isinstance(call.func, cst.Name) and call.func.value == "len" and len(call.args) == 1
                and isinstance(call.args[0].value, cst.Name)):
            found.add(id(call.args[0].value))
    return found
