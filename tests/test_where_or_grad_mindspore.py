"""MSL201 selects on ``if <compile-time test> or <tensor test>:``, on gradients ``GradOperation()`` gives, and on
a bool-Tensor flag stored on ``self``, run with real MindSpore (CPU) in GRAPH_MODE (Cells) and under ``@ms.jit``:
outputs match exactly, and so do gradients w.r.t. the float inputs, on inputs that take every path (interval 1 and
not, a NaN gradient and not, a mask with and without padding)."""
import textwrap

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from mindspore import Tensor, nn  # noqa: E402

from ms_lint.rules import rule_by_code  # noqa: E402
from ms_lint.testing import fix, lint  # noqa: E402
from mindspore_support import import_source  # noqa: E402

pytestmark = [pytest.mark.mindspore, pytest.mark.usefixtures("graph_mode")]


def t(value, dtype=np.float32):
    return Tensor(np.asarray(value, dtype=dtype))


def same(before, after):
    a, b = before.asnumpy(), after.asnumpy()
    assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
    np.testing.assert_array_equal(a, b)


def fixed_pair(tmp_path, code, unsafe=False, applicability="safe"):
    code = textwrap.dedent(code)
    found = [f for f in lint(code) if f.code == "MSL201"]
    assert found and all(f.fix["applicability"] == applicability for f in found), found
    outcome = fix(code, unsafe=unsafe, select=["MSL201"])
    assert outcome.changed and outcome.error is None
    assert not fix(outcome.fixed, unsafe=True, select=["MSL201"]).changed  # idempotent
    return import_source(tmp_path, code, "msl_or"), import_source(tmp_path, outcome.fixed, "msl_or")


def example(marker):
    return next(e for e in rule_by_code("MSL201").INVALID if marker in e.code)


class SumOf(nn.Cell):
    """``cell(*inputs).sum()``, for ``ms.grad`` (graph mode does not take a lambda with defaults)."""

    def __init__(self, cell, *fixed):
        super().__init__()
        self.cell = cell
        self.fixed = fixed

    def construct(self, x):
        return self.cell(x, *self.fixed).sum()


class SumOfTwo(nn.Cell):
    """``cell(x, y).sum()``; ``x`` stays an input (MindSpore 2.10's ``GradOperation()`` gives ``()`` for a
    constant first input, such as a Tensor attribute)."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def construct(self, x, y):
        return self.cell(x, y).sum()


VELOCITIES = ([0.5, -1.0, 2.0], [3.0, 0.1, -0.2], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0])


def test_or_example_cell_matches_outputs_gradients_and_counter(tmp_path):
    before, after = fixed_pair(tmp_path, example("class Rescale").code)
    for interval in (1, 2, 3):
        cells = before.Rescale(interval=interval), after.Rescale(interval=interval)
        gradients = [ms.grad(SumOf(cell)) for cell in cells]  # each call runs (and counts in) its cell
        for value in VELOCITIES * 2:
            same(cells[0](t(value)), cells[1](t(value)))
            same(*[gradient(t(value)) for gradient in gradients])
        same(cells[0].step.value(), cells[1].step.value())


OR_JIT = """
import mindspore as ms
from mindspore import ops


@ms.jit
def rescale(velocity, step, interval=1):
    if interval == 1 or step % interval == 0:
        energy = (velocity * velocity).mean()
        velocity = velocity * ops.clamp(1.0 + 0.1 * (1.0 - energy), 0.8, 1.25)
    return velocity
"""


def test_or_under_jit_matches_outputs_and_gradients(tmp_path):
    # Unsafe (``step`` is an argument of unknown shape): run on the 0-d steps a caller passes.
    before, after = fixed_pair(tmp_path, OR_JIT, unsafe=True, applicability="unsafe")
    gradients = ms.grad(before.rescale), ms.grad(after.rescale)
    for interval in (1, 3):
        for step in (0, 1, 2, 3, 6):
            for value in VELOCITIES:
                args = (t(value), Tensor(np.int32(step)), interval)
                same(before.rescale(*args), after.rescale(*args))
                same(gradients[0](*args), gradients[1](*args))


def _product_net():
    from mindspore import nn, ops

    class Product(nn.Cell):
        """d/dx is ``y``, NaN where ``x`` holds a NaN (through ``sqrt(x * x) * 0``)."""

        def construct(self, x, y):
            return (ops.sqrt(x * x) * 0.0 + x * y).sum()

    return Product()


def test_gradient_guard_example_matches_outputs_and_gradients(tmp_path):
    before, after = fixed_pair(tmp_path, example("class InputGradient").code)
    y = t([2.0, -1.0, 0.5])
    for value in ([1.0, 2.0, 3.0], [1.0, np.nan, 3.0]):
        cells = before.InputGradient(_product_net()), after.InputGradient(_product_net())
        outputs = [cell(t(value), y) for cell in cells]
        same(*outputs)
        if np.isnan(value).any():
            np.testing.assert_array_equal(outputs[0].asnumpy(), np.zeros(3, np.float32))
        else:  # second order: the gradient of the guarded gradient w.r.t. y
            grads = [ms.grad(SumOfTwo(cell), grad_position=1)(t(value), y) for cell in cells]
            same(*grads)


GRAD_JIT = """
import mindspore as ms
from mindspore import ops


def energy(x, y):
    return (ops.sqrt(x * x) * 0.0 + x * y).sum()


@ms.jit
def shift(x, y):
    g = ops.GradOperation()(energy)(x, y)
    if ops.isnan(g.sum()):
        g = ops.zeros_like(g)
    return g
"""


def test_gradient_guard_under_jit_matches(tmp_path):
    before, after = fixed_pair(tmp_path, GRAD_JIT)
    y = t([[2.0, -1.0], [0.5, 4.0]])
    for value in ([[1.0, 2.0], [3.0, 4.0]], [[1.0, np.nan], [3.0, 4.0]]):
        same(before.shift(t(value), y), after.shift(t(value), y))


def under_jit(cell, *inputs):
    """``cell(*inputs)`` from inside an ``@ms.jit`` function."""

    @ms.jit
    def run(*args):
        return cell(*args)

    return run(*inputs)


def test_flag_example_matches_outputs_and_gradients_in_graph_mode_and_under_jit(tmp_path):
    before, after = fixed_pair(tmp_path, example("class PaddedEnergy").code)
    energy = t([[1.0, 2.0], [3.0, 4.0]])
    for mask in ([True, True], [True, False]):
        cells = before.PaddedEnergy(mask), after.PaddedEnergy(mask)
        same(cells[0](energy), cells[1](energy))
        same(under_jit(cells[0], energy), under_jit(cells[1], energy))
        same(*[ms.grad(SumOf(cell))(energy) for cell in cells])


def test_or_and_gradient_examples_under_jit(tmp_path):
    before, after = fixed_pair(tmp_path, example("class Rescale").code)
    for interval in (1, 3):
        cells = before.Rescale(interval=interval), after.Rescale(interval=interval)
        for value in VELOCITIES:
            same(under_jit(cells[0], t(value)), under_jit(cells[1], t(value)))
    before, after = fixed_pair(tmp_path, example("class InputGradient").code)
    y = t([2.0, -1.0, 0.5])
    for value in ([1.0, 2.0, 3.0], [1.0, np.nan, 3.0]):
        cells = before.InputGradient(_product_net()), after.InputGradient(_product_net())
        same(under_jit(cells[0], t(value), y), under_jit(cells[1], t(value), y))


def test_unsafe_or_fixes_of_the_controllers_fixture_match_where_kinetics_are_positive(tmp_path):
    """The fixture's unsafe fixes (a step argument of unknown shape; a base-class rescale that divides and takes a
    square root), run on 0-d steps and positive kinetics: outputs and gradients w.r.t. the velocity match."""
    import pathlib

    from ms_lint.config import Config
    from ms_lint.fixer import fix_text
    from ms_lint.source import read_source

    fixtures = pathlib.Path(__file__).resolve().parent.parent / "fixtures"
    path = fixtures / "branches" / "md_controllers.py"
    outcome = fix_text(read_source(str(path)), Config(root=str(fixtures)).with_overrides(select=["MSL201"]),
                       unsafe=True)
    assert outcome.error is None and outcome.changed
    assert not fix(outcome.fixed, unsafe=True, select=["MSL201"]).changed
    before, after = import_source(tmp_path, outcome.original, "msl_or"), import_source(tmp_path, outcome.fixed, "msl_or")
    coordinate, kinetics = t(np.zeros((1, 2, 3))), t([[0.4, 0.5, 0.7]])

    def inputs(name, step):
        # Fresh Tensors per call: ``velocity *= scale`` on the straight-line path (the folded ``if k:``) updates
        # the caller's Tensor in place in graph mode (measured), in the original and in the kept branch alike.
        velocity = t([[[0.5, -1.0, 2.0], [3.0, 0.1, -0.2]]])
        if name == "BaseScaledThermostat":
            return (coordinate, velocity, kinetics, Tensor(np.int32(step)))
        return (coordinate, velocity, Tensor(np.int32(step)))

    for interval in (1, 2, 3):
        for name in ("IntervalThermostatStepArgument", "BaseScaledThermostat"):
            # stateless Cells, built once per setting and called at every step (the step is an input): each
            # compiles once, and the compiled graphs run on the steps that take the other side
            cells = getattr(before, name)(control_step=interval), getattr(after, name)(control_step=interval)
            gradients = [ms.grad(SumOfVelocity(cell)) for cell in cells]
            for step in range(4):
                runs = [inputs(name, step) for _ in cells]
                outs = [cell(*args) for cell, args in zip(cells, runs)]
                for a, b in zip(*outs):
                    same(a, b)
                same(runs[0][1], runs[1][1])  # the caller's velocity afterwards
                same(*[gradient(*inputs(name, step)) for gradient in gradients])


class SumOfVelocity(nn.Cell):
    """The returned velocity, summed, as a function of the inputs (gradient w.r.t. the first: the coordinate)."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def construct(self, *args):
        return self.cell(*args)[1].sum()
