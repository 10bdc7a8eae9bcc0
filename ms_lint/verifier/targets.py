"""Which callable to run to exercise the code at a given line.

``enclosing_target(source, line)`` gives ``func`` for a line inside a top-level function (nested defs included),
``Class`` for a line inside ``Class.construct`` (a Cell is called as a whole), ``Class.method`` for other methods,
and None for module-level code.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _span(node: ast.AST) -> Tuple[int, int]:
    start = node.lineno
    for deco in getattr(node, "decorator_list", []):
        start = min(start, deco.lineno)
    return start, getattr(node, "end_lineno", None) or node.lineno


def enclosing_target(source: str, line: int) -> Optional[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        start, end = _span(node)
        if not start <= line <= end:
            continue
        if isinstance(node, _DEFS):
            return node.name
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, _DEFS):
                    item_start, item_end = _span(item)
                    if item_start <= line <= item_end:
                        return node.name if item.name == "construct" else f"{node.name}.{item.name}"
            return node.name
    return None


def target_contains(source: str, target: str, line: int) -> bool:
    """Is ``line`` inside ``target`` (``func``, ``Class`` -- any of its methods -- or ``Class.method``)?"""
    found = enclosing_target(source, line)
    if found is None:
        return False
    if found == target:
        return True
    # a Class target covers all its methods; Class.construct is the Class
    if "." not in target and found.split(".")[0] == target:
        return True
    return target.endswith(".construct") and found == target.split(".")[0]


def defined_targets(source: str) -> List[str]:
    """Top-level functions and classes (for error messages)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, _DEFS + (ast.ClassDef,))]


def _imported_from(tree: ast.Module) -> dict:
    """``Name -> "from X import Name"`` for the module's top-level from-imports (relative ones included)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            where = "." * node.level + (node.module or "")
            for alias in node.names:
                name = alias.asname or alias.name
                text = f"from {where} import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                found[name] = text
    return found


def constructor_needs(source: str, function: str) -> Optional[str]:
    """For a class target (``Class`` or ``Class.method``) whose own ``__init__`` has parameters without defaults:
    the error naming them, with an ``--init`` template (and a ``--setup`` one for annotated config objects).
    None when the class needs nothing, is not defined here, or inherits its ``__init__`` (the child checks that)."""
    from ms_lint.verifier.child import constructor_message

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    name = function.split(".")[0]
    cls = None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            cls = node
    if cls is None:
        return None
    init = None
    for item in cls.body:
        if isinstance(item, _DEFS) and item.name == "__init__":
            init = item
    if init is None:
        return None
    args = init.args
    positional = (list(args.posonlyargs) + list(args.args))[1:]  # self
    without_default = positional[: len(positional) - len(args.defaults)]
    kwonly = [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    required = without_default + kwonly
    if not required:
        return None
    imports = _imported_from(tree)
    local_classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    hints = {}
    for arg in required:
        annotation = arg.annotation
        type_name = None
        if isinstance(annotation, ast.Name):
            type_name = annotation.id
        elif isinstance(annotation, ast.Constant) and isinstance(annotation.value, str) \
                and annotation.value.isidentifier():
            type_name = annotation.value
        if type_name in imports:
            hints[arg.arg] = f"{imports[type_name]}; {arg.arg} = {type_name}(...)"
        elif type_name in local_classes:
            hints[arg.arg] = f"{arg.arg} = {type_name}(...)"
    return constructor_message(name, [a.arg for a in required], hints)
