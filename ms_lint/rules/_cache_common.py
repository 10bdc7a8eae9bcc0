"""What the compile-cache rules (MSL301-MSL303) share: finding ``set_context`` calls, reading their ``mode`` and
cache keys, telling scripts from libraries, and spelling the environment-variable statements.

Facts measured on MindSpore 2.10 (CPU) that the rules rely on:

* ``MS_COMPILER_CACHE_ENABLE`` / ``MS_COMPILER_CACHE_PATH`` are read at **every graph compile**, not at import:
  a variable set after ``import mindspore`` (even between two compiles) takes effect for the next compile.
* A value given to ``set_context(enable_compile_cache=..., compile_cache_path=...)`` **overrides** the
  environment variables (context ``False`` beats ``MS_COMPILER_CACHE_ENABLE=1``; context path beats the
  variable's path). So the exact equivalent of the deprecated keys is an assignment
  ``os.environ[...] = ...``, not ``setdefault``.
* ``MS_COMPILER_CACHE_ENABLE`` enables the cache only when it is ``"1"``.
* The cache keys on the entry script and the local modules it imports at top level (``_get_compile_cache_dep_files``
  in ``mindspore/graph/api.py``), never on environment variables, arguments, config files, installed packages or
  input shapes and dtypes. A hit logs ``Use the compilation cache and execute the backend actions only. Be aware
  of correctness risks.``
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

import libcst as cst

from ms_lint.context import ModuleContext
from ms_lint.diagnostics import ImportRequest
from ms_lint.names import dotted
from ms_lint.scope import JIT_NAMES, ModuleCall, is_cell_base
from ms_lint.analysis.values import is_literal, literal_value
from ms_lint.walk import find

SET_CONTEXT = "mindspore.set_context"
GRAPH_MODE = "mindspore.GRAPH_MODE"
PYNATIVE_MODE = "mindspore.PYNATIVE_MODE"
ENABLE_VAR = "MS_COMPILER_CACHE_ENABLE"
PATH_VAR = "MS_COMPILER_CACHE_PATH"
CACHE_KEYS = ("enable_compile_cache", "compile_cache_path")
# Text a module that turns the cache on must contain: the variable's name (compared as a literal) or the keyword.
ENABLING_TEXT = (ENABLE_VAR, "enable_compile_cache")

# One sentence every cache rule repeats: what the cache does NOT see (measured on MindSpore 2.10 CPU).
KEY_WARNING = (
    "the cache keys only on the entry script and the local modules it imports at top level, not on environment "
    "variables, command-line arguments, config files, installed packages, or the shapes and dtypes of the inputs "
    "(measured on 2.10: 8x8 and 3x3 inputs both came back as 4x4 outputs from a cached graph)"
)


# -- walking the module ----------------------------------------------------------------------------------
CallInfo = ModuleCall  # a call anywhere in the module, with where it sits


def module_calls(context: ModuleContext) -> List[CallInfo]:
    """Every call in the module, in source order, with its innermost enclosing def and statement line (walked once
    per file, by the scope)."""
    return context.scope.calls


def set_context_calls(context: ModuleContext) -> List[CallInfo]:
    return [info for info in module_calls(context) if context.imports.qualify(info.call.func) == SET_CONTEXT]


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def has_star(call: cst.Call) -> bool:
    return any(arg.star for arg in call.args)


def mode_of(context: ModuleContext, call: cst.Call, function: Optional[cst.FunctionDef] = None) -> Optional[str]:
    """``"graph"``, ``"pynative"``, ``"unknown"`` (a mode not visible statically), or None (no mode key).

    Beyond the literal spellings, the mode the script runs with by default (``ms_lint.analysis.script_values``):
    argparse defaults, config files named by a literal path, ``if`` expressions on them. ``function`` is the def
    the call sits in (its local bindings are read), None at module level."""
    arg = keyword(call, "mode")
    if arg is None:
        return "unknown" if has_star(call) else None
    value = arg.value
    qualified = context.imports.qualify(value)
    if qualified == GRAPH_MODE:
        return "graph"
    if qualified == PYNATIVE_MODE:
        return "pynative"
    if isinstance(value, cst.Integer) and is_literal(value):
        return {0: "graph", 1: "pynative"}.get(literal_value(value), "unknown")
    if context.project is None:
        return "unknown"
    from ms_lint.analysis.script_values import ScriptValues, mode_value

    return mode_value(ScriptValues(context).value(value, function)) or "unknown"


def mentions_cache_settings(text: str) -> bool:
    """The module configures the compile cache in some way (or deliberately disables it): leave it alone."""
    return "MS_COMPILER_CACHE" in text or "enable_compile_cache" in text or "compile_cache_path" in text


# -- does the script turn the cache on? ---------------------------------------------------------------------
def enables_cache(context: ModuleContext) -> bool:
    """True when the module itself turns the compile cache on, with literal values we can read.

    ``os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"``, ``os.environ.setdefault(..., "1")``,
    ``os.putenv(..., "1")`` or ``set_context(enable_compile_cache=True)``.
    """
    if not any(text in context.text for text in ENABLING_TEXT):
        return False
    for info in module_calls(context):
        qualified = context.imports.qualify(info.call.func)
        args = [a for a in info.call.args if a.keyword is None and not a.star]
        if qualified in ("os.environ.setdefault", "os.putenv") and len(args) == 2:
            if _literal(args[0].value) == ENABLE_VAR and _literal(args[1].value) == "1":
                return True
        if qualified == SET_CONTEXT:
            arg = keyword(info.call, "enable_compile_cache")
            if arg is not None and _literal(arg.value) is True:
                return True
    # Every assignment statement (none sits inside an expression, so expressions are not entered).
    for stmt in find(context.module, cst.Assign, prune=(cst.BaseExpression,)):
        if _literal(stmt.value) == "1":
            for target in stmt.targets:
                sub = target.target
                if (isinstance(sub, cst.Subscript) and context.imports.qualify(sub.value) == "os.environ"
                        and len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index)
                        and _literal(sub.slice[0].slice.value) == ENABLE_VAR):
                    return True
    return False


def _literal(expr: cst.BaseExpression):
    try:
        return literal_value(expr)
    except (ValueError, AttributeError, TypeError):
        return None


# -- spelling rewrites ------------------------------------------------------------------------------------------
def environ_spelling(context: ModuleContext, module_level: bool = False
                     ) -> Optional[Tuple[str, Tuple[ImportRequest, ...]]]:
    """How a fix writes ``os.environ`` here: an existing alias, else ``os.environ`` with ``import os``.
    ``module_level``: the code goes at module level, where a function's own ``os`` (a parameter, a local
    import) does not shadow the module's ``import os``."""
    if module_level:
        for name in ("os.environ", "os"):
            found = context.imports.local_reference(name)
            if found is not None:
                return (found if name == "os.environ" else f"{found}.environ"), ()
    existing = context.existing_reference("os.environ")
    if existing is not None:
        return existing, ()
    spelled = context.spell("os")
    if spelled is not None:
        return f"{spelled[0]}.environ", spelled[1]
    return context.spell("os.environ")


def parse_line(context: ModuleContext, code: str) -> cst.SimpleStatementLine:
    statement = cst.parse_statement(code + context.module.default_newline, config=context.module.config_for_parsing)
    assert isinstance(statement, cst.SimpleStatementLine)
    return statement


def string_literal(value: str) -> str:
    """A double-quoted Python string literal for ``value``."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


SAFE_STEM = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


# -- which calls run graph code ------------------------------------------------------------------------------
MODEL_NAMES = {"mindspore.train.Model", "mindspore.Model", "mindspore.train.model.Model"}
MODEL_METHODS = {"train", "eval", "predict", "fit"}


class _Calls(cst.CSTVisitor):
    """Calls and simple ``name = call(...)`` bindings in run-time code, not entering nested defs or classes."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: List[cst.Call] = []
        self.bindings: List[Tuple[str, cst.BaseExpression]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.bindings.append((target.target.value, node.value))

    @classmethod
    def bindings_in(cls, root: cst.CSTNode) -> List[Tuple[str, cst.BaseExpression]]:
        """What ``collect(root).bindings`` holds, without entering expressions (an ``Assign`` is a statement, so
        none sits inside one): most of a module's nodes are expressions."""
        collector = cls()
        for node in find(root, cst.Assign, prune=(cst.FunctionDef, cst.ClassDef, cst.BaseExpression)):
            collector.visit_Assign(node)
        return collector.bindings

    @classmethod
    def collect(cls, root: cst.CSTNode) -> "_Calls":
        """What ``root.visit(_Calls())`` records, found with ``ms_lint.walk`` (same nodes, same order, faster)."""
        collector = cls()
        for node in find(root, (cst.Call, cst.Assign), prune=(cst.FunctionDef, cst.ClassDef)):
            if isinstance(node, cst.Call):
                collector.visit_Call(node)
            else:
                collector.visit_Assign(node)
        return collector


class GraphRuns:
    """What the module's run-time code (module level and the local functions it calls) does with graph code.

    Bindings are flow-insensitive by name (``net = Net()`` anywhere in run-time code makes ``net(...)`` a Cell
    call): scripts rarely reuse one name for different kinds of objects, and a wrong guess only loses a finding.
    """

    def __init__(self, context: ModuleContext):
        self.context = context
        scope = context.scope
        self.jit_functions = {
            name for name, func in scope.module_functions.items()
            if any(d in JIT_NAMES for d in scope.decorator_names(func))
        }
        self.jit_cells = {
            name for name, info in scope.classes.items()
            if info.is_cell and _jit_construct(context, name)
        }
        self.local_cells = {name for name, info in scope.classes.items() if info.is_cell}
        self.reachable: List[cst.FunctionDef] = []  # local functions called from run-time code
        self.calls: List[cst.Call] = []
        bindings: List[Tuple[str, cst.BaseExpression]] = []
        pending: List[cst.CSTNode] = [stmt for stmt in context.module.body
                                      if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef))]
        seen = set()
        while pending:
            node = pending.pop(0)
            collector = _Calls.collect(node.body if isinstance(node, cst.FunctionDef) else node)
            self.calls.extend(collector.calls)
            bindings.extend(collector.bindings)
            for call in collector.calls:
                if isinstance(call.func, cst.Name) and call.func.value in scope.module_functions:
                    func = scope.module_functions[call.func.value]
                    if func not in seen and not scope.is_graph_function(func):
                        seen.add(func)
                        self.reachable.append(func)
                        pending.append(func)
        # Every binding in non-graph module code, reachable or not, for the instance kinds.
        for func in scope.module_functions.values():
            if func not in seen and not scope.is_graph_function(func):
                bindings.extend(_Calls.bindings_in(func.body))
        self.kinds: dict = {}
        for name, value in bindings:
            kind = self._instance_kind(value)
            if kind is not None:
                self.kinds.setdefault(name, kind)
        # ``parser.parse_args()`` / ``sys.argv`` in run-time code: a library does not read the command line.
        self.reads_command_line = any(
            (isinstance(call.func, cst.Attribute) and call.func.attr.value in ("parse_args", "parse_known_args"))
            or any(context.imports.qualify(arg.value) == "sys.argv" for arg in call.args)
            for call in self.calls
        )
        modes = [mode_of(context, info.call, info.function) for info in set_context_calls(context)]
        self.graph_mode = "graph" in modes
        self.graph_mode_possible = "graph" in modes or "unknown" in modes

    def _instance_kind(self, value: cst.BaseExpression) -> Optional[str]:
        if not isinstance(value, cst.Call):
            return None
        qualified = self.context.imports.qualify(value.func)
        if qualified in JIT_NAMES:
            return "jit"
        if qualified in MODEL_NAMES:
            return "model"
        if isinstance(value.func, cst.Name):
            name = value.func.value
            if name in self.jit_cells:
                return "jit-cell"
            if name in self.local_cells:
                return "cell"
        if is_cell_base(qualified) or self._project_cell(value.func):
            return "cell"
        return None

    def _project_cell(self, func: cst.BaseExpression) -> bool:
        """``LeNet5()`` imported from another module of the project, whose class is a Cell."""
        name = dotted(func)
        return name is not None and self.context.scope.is_cell_class(name)

    def may_compile(self, ignoring: Optional[Tuple[str, str]] = None) -> bool:
        """Does run-time code call anything that can compile a graph: a Cell, a ``@jit`` function, a Model method,
        or a function or class of the project (``train(args)``, ``Attack(net).generate(x)``)? A script that only
        reads a dataset or converts files compiles nothing and needs no cache. ``ignoring``: a project function
        (module, name) known not to compile (the helper that only sets the mode)."""
        if self.first_run(graph_mode=True) is not None:
            return True
        project = self.context.project
        followed = {func.name.value for func in self.reachable}
        for call in self.calls:
            name = dotted(call.func)
            if name is None:
                continue
            target = project.project_target(name) if project is not None else None
            if target is not None and (target == ignoring or (
                    target[0] == project.module and target[1] in followed)):
                continue  # the helper that only sets the mode; a local function whose calls are in self.calls
            if target is not None:
                return True
            qualified = self.context.imports.qualify(call.func)
            if qualified is not None and not _known_not_to_compile(qualified) and (
                    project is None or project.index.resolve(qualified) is None):
                return True  # ``from src.trainer import train``: a module we cannot read may run the network
        return False

    def call_kind(self, call: cst.Call) -> Optional[str]:
        """``"jit"`` (always compiles), ``"cell"`` (compiles in GRAPH_MODE), ``"model"`` (a Model method that
        runs the network), or None."""
        func = call.func
        if isinstance(func, cst.Call) and self.context.imports.qualify(func.func) in JIT_NAMES:
            return "jit"
        if isinstance(func, cst.Call) and isinstance(func.func, cst.Name):
            if func.func.value in self.jit_cells:
                return "jit"
            if func.func.value in self.local_cells or self._project_cell(func.func):
                return "cell"
        if isinstance(func, cst.Call) and (is_cell_base(self.context.imports.qualify(func.func))
                                           or self._project_cell(func.func)):
            return "cell"  # ``nn.Dense(2, 2)(x)``, ``models.Net()(x)``: a Cell built and called in one expression
        if isinstance(func, cst.Name):
            if func.value in self.jit_functions:
                return "jit"
            kind = self.kinds.get(func.value)
            if kind in ("jit", "jit-cell"):
                return "jit"
            if kind == "cell":
                return "cell"
        if (isinstance(func, cst.Attribute) and func.attr.value in MODEL_METHODS
                and isinstance(func.value, cst.Name) and self.kinds.get(func.value.value) == "model"):
            return "model"
        return None

    def first_run(self, graph_mode: bool) -> Optional[cst.Call]:
        """The first call in run-time code that compiles a graph (Cell and Model calls count in GRAPH_MODE)."""
        for call in self.calls:
            kind = self.call_kind(call)
            if kind == "jit" or (graph_mode and kind in ("cell", "model")):
                return call
        return None


# Imported callables that never compile a graph: the standard library and the usual data and config packages.
_NEVER_COMPILES = {
    "argparse", "os", "sys", "json", "time", "logging", "pathlib", "shutil", "glob", "random", "math", "re",
    "datetime", "collections", "itertools", "functools", "pickle", "csv", "copy", "warnings", "subprocess",
    "numpy", "yaml", "tqdm", "PIL", "cv2", "pandas", "matplotlib", "easydict", "ast", "typing", "io", "zipfile",
}


def _known_not_to_compile(qualified: str) -> bool:
    top = qualified.split(".")[0]
    if top in _NEVER_COMPILES:
        return True
    # MindSpore's own calls compile only through a Cell, a @jit function or a Model, which call_kind sees;
    # export and the Model constructor are the exceptions that run a network themselves.
    return top == "mindspore" and qualified.rsplit(".", 1)[-1] not in ("export", "Model", "build_train_network")


def _jit_construct(context: ModuleContext, class_name: str) -> bool:
    method = context.scope.find_method(class_name, "construct")
    return method is not None and any(d in JIT_NAMES for d in context.scope.decorator_names(method))
