"""The two unsafe loop rewrites of issue 16 run against the originals on MindSpore (CPU, GRAPH_MODE and @jit).

* MSL101 Tensor counter (fixtures/loops/recurrences.py): outputs and gradients equal; the rewritten loop is a
  real ``while`` (its compile time does not grow with the trip count).
* MSL102 ``ops.addn`` over HyperMap (fixtures/optimizers/grad_norms.py) at 60 gradients: outputs equal within
  float32 rounding (the grouping changes; measured bit-equal on CPU when the sum starts at zero), gradients too.
"""
import pathlib
import time

import pytest

ms = pytest.importorskip("mindspore")
np = pytest.importorskip("numpy")

from ms_lint.testing import fix  # noqa: E402
from mindspore_support import import_source  # noqa: E402

pytestmark = [pytest.mark.mindspore, pytest.mark.usefixtures("graph_mode")]

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECURRENCES = ROOT / "fixtures" / "loops" / "recurrences.py"
GRAD_NORMS = ROOT / "fixtures" / "optimizers" / "grad_norms.py"


def _load(source: str, tmp_path: pathlib.Path):
    return import_source(tmp_path, source, "mslint_counter_case")


def _fixed(path: pathlib.Path, code: str) -> str:
    source = path.read_text(encoding="utf-8")
    outcome = fix(source, unsafe=True, select=[code])
    assert outcome.error is None and outcome.changed
    assert fix(outcome.fixed, unsafe=True, select=[code]).changed is False, "fixing twice changed the code"
    assert not fix(source, unsafe=False, select=[code]).changed, "an unsafe fix was applied without --unsafe-fixes"
    return outcome.fixed


def _leaves(result):
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in _leaves(item)]
    return [result.asnumpy()]


def _rand(*shape, seed=0, scale=1.0):
    return ms.Tensor((np.random.RandomState(seed).randn(*shape) * scale).astype(np.float32))


# -- MSL101: Tensor counter -------------------------------------------------------------------------------------
RECURRENCE_CASES = {
    "DiscountedReturn": lambda: (_rand(12, 4), ms.Tensor((np.random.RandomState(1).rand(12, 4) > 0.8)
                                                         .astype(np.float32)), _rand(4, seed=2)),
    "TwoLoopRecursion": lambda: (_rand(10, 6, scale=0.1), _rand(10, 6, seed=3), _rand(6, seed=4)),
}


@pytest.mark.parametrize("target", sorted(RECURRENCE_CASES))
def test_tensor_counter_matches_the_unrolled_loop(target, tmp_path):
    fixed = _fixed(RECURRENCES, "MSL101")
    assert "ms.Tensor(" in fixed and "while index > -1:" in fixed
    before = getattr(_load(RECURRENCES.read_text(encoding="utf-8"), tmp_path), target)()
    after = getattr(_load(fixed, tmp_path), target)()
    args = RECURRENCE_CASES[target]()
    for a, b in zip(_leaves(before(*args)), _leaves(after(*args))):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(b, a)  # same operations in the same order: bit for bit


@pytest.mark.parametrize("target", sorted(RECURRENCE_CASES))
def test_tensor_counter_keeps_gradients(target, tmp_path):
    fixed = _fixed(RECURRENCES, "MSL101")
    args = RECURRENCE_CASES[target]()
    grads = []
    for source in (RECURRENCES.read_text(encoding="utf-8"), fixed):
        net = getattr(_load(source, tmp_path), target)()
        grads.append(_leaves(ms.grad(net, grad_position=tuple(range(len(args))))(*args)))
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


def test_tensor_counter_compile_time_does_not_grow_with_the_trip_count(tmp_path):
    """The point of the rewrite: at 200 steps the unrolled loop compiles several times slower than the while."""
    fixed = _fixed(RECURRENCES, "MSL101")
    steps = 200
    args = (_rand(steps, 4), ms.Tensor(np.zeros((steps, 4), np.float32)), _rand(4, seed=2))
    seconds = []
    for source in (RECURRENCES.read_text(encoding="utf-8"), fixed):
        net = _load(source, tmp_path).DiscountedReturn()
        start = time.perf_counter()
        out = net(*args)
        seconds.append(time.perf_counter() - start)
        out.asnumpy()
    assert seconds[1] * 2 < seconds[0], f"first call: unrolled {seconds[0]:.2f} s, Tensor counter {seconds[1]:.2f} s"


# -- MSL102: ops.addn over HyperMap -------------------------------------------------------------------------------
def _gradients(count=60):
    shapes = [(3, 4), (4,), (2, 3, 2), (5,)]
    rng = np.random.RandomState(5)
    return tuple(ms.Tensor((rng.randn(*shapes[i % 4]) * 10.0 ** rng.randint(-3, 3)).astype(np.float32))
                 for i in range(count))


def test_addn_sum_matches_the_loop_at_60_gradients(tmp_path):
    fixed = _fixed(GRAD_NORMS, "MSL102")
    assert fixed.count("ops.addn(") == 2
    before = _load(GRAD_NORMS.read_text(encoding="utf-8"), tmp_path)
    after = _load(fixed, tmp_path)
    grads = _gradients()
    clip = ms.Tensor(1.0, ms.float32)
    cell_before = _leaves(before.ClipByGlobalNorm()(grads, clip))
    cell_after = _leaves(after.ClipByGlobalNorm()(grads, clip))
    jit_before = before.global_norm(grads).asnumpy()
    jit_after = after.global_norm(grads).asnumpy()
    # The sum starts at zero, so the grouping is the same when AddN adds left to right (it does on CPU).
    assert cell_before[-1].tobytes() == cell_after[-1].tobytes()
    assert jit_before.tobytes() == jit_after.tobytes()
    for a, b in zip(cell_before, cell_after):
        np.testing.assert_allclose(b, a, rtol=1e-6)


def test_addn_sum_keeps_gradients(tmp_path):
    fixed = _fixed(GRAD_NORMS, "MSL102")
    grads = _gradients(12)
    results = []
    for source in (GRAD_NORMS.read_text(encoding="utf-8"), fixed):
        module = _load(source, tmp_path)
        results.append(_leaves(ms.grad(module.global_norm, grad_position=0)(grads)))
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)


# -- MSL101: loops that only write slices of one tensor (safe) ------------------------------------------------------
SLICE_WRITES = ROOT / "fixtures" / "loops" / "slice_writes.py"
SLICE_CASES = {
    "MaskTail": lambda: (_rand(5, 4, 6),),
    "HistoryBuffer": lambda: (_rand(6, 3), _rand(3, seed=1)),
}


@pytest.mark.parametrize("target", sorted(SLICE_CASES))
def test_slice_writes_match_bit_for_bit_with_gradients(target, tmp_path):
    source = SLICE_WRITES.read_text(encoding="utf-8")
    outcome = fix(source, unsafe=False, select=["MSL101"])
    assert outcome.error is None and outcome.changed
    assert not fix(outcome.fixed, select=["MSL101"]).changed
    assert "mask[:, :, KEEP:] = 0" in outcome.fixed and "history[:-1] = history[1:]" in outcome.fixed
    args = SLICE_CASES[target]()
    nets = [getattr(_load(text, tmp_path), target)() for text in (source, outcome.fixed)]
    outputs = [_leaves(net(*args)) for net in nets]
    for a, b in zip(*outputs):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(b, a)
    grads = [_leaves(ms.grad(net, grad_position=tuple(range(len(args))))(*args)) for net in nets]
    for a, b in zip(*grads):
        np.testing.assert_array_equal(b, a)


@ms.jit
def _jit_mask_tail_original(scores):
    mask = ms.ops.ones_like(scores)
    for i in range(mask.shape[0]):
        mask[i, :, 3:] = 0
    return scores * mask


@ms.jit
def _jit_mask_tail_rewritten(scores):
    mask = ms.ops.ones_like(scores)
    mask[:, :, 3:] = 0
    return scores * mask


def test_slice_write_under_jit_matches():
    """The rule page's example as ``@ms.jit`` functions (the page's fixed text is pinned by test_rule_examples)."""
    scores = _rand(5, 4, 6)
    np.testing.assert_array_equal(_jit_mask_tail_rewritten(scores).asnumpy(), _jit_mask_tail_original(scores).asnumpy())


# -- why MSL102 maps no sub-cell that holds a BatchNorm -------------------------------------------------------------
def _bn_apply(bn, h):
    return ms.ops.relu(bn(h))


class _MappedBatchNorm(ms.nn.Cell):
    def __init__(self):
        super().__init__()
        self.bn = ms.nn.BatchNorm2d(3)

    def construct(self, x):
        rows = [x[i] for i in range(x.shape[0])]
        return ms.ops.stack(ms.ops.HyperMap()(ms.ops.partial(_bn_apply, self.bn), rows))


def test_hypermap_over_a_batchnorm_cell_fails_to_compile():
    """The measured MindSpore 2.10 fact behind MSL102's refusal (a Conv2d there compiles; see the rule page)."""
    net = _MappedBatchNorm()
    net.set_train(False)
    with pytest.raises(RuntimeError, match="cnode_abs"):
        net(_rand(4, 2, 3, 4, 4))
