import libcst as cst
import pytest

from ms_lint.names import ImportTable, canonical


def table(code, path=None):
    return ImportTable(cst.parse_module(code), path)


def qualify(code, expr):
    return table(code).qualify(cst.parse_expression(expr))


@pytest.mark.parametrize("imports, expr, expected", [
    ("import mindspore as ms", "ms.jit", "mindspore.jit"),
    ("import mindspore", "mindspore.jit", "mindspore.jit"),
    ("from mindspore import jit", "jit", "mindspore.jit"),
    ("from mindspore import jit as compile_graph", "compile_graph", "mindspore.jit"),
    ("from mindspore.common.api import jit", "jit", "mindspore.jit"),
    ("from mindspore.graph.api import jit", "jit", "mindspore.jit"),  # where MindSpore 2.10 defines it
    ("from mindspore import nn", "nn.Cell", "mindspore.nn.Cell"),
    ("import mindspore.nn as nn", "nn.Cell", "mindspore.nn.Cell"),
    ("from mindspore.nn import Cell", "Cell", "mindspore.nn.Cell"),
    ("from mindspore.nn.cell import Cell", "Cell", "mindspore.nn.Cell"),
    ("from mindspore.ops import operations as P", "P.ReduceSum", "mindspore.ops.ReduceSum"),
    ("from mindspore.ops import functional as F", "F.shape", "mindspore.ops.shape"),
    ("from mindspore import context", "context.set_context", "mindspore.set_context"),
    ("import numba", "numba.jit", "numba.jit"),
    ("import torch", "torch.jit.script", "torch.jit.script"),
])
def test_qualify_resolves_aliases(imports, expr, expected):
    assert qualify(imports, expr) == expected


def test_unimported_names_do_not_resolve():
    assert qualify("import os", "jit") is None
    assert qualify("", "ms.jit") is None


def test_imports_inside_functions_count():
    code = "def f():\n    from mindspore import ops\n    return ops\n"
    assert table(code).qualify(cst.parse_expression("ops.stack")) == "mindspore.ops.stack"


def test_relative_imports_resolve_against_the_package(tmp_path):
    pkg = tmp_path / "mindspore" / "nn" / "layer"
    pkg.mkdir(parents=True)
    for folder in (tmp_path / "mindspore", tmp_path / "mindspore" / "nn", pkg):
        (folder / "__init__.py").write_text("")
    path = pkg / "basic.py"
    t = table("from ..cell import Cell\n", str(path))
    assert t.qualify(cst.parse_expression("Cell")) == "mindspore.nn.Cell"


def test_local_reference_reuses_existing_aliases():
    assert table("import mindspore as ms").local_reference("mindspore.vmap") == "ms.vmap"
    assert table("from mindspore import ops").local_reference("mindspore.ops.where") == "ops.where"
    assert table("import os").local_reference("mindspore.vmap") is None


def test_canonical_collapses_internal_modules():
    assert canonical("mindspore.ops.function.math_func.reduce_sum") == "mindspore.ops.reduce_sum"
    assert canonical("mindspore.common.parameter.Parameter") == "mindspore.Parameter"


@pytest.mark.parametrize("spelling", ["mindspore.graph.api", "mindspore.common.api", "mindspore"])
def test_jit_under_each_spelling_makes_graph_code_here_and_across_modules(tmp_path, spelling):
    """MindSpore 2.10 defines ``jit`` in ``mindspore.graph.api`` (``mindspore.common`` re-exports it from there):
    a function decorated with it, or handed to it from another module, is graph code."""
    from ms_lint.config import Config
    from ms_lint.engine import analyze_path

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    loop = "    out = []\n    for i in range(x.shape[0]):\n        out.append(x[i] * 2)\n    return ops.stack(out)\n"
    (tmp_path / "pkg" / "steps.py").write_text(
        f"from mindspore import ops\nfrom {spelling} import jit\n\n\n@jit\ndef doubled(x):\n{loop}\n\n"
        f"def tripled(x):\n{loop.replace('* 2', '* 3')}")
    (tmp_path / "pkg" / "run.py").write_text(
        f"from {spelling} import jit\nfrom pkg.steps import tripled\n\nfast = jit(tripled)\n")
    (tmp_path / "pkg" / "helpers.py").write_text(
        f"from mindspore import ops\n\n\ndef quadrupled(x):\n{loop.replace('* 2', '* 4')}")
    (tmp_path / "pkg" / "wrap.py").write_text(
        f"from {spelling} import jit\n\n\ndef compiled(fn):\n    return jit(fn)\n")
    (tmp_path / "pkg" / "model.py").write_text(
        f"from {spelling} import jit\nfrom pkg.helpers import quadrupled\nfrom pkg.steps import doubled\n"
        "from pkg.wrap import compiled\n\n\n@jit\ndef step(x):\n    return quadrupled(x)\n\n\n"
        "def plain(x):\n    return x + 1\n\n\nfast = compiled(plain)\n")
    (tmp_path / "pkg" / "other.py").write_text(
        f"from mindspore import ops\n\n\ndef halved(x):\n{loop.replace('* 2', '/ 2')}")
    (tmp_path / "pkg" / "use.py").write_text(
        "from pkg.other import halved\nfrom pkg.wrap import compiled\n\nfast = compiled(halved)\n")
    config = Config(root=str(tmp_path), ignore=["MSL3"])

    def lines(name):
        return sorted((f.code, f.line) for f in analyze_path(str(tmp_path / "pkg" / name), config).findings)

    assert lines("steps.py") == [("MSL101", 8), ("MSL101", 15)]  # decorated here; handed to jit elsewhere
    assert lines("helpers.py") == [("MSL101", 6)]  # called from a function another module decorates
    assert lines("other.py") == [("MSL101", 6)]  # handed to a project wrapper of jit
