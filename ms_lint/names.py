"""Resolving names to qualified MindSpore names through the module's imports (``import mindspore as ms``).

Cheaper than libcst's QualifiedNameProvider: one pass over import statements, then dotted-name lookups.
Relative imports resolve against the file's package (found by walking up ``__init__.py`` files), so
MindSpore's own source (``from ..cell import Cell``) resolves too.
"""
from __future__ import annotations

from typing import Callable, Collection, Dict, Optional, Tuple

import libcst as cst

from ms_lint.analysis.layout import package_of
from ms_lint.analysis.qualnames import CANONICAL_PREFIXES, canonical  # noqa: F401 (re-exported)
from ms_lint.analysis.summary import resolve_relative
from ms_lint.cstutil import small_statements, walk_statements
from ms_lint.treememo import tree_memo


def dotted(expr: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` as a string, or None when the expression is not a plain dotted name."""
    kind = type(expr)  # libcst's node classes are final: ``type(x) is`` spares ``isinstance``'s ABC machinery
    if kind is cst.Name:
        return expr.value
    if kind is cst.Attribute:
        base = dotted(expr.value)
        return f"{base}.{expr.attr.value}" if base else None
    return None


def module_package(path: Optional[str]) -> Optional[str]:
    """The dotted package a file belongs to, from ``__init__.py`` files above it (None outside packages)."""
    if not path:
        return None
    return package_of(path)[0]


# What ``mindspore.common.dtype`` holds (its ``__all__`` in MindSpore 2.10): only these are spelled through an
# ``import mindspore.common.dtype as mstype`` alias.
DTYPE_MODULE_NAMES = frozenset((
    "Int", "QuantDtype", "TensorType", "Type", "bfloat16", "bool_", "byte", "cdouble", "cfloat", "complex128",
    "complex64", "double", "dtype_to_nptype", "dtype_to_pytype", "float16", "float32", "float64", "float8_e4m3fn",
    "float8_e5m2", "float_", "get_py_obj_dtype", "half", "hifloat8", "int16", "int32", "int64", "int8", "int_",
    "intc", "intp", "list_", "long", "number", "pytype_to_dtype", "qint4x2", "short", "single", "string",
    "tensor_type", "tuple_", "type_none", "ubyte", "uint", "uint16", "uint32", "uint64", "uint8", "uintc", "uintp",
    "ushort",
))

class ImportTable:
    """Local name -> qualified name, for every import in the module (function-level ones included)."""

    def __init__(self, module: cst.Module, path: Optional[str] = None):
        self.aliases: Dict[str, str] = {}
        self._qualified: Dict[str, Optional[str]] = {}
        # The MindSpore name a project module re-exports under a qualified name (``ProjectIndex.mindspore_name``);
        # set before the first ``qualify`` by a module context that has a project.
        self.reexported: Optional[Callable[[str], Optional[str]]] = None
        self._package = module_package(path) if path else None
        for top in module.body:
            for node in _imports_in(top):
                self._add(node)
        # Names bound by imports at the top of the module: the only aliases code anywhere in it may reuse.
        top = ImportTable.__new__(ImportTable)
        top.aliases, top._package = {}, self._package
        for stmt in module.body:
            for small in small_statements(stmt):
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    top._add(small)
        self.module_level = {local for local, target in top.aliases.items() if self.aliases.get(local) == target}

    def _add(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted(alias.name)
                if not full:
                    continue
                if alias.asname is not None:
                    self.aliases[alias.asname.name.value] = full  # type: ignore[union-attr]
                else:
                    head = full.split(".")[0]
                    self.aliases[head] = head
        elif isinstance(node, cst.ImportFrom):
            base = dotted(node.module) if node.module is not None else ""
            if node.relative:
                base = resolve_relative(self._package, len(node.relative), base or "")
                if base is None:
                    return
            if isinstance(node.names, cst.ImportStar):
                return
            for alias in node.names:
                name = dotted(alias.name)
                if not name:
                    continue
                local = alias.asname.name.value if alias.asname is not None else name  # type: ignore[union-attr]
                self.aliases[local] = f"{base}.{name}" if base else name

    def qualify(self, expr: cst.BaseExpression) -> Optional[str]:
        """Qualified, canonical name of a dotted expression, or None if its head was not imported."""
        name = dotted(expr)
        if name is None:
            return None
        memo = self._qualified  # by dotted name: the aliases never change once read
        if name in memo:
            return memo[name]
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        found = None if target is None else canonical(f"{target}.{rest}" if rest else target)
        if found is not None and self.reexported is not None and not found.startswith("mindspore."):
            found = self.reexported(found) or found  # ``layers.Cell`` where the project's ``layers`` re-exports it
        memo[name] = found
        return found

    def local_reference(self, qualified_name: str, avoid: Collection[str] = ()) -> Optional[str]:
        """How this module can spell ``qualified_name`` with imports it already has (``ms.vmap``), if at all.

        Only module-level imports count: a name imported inside a function is not bound elsewhere. Names in
        ``avoid`` (shadowed somewhere by a local binding) are not used.
        """
        best: Optional[str] = None
        for local, target in self.aliases.items():
            if local not in self.module_level or local in avoid:
                continue
            target = canonical(target)
            if target == qualified_name:
                return local
            if qualified_name.startswith(target + "."):
                candidate = local + qualified_name[len(target):]
                if best is None or len(candidate) < len(best):
                    best = candidate
        if best is None and "." in qualified_name:
            # ``import mindspore.common.dtype as mstype``: ``mstype.int32`` is ``mindspore.int32``, though the
            # module's canonical name (``mindspore.dtype``) is no prefix of it (dtype modules only: other
            # sub-modules that collapse to ``mindspore.`` do not hold its names).
            last = qualified_name.rsplit(".", 1)[1]
            if last not in DTYPE_MODULE_NAMES:  # ``mstype.vmap`` does not exist though it would canonicalize
                return None
            for local, target in self.aliases.items():
                if local in self.module_level and local not in avoid and canonical(target) == "mindspore.dtype" \
                        and canonical(f"{target}.{last}") == qualified_name:
                    return f"{local}.{last}"
        return best


@tree_memo
def _imports_in(top: cst.BaseStatement) -> Tuple[cst.CSTNode, ...]:
    """The Import/ImportFrom nodes of a top-level statement and of every block nested in it, in source order
    (an editor's edit leaves most top-level statements alone)."""
    return tuple(small for stmt in walk_statements([top]) for small in small_statements(stmt)
                 if type(small) is cst.Import or type(small) is cst.ImportFrom)
