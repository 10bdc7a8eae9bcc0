"""Derive what MindSpore's API returns (Tensor, tuple of Tensors) from the installed MindSpore's own docstrings.

    python tools/derive_mindspore_api.py            # rewrites ms_lint/data/mindspore_api.json

Reads the source with ``ast`` (MindSpore is never imported): for every public class of ``mindspore.nn`` and
``mindspore.amp``, each public method whose docstring's ``Returns:`` section starts with ``Tensor``, ``bool`` (a
graph-side method of a Cell computes it as a bool Tensor, as ``get_overflow_status`` does) or ``tuple[Tensor]``;
and the module functions of ``mindspore.amp`` with such a section. The value model reads the file
(``ms_lint.analysis.values``): ``overflow = self.process_loss_scale(cond)`` in a subclass of
``nn.TrainOneStepWithLossScaleCell`` is a Tensor, ``all_finite(grads)`` is a Tensor.

It also derives what the public classes' ``__init__`` chains assign to ``self.<attr>`` (``attributes``: kinds by
ms-lint's own value model, run on MindSpore's source with libcst; ``attribute_builders``: the qualified name of
the ``HyperMap``/``Map`` that built a mapper attribute; ``bases``: each class's bases among them; ``cells``: the
classes whose bases reach ``nn.Cell``, under every name a package re-exports them by). A subclass uses them
without assigning them:
``self.grad(self.network, weights)(*inputs)`` in a ``TrainOneStepCell`` subclass gives one gradient per weight
(``TrainOneStepCell.__init__`` sets ``self.grad = ops.GradOperation(get_by_list=True, ...)``), and
``self.hyper_map(f, grads)`` in a ``TrainOneStepWithLossScaleCell`` subclass maps over them.

It also lists the host-side queries of ``mint.distributed`` and ``communication`` (``HOST_QUERIES``) that return a
bool, int or str: ``mint.distributed.is_initialized()`` is a Python bool, not a Tensor as ``mint.*`` results are.

It also lists the public functions and classes of ``mindspore.ops``, ``nn`` and ``mint`` by canonical name
(``public``): a name a project re-exports through ``from mindspore.ops.operations import *`` counts as MindSpore's
only when MindSpore defines it.

It also lists MindSpore's compile-time helpers: every module function of the package decorated with
``@constexpr`` or ``@_primexpr`` (or bound as ``name = constexpr(f)``). Their results are Python values computed
while the graph compiles, although they live under ``mindspore.ops``/``mindspore.numpy``, whose functions
otherwise return Tensors (``numpy.utils_const._check_same_type(dtype1, dtype2)`` is a bool, not a Tensor).
"""
from __future__ import annotations

import ast
import json
import os
import re
import sys
from importlib.machinery import PathFinder

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "ms_lint", "data", "mindspore_api.json")
sys.path.insert(0, os.path.join(HERE, ".."))

from ms_lint.analysis.qualnames import CELL_NAME, canonical  # noqa: E402

RETURNS = re.compile(r"^\s*Returns:\s*\n\s*(?P<first>[^\n]+)", re.MULTILINE)
SCANNED = ("nn", "amp.py", "boost")


def kind_of(doc: str, takes_inputs: bool):
    """``bool`` counts only for a method that takes inputs: ``get_overflow_status(status, output)`` computes a
    bool Tensor, ``check_adasum_enable(self)`` answers a Python bool about the configuration."""
    match = RETURNS.search(doc or "")
    if not match:
        return None
    first = match.group("first").strip().lower()
    if re.match(r"(tuple|list)\[tensor\]|tuple\(tensor\)|tuple of tensors?|tuple\[tensor,", first):
        return "tensor-seq"
    if re.match(r"tensor\b", first) or (takes_inputs and re.match(r"bool\b", first)):
        return "tensor"
    return None


COMPILE_TIME = {"constexpr", "_primexpr"}


def _decorator_name(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else (node.id if isinstance(node, ast.Name) else "")


def compile_time_helpers(tree: ast.Module, module: str):
    """Qualified names (as written and canonical) of the module's ``@constexpr``/``@_primexpr`` functions."""
    for node in tree.body:
        names = []
        if isinstance(node, ast.FunctionDef) and any(_decorator_name(d) in COMPILE_TIME for d in node.decorator_list):
            names = [node.name]
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
              and _decorator_name(node.value) in COMPILE_TIME):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        for name in names:
            yield f"{module}.{name}"
            yield canonical(f"{module}.{name}")


def parsed_modules(start: str, site: str):
    """(dotted module name, ast) of ``start`` (a ``.py`` file) or of every ``.py`` file under it, in path order;
    files that do not parse are skipped."""
    files = [start] if start.endswith(".py") else [
        os.path.join(folder, name) for folder, _, names in os.walk(start) for name in names if name.endswith(".py")]
    for path in sorted(files):
        module = os.path.relpath(path, site)[:-3].replace(os.sep, ".").removesuffix(".__init__")
        try:
            yield module, ast.parse(open(path, encoding="utf-8").read())
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue


# Kinds left out of ``attributes``: UNKNOWN is the value model's answer without the data. A call of a Cell or of a
# primitive counts as a Tensor there, while MindSpore's own cells and primitives in these slots may give tuples
# (``grad_reducer``: ``DistributedGradReducer`` gives one gradient per weight; ``Distribution.checktuple``: the
# shape tuple it checks); mappers are kept by ``attribute_builders`` instead.
LEFT_OUT = {"unknown", "cell", "cell-seq", "op"}


def _reaches_cell(name: str, bases, seen=()) -> bool:
    return name == CELL_NAME or (name not in seen and any(_reaches_cell(base, bases, seen + (name,))
                                                          for base in bases.get(name, ())))


def class_attributes(root: str, site: str):
    """(cells, (attributes, builders, bases)): MindSpore's public classes whose bases reach ``nn.Cell``; for each
    public class of the scanned modules (canonical name, and the names packages re-export it by), the kinds
    ms-lint's value model gives the ``self.<attr>`` the class's methods and its in-module bases' assign; the
    builders of those a ``HyperMap``/``Map`` built; and its bases among these classes (the value model follows
    them, a class's own writes winning over its bases', the first base over later ones)."""
    from ms_lint.analysis.values import MAPPERS
    from ms_lint.config import Config
    from ms_lint.context import ModuleContext
    from ms_lint.cstutil import parse_module

    attributes, builders, bases = {}, {}, {}
    for scanned in SCANNED:
        start = os.path.join(root, scanned)
        files = [start] if start.endswith(".py") else sorted(
            os.path.join(folder, name) for folder, _, names in os.walk(start) for name in names
            if name.endswith(".py"))
        for path in files:
            module = os.path.relpath(path, site)[:-3].replace(os.sep, ".").removesuffix(".__init__")
            try:
                text = open(path, encoding="utf-8").read()
                context = ModuleContext(parse_module(text), text, path, Config())
            except Exception:  # a file libcst or the analysis cannot read: its classes stay unknown
                continue
            for name, info in context.scope.classes.items():
                if "." in name or name.startswith("_"):
                    continue  # nested or private: never a public base
                qualname = canonical(f"{module}.{name}")
                assigned = context.attributes.assigned(name, uniform=True)  # a kind by mode is no kind
                attributes[qualname] = {attr: kind.value for attr, kind in sorted(assigned.items())
                                        if kind.value not in LEFT_OUT}
                builders[qualname] = {attr: built for attr in sorted(assigned)
                                      for built in [context.attributes.made_by(name, attr)] if built in MAPPERS}
                bases[qualname] = [canonical(context.imports.qualify(base.value) or "") for base in info.node.bases]
    for alias, name in reexports(root, site).items():  # ``mindspore.boost.GradientAccumulation``, as imported
        for table in (attributes, builders, bases):
            if name in table and alias not in table:
                table[alias] = table[name]
    cells = sorted(name for name in bases if _reaches_cell(name, bases))
    bases = {name: [base for base in found if base in attributes] for name, found in bases.items()}
    return cells, ({name: found for name, found in sorted(attributes.items()) if found},
            {name: found for name, found in sorted(builders.items()) if found},
            {name: found for name, found in sorted(bases.items()) if found})


def reexports(root: str, site: str):
    """Public name -> defining name for each class a scanned package's ``__init__.py`` imports from one of its
    modules (``from mindspore.boost.grad_accumulation import GradientAccumulation`` in ``mindspore/boost``)."""
    found = {}
    for scanned in SCANNED:
        start = os.path.join(root, scanned)
        if start.endswith(".py"):
            continue
        for folder, _, names in os.walk(start):
            if "__init__.py" not in names:
                continue
            package = os.path.relpath(folder, site).replace(os.sep, ".")
            try:
                tree = ast.parse(open(os.path.join(folder, "__init__.py"), encoding="utf-8").read())
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    for alias in node.names:
                        if alias.name != "*" and alias.name[:1].isupper():
                            found[f"{package}.{alias.asname or alias.name}"] = canonical(f"{node.module}.{alias.name}")
                elif isinstance(node, ast.ImportFrom) and node.level and node.module:
                    module = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + [node.module])
                    for alias in node.names:
                        if alias.name != "*" and alias.name[:1].isupper():
                            found[f"{package}.{alias.asname or alias.name}"] = canonical(f"{module}.{alias.name}")
    return found


# Modules of host-side queries about the distributed setup (``get_rank()``, ``is_initialized()``): the functions
# whose docstring says they return a bool, int or str give Python values, although ``mint.*`` otherwise gives Tensors.
HOST_QUERIES = ("mint/distributed/distributed.py", "communication/management.py")
PYTHON_RESULT = re.compile(r"(bool|int|str)\b")


def host_queries(root: str, site: str):
    """(qualified name, "const") of the public functions of ``HOST_QUERIES`` returning Python values, under their
    module's name and the names of the packages whose ``__init__`` imports them."""
    for relative in HOST_QUERIES:
        path = os.path.join(root, relative)
        if not os.path.isfile(path):  # another MindSpore version
            continue
        for module, tree in parsed_modules(path, site):
            found = set()
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                    match = RETURNS.search(ast.get_docstring(node) or "")
                    if match and PYTHON_RESULT.match(match.group("first").strip()):
                        found.add(node.name)
                        yield f"{module}.{node.name}", "const"
            package = module.rsplit(".", 1)[0]
            init = os.path.join(os.path.dirname(path), "__init__.py")
            for _, init_tree in parsed_modules(init, site):
                for node in ast.walk(init_tree):
                    if isinstance(node, ast.ImportFrom) and node.module in (module, module.rsplit(".", 1)[-1]):
                        for alias in node.names:
                            if alias.name in found:
                                yield f"{package}.{alias.asname or alias.name}", "const"


# Packages whose public names the value model may meet through a project's ``from mindspore.ops... import *``
# re-export (tinyms' ``primitives``): the canonical names of their modules' public functions and classes.
PUBLIC_PACKAGES = ("ops", "nn", "mint")


def public_names(root: str, site: str):
    """Canonical names of the public top-level functions and classes of ``PUBLIC_PACKAGES``' modules (for ``ops``
    and ``nn`` also under the package itself: ``ops.operations.manually_defined.ops_def.Cast`` is ``ops.Cast``)."""
    for package in PUBLIC_PACKAGES:
        for module, tree in parsed_modules(os.path.join(root, package), site):
            if any(part.startswith("_") for part in module.split(".")[1:]):
                continue
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                    yield canonical(f"{module}.{node.name}")
                    if package in ("ops", "nn"):  # re-exported by the package whatever the depth of its module
                        yield f"mindspore.{package}.{node.name}"


def takes_inputs(func: ast.FunctionDef, bound: bool) -> bool:
    args = func.args
    return len(args.posonlyargs) + len(args.args) > int(bound) or args.vararg is not None


def main() -> int:
    spec = PathFinder.find_spec("mindspore")
    if spec is None or not spec.submodule_search_locations:
        print("mindspore is not installed", file=sys.stderr)
        return 2
    root = list(spec.submodule_search_locations)[0]
    site = os.path.dirname(root)
    methods, functions = {}, {}
    for scanned in SCANNED:
        for module, tree in parsed_modules(os.path.join(root, scanned), site):
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                    owner = canonical(f"{module}.{node.name}")
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                            kind = kind_of(ast.get_docstring(item) or "", takes_inputs(item, True))
                            if kind and item.name != "construct":
                                methods[f"{owner}.{item.name}"] = kind
                elif isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and scanned == "amp.py":
                    kind = kind_of(ast.get_docstring(node) or "", takes_inputs(node, False))
                    if kind:
                        functions[canonical(f"{module}.{node.name}")] = kind
    functions.update(host_queries(root, site))
    public = sorted(set(public_names(root, site)))
    compile_time = set()
    for module, tree in parsed_modules(root, site):
        compile_time.update(compile_time_helpers(tree, module))
    cells, (attributes, builders, bases) = class_attributes(root, site)
    version = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", open(os.path.join(root, "version.py")).read())
    data = {"mindspore": version.group(1) if version else "unknown",
            "generated_by": "tools/derive_mindspore_api.py",
            "methods": dict(sorted(methods.items())), "functions": dict(sorted(functions.items())),
            "compile_time": sorted(compile_time), "attributes": attributes, "attribute_builders": builders,
            "bases": bases, "cells": cells, "public": public}
    with open(OUT, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)
        handle.write("\n")
    print(f"{len(methods)} methods, {len(functions)} functions, {len(compile_time)} compile-time helper names "
          f"{len(attributes)} classes' attributes, {len(cells)} Cell classes -> {os.path.relpath(OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
