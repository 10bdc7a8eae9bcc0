"""ModuleContext.spell: how a rewrite names what it needs, reusing aliases without ever being shadowed."""
import textwrap

import libcst as cst

from ms_lint.config import Config
from ms_lint.context import ModuleContext


def spell(code, name):
    code = textwrap.dedent(code)
    return ModuleContext(cst.parse_module(code), code, "t.py", Config()).spell(name)


def test_reuses_the_module_alias():
    assert spell("import mindspore as ms\n", "mindspore.vmap") == ("ms.vmap", ())
    assert spell("from mindspore import ops\n", "mindspore.ops.where") == ("ops.where", ())


def test_adds_an_import_when_there_is_none():
    spelled, imports = spell("import numpy as np\n", "mindspore.ops.where")
    assert spelled == "ops.where"
    assert [i.statement for i in imports] == ["from mindspore import ops"]


def test_an_alias_shadowed_by_a_parameter_is_not_reused():
    code = """
    from mindspore import ops
    import mindspore

    def f(x, ops):
        return ops.sum(x)
    """
    spelled, imports = spell(code, "mindspore.ops.where")
    assert spelled == "mindspore.ops.where" and imports == ()


def test_an_alias_shadowed_by_a_local_assignment_is_not_reused():
    code = """
    import mindspore as ms

    def f(x):
        ms = x
        return ms
    """
    result = spell(code, "mindspore.vmap")
    assert result is None or not result[0].startswith("ms.")
