"""MSL102 loop-over-tensor-sequence: which sequences grow with the model, which loops are maps, and the rewrite."""
import textwrap

import libcst as cst
import pytest

from ms_lint.testing import fix, lint

HEAD = """
import mindspore as ms
from mindspore import nn, ops


"""


def jit(body, params="grads, scale"):
    return HEAD + f"@ms.jit\ndef f({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def cell(init, construct, base="nn.Cell", params="self, grads"):
    return HEAD + (f"class Net({base}):\n    def __init__(self, params):\n        super().__init__()\n"
                   + textwrap.indent(textwrap.dedent(init), " " * 8)
                   + f"\n    def construct({params}):\n" + textwrap.indent(textwrap.dedent(construct), " " * 8))


def line_of(code, text):
    return next(i for i, line in enumerate(textwrap.dedent(code).splitlines(), 1) if text in line)


def findings(code):
    return [f for f in lint(code) if f.code == "MSL102"]


def only(code):
    found = findings(code)
    assert len(found) == 1, found
    return found[0]


def fixed(code, **kwargs):
    out = fix(code, select=["MSL102"], **kwargs)
    assert out.error is None and not out.problems
    cst.parse_module(out.fixed)
    again = fix(out.fixed, select=["MSL102"], **kwargs)
    assert again.fixed == out.fixed, "a second fix changed the code"
    return out.fixed


# -- which sequences ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loop", [
    "for g in grads:", "for g in gradients:", "for i, g in enumerate(grads):", "for g in grads[1:]:",
    "for g in tuple(grads):", "for g, s in zip(grads, grads):", "for i in range(len(grads)):",
])
def test_gradient_sequences_are_flagged(loop):
    code = jit(f"out = ()\n{loop}\n    out += (scale * 2 + {'grads[i]' if 'range' in loop else 'g'},)\nreturn out",
               params="grads, gradients, scale")
    assert only(code).line == line_of(code, loop)


@pytest.mark.parametrize("init, loop", [
    ("self.params = ms.ParameterTuple(params)", "for p in self.params:"),
    ("self.moments = ms.ParameterTuple(params).clone(prefix='m')", "for p in self.moments:"),
    ("self.weights = params", "for p in self.weights:"),
    ("self.n = 1", "for p in self.trainable_params():"),
])
def test_parameter_sequences_on_self_are_flagged(init, loop):
    code = cell(init, f"for p in {loop.split(' in ')[1][:-1]}:\n    ops.assign(p, p * 0.5)\nreturn grads")
    assert only(code).line == line_of(code, "for p in")


def test_optimizer_parameters_from_the_base_class_and_helper_parameters_are_flagged():
    code = HEAD + textwrap.dedent("""
        def _scale(seq, s):
            return tuple(x * s for x in seq)


        class Opt(nn.Optimizer):
            def construct(self, gradients):
                n = len(self.parameters)
                for i in range(n):
                    ops.assign(self.parameters[i], gradients[i])
                return _scale(gradients, 0.5)
        """)
    assert sorted(f.line for f in findings(code)) == [line_of(code, "return tuple"), line_of(code, "for i in")]


def test_hypermap_results_and_loop_built_tuples_are_model_sized():
    code = jit("""
        half = ops.HyperMap()(ops.partial(ops.mul, 0.5), grads)
        clipped = tuple(ops.clip_by_value(h, -1.0, 1.0) for h in half)
        acc = ()
        for g in grads:
            acc += (g * scale,)
        return tuple(a * 2 for a in acc), clipped
        """)
    assert sorted(f.line for f in findings(code)) == [
        line_of(code, "clipped ="), line_of(code, "for g in"), line_of(code, "return tuple")]


def test_literal_tuples_count_only_above_eight():
    nine = ", ".join(f"x{i}" for i in range(9))
    eight = ", ".join(f"x{i}" for i in range(8))
    code = jit(f"out = ()\nfor t in ({nine}):\n    out += (t * 2,)\nfor t in ({eight}):\n    out += (t * 2,)\n"
               "return out", params=nine)
    assert [f.line for f in findings(code)] == [line_of(code, f"for t in ({nine})")]


@pytest.mark.parametrize("construct", [
    "for layer in self.layers:\n    grads = layer(grads)\nreturn grads",
    "for head in self.heads:\n    grads = head(grads)\nreturn grads",
    "for block in self.seq:\n    grads = block(grads)\nreturn grads",
    "out = ()\nfor s in self.scales:\n    out += (grads * s,)\nreturn out",
    "out = []\nfor g in grads:\n    out.append(g.shape)\nreturn out",
    "names = {}\nfor i, g in enumerate(grads):\n    names[self.names[i]] = g\nreturn names",
    "out = ()\nfor w in self.weight:\n    out += (w * 2,)\nreturn out",
])
def test_cells_config_bookkeeping_and_single_tensors_are_not_flagged(construct):
    init = """
        self.layers = nn.CellList([nn.Dense(2, 2) for _ in range(30)])
        self.heads = [nn.Dense(2, 2), nn.Dense(2, 2)]
        self.seq = nn.SequentialCell([nn.ReLU(), nn.ReLU()])
        self.scales = (1.0, 0.5)
        self.names = ["a", "b"]
        self.weight = ms.Parameter(ms.Tensor([1.0, 2.0]))
        """
    assert findings(cell(init, construct)) == []


def test_star_inputs_are_not_a_parameter_sequence():
    code = jit("out = ()\nfor x in inputs:\n    out += (x * 2,)\nreturn out", params="*inputs")
    assert findings(code) == []


# -- fixes --------------------------------------------------------------------------------------------------
def test_a_direct_callable_needs_no_helper_function():
    out = fixed(jit("return tuple(ops.neg(g) for g in grads)"))
    assert "return tuple(ops.HyperMap()(ops.neg, grads))" in out and "def _map" not in out
    out = fixed(jit("return tuple(ops.mul(scale, g) for g in grads)"))
    assert "return tuple(ops.HyperMap()(ops.partial(ops.mul, scale), grads))" in out


def test_helper_function_takes_loop_invariants_and_self_attributes_as_bound_arguments():
    code = cell("self.cast = ops.Cast()\nself.clip = 1.0", """
        scale = grads[0].sum()
        out = []
        for g in grads:
            h = self.cast(g, ms.float32) * scale
            h = ops.clip_by_value(h, -self.clip, self.clip)
            out.append(h)
        return tuple(out)
        """)
    out = fixed(code)
    assert "def _map_g(cast, scale, clip, g):\n    h = cast(g, ms.float32) * scale\n" in out
    assert "    h = ops.clip_by_value(h, -clip, clip)\n    return h\n" in out
    assert "out = ops.HyperMap()(ops.partial(_map_g, self.cast, scale, self.clip), grads)" in out
    assert out.index("def _map_g") < out.index("class Net")


def test_existing_hyper_map_attribute_and_optimizer_base_are_reused():
    code = cell("self.hyper_map = ops.HyperMap()", "return tuple(ops.neg(g) for g in grads)")
    assert "return tuple(self.hyper_map(ops.neg, grads))" in fixed(code)
    code = cell("", "return tuple(ops.neg(g) for g in grads)", base="nn.Optimizer")
    assert "return self.hyper_map(ops.neg, grads)" in fixed(code)


def test_list_results_are_rewritten_only_where_a_tuple_serves_the_same():
    ok = jit("sq = [ops.square(g) for g in grads]\nreturn ops.addn(sq), len(sq), sq[0], tuple(sq)")
    assert "sq = ops.HyperMap()(ops.square, grads)" in fixed(ok)
    for use in ("return sq", "sq.append(scale)\nreturn sq", "return sq + [scale]"):
        code = jit(f"sq = [ops.square(g) for g in grads]\n{use}")
        finding = only(code)
        assert finding.fix_object is None and "list" in finding.text


def test_a_list_built_by_the_comprehension_before_maps_to_a_list():
    """A name whose reaching binding is a list comprehension is a list: HyperMap over it returns a list, so a
    result used as a list (returned) is rewritten; a name that may still hold the tuple is not."""
    code = jit("sq = [ops.square(g) for g in grads]\nsq = [ops.neg(s) for s in sq]\nreturn sq")
    out = fixed(code)
    assert "sq = ops.HyperMap()(ops.neg, sq)" in out
    maybe_tuple = jit("sq = grads\nif scale > 0:\n    sq = [ops.square(g) for g in grads]\n"
                      "sq = [ops.neg(s) for s in sq]\nreturn sq")
    finding = [f for f in findings(maybe_tuple) if "ops.neg" in f.text or f.line == line_of(maybe_tuple, "neg")]
    assert finding and all(f.fix_object is None for f in finding)


SUB_CELLS = HEAD + """
def space_from_depth(x, factor):
    batch, channels, height, width = x.shape
    if channels % (factor * factor):
        raise ValueError("channels")
    reshape = ops.Reshape()
    return reshape(x, (batch, channels // (factor * factor), height * factor, width * factor))


class DepthToSpace(nn.Cell):
    def construct(self, x):
        return space_from_depth(x, 2)


class Counter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.seen = ms.Parameter(ms.Tensor(0.0), name="seen")

    def construct(self, x):
        ops.assign_add(self.seen, 1.0)
        return x


class Head(nn.Cell):
    def __init__(self, conv):
        super().__init__()
        self.to_space = DepthToSpace()
        self.counter = Counter()
        self.conv = conv

    def construct(self, grads):
        a = tuple(self.to_space(h) for h in grads)
        b = tuple(self.counter(h) for h in grads)
        c = tuple(self.conv(h) for h in grads)
        return a, b, c
"""


def test_a_sub_cell_is_mapped_only_when_its_code_is_seen_to_be_pure():
    """A map runs the cell once per element, not in the loop's order: a Parameter update refuses the fix, and so
    does a cell ms-lint cannot see; a local primitive (``reshape = ops.Reshape()``) and a raise are pure."""
    by_line = {f.line: f for f in findings(SUB_CELLS)}
    lines = SUB_CELLS.splitlines()

    def at(text):
        return by_line[next(i for i, line in enumerate(lines, 1) if text in line)]

    assert at("self.to_space(h)").fix_object is not None
    counter = at("self.counter(h)")
    assert counter.fix_object is None and "assign_add" in counter.detail
    conv = at("self.conv(h)")
    assert conv.fix_object is None and "cannot see" in conv.detail


def test_a_list_input_keeps_a_tuple_result():
    code = cell("self.params = params", "return tuple(p * 2 for p in self.trainable_params())")
    assert "return tuple(ops.HyperMap()(_map_p, self.trainable_params()))" in fixed(code)


def test_several_fixes_get_distinct_helper_names():
    out = fixed(jit("a = tuple(g * scale for g in grads)\nb = tuple(g + scale for g in grads)\nreturn a, b"))
    assert "def _map_g(scale, g):" in out and "def _map_g_2(scale, g):" in out
    assert "ops.partial(_map_g, scale)" in out and "ops.partial(_map_g_2, scale)" in out


def test_enumerate_index_is_dropped_when_unused():
    code = jit("out = ()\nfor i, g in enumerate(grads):\n    out += (g * scale,)\nreturn out")
    assert "out = tuple(ops.HyperMap()(ops.partial(_map_g, scale), grads))" in fixed(code)


@pytest.mark.parametrize("body, reason", [
    ("total = scale\nfor g in grads:\n    total = total + g.sum() * total\nreturn total", "ops.addn"),
    ("total = scale\nfor g in grads:\n    total *= g.sum()\nreturn total", "accumulates `total`"),
    ("for g in grads:\n    ops.assign(g, g * scale)\nreturn grads", "not known to hold distinct Parameters"),
    ("out = ()\nfor i, g in enumerate(grads):\n    out += (g * i,)\nreturn out", "position `i`"),
    ("out = ()\nfor g in grads:\n    out += (g * scale,)\nreturn out, g", "`g` is used after the loop"),
    ("out = (scale,)\nfor g in grads:\n    out += (g * scale,)\nreturn out", "does not start as an empty"),
    ("out = ()\nfor g in grads:\n    if g.ndim > 1:\n        g = g * 2\n    out += (g,)\nreturn out", "control flow"),
    ("out = ()\nprev = scale\nfor g in grads:\n    out += (g * prev,)\n    prev = g\nreturn out", "`prev` is carried"),
    ("out = ()\nfor i in range(len(grads)):\n    out += (grads[i] * scale,)\nreturn out", "by position"),
    ("return tuple(g * 2 for g in grads if g.ndim > 1)", "filters"),
    ("return sum(g.sum() for g in grads)", "ops.addn"),
    ("return tuple(ops.dropout(g) for g in grads)", "random"),
])
def test_no_fix_and_the_reason_is_in_the_message(body, reason):
    found = findings(jit(body))
    assert found and found[0].fix_object is None
    assert reason in found[0].text


def test_carried_temporaries_are_not_a_map():
    code = jit("out = ()\nfor g in grads:\n    y = t * 2\n    t = g\n    out += (y,)\nreturn out", params="grads, t")
    finding = only(code)
    assert finding.fix_object is None


def test_loops_inside_nested_functions_are_left_alone():
    """A nested def's own names would be judged by the outer function's value model: not analyzed (a known limit)."""
    code = jit("def inner(grads):\n    return tuple(g * 2 for g in grads)\nreturn inner(scale)")
    assert findings(code) == []


# -- adversarial review: look-alikes that are not parameter sequences -------------------------------------------
@pytest.mark.parametrize("init, loop", [
    ("self.loss_weights = config.loss_weights", "for w, l in zip(self.loss_weights, grads):"),
    ("self.layer_weights = [0.5, 0.3]", "for w, l in zip(self.layer_weights, grads):"),
    ("self.params = config.params", "for w, l in zip(self.params, grads):"),
])
def test_attributes_named_like_sequences_but_assigned_config_are_not_flagged(init, loop):
    # ``grads`` is zipped in only to give the body tensor work; the loop runs over the config sequence first
    code = cell(init + "\nself.n = 1", f"out = ()\n{loop}\n    out += (l * w,)\nreturn out",
                params="self, feats")
    code = code.replace("zip(self.loss_weights, grads)", "zip(self.loss_weights, feats)").replace(
        "zip(self.layer_weights, grads)", "zip(self.layer_weights, feats)").replace(
        "zip(self.params, grads)", "zip(self.params, feats)")
    assert findings(code) == []


@pytest.mark.parametrize("init", [
    "self.weights = optimizer.parameters", "self.weights = self.optimizer.parameters",
    "self.accu_grads = params.clone(prefix='accu', init='zeros')", "self.weights = params",
])
def test_attributes_assigned_parameter_sequences_are_flagged(init):
    attr = init.split("=")[0].strip()
    code = cell(f"self.optimizer = params\n{init}", f"out = ()\nfor w in {attr}:\n    out += (w * 2,)\nreturn out")
    assert only(code).line == line_of(code, f"for w in {attr}:")


def test_a_weights_argument_is_a_tensor_outside_optimizers_and_a_sequence_inside():
    loss = cell("self.n = 1", "out = ()\nfor w in weights:\n    out += (w * 2,)\nreturn out",
                params="self, logits, weights")
    assert findings(loss) == []
    opt = cell("self.n = 1", "out = ()\nfor w in weights:\n    out += (w * 2,)\nreturn out",
               base="nn.Optimizer", params="self, weights")
    assert len(findings(opt)) == 1


def test_constant_work_on_the_element_is_bookkeeping_even_through_an_accumulator():
    code = jit("total = 0\nfor g in grads:\n    total = total + g.size\nreturn total")
    assert findings(code) == []


# -- adversarial review: what HyperMap returns and accepts ------------------------------------------------------
def test_gradients_from_grad_operation_and_optimizer_arguments_are_known_tuples():
    code = cell("self.grad = ops.GradOperation(get_by_list=True)\nself.net = params",
                "weight_grads = self.grad(self.net, self.weights)(grads)\nout = ()\nfor g in weight_grads:\n"
                "    out += (g * 2,)\n"
                "return out")
    code = code.replace("self.net = params", "self.net = params\n        self.weights = ms.ParameterTuple(params)")
    out = fixed(code)
    assert "out = ops.HyperMap()(_map_g, weight_grads)" in out
    opt = cell("self.n = 1", "return tuple(g * 2 for g in grads)", base="nn.Optimizer")
    assert "return self.hyper_map(_map_g, grads)" in fixed(opt)


def test_zip_of_a_parameter_tuple_and_an_argument_wraps_the_argument_in_tuple():
    code = cell("self.params = ms.ParameterTuple(params)",
                "out = ()\nfor p, g in zip(self.params, grads):\n    out += (g + p,)\nreturn out")
    assert "ops.HyperMap()(_map_p, self.params, tuple(grads))" in fixed(code)


@pytest.mark.parametrize("body, reason", [
    ("out = ()\nfor g in reversed(grads):\n    out += (g * 2,)\nreturn out", "reversed"),
    ("return tuple(g[0] * scale for g in grads)", "indexes the element"),
])
def test_sequences_hypermap_takes_differently_get_no_fix(body, reason):
    finding = only(jit(body))
    assert finding.fix_object is None and reason in finding.text


def test_a_call_bound_by_partial_stays_per_element():
    """``ops.mul(self.noise(x), g)``: the loop calls ``self.noise`` per element; ``ops.partial`` would call it once."""
    code = cell("self.noise = nn.Dropout(p=0.5)",
                "return tuple(ops.mul(self.noise(grads[0]), g) for g in grads)", base="nn.Optimizer")
    out = fixed(code)
    assert "ops.partial(ops.mul, self.noise" not in out and "noise(grads[0]), g)" in out


def test_a_replaced_hyper_map_attribute_is_not_reused():
    code = cell("self.hyper_map = ops.HyperMap(ops.neg)", "return tuple(g * 2 for g in grads)", base="nn.Optimizer")
    out = fixed(code)
    assert "self.hyper_map(" not in out.split("def construct")[1] and "ops.HyperMap()(_map_g, grads)" in out


def test_no_fix_message_still_names_the_cure():
    finding = only(jit("for g in grads:\n    ops.assign(g, g * scale)\nreturn grads"))
    assert "ops.HyperMap" in finding.text and "no automatic rewrite" in finding.text


# -- reaching bindings (ms_lint/analysis/reaching.py) ---------------------------------------------------------------
MICRO_BATCHES = HEAD + """
class TupleAdd(nn.Cell):
    def __init__(self):
        super().__init__()
        self.add = ops.Add()
        self.hyper_map = ops.HyperMap()

    def construct(self, a, b):
        return self.hyper_map(self.add, a, b)


class Clip(nn.Cell):
    def __init__(self):
        super().__init__()
        self.hyper_map = ops.HyperMap()

    def construct(self, grads, bound):
        return self.hyper_map(ops.partial(ops.clip_by_value, -bound, bound), grads)


class MicroBatchStep(nn.Cell):
    def __init__(self, network, weights, reducer):
        super().__init__()
        self.network = network
        self.weights = weights
        self.grad = ops.GradOperation(get_by_list=True)
        self.clip = Clip()
        self.tuple_add = TupleAdd()
        self.reducer = reducer
        self.noise = ops.StandardNormal()

    def construct(self, datas, micro_batches):
        record_grad = self.grad(self.network, self.weights)(datas[0])
        record_grad = self.clip(record_grad, 1.0)
        grads = record_grad
        for i in range(1, micro_batches):
            record_grad = self.grad(self.network, self.weights)(datas[i])
            record_grad = self.clip(record_grad, 1.0)
            grads = self.tuple_add(grads, record_grad)
        noisy = ()
        for grad in grads:
            noisy = noisy + (grad + self.noise(grad.shape),)
        grads = self.reducer(noisy)
        return grads
"""


def test_a_loop_between_rebindings_sees_only_the_bindings_that_reach_it():
    """``grads`` is a tuple of gradients where the noise loop reads it (the clip and tuple-add sub-cells return
    one); that it is rebound later to what an unknown reducer returns does not make the loop's sequence unknown."""
    found = findings(MICRO_BATCHES)
    assert [f.line for f in found] == [line_of(MICRO_BATCHES, "for grad in grads")]


def test_a_name_rebound_to_one_tensor_is_no_sequence_where_that_binding_reaches():
    """After ``grads = ops.stack(noisy)`` the loop iterates rows of one Tensor (MSL101's business), not a sequence,
    although ``grads`` was a tuple of gradients before."""
    code = MICRO_BATCHES.replace("        grads = self.reducer(noisy)\n        return grads\n",
                                 "        grads = ops.stack(noisy)\n        for row in grads:\n"
                                 "            noisy = noisy + (row * 2,)\n        return noisy\n")
    assert [f.line for f in findings(code)] == [line_of(code, "for grad in grads")]
# -- sums across the sequence: ops.addn over HyperMap (unsafe) ------------------------------------------------------
def test_a_sum_across_gradients_becomes_one_addn_and_keeps_the_add_spelling():
    code = cell("self._add = ops.Add()\nself._sum = ops.ReduceSum()\n",
                "total = ms.Tensor(0, ms.float32)\nfor g in grads:\n    total = self._add(total, self._sum(g * g))\n"
                "return total\n")
    found = only(code)
    assert found.fix["applicability"] == "unsafe" and "ops.addn" in found.message
    outcome = fix(code, unsafe=True, select=["MSL102"])
    assert "total = self._add(total, ops.addn(ops.HyperMap()(ops.partial(_map_g, self._sum), grads)))" \
        in outcome.fixed
    assert not fix(outcome.fixed, unsafe=True, select=["MSL102"]).changed
    assert not fix(code, unsafe=False, select=["MSL102"]).changed


@pytest.mark.parametrize("body", [
    "total = ops.zeros((), ms.float32)\nfor g in grads:\n    total = total + ops.reduce_sum(g) * total\nreturn total",
    "total = ops.zeros((), ms.float32)\nfor g in grads:\n    total = total * ops.reduce_sum(g)\nreturn total",
    "total = ops.zeros((), ms.float32)\nfor g in grads:\n    total = total + ops.reduce_sum(g)\n    last = g\n"
    "return total, last",
])
def test_carried_products_and_leaking_temporaries_are_not_summed(body):
    found = only(jit(body))
    assert found.fix is None


def test_a_tuple_collected_with_plus_equals_is_a_map_not_a_sum():
    found = only(jit("out = ()\nfor g in grads:\n    out += (g * scale,)\nreturn out"))
    assert found.fix is not None and found.fix["applicability"] == "safe"


def test_a_sub_cell_that_holds_a_batchnorm_is_not_mapped():
    """ops.HyperMap over a BatchNorm fails to compile in MindSpore 2.10 (tests/test_counter_addn_mindspore.py)."""
    code = HEAD + textwrap.dedent("""
    class Block(nn.Cell):
        def __init__(self, c):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 1)
            self.bn = nn.BatchNorm2d(c)

        def construct(self, x):
            return self.bn(self.conv(x))


    class Net(nn.Cell):
        def __init__(self, params):
            super().__init__()
            self.block = Block(3)
            self.norm = nn.BatchNorm2d(3)
            self.conv = nn.Conv2d(3, 3, 1)

        def construct(self, grads):
            a = tuple(self.block(g) for g in grads)
            b = tuple(self.norm(g) for g in grads)
            c = tuple(self.conv(g) for g in grads)
            return a, b, c
    """)
    found = findings(code)
    assert [f.fix_object is None for f in found] == [True, True, False]
    assert "`self.block` is or holds a BatchNorm" in found[0].text and "`self.norm`" in found[1].text


# -- per-parameter update loops: the MultitypeFuncGraph fix (issue 16, shapes 2 and 3) ------------------------
STATE = """self.params = ms.ParameterTuple(params)
self.moments = self.params.clone(prefix="m", init="zeros")
self.count = ms.Parameter(ms.Tensor(0.0, ms.float32), name="count")
self.beta = 0.9
self.clip_type = 1
self.clip = nn.ClipByNorm()
self.max_norm = ms.Tensor(1.0, ms.float32)
"""


@pytest.mark.parametrize("construct, expected", [
    ("for p, m, g in zip(self.params, self.moments, grads):\n"
     "    ops.assign(m, self.beta * m + g)\n    ops.assign(p, p - m)\nreturn True",
     ['@_update_p.register("Number", "Tensor", "Tensor", "Tensor")', "def _update_p_tensors(beta, p, m, g):",
      "ops.HyperMap()(ops.partial(_update_p, self.beta), self.params, self.moments, tuple(grads))"]),
    ("for i in range(len(self.params)):\n    ops.assign(self.params[i], self.params[i] - self.beta * grads[i])\n"
     "return True",
     ["def _update_param_tensors(beta, param, grad):",
      "ops.HyperMap()(ops.partial(_update_param, self.beta), self.params, tuple(grads))"]),
    ("out = ()\nfor g in grads:\n    if self.clip_type == 0:\n        g = g * self.beta\n    else:\n"
     "        g = self.clip(g, self.max_norm)\n    out += (g,)\nreturn out",
     ["if self.clip_type == 0:\n            out = tuple(ops.HyperMap()(ops.partial(_update_g, self.beta), grads))",
      "else:\n            out = tuple(ops.HyperMap()(ops.partial(_update_g_2, self.clip, self.max_norm), grads))",
      '@_update_g_2.register("Function", "Tensor", "Tensor")']),
])
def test_update_and_constant_branch_loops_get_a_multitype_fix(construct, expected):
    code = cell(STATE, construct)
    finding = only(code)
    assert finding.fix_object is not None and finding.fix_object.applicability == "safe"
    out = fixed(code)
    for text in expected:
        assert text in out, out
    cst.parse_module(out)
    assert fix(out, select=["MSL102"]).changed is False


@pytest.mark.parametrize("construct, reason", [
    ("for p, g in zip(self.params, grads):\n    ops.assign(p, p - g)\n    ops.assign_add(self.count, 1.0)\n"
     "return True", "the body writes `self.count`"),
    ("s = grads[0]\nfor p, g in zip(self.params, grads):\n    ops.assign(p, p - s * g)\n    s = s * 0.5\nreturn True",
     "`s` is carried"),
    ("for i in range(len(self.params)):\n    ops.assign(self.params[i], self.params[i] * i)\nreturn True",
     "reads the position `i` other than to pick"),
    ("for p, g in zip(self.params, grads):\n    ops.assign(p, p - g)\n    if g.sum() > 0:\n        break\nreturn True",
     "`break`"),
    ("for p, g in zip(self.params, grads):\n    ops.assign(p, p - g * self.params[0])\nreturn True",
     "whole sequence `self.params`"),
    ("for p, g in zip(self.params, grads):\n    ops.assign(p, p - g)\n    print(g)\nreturn True", "`print`"),
    ("for p, g in zip(self.params, grads):\n    ops.assign(p, p - self.lr * g)\nreturn True",
     "cannot tell what `self.lr` is"),
    ("for p, g in zip(self.params, grads):\n    if g.sum() > 0:\n        if self.clip_type == 0:\n"
     "            g = self.clip(g, self.max_norm)\n    ops.assign(p, p - g)\nreturn True", "stays inside"),
    ("for i in range(len(self.params)):\n    ops.assign(self.moments[i], grads[i])\nreturn True",
     "does not pick its elements"),
])
def test_update_loops_refused_with_the_reason(construct, reason):
    finding = only(cell(STATE + "self.lr = params[0]\n", construct))
    assert finding.fix_object is None
    assert reason in finding.text, finding.text


COUNTED = ("# one step per parameter\nnum_params = len(self.params)\nfor i in range(num_params):\n"
           "    ops.assign(self.params[i], self.params[i] - self.beta * grads[i])\n")


def test_the_count_only_the_range_read_goes_with_the_loop():
    """``n = len(params)`` just before ``for i in range(n):`` is dead once the loop is a map (ruff's F841 on the
    fixed file, mindocr's NAdam): the fix removes it and keeps the comment above it."""
    out = fixed(cell(STATE, COUNTED + "return True"))
    assert "num_params" not in out and "len(self.params)" not in out, out
    assert "        # one step per parameter\n        ops.HyperMap()(ops.partial(_update_param" in out, out
    cst.parse_module(out)
    assert fix(out, select=["MSL102"]).changed is False


@pytest.mark.parametrize("construct", [
    COUNTED + "return num_params",  # read after the loop
    COUNTED.replace("num_params = len(self.params)\n", "num_params = len(self.params)\nnum_params += 0\n")
    + "return True",  # bound twice (and not just before the loop)
    COUNTED + "print(locals())\nreturn True",  # read by name at run time
])
def test_a_count_used_otherwise_stays(construct):
    out = fixed(cell(STATE, construct))
    assert "num_params = len(self.params)" in out and "ops.HyperMap()" in out, out


@pytest.mark.parametrize("rebinding", [
    "len = ops.size\n",
    "if (len := ops.size):\n    pass\n",
    "def _trace():\n    global len\n    from mindspore.ops import size as len\n",
    "match ops.size:\n    case len:\n        pass\n",
    "from mindspore.ops import *\n",
])
def test_a_loop_counted_by_a_len_the_module_may_rebind_gets_no_map(rebinding):
    """``range(len(params))`` walks what that ``len`` counts: with ``len`` bound to ``ops.size`` the map over
    ``params`` was a wrong safe fix (found by the review of the count's removal), and the count stayed."""
    code = cell(STATE, COUNTED + "return True").replace("class Net", rebinding + "\n\nclass Net", 1)
    finding = only(code)
    assert finding.fix_object is None, finding.text
    assert "cannot see which sequence" in finding.text, finding.text


def test_a_count_read_by_dir_stays():
    out = fixed(cell(STATE, COUNTED + "print(dir())\nreturn True"))
    assert "num_params = len(self.params)" in out and "ops.HyperMap()" in out, out


def test_update_loop_calling_a_helper_with_hidden_effects_gets_no_fix():
    code = HEAD + textwrap.dedent("""\
        COUNT = ms.Parameter(ms.Tensor(0.0, ms.float32), name="count")


        def bump(g):
            ops.assign_add(COUNT, g.sum())
            return g


        class Net(nn.Cell):
            def __init__(self, params):
                super().__init__()
                self.params = ms.ParameterTuple(params)

            def construct(self, grads):
                for p, g in zip(self.params, grads):
                    ops.assign(p, p - bump(g))
                return True
        """)
    finding = only(code)
    assert finding.fix_object is None
    assert "the body calls `bump`, which is not known to be free of effects" in finding.text


STEP_CELL = '''
import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops


class Step(nn.Cell):
    def __init__(self, params, lr=0.01):
        super().__init__()
        self.w = Parameter(Tensor([1.0], ms.float32), name="w")
        self.params = ms.ParameterTuple(params)
        self.moments = self.params.clone(prefix="m", init="zeros")
        self.aliased = ms.ParameterTuple([self.w, Parameter(Tensor([2.0], ms.float32), name="b")])
        self.repeated = (self.w,) * 4
        self.count = Parameter(Tensor(0.0, ms.float32), name="count")
        self.lr = float(lr)

    def construct(self, grads):
{body}
        return True
'''


@pytest.mark.parametrize("body, reason", [
    # review findings: each was offered a safe fix that changed what the code computes
    ("d = grads[0]\nfor p, m, g in zip(self.params, self.moments, grads):\n    d = g * 2\n    ops.assign(m, m + d)\n"
     "    ops.assign(p, p - self.lr * m)\nops.assign(self.w, d.sum())", "`d` is used after the loop"),
    ("for p, m, g in zip(self.params, self.moments, grads):\n    ops.assign(m, m + g)\n    self.count += 1",
     "the body assigns `self.count`"),
    ("for i in range(len(self.params)):\n    ops.assign(self.moments[i], self.moments[i] + grads[i])\n    i = 0\n"
     "    ops.assign(self.params[i], self.params[i] - self.lr * self.moments[i])", "rebinds the position `i`"),
    ("for p, m, g in zip(self.params, self.params, grads):\n    ops.assign(m, m + g)\n    ops.assign(p, p - g)",
     "`self.params` is zipped twice"),
    ("for p, g in zip(self.aliased, grads):\n    ops.assign(p, p - self.lr * g * self.w)",
     "not known to hold distinct Parameters"),
    ("for t, g in zip(self.repeated, grads):\n    ops.assign(t, t * 0.5 + g.sum())",
     "not known to hold distinct Parameters"),
])
def test_update_loops_that_a_map_would_change_get_no_fix(body, reason):
    code = STEP_CELL.replace("{body}", textwrap.indent(body, " " * 8))
    found = [f for f in lint(code) if f.code == "MSL102"]
    assert found and all(f.fix_object is None for f in found), [f.detail for f in found]
    assert any(reason in (f.detail or "") for f in found), [f.detail for f in found]


def test_the_same_update_loop_over_distinct_parameters_is_fixed():
    body = "for p, m, g in zip(self.params, self.moments, grads):\n    ops.assign(m, m + g)\n    ops.assign(p, p - m)"
    (finding,) = [f for f in lint(STEP_CELL.replace("{body}", textwrap.indent(body, " " * 8))) if f.code == "MSL102"]
    assert finding.fix_object is not None and finding.fix_object.applicability == "safe"


# -- what a map may run (review findings) ------------------------------------------------------------------------
HANDED_IN = HEAD + """
def apply(x, act=None):
    if act is None:
        act = ops.ReLU()
    return act(x)


def bump(x, p):
    update = ops.partial(ops.assign_add, p)
    update(x)
    return x * 2


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.5)
        self.p = ms.Parameter(ms.Tensor(0.0), name="p")

    def construct(self, grads):
        a = tuple(apply(x, self.drop) for x in grads)
        b = tuple(bump(x, self.p) for x in grads)
        return a, b
"""


def test_a_local_name_is_judged_by_what_it_holds_only_when_it_is_a_built_object():
    """``act`` is a parameter (a Dropout is passed in); ``update`` holds what ``ops.partial`` returns (an
    ``assign_add``): neither is a Primitive or Cell built from a class, so neither map is offered."""
    found = findings(HANDED_IN)
    assert len(found) == 2 and all(f.fix_object is None for f in found)
    assert any("`act`" in f.detail for f in found) and any("`update`" in f.detail for f in found)


INHERITED = HEAD + """
class Base(nn.Cell):
    def construct(self, x):
        return self.act(x)


class Plain(Base):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()


class Noisy(Base):
    def __init__(self):
        super().__init__()
        self.act = nn.Dropout(p=0.5)


class Pair(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = Plain()
        self.b = Noisy()

    def construct(self, x):
        return self.b(self.a(x))


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.pair = Pair()

    def construct(self, grads):
        return tuple(self.pair(g) for g in grads)
"""


def test_an_inherited_construct_is_checked_for_each_subclass_that_runs_it():
    """``Base.construct`` read for ``Plain`` (a ReLU) is read again for ``Noisy`` (a Dropout)."""
    finding = only(INHERITED)
    assert finding.fix_object is None and "Dropout" in finding.detail


def test_comments_between_the_clauses_of_a_mapped_comprehension_move_above_the_statement():
    code = jit("""
        clipped = tuple(ops.clip_by_value(g, -scale, scale)  # keep each gradient in range
                        for g in grads)  # one per parameter
        return clipped
    """)
    out = fixed(code)
    assert "HyperMap" in out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "clipped =" in line)
    assert lines[at - 1].strip() == "# keep each gradient in range"  # between the clauses: moved above
    assert lines[at].endswith("# one per parameter")  # the statement's own trailing comment stays


def test_experimental_optim_optimizers_take_one_gradient_per_parameter():
    code = HEAD.replace("from mindspore import nn, ops", "from mindspore import nn, ops\nfrom mindspore.experimental.optim "
                        "import Optimizer") + textwrap.dedent("""
        class Flip(Optimizer):
            def construct(self, gradients):
                return tuple(ops.neg(g) for g in gradients)
        """)
    assert only(code).line == line_of(code, "return tuple(")


def test_comments_inside_an_element_mapped_through_ops_partial_are_kept_too():
    code = cell("self.scale = ops.ones((), ms.float32)\n", """
        scaled = tuple(ops.mul(self.scale,  # the scale
                               g) for g in grads)
        return scaled
    """)
    out = fixed(code)
    assert "HyperMap" in out or "hyper_map" in out
    assert "# the scale" in out


# -- a list with one Tensor per row, handed to a helper of another module (mindaudio's FastSpeech2 ``pad``) ---------
PAD_UTILS = """\
import mindspore as ms
from mindspore import ops


def pad(input_ele, max_len):
    out_list = []
    for batch in input_ele:
        out_list.append(ops.pad(batch, ((0, max_len - batch.shape[0]), (0, 0))))
    return ops.stack(out_list)
"""
PAD_CELLS = """\
import mindspore as ms
from mindspore import nn, ops

from .utils import pad


class LengthRegulator(nn.Cell):
    def regulate(self, x, duration, max_len):
        output = list()  # (as mindaudio writes it; a ``[]`` literal is a constant to the value model: rules/MSL102.md)
        for batch, times in zip(x, duration):
            output.append(ops.repeat_elements(batch, 2, 0) * times)
        return pad(output, max_len)

    def construct(self, x, duration, max_len):
        return self.regulate(x, duration, max_len)


class Adaptor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.regulator = LengthRegulator()

    def construct(self, h, log_duration):
        return self.regulator(h, {duration}, 64)
"""


@pytest.mark.parametrize("duration, flagged", [
    ("ops.round(ops.exp(log_duration))", True),
    ("log_duration", False),  # a bare argument passed on: maybe a tuple, the rows are not known to be a Tensor's
])
def test_a_list_with_one_tensor_per_row_handed_to_a_helper_of_another_module(tmp_path, duration, flagged):
    from ms_lint.config import Config
    from ms_lint.runner import check_files

    package = tmp_path / "tts"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "utils.py").write_text(PAD_UTILS, encoding="utf-8")
    (package / "cells.py").write_text(PAD_CELLS.format(duration=duration), encoding="utf-8")
    files = [str(package / name) for name in ("__init__.py", "utils.py", "cells.py")]
    found = check_files(files, Config().with_overrides(select=["MSL102"]), use_cache=False)
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.fix) for f in found] == ([("utils.py", 7, None)] if flagged else [])


# An independent review's reproducers for the rows origin: a wrong "safe" fix, and lists that are no row lists.
ROWS = HEAD + """
class Head(nn.Cell):
    def __init__(self):
        super().__init__()
        self.heads = nn.CellList([nn.Dense(4, 4) for _ in range(3)])

    def normalize(self, seq):
        out = ()
        for s in seq:
            out += (ops.softmax(s, axis=0),)
        return out

    def construct(self, x):
        h = ops.relu(x)
        rows = list()
{build}
        return self.normalize(rows){also}
"""


def test_a_helper_handed_a_row_list_and_the_tensor_itself_gets_no_fix():
    """HyperMap applies the function to a Tensor whole: the caller that passes ``h`` would get another result."""
    code = ROWS.format(build="        for r in h:\n            rows.append(r * 2)", also=", self.normalize(h)")
    found = [f for f in findings(code) if f.line == line_of(code, "for s in seq:")]
    assert found and all(f.fix is None for f in found)


@pytest.mark.parametrize("build", [
    "        for f, head in zip(h, self.heads):\n            rows.append(head(f))",  # a cell per step
    "        for i, f in enumerate(h):\n            rows.append(self.heads[i](f))",
    "        if isinstance(x, (list, tuple)):\n            for r in x:\n                rows.append(r * 2)",  # a list there
    "        for r in h:\n            rows.append(r.shape[0])",  # Python ints
    "        for r in h:\n            rows.append(r * 2)\n            break",  # one row
])
def test_lists_that_are_no_row_lists_give_no_sequence(build):
    code = ROWS.format(build=build, also="")
    assert [f for f in findings(code) if f.line == line_of(code, "for s in seq:")] == []


def test_a_helper_another_call_hands_what_may_be_one_tensor_gets_no_fix():
    """An independent review's reproducer (an older gap): ``normalize(y)`` with ``y`` a ``construct`` argument."""
    code = HEAD + """
class Net(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.weights = ms.ParameterTuple(net.trainable_params())

    def normalize(self, seq):
        out = ()
        for s in seq:
            out += (ops.softmax(s, axis=0),)
        return out

    def construct(self, x, y):
        return self.normalize(self.weights), self.normalize({second})
"""
    found = findings(code.format(second="y"))
    assert len(found) == 1 and found[0].fix is None
    assert "`construct` also passes `y`, which may be one Tensor" in found[0].detail
    found = findings(code.format(second="self.weights"))
    assert len(found) == 1 and found[0].fix is not None


# -- tuples with one output per layer of a CellList (cpmant's all_attentions) ---------------------------------------
ENCODER = """
class Encoder(nn.Cell):
    def __init__(self, num_layers={count}):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(8, 8) for _ in range({range_arg})])
"""
LAYERS = HEAD + """{encoder}
    def construct(self, x, keep=False):
        kept = () if keep else None
        for layer in self.layers:
            x = layer(x)
{before}            kept += (x,)
{after}        return x, kept


class Model(nn.Cell):
    def __init__(self):
        super().__init__()
        self.encoder = {build}

    def construct(self, x):
        x, kept = self.encoder(x, True)
        out = ()
        for h in kept:
            out += (h[:, 1:],)
        return x, out
"""
GUARDED = "            if keep:\n    "  # the append under a test of a flag the loop does not bind (cpmant's)


def per_layer(count="24", range_arg="num_layers", before=GUARDED, after="", encoder=ENCODER, build="Encoder()"):
    return LAYERS.format(encoder=encoder.format(count=count, range_arg=range_arg), before=before, after=after,
                         build=build)


def kept_loop_findings(code):
    return [f for f in findings(code) if f.line == line_of(code, "for h in kept:")]


def test_a_tuple_a_sub_cell_builds_per_layer_is_a_model_sized_sequence_flagged_without_a_fix():
    code = per_layer()
    found = kept_loop_findings(code)
    assert len(found) == 1 and found[0].fix is None
    assert "`kept` is what the sub-cell `Encoder.construct` returns as `kept`" in found[0].detail
    assert "one output per layer of `self.layers` (24 layers)" in found[0].detail


@pytest.mark.parametrize("count, range_arg, before, after", [
    ("4", "num_layers", GUARDED, ""),  # a short CellList: 4 copies
    ("24", "self.num_heads", GUARDED, ""),  # not a count of layers by name, and unknown
    # may stop early or skip a layer after its append (reachable: the append runs first)
    ("24", "num_layers", GUARDED, "            if x.sum() > 0:\n                break\n"),
    ("24", "num_layers", GUARDED, "            if x.sum() > 0:\n                continue\n"),
    ("24", "len(range(num_layers))", GUARDED, ""),  # a count of a list's entries (stages), not of layers
])
def test_per_layer_tuples_that_are_not_model_sized_are_not_flagged(count, range_arg, before, after):
    code = per_layer(count, range_arg, before, after)
    assert after in code
    assert kept_loop_findings(code) == []


def test_a_layer_count_from_a_config_field_counts_by_its_name():
    code = per_layer().replace("def __init__(self, num_layers=24):", "def __init__(self, config):").replace(
        "range(num_layers)", "range(config.num_hidden_layers)").replace("self.encoder = Encoder()",
                                                                         "self.encoder = Encoder(object())")
    found = kept_loop_findings(code)
    assert len(found) == 1 and "(`config.num_hidden_layers`)" in found[0].detail


def test_the_same_function_s_per_layer_tuple_is_flagged_and_a_loop_zipping_a_cell_list_is_not():
    code = HEAD + """
class Net(nn.Cell):
    def __init__(self, depth=12):
        super().__init__()
        self.blocks = nn.CellList([nn.Dense(8, 8) for _ in range(depth)])
        self.heads = nn.CellList([nn.Dense(8, 8) for _ in range(depth)])

    def construct(self, x):
        samples = ()
        for block in self.blocks:
            x = block(x)
            samples = samples + (x,)
        projected = ()
        for sample, head in zip(samples, self.heads):
            projected = projected + (head(sample),)
        scaled = [s * 0.5 for s in samples]
        return projected, scaled
"""
    lines = {f.line for f in findings(code)}
    assert line_of(code, "scaled = [s * 0.5") in lines
    assert line_of(code, "for sample, head in zip") not in lines  # a different cell per element


def test_a_sub_cell_whose_returns_disagree_gives_no_per_layer_tuple():
    code = per_layer().replace("        return x, kept\n", "        if keep:\n            return x, kept\n"
                                                              "        return x, x\n")
    assert kept_loop_findings(code) == []


def test_slicing_the_element_is_tensor_work_and_indexing_it_or_slicing_its_name_is_not():
    assert kept_loop_findings(per_layer().replace("out += (h[:, 1:],)", "out += (h[0],)")) == []
    code = HEAD + """
class Opt(nn.Optimizer):
    def __init__(self, params, learning_rate=0.1):
        super().__init__(learning_rate, params)

    def construct(self, grads):
        prefixes = ()
        for p in self.parameters:
            prefixes += (p.name[:7],)
        scaled = ()
        for g in grads:
            scaled += (g[1:] * 2,)
        return prefixes, scaled
"""
    assert [f.line for f in findings(code)] == [line_of(code, "for g in grads:")]


@pytest.mark.parametrize("before", [
    "            if i >= 20:\n    ",  # only the last layers' outputs: EoMT keeps config.num_blocks of them
    "            if i == 3:\n                continue\n",  # may skip a layer before its append
])
def test_a_layer_loop_that_tests_its_index_or_skips_gives_no_per_layer_tuple(before):
    code = per_layer(before=before).replace("for layer in self.layers:", "for i, layer in enumerate(self.layers):")
    assert kept_loop_findings(code) == []
    plain = per_layer().replace("for layer in self.layers:", "for i, layer in enumerate(self.layers):")
    assert kept_loop_findings(plain) != []


def test_an_append_under_a_test_of_a_counter_the_loop_keeps_gives_no_per_layer_tuple():
    """A backbone that keeps the outputs of ``self.out_indices`` with a hand-kept index (an independent review's
    reproducer)."""
    code = per_layer(before="            if idx in (3, 7):\n    ", after="            idx += 1\n").replace(
        "        kept = () if keep else None\n", "        kept = () if keep else None\n        idx = 0\n")
    assert kept_loop_findings(code) == []


@pytest.mark.parametrize("encoder", [
    # the CellList a base class builds with its own count, 2, whatever the subclass's parameter says
    """class Base(nn.Cell):
    def __init__(self, hidden, num_layers=2):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(hidden, hidden) for _ in range(num_layers)])


class Encoder(Base):
    def __init__(self, num_layers=32):
        super().__init__(8, 2)
""",
    # built by a helper method with its own parameter
    """class Encoder(nn.Cell):
    def __init__(self, num_layers=24):
        super().__init__()
        self._build(3)

    def _build(self, num_layers):
        self.layers = nn.CellList([nn.Dense(8, 8) for _ in range(num_layers)])
""",
    # a required count the project builds with 3
    """class Encoder(nn.Cell):
    def __init__(self, hidden, num_layers):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(hidden, hidden) for _ in range(num_layers)])
""",
])
def test_the_layer_count_is_read_where_the_cell_list_is_built(encoder):
    """Independent review's reproducers: each count is small, each was flagged."""
    build = "Encoder(8, num_layers=3)" if "def __init__(self, hidden, num_layers):" in encoder else "Encoder()"
    code = per_layer(encoder="\n" + encoder.replace("{", "{{").replace("}", "}}"), build=build)
    assert kept_loop_findings(code) == []


OVERLAP_ADD = '''
from typing import List
import mindspore
from mindspore import nn, ops


class Codec(nn.Cell):
    def _decode_frame(self, code, scale):
        return ops.tanh(code) * scale

    @staticmethod
    def _overlap_add(frames: List[mindspore.Tensor], stride: int):
        out = ops.zeros(100)
        offset = 0
        for frame in frames:
            out[offset: offset + 4] += frame * 2
            offset += stride
        return out

    def decode(self, codes: mindspore.Tensor, scales):
        decoded = []
        for code, scale in ROWS:
            frame = self._decode_frame(code, scale)
            decoded.append(frame)
        return self._overlap_add(decoded, 2)

    def construct(self, codes: mindspore.Tensor, scales):
        return self.decode(codes, scales)
'''


def test_a_helper_handed_a_list_grown_per_row_of_a_tensor_loops_over_it_per_element():
    """mindnlp's Encodec ``_linear_overlap_add``: ``decoded = []`` grown by ``append`` once per row of the Tensor
    ``codes`` is no constant (the value model read the empty display as one, and the helper's ``frames`` with it)."""
    code = OVERLAP_ADD.replace("ROWS", "zip(codes, scales)")
    found = [(f.code, f.line, f.fix) for f in lint(code, select=["MSL102"])]
    assert found == [("MSL102", line_of(code, "for frame in frames"), None)]
    assert lint(OVERLAP_ADD.replace("ROWS", "zip([codes, codes], [scales, scales])"), select=["MSL102"]) == []
    assert lint(OVERLAP_ADD.replace("ROWS", "zip(codes, scales)").replace(
        "            decoded.append(frame)\n", ""), select=["MSL102"]) == []


def test_a_list_grown_per_parameter_with_python_values_is_no_tensor_sequence():
    """The same reading must not make a list of names a sequence of Tensors: a per-parameter loop over it would
    get a safe ``HyperMap`` fix on string work."""
    code = HEAD + """class Opt(nn.Cell):
    def __init__(self, params):
        super().__init__()
        self.parameters = ms.ParameterTuple(params)

    def construct(self, grads):
        names = []
        for p in self.parameters:
            names.append(p.name[:7])
        prefixes = ()
        for n in names:
            prefixes += (n + "_x",)
        return prefixes
"""
    assert lint(code, select=["MSL102"]) == []



def test_a_loop_over_a_list_grown_per_gradient_is_a_per_element_loop_without_a_fix():
    """``scaled = []; for g in grads: scaled.append(g * 2)``, then a loop over ``scaled``: as long as the
    gradients, flagged; no rewrite, since an append under a test makes such a list shorter than its source (the
    review's ``zip`` of two grown lists: ``zip`` stopped at the shorter, ``HyperMap`` refused them) and an op that
    the value model calls a Tensor may give a tuple (``ops.unbind``)."""
    code = HEAD + """class Opt(nn.Cell):
    def construct(self, grads):
        scaled = []
        for g in grads:
            scaled.append(g * 2)
        out = ()
        for s in scaled:
            out += (ops.sqrt(s),)
        return out
"""
    found = {f.line: f.fix for f in lint(code, select=["MSL102"])}
    assert set(found) == {line_of(code, "for g in grads"), line_of(code, "for s in scaled")}
    assert found[line_of(code, "for s in scaled")] is None


@pytest.mark.parametrize("loop", [
    # the review's reproducers (MindSpore 2.10, GRAPH_MODE: the rewrite failed where the loop ran)
    "for e, b in zip(every, big):\n            out += (ops.add(ops.reduce_sum(b), ops.reduce_sum(e)),)",
    "for g, b in zip(grads, big):\n            out += (ops.add(b, g),)",
    "for t in rows:\n            out += (ops.stack(t),)",
])
def test_no_rewrite_of_a_loop_over_grown_lists(loop):
    code = HEAD + f"""class Opt(nn.Cell):
    def construct(self, grads):
        big = []
        every = []
        rows = []
        for g in grads:
            every.append(g * 3)
            if g.shape[0] > 2:
                big.append(g * 2)
                rows.append(ops.unbind(g))
        out = ()
        {loop}
        return out
"""
    fixes = {f.line: f.fix for f in lint(code, select=["MSL102"])}
    line = line_of(code, loop.split(chr(10))[0].strip())
    assert fixes.get(line) is None
    assert (line in fixes) == ("zip" in loop)  # (``rows`` holds tuples: no sequence of Tensors, no finding)
