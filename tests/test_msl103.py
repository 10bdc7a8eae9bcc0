"""MSL103 large-unrolled-loop: constant trip counts at or above unroll-threshold, and the ForiLoop rewrite.

The rewrite's equivalence on MindSpore (and that ``unroll=False`` with a module-level named def compiles past the
call-depth limit) is in tests/test_loop_rewrites_mindspore.py; here are the static decisions.
"""
import textwrap

import libcst as cst
import pytest

from ms_lint.config import Config
from ms_lint.testing import fix, lint

HEADER = "import mindspore as ms\nfrom mindspore import nn, ops\n\nSTEPS = 40\n\n\n"
OFFSET = HEADER.count("\n") - 1  # snippets are numbered as written in this file, from the blank first line


def findings(body: str, config=None):
    return lint(HEADER + textwrap.dedent(body).lstrip("\n"), config=config, select=["MSL103"])


def fixed(body: str, unsafe=True, config=None):
    return fix(HEADER + textwrap.dedent(body).lstrip("\n"), config=config, unsafe=unsafe, select=["MSL103"])


def simple(trip: str, body: str = "x = x * 0.5 + 1.0") -> str:
    return f"""
    @ms.jit
    def f(x):
        for _ in range({trip}):
            {body}
        return x
    """


# -- what is flagged ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("trip, count", [("16", 16), ("200", 200), ("STEPS", 40), ("2, 40", 38), ("0, 64, 2", 32),
                                         ("STEPS // 2", 20)])
def test_constant_trip_counts_at_or_above_the_threshold(trip, count):
    found = findings(simple(trip))
    assert [f.line - OFFSET for f in found] == [4]
    assert f"runs {count} iterations" in found[0].text
    assert "Exceed function call depth limit" in found[0].text and "unroll=False" in found[0].text


@pytest.mark.parametrize("trip", ["15", "3", "STEPS // 4"])
def test_below_the_threshold_is_not_flagged(trip):
    assert findings(simple(trip)) == []


def test_threshold_comes_from_the_config():
    assert findings(simple("20"), config=Config(unroll_threshold=32)) == []
    assert len(findings(simple("8"), config=Config(unroll_threshold=8))) == 1


def test_trip_counts_from_init_and_locals():
    body = """
    class Decoder(nn.Cell):
        def __init__(self, hidden=4):
            super().__init__()
            self.max_len = 100
            self.width = hidden

        def construct(self, x):
            n = 30
            for _ in range(self.max_len):
                x = ops.tanh(x)
            for _ in range(n):
                x = ops.tanh(x)
            for _ in range(self.width):
                x = ops.tanh(x)
            return x
    """
    found = findings(body)
    assert [(f.line - OFFSET, "100" in f.text or "30" in f.text) for f in found] == [(10, True), (12, True)]


def test_while_with_a_python_int_counter_and_a_constant_bound():
    body = """
    @ms.jit
    def f(x):
        i = 0
        while i < 50:
            x = ops.sin(x)
            i += 2
        return x
    """
    found = findings(body)
    assert [f.line - OFFSET for f in found] == [5] and "runs 25 iterations" in found[0].text


def test_long_comprehension_is_flagged():
    body = """
    @ms.jit
    def f(x):
        return ops.stack([ops.sin(x * k) for k in range(32)])
    """
    assert [f.line - OFFSET for f in findings(body)] == [4]


@pytest.mark.parametrize("code", [
    # a constructor default that a construction overrides with a value the code does not show
    """
    class Decoder(nn.Cell):
        def __init__(self, max_len=100):
            super().__init__()
            self.max_len = max_len

        def construct(self, x):
            for _ in range(self.max_len):
                x = ops.tanh(x)
            return x

    def build(cfg):
        return Decoder(max_len=cfg.max_len)
    """,
    # loops over cells picked by the index (24 transformer layers): unrolling is inherent
    """
    class Encoder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = nn.CellList([nn.Dense(4, 4) for _ in range(24)])

        def construct(self, x):
            for i in range(24):
                x = self.layers[i](x)
            for i in range(24):
                x = getattr(self, "layer" + str(i))(x)
            return x
    """,
    # a sequence of parameters indexed by i
    """
    class Opt(nn.Cell):
        def construct(self, grads):
            total = 0
            for i in range(32):
                total = total + grads[i].sum()
            return total
    """,
    # pure Python bookkeeping
    """
    @ms.jit
    def f(x):
        pads = ()
        for i in range(100):
            pads = pads + (0,)
        return x
    """,
    # a tensor counter: a real loop
    """
    @ms.jit
    def f(x):
        i = ms.Tensor(0)
        while i < 100:
            x = ops.sin(x)
            i += 1
        return x
    """,
    # @constexpr helpers and plain Python functions are not compiled
    """
    @ops.constexpr
    def mask(n):
        return tuple(i % 2 for i in range(256))


    def python_side(x):
        for _ in range(200):
            x = ops.sin(x)
        return x
    """,
    # shape bookkeeping: the tensor is read only for its shape and length, folded at compile time
    """
    @ms.jit
    def f(x):
        offs = ()
        for i in range(64):
            offs += (x.shape[-1] * i + len(x),)
        return x.reshape((-1,))[offs[1]:offs[3]]
    """,
    # a while loop over cells by index: each iteration runs a different layer
    """
    class Enc(nn.Cell):
        def __init__(self):
            super().__init__()
            self.num_layers = 24
            self.layers = nn.CellList([nn.Dense(4, 4) for _ in range(24)])

        def construct(self, x):
            i = 0
            while i < self.num_layers:
                x = self.layers[i](x)
                i += 1
            return x
    """,
])
def test_not_flagged(code):
    assert findings(code) == []


# -- the ForiLoop rewrite ---------------------------------------------------------------------------------------
def test_rewrite_is_unsafe_and_only_applied_with_unsafe_fixes():
    found = findings(simple("200"))
    assert found[0].fix["applicability"] == "unsafe"
    assert not fixed(simple("200"), unsafe=False).changed


def test_rewrite_of_a_single_carried_tensor():
    outcome = fixed(simple("200", "x = x * 0.5 + 1.0"))
    assert outcome.error is None
    text = outcome.fixed
    assert "def _f_body(_, x):\n    x = x * 0.5 + 1.0\n    return x\n\n\n@ms.jit" in text
    assert "    x = ops.ForiLoop()(0, 200, _f_body, x, unroll=False)\n" in text
    cst.parse_module(text)
    assert findings(text[len(HEADER):]) == []
    assert not fix(text, unsafe=True, select=["MSL103"]).changed


def test_rewrite_carries_read_only_tensors_in_the_state():
    body = """
    @ms.jit
    def f(x, w):
        h = x * 0
        for _ in range(STEPS):
            y = ops.tanh(ops.matmul(h, w))
            h = y + x
        return h
    """
    text = fixed(body).fixed
    assert "def _f_body(_, state):\n    h, w, x = state\n" in text
    assert "    return h, w, x\n" in text
    assert "h, _, _ = ops.ForiLoop()(0, STEPS, _f_body, (h, w, x), unroll=False)" in text


def test_rewrite_uses_range_bounds_and_the_files_ops_alias():
    code = textwrap.dedent("""
    import mindspore
    from mindspore import ops as P


    @mindspore.jit
    def f(x):
        for _ in range(4, 40):
            x = P.sin(x)
        return x
    """)
    text = fix(code, unsafe=True, select=["MSL103"]).fixed
    assert "x = P.ForiLoop()(4, 40, _f_body, x, unroll=False)" in text


def test_rewrite_picks_a_free_name_for_the_body_function():
    body = "def _f_body():\n    return 1\n\n\n" + textwrap.dedent(simple("100")).lstrip("\n")
    text = fixed(body).fixed
    assert "def _f_body_2(_, x):" in text and "_f_body_2, x, unroll=False)" in text


def test_rewrite_of_a_cell_method_is_placed_before_the_class():
    body = """
    class Smooth(nn.Cell):
        def construct(self, x):
            for _ in range(STEPS):
                x = x - 0.1 * ops.tanh(x)
            return x
    """
    text = fixed(body).fixed
    assert text.index("def _Smooth_construct_body(_, x):") < text.index("class Smooth(nn.Cell):")
    assert "x = ops.ForiLoop()(0, STEPS, _Smooth_construct_body, x, unroll=False)" in text


@pytest.mark.parametrize("code", [
    # the body reads self (cells cannot run inside a ForiLoop body)
    """
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(3, 3)

        def construct(self, x):
            for _ in range(STEPS):
                x = self.dense(x)
            return x
    """,
    # the index is used
    simple("STEPS", "x = x + _"),
    """
    @ms.jit
    def f(x):
        for i in range(STEPS):
            x = x * i
        return x
    """,
    # the carried value starts as a Python number (ForiLoop needs the same type every step)
    """
    @ms.jit
    def f(x):
        total = 0
        for _ in range(STEPS):
            total = total + x
        return total
    """,
    # shape-changing ops
    simple("STEPS", "x = ops.concat((x, x))[:3]"),
    # random ops and side effects
    simple("STEPS", "x = x + ops.rand_like(x)"),
    """
    @ms.jit
    def f(x, p):
        for _ in range(STEPS):
            x = x * 2
            ops.assign(p, x)
        return x
    """,
    # control flow in the body
    """
    @ms.jit
    def f(x):
        for _ in range(STEPS):
            if x.shape[0] > 2:
                x = x * 2
        return x
    """,
    # a step
    simple("0, 80, 2"),
    # a temporary read after the loop that has no tensor value before it
    """
    @ms.jit
    def f(x):
        for _ in range(STEPS):
            y = ops.sin(x)
            x = y * 0.5
        return x + y
    """,
    # a local Python value read by the body
    """
    @ms.jit
    def f(x):
        rate = 0.5
        for _ in range(STEPS):
            x = x * rate
        return x
    """,
    # the carried name is declared global: a module-level body function would assign a local instead
    """
    @ms.jit
    def f(x):
        global h
        h = x
        for _ in range(STEPS):
            h = ops.tanh(h) + x
        return x
    """,
    # a walrus in the body
    """
    @ms.jit
    def f(x):
        h = x
        for _ in range(STEPS):
            h = ops.tanh(g := h * 2)
        return h + g
    """,
])
def test_no_rewrite_for_these_bodies(code):
    found = findings(code)
    assert len(found) == 1 and found[0].fix_object is None, found
    assert not fixed(code).changed


def test_module_constant_rebound_by_a_flag_or_a_global_has_no_trip_count():
    """``STEPS = 200`` rebound under ``if`` or by ``global`` in ``main``: 200 is not what the graph sees."""
    code = """
    import os

    TRIPS = 200
    if os.environ.get("FAST"):
        TRIPS = 2
    OTHER = 300


    @ms.jit
    def f(x):
        for _ in range(TRIPS):
            x = x * 0.5
        for _ in range(OTHER):
            x = x * 0.5
        return x


    def main(args):
        global OTHER
        OTHER = args.steps
    """
    assert findings(code) == []


CONSTRUCTOR_DEFAULT = """
import mindspore as ms
from mindspore import nn, ops


class Decoder(nn.Cell):
    def __init__(self, max_len=25):
        super().__init__()
        self.num_steps = max_len + 1

    def construct(self, x):
        for _ in range(self.num_steps):
            x = ops.tanh(x)
        return x
"""


def test_a_constructor_default_is_the_trip_count_and_the_message_says_so():
    found = findings(CONSTRUCTOR_DEFAULT)
    assert [f.code for f in found] == ["MSL103"]
    assert "(default `max_len=25`)" in found[0].message
    assert "runs 26 iterations (`num_steps` = `max_len + 1` = 26 with the default `max_len=25`" in found[0].text


def test_literal_constructions_refine_the_default():
    built = CONSTRUCTOR_DEFAULT + "\n\ndef build():\n    return Decoder(40), Decoder(max_len=8)\n"
    found = findings(built)
    assert [f.code for f in found] == ["MSL103"]
    assert "runs 41 iterations" in found[0].message and "as the project builds Decoder" in found[0].text
    small = CONSTRUCTOR_DEFAULT + "\n\ndef build():\n    return Decoder(max_len=4)\n"
    assert findings(small) == []


def test_a_rebound_constructor_parameter_is_not_its_default():
    rebound = CONSTRUCTOR_DEFAULT.replace("self.num_steps = max_len + 1", "max_len = max_len * k\n        self.num_steps = max_len + 1").replace("max_len=25", "max_len=25, k=1")
    assert findings(rebound) == []


def test_a_count_read_through_a_local_names_its_default_and_a_dict_construction_may_set_it():
    """mindocr's SAR decoder: ``seq_len = self.max_seq_len`` before ``range(1, seq_len + 1)``, the head built
    with ``**sar_args`` from a config dict, which may set the length or leave the default."""
    local = CONSTRUCTOR_DEFAULT.replace("        for _ in range(self.num_steps):",
                                        "        steps = self.num_steps\n        for _ in range(1, steps + 1):")
    built = local + "\n\ndef build(cfg):\n    return Decoder(**cfg)\n"
    found = findings(built)
    assert [f.code for f in found] == ["MSL103"]
    assert "runs 26 iterations (default `max_len=25`)" in found[0].message
    assert "a construction that unpacks `**` arguments may set it" in found[0].text
    assert findings(local + "\n\ndef build(cfg):\n    return Decoder(*cfg)\n") == []
