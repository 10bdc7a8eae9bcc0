"""MSL201's whole-structure selects (``elif`` chains, several names, early returns) run with real MindSpore.

Original and rewritten code are run in GRAPH_MODE (Cells) and under ``@ms.jit`` on inputs that take every path;
outputs must match exactly, and so must gradients where the inputs are float and the fix is safe (outside
learning-rate schedules, whose gradients nobody takes). The multi-phase schedules' fixes are run on every phase,
0-d and shape-(1,) steps, zero warmups included.
"""
import pathlib
import textwrap

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from mindspore import Tensor  # noqa: E402

from ms_lint.config import Config  # noqa: E402
from ms_lint.fixer import fix_text  # noqa: E402
from ms_lint.rules import rule_by_code  # noqa: E402
from ms_lint.source import read_source  # noqa: E402
from ms_lint.testing import fix, lint  # noqa: E402
from mindspore_support import import_source  # noqa: E402

pytestmark = [pytest.mark.mindspore, pytest.mark.usefixtures("graph_mode")]

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"


def load(tmp_path, text):
    return import_source(tmp_path, text, "msl_flow")


def t(value, dtype=np.float32):
    return Tensor(np.asarray(value, dtype=dtype))


def same(before, after):
    a, b = before.asnumpy(), after.asnumpy()
    assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
    np.testing.assert_array_equal(a, b)


def _fixed_pair(tmp_path, example, unsafe=False):
    outcome = fix(example.code, unsafe=unsafe, select=["MSL201"])
    assert outcome.changed and outcome.error is None
    return load(tmp_path, textwrap.dedent(example.code)), load(tmp_path, outcome.fixed)


def test_elif_chain_select_matches_outputs_and_gradients(tmp_path):
    before, after = _fixed_pair(tmp_path, rule_by_code("MSL201").INVALID[9])
    for value in ([0.3, -0.5], [2.0, 3.0], [9.0, -7.0]):
        pred, target = t(value), t([0.0, 0.0])
        same(before.three_regimes(pred, target), after.three_regimes(pred, target))
        grad_before = ms.grad(before.three_regimes, grad_position=(0, 1))(pred, target)
        grad_after = ms.grad(after.three_regimes, grad_position=(0, 1))(pred, target)
        for g_before, g_after in zip(grad_before, grad_after):
            same(g_before, g_after)


def test_two_names_one_condition_matches_outputs_and_gradients(tmp_path):
    before, after = _fixed_pair(tmp_path, rule_by_code("MSL201").INVALID[10])
    for x in (3.0, 1.0, -2.0):
        same(before.scaled_gap(t(x), t(1.0)), after.scaled_gap(t(x), t(1.0)))
        g_before = ms.grad(before.scaled_gap, grad_position=(0, 1))(t(x), t(1.0))
        g_after = ms.grad(after.scaled_gap, grad_position=(0, 1))(t(x), t(1.0))
        for a, b in zip(g_before, g_after):
            same(a, b)


def test_fixture_loss_cell_gradients_match_in_graph_mode(tmp_path):
    path = FIXTURES / "branches" / "warmup_decay_chains.py"
    outcome = fix_text(read_source(str(path)), Config(root=str(FIXTURES)).with_overrides(select=["MSL201"]))
    assert outcome.changed and "ops.where(\n" in outcome.fixed
    before, after = load(tmp_path, outcome.original), load(tmp_path, outcome.fixed)
    for value in ([0.3, -0.5], [2.0, 3.0], [9.0, -7.0]):
        pred = t(value)
        grads = [ms.grad(m.ThreeRegimeLoss())(pred, t([0.0, 0.0])) for m in (before, after)]
        same(*grads)


def _steps(shape_one):
    values = (0, 4, 9, 12, 14, 16, 30, 64, 65, 200)
    return [Tensor(np.array([v] if shape_one else v, np.int32)) for v in values]


@pytest.mark.parametrize("shape_one", [False, True], ids=["0-d", "shape-1"])
def test_unsafe_schedule_chains_match_on_every_phase(tmp_path, shape_one):
    """The fixture's schedules (a four-phase chain, an early return before an if/else): the fixes (safe now:
    float divisions in a learning-rate schedule) give the same rate at every step, for a 0-d step and for an
    optimizer's shape-(1,) ``global_step``."""
    path = FIXTURES / "branches" / "warmup_decay_chains.py"
    config = Config(root=str(FIXTURES)).with_overrides(select=["MSL201"])
    outcome = fix_text(read_source(str(path)), config, unsafe=True)
    assert outcome.error is None and not outcome.problems
    assert not fix(outcome.fixed, unsafe=True, select=["MSL201"]).changed
    before, after = load(tmp_path, outcome.original), load(tmp_path, outcome.fixed)
    for name in ("WarmupHoldCosine", "WarmupThenLinear"):
        cells = getattr(before, name)(), getattr(after, name)()
        for step in _steps(shape_one):
            same(cells[0](step), cells[1](step))


def test_unsafe_schedule_example_matches_under_graph_mode(tmp_path):
    before, after = _fixed_pair(tmp_path, rule_by_code("MSL201").INVALID[11], unsafe=True)
    cells = before.WarmupThenLinear(), after.WarmupThenLinear()  # built once: compiled once, run at every step
    for step in _steps(False):
        same(cells[0](step), cells[1](step))


MODELLED_ON_REAL = """
import math

import mindspore as ms
from mindspore import Tensor
from mindspore.common import dtype as mstype
from mindspore.nn.learning_rate_schedule import LearningRateSchedule
from mindspore.ops import operations as P


class CoolDown(LearningRateSchedule):
    def __init__(self, learning_rate=0.1, warmup_steps=4, keep_steps=3, decay_steps=10, final_steps=2):
        super().__init__()
        self.warmup_steps = Tensor(warmup_steps, mstype.float32)
        self.keep_steps = Tensor(keep_steps, mstype.float32)
        self.decay_steps = Tensor(decay_steps, mstype.float32)
        self.final_steps = Tensor(final_steps, mstype.float32)
        self.learning_rate = learning_rate
        self.warmup_lr_init = 0.0
        self.lr_end1 = 0.01
        self.lr_end2 = 0.001
        self.greater = P.Greater()
        self.max = P.Maximum()
        self.cos = P.Cos()
        self.math_pi = math.pi
        self.zero_constant = Tensor(0.0, mstype.float32)
        self.cast = P.Cast()

    def construct(self, global_step):
        global_step = self.cast(global_step, mstype.float32)
        if self.warmup_steps != 0 and self.greater(self.warmup_steps, global_step):
            percent = global_step / self.warmup_steps
            learning_rate = self.warmup_lr_init + (self.learning_rate - self.warmup_lr_init) * percent
        elif self.greater(self.warmup_steps + self.keep_steps, global_step):
            learning_rate = global_step - global_step + self.learning_rate
        elif self.greater(self.warmup_steps + self.keep_steps + self.decay_steps, global_step):
            progress = (global_step - self.keep_steps - self.warmup_steps) / self.decay_steps
            percent = self.max(self.zero_constant, 0.5 * (1.0 + self.cos(self.math_pi * progress)))
            learning_rate = self.lr_end1 + (self.learning_rate - self.lr_end1) * percent
        elif self.greater(self.warmup_steps + self.keep_steps + self.decay_steps + self.final_steps, global_step):
            learning_rate = global_step - global_step + self.lr_end1
        else:
            learning_rate = global_step - global_step + self.lr_end2
        return learning_rate
"""


def test_schedule_written_like_real_code_matches(tmp_path):
    """A five-phase cool-down schedule in the form of the real ones (``P.Greater`` tests joined with ``and``, a
    rebound ``global_step``): every ``if``/``elif`` offers the one chain fix, safe (float divisions in a
    learning-rate schedule, every phase shaped like the step)."""
    found = [f for f in lint(MODELLED_ON_REAL) if f.code == "MSL201"]
    assert len(found) == 4 and all(f.fix_object is not None for f in found)
    assert {f.fix_object.applicability for f in found} == {"safe"}
    outcome = fix(MODELLED_ON_REAL, unsafe=False, select=["MSL201"])
    assert outcome.fixed.count("ops.where(") == 4 and "percent" not in outcome.fixed
    assert not fix(outcome.fixed, unsafe=True, select=["MSL201"]).changed
    before, after = load(tmp_path, textwrap.dedent(MODELLED_ON_REAL)), load(tmp_path, outcome.fixed)
    cells = before.CoolDown(), after.CoolDown()  # built once: each compiles once per step shape
    for shape_one in (False, True):
        for step in _steps(shape_one):
            same(cells[0](step), cells[1](step))


TYPED_CONFIGS = {
    "CoolDownSchedule": [
        dict(learning_rate=0.1, warmup_steps=4, keep_steps=3, decay_steps=10, final_steps=2, lr_end1=0.01,
             lr_end2=0.001),
        dict(learning_rate=0.1, warmup_steps=0, keep_steps=2, decay_steps=10, final_steps=3, lr_end1=0.01),
        dict(learning_rate=0.1, warmup_ratio=0.1, total_steps=40, decay_steps=20),
    ],
    "LinearDecaySchedule": [
        dict(learning_rate=0.05, total_steps=30, warmup_steps=5),
        dict(learning_rate=0.05, total_steps=30, warmup_steps=0),
    ],
}


@pytest.mark.parametrize("shape_one", [False, True], ids=["0-d", "shape-1"])
def test_typed_schedules_safe_selects_match_on_every_phase_with_zero_warmup(tmp_path, shape_one):
    """The schedules modelled on mindformers' (``@args_type_check`` arguments, a step helper, float32 constants):
    the safe fixes (no ``--unsafe-fixes``) rewrite the two gradient-free schedules and give the same rate, shape
    and dtype at every step of every phase, for a 0-d step and an optimizer's shape-(1,) ``global_step``,
    including a zero warmup (where the untaken warmup side divides 0 by 0)."""
    path = FIXTURES / "branches" / "typed_schedules.py"
    config = Config(root=str(FIXTURES)).with_overrides(select=["MSL201"])
    outcome = fix_text(read_source(str(path)), config, unsafe=False)
    assert outcome.error is None and not outcome.problems
    assert outcome.fixed.count("ops.where(") == 5
    assert not fix(outcome.fixed, unsafe=False, select=["MSL201"]).changed
    before, after = load(tmp_path, outcome.original), load(tmp_path, outcome.fixed)
    steps = (0, 1, 3, 4, 5, 6, 8, 12, 16, 17, 18, 19, 25, 29, 30, 31, 45, 200)
    for name, configs in TYPED_CONFIGS.items():
        for kwargs in configs:
            cells = getattr(before, name)(**kwargs), getattr(after, name)(**kwargs)
            for value in steps:
                step = Tensor(np.array([value] if shape_one else value, np.int32))
                rate = cells[1](step)
                same(cells[0](step), rate)
                assert np.isfinite(rate.asnumpy()).all()


def test_typed_schedule_example_matches_with_and_without_warmup(tmp_path):
    example = next(e for e in rule_by_code("MSL201").INVALID if "class LinearWarmup(" in e.code)
    before, after = _fixed_pair(tmp_path, example)
    for kwargs in (dict(learning_rate=0.1, total_steps=20, warmup_steps=4),
                   dict(learning_rate=0.1, total_steps=20, warmup_steps=0),
                   dict(learning_rate=0.1, total_steps=20, warmup_ratio=0.25)):
        # one pair of Cells per configuration, called at every step as an optimizer calls its schedule: each
        # compiles once per step shape and the compiled graphs are what run on the later steps
        cells = before.LinearWarmup(**kwargs), after.LinearWarmup(**kwargs)
        for value in (0, 2, 4, 5, 19, 20, 30):
            for step in (Tensor(np.array(value, np.int32)), Tensor(np.array([value], np.int32))):
                same(cells[0](step), cells[1](step))


def test_subcell_branches_match_but_a_counting_cell_counts_on_every_call(tmp_path):
    """Shape 9: the select over sub-cell calls gives the same rates; a sub-cell with a side effect (a call
    counter) runs on every call after the rewrite, which is why the fix is unsafe."""
    path = FIXTURES / "branches" / "subcell_schedules.py"
    config = Config(root=str(FIXTURES)).with_overrides(select=["MSL201"])
    assert not fix_text(read_source(str(path)), config).changed  # nothing safe
    outcome = fix_text(read_source(str(path)), config, unsafe=True)
    assert outcome.error is None and outcome.fixed.count("ops.where(") == 2
    assert not fix(outcome.fixed, unsafe=True, select=["MSL201"]).changed
    before, after = load(tmp_path, outcome.original), load(tmp_path, outcome.fixed)
    steps = [Tensor(np.int32(v)) for v in (0, 5, 9, 10, 11, 30)]
    cells = before.WarmupThenDecay(), after.WarmupThenDecay()
    for step in steps:
        same(cells[0](step), cells[1](step))
    counted = before.WarmupThenCounted(), after.WarmupThenCounted()
    for step in steps:
        same(counted[0](step), counted[1](step))
    assert counted[0].decay_lr.calls.value().asnumpy() == 3.0  # steps 10, 11, 30 take the decay branch
    assert counted[1].decay_lr.calls.value().asnumpy() == 6.0  # the select runs the cell on every call


def test_subcell_example_matches(tmp_path):
    before, after = _fixed_pair(tmp_path, rule_by_code("MSL201").INVALID[12], unsafe=True)
    for step in (2.0, 10.0, 25.0):
        same(before.Schedule()(t(step)), after.Schedule()(t(step)))


def _overflowing(dtype):
    return [t(v, dtype) for v in ([1.0, 60000.0, -3.0], [np.inf, 2.0, -65504.0], [65000.0, -np.inf, 1.0])]


def test_number_constants_match_outputs_dtypes_and_gradients_for_fp16_and_fp32(tmp_path):
    """Shape 8: ``c = big - 1000 if isinf(h).any() else big`` -> Tensor constants of ``h.dtype``."""
    before, after = _fixed_pair(tmp_path, rule_by_code("MSL201").INVALID[13], unsafe=True)
    for dtype in (np.float16, np.float32):
        for h in _overflowing(dtype):
            same(before.clamp_overflow(h), after.clamp_overflow(h))
            same(ms.grad(before.clamp_overflow)(h), ms.grad(after.clamp_overflow)(h))


def test_number_constants_in_a_cell_and_why_the_fix_is_unsafe(tmp_path):
    path = FIXTURES / "branches" / "overflow_constants.py"
    config = Config(root=str(FIXTURES)).with_overrides(select=["MSL201"])
    assert not fix_text(read_source(str(path)), config).changed
    outcome = fix_text(read_source(str(path)), config, unsafe=True)
    assert "ms.Tensor(FP16_MAX, scores.dtype)" in outcome.fixed
    before, after = load(tmp_path, outcome.original), load(tmp_path, outcome.fixed)
    cells = before.ClampedScores(), after.ClampedScores()
    for dtype in (np.float16, np.float32):
        for scores in _overflowing(dtype):
            same(cells[0](scores), cells[1](scores))
    # where the value itself is the result, the `if` gives a Python number and the select a Tensor
    module = load(tmp_path, textwrap.dedent("""
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def flag(h):
            return 1.0 if ops.isinf(h).any() else 0.0
        """))
    rewritten = load(tmp_path, fix(textwrap.dedent("""
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def flag(h):
            return 1.0 if ops.isinf(h).any() else 0.0
        """), unsafe=True, select=["MSL201"]).fixed)
    assert isinstance(module.flag(t([np.inf, 1.0])), float)
    assert isinstance(rewritten.flag(t([np.inf, 1.0])), Tensor)


def test_table_index_is_clamped_and_matches_on_every_step(tmp_path):
    """Shape 7's table read: ``self.warmup_table[step]`` under ``step < 4`` becomes a read at
    ``ops.clamp(step, 0, 3)`` (unsafe: past the guard the ``if`` would have read out of range)."""
    path = FIXTURES / "branches" / "warmup_decay_chains.py"
    outcome = fix_text(read_source(str(path)), Config(root=str(FIXTURES)).with_overrides(select=["MSL201"]),
                       unsafe=True)
    assert "self.warmup_table[ops.clamp(step, 0, 3)]" in outcome.fixed
    assert "lr = self.table[step]" in outcome.fixed  # a table of unknown length keeps its `if`
    before, after = load(tmp_path, outcome.original), load(tmp_path, outcome.fixed)
    cells = before.TableWarmup(), after.TableWarmup()
    for value in range(0, 9):
        step = Tensor(np.int32(value))
        same(cells[0](step), cells[1](step))


@pytest.mark.parametrize("t_mult", [1, 2])
def test_compile_time_test_inside_a_chain_stays_a_folded_conditional(tmp_path, t_mult):
    """``elif self.t_mult == 1:`` inside a chain on the step: the select keeps it as ``a if k else b`` (folded
    at compile time); both settings of the constant give the original rates."""
    path = FIXTURES / "branches" / "warmup_decay_chains.py"
    outcome = fix_text(read_source(str(path)), Config(root=str(FIXTURES)).with_overrides(select=["MSL201"]),
                       unsafe=True)
    assert "self.t_0 if (self.t_mult == 1) else (self.t_0 * self.t_mult)" in outcome.fixed
    before, after = load(tmp_path, outcome.original), load(tmp_path, outcome.fixed)
    cells = before.RestartCosine(t_mult=t_mult), after.RestartCosine(t_mult=t_mult)
    for shape_one in (False, True):
        for step in _steps(shape_one):
            same(cells[0](step), cells[1](step))


def test_an_augmented_assignment_in_a_branch_updates_the_attribute_and_the_select_does_not(tmp_path):
    """Why a select over ``done_status += 1`` is unsafe (MSL201 page, "Fix safety"): with ``done_status`` bound to
    ``self.zero``, the original updates the attribute's Tensor in place inside the Tensor ``if``, so the next call
    starts from the new value; the select only rebinds the name. The first call agrees, the second does not."""
    path = FIXTURES / "branches" / "episode_counters.py"
    config = Config(root=str(FIXTURES)).with_overrides(select=["MSL201"])
    assert not fix_text(read_source(str(path)), config).changed  # no safe fix
    outcome = fix_text(read_source(str(path)), config, unsafe=True)
    assert outcome.changed and outcome.fixed.count("ops.where(") == 4
    before, after = load(tmp_path, outcome.original).RecordFirst(), load(tmp_path, outcome.fixed).RecordFirst()
    dones = t([0, 1, 0, 1], np.bool_)
    for a, b in zip(before(dones), after(dones)):
        same(a, b)
    assert before.zero.asnumpy() == 1 and after.zero.asnumpy() == 0  # the attribute's Tensor changed in place
    assert before(dones)[0].asnumpy() == 2 and after(dones)[0].asnumpy() == 1
