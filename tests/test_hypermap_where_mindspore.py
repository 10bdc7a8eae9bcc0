"""MSL102 / MSL201 rewrites proven with real MindSpore (CPU, graph mode): original and fixed code compute the same.

Every rule example with a fix and every fixture whose safe fixes change it is run before and after the fix on
small inputs that take each branch; outputs must match exactly (type, shape, dtype, values). The hazards behind
the rules' refusals are shown too: a select over a guarded division gives NaN gradients, a select with Python
number branches returns a Tensor where the ``if`` returns a float, and a shape-(1,) ``global_step`` condition
broadcasts 0-d branches to shape (1,).
"""
import itertools
import pathlib
import textwrap

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from mindspore import Parameter, Tensor, jit, nn, ops  # noqa: E402

from ms_lint.config import Config  # noqa: E402
from ms_lint.fixer import fix_text  # noqa: E402
from ms_lint.rules import rule_by_code  # noqa: E402
from ms_lint.source import read_source  # noqa: E402
from ms_lint.testing import fix, lint  # noqa: E402
from mindspore_support import import_source  # noqa: E402
from corpus_support import fixture_sources  # noqa: E402

pytestmark = [pytest.mark.mindspore, pytest.mark.usefixtures("graph_mode")]

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"
CODES = ["MSL102", "MSL201"]
_module_ids = itertools.count()


def load(tmp_path, text):
    return import_source(tmp_path, text, "msl_equiv")


def t(value, dtype=np.float32):
    return Tensor(np.asarray(value, dtype=dtype))


def grads(scale=1.0, bad=False):
    """Five gradients of different shapes (a 0-d one included); ``bad`` puts an inf in one."""
    rng = np.random.default_rng(7)
    shapes = [(3,), (2, 2), (4,), (), (1, 3)]
    arrays = [(rng.standard_normal(s) * 3 * scale).astype(np.float32) for s in shapes]
    if bad:
        arrays[2][1] = np.inf
    return tuple(Tensor(a) for a in arrays)


def params(prefix):
    """Parameters matching ``grads()``'s shapes, fresh objects with identical values for each version."""
    rng = np.random.default_rng(3)
    shapes = [(3,), (2, 2), (4,), (), (1, 3)]
    return [Parameter(Tensor(rng.standard_normal(s).astype(np.float32)), name=f"{prefix}{i}")
            for i, s in enumerate(shapes)]


def leaves(value):
    """Flatten nested tuples/lists/dicts of Tensors and Python scalars into comparable (kind, shape, dtype, array)."""
    if isinstance(value, (tuple, list)):
        return [(type(value).__name__, len(value))] + [x for item in value for x in leaves(item)]
    if isinstance(value, dict):
        return [("dict", tuple(sorted(value)))] + [x for k in sorted(value) for x in leaves(value[k])]
    if isinstance(value, Tensor):
        array = value.asnumpy()
        return [("Tensor", array.shape, str(array.dtype), array)]
    return [(type(value).__name__, value)]


def assert_same(before, after):
    a, b = leaves(before), leaves(after)
    assert len(a) == len(b), (a, b)
    for x, y in zip(a, b):
        assert x[:-1] == y[:-1] if x[0] == "Tensor" else x == y, (x, y)
        if x[0] == "Tensor":
            np.testing.assert_array_equal(x[-1], y[-1])


def dense(in_dim=3, out_dim=1):
    weight = Tensor(np.arange(in_dim * out_dim, dtype=np.float32).reshape(out_dim, in_dim) / 10)
    return nn.Dense(in_dim, out_dim, weight_init=weight, bias_init=Tensor(np.zeros(out_dim, np.float32)))


def _ema_weight(m):
    """Both Parameters after every call, over steps where the test is true and false, the flag on and off."""
    out = []
    for use_ema in (True, False):
        cell = m.EmaWeight(use_ema=use_ema)
        for step in range(1, 6):
            cell(t([float(step), -1.0]), Tensor([step], ms.int32))
            out.append([Tensor(cell.ema.asnumpy()), Tensor(cell.updates.asnumpy())])
    return out


def _average_or_copy(m):
    """The Parameter after every call, with ``mu`` 1 (the ``else``) and below 1 (the ``assignadd``)."""
    cell = m.AverageOrCopy()
    out = []
    for step, mu in enumerate((1.0, 0.5, 1.0, 0.25)):
        out.append(Tensor(cell(t([float(step), -1.0]), t(mu)).asnumpy()))
    return out


def _parameter_average(m):
    """Every Parameter after every step (tests true at even steps, the load at 4): both averages, then the
    loss-scale window on 0-d Parameters under a shape-(1,) step."""
    out = []
    for algo in ("ema", "sma"):
        cell = m.ParameterAverage(params(f"avg{next(_module_ids)}_"), algo=algo)
        for step in range(1, 6):
            cell(grads(scale=0.1), Tensor([step], ms.int32))
            out.append([Tensor(p.asnumpy()) for p in cell.get_parameters()])
    sgd = m.WarmStartSGD(params(f"warm{next(_module_ids)}_"))
    for _ in range(3):
        sgd(grads())
        out.append([Tensor(p.asnumpy()) for p in sgd.get_parameters()])
    window = m.ScaleWindow()
    for step, overflow in enumerate([False, False, True, False, False, False], start=1):
        out.append([window(Tensor(overflow), Tensor([step], ms.int32)), Tensor(window.good_steps.asnumpy())])
    return out


def _per_parameter_updates(m):
    """The MultitypeFuncGraph fixes: both optimizers' Parameters after each of 3 steps, both clip types' outputs."""
    out = []
    for name in ("IndexMomentum", "ZipAdamW"):
        cell = getattr(m, name)(params(f"{name}{next(_module_ids)}_"))
        for step in range(3):
            cell(grads(scale=1.0 + step))
            out.append([Tensor(p.asnumpy()) for p in cell.get_parameters()])
    return out + [m.ClipGrads(clip_type=k)(grads(scale=3.0)) for k in (0, 1)]


def _experimental_sign_sgd(m):
    """An ``experimental.optim`` optimizer's Parameters after each of 3 steps, plain and maximizing."""
    out = []
    for maximize in (False, True):
        cell = m.SignSGD(params(f"sign{next(_module_ids)}_"), lr=0.5, maximize=maximize)
        for step in range(3):
            cell(grads(scale=1.0 + step))
            out.append([Tensor(p.asnumpy()) for p in cell.parameters])
    return out


# -- runs of every rule example that has a fix: (code, index) -> function of the module giving outputs ------
def _grad_scaler(m):
    net = dense(3, 2)
    return [m.GradScaler(net)(t(np.ones((2, 3))), t(0.5))]


def _decay(m):
    cell = m.Decay(params(f"decay{next(_module_ids)}_"))
    return [cell(grads())]


def _momentum_step(m):
    """The position loop's Parameters (moments too) after each of 3 steps."""
    cell = m.MomentumStep(params(f"mom{next(_module_ids)}_"))
    out = []
    for step in range(3):
        assert cell(grads(scale=1.0 + step))
        out.append([Tensor(p.asnumpy()) for p in cell.get_parameters()])
    return out


def _rescale_steps(m):
    """Every step of an interval of 1 and of 3 (the counter advances each call), on two velocities."""
    out = []
    for interval in (1, 3):
        cell = m.Rescale(interval=interval)
        for value in ([0.5, -1.0, 2.0], [3.0, 0.1, -0.2], [0.5, -1.0, 2.0], [1.0, 1.0, 1.0]):
            out.append(cell(t(value)))
        out.append(cell.step.value())
    return out


class _Product(nn.Cell):
    """A network whose gradient w.r.t. ``x`` is ``y`` (NaN where ``x`` holds one: ``x * y`` of a NaN is NaN,
    and so is its gradient through ``ops.sqrt(x * x)``)."""

    def construct(self, x, y):
        return (ops.sqrt(x * x) * 0.0 + x * y).sum()


EXAMPLE_RUNS = {
    ("MSL201", 0): lambda m: [m.pick(t(2.0), t(1.0)), m.pick(t(1.0), t(2.0))],
    ("MSL201", 1): lambda m: [m.clipped(t(5.0), t(2.0)), m.clipped(t(1.0), t(2.0))],
    ("MSL201", 2): lambda m: [m.keep_finite(t([1.0, 2.0, 3.0])), m.keep_finite(t([1.0, np.inf, 3.0]))],
    ("MSL201", 3): lambda m: [m.smooth(t(0.3), t(0.0)), m.smooth(t(3.0), t(0.0))],
    ("MSL201", 4): lambda m: [m.Warmup()(Tensor(np.int32(10))), m.Warmup()(Tensor(np.int32(500)))],
    ("MSL201", 5): lambda m: [m.CappedLoss()(t([1.0, 2.0]), t([0.0, 0.0])),
                              m.CappedLoss()(t([10.0, 20.0]), t([0.0, 0.0]))],
    ("MSL201", 7): lambda m: [m.masked(t([1.0, 2.0, 3.0]), t([0.0, 0.0, 0.0])),
                              m.masked(t([1.0, 2.0, 3.0]), t([1.0, 0.0, 1.0]))],
    ("MSL201", 8): lambda m: [m.clamp_fp16(t(v, dt)) for dt in (np.float16, np.float32)
                              for v in ([1.0, -2.0, 3.0], [1.0, np.inf, -np.inf], [np.nan, 1.0, 65000.0])],
    ("MSL201", 9): lambda m: [m.three_regimes(t(v), t(0.0)) for v in ([0.3, -0.5], [2.0, 3.0], [9.0, -7.0])],
    ("MSL201", 10): lambda m: [m.scaled_gap(t(v), t(1.0)) for v in (3.0, 1.0, -2.0)],
    ("MSL201", 11): lambda m: [m.WarmupThenLinear()(_step(v)) for v in (0, 3, 8, 20, 40, 90)],
    ("MSL201", 12): lambda m: [m.Schedule()(t(v)) for v in (2.0, 10.0, 25.0)],
    ("MSL201", 13): lambda m: [m.clamp_overflow(t(v, dt)) for dt in (np.float16, np.float32)
                               for v in ([1.0, 60000.0, -3.0], [np.inf, 2.0, -65504.0])],
    ("MSL201", 14): lambda m: [m.LinearWarmup(**kw)(_step(v)) for v in (0, 3, 4, 10, 20, 30)
                               for kw in (dict(learning_rate=0.1, total_steps=20, warmup_steps=4),
                                          dict(learning_rate=0.1, total_steps=20, warmup_steps=0))],
    ("MSL201", 15): lambda m: _ema_weight(m),
    ("MSL201", 16): lambda m: _average_or_copy(m),
    ("MSL201", 17): lambda m: _rescale_steps(m),
    ("MSL201", 18): lambda m: [m.InputGradient(_Product())(t(v), t([2.0, -1.0, 0.5])) for v in (
        [1.0, 2.0, 3.0], [1.0, np.nan, 3.0])],
    ("MSL201", 19): lambda m: [m.PaddedEnergy(mask)(t([[1.0, 2.0], [3.0, 4.0]])) for mask in (
        [True, True], [True, False])],
    ("MSL102", 0): lambda m: [m.clip_grads(grads())],
    ("MSL102", 1): _grad_scaler,
    ("MSL102", 2): _decay,
    ("MSL102", 3): lambda m: [m.ClipEach()(grads(scale=3.0))],
    ("MSL102", 4): lambda m: [m.global_norm(grads())],
    ("MSL102", 5): lambda m: [m.grad_norm(grads()), m.grad_norm(grads(scale=100.0))],
    ("MSL102", 7): lambda m: _momentum_step(m),
    ("MSL102", 8): lambda m: [m.ClipGrads(clip_type=k)(grads(scale=3.0)) for k in (0, 1)],
}


def _fixed_examples():
    for code in CODES:
        for index, example in enumerate(rule_by_code(code).INVALID):
            if example.fixed is not None:
                yield pytest.param(code, index, example, id=f"{code}-invalid-{index}")


@pytest.mark.parametrize("code, index, example", list(_fixed_examples()))
def test_fixed_example_computes_the_same(tmp_path, code, index, example):
    assert (code, index) in EXAMPLE_RUNS, f"add a run for {code} INVALID[{index}] to EXAMPLE_RUNS"
    outcome = fix(example.code, unsafe=example.unsafe, select=[code])
    assert outcome.changed and outcome.error is None
    run = EXAMPLE_RUNS[(code, index)]
    before = run(load(tmp_path, textwrap.dedent(example.code)))
    after = run(load(tmp_path, outcome.fixed))
    assert_same(before, after)


# -- fixtures: every file the safe fixes change is run before and after -----------------------------------------
def _train_step(m, x):
    net = nn.WithLossCell(dense(3, 1), nn.MSELoss())
    opt = nn.SGD(net.trainable_params(), learning_rate=0.01)
    step = m.ScaledTrainStep(net, opt)
    loss, overflow = step(x, t(np.ones((2, 1))))
    return [loss, overflow, step.scale.value()] + [p.value() for p in net.trainable_params()]


def _accumulate(m):
    cell = m.AccumulateGrads(params(f"acc{next(_module_ids)}_"))
    out = cell(grads())
    return [out] + [p.value() for p in cell.accum]


def _decayed_sgd(m):
    weights = params(f"sgd{next(_module_ids)}_")
    opt = m.DecayedSGD(weights, learning_rate=0.1, weight_decay=0.01)
    return [opt(grads())] + [p.value() for p in weights]


FIXTURE_RUNS = {
    "optimizers/grad_utils.py": lambda m: [
        m.UnscaleAndClip(loss_scale=4.0)(grads(scale=4.0)),
        m.FiniteCheck()(grads()), m.FiniteCheck()(grads(bad=True)),
        m.maybe_negate(grads()), m.maybe_negate(grads(), True),
    ] + _accumulate(m),
    "optimizers/loop_optimizers.py": _decayed_sgd,
    "branches/loss_scale_wrapper.py": lambda m: (
        _train_step(m, t(np.ones((2, 3)))) + _train_step(m, t([[1.0, np.inf, 0.0], [0.0, 1.0, 2.0]]))
        + [m.DynamicScaleUpdate(window=1)(t(8.0), Tensor(True)),
           m.DynamicScaleUpdate(window=5)(t(8.0), Tensor(True)),
           m.DynamicScaleUpdate(window=1)(t(8.0), Tensor(False))]),
    "branches/lr_schedules.py": lambda m: [
        m.WarmupCosine()(Tensor(np.int32(10))), m.WarmupCosine()(Tensor(np.int32(500))),
        m.WarmupCosine()(Tensor(np.array([10], np.int32))), m.WarmupCosine()(Tensor(np.array([500], np.int32))),
    ],
    "branches/warmup_decay_chains.py": lambda m: [
        m.ThreeRegimeLoss()(t(v), t(np.zeros(2))) for v in ([0.3, -0.5], [2.0, 3.0], [9.0, -7.0])
    ] + [m.scaled_gap(t(v), t(1.0)) for v in (3.0, 1.0, -2.0)]
    + [cell(_step(v)) for k in (1, 2) for cell in [m.RestartCosine(t_mult=k)] for v in (0, 7, 10, 15, 23, 40)]
    + [cell(_step(v, one)) for name in ("WarmupHoldCosine", "WarmupThenLinear") for cell in [getattr(m, name)()]
       for v in (0, 4, 9, 12, 14, 16, 30, 64, 65, 200) for one in (False, True)],
    # one Cell per configuration, called at every step as an optimizer calls its schedule (it compiles once per
    # step shape; fresh Cells per step compiled 72 times a version for the same coverage)
    "branches/typed_schedules.py": lambda m: [
        cell(_step(v, one)) for w in (0, 4)
        for cell in [m.CoolDownSchedule(0.1, warmup_steps=w, keep_steps=3, decay_steps=10, final_steps=2,
                                        lr_end1=0.01)]
        for v in (0, 2, 4, 6, 8, 12, 16, 17, 18, 19, 40) for one in (False, True)
    ] + [cell(_step(v, one)) for w in (0, 5) for cell in [m.LinearDecaySchedule(0.05, 30, warmup_steps=w)]
         for v in (0, 3, 5, 6, 29, 30, 31) for one in (False, True)],
    "branches/attention_masks.py": lambda m: [
        m.apply_padding_mask(t(np.ones((2, 3))), t([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])),
        m.apply_padding_mask(t(np.ones((2, 3))), t(np.ones((2, 3)))),
        m.FocalWeight()(t([0.9, 0.2]), t([1.0, 1.0])),
        m.FocalWeight()(t([0.9, 0.8]), t([1.0, 1.0])),
    ],
}


def _feed_forward(m, dtype, residual):
    """FeedForwardOutput with fixed weights; float16 runs the clamp's select, an inf residual takes the clamp."""
    cell = m.FeedForwardOutput(hidden=4)
    cell.dense.weight.set_data(Tensor(np.arange(16, dtype=np.float32).reshape(4, 4) / 10))
    cell.dense.bias.set_data(Tensor(np.zeros(4, np.float32)))
    if dtype == np.float16:
        cell.to_float(ms.float16)
    x = Tensor((np.arange(8).reshape(2, 4) - 3).astype(dtype))
    return [cell(x, Tensor(np.full((2, 4), residual, dtype)))]


def _lamb(m):
    weights = params(f"lamb{next(_module_ids)}_")
    opt = m.LoopLamb(weights, learning_rate=0.1)
    return [opt(grads())] + [p.value() for p in weights]


def _lars(m):
    weights = params(f"lars{next(_module_ids)}_")
    step = m.LarsScale(nn.SGD(weights, learning_rate=0.1))
    return [step(grads(scale=2.0))] + [p.value() for p in weights]


def _overflow_step(m, x):
    net = nn.WithLossCell(dense(3, 1), nn.MSELoss())
    opt = nn.SGD(net.trainable_params(), learning_rate=0.01)
    step = m.ExplicitOverflowStep(net, opt)
    loss, overflow = step(x, t(np.ones((2, 1))))
    return [loss, overflow, step.loss_scale.value()] + [p.value() for p in net.trainable_params()]


def _step(value, shape_one=False):
    return Tensor(np.array([value] if shape_one else value, np.int32))


FIXTURE_RUNS.update({
    # the per-gradient finiteness check the loss-scale step calls, compiled on its own
    "branches/overflow_from_helpers.py": lambda m: [
        jit(m._all_finite)(grads()), jit(m._all_finite)(grads(bad=True)),
    ],
    # per-step comprehension over a list of 18 forecast steps (the Cell is built with the same seed both times)
    "loops/per_step_lists.py": lambda m: (ms.set_seed(3), [
        m.Sampler()(t(np.ones((1, 8, 4, 4))), t(np.arange(18 * 128).reshape(18, 1, 8, 4, 4) / 1000.0))])[1],
    "lookalikes_optim/adam_family.py": _lamb,
    "lookalikes_optim/momentum_lars_thor.py": _lars,
    "lookalikes_optim/clip_accumulate_ema.py": lambda m: [
        m.LoopClipByValue()(grads(scale=3.0)),
        m.clip_by_global_norm(grads()), m.clip_by_global_norm(list(grads(scale=0.01))),
        m.ScaledGrads(dense(3, 1))(t(np.ones((2, 3))), t(4.0)),
    ],
    "lookalikes_branches/loss_scale_cells.py": lambda m: (
        _overflow_step(m, t(np.ones((2, 3)))) + _overflow_step(m, t([[1.0, np.inf, 0.0], [0.0, 1.0, 2.0]]))
        + [m.DynamicLossScaleUpdate(scale_window=1)(t(8.0), Tensor(False)),
           m.DynamicLossScaleUpdate(scale_window=5)(t(8.0), Tensor(False)),
           m.DynamicLossScaleUpdate(scale_window=1)(t(8.0), Tensor(True))]),
    "lookalikes_branches/schedules_and_masks.py": lambda m: [
        m.WarmupLinear()(_step(10)), m.WarmupLinear()(_step(5000)),
        m.WarmupLinear()(_step(10, True)), m.WarmupLinear()(_step(5000, True)),
        m.ClampedLoss()(t([1.0, 2.0]), t([0.0, 0.0])), m.ClampedLoss()(t([100.0, 20.0]), t([0.0, 0.0])),
        m.ClampedLoss(reduction="sum")(t([1.0, 2.0]), t([0.0, 0.0])),
    ],
    "branches/fp16_overflow_clamps.py": lambda m: (
        _feed_forward(m, np.float32, 1.0) + _feed_forward(m, np.float32, np.inf)
        + _feed_forward(m, np.float16, 1.0) + _feed_forward(m, np.float16, np.inf)),
    "branches/md_controllers.py": lambda m: _md_controllers(m),
    "optimizers/parameter_average.py": lambda m: _parameter_average(m),
    "optimizers/per_parameter_updates.py": lambda m: _per_parameter_updates(m),
    "optimizers/experimental_optim.py": _experimental_sign_sgd,
    "lookalikes_branches/python_values_in_helpers.py": lambda m: [
        m.PairwiseGap()(t([1.0, 2.0]), t([0.5, 0.5])),
        m.PairwiseGap()(t([1.0, np.nan]), t([0.5, 0.5])),
    ],
    "lookalikes_branches/jit_scalars_and_loops.py": lambda m: [
        m.halve_until(t(np.ones((2, 3))), Tensor(np.int32(3))),
        m.halve_until(t(np.full((2, 3), 0.2)), Tensor(np.int32(2))),
    ],
})


def _md_controllers(m):
    out = []
    for interval in (1, 2):
        cell = m.IntervalThermostat(control_step=interval)
        for value in ([[0.5, -1.0, 2.0]], [[3.0, 0.1, -0.2]], [[0.5, -1.0, 2.0]]):
            out += list(cell(t(np.zeros((1, 3))), t(value)))
        out.append(cell.step.value())
    shift = m.ShiftGradient()
    for value in ([[1.0, 2.0, 3.0]], [[1.0, np.nan, 3.0]]):
        out.append(shift(t(value), t([[0.5, 0.5, 0.5]])))
    for mask in ([[True, True, True]], [[True, False, True]]):
        out.append(m.PaddedDistances(mask)(t(np.arange(9.0).reshape(1, 3, 3))))
    return out


def _fixture_files():
    return sorted(p for p in fixture_sources(FIXTURES)
                  if p.parent.name in ("optimizers", "branches", "lookalikes_optim", "lookalikes_branches")
                  or str(p.relative_to(FIXTURES)) in FIXTURE_RUNS)


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_computes_the_same_after_safe_fixes(tmp_path, path):
    config = Config(root=str(FIXTURES)).with_overrides(select=CODES)
    outcome = fix_text(read_source(str(path)), config, unsafe=False)
    assert outcome.error is None and not outcome.problems
    name = str(path.relative_to(FIXTURES))
    if not outcome.changed:
        assert name not in FIXTURE_RUNS, f"{name}: no safe fix applies any more"
        return
    assert name in FIXTURE_RUNS, f"{name} has safe fixes: add a run to FIXTURE_RUNS"
    run = FIXTURE_RUNS[name]
    before = run(load(tmp_path, outcome.original))
    after = run(load(tmp_path, outcome.fixed))
    assert_same(before, after)


# -- the hazards behind the refusals ------------------------------------------------------------------------
SAFE_DIV = """
import mindspore as ms


@ms.jit
def safe_div(x, y):
    if y != 0:
        r = x / y
    else:
        r = x
    return r
"""


def test_division_guard_select_gives_nan_gradients_so_its_fix_is_never_safe(tmp_path):
    findings = [f for f in lint(SAFE_DIV) if f.code == "MSL201"]
    assert len(findings) == 1 and findings[0].fix_object is not None
    assert findings[0].fix_object.applicability == "unsafe"
    assert not fix(SAFE_DIV, select=["MSL201"]).changed
    rewritten = fix(SAFE_DIV, unsafe=True, select=["MSL201"]).fixed
    assert "ops.where(y != 0, x / y, x)" in rewritten
    before, after = load(tmp_path, textwrap.dedent(SAFE_DIV)), load(tmp_path, rewritten)
    for y in (0.0, 2.0):  # forward values agree on both sides of the guard
        assert_same(before.safe_div(t(1.0), t(y)), after.safe_div(t(1.0), t(y)))
    grad_before = ms.grad(before.safe_div, grad_position=(0, 1))(t(1.0), t(0.0))
    grad_after = ms.grad(after.safe_div, grad_position=(0, 1))(t(1.0), t(0.0))
    np.testing.assert_array_equal([g.asnumpy() for g in grad_before], [1.0, 0.0])
    assert all(np.isnan(g.asnumpy()) for g in grad_after)


NUMBER_BRANCHES = """
import mindspore as ms
from mindspore import ops


@ms.jit
def indicator(x, y):
    return 1.0 if x > y else 0.0


@ms.jit
def indicator_select(x, y):
    return ops.where(x > y, 1.0, 0.0)
"""


def test_python_number_branches_get_no_fix_because_a_select_returns_a_tensor(tmp_path):
    findings = [f for f in lint(NUMBER_BRANCHES) if f.code == "MSL201"]
    assert len(findings) == 1 and findings[0].fix_object is None
    assert "Python value" in findings[0].text
    module = load(tmp_path, textwrap.dedent(NUMBER_BRANCHES))
    assert isinstance(module.indicator(t(2.0), t(1.0)), float)
    assert isinstance(module.indicator_select(t(2.0), t(1.0)), Tensor)


STEP_CONDITION = """
import mindspore as ms
from mindspore import nn
from mindspore.common.initializer import initializer


class Schedule(nn.Cell):
    def __init__(self):
        super().__init__()
        self.global_step = ms.Parameter(initializer(0, [1], ms.int32), name="global_step")
        self.low = ms.Tensor(0.01, ms.float32)
        self.high = ms.Tensor(0.1, ms.float32)

    def construct(self):
        if self.global_step < 10:
            lr = self.low
        else:
            lr = self.high
        return lr
"""


def test_shape_one_step_condition_makes_the_select_unsafe(tmp_path):
    findings = [f for f in lint(STEP_CONDITION) if f.code == "MSL201"]
    assert len(findings) == 1 and findings[0].fix_object.applicability == "unsafe"
    assert "shape (1,)" in findings[0].fix_object.message
    rewritten = fix(STEP_CONDITION, unsafe=True, select=["MSL201"]).fixed
    before = load(tmp_path, textwrap.dedent(STEP_CONDITION)).Schedule()()
    after = load(tmp_path, rewritten).Schedule()()
    assert before.shape == () and after.shape == (1,)
    np.testing.assert_array_equal(before.asnumpy(), after.asnumpy()[0])


def test_hypermap_keeps_the_container_of_its_input(tmp_path):
    """Why list results are only rewritten where list-ness cannot matter: HyperMap returns a tuple for a tuple."""
    module = load(tmp_path, textwrap.dedent("""
        import mindspore as ms
        from mindspore import ops


        def _double(g):
            return g * 2


        @ms.jit
        def as_list(grads):
            return [_double(g) for g in grads]


        @ms.jit
        def mapped(grads):
            return ops.HyperMap()(_double, grads)
        """))
    assert isinstance(module.as_list(grads()), list)
    assert isinstance(module.mapped(grads()), tuple)
    assert [f.code for f in lint("""
        import mindspore as ms


        def _double(g):
            return g * 2


        @ms.jit
        def as_list(grads):
            return [_double(g) for g in grads]
        """) if f.fix_object is not None] == []


SHAPE_JOIN = """
import mindspore as ms


@ms.jit
def pick(x, v):
    s = x.sum()
    if s > 0:
        s = v
    return s
"""


def test_select_broadcasts_where_the_if_keeps_each_sides_shape_so_unproven_shapes_are_unsafe(tmp_path):
    findings = [f for f in lint(SHAPE_JOIN) if f.code == "MSL201"]
    assert len(findings) == 1 and findings[0].fix_object.applicability == "unsafe"
    assert "one shape" in findings[0].text
    assert not fix(SHAPE_JOIN, select=["MSL201"]).changed
    before = load(tmp_path, textwrap.dedent(SHAPE_JOIN))
    after = load(tmp_path, fix(SHAPE_JOIN, unsafe=True, select=["MSL201"]).fixed)
    v = t(np.ones(3))
    assert before.pick(t(-np.ones(3)), v).shape == ()  # the `if` keeps the 0-d sum
    assert after.pick(t(-np.ones(3)), v).shape == (3,)  # the select broadcasts it


MIXED_ZIP = """
import mindspore as ms
from mindspore import nn


class Decay(nn.Cell):
    def __init__(self, params):
        super().__init__()
        self.params = ms.ParameterTuple(params)

    def construct(self, grads):
        out = ()
        for p, g in zip(self.params, grads):
            out += (g + 0.01 * p,)
        return out
"""


def test_a_list_zipped_with_a_parameter_tuple_is_wrapped_because_hypermap_rejects_a_mix(tmp_path):
    rewritten = fix(MIXED_ZIP, select=["MSL102"]).fixed
    assert "self.params, tuple(grads))" in rewritten
    before = load(tmp_path, textwrap.dedent(MIXED_ZIP)).Decay(params(f"mix{next(_module_ids)}_"))
    after = load(tmp_path, rewritten).Decay(params(f"mix{next(_module_ids)}_"))
    assert_same(before(list(grads())), after(list(grads())))
    unwrapped = rewritten.replace("tuple(grads))", "grads)")
    with pytest.raises(RuntimeError, match="consistent"):
        load(tmp_path, unwrapped).Decay(params(f"mix{next(_module_ids)}_"))(list(grads()))


READ_AFTER_UPDATE = """
import mindspore as ms
from mindspore import nn, ops


class Step(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scale = ms.Parameter(ms.Tensor(1.0, ms.float32), name="scale")

    def construct(self, x, grads):
        ops.assign(self.scale, self.scale * 2)
        if x > 0:
            r = x * self.scale
        else:
            r = x
        out = ()
        for g in grads:
            out += (g * self.scale,)
        ops.assign(self.scale, self.scale * 2)
        return r, out
"""


def test_parameters_read_after_an_update_see_the_update_in_both_rewrites(tmp_path):
    """The select and the ``ops.partial``-bound Parameter read the value the ``assign`` before them wrote."""
    outcome = fix(READ_AFTER_UPDATE, select=CODES)
    assert "ops.where(x > 0, x * self.scale, x)" in outcome.fixed
    assert "ops.partial(_map_g, self.scale)" in outcome.fixed
    runs = []
    for text in (textwrap.dedent(READ_AFTER_UPDATE), outcome.fixed):
        step = load(tmp_path, text).Step()
        runs.append([step(t(1.0), grads()), step(t(-1.0), grads()), step.scale.value()])
    assert_same(runs[0], runs[1])


def test_fp16_clamp_split_keeps_gradients(tmp_path):
    """``if dtype == float16 and isinf(h).any(): h = clamp(h)`` -> ``if dtype == float16: h = where(isinf...)``:
    the gradients match too, for float16 and float32 inputs, finite and not (clamp is finite on both sides)."""
    example = rule_by_code("MSL201").INVALID[8]
    outcome = fix(example.code, select=["MSL201"])
    assert outcome.changed and outcome.error is None
    before, after = load(tmp_path, textwrap.dedent(example.code)), load(tmp_path, outcome.fixed)
    for dtype in (np.float16, np.float32):
        for value in ([1.0, -2.0, 3.0], [1.0, np.inf, -np.inf], [np.nan, 1.0, 65000.0]):
            x = t(value, dtype)
            assert_same([ms.grad(before.clamp_fp16)(x)], [ms.grad(after.clamp_fp16)(x)])
