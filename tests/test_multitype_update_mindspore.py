"""MSL102's MultitypeFuncGraph fix of per-parameter update loops (issue 16, shapes 2 and 3), proven with real
MindSpore (CPU; GRAPH_MODE, and PYNATIVE_MODE with ``construct`` compiled by ``@jit``): original and fixed code
give identical Parameters after every step, over several steps, and the clipping cell identical outputs and
gradients. The fixed sources are MindSpore's own ``nn.Rprop``/``nn.ASGD`` (copies of the installed files) and
fixtures/optimizers/per_parameter_updates.py, whose look-alikes keep no fix."""
import itertools
import pathlib

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from mindspore import Parameter, Tensor  # noqa: E402

from ms_lint.testing import fix, lint  # noqa: E402
from mindspore_support import import_source  # noqa: E402

pytestmark = [pytest.mark.mindspore, pytest.mark.usefixtures("graph_mode")]

FIXTURE = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "optimizers" / "per_parameter_updates.py"
SHAPES = [(3,), (2, 2), (4,), ()]
_ids = itertools.count()


def fixed_pair(tmp_path, text):
    outcome = fix(text, select=["MSL102"])
    assert outcome.changed and outcome.error is None
    assert fix(outcome.fixed, select=["MSL102"]).changed is False  # idempotent
    compile(outcome.fixed, "fixed.py", "exec")
    return (import_source(tmp_path, text, "msl_mtfg"), import_source(tmp_path, outcome.fixed, "msl_mtfg"),
            outcome.fixed)


def weights(tag):
    rng = np.random.default_rng(4)
    return [Parameter(Tensor(rng.standard_normal(s).astype(np.float32)), name=f"{tag}{next(_ids)}_w{i}")
            for i, s in enumerate(SHAPES)]


def state(cell):
    return [p.asnumpy().copy() for p in cell.get_parameters()]


def run_steps(cells, steps=4, seed=9):
    """Every Parameter of every cell after every step, the same gradients for both."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        grads = tuple(Tensor(rng.standard_normal(s).astype(np.float32)) for s in SHAPES)
        for cell in cells:
            cell(grads)
        a, b = state(cells[0]), state(cells[1])
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert x.shape == y.shape
            np.testing.assert_array_equal(x, y)


def installed(module_name):
    import importlib
    return pathlib.Path(importlib.import_module(module_name).__file__).read_text(encoding="utf-8")


@pytest.mark.parametrize("grouped", [False, True])
def test_mindspores_own_rprop_keeps_every_parameter(tmp_path, grouped):
    """``mindspore/nn/optim/rprop.py``: ``lrs[index] if self.is_group_lr else lrs`` becomes a Python ``if``
    between a map over ``lrs`` and one binding it; the ``if self.global_step == 1`` stays inside."""
    before, after, fixed = fixed_pair(tmp_path, installed("mindspore.nn.optim.rprop"))
    assert "if self.is_group_lr:" in fixed and "MultitypeFuncGraph(" in fixed
    cells = []
    for module in (before, after):
        params = weights("rprop")
        groups = [{"params": params[:2], "lr": 0.05}, {"params": params[2:], "lr": 0.2}] if grouped else params
        cells.append(module.Rprop(groups, learning_rate=0.1))
    assert cells[0].is_group_lr is grouped
    run_steps(cells)


@pytest.mark.parametrize("grouped", [False, True])
def test_mindspores_own_asgd_keeps_every_parameter(tmp_path, grouped):
    """``mindspore/nn/optim/asgd.py``: Tensor ``if``s on the step and on ``mu`` inside the mapped function."""
    before, after, _ = fixed_pair(tmp_path, installed("mindspore.nn.optim.asgd"))
    cells = []
    for module in (before, after):
        params = weights("asgd")
        groups = [{"params": params[:2], "lr": 0.05}, {"params": params[2:], "lr": 0.2}] if grouped else params
        cells.append(module.ASGD(groups, learning_rate=0.1))
    run_steps(cells)


@pytest.fixture(scope="module")
def fixture_versions(tmp_path_factory):
    return fixed_pair(tmp_path_factory.mktemp("mtfg"), FIXTURE.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["IndexMomentum", "ZipAdamW"])
def test_fixture_optimizers_keep_every_parameter(fixture_versions, name):
    before, after, _ = fixture_versions
    run_steps([getattr(m, name)(weights(name)) for m in (before, after)])


@pytest.mark.parametrize("clip_type", [0, 1])
def test_clipping_by_a_constant_type_matches_with_gradients(fixture_versions, clip_type):
    """Shape 3: the ``if self.clip_type == 0`` is decided around two maps (the ClipByNorm sub-cell only in one);
    outputs and the gradients of a loss on them w.r.t. the input gradients match."""
    before, after, fixed = fixture_versions
    assert "if self.clip_type == 0:\n            new_grads = " in fixed
    rng = np.random.default_rng(1)
    grads = tuple(Tensor((rng.standard_normal(s) * 3).astype(np.float32)) for s in SHAPES)
    results = []
    for module in (before, after):
        cell = module.ClipGrads(clip_type=clip_type)
        out = cell(grads)

        def loss(g0, g1, g2, g3):
            total = 0.0
            for o in cell((g0, g1, g2, g3)):
                total = total + (o * o * o).sum()
            return total

        back = ms.grad(loss, grad_position=(0, 1, 2, 3))(*grads)
        results.append([o.asnumpy() for o in out] + [b.asnumpy() for b in back])
    for x, y in zip(*results):
        assert x.shape == y.shape
        np.testing.assert_array_equal(x, y)


def test_lookalikes_keep_no_fix(fixture_versions):
    _, _, fixed = fixture_versions
    reasons = {f.line: f.detail for f in lint(fixed, select=["MSL102"]) if f.fix_object is None}
    assert len(reasons) == 3, reasons
    text = " ".join(reasons.values())
    for reason in ("the body writes `self.count`", "`scale` is carried between elements",
                   "the body reads the position `i` other than to pick an element"):
        assert reason in text


@pytest.fixture
def pynative_jit():
    """PYNATIVE_MODE for one test, the Cells' ``construct`` compiled by ``@jit`` (as rprop.py/asgd.py declare it)."""
    previous = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield lambda cls: type(cls.__name__, (cls,), {"construct": ms.jit(cls.construct)})
    ms.set_context(mode=previous)


@pytest.mark.parametrize("optimizer", ["rprop.Rprop", "asgd.ASGD"])
def test_installed_optimizers_match_under_jit_in_pynative_mode(tmp_path, pynative_jit, optimizer):
    module_name, cls = optimizer.split(".")
    before, after, _ = fixed_pair(tmp_path, installed(f"mindspore.nn.optim.{module_name}"))
    run_steps([getattr(m, cls)(weights(cls), learning_rate=0.1) for m in (before, after)], steps=3)


def test_fixture_cells_match_under_jit_in_pynative_mode(fixture_versions, pynative_jit):
    before, after, _ = fixture_versions
    for name in ("IndexMomentum", "ZipAdamW"):
        run_steps([pynative_jit(getattr(m, name))(weights(name)) for m in (before, after)], steps=3)
    rng = np.random.default_rng(2)
    grads = tuple(Tensor((rng.standard_normal(s) * 3).astype(np.float32)) for s in SHAPES)
    for clip_type in (0, 1):
        outs = [pynative_jit(m.ClipGrads)(clip_type=clip_type)(grads) for m in (before, after)]
        for x, y in zip(*outs):
            np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())
