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


def test_a_shadowing_in_a_method_or_nested_function_counts_and_a_class_attribute_does_not():
    """Function-local names are the parameters and assignment targets of every def, methods and nested defs
    included (``ModuleContext.function_local_names``, read from the scope's one walk of the module); a class-level
    ``ms = ...`` is an attribute, not a local that hides the module's alias inside a function."""
    method = """
    import mindspore as ms

    class Net:
        def build(self):
            def inner(x):
                ms = x
                return ms
            return inner
    """
    result = spell(method, "mindspore.vmap")
    assert result is None or not result[0].startswith("ms.")
    nested_param = """
    from mindspore import ops
    import mindspore

    def outer():
        def inner(ops):
            return ops
        return inner
    """
    assert spell(nested_param, "mindspore.ops.where") == ("mindspore.ops.where", ())
    class_level = """
    import mindspore as ms

    class Config:
        ms = 3
    """
    assert spell(class_level, "mindspore.vmap") == ("ms.vmap", ())
    names = context_of(method + nested_param.replace("import mindspore\n", "")).function_local_names()
    assert {"self", "x", "ms", "ops"} <= names and "Config" not in names

def context_of(code):
    code = textwrap.dedent(code)
    return ModuleContext(cst.parse_module(code), code, "t.py", Config())


def test_the_cache_fix_does_not_write_a_shadowed_environ_alias():
    from ms_lint.rules._cache_common import environ_spelling

    plain = context_of("from os import environ\nimport mindspore\n")
    assert environ_spelling(plain) == ("environ", ())
    shadowed = context_of("""
        import os
        from os import environ
        import mindspore

        def configure(environ):
            return environ
        """)
    assert environ_spelling(shadowed) == ("os.environ", ())
    # With no other spelling free of the shadowed name, no fix is offered rather than a wrong one.
    only_shadowed = context_of("from os import environ\nimport mindspore\n\ndef configure(environ):\n    pass\n")
    assert environ_spelling(only_shadowed) is None


def test_the_vmap_fix_does_not_reuse_a_shadowed_alias():
    from ms_lint.rewrites.vmap import VmapBuilder

    context = context_of("""
        from mindspore import vmap
        import mindspore as ms

        def apply(vmap, x):
            return vmap(x)
        """)
    rewrite = VmapBuilder.__new__(VmapBuilder)  # only its context is needed to name vmap
    rewrite.context = context
    spelled, imports = rewrite._vmap_name()
    assert spelled == "ms.vmap" and imports == ()


def test_a_name_in_a_docstring_or_comment_does_not_block_an_import():
    code = '''
    """Scores clamped with Tensor constants."""
    from mindspore import nn, ops  # a Tensor import would go here
    '''
    spelled, imports = spell(code, "mindspore.Tensor")
    assert spelled == "Tensor"
    assert [i.statement for i in imports] == ["from mindspore import Tensor"]


def test_a_name_the_code_uses_blocks_an_import_of_that_name():
    code = """
    from mindspore import nn, ops

    def f(Tensor):
        return Tensor
    """
    assert spell(code, "mindspore.Tensor") is None


def test_a_dotted_module_path_is_not_a_use_of_its_last_name():
    """``from mindspore.ops import operations as P`` does not bind ``ops``: ``from mindspore import ops`` is free
    to add (mindformers' schedules are written this way)."""
    code = """
    from mindspore.ops import operations as P
    import mindspore.common.dtype as mstype

    def f(x):
        return P.Cast()(x, mstype.float32)
    """
    spelled, imports = spell(code, "mindspore.ops.where")
    assert spelled == "ops.where"
    assert [i.statement for i in imports] == ["from mindspore import ops"]


def test_a_name_continued_on_the_next_line_after_a_dot_is_an_attribute():
    code = "import numpy as np\n\nx = (np.\n     ops)\n"
    assert spell(code, "mindspore.ops.where")[1][0].statement == "from mindspore import ops"
