"""Dicts of tensors read by constant keys: ``state = {"failed": f, ...}`` … ``if state["failed"]:``.

Graph code keeps solver state in a dict (MindSpore's own BFGS does). A key's value is then as much a Tensor as a
local name's: the value model binds each key of such a dict as a pseudo-name ``state["failed"]`` from the dict
literal and from every ``state["failed"] = ...`` in the function, and joins them like a name's bindings.

Only a *plain* dict qualifies: bound once, in the function, to a dict literal with string keys (no ``**``), and
otherwise used only as ``d["key"]`` (read, assigned, augmented) or returned. Passed to a call, iterated, indexed
by a variable or mutated through a method, its keys may hold anything, and the dict is left unmodelled.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from ms_lint.walk import find


def constant_key(node: cst.Subscript) -> Optional[str]:
    """``"failed"`` for ``d["failed"]``; None for any other index."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    if isinstance(value, cst.SimpleString):
        text = value.evaluated_value
        return text if isinstance(text, str) else None
    return None


def pseudo_name(name: str, key: str) -> str:
    return f"{name}[{key!r}]"


def keyed_name(node: cst.BaseExpression, plain: Set[str]) -> Optional[str]:
    """The pseudo-name of ``d["key"]`` when ``d`` is a plain dict of the function, else None."""
    if type(node) is cst.Subscript and type(node.value) is cst.Name and node.value.value in plain:
        key = constant_key(node)
        return pseudo_name(node.value.value, key) if key is not None else None
    return None


def literal_items(value: cst.BaseExpression) -> Optional[Dict[str, cst.BaseExpression]]:
    """Key -> value of a dict literal with string keys only, else None."""
    if not isinstance(value, cst.Dict):
        return None
    items: Dict[str, cst.BaseExpression] = {}
    for element in value.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            return None
        key = element.key.evaluated_value
        if not isinstance(key, str):
            return None
        items[key] = element.value
    return items


def plain_dicts(func: cst.FunctionDef) -> Set[str]:
    """Names of the function bound once to a string-keyed dict literal and used only through constant keys."""
    literal_bound: Set[str] = set()
    bound_count: Dict[str, int] = {}
    allowed: Set[int] = set()  # ids of Name nodes that are fine uses (binding, d["k"], return d)
    names: List[cst.Name] = []
    # one walk for every kind of node this looks at (the order does not matter: counts and sets)
    for node in find(func.body, _PLAIN_DICT_NODES):
        if isinstance(node, cst.Name):
            names.append(node)
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    name = target.target.value
                    bound_count[name] = bound_count.get(name, 0) + 1
                    if len(node.targets) == 1 and literal_items(node.value) is not None:
                        literal_bound.add(name)
                        allowed.add(id(target.target))
        elif isinstance(node, cst.Subscript):
            if isinstance(node.value, cst.Name) and constant_key(node) is not None:
                allowed.add(id(node.value))
        elif isinstance(node, cst.Return):
            if isinstance(node.value, cst.Name):
                allowed.add(id(node.value))
        elif isinstance(node.target, cst.Name):  # AnnAssign, AugAssign, For, NamedExpr
            bound_count[node.target.value] = bound_count.get(node.target.value, 0) + 2
    params = {p.name.value for p in func.params.params + func.params.kwonly_params + func.params.posonly_params}
    candidates = {name for name in literal_bound if bound_count.get(name) == 1 and name not in params}
    for name_node in names:
        if name_node.value in candidates and id(name_node) not in allowed:
            candidates.discard(name_node.value)
    return candidates


_PLAIN_DICT_NODES = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.Subscript, cst.Return,
                     cst.Name)
