"""What MindSpore 2.10's ``vmap`` can compile: the check the vmap rewrite (``ms_lint.rewrites.vmap``) asks before it
builds anything. Each limit was measured on 2.10 (CPU, GRAPH_MODE and ``@jit``); the reasons name the error.
"""
from __future__ import annotations

from typing import Optional, Sequence, Set

import libcst as cst

from ms_lint.analysis.dataflow import read_names
from ms_lint.analysis.project import method_of
from ms_lint.analysis.shapes import holds_python_sequence, init_value
from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.context import ModuleContext
from ms_lint.cstutil import code_of, is_self_attr, suite_statements, target_names, walk_statements
from ms_lint.walk import find

# Public nn cells checked to run under vmap in MindSpore 2.10 (CPU) with the same results as the loop.
VMAP_CELLS = {"Dense", "Conv1d", "Conv2d", "LayerNorm", "Embedding", "GELU", "ReLU", "ReLU6", "Sigmoid", "Tanh",
              "Softmax", "LogSoftmax", "HSwish", "HSigmoid", "SiLU", "LeakyReLU", "ELU", "Identity"}
# Ops that index: in 2.10 they fail to compile inside vmap when none of their inputs is mapped.
INDEXING_OPS = {"StridedSlice", "strided_slice", "Slice", "slice", "gather", "Gather", "GatherD", "gather_d",
                "gather_elements", "index_select", "narrow", "take", "GatherNd", "gather_nd", "select_ext"}

# A matrix product of two mapped operands: in 2.10, with a 1-D lane on one side, vmap fails to compile
# (2-D x 1-D: "shape1[-1] must be equal to shape2[-2]") or silently gives the wrong shape (1-D x 2-D: (6, 6, 3)
# instead of (6, 3)). Lane ranks are not known statically, so any product of two mapped operands is refused.
MATMUL_OPS = {"matmul", "mm", "bmm", "mv", "dot", "inner", "MatMul", "BatchMatMul"}
# Except a batched product: ``ops.bmm``/``ops.BatchMatMul`` (and ``mint.bmm``) reject a 1-D operand themselves
# ("the input 'x' must be a 2D or higher dimensional Tensor"; mint.bmm: exactly 3-D) and need operands of equal
# rank, so a loop that runs has no 1-D lane. Measured on 2.10 (GRAPH_MODE, @jit): every lane shape the loop
# accepts (2-D x 2-D, 3-D x 3-D, 4-D x 4-D) gives the loop's result under vmap. ``mm``, ``matmul``, ``@``... stay.
BATCHED_MATMUL = {"mindspore.ops.bmm", "mindspore.ops.BatchMatMul", "mindspore.mint.bmm",
                  "mindspore.ops.auto_generate.bmm", "mindspore.ops.operations.BatchMatMul"}
# Ops whose vmap rule fails in 2.10 unless the optional weights are given: ``binary_cross_entropy_with_logits``
# with weight or pos_weight None fails to compile ("Failed calling Rank with input_x=None"; it works with both).
OPTIONAL_WEIGHT_OPS = {"binary_cross_entropy_with_logits": ("weight", "pos_weight")}
MATMUL_PROBLEM = ("multiplies two mapped operands (matmul/@): MindSpore 2.10's vmap gets a product with a 1-D "
                  "lane wrong (a compile error, or a wrong shape), and the lanes' ranks are not known here")

class VmapCompileCheck:
    """Follows which values carry the mapped axis ("tainted": derived from a lane parameter) through the body and
    the in-module functions, methods and cells it calls, to find what MindSpore 2.10's vmap cannot compile:

    * indexing a tensor that carries no mapped axis (``anchors[:, :2]`` with ``anchors`` captured or passed
      unmapped) fails with ``For Operator[StridedSlice], the inputs number should be 9 but got 4`` (indexing a
      Python list of Tensors passed in, ``mats[k - 1]``, is no slicing op and is allowed);
    * cells whose code ms-lint cannot see, other than the public nn cells in ``VMAP_CELLS``. Cells and functions
      of other project modules are followed with that module's own analysis.
    """

    MAX_DEPTH = 4

    def __init__(self, context: ModuleContext, values: FunctionValues):
        self.context = context
        self.values = values

    def check(self, stmts: Sequence[cst.CSTNode], tainted: Set[str], owner: Optional[str], depth: int,
              lists: Optional[Set[str]] = None) -> Optional[str]:
        """``lists``: parameters of a followed function that hold Python lists or tuples of Tensors."""
        if depth > self.MAX_DEPTH:
            return "makes calls nested too deeply for ms-lint to follow"
        lists = set() if lists is None else lists
        for stmt in stmts:
            problem = self._node(stmt, tainted, owner, depth, lists)
            if problem:
                return problem
            for target, value in simple_bindings(stmt):
                lists.discard(target)
                if read_names(value) & tainted:
                    tainted.add(target)
                else:
                    tainted.discard(target)
        return None

    def _node(self, node: cst.CSTNode, tainted: Set[str], owner: Optional[str], depth: int,
              lists: Set[str]) -> Optional[str]:
        for sub in find(node, cst.Subscript):
            base = sub.value
            if isinstance(base, cst.Name) and base.value in lists:
                continue
            if not (read_names(base) & tainted) and (depth > 0 or self.values.kind(base) is not Kind.CONST):
                if not _is_shape_tuple(base):
                    return (f"indexes `{code_of(base)}`, which is the same for every slice: MindSpore 2.10's vmap cannot "
                            "compile indexing of an unmapped tensor (index it before the loop)")
        products = [op for op in find(node, cst.BinaryOperation) if isinstance(op.operator, cst.MatrixMultiply)]
        if any(read_names(p.left) & tainted and read_names(p.right) & tainted for p in products):
            return MATMUL_PROBLEM
        for call in find(node, cst.Call):
            problem = self._call(call, tainted, owner, depth, lists)
            if problem:
                return problem
        return None

    def _call(self, call: cst.Call, tainted: Set[str], owner: Optional[str], depth: int,
              lists: Set[str]) -> Optional[str]:
        context = self.context
        func = call.func
        args_tainted = [bool(read_names(arg.value) & tainted) for arg in call.args]
        qualified = context.imports.qualify(func if not isinstance(func, cst.Call) else func.func)
        if qualified and qualified.rsplit(".", 1)[-1] in INDEXING_OPS and not any(args_tainted):
            return (f"calls `{qualified.rsplit('.', 1)[-1]}` on values that are the same for every slice, which "
                    "MindSpore 2.10's vmap cannot compile")
        if qualified and qualified.rsplit(".", 1)[-1] in MATMUL_OPS and sum(args_tainted[:2]) == 2 \
                and qualified not in BATCHED_MATMUL:
            return MATMUL_PROBLEM
        last = qualified.rsplit(".", 1)[-1] if qualified else None
        if last in OPTIONAL_WEIGHT_OPS and any(args_tainted) and not _passes(call, OPTIONAL_WEIGHT_OPS[last], 2):
            return (f"calls `{last}` without {' and '.join(OPTIONAL_WEIGHT_OPS[last])}, which MindSpore 2.10's vmap "
                    "cannot compile (\"Failed calling Rank with input_x=None\")")
        target = None
        project = context.project
        if is_self_attr(func) and owner is not None:
            method = context.scope.find_method(owner, func.attr.value)  # type: ignore[union-attr]
            if method is not None:
                target = (method, owner, True, context)
            else:
                value = init_value(context, owner, func.attr.value)  # type: ignore[union-attr]
                if isinstance(value, cst.Call):
                    cell_class = context.imports.qualify(value.func)
                    elsewhere = project.imported_class(code_of(value.func)) \
                        if project is not None and isinstance(value.func, (cst.Name, cst.Attribute)) else None
                    if cell_class is None and isinstance(value.func, cst.Name) \
                            and context.scope.is_cell_class(value.func.value):
                        construct = context.scope.find_method(value.func.value, "construct")
                        if construct is None:
                            return f"calls cell `{value.func.value}`, whose construct ms-lint cannot see"
                        target = (construct, value.func.value, True, context)
                    elif elsewhere is not None and elsewhere[0].scope.is_cell_class(elsewhere[1]):
                        found = method_of(elsewhere[0], elsewhere[1], "construct")
                        if found is None:
                            return f"calls cell `{code_of(value.func)}`, whose construct ms-lint cannot see"
                        target = (found[1], elsewhere[1], True, found[0])
                    elif cell_class and cell_class.startswith("mindspore.nn."):
                        if cell_class.rsplit(".", 1)[-1] not in VMAP_CELLS:
                            return f"calls `{cell_class}`, which is not known to run under vmap"
                    elif not (cell_class and cell_class.startswith("mindspore.ops.")):
                        return f"calls `{code_of(func)}`, which ms-lint cannot follow"
                else:
                    return f"calls `{code_of(func)}`, which ms-lint cannot follow"
        elif isinstance(func, cst.Name) and func.value in context.scope.module_functions:
            target = (context.scope.module_functions[func.value], None, False, context)
        elif isinstance(func, (cst.Name, cst.Attribute)) and project is not None:
            imported = project.imported_function(code_of(func))
            if imported is not None:
                target = (imported[1], None, False, imported[0])
        if target is None:
            return None
        callee, callee_owner, bound, callee_context = target
        params = [p.name.value for p in list(callee.params.posonly_params) + list(callee.params.params)]
        if bound and params:
            params = params[1:]
        inner: Set[str] = set()
        inner_lists: Set[str] = set()
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args):
            return "makes a call with *args, which ms-lint cannot follow"
        passed = list(zip(params, positional)) + [(a.keyword.value, a) for a in call.args if a.keyword is not None]
        for param, arg in passed:
            if read_names(arg.value) & tainted:
                inner.add(param)
            elif (isinstance(arg.value, cst.Name) and arg.value.value in lists) \
                    or holds_python_sequence(context, owner, arg.value):
                inner_lists.add(param)
        checker = self if callee_context is context else VmapCompileCheck(callee_context, self.values)
        body = list(walk_statements(suite_statements(callee.body), into_defs=False))
        simple = [stmt for stmt in body if isinstance(stmt, cst.SimpleStatementLine)]
        for stmt in body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                headers = [getattr(stmt, name) for name in ("test", "iter") if getattr(stmt, name, None) is not None]
                for header in headers:
                    problem = checker._node(header, inner, callee_owner, depth + 1, inner_lists)
                    if problem:
                        return problem
        return checker.check(simple, inner, callee_owner, depth + 1, inner_lists)



def _passes(call: cst.Call, names: Sequence[str], first: int) -> bool:
    """Does ``call`` pass every one of the optional arguments ``names`` (positions ``first``, ``first + 1``...),
    positionally or by keyword, as something other than ``None``?"""
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    for offset, name in enumerate(names):
        position = first + offset
        value = positional[position].value if position < len(positional) else next(
            (arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)
        if value is None or (isinstance(value, cst.Name) and value.value == "None"):
            return False
    return True



def simple_bindings(stmt: cst.CSTNode):
    """(name, value) pairs a simple statement binds (every name of an unpacking gets the whole value)."""
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    for name in target_names(target.target):
                        yield name, small.value
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                yield small.target.value, cst.BinaryOperation(small.target, cst.Add(), small.value)
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                for name in target_names(small.target):
                    yield name, small.value



def _is_shape_tuple(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and expr.attr.value == "shape"


# -- matching helpers ------------------------------------------------------------------------------------------
