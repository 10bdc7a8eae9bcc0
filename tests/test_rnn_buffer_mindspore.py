"""MSL101's unsafe peeled-buffer rewrite of step loops that grow a list (issue 16, shape 5) on MindSpore (CPU).

The first step runs before the loop, the stacked result is a buffer allocated from that step's row, and the
other steps run in a real ``while`` with a Tensor counter. Checked in GRAPH_MODE Cells and an ``@ms.jit``
function: outputs equal bit for bit and gradients equal, for fixtures/loops/rnn_buffers.py, for a fixed copy of
MindSpore's own ``mindspore/nn/layer/rnns.py`` (``nn.RNN``, ``nn.GRU``, the LSTM step loop; and the same module
with the ``P`` alias of mindspore-rl's copy) and for fixtures/loops/rnn_list_caller.py (rewritten by hand: ms-lint
refuses it, its caller passes the loop a Python list, as mindearth's dgmr generator does).
"""
import pathlib
import re
import subprocess
import sys

import pytest

ms = pytest.importorskip("mindspore")
np = pytest.importorskip("numpy")

from ms_lint.testing import fix  # noqa: E402
from mindspore_support import import_source  # noqa: E402

pytestmark = [pytest.mark.mindspore, pytest.mark.usefixtures("graph_mode")]

ROOT = pathlib.Path(__file__).resolve().parent.parent
RNN_BUFFERS = ROOT / "fixtures" / "loops" / "rnn_buffers.py"
LIST_CALLER = ROOT / "fixtures" / "loops" / "rnn_list_caller.py"


def _load(source: str, tmp_path: pathlib.Path):
    return import_source(tmp_path, source, "mslint_rnn_buffer_case")


def _fixed(source: str) -> str:
    outcome = fix(source, unsafe=True, select=["MSL101"])
    assert outcome.error is None and outcome.changed
    assert fix(outcome.fixed, unsafe=True, select=["MSL101"]).changed is False, "fixing twice changed the code"
    assert not fix(source, unsafe=False, select=["MSL101"]).changed, "an unsafe fix was applied without --unsafe-fixes"
    compile(outcome.fixed, "fixed.py", "exec")  # re-parses
    return outcome.fixed


def _leaves(result):
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in _leaves(item)]
    return [result.asnumpy()]


def _rand(*shape, seed=0, scale=1.0):
    return ms.Tensor((np.random.RandomState(seed).randn(*shape) * scale).astype(np.float32))


def _same_weights(before, after):
    params = dict(after.parameters_and_names())
    for name, param in before.parameters_and_names():
        params[name].set_data(ms.Tensor(param.asnumpy()))


def _assert_bitwise(before, after):
    assert len(before) == len(after)
    for a, b in zip(before, after):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(b, a)  # the same operations in the same order


def _compare(before, after, args):
    """Outputs bit for bit, gradients with respect to every input equal (within 1e-6)."""
    _assert_bitwise(_leaves(before(*args)), _leaves(after(*args)))
    positions = tuple(range(len(args)))
    grads = [_leaves(ms.grad(fn, grad_position=positions)(*args)) for fn in (before, after)]
    assert len(grads[0]) == len(grads[1]) == len(args)
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


# -- the fixture --------------------------------------------------------------------------------------------------
FIXTURE_CASES = {
    "ConvGRUSequence": lambda: (_rand(6, 2, 3, 5, 5),),  # the state starts as None
    "StepRecurrence": lambda: (_rand(7, 2, 4), _rand(2, 3, seed=1), _rand(4, 3, seed=2, scale=0.5),
                               _rand(3, 3, seed=3, scale=0.5)),
}


def test_the_fixture_is_rewritten_as_shown():
    fixed = _fixed(RNN_BUFFERS.read_text(encoding="utf-8"))
    assert "maps = ops.zeros((len(frames),) + out.shape, out.dtype)" in fixed
    assert "x_t = x[t]\n" in fixed and "ops.squeeze(x_t, 0)" not in fixed
    assert "hs[t] = h" in fixed and "return hs, h" in fixed
    assert fixed.count("ms.Tensor(1, ms.int32)") == 5
    assert "return ops.moveaxis(hs, 0, 1)" in fixed
    assert "mask = 1 - done\n    q_steps = q_steps[1:]" in fixed  # the statement in between stays in place
    assert fixed.count(".append(") == 2  # the two refused loops keep their lists


@pytest.mark.parametrize("target", sorted(FIXTURE_CASES))
def test_fixture_cells_match_bit_for_bit_with_gradients(target, tmp_path):
    source = RNN_BUFFERS.read_text(encoding="utf-8")
    before = getattr(_load(source, tmp_path), target)()
    after = getattr(_load(_fixed(source), tmp_path), target)()
    _same_weights(before, after)
    _compare(before, after, FIXTURE_CASES[target]())


def test_fixture_lstm_mode_carries_a_tuple(tmp_path):
    """``if self.is_lstm: outputs.append(h[0])``: the buffer row is the hidden half of the carried tuple."""
    source = RNN_BUFFERS.read_text(encoding="utf-8")
    nets = [_load(text, tmp_path).StepRecurrence("LSTM") for text in (source, _fixed(source))]
    args = (_rand(5, 2, 3), (_rand(2, 3, seed=1), _rand(2, 3, seed=4)), _rand(3, 3, seed=2, scale=0.5),
            _rand(3, 3, seed=3, scale=0.5))
    _assert_bitwise(_leaves(nets[0](*args)), _leaves(nets[1](*args)))
    grads = [_leaves(ms.grad(net, grad_position=(0, 2, 3))(*args)) for net in nets]
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


def test_fixture_jit_function_matches_bit_for_bit_with_gradients(tmp_path):
    source = RNN_BUFFERS.read_text(encoding="utf-8")
    before, after = (_load(text, tmp_path).elman_scan for text in (source, _fixed(source)))
    _compare(before, after, (_rand(8, 3), _rand(3, seed=1), _rand(3, 3, seed=2, scale=0.5)))


def test_fixture_stacked_on_axis_one_matches_bit_for_bit_with_gradients(tmp_path):
    source = RNN_BUFFERS.read_text(encoding="utf-8")
    before, after = (_load(text, tmp_path).time_major_scan for text in (source, _fixed(source)))
    _compare(before, after, (_rand(5, 3), _rand(3, seed=1), _rand(3, 3, seed=2, scale=0.5)))


def test_fixture_with_a_statement_before_the_stack_matches_bit_for_bit_with_gradients(tmp_path):
    source = RNN_BUFFERS.read_text(encoding="utf-8")
    before, after = (_load(text, tmp_path).target_values for text in (source, _fixed(source)))
    _compare(before, after, (_rand(6, 4, 3), _rand(4, 3, seed=1), _rand(3, 3, seed=2, scale=0.5),
                             _rand(5, 4, 3, seed=3)))


def test_a_zero_length_sequence_fails_both_ways(tmp_path):
    """The original stacks an empty list, the rewrite reads ``x[0]``: neither returns."""
    source = RNN_BUFFERS.read_text(encoding="utf-8")
    for text in (source, _fixed(source)):
        with pytest.raises(Exception):
            _load(text, tmp_path).elman_scan(ms.Tensor(np.zeros((0, 3), np.float32)), _rand(3), _rand(3, 3))


# -- MindSpore's own dynamic RNN (mindspore/nn/layer/rnns.py) -----------------------------------------------------
def _rnns_pair(tmp_path, alias="ops"):
    """MindSpore's own ``rnns.py`` and its fix, loaded. ``alias="P"``: the same module with ``mindspore.ops``
    imported as ``P``, the way mindspore-rl 0.7's copy (``mindspore_rl/network/_rnns.py``) writes it; the two
    differ only in that name (read in the real-code corpus)."""
    import mindspore.nn.layer.rnns as rnns

    text = pathlib.Path(rnns.__file__).read_text(encoding="utf-8")
    if alias != "ops":
        assert "import mindspore.ops as ops\n" in text
        text = re.sub(r"(?<![\w.])ops\.", f"{alias}.", text.replace("import mindspore.ops as ops\n",
                                                                    f"import mindspore.ops as {alias}\n"))
    fixed = _fixed(text)
    # ``recurrent`` and ``variable_recurrent`` (its LSTM state rebuilt as a same-length tuple) are both rewritten.
    assert "x_t = x[t]\n" in fixed and f"outputs = {alias}.zeros((time_step,) + h[0].shape, h[0].dtype)" in fixed
    assert "t = Tensor(1, mstype.int32)" in fixed and fixed.count(".append(") == text.count(".append(") - 3
    return _load(text, tmp_path), _load(fixed, tmp_path)


@pytest.mark.parametrize("kind", ["RNN", "GRU"])
def test_mindspores_own_rnn_and_gru_match_bit_for_bit_with_gradients(kind, tmp_path):
    """On CPU ``nn.RNN`` and ``nn.GRU`` without ``seq_length`` run ``_DynamicRNNBase.recurrent``."""
    before_module, after_module = _rnns_pair(tmp_path)
    before = getattr(before_module, kind)(4, 3, num_layers=2, batch_first=True)
    after = getattr(after_module, kind)(4, 3, num_layers=2, batch_first=True)
    _same_weights(before, after)
    x, h = _rand(2, 9, 4), _rand(2, 2, 3, seed=1)
    _compare(before, after, (x, h))


@pytest.mark.parametrize("mode", ["GRU", "LSTM"])
def test_the_step_loop_written_with_the_P_alias_matches_bit_for_bit_with_gradients(mode, tmp_path):
    """As mindspore-rl 0.7's copy writes it (``import mindspore.ops as P``; its public ``GRU``/``LSTM`` checks
    fail on MindSpore 2.10 before and after the fix: ``mstype.tensor_type``), so the ``_DynamicRNNBase`` step
    loop is run directly, and the buffer is allocated with ``P.zeros``."""
    _compare_step_loops(*_rnns_pair(tmp_path, "P"), mode)


def test_mindspores_own_lstm_step_loop_matches_bit_for_bit_with_gradients(tmp_path):
    """``_DynamicRNNBase('LSTM')``: the carried state is the tuple ``(h, c)``, the buffer row ``h[0]``."""
    _compare_step_loops(*_rnns_pair(tmp_path), "LSTM")


def _compare_step_loops(before_module, after_module, mode):
    gates = 4 if mode == "LSTM" else 3
    rng = np.random.RandomState(3)
    w_ih, w_hh = (ms.Tensor(rng.randn(gates * 3, n).astype(np.float32) * 0.3) for n in (4, 3))
    b_ih, b_hh = (ms.Tensor(rng.randn(gates * 3).astype(np.float32) * 0.1) for _ in range(2))
    x = _rand(6, 2, 4)
    h = (_rand(2, 3, seed=1), _rand(2, 3, seed=2)) if mode == "LSTM" else _rand(2, 3, seed=1)
    nets = [_Steps(module._DynamicRNNBase(mode), h, b_ih, b_hh) for module in (before_module, after_module)]
    _assert_bitwise(_leaves(nets[0](x, w_ih, w_hh)), _leaves(nets[1](x, w_ih, w_hh)))
    grads = [_leaves(ms.grad(net, grad_position=(0, 1, 2))(x, w_ih, w_hh)) for net in nets]
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


class _Steps(ms.nn.Cell):
    def __init__(self, steps, h, b_ih, b_hh):
        super().__init__()
        self.steps, self.h, self.b_ih, self.b_hh = steps, h, b_ih, b_hh

    def construct(self, x, w_ih, w_hh):
        return self.steps(x, self.h, None, w_ih, w_hh, self.b_ih, self.b_hh)


# -- a step loop whose caller passes a Python list (fixtures/loops/rnn_list_caller.py) -----------------------------
def test_a_step_loop_fed_a_list_is_refused():
    text = LIST_CALLER.read_text(encoding="utf-8")
    assert "outputs.append(output)" in fix(text, unsafe=True, select=["MSL101"]).fixed


def _peeled_list_caller(text: str) -> str:
    """The fixture with the step-loop rewrite written in by hand (ms-lint refuses it: the caller passes a list)."""
    old = """        outputs = []
        for step in range(len(frames)):  # expect: MSL101
            output, state = self.cell(frames[step], state)
            outputs.append(output)
        return ops.stack(outputs, 0)
"""
    new = """        output, state = self.cell(frames[0], state)
        outputs = ops.zeros((len(frames),) + output.shape, output.dtype)
        outputs[0] = output
        step = ms.Tensor(1, ms.int32)
        while step < len(frames):
            output, state = self.cell(frames[step], state)
            outputs[step] = output
            step = step + 1
        return outputs
"""
    assert old in text
    return text.replace(old, new)


def test_the_refused_rewrite_matches_on_a_tensor_and_fails_on_a_list(tmp_path):
    """The rewrite is equal for a Tensor of frames (outputs bit for bit, gradients), but the fixture's caller
    passes a Python list, which the unrolled loop indexes and a Tensor counter cannot: the reason for the
    refusal (measured the same way on the nowcasting generator the fixture is modelled on)."""
    text = LIST_CALLER.read_text(encoding="utf-8")
    before_module, after_module = (_load(t, tmp_path) for t in (text, _peeled_list_caller(text)))
    before, after = before_module.FrameSequence(3), after_module.FrameSequence(3)
    _same_weights(before, after)
    _compare(before, after, (_rand(5, 1, 3, 6, 6), _rand(1, 3, 6, 6, seed=1)))
    latent, state = _rand(1, 3, 6, 6), _rand(1, 3, 6, 6, seed=1)
    assert before_module.RepeatedLatent(3)(latent, state).shape == (4, 1, 3, 6, 6)
    # In a fresh process, as a user runs it: after other graphs compiled in this one MindSpore 2.10 sometimes
    # compiles the list case too (measured), which says nothing about a user's run.
    probe = (f"import sys, numpy as np, mindspore as ms\nsys.path.insert(0, {str(tmp_path)!r})\n"
             f"import {after_module.__name__} as m\n"
             "r = lambda *s, seed=0: ms.Tensor(np.random.RandomState(seed).randn(*s).astype(np.float32))\n"
             "m.RepeatedLatent(3)(r(1, 3, 6, 6), r(1, 3, 6, 6, seed=1))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0, "the peeled rewrite ran on a Python list"


# -- per-row sequence lengths: the carried LSTM state rebuilt as a tuple (fixtures/loops/rnn_lengths.py) ------------
RNN_LENGTHS = ROOT / "fixtures" / "loops" / "rnn_lengths.py"


def _lengths_args(mode):
    state = (_rand(3, 4, seed=1), _rand(3, 4, seed=2)) if mode == "LSTM" else _rand(3, 4, seed=1)
    return (_rand(6, 3, 5), state, ms.Tensor(np.array([6, 2, 4], np.int32)), _rand(5, 4, seed=3, scale=0.5),
            _rand(4, 4, seed=4, scale=0.5))


def test_the_lengths_fixture_is_rewritten_with_the_tuple_carried():
    fixed = _fixed(RNN_LENGTHS.read_text(encoding="utf-8"))
    assert "t = ms.Tensor(1, ms.int32)" in fixed and "alive = lengths > 0" in fixed
    assert "outs[t] = out" in fixed and fixed.count("state = (h_t, c_t)") == 2 and ".append(" not in fixed


@pytest.mark.parametrize("mode", ["RNN", "LSTM"])
@pytest.mark.parametrize("wrap", ["cell", "jit"])
def test_lengths_fixture_matches_bit_for_bit_with_gradients(mode, wrap, tmp_path):
    """GRAPH_MODE Cell and an ``@ms.jit`` function calling it; gradients for x and both weights."""
    source = RNN_LENGTHS.read_text(encoding="utf-8")
    nets = [_load(text, tmp_path).MaskedSteps(mode) for text in (source, _fixed(source))]
    if wrap == "jit":
        nets = [_jit_calling(net) for net in nets]
    args = _lengths_args(mode)
    _assert_bitwise(_leaves(nets[0](*args)), _leaves(nets[1](*args)))
    grads = [_leaves(ms.grad(net, grad_position=(0, 3, 4))(*args)) for net in nets]
    assert len(grads[0]) == len(grads[1]) == 3
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_mindspores_own_rnns_with_seq_length_match_bit_for_bit_with_gradients(kind, tmp_path):
    """``nn.LSTM``/``nn.GRU`` given ``seq_length`` run ``variable_recurrent``: its LSTM branch rebuilds
    ``state_t = (state_t_0, state_t_1)`` each step."""
    before_module, after_module = _rnns_pair(tmp_path)
    before = getattr(before_module, kind)(4, 3, num_layers=2, batch_first=True)
    after = getattr(after_module, kind)(4, 3, num_layers=2, batch_first=True)
    _same_weights(before, after)
    h = _rand(2, 3, 3, seed=1)
    hx = (h, _rand(2, 3, 3, seed=2)) if kind == "LSTM" else h
    x, lengths = _rand(3, 7, 4), ms.Tensor(np.array([7, 3, 5], np.int32))
    nets = [_WithLengths(net, lengths) for net in (before, after)]
    _assert_bitwise(_leaves(nets[0](x, hx)), _leaves(nets[1](x, hx)))
    grads = [_leaves(ms.grad(net, grad_position=0)(x, hx)) for net in nets]
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


def _jit_calling(net):
    @ms.jit
    def run(x, state, lengths, w_x, w_h):
        return net(x, state, lengths, w_x, w_h)
    return run


class _WithLengths(ms.nn.Cell):
    def __init__(self, rnn, lengths):
        super().__init__()
        self.rnn, self.lengths = rnn, lengths

    def construct(self, x, hx):
        return self.rnn(x, hx, self.lengths)
