"""What a module's own script code hands its Cells: ``if __name__ == "__main__":`` blocks and module-level functions
(``def test_head(): ...``) that build a Cell of the module and call it.

Model packages often end a module with a smoke test::

    if __name__ == "__main__":
        assigner = BBoxAssigner()
        rois = ms.Tensor(np.random.uniform(0, 640, (2, 1000, 4)))
        out = assigner(rois, rois_mask, gts)

When nothing in the project calls the Cell from graph code (it is built into a ``CellList`` its holder never
calls, or only another package calls it), this call is the one place the code says what ``construct``'s
parameters hold: here ``rois`` is one Tensor. The evidence is read syntactically, block by block: the instance
and the argument must each be bound once in the block (module-level statements, or one function's body) before
the call, to ``Cls(...)`` and to a Tensor constructor or a functional op (``ms.Tensor(...)``, ``ops.ones(...)``).
Like a graph caller's, it is weaker evidence than the code of ``construct`` itself (another caller may pass a
tuple), so a finding that rests on it gets no fix.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import written_names
from ms_lint.cstutil import bind_arguments, walk_statements
from ms_lint.names import ImportTable
from ms_lint.walk import find

# Tensor constructors; a functional op of these namespaces gives one Tensor unless it is named in ``tuple_results``.
TENSOR_CONSTRUCTORS = frozenset({"mindspore.Tensor", "mindspore.tensor", "mindspore.common.tensor.Tensor",
                                 "mindspore.Parameter", "mindspore.common.parameter.Parameter"})
OP_NAMESPACES = ("mindspore.ops.", "mindspore.mint.", "mindspore.numpy.")


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
                       name: str, tuple_results: Sequence[str]) -> Optional[Tuple[Optional[cst.FunctionDef], cst.Call]]:
    """(the function or None for module level, the call) of a call of an instance of the module-level Cell class
    ``class_name`` in script code that hands ``construct``'s parameter ``name`` one Tensor; None when there is
    none."""
    if "." in class_name:
        return None  # (a nested class is not built by name at module level)
    for function, statements in script_blocks(module):
        if any(class_name in written_names(stmt) for stmt in statements):
            continue  # (the name is rebound here: ``Cls(...)`` may build something else)
        once = _bound_once(function, statements)
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
                if type(passed) is cst.Call and _one_tensor(passed, imports, tuple_results):
                    return function, call
    return None


def _calls_of(stmt: cst.BaseStatement) -> List[cst.Call]:
    """The calls a statement makes itself (for a compound statement, in its header), not in nested blocks."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return find(stmt, cst.Call, prune=(cst.Lambda,))
    header = getattr(stmt, "test", None) or getattr(stmt, "iter", None)
    return find(header, cst.Call, prune=(cst.Lambda,)) if header is not None else []


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


def _one_tensor(call: cst.Call, imports: ImportTable, tuple_results: Sequence[str]) -> bool:
    qualified = imports.qualify(call.func)
    if qualified is None:
        return False
    if qualified in TENSOR_CONSTRUCTORS:
        return True
    if qualified.startswith(OP_NAMESPACES):
        last = qualified.rsplit(".", 1)[-1]
        return last[:1].islower() and last not in tuple_results and qualified.count(".") == 2
    return False
