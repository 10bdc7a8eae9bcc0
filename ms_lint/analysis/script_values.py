"""The value a script's expression has when the script runs with its defaults, where that can be read statically.

MSL301 asks it for ``set_context(mode=...)``. Real entry scripts rarely write ``mode=ms.GRAPH_MODE``; they write

* ``mode=args.mode`` with ``parser.add_argument("--mode", default=0)`` (here or in an imported config module);
* ``mode=ms.GRAPH_MODE if args.mode.upper() == "GRAPH" else ms.PYNATIVE_MODE`` with ``default="GRAPH"``;
* ``mode=MODES[cfg["mode"]]`` with ``MODES = {"GRAPH": 0, ...}`` and ``cfg = load_yaml("configs/train.yaml")``;
* ``mode=config.context.mode`` after ``with open("config.json") as f: config = json.load(f)``.

This module evaluates that small language: literals, the mode constants, argparse defaults, names bound once in
the function or the module, dict literals and config files named by a literal path (``config_files``), ``if``
expressions, comparisons, ``and``/``or``/``not`` and the string methods scripts use on mode names. Anything else
is UNKNOWN, and so is everything a user could override without editing the file only in the sense that the
*default* run is what is judged: a script that runs in GRAPH_MODE unless told otherwise is a graph-mode script.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Optional

import libcst as cst

from ms_lint.analysis.config_files import UNKNOWN, is_config_path, read_config
from ms_lint.analysis.values import is_literal, literal_value
from ms_lint.cstutil import param_names, target_names
from ms_lint.walk import find

GRAPH_MODE = "mindspore.GRAPH_MODE"
PYNATIVE_MODE = "mindspore.PYNATIVE_MODE"
_STRING_METHODS = {"upper": str.upper, "lower": str.lower, "strip": str.strip, "capitalize": str.capitalize,
                   "title": str.title}
_STRING_TESTS = {"startswith": str.startswith, "endswith": str.endswith}
_MAX_DEPTH = 24


@dataclass(frozen=True)
class Mode:
    """``ms.GRAPH_MODE`` / ``ms.PYNATIVE_MODE`` as a value (``"graph"`` / ``"pynative"``)."""

    name: str


@dataclass(frozen=True)
class OpenedFile:
    """``open("configs/train.yaml")``: what a loader reads the config from."""

    path: str


def mode_value(value: object) -> Optional[str]:
    """``"graph"`` / ``"pynative"`` for a value that set_context reads as a mode, else None."""
    if isinstance(value, Mode):
        return value.name
    if isinstance(value, bool):
        return None
    if value == 0 and isinstance(value, int):
        return "graph"
    if value == 1 and isinstance(value, int):
        return "pynative"
    return None


class ScriptValues:
    """Evaluates expressions of one module (a ``ModuleContext``) at its default run."""

    def __init__(self, context):
        self.context = context
        self.folder = os.path.dirname(os.path.abspath(context.path))
        self._bindings: Dict[int, Dict[str, List[cst.BaseExpression]]] = {}
        self._active: set = set()

    # -- entry -----------------------------------------------------------------------------------------
    def value(self, expr: cst.BaseExpression, function: Optional[cst.FunctionDef], depth: int = 0) -> object:
        if depth > _MAX_DEPTH:
            return UNKNOWN
        try:
            return self._value(expr, function, depth + 1)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError):
            return UNKNOWN

    def _value(self, expr, function, depth) -> object:
        qualified = self.context.imports.qualify(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
        if qualified == GRAPH_MODE:
            return Mode("graph")
        if qualified == PYNATIVE_MODE:
            return Mode("pynative")
        if isinstance(expr, (cst.Integer, cst.SimpleString, cst.ConcatenatedString, cst.Float)) and is_literal(expr):
            return literal_value(expr)
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[expr.value]
            return self._name(expr.value, function, depth)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, function, depth)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, function, depth)
        if isinstance(expr, cst.Dict):
            return self._dict(expr, function, depth)
        if isinstance(expr, cst.IfExp):
            test = self.value(expr.test, function, depth)
            if test is UNKNOWN or isinstance(test, (Mode, OpenedFile, dict)):
                return UNKNOWN
            return self.value(expr.body if test else expr.orelse, function, depth)
        if isinstance(expr, cst.Comparison):
            return self._comparison(expr, function, depth)
        if isinstance(expr, cst.BooleanOperation):
            left = self.value(expr.left, function, depth)
            if left is UNKNOWN or not _plain(left):
                return UNKNOWN
            if isinstance(expr.operator, cst.And):
                return self.value(expr.right, function, depth) if left else left
            return left if left else self.value(expr.right, function, depth)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            inner = self.value(expr.expression, function, depth)
            return UNKNOWN if inner is UNKNOWN or not _plain(inner) else (not inner)
        if isinstance(expr, cst.Call):
            return self._call(expr, function, depth)
        return UNKNOWN

    # -- names and bindings -----------------------------------------------------------------------------
    def _name(self, name: str, function, depth) -> object:
        scopes = [function, None] if function is not None else [None]
        for scope in scopes:
            if scope is not None and name in param_names(scope):
                return UNKNOWN
            bound = self._bindings_of(scope).get(name)
            if bound is None:
                continue
            if len(bound) != 1 or (id(bound[0]), name) in self._active:
                return UNKNOWN
            self._active.add((id(bound[0]), name))
            try:
                return self.value(bound[0], scope, depth)
            finally:
                self._active.discard((id(bound[0]), name))
        return UNKNOWN

    def _bindings_of(self, scope: Optional[cst.FunctionDef]) -> Dict[str, List[cst.BaseExpression]]:
        """``name = value`` and ``with open(...) as name`` in one function body (or at module level), not
        entering nested definitions; a name bound any other way (loop targets, augmented or tuple assignments,
        imports) is given a second, unreadable binding so it reads as UNKNOWN."""
        key = id(scope)
        if key in self._bindings:
            return self._bindings[key]
        root = scope.body if scope is not None else self.context.module
        found: Dict[str, List[cst.BaseExpression]] = {}
        prune = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
        for node in find(root, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.WithItem, cst.For, cst.NamedExpr),
                         prune=prune):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        found.setdefault(target.target.value, []).append(node.value)
                    else:
                        for name in target_names(target.target, include_starred=True):
                            found.setdefault(name, []).extend([cst.Name("None"), cst.Name("None")])
            elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name) and node.value is not None:
                found.setdefault(node.target.value, []).append(node.value)
            elif isinstance(node, cst.WithItem) and node.asname is not None and isinstance(node.asname.name, cst.Name):
                found.setdefault(node.asname.name.value, []).append(node.item)
            else:
                target = node.target
                for name in target_names(target, include_starred=True):
                    found.setdefault(name, []).extend([cst.Name("None"), cst.Name("None")])
        self._bindings[key] = found
        return found

    # -- containers -----------------------------------------------------------------------------------
    def _attribute(self, expr: cst.Attribute, function, depth) -> object:
        holder = expr.value
        if isinstance(holder, cst.Name) and self.context.project is not None:
            holder_value = self.value(holder, function, depth)
            if isinstance(holder_value, dict):
                return _item(holder_value, expr.attr.value)
            if holder_value is UNKNOWN:
                default = self.context.project.argparse_default(holder.value, expr.attr.value)
                return _from_argparse(default)
            return UNKNOWN
        holder_value = self.value(holder, function, depth)
        return _item(holder_value, expr.attr.value) if isinstance(holder_value, dict) else UNKNOWN

    def _subscript(self, expr: cst.Subscript, function, depth) -> object:
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return UNKNOWN
        container = self.value(expr.value, function, depth)
        if not isinstance(container, dict):
            return UNKNOWN
        key = self.value(expr.slice[0].slice.value, function, depth)
        if key is UNKNOWN or not _plain(key):
            return UNKNOWN
        return _item(container, key)

    def _dict(self, expr: cst.Dict, function, depth) -> object:
        result = {}
        for element in expr.elements:
            if not isinstance(element, cst.DictElement):
                return UNKNOWN
            key = self.value(element.key, function, depth)
            if key is UNKNOWN or not _plain(key):
                return UNKNOWN
            result[key] = self.value(element.value, function, depth)
        return result

    def _comparison(self, expr: cst.Comparison, function, depth) -> object:
        if len(expr.comparisons) != 1:
            return UNKNOWN
        target = expr.comparisons[0]
        left = self.value(expr.left, function, depth)
        right = self.value(target.comparator, function, depth)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        operator = target.operator
        if isinstance(operator, (cst.Equal, cst.NotEqual)):
            if not (_plain(left) and _plain(right)) and not (isinstance(left, Mode) or isinstance(right, Mode)):
                return UNKNOWN
            same = _same(left, right)
            return same if isinstance(operator, cst.Equal) else not same
        if isinstance(operator, (cst.In, cst.NotIn)) and isinstance(right, (str, dict, tuple, list)) and _plain(left):
            inside = left in right
            return inside if isinstance(operator, cst.In) else not inside
        return UNKNOWN

    # -- calls ----------------------------------------------------------------------------------------
    def _call(self, call: cst.Call, function, depth) -> object:
        func = call.func
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _STRING_METHODS and not call.args:
                subject = self.value(func.value, function, depth)
                return _STRING_METHODS[method](subject) if isinstance(subject, str) else UNKNOWN
            if method in _STRING_TESTS and len(positional) == 1 and len(call.args) == 1:
                subject = self.value(func.value, function, depth)
                prefix = self.value(positional[0], function, depth)
                if isinstance(subject, str) and isinstance(prefix, (str, tuple)):
                    return _STRING_TESTS[method](subject, prefix)
                return UNKNOWN
            if method == "get" and 1 <= len(positional) <= 2 and len(call.args) == len(positional):
                container = self.value(func.value, function, depth)
                if isinstance(container, dict):
                    key = self.value(positional[0], function, depth)
                    if key is UNKNOWN or not _plain(key):
                        return UNKNOWN
                    if key in container:
                        return container[key]
                    return self.value(positional[1], function, depth) if len(positional) == 2 else None
                return UNKNOWN
        if isinstance(func, cst.Name) and func.value in ("str", "int") and len(positional) == 1 and len(call.args) == 1:
            inner = self.value(positional[0], function, depth)
            if isinstance(inner, (str, int)) and not isinstance(inner, bool):
                return (str if func.value == "str" else int)(inner)
            return UNKNOWN
        if isinstance(func, cst.Name) and func.value == "open" and positional:
            path = self.value(positional[0], function, depth)
            return OpenedFile(path) if isinstance(path, str) else UNKNOWN
        if positional:
            # A loader handed a config file as its first argument: ``load_yaml_config("configs/x.yaml")``,
            # ``yaml.safe_load(open("x.yaml"))``, ``json.load(f)`` with ``with open("x.json") as f``.
            first = self.value(positional[0], function, depth)
            path = first.path if isinstance(first, OpenedFile) else first
            if isinstance(path, str) and is_config_path(path):
                found = self._read(path)
                return found if found is not None else UNKNOWN
        return UNKNOWN

    def _read(self, path: str) -> Optional[dict]:
        """A config file named relative to the script's folder (where such scripts are run from), or absolute."""
        candidate = path if os.path.isabs(path) else os.path.join(self.folder, path)
        return read_config(os.path.normpath(candidate))


def _from_argparse(default: object) -> object:
    from ms_lint.analysis.summary import NOT_LITERAL

    if default is NOT_LITERAL:
        return UNKNOWN
    if default == GRAPH_MODE:
        return Mode("graph")
    if default == PYNATIVE_MODE:
        return Mode("pynative")
    if isinstance(default, str) and default.startswith("mindspore."):
        return UNKNOWN  # another qualified name (``default=ms.context.X``): not a value we read
    return default


def _item(container: dict, key: object) -> object:
    return container.get(key, UNKNOWN) if isinstance(container, dict) else UNKNOWN


def _plain(value: object) -> bool:
    return isinstance(value, (str, int, float, bool, tuple)) or value is None


def _same(left: object, right: object) -> bool:
    left_mode = mode_value(left) if isinstance(left, (Mode, int)) else None
    right_mode = mode_value(right) if isinstance(right, (Mode, int)) else None
    if isinstance(left, Mode) or isinstance(right, Mode):
        return left_mode is not None and left_mode == right_mode
    return left == right
