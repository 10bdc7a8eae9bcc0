"""The effects analysis follows project code in other modules (ms_lint/analysis/effects.py): a loop body that calls
a sub-cell whose class is imported from a sibling module is pure when that class's ``construct`` (and what it
calls) is, and stays an effect when it writes a Parameter, draws random numbers or calls code nobody can see.

Each test builds a small package; the MSL101 finding on ``net.py`` has the vmap fix, or says why not.
"""
import textwrap

import pytest

from ms_lint.config import Config
from ms_lint.engine import analyze_path

NET = """\
    from mindspore import nn, ops
    from .block import Block


    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def construct(self, x):
            rows = []
            for i in range(x.shape[0]):
                rows.append(self.block(x[i]))
            return ops.stack(rows, 0)
"""

PURE_BLOCK = """\
    import numpy as np
    from mindspore import nn, ops, Tensor


    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU()
            self._mats = []
            self._mats.append(Tensor(np.eye(3).astype(np.float32)))

        @property
        def mats(self):
            return self._mats

        def _mix(self, x, mats):
            return ops.matmul(mats[0], x)

        def construct(self, x):
            return self.act(self._mix(x * 2, self.mats))
"""


def _finding(tmp_path, block: str, extra=None):
    files = {"pkg/__init__.py": "", "pkg/net.py": NET, "pkg/block.py": block, **(extra or {})}
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    result = analyze_path(str(tmp_path / "pkg" / "net.py"), Config(select=["MSL101"]))
    (finding,) = result.findings
    return finding


def test_a_pure_cell_of_another_module_gets_the_vmap_fix(tmp_path):
    finding = _finding(tmp_path, PURE_BLOCK)
    assert finding.fix_object is not None, finding.detail


@pytest.mark.parametrize("body, why", [
    ("ops.assign(self.count, self.count + 1)\n        return x", "assign"),
    ("return x + ops.standard_normal(x.shape)", "standard_normal"),
    ("return helper(x)", "helper"),
    ("return self.drop(x)", "Dropout"),
], ids=["assigns-a-parameter", "draws-random-numbers", "calls-an-unknown-function", "holds-a-dropout"])
def test_an_impure_cell_of_another_module_is_refused(tmp_path, body, why):
    block = f"""\
        from mindspore import nn, ops, Parameter, Tensor
        from somewhere_not_installed import helper


        class Block(nn.Cell):
            def __init__(self):
                super().__init__()
                self.count = Parameter(Tensor(0.0))
                self.drop = nn.Dropout(p=0.5)

            def construct(self, x):
                {body}
    """
    finding = _finding(tmp_path, block)
    assert finding.fix_object is None
    assert "free of effects" in finding.detail and why in finding.detail


def test_an_impure_method_the_construct_calls_is_refused(tmp_path):
    block = """\
        from mindspore import nn, ops


        class Block(nn.Cell):
            def _noisy(self, x):
                print(x)
                return x

            def construct(self, x):
                return self._noisy(x) * 2
    """
    finding = _finding(tmp_path, block)
    assert finding.fix_object is None and "print" in finding.detail


def test_a_cycle_between_modules_terminates(tmp_path):
    """Block's construct calls a cell of module ``other`` whose construct calls back into ``block``'s code."""
    block = """\
        from mindspore import nn
        from .other import Other


        def twice(x):
            return Other()(x) * 2


        class Block(nn.Cell):
            def __init__(self):
                super().__init__()
                self.other = Other()

            def construct(self, x):
                return self.other(x) + twice(x)
    """
    other = """\
        from mindspore import nn


        class Other(nn.Cell):
            def construct(self, x):
                from .block import twice
                return twice(x) - 1
    """
    finding = _finding(tmp_path, block, {"pkg/other.py": other})
    assert finding.line == 12


def test_a_chain_longer_than_the_depth_limit_counts_as_an_effect(tmp_path):
    files = {}
    for level in range(5):
        callee = f"from .m{level + 1} import C{level + 1}\n" if level < 4 else ""
        call = f"self.inner = C{level + 1}()" if level < 4 else "pass"
        result = "self.inner(x)" if level < 4 else "x + 1"
        files[f"pkg/m{level}.py"] = (f"from mindspore import nn\n{callee}\n\nclass C{level}(nn.Cell):\n"
                                     f"    def __init__(self):\n        super().__init__()\n        {call}\n\n"
                                     f"    def construct(self, x):\n        return {result}\n")
    block = """\
        from mindspore import nn
        from .m0 import C0


        class Block(nn.Cell):
            def __init__(self):
                super().__init__()
                self.inner = C0()

            def construct(self, x):
                return self.inner(x)
    """
    finding = _finding(tmp_path, block, files)
    assert finding.fix_object is None and "modules deep" in finding.detail


def test_numpy_constructors_are_pure_but_numpy_random_is_not(tmp_path):
    pure = """\
        import numpy as np
        from mindspore import nn, Tensor


        class Block(nn.Cell):
            def construct(self, x):
                return x * Tensor(np.ones(x.shape, np.float32))
    """
    assert _finding(tmp_path / "ones", pure).fix_object is not None
    drawn = pure.replace("np.ones(x.shape, np.float32)", "np.random.rand(*x.shape).astype(np.float32)")
    finding = _finding(tmp_path / "rand", drawn)
    assert finding.fix_object is None and "rand" in finding.detail


def test_a_sum_with_the_first_term_set_apart_says_why_it_gets_no_fix():
    """PDE-Net's ``if idx == 0: f = term  else: f = f + term``: a sum, refused in one line that names the shape."""
    from ms_lint.testing import lint

    source = textwrap.dedent("""\
        from mindspore import nn


        class WeightedSum(nn.Cell):
            def construct(self, coe, out):
                f = 0
                for idx in range(out.shape[1]):
                    if idx == 0:
                        f = coe[idx] * out[:, 0:1]
                    else:
                        f = f + coe[idx] * out[:, idx:(idx + 1)]
                return f
    """)
    (finding,) = lint(source, select=["MSL101"])
    assert finding.fix_object is None
    assert "first term set apart (`if idx == 0:`)" in finding.detail
