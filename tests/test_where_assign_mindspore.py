"""MSL201's select rewrite of conditional state updates (``if c: assign(p, v)`` -> ``assign(p, where(c, v, p))``)
proven with real MindSpore (CPU, GRAPH_MODE): original and fixed fixture run over steps where the test is true and
false, and every Parameter is compared after every call; the look-alikes keep their ``if``."""
import itertools
import pathlib
import textwrap

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from mindspore import Parameter, Tensor  # noqa: E402

from ms_lint.rules import rule_by_code  # noqa: E402
from ms_lint.testing import fix, lint  # noqa: E402
from mindspore_support import import_source  # noqa: E402

pytestmark = [pytest.mark.mindspore, pytest.mark.usefixtures("graph_mode")]

FIXTURE = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "optimizers" / "parameter_average.py"
_ids = itertools.count()


def load(tmp_path, text):
    return import_source(tmp_path, text, "msl_assign")


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    text = FIXTURE.read_text(encoding="utf-8")
    outcome = fix(text, select=["MSL201"])
    assert outcome.changed and outcome.error is None
    assert fix(outcome.fixed, select=["MSL201"]).changed is False
    tmp = tmp_path_factory.mktemp("assign")
    return load(tmp, text), load(tmp, outcome.fixed), outcome.fixed


def weights(tag):
    rng = np.random.default_rng(5)
    return [Parameter(Tensor(rng.standard_normal(s).astype(np.float32)), name=f"{tag}_w{i}")
            for i, s in enumerate([(3,), (2, 2), ()])]


def state(cell):
    return [p.asnumpy().copy() for p in cell.get_parameters()]


@pytest.mark.parametrize("algo", ["ema", "sma"])
def test_parameter_average_matches_every_step(versions, algo):
    before, after, _ = versions
    cells = [m.ParameterAverage(weights(f"{algo}{next(_ids)}"), algo=algo) for m in (before, after)]
    rng = np.random.default_rng(11)
    for step in range(1, 8):  # interval 2, count 2: the tests are true at 2, 4, 6 and the load at 4
        grads = tuple(Tensor(rng.standard_normal(p.shape).astype(np.float32)) for p in cells[0].params)
        for cell in cells:
            cell(grads, Tensor([step], ms.int32))
        a, b = state(cells[0]), state(cells[1])
        assert [x.shape for x in a] == [x.shape for x in b]
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_zero_d_parameters_keep_their_shape_under_a_shape_one_step(versions):
    before, after, _ = versions
    cells = [m.ScaleWindow() for m in (before, after)]
    overflow = [False, True, False, False, False, True, False, False, False]
    for step, flag in enumerate(overflow, start=1):
        outs = [cell(Tensor(flag), Tensor([step], ms.int32)) for cell in cells]
        assert outs[0].shape == outs[1].shape == ()
        for x, y in zip(state(cells[0]), state(cells[1])):
            assert x.shape == y.shape == ()
            np.testing.assert_array_equal(x, y)
    assert float(cells[1].scale.asnumpy()) == 1024.0 * 2 ** 2  # doubled at steps 3 and 9, not at 6 (overflow)


def test_if_else_of_assign_add_and_assign_matches_every_step(versions):
    """``if mu != 1: AssignAdd(ax, cast(delta, ax.dtype)); assign_add(count, 1) else: assign(ax, w)``: the ``if``
    branch's updates become ``assign(p, where(c, p + v, p))``, the ``else`` branch's ``assign(p, where(c, p, v))``
    after them; the Parameters match after every call whichever branch it takes."""
    before, after, fixed = versions
    assert "ops.assign(self.ax, ops.where(ops.reshape(mu != 1, ()), self.ax, w))" in fixed
    cells = [m.AverageOrCopy() for m in (before, after)]
    rng = np.random.default_rng(4)
    for mu in (1.0, 1.0, 0.5, 0.25, 1.0, 0.5):
        w = Tensor(rng.standard_normal(3).astype(np.float32))
        outs = [cell(w, Tensor(mu, ms.float32)) for cell in cells]
        for x, y in zip(*outs):
            assert x.shape == y.shape
            np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())
    assert int(cells[1].count.asnumpy()) == 3


def test_loop_over_a_parameter_tuple_matches_every_step(versions):
    """``for ..., eta, ... in zip(self.params, self.etas, grads)``: the etas are set on the first step only."""
    before, after, fixed = versions
    assert "ops.assign(eta, ops.where(ops.reshape(self.global_step.squeeze() == 1, ()), " in fixed
    cells = [m.WarmStartSGD(weights(f"warm{next(_ids)}")) for m in (before, after)]
    rng = np.random.default_rng(2)
    for _ in range(4):
        grads = tuple(Tensor(rng.standard_normal(p.shape).astype(np.float32)) for p in cells[0].params)
        for cell in cells:
            cell(grads)
        for x, y in zip(state(cells[0]), state(cells[1])):
            assert x.shape == y.shape
            np.testing.assert_array_equal(x, y)


def test_lookalikes_keep_their_if(versions):
    _, _, fixed = versions
    for line in ("if self.good_steps > 2:  # expect: MSL201",
                 "if step > 0:  # expect: MSL201\n            self.opt(",
                 "if step > 0:  # expect: MSL201\n            ops.assign(self.average",
                 "if step > 0:  # expect: MSL201\n        F.assign(y, x)",
                 "if step > 0:  # expect: MSL201\n            F.assign(grad, grad * 0.5)",
                 "if step > 0:  # expect: MSL201\n            ops.assign_add(self.acc, g * 0.1)"):
        assert line in fixed
    findings = {f.line: f for f in lint(fixed, select=["MSL201"])}
    fixes = [f.fix_object.applicability for f in findings.values() if f.fix_object is not None]
    assert fixes == ["unsafe"], findings  # only local_target's assign to a local Tensor


@pytest.mark.parametrize("step", [1, 2])
def test_example_gradients_match(tmp_path, step):
    """The rule example (INVALID[15]): gradients of a loss on the returned average w.r.t. the input match, with the
    step test false (1) and true (2)."""
    example = rule_by_code("MSL201").INVALID[15]
    outcome = fix(example.code, select=["MSL201"])
    assert "ops.where(ops.reshape(" in outcome.fixed
    results = []
    for text in (example.code, outcome.fixed):
        net = load(tmp_path, textwrap.dedent(text)).EmaWeight()
        w = Tensor(np.array([0.5, -2.0], np.float32))
        loss = lambda w_: (net(w_, Tensor([step], ms.int32)) * w_).sum()  # noqa: E731
        results.append([ms.grad(loss)(w).asnumpy(), net.ema.asnumpy().copy()])
    for x, y in zip(*results):
        np.testing.assert_array_equal(x, y)


def test_unsafe_select_on_a_local_tensor_matches(tmp_path):
    """``y = x * 2; if step > 0: F.assign(y, x)`` (the fixture's ``local_target``): the unsafe fix computes the same
    with the test true and false."""
    text = FIXTURE.read_text(encoding="utf-8")
    outcome = fix(text, unsafe=True, select=["MSL201"])
    assert "F.assign(y, ops.where(ops.reshape(step > 0, ()), x, y))" in outcome.fixed
    before, after = load(tmp_path, text), load(tmp_path, outcome.fixed)
    x = Tensor(np.array([1.0, -2.0, 3.0], np.float32))
    for step in (0, 1):
        a = before.local_target(x, Tensor([step], ms.int32)).asnumpy()
        b = after.local_target(x, Tensor([step], ms.int32)).asnumpy()
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, x.asnumpy() * (1 if step else 2))  # the assign did update y


@pytest.mark.parametrize("t0", [1e6, 1.0])
def test_mindspores_own_asgd_keeps_every_parameter(tmp_path, t0):
    """The installed ``mindspore/nn/optim/asgd.py`` (``if self.squeeze(self.global_step) == 1: self.assign(eta,
    lr)`` and ``if mu != 1: self.assignadd(ax, ...) else: self.assign(ax, param)`` in its per-parameter loop),
    fixed in a copy: both optimizers give identical Parameters over 5 steps. The first step takes the first
    branch; with ``t0=1e6`` ``mu`` stays 1 (the ``else`` every step), with ``t0=1`` it drops below 1 from the
    third step (the ``assignadd``)."""
    import mindspore.nn.optim.asgd as asgd

    text = pathlib.Path(asgd.__file__).read_text(encoding="utf-8")
    outcome = fix(text, select=["MSL201"])
    assert "self.assign(eta, " in outcome.fixed and "if self.squeeze(self.global_step) == 1:" not in outcome.fixed
    assert "if mu != 1:" not in outcome.fixed and "ops.assign(ax, " in outcome.fixed
    assert fix(outcome.fixed, select=["MSL201"]).changed is False
    runs = []
    for source in (text, outcome.fixed):
        module = load(tmp_path, source)
        rng = np.random.default_rng(0)
        params = [Parameter(Tensor(rng.standard_normal(s).astype(np.float32)), name=f"asgd{next(_ids)}")
                  for s in [(3,), (2, 2)]]
        opt = module.ASGD(params, learning_rate=0.1, t0=t0)
        states = []
        for _ in range(5):
            opt(tuple(Tensor(rng.standard_normal(p.shape).astype(np.float32)) for p in params))
            states.append(state(opt))
        assert any((m.asnumpy() != 1).any() for m in opt.mu) == (t0 == 1.0)  # which ``mu`` branch ran
        runs.append(states)
    for a, b in zip(*runs):
        for x, y in zip(a, b):
            assert x.shape == y.shape
            np.testing.assert_array_equal(x, y)
