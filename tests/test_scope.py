"""The graph-scope model: which functions MindSpore compiles, resolved through imports, not names."""
import libcst as cst
import pytest

from ms_lint.names import ImportTable
from ms_lint.scope import GraphScope
from corpus_support import fixture_sources


def graph_names(code, graph_mode="auto"):
    module = cst.parse_module(code)
    scope = GraphScope(module, ImportTable(module), graph_mode)
    return {
        (f"{info.owner}." if info.owner else "") + info.node.name.value for info in scope.graph_functions()
    }


@pytest.mark.parametrize("code", [
    "import mindspore as ms\n@ms.jit\ndef f(x):\n    return x\n",
    "import mindspore\n@mindspore.jit\ndef f(x):\n    return x\n",
    "from mindspore import jit\n@jit\ndef f(x):\n    return x\n",
    "from mindspore import jit\n@jit(capture_mode='ast', jit_level='O1')\ndef f(x):\n    return x\n",
    "from mindspore import jit as J\n@J\ndef f(x):\n    return x\n",
    "import mindspore as ms\ndef f(x):\n    return x\ng = ms.jit(f)\n",
    "import mindspore as ms\ndef f(x):\n    return x\nms.jit(f)(1)\n",
])
def test_jit_roots_in_every_spelling(code):
    assert graph_names(code) == {"f"}


@pytest.mark.parametrize("code", [
    "import numba\n@numba.jit\ndef f(x):\n    return x\n",
    "import torch\n@torch.jit.script\ndef f(x):\n    return x\n",
    "def jit(f):\n    return f\n@jit\ndef f(x):\n    return x\n",
    "from mindspore.ops import constexpr\nimport mindspore as ms\n@constexpr\ndef f(n):\n    return n\n",
])
def test_not_graph_code(code):
    assert graph_names(code) == set()


@pytest.mark.parametrize("imports, base", [
    ("from mindspore import nn", "nn.Cell"),
    ("import mindspore as ms", "ms.nn.Cell"),
    ("from mindspore.nn import Cell", "Cell"),
    ("import mindspore.nn as nn", "nn.Cell"),
    ("from mindspore import nn", "nn.TrainOneStepCell"),
])
def test_construct_of_cells(imports, base):
    code = f"{imports}\nclass Net({base}):\n    def construct(self, x):\n        return x\n"
    assert graph_names(code) == {"Net.construct"}


def test_construct_through_in_module_inheritance_and_helpers():
    code = (
        "from mindspore import nn\n"
        "class Base(nn.Cell):\n    pass\n"
        "class Net(Base):\n"
        "    def construct(self, x):\n        return self.helper(x) + helper2(x)\n"
        "    def helper(self, x):\n        return self.deeper(x)\n"
        "    def deeper(self, x):\n        return x\n"
        "    def not_called(self, x):\n        return x\n"
        "def helper2(x):\n    return x\n"
        "def unrelated(x):\n    return x\n"
    )
    assert graph_names(code) == {"Net.construct", "Net.helper", "Net.deeper", "helper2"}


def test_construct_of_a_non_cell_is_not_graph():
    code = "class Builder:\n    def construct(self, x):\n        return x\n"
    assert graph_names(code) == set()


def test_jit_only_mode_ignores_construct():
    code = (
        "import mindspore as ms\nfrom mindspore import nn\n"
        "class Net(nn.Cell):\n    def construct(self, x):\n        return x\n"
        "@ms.jit\ndef f(x):\n    return x\n"
    )
    assert graph_names(code, "jit-only") == {"f"}
    assert graph_names(code) == {"Net.construct", "f"}


def test_constexpr_helper_called_from_graph_is_not_graph():
    code = (
        "import mindspore as ms\nfrom mindspore.ops import constexpr\n"
        "@constexpr\ndef make(n):\n    return tuple(range(n))\n"
        "@ms.jit\ndef f(x):\n    return make(4)\n"
    )
    assert graph_names(code) == {"f"}


PYNATIVE_CELL = """
import mindspore as ms
from mindspore import context, nn


class Net(nn.Cell):
    def construct(self, x):
        return self.helper(x)

    def helper(self, x):
        return x


@ms.jit
def step(x):
    return x

{setup}
"""


@pytest.mark.parametrize("setup, compiled", [
    ("context.set_context(mode=context.PYNATIVE_MODE)", {"step"}),
    ("ms.set_context(mode=1, device_target='CPU')", {"step"}),
    ("ms.set_context(device_target='CPU')", {"step", "Net.construct", "Net.helper"}),
    ("ms.set_context(mode=ms.PYNATIVE_MODE)\nif DEBUG:\n    ms.set_context(mode=ms.GRAPH_MODE)",
     {"step", "Net.construct", "Net.helper"}),
    ("ms.set_context(mode=ms.PYNATIVE_MODE)\nms.set_context(mode=args.mode)", {"step", "Net.construct", "Net.helper"}),
    ("ms.set_context(mode=ms.PYNATIVE_MODE)\nms.set_context(**cfg)", {"step", "Net.construct", "Net.helper"}),
])
def test_cells_of_a_pynative_only_module_run_eagerly(setup, compiled):
    """PyNative mode and never GRAPH_MODE (or a mode that cannot be read): construct is not compiled here."""
    assert graph_names(PYNATIVE_CELL.replace("{setup}", setup)) == compiled


def _fixture_sources():
    for path in fixture_sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            yield text, cst.parse_module(text)
        except cst.ParserSyntaxError:
            continue


def _graph(scope):
    return {(info.owner, info.node.name.value, info.reason, info.is_root) for info in scope.graph_functions()}


def test_module_text_changes_no_graph_function():
    """Given the text, a scope reads the module's calls for roots only where it writes ``jit``, ``ms_function`` or
    ``set_context``; on every fixture the graph functions, their reasons and the calls are what they are
    without the text."""
    checked = 0
    for text, module in _fixture_sources():
        imports = ImportTable(module)
        for graph_mode in ("auto", "jit-only"):
            with_text = GraphScope(module, imports, graph_mode, text=text)
            without = GraphScope(module, imports, graph_mode)
            assert _graph(with_text) == _graph(without)
            assert [c.call for c in with_text.calls] == [c.call for c in without.calls]
            assert with_text.local_binders == without.local_binders
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("code, walked", [
    ("import mindspore.nn as nn\nclass Net(nn.Cell):\n    def construct(self, x):\n        return f(x)\n", False),
    ("from mindspore import jit as J\ndef f(x):\n    return x\ng = J(f)\n", True),
    ("import mindspore as ms\nms.set_context(mode=ms.PYNATIVE_MODE)\n", True),
])
def test_calls_walked_only_when_a_call_can_make_a_root(code, walked):
    module = cst.parse_module(code)
    scope = GraphScope(module, ImportTable(module), text=code)
    assert (scope._walked is not None) == walked
    assert [c.call for c in scope.calls] == [c.call for c in GraphScope(module, ImportTable(module)).calls]


# -- closures: ``@ms.jit`` on a def nested in a function, and the local defs graph code calls ----------------------
_TENSOR_IF = "    t = ops.ones((2,))\n    if t:\n        x = x + 1\n    return x\n"


def _flagged(code: str):
    from ms_lint.testing import lint

    return sorted((f.line, f.code) for f in lint(code))


def _indent(text: str, depth: int) -> str:
    return "".join(" " * (4 * depth) + line + "\n" if line else "\n" for line in text.splitlines())


def test_a_jit_closure_and_the_local_defs_it_calls_are_graph_code():
    """mindyolo's train step: a factory defines ``step`` in each branch and returns a ``@ms.jit`` closure that
    calls it; a closure nested in a graph function is walked once, with its own value model."""
    code = ("import mindspore as ms\nfrom mindspore import nn, ops\n\n\n"
            "def factory(task):\n"
            "    if task == 'a':\n        def step(x):\n" + _indent(_TENSOR_IF, 2) +
            "    else:\n        def step(x):\n" + _indent(_TENSOR_IF, 2) +
            "    @ms.jit\n    def compiled(x):\n        return step(x)\n    return compiled\n\n\n"
            "class Net(nn.Cell):\n    def construct(self, x):\n        @ms.jit\n        def inner(x):\n" +
            _indent(_TENSOR_IF, 3) + "        return inner(x)\n")
    assert _flagged(code) == [(9, "MSL201"), (15, "MSL201"), (29, "MSL201")]


@pytest.mark.parametrize("shadow", [
    "    def step(x):\n        return x\n",  # a later def of the same block replaces it
    "    step = print\n",  # rebound
])
def test_a_local_def_the_calling_scope_rebinds_is_not_what_the_call_runs(shadow):
    """Look-alikes an independent review found: the call does not run the first ``step``."""
    code = ("import mindspore as ms\nfrom mindspore import ops\n\n\n"
            "def factory():\n    def step(x):\n" + _indent(_TENSOR_IF, 1) + shadow +
            "    @ms.jit\n    def compiled(x):\n        return step(x)\n    return compiled\n")
    assert _flagged(code) == []


@pytest.mark.parametrize("compiled", [
    "    @ms.jit\n    def compiled(x, step):\n        return step(x)\n",  # a parameter
    "    @ms.jit\n    def compiled(x):\n        global step\n        return step(x)\n",  # the module's
    "    @ms.jit\n    def compiled(xs, fns):\n        return [step(x) for step in fns]\n",  # a comprehension target
    "    @ms.jit\n    def compiled(x):\n        f = lambda step, y: step(y)\n        return f(ops.relu, x)\n",
    "    @ms.jit\n    def compiled(x):\n        def g(y):\n            def step(z):\n                return z\n"
    "            return step(y)\n        return g(x)\n",  # an inner def of the same name
])
def test_a_name_the_closure_binds_itself_is_not_the_factory_s_def(compiled):
    code = ("import mindspore as ms\nfrom mindspore import ops\n\n\n"
            "def factory():\n    def step(x):\n" + _indent(_TENSOR_IF, 1) + compiled + "    return compiled\n")
    assert _flagged(code) == []


def test_a_local_def_handed_to_grad_shadows_the_module_s():
    """``ops.grad(forward)`` in a closure: the factory's ``forward``, not the module function of that name."""
    code = ("import mindspore as ms\nfrom mindspore import ops\n\n\n"
            "def forward(x):\n" + _TENSOR_IF + "\n\n"
            "def factory(net):\n    def forward(x):\n        return net(x)\n\n"
            "    @ms.jit\n    def compiled(x):\n        return ops.grad(forward)(x)\n    return compiled\n")
    assert _flagged(code) == []
