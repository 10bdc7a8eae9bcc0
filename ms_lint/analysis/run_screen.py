"""Could the module's run-time code call ``@jit`` graph code? Asked with the stdlib ``ast`` before libcst parses.

MSL301 reports a script that never turns the compile cache on in two cases (``MissingCompileCache.check_module``):
it sets GRAPH_MODE (a ``set_context(mode=...)`` call in the module, which the pre-filter's
``CalledWith("set_context", "mode")`` finds in the text), or its run-time code calls ``@jit`` graph code
(``GraphRuns.first_run(graph_mode=False)`` in ``ms_lint/rules/_cache_common.py``). A library module that only
defines ``@jit`` functions passes the pre-filter and, before this screen, was parsed with libcst (a tenth of the
eight model packages' parses) for a rule that could not fire there.

``first_run(graph_mode=False)`` returns a call whose ``call_kind`` is ``"jit"``, one of:

* ``jit(f)(x)``: the callee is a call of what ``ImportTable.qualify`` resolves to ``mindspore.jit`` or
  ``mindspore.ms_function``;
* ``Net()(x)``: the callee is a call of a class of the module whose ``construct`` has such a decorator;
* ``step(x)``: a module function with such a decorator, or a name that an ``=`` binding in the module's non-graph
  code binds to a call of the first two kinds (``step = jit(f)``, ``net = Net()``).

``qualify`` follows imports only, and keeps the last name of the dotted name written (``canonical`` only rewrites
the package path): such a decorator or callee is written ending in ``jit`` or ``ms_function``, unless an import
renames one of them (``from mindspore import jit as J``), and then this screen cannot tell.

:func:`may_run_jit` answers False only when no call that ``GraphRuns`` may count as run-time code has one of the
shapes above. Its run-time code is the module's statements other than defs and classes, and the module functions
they call that are not graph code, none of them entered into the defs and classes nested in them; its bindings
are read there and in every module function that is not graph code. The screen reads a superset: the calls in
the statements other than defs and classes and in the bodies of the module functions without a ``jit``-named
decorator (the others count only through a call of them, which is one of the shapes), and the bindings in all of
them. ``@jit`` functions are the module-level defs with a ``jit``-named decorator, ``@jit`` Cells the classes at
any depth whose ``construct`` has one or that name such a class of the module as a base. A rename is looked for
in the text and in the imports of the tree. Anything it cannot read (a syntax error, nesting too deep) is a "maybe".
"""
from __future__ import annotations

import ast
import warnings
from typing import Dict, Iterable, List, Set

from ms_lint.chunks import ast_runs, chunk_bounds
from ms_lint.prefilter import JIT_ALIAS, JIT_WORDS


def may_run_jit(text: str, path: str = "<module>") -> bool:
    """False when no call of the module can be a call of ``@jit`` graph code (see the module docstring)."""
    if JIT_ALIAS.search(text):  # a rename, over the raw text: a superset of the code's
        return True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trees = _trees(text, path)
        return _renames_jit(trees) or _may_call_jit(trees)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True


def _renames_jit(trees: Iterable[ast.Module]) -> bool:
    """An import that binds ``jit`` or ``ms_function`` under another name (``JIT_ALIAS`` misses one with a comment
    between the name and ``as``)."""
    return any(isinstance(node, (ast.Import, ast.ImportFrom)) and any(
        alias.asname is not None and alias.name.rsplit(".", 1)[-1] in JIT_WORDS for alias in node.names)
        for tree in trees for node in ast.walk(tree))


def _trees(text: str, path: str) -> List[ast.Module]:
    """The module's trees: a long one a run of top-level statements at a time (``ms_lint.chunks``, a fraction of a
    whole parse's memory), else whole."""
    bounds = chunk_bounds(text)
    if len(bounds) > 1:
        try:
            return list(ast_runs(text, bounds, path))
        except (SyntaxError, ValueError):
            pass  # a cut inside a bracket or a string: the whole module decides
    return [ast.parse(text, path)]


def _jit_named(expr: ast.AST) -> bool:
    """A name or attribute whose last name is ``jit`` or ``ms_function`` (what ``qualify`` may resolve to them)."""
    if isinstance(expr, ast.Name):
        return expr.id in JIT_WORDS
    return isinstance(expr, ast.Attribute) and expr.attr in JIT_WORDS


def _jit_decorated(node: ast.AST) -> bool:
    return any(_jit_named(decorator.func if isinstance(decorator, ast.Call) else decorator)
               for decorator in getattr(node, "decorator_list", ()))


def _may_call_jit(trees: Iterable[ast.Module]) -> bool:
    calls: List[ast.Call] = []
    bindings: List[ast.Assign] = []
    jit_functions: Set[str] = set()
    classes: List[ast.ClassDef] = []
    for tree in trees:
        for stmt in tree.body:
            kind = type(stmt)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef):
                if _jit_decorated(stmt):
                    # its calls count only if run-time code calls it (GraphRuns follows non-graph functions only),
                    # and such a call is one of the shapes already; its bindings count if it is not graph code
                    # after all (``@numba.jit``: ``qualify`` does not make it ``mindspore.jit``)
                    jit_functions.add(stmt.name)  # type: ignore[attr-defined]
                    _run_time_nodes(stmt.body, [], bindings)  # type: ignore[attr-defined]
                else:
                    _run_time_nodes(stmt.body, calls, bindings)  # type: ignore[attr-defined]
            elif kind is ast.ClassDef:
                classes.extend(node for node in ast.walk(stmt) if isinstance(node, ast.ClassDef))
            else:
                _run_time_nodes([stmt], calls, bindings)
    jit_classes = _jit_classes(classes)

    def makes_jit(call: ast.AST) -> bool:
        """A call ``_instance_kind`` may give the kind "jit" or "jit-cell"."""
        return isinstance(call, ast.Call) and (
            _jit_named(call.func) or (isinstance(call.func, ast.Name) and call.func.id in jit_classes))

    bound = set(jit_functions)
    for binding in bindings:
        if makes_jit(binding.value):
            bound.update(target.id for target in binding.targets if isinstance(target, ast.Name))
    return any(makes_jit(call.func) or (isinstance(call.func, ast.Name) and call.func.id in bound)
               for call in calls)


_NOT_ENTERED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _jit_classes(classes: List[ast.ClassDef]) -> Set[str]:
    """Names of the classes (any depth) whose ``construct`` may have a ``jit``-named decorator: their own, or one
    they inherit from a class of the module named as a base (``GraphScope.find_method`` follows bases written as
    plain names; a closer ``construct`` without one is ignored, which only keeps more)."""
    bases: Dict[str, List[str]] = {}
    for node in classes:  # two classes of one name: the bases of both
        bases.setdefault(node.name, []).extend(base.id for base in node.bases if isinstance(base, ast.Name))
    found = {node.name for node in classes if _jit_construct(node)}
    grown = True
    while grown:
        grown = False
        for name, named in bases.items():
            if name not in found and any(base in found for base in named):
                found.add(name)
                grown = True
    return found


def _jit_construct(node: ast.ClassDef) -> bool:
    return any(isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "construct"
               and _jit_decorated(stmt) for stmt in node.body)


def _run_time_nodes(statements: List[ast.stmt], calls: List[ast.Call], bindings: List[ast.Assign]) -> None:
    """The calls and assignments in ``statements``, not entering the defs and classes nested in them (what
    ``_Calls.collect`` and ``_Calls.bindings_in`` read; a lambda's body is entered there, and here too)."""
    stack: List[ast.AST] = list(reversed(statements))
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Call:
            calls.append(node)  # type: ignore[arg-type]
        elif kind is ast.Assign:
            bindings.append(node)  # type: ignore[arg-type]
        elif kind in _NOT_ENTERED:
            continue
        stack.extend(ast.iter_child_nodes(node))
