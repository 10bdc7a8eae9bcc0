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
