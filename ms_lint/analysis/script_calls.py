"""What a module's own script code hands its Cells: ``if __name__ == "__main__":`` blocks and module-level functions
(``def test_head(): ...``) that build a Cell of the module and call it.

Model packages often end a module with a smoke test::

    if __name__ == "__main__":
        assigner = BBoxAssigner()
        rois = ms.Tensor(np.random.uniform(0, 640, (2, 1000, 4)))
        out = assigner(rois, rois_mask, gts)

When nothing in the project calls the Cell from graph code (it is built into a ``CellList`` its holder never
calls, or only another package calls it), this call is the one place the code says what ``construct``'s
parameters hold: here ``rois`` is one Tensor. (The caller asks only then: a holder's call that passes a list
outweighs it.) The evidence is read syntactically, block by block: the instance
and the argument must each be bound once in the block (module-level statements, or one function's body) before
the call, to ``Cls(...)`` and to a Tensor constructor or a functional op (``ms.Tensor(...)``, ``ops.ones(...)``).
Like a graph caller's, it is weaker evidence than the code of ``construct`` itself (another caller may pass a
tuple), so a finding that rests on it gets no fix.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import written_names
from ms_lint.cstutil import bind_arguments, walk_statements
from ms_lint.names import ImportTable
from ms_lint.walk import find

# What a smoke test builds its inputs with: Tensor constructors, and the creation ops of ``ops``/``mint``/``numpy``
# that give one Tensor whatever their arguments (not ``ops.max_pool2d(..., return_indices=True)``,
# ``numpy.broadcast_arrays`` or ``numpy.triu_indices``, which give tuples).
TENSOR_CONSTRUCTORS = frozenset({"mindspore.Tensor", "mindspore.tensor", "mindspore.common.tensor.Tensor",
                                 "mindspore.Parameter", "mindspore.common.parameter.Parameter"})
OP_NAMESPACES = ("mindspore.ops.", "mindspore.mint.", "mindspore.numpy.")
CREATION_OPS = frozenset({"ones", "zeros", "ones_like", "zeros_like", "full", "full_like", "fill", "rand", "randn",
                          "rand_like", "randn_like", "randint", "randint_like", "uniform", "normal",
                          "standard_normal", "arange", "linspace", "eye", "array", "asarray"})


def script_blocks(module: cst.Module) -> List[Tuple[Optional[cst.FunctionDef], List[cst.BaseStatement]]]:
    """(function or None for module level, its statements in source order, nested blocks included, nested defs
    and classes left out) for the module level and each module-level function."""
    blocks: List[Tuple[Optional[cst.FunctionDef], List[cst.BaseStatement]]] = [
        (None, [stmt for stmt in walk_statements(module.body, into_defs=False)
                if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef))])]
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock):
            blocks.append((stmt, [inner for inner in walk_statements(stmt.body.body, into_defs=False)
                                  if not isinstance(inner, (cst.FunctionDef, cst.ClassDef))]))
    return blocks


def tensor_from_script(module: cst.Module, imports: ImportTable, class_name: str, construct: cst.FunctionDef,
                       name: str) -> Optional[Tuple[Optional[cst.FunctionDef], cst.Call]]:
    """(the function or None for module level, the call) of a call of an instance of the module-level Cell class
    ``class_name`` in script code that hands ``construct``'s parameter ``name`` one Tensor; None when there is
    none."""
    if "." in class_name or _module_bindings(module).get(class_name) != 1:
        return None  # a nested class, or a name the module binds again (a second class, an import, a swap)
    rebound_globally = _global_names(module)
    for function, statements in script_blocks(module):
        if function is not None and class_name in _function_bindings(function):
            continue  # (a parameter, a local or a nested class of that name: ``Cls(...)`` builds something else)
        once = _bound_once(function, statements)
        if function is None:
            once = {bound: value for bound, value in once.items() if bound not in rebound_globally}
        for position, stmt in enumerate(statements):
            for call in _calls_of(stmt):
                if not _instance_call(call.func, class_name, once, position):
                    continue
                binding = bind_arguments(construct, True, call)
                passed = next((value for param, value in binding[0] if param == name), None) if binding else None
                if passed is None:
                    continue
                if type(passed) is cst.Name:
                    found = once.get(passed.value)
                    if found is None or found[0] >= position:
                        continue
                    passed = found[1]
                if type(passed) is cst.Call and _one_tensor(passed, imports):
                    return function, call
    return None


# Inner scopes: a call inside reads their own names (a comprehension's target shadows the block's binding).
_INNER_SCOPES = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _calls_of(stmt: cst.BaseStatement) -> List[cst.Call]:
    """The calls a statement makes itself (for a compound statement, in its header), not in nested blocks nor in
    lambdas and comprehensions."""
    if isinstance(stmt, cst.SimpleStatementLine):
        found = find(stmt, cst.Call, prune=_INNER_SCOPES)
    else:
        header = getattr(stmt, "test", None) or getattr(stmt, "iter", None)
        found = find(header, cst.Call, prune=_INNER_SCOPES) if header is not None else []
    return [call for call in found if type(call) is cst.Call]


def _module_bindings(module: cst.Module) -> Dict[str, int]:
    """How many module-level statements bind each name (class and function definitions, imports and
    assignments in nested blocks included)."""
    counts: Dict[str, int] = {}
    for stmt in walk_statements(module.body, into_defs=False):
        for bound in written_names(stmt):
            counts[bound] = counts.get(bound, 0) + 1
    for bound in _global_names(module):
        counts[bound] = counts.get(bound, 0) + 1
    return counts


def _global_names(module: cst.Module) -> Set[str]:
    """Names some function of the module declares ``global`` (and may rebind at module level when called)."""
    return {item.name.value for node in find(module, cst.Global) for item in node.names}


def _function_bindings(function: cst.FunctionDef) -> Set[str]:
    """Every name the function binds: its parameters and what its body binds, nested definitions' names and
    insides included (over-counting only loses evidence)."""
    names = {param.name.value for param in find(function.params, cst.Param)}
    for stmt in walk_statements(function.body.body if isinstance(function.body, cst.IndentedBlock) else ()):
        names.update(written_names(stmt))
    return names


def _bound_once(function: Optional[cst.FunctionDef], statements: Sequence[cst.BaseStatement]
                ) -> Dict[str, Tuple[int, cst.BaseExpression]]:
    """name -> (position of the statement, value) for the names the block binds exactly once, by a plain
    ``name = value``, and that are not parameters of the function."""
    counts: Dict[str, int] = {}
    values: Dict[str, Tuple[int, cst.BaseExpression]] = {}
    if function is not None:
        for param in find(function.params, cst.Param):
            counts[param.name.value] = 2
    for position, stmt in enumerate(statements):
        for bound in written_names(stmt):
            counts[bound] = counts.get(bound, 0) + 1
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)):
                values[small.targets[0].target.value] = (position, small.value)
    for stmt in statements:
        for node in find(stmt, (cst.NamedExpr, cst.Global, cst.Nonlocal, cst.Del), prune=(cst.Lambda,)):
            if isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name):
                counts[node.target.value] = 2
            elif isinstance(node, (cst.Global, cst.Nonlocal)):
                for item in node.names:
                    counts[item.name.value] = 2
            elif isinstance(node, cst.Del):
                for target in find(node.target, cst.Name):
                    counts[target.value] = 2
    return {bound: value for bound, value in values.items() if counts.get(bound) == 1}


def _instance_call(func: cst.BaseExpression, class_name: str, once: Dict[str, Tuple[int, cst.BaseExpression]],
                   position: int) -> bool:
    """``net(...)`` with ``net = Cls(...)`` bound once before, or ``Cls(...)(...)``."""
    if type(func) is cst.Name:
        found = once.get(func.value)
        if found is None or found[0] >= position:
            return False
        func = found[1]
    return (type(func) is cst.Call and type(func.func) is cst.Name and func.func.value == class_name)


def _one_tensor(call: cst.Call, imports: ImportTable) -> bool:
    qualified = imports.qualify(call.func)
    if qualified is None:
        return False
    if qualified in TENSOR_CONSTRUCTORS:
        return True
    head, _, last = qualified.rpartition(".")
    return f"{head}." in OP_NAMESPACES and last in CREATION_OPS
