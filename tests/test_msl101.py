"""MSL101 loop-over-tensor-axis: what is flagged, what is not, and exactly when the vmap rewrite is offered.

The rewrite's numerical equivalence is proven on MindSpore in tests/test_loop_rewrites_mindspore.py; here are the
static decisions: every case where vmap would not be equivalent (or would not compile) must get no fix.
"""
import textwrap

import libcst as cst
import pytest

from ms_lint.testing import fix, lint

HEADER = "import mindspore as ms\nfrom mindspore import nn, ops\n\n\n"


def findings(body: str, header: str = HEADER):
    return [f for f in lint(header + textwrap.dedent(body), select=["MSL101"])]


def fixed(body: str, header: str = HEADER):
    return fix(header + textwrap.dedent(body), select=["MSL101"])


def flagged_lines(body: str):
    return [f.line - HEADER.count("\n") for f in findings(body)]


def assert_flagged_without_fix(body: str):
    found = findings(body)
    assert len(found) == 1, found
    assert found[0].fix_object is None, f"unexpected fix: {found[0].fix}"
    assert not fixed(body).changed


def assert_fixed(body: str) -> str:
    found = findings(body)
    assert len(found) == 1 and found[0].fix_object is not None, found
    assert found[0].fix["applicability"] == "safe"
    outcome = fixed(body)
    assert outcome.changed and outcome.error is None
    cst.parse_module(outcome.fixed)
    assert findings(outcome.fixed[len(HEADER):]) == [], "the rewrite is flagged again"
    return outcome.fixed[len(HEADER):]


LOOP = """
@ms.jit
def f(x, y):
    out = []
    for i in range(x.shape[0]):
{body}
    return ops.stack(out)
"""


def loop(*lines: str) -> str:
    return LOOP.format(body="\n".join("        " + line for line in lines))


# -- what is flagged ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("header_line", [
    "for i in range(x.shape[0]):",
    "for i in range(ops.shape(x)[1]):",
    "for i in range(x.shape[0] - 1):",
    "for i in range(1, x.shape[0]):",
    "for i in range(x.shape[0] - 1, -1, -1):",
    "for i in range(len(ops.relu(x))):",
    "for row in ops.unstack(x):",
    "for row in ops.relu(x):",
    "for i, row in enumerate(ops.unstack(x, 1)):",
])
def test_loops_over_a_tensor_axis_are_flagged(header_line):
    body = f"""
    @ms.jit
    def f(x):
        total = x.sum()
        {header_line}
            total = total + ops.relu(x).sum()
        return total
    """
    assert flagged_lines(body) == [5]


def test_trip_count_through_local_names_and_unpacking():
    body = """
    @ms.jit
    def f(x):
        b, c = x.shape
        n = b
        shape = ops.shape(x)
        acc = x[0]
        for i in range(n):
            acc = acc + x[i]
        for j in range(shape[1]):
            acc = acc + x[:, j].sum()
        return acc
    """
    assert flagged_lines(body) == [8, 10]
    assert "`n` = `b` = `x.shape[0]`" in findings(body)[0].text


def test_shape_primitive_held_by_the_cell():
    body = """
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.shape = ops.Shape()

        def construct(self, x):
            out = x[0]
            for i in range(self.shape(x)[0]):
                out = out * x[i]
            return out
    """
    assert flagged_lines(body) == [9]


def test_the_shape_of_a_value_handed_to_ops_shape_is_a_tensor_shape():
    """mindocr's SAR encoder: ``img_metas=None`` in the signature makes the value model call it a constant, but
    ``ops.shape`` takes only Tensors: under ``if ratios is not None`` it is one. ``len`` of the same tuple is not a
    Tensor's shape."""
    body = """
    class Encoder(nn.Cell):
        def construct(self, feat, metas=None):
            ratios = None
            if metas is not None:
                ratios = metas[-1]
            rows = []
            if ratios is not None:
                for i in range(ops.shape(ratios)[0]):
                    rows.append(feat[i] * ratios[i])
                for j in range(len(metas)):
                    rows.append(feat[j])
            return ops.stack(rows)
    """
    assert flagged_lines(body) == [9]


def test_a_shape_int_every_caller_passes_to_a_helper_is_its_trip_count():
    """mindocr's RPN label assignment: ``batch_size, _, _ = gts.shape`` in ``construct``, handed to a helper whose
    loop runs ``range(batch_size)``. A helper another call fills with a literal, or one called with its default,
    keeps an unknown count."""
    body = """
    def per_image(gts, batch_size):
        out = []
        for i in range(batch_size):
            out.append(ops.relu(gts[i]))
        return ops.stack(out)


    def mixed(gts, count):
        out = []
        for i in range(count):
            out.append(ops.relu(gts[i]))
        return ops.stack(out)


    class Assigner(nn.Cell):
        def construct(self, gts):
            batch_size, max_gt, _ = gts.shape
            return per_image(gts, batch_size) + mixed(gts, batch_size) + mixed(gts, 4)
    """
    assert flagged_lines(body) == [4]


def test_while_with_a_python_int_counter_up_to_a_shape_is_flagged():
    body = """
    @ms.jit
    def f(x, h):
        t = 0
        while t < x.shape[0]:
            h = ops.tanh(x[t] + h)
            t += 1
        return h
    """
    found = findings(body)
    assert [f.line - 4 for f in found] == [5]
    assert "`h`" in found[0].text and "ForiLoop" in found[0].text
    assert found[0].fix["applicability"] == "unsafe"  # the Tensor-counter rewrite
    outcome = fix(HEADER + textwrap.dedent(body), unsafe=True, select=["MSL101"])
    assert "t = ms.Tensor(0, ms.int32)" in outcome.fixed and "t = t + 1" in outcome.fixed


def test_comprehensions_are_flagged():
    body = """
    @ms.jit
    def f(x):
        rows = [ops.relu(x[i]) for i in range(x.shape[0])]
        return ops.concat(rows)
    """
    assert flagged_lines(body) == [4]


def test_annotated_tensor_parameter_iterated_directly_is_flagged():
    body = """
    from mindspore import Tensor


    @ms.jit
    def f(x: Tensor):
        total = 0
        for row in x:
            total = total + row.sum()
        return total
    """
    assert flagged_lines(body) == [8]


# -- what is not flagged -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("code", [
    # the rank, not an axis
    """
    @ms.jit
    def f(x):
        for i in range(x.ndim):
            x = x.sum(axis=0, keepdims=True) + i
        for i in range(len(x.shape)):
            x = x * 2
        return x
    """,
    # an unannotated parameter may be a tuple of tensors (FPN levels): not claimed to be a tensor
    """
    class Neck(nn.Cell):
        def construct(self, features):
            out = ()
            for feature in features:
                out = out + (ops.relu(feature),)
            for i in range(len(features)):
                out = out + (features[i] * 2,)
            return out
    """,
    # a cell's result may be a tuple too
    """
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Dense(3, 3)

        def construct(self, x):
            feats = self.backbone(x)
            total = 0
            for f in feats:
                total = total + f.sum()
            return total
    """,
    # calling a cell picked by the index: a loop over cells
    """
    class Heads(nn.Cell):
        def __init__(self):
            super().__init__()
            self.heads = nn.CellList([nn.Dense(3, 3) for _ in range(4)])

        def construct(self, x):
            out = []
            for i in range(x.shape[0]):
                out.append(self.heads[i](x[i]))
            return ops.stack(out)
    """,
    # no graph work in the body: Python bookkeeping
    """
    @ms.jit
    def f(x):
        idx = ()
        for i in range(x.shape[0]):
            idx = idx + (i * 2,)
        return x[idx[0]]
    """,
    # a tensor counter: a real loop
    """
    @ms.jit
    def f(x):
        t = ms.Tensor(0, ms.int32)
        while t < x.shape[0]:
            x = x * 2
            t += 1
        return x
    """,
    # not graph code
    """
    def python_side(x):
        out = []
        for i in range(x.shape[0]):
            out.append(ops.relu(x[i]))
        return ops.stack(out)
    """,
    # a nested @constexpr helper inside graph code runs in Python
    """
    @ms.jit
    def f(x):
        @ops.constexpr
        def sizes(shape):
            return tuple(shape[i] * 2 for i in range(len(shape)))

        return x.reshape(sizes(x.shape))
    """,
    # a numpy-array attribute iterated directly: not known to be a tensor
    """
    import numpy as np


    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.anchors = np.ones((4, 2))

        def construct(self, x):
            for a in self.anchors:
                x = x + ms.Tensor(a).sum()
            return x
    """,
])
def test_not_flagged(code):
    assert findings(code) == []


def test_noqa_on_the_loop_line_suppresses():
    body = """
    @ms.jit
    def f(x):
        out = []
        for i in range(x.shape[0]):  # noqa: MSL101
            out.append(ops.relu(x[i]))
        return ops.stack(out)
    """
    assert findings(body) == []
    assert not fixed(body).changed


# -- the vmap rewrite: when it is offered ------------------------------------------------------------------------
def test_single_expression_becomes_a_lambda():
    out = assert_fixed(loop("out.append(ops.relu(x[i]) * y)"))
    assert "return ms.vmap(lambda x_i: ops.relu(x_i) * y, in_axes=0, out_axes=0)(x)" in out
    assert "for " not in out and "out = []" not in out


def test_several_statements_become_a_nested_def():
    out = assert_fixed(loop("h = ops.relu(x[i])", "h = h * 2", "out.append(h + y)"))
    assert "def _out_item(x_i):\n        h = ops.relu(x_i)\n        h = h * 2\n        return h + y\n" in out
    assert "return ms.vmap(_out_item, in_axes=0, out_axes=0)(x)" in out


def test_slices_with_extra_indices_keep_the_rest():
    out = assert_fixed(loop("out.append(x[i, 1:] + x[i, 0])"))
    assert "lambda x_i: x_i[1:] + x_i[0]" in out


def test_two_tensors_on_different_axes():
    out = assert_fixed(loop("out.append(x[i] * y[:, i])"))
    assert "ms.vmap(lambda x_i, y_i: x_i * y_i, in_axes=(0, 1), out_axes=0)(x, y)" in out


@pytest.mark.parametrize("stack, axis", [
    ("ops.stack(out, 1)", 1), ("ops.stack(out, axis=2)", 2), ("ops.Stack(axis=1)(out)", 1),
    ("ops.Stack(-1)(out)", -1), ("ops.stack(out)", 0),
])
def test_stack_axis_becomes_out_axes(stack, axis):
    body = loop("out.append(ops.relu(x[i]))").replace("ops.stack(out)", stack)
    assert f"out_axes={axis})" in assert_fixed(body)


def test_stack_primitive_held_by_the_cell():
    body = """
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.stack = ops.Stack(axis=1)

        def construct(self, x):
            rows = []
            for i in range(x.shape[0]):
                rows.append(ops.relu(x[i]))
            rows = self.stack(rows)
            return rows
    """
    out = assert_fixed(body)
    assert "rows = ms.vmap(lambda x_i: ops.relu(x_i), in_axes=0, out_axes=1)(x)" in out


def test_iterating_an_unstack_maps_its_axis():
    body = """
    @ms.jit
    def f(x):
        cols = []
        for c in ops.unstack(x, 1):
            cols.append(c * 2)
        return ops.stack(cols)
    """
    assert "ms.vmap(lambda c: c * 2, in_axes=1, out_axes=0)(x)" in assert_fixed(body)


def test_comprehension_feeding_stack():
    body = """
    @ms.jit
    def f(x, w):
        return ops.stack([ops.matmul(x[i], w) for i in range(x.shape[0])], axis=1)
    """
    assert "return ms.vmap(lambda x_i: ops.matmul(x_i, w), in_axes=0, out_axes=1)(x)" in assert_fixed(body)


def test_comments_above_the_loop_are_kept():
    body = """
    @ms.jit
    def f(x):
        out = []
        # one row at a time
        for i in range(x.shape[0]):
            out.append(ops.relu(x[i]))
        return ops.stack(out)
    """
    assert "# one row at a time\n    return ms.vmap(" in assert_fixed(body)


@pytest.mark.parametrize("header, spelled, added", [
    ("import mindspore as ms\nfrom mindspore import ops\n", "ms.vmap(", None),
    ("import mindspore\nfrom mindspore import ops\n", "mindspore.vmap(", None),
    ("from mindspore import ops, jit\n", "ops.vmap(", None),
    ("from mindspore import jit\nimport mindspore.ops as P\n", "P.vmap(", None),
])
def test_vmap_is_spelled_with_the_files_imports(header, spelled, added):
    decorator = "@jit" if "jit\n" in header or ", jit" in header else ("@ms.jit" if " as ms" in header else
                                                                          "@mindspore.jit")
    ops_name = "P" if " as P" in header else "ops"
    code = header + textwrap.dedent(f"""


    {decorator}
    def f(x):
        out = []
        for i in range(x.shape[0]):
            out.append({ops_name}.relu(x[i]))
        return {ops_name}.stack(out)
    """)
    outcome = fix(code, select=["MSL101"])
    assert outcome.changed and spelled in outcome.fixed
    assert outcome.fixed.count("import") == code.count("import")


def test_a_primitive_object_is_wrapped_not_passed_to_vmap():
    body = """
    hswish = ops.HSwish()


    @ms.jit
    def f(x):
        out = []
        for i in range(x.shape[0]):
            out.append(hswish(x[i]))
        return ops.stack(out)
    """
    out = assert_fixed(body)
    assert "ms.vmap(lambda x_i: hswish(x_i)," in out and "vmap(hswish" not in out


# -- the vmap rewrite: every case where it is not equivalent (or would not compile) ------------------------------
@pytest.mark.parametrize("lines", [
    ("out.append(x[i] * i)",),  # the index used as a value
    ("out.append(x[i + 1] - x[i])",),  # the index in arithmetic
    ("scales = [1.0, 2.0]", "out.append(x[i] * scales[i])"),  # a Python list indexed by i
    ("if i > 0:", "    out.append(x[i])"),  # a condition on i
    ("if x.shape[1] > 2:", "    break", "out.append(x[i])"),  # early exit
    ("out.append(x[i])", "continue"),
    ("out.append(ops.dropout(x[i], p=0.5))",),  # random: the same numbers in every lane
    ("out.append(ops.uniform(x[i].shape, x[i], x[i] + 1))",),
    ("print(x[i])", "out.append(x[i])"),  # a side effect
    ("ops.assign(y, x[i])", "out.append(x[i])"),
    ("out.append(x[i] + out[-1])",),  # reads the growing list
    ("out.append(x[i])", "out.append(x[i] * 2)"),  # appends twice
    ("other.append(x[i])", "out.append(x[i])"),  # a second list
    ("out.append(y[i])",),  # the trip count is x's, the slice is y's
    ("out.append(x[i][0] + x[0][i])",),  # i in an inner, non-leading position of another base
    ("out.append(x[i, i])",),  # the diagonal
    ("out.append(ops.concat((x[i], y[0])))",),  # indexes an unmapped tensor: fails to compile in 2.10
    ("out.append(x[i] + ops.gather(y, ms.Tensor(0), 0))",),
])
def test_no_rewrite_when_not_equivalent(lines):
    body = LOOP.format(body="\n".join("        " + line for line in lines)).replace(
        "    out = []\n", "    out = []\n    other = []\n")
    found = findings(body)
    assert len(found) == 1 and found[0].fix_object is None, (lines, found)
    assert not fixed(body).changed


def test_a_loop_carried_list_gets_only_the_unsafe_peeled_buffer():
    """Loop-carried (``y`` reads the previous step): no vmap; the unsafe peeled-buffer rewrite instead."""
    body = LOOP.format(body="        y = y + x[i]\n        out.append(y)")
    found = findings(body)
    assert len(found) == 1 and found[0].fix_object is not None and found[0].fix_object.applicability == "unsafe"
    assert not fixed(body).changed


@pytest.mark.parametrize("code", [
    # the list is used before it is stacked
    """
    @ms.jit
    def f(x):
        out = []
        for i in range(x.shape[0]):
            out.append(ops.relu(x[i]))
        n = len(out)
        return ops.stack(out) * n
    """,
    # used again after the stack
    """
    @ms.jit
    def f(x):
        out = []
        for i in range(x.shape[0]):
            out.append(ops.relu(x[i]))
        y = ops.stack(out)
        return y, out[0]
    """,
    # not started empty
    """
    @ms.jit
    def f(x):
        out = [x[0]]
        for i in range(x.shape[0]):
            out.append(ops.relu(x[i]))
        return ops.stack(out)
    """,
    # concatenated on an axis the rows may not have (a negative axis)
    """
    @ms.jit
    def f(x):
        out = []
        for i in range(x.shape[0]):
            out.append(x[i] * 2)
        return ops.concat(out, -1)
    """,
    # a temporary of the body read after the loop
    """
    @ms.jit
    def f(x):
        out = []
        for i in range(x.shape[0]):
            h = ops.relu(x[i])
            out.append(h)
        return ops.stack(out) + h
    """,
    # the index read after the loop
    """
    @ms.jit
    def f(x):
        out = []
        for i in range(x.shape[0]):
            out.append(ops.relu(x[i]))
        return ops.stack(out) * i
    """,
    # a comprehension with a condition
    """
    @ms.jit
    def f(x):
        return ops.stack([ops.relu(x[i]) for i in range(x.shape[0]) if i % 2 == 0])
    """,
    # a comprehension concatenated on a negative axis
    """
    @ms.jit
    def f(x):
        return ops.concat([ops.relu(x[i]) for i in range(x.shape[0])], -1)
    """,
    # an nn cell not known to work under vmap (BatchNorm updates statistics while training)
    """
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(3)

        def construct(self, x):
            out = []
            for i in range(x.shape[0]):
                out.append(self.bn(x[i]))
            return ops.stack(out)
    """,
    # a helper method that slices a tensor which is the same for every row
    """
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.table = ms.Tensor([[1.0, 2.0], [3.0, 4.0]])

        def pick(self, row):
            return row * self.table[0]

        def construct(self, x):
            out = []
            for i in range(x.shape[0]):
                out.append(self.pick(x[i]))
            return ops.stack(out)
    """,
    # a cell imported from elsewhere: its body cannot be checked
    """
    from mymodels import Head


    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.head = Head()

        def construct(self, x):
            out = []
            for i in range(x.shape[0]):
                out.append(self.head(x[i]))
            return ops.stack(out)
    """,
    # a walrus binds y in the function; moved into a lambda it would not (y read after the loop)
    """
    @ms.jit
    def f(x):
        out = []
        for i in range(x.shape[0]):
            out.append(ops.exp(y := x[i] * 2))
        res = ops.stack(out)
        return res + y
    """,
    # ...even from inside a comprehension
    """
    @ms.jit
    def f(x):
        res = ops.stack([ops.exp(y := x[i]) for i in range(x.shape[0])])
        return res + y
    """,
    # a name the body assigns is declared global: the moved body would assign a local instead
    """
    z = None


    @ms.jit
    def f(x):
        global z
        out = []
        for i in range(x.shape[0]):
            z = x[i] * 2
            out.append(ops.exp(z))
        return ops.stack(out)
    """,
    # the trip count was read from x before x was rebound: the loop takes the first n rows of the new x, a vmap
    # over the new x would take all of them
    """
    @ms.jit
    def f(x):
        n = x.shape[0]
        x = ops.transpose(x, (1, 0))
        out = []
        for i in range(n):
            out.append(x[i] * 2)
        return ops.stack(out)
    """,
    """
    @ms.jit
    def f(x):
        b, c = x.shape
        x = x.T
        out = []
        for i in range(b):
            out.append(x[i] + 1)
        return ops.stack(out)
    """,
    """
    @ms.jit
    def f(x):
        n = x.shape[0]
        x = ops.transpose(x, (1, 0))
        return ops.stack([x[i] * 2 for i in range(n)])
    """,
    # a temporary read in the `finally` of the try the loop sits in
    """
    @ms.jit
    def f(x):
        try:
            out = []
            for i in range(x.shape[0]):
                h = ops.exp(x[i])
                out.append(h)
            res = ops.stack(out)
        finally:
            print(h)
        return res
    """,
])
def test_no_rewrite_for_these_shapes(code):
    assert_flagged_without_fix(code)


def test_helper_methods_and_known_cells_are_followed():
    body = """
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(3, 2)
            self.act = ops.ReLU()

        def score(self, row, scale):
            hidden = self.act(self.dense(row))
            return hidden[0] * scale

        def construct(self, x):
            out = []
            for i in range(x.shape[0]):
                out.append(self.score(x[i], 2.0))
            return ops.stack(out)
    """
    assert "ms.vmap(lambda x_i: self.score(x_i, 2.0), in_axes=0, out_axes=0)(x)" in assert_fixed(body)


def test_message_for_sums_names_the_reduction():
    body = """
    @ms.jit
    def f(x):
        total = 0
        for i in range(x.shape[1]):
            total += ops.relu(x[:, i]).sum()
        return total
    """
    found = findings(body)
    assert len(found) == 1 and found[0].fix["applicability"] == "unsafe"
    assert "only sums per-slice terms into `total`" in found[0].text and ".sum(axis=0)" in found[0].text
    assert "added in another order" in found[0].fix["message"]
    out = fixed(body, HEADER)
    assert not out.changed  # unsafe: only with --unsafe-fixes


def test_message_for_loop_carried_state_names_forloop_and_the_trade():
    body = """
    @ms.jit
    def f(x, h):
        for t in range(x.shape[0]):
            h = ops.tanh(x[t] + h)
        return h
    """
    message = findings(body)[0].text
    assert "`x.shape[0]`" in message and "`h`" in message
    assert "ops.ForiLoop(..., unroll=False)" in message and "slower per call" in message


def test_liveness_follows_branches_and_elif_chains():
    body = """
    @ms.jit
    def f(x, flag=True):
        if flag:
            y = x
        elif x.shape[0] > 2:
            out = []
            for i in range(x.shape[0]):
                out.append(ops.relu(x[i]))
            y = ops.stack(out)
        else:
            y = x * 2
        return y{tail}
    """
    assert "y = ms.vmap(lambda x_i: ops.relu(x_i), in_axes=0, out_axes=0)(x)" in assert_fixed(body.format(tail=""))
    # the index leaks out of the loop and is read after the if/elif/else: no rewrite
    assert_flagged_without_fix(body.format(tail=" * i"))


def test_loop_inside_an_outer_loop():
    body = """
    @ms.jit
    def f(x):
        total = x
        for _ in range(3):
            out = []
            for i in range(x.shape[0]):
                h = ops.relu(total[i])
                out.append(h)
            total = ops.stack(out) + h
        return total
    """
    # `h` is read after the inner loop (and again in the next outer iteration): no rewrite
    assert_flagged_without_fix(body)


def test_trip_count_read_after_the_last_rebinding_is_still_rewritten():
    """``x = f(x); n = x.shape[0]``: n is the size of the x the loop slices."""
    out = assert_fixed("""
    @ms.jit
    def f(x):
        x = ops.relu(x)
        n = x.shape[0]
        out = []
        for i in range(n):
            out.append(x[i] * 2)
        return ops.stack(out)
    """)
    assert "ms.vmap(lambda x_i: x_i * 2, in_axes=0, out_axes=0)(x)" in out


def test_annotated_helper_parameter_that_callers_fill_with_a_list_is_not_a_tensor():
    """mindcv's CrossViT: ``forward_head(self, x: Tensor)`` is handed ``forward_features``'s list of tensors."""
    assert findings("""
    class CrossViT(nn.Cell):
        def __init__(self):
            super().__init__()
            self.head = nn.CellList([nn.Dense(4, 2), nn.Dense(4, 2)])

        def forward_features(self, x: ms.Tensor) -> ms.Tensor:
            return [x[:, 0], x[:, 1]]

        def forward_head(self, x: ms.Tensor) -> ms.Tensor:
            ce_logits = []
            zz = 0
            for c in x:
                ce_logits.append(self.head[zz](c))
                zz = zz + 1
            return ops.stack([ce_logits[0], ce_logits[1]]).mean(0)

        def construct(self, x: ms.Tensor) -> ms.Tensor:
            x = self.forward_features(x)
            return self.forward_head(x)
    """) == []


def test_annotated_helper_parameter_that_callers_fill_with_a_tensor_is_still_flagged():
    assert len(findings("""
    class Net(nn.Cell):
        def rows(self, x: ms.Tensor) -> ms.Tensor:
            out = []
            for r in x:
                out.append(ops.exp(r))
            return ops.stack(out)

        def construct(self, x: ms.Tensor) -> ms.Tensor:
            return self.rows(ops.relu(x))
    """)) == 1


def test_cells_of_a_pynative_only_script_are_not_flagged():
    code = """
    class Net(nn.Cell):
        def construct(self, x):
            out = []
            for i in range(x.shape[0]):
                out.append(ops.exp(x[i]))
            return ops.stack(out)


    @ms.jit
    def rows(x):
        out = []
        for i in range(x.shape[0]):
            out.append(ops.exp(x[i]))
        return ops.stack(out)


    ms.set_context(mode=ms.PYNATIVE_MODE)
    """
    assert flagged_lines(code) == [13]


def test_loops_over_a_numpy_arrays_shape_are_not_tensor_axes():
    """A numpy array made in ``__init__`` (or in graph code) has a fixed, config-sized shape: not a Tensor's."""
    assert findings("""
    import numpy as np


    class AnchorHead(nn.Cell):
        def __init__(self, anchors):
            super().__init__()
            self.anchors = np.array(anchors, np.float32)
            self.conv = nn.Conv2d(4, 4, 1)

        def construct(self, x):
            outs = ()
            for i in range(self.anchors.shape[0]):
                outs += (self.conv(x) * float(self.anchors[i, 0]),)
            grid = np.arange(16).reshape(4, 4)
            for j in range(grid.shape[0]):
                x = x + 1
            return outs, x
    """) == []


def test_a_body_that_only_reads_shapes_builds_no_graph_nodes():
    assert findings("""
    @ms.jit
    def f(x):
        sizes = ()
        for i in range(x.shape[0]):
            sizes += (x.shape[1] * i, x.ndim, len(x))
        return x.reshape((-1,))[sizes[0]:sizes[1]]
    """) == []


def test_a_python_int_while_counting_down_from_a_shape_is_unrolled():
    code = """
    import mindspore as ms
    from mindspore import nn, ops


    class DiscountedReturn(nn.Cell):
        def construct(self, reward, done, last_value):
            returns = ops.zeros_like(reward)
            step = reward.shape[0] - 1
            while step >= 0:
                last_value = reward[step] + (1 - done[step]) * 0.99 * last_value
                returns[step] = last_value
                step -= 1
            return returns
    """
    found = [f for f in lint(textwrap.dedent(code), select=["MSL101"])]
    assert [(f.line, f.code) for f in found] == [(10, "MSL101")]
    assert "down from `reward.shape[0] - 1`" in found[0].message


# -- rows gathered into a tuple, or concatenated with a new length-1 axis --------------------------------------
@pytest.mark.parametrize("code, expected", [
    ("""
    @ms.jit
    def f(x, y):
        out = ()
        for i in range(x.shape[0]):
            out = out + (ops.relu(x[i] * y[i]).unsqueeze(0),)
        return ops.concat(out)
    """, "ms.vmap(lambda x_i, y_i: ops.relu(x_i * y_i), in_axes=(0, 0), out_axes=0)(x, y)"),
    ("""
    @ms.jit
    def f(x):
        out = ()
        for j in range(x.shape[1]):
            out += (ops.expand_dims(x[:, j] * 2, 1),)
        return ops.cat(out, 1)
    """, "ms.vmap(lambda x_j: x_j * 2, in_axes=1, out_axes=1)(x)"),
    ("""
    @ms.jit
    def f(x):
        out = ()
        for i in range(x.shape[0]):
            out = out + (ops.softmax(x[i], axis=-1),)
        return ops.stack(out)
    """, "ms.vmap(lambda x_i: ops.softmax(x_i, axis=-1), in_axes=0, out_axes=0)(x)"),
    ("""
    @ms.jit
    def f(x):
        out = []
        for i in range(x.shape[0]):
            out.append(ops.expand_dims(x[i] * 2, 0))
        return ops.concat(out)
    """, "ms.vmap(lambda x_i: x_i * 2, in_axes=0, out_axes=0)(x)"),
    ("""
    @ms.jit
    def f(p, ids):
        return ops.cat([ops.index_select(p[i], 0, ids[i]).unsqueeze(0) for i in range(p.shape[0])])
    """, "ms.vmap(lambda p_i, ids_i: ops.index_select(p_i, 0, ids_i), in_axes=(0, 0), out_axes=0)(p, ids)"),
])
def test_tuple_rows_and_concat_of_unsqueezed_rows_are_vmapped(code, expected):
    out = assert_fixed(code)
    assert expected in out


def test_tuple_accumulation_is_not_reported_as_loop_carried():
    found = findings("""
    @ms.jit
    def f(x, w):
        out = ()
        for i in range(x.shape[0]):
            out = out + (ops.matmul(x[i], w),)
        return ops.concat(out)
    """)
    assert len(found) == 1 and "carries" not in found[0].message and found[0].fix_object is not None


@pytest.mark.parametrize("code, expected", [
    ("""
    @ms.jit
    def f(x, w):
        out = ()
        for i in range(x.shape[0]):
            out = out + (ops.matmul(x[i], w),)
        return ops.concat(out)
    """, "ops.flatten(ms.vmap(lambda x_i: ops.matmul(x_i, w), in_axes=0, out_axes=0)(x), start_dim=0, end_dim=1)"),
    ("""
    @ms.jit
    def f(x):
        out = []
        for j in range(x.shape[1]):
            out.append(x[:, j] * 2)
        return ops.cat(out, 1)
    """, "ops.flatten(ms.vmap(lambda x_j: x_j * 2, in_axes=1, out_axes=1)(x), start_dim=1, end_dim=2)"),
    ("""
    @ms.jit
    def f(x):
        return ops.concat([x[i] * 2 for i in range(x.shape[0])])
    """, "ops.flatten(ms.vmap(lambda x_i: x_i * 2, in_axes=0, out_axes=0)(x), start_dim=0, end_dim=1)"),
])
def test_concat_of_rows_without_a_new_axis_is_a_vmap_then_a_merge_of_two_axes(code, expected):
    assert expected in assert_fixed(code)


@pytest.mark.parametrize("code", [
    # the row reads the tuple built so far
    """
    @ms.jit
    def f(x):
        out = (x[0],)
        for i in range(1, x.shape[0]):
            out = out + (x[i] + out[-1],)
        return ops.stack(out)
    """,
    # the tuple does not start empty
    """
    @ms.jit
    def f(x):
        out = (x[0] * 0,)
        for i in range(x.shape[0]):
            out = out + (x[i] * 2,)
        return ops.stack(out)
    """,
    # the concat axis is not a literal
    """
    @ms.jit
    def f(x, axis=0):
        out = ()
        for i in range(x.shape[0]):
            out = out + (x[i].unsqueeze(0),)
        return ops.concat(out, axis)
    """,
    # a negative axis
    """
    @ms.jit
    def f(x):
        out = ()
        for i in range(x.shape[0]):
            out = out + (x[i].unsqueeze(-1),)
        return ops.concat(out, -1)
    """,
    # the tuple grows under a condition
    """
    @ms.jit
    def f(x):
        out = ()
        for i in range(x.shape[0]):
            if x.shape[1] > 2:
                out = out + (x[i].unsqueeze(0),)
        return ops.concat(out)
    """,
    # the tuple is read again after the concat
    """
    @ms.jit
    def f(x):
        out = ()
        for i in range(x.shape[0]):
            out = out + (x[i].unsqueeze(0),)
        y = ops.concat(out)
        return y, out
    """,
    # two elements added per iteration
    """
    @ms.jit
    def f(x):
        out = ()
        for i in range(x.shape[0]):
            out = out + (x[i].unsqueeze(0), x[i].unsqueeze(0))
        return ops.concat(out)
    """,
])
def test_tuple_rows_not_rewritten(code):
    assert_flagged_without_fix(code)


@pytest.mark.parametrize("code", [
    """
    @ms.jit
    def f(q, k):
        out = ()
        for i in range(q.shape[0]):
            out = out + (ops.matmul(k[i], q[i]).unsqueeze(0),)
        return ops.concat(out)
    """,
    """
    @ms.jit
    def f(q, k):
        return ops.stack([k[i] @ q[i] for i in range(q.shape[0])])
    """,
])
def test_a_product_of_two_mapped_operands_is_not_vmapped(code):
    """MindSpore 2.10's vmap gets matmul with a 1-D lane wrong (see test_loop_rewrites_mindspore.py)."""
    assert_flagged_without_fix(code)


SPLIT_HELPER = """
def _split(x):
    _, c, _, _ = ops.shape(x)
    return ops.Split(1, c)(x), c


def _split_config(x, parts):
    return ops.Split(1, parts)(x), parts


@ms.jit
def per_channel(img1, img2, parts):
    split1, c = _split(img1)
    split2, _ = _split(img2)
    out = ()
    for i in range(c):
        out += ((split1[i] * split2[i]).mean(),)
    chunks, n = _split_config(img1, 3)
    for i in range(n):
        out += (chunks[i].sum(),)
    return out
"""


def test_a_trip_count_returned_by_a_helper_from_a_shape_is_a_tensor_axis():
    """``split1, c = _split(img1)`` where the helper returns ``ops.shape(x)[1]`` as its second item; the
    look-alike helper returns a count its caller passed (3): not a shape, not flagged."""
    found = findings(SPLIT_HELPER)
    assert [f.line - HEADER.count("\n") for f in found] == [
        i for i, line in enumerate(textwrap.dedent(SPLIT_HELPER).splitlines(), 1) if "range(c)" in line]
    assert "ops.shape(x)[1]" in found[0].message
# -- the Tensor-counter rewrite of loop-carried loops (unsafe) ----------------------------------------------------
def _counter_fixed(body: str) -> str:
    outcome = fix(HEADER + textwrap.dedent(body), unsafe=True, select=["MSL101"])
    assert outcome.error is None
    again = fix(outcome.fixed, unsafe=True, select=["MSL101"])
    assert not again.changed, "fixing twice changed the code"
    assert not fix(HEADER + textwrap.dedent(body), unsafe=False, select=["MSL101"]).changed
    return outcome.fixed[len(HEADER):]


def test_a_carried_range_loop_becomes_a_tensor_counter_while():
    body = """
    @ms.jit
    def f(x, q):
        for i in range(x.shape[0] - 1, -1, -1):  # backwards
            q = q * 0.5 + x[i]
        return q
    """
    assert _counter_fixed(body) == textwrap.dedent("""
    @ms.jit
    def f(x, q):
        i = ms.Tensor(x.shape[0] - 1, ms.int32)
        while i > -1:  # backwards
            q = q * 0.5 + x[i]
            i = i - 1
        return q
    """)


@pytest.mark.parametrize("loop", [
    "outs = []\n    for t in range(x.shape[0]):\n        h = ops.tanh(x[t] + h)\n        outs.append(h * 2)\n"
    "    return ops.stack(outs, 1)",  # grows a list with a value that is not a plain name
    "for t in range(x.shape[0] - 1):\n        h = h + x[t + 1]\n    return h",  # the counter as a Python int
    "for t in range(x.shape[0]):\n        h = h + x[t : t + 1].sum()\n    return h",  # a slice bound
    "for t in range(x.shape[0]):\n        h = h + ops.rand_like(h) * x[t]\n    return h",  # random
    "for t in range(x.shape[0]):\n        h = h + x[t]\n        if t == 2:\n            break\n    return h",
    "for t in range(x.shape[0]):\n        h = h + x[t]\n    return h, t",  # read after the loop
    "for t in range(x.shape[0]):\n        h = ops.concat((h, x[t]))\n    return h",  # shape changes
])
def test_loops_a_real_while_cannot_run_keep_the_advice_only(loop):
    body = "@ms.jit\ndef f(x, h):\n    " + loop + "\n"
    found = findings(body)
    assert len(found) == 1 and found[0].fix is None, found


# -- loops that grow a list: the peeled-buffer rewrite (unsafe) --------------------------------------------------
# One step loop that grows a list, and what the peeled-buffer rewrite makes of it (the tests add what follows).
GROWN_STEPS = """
@ms.jit
def f(x, h{extra}):
    outs = []
    for t in range(x.shape[0]):
        h = ops.tanh(x[t] + h)
        outs.append(h)
"""
PEELED_STEPS = """
@ms.jit
def f(x, h{extra}):
    h = ops.tanh(x[0] + h)
    outs = ops.zeros((x.shape[0],) + h.shape, h.dtype)
    outs[0] = h
    t = ms.Tensor(1, ms.int32)
    while t < x.shape[0]:
        h = ops.tanh(x[t] + h)
        outs[t] = h
        t = t + 1
"""


@pytest.mark.parametrize("extra, after, fixed_after", [
    ("", "    return ops.stack(outs), h\n", "    return outs, h\n"),
    # qmix's learner: ``mask = 1 - done`` sits between the step loop and the stack; it neither reads nor binds the
    # list, so it stays where it is and the stack's call becomes the buffer
    (", done", "    mask = 1 - done\n    y = ops.stack(outs)[:, 1:]\n    return y * mask, h\n",
     "    mask = 1 - done\n    y = outs[:, 1:]\n    return y * mask, h\n"),
    # rows stacked on another axis: the buffer with its first axis moved there
    ("", "    return ops.stack(outs, -1)\n", "    return ops.moveaxis(outs, 0, -1)\n"),
    # ``outs = ops.stack(outs)[1:]``: the value is read before the name is bound, and later reads see the new
    # value, as they do after the fix
    ("", "    outs = ops.stack(outs)[1:]\n    return outs * 2\n", "    outs = outs[1:]\n    return outs * 2\n"),
])
def test_a_grown_list_becomes_a_buffer_after_a_peeled_first_step(extra, after, fixed_after):
    body = GROWN_STEPS.format(extra=extra) + after
    assert _counter_fixed(body) == PEELED_STEPS.format(extra=extra) + fixed_after


@pytest.mark.parametrize("code, why", [
    ("""
    from mindspore.ops import stack


    @ms.jit
    def f(x, h):
        outs = []
        for t in range(x.shape[0]):
            h = ops.tanh(x[t] + h)
            outs.append(h)
        stack = ops.concat
        return stack(outs)
    """, "a statement between the loop and the stack rebinds `stack`"),
    ("""
    @ms.jit
    def f(x, h):
        def more(v):
            outs.append(v)

        outs = []
        for t in range(x.shape[0]):
            h = ops.tanh(x[t] + h)
            outs.append(h)
        more(h)
        return ops.stack(outs)
    """, "a nested function or lambda reads `outs`"),
])
def test_a_list_reached_another_way_after_the_loop_keeps_the_advice(code, why):
    found = findings(code)
    assert len(found) == 1 and found[0].fix_object is None, found
    assert why in found[0].detail, found[0].detail


def test_a_python_int_while_with_a_slice_and_squeeze_and_a_constant_branch():
    """MindSpore's ``rnns.py`` shape: ``x[t:t + 1:1]`` + ``Squeeze(0)`` is ``x[t]``; an append in both branches of
    an ``if`` on a constant attribute."""
    body = """
    class Steps(nn.Cell):
        def __init__(self, mode):
            super().__init__()
            self.is_lstm = mode == "LSTM"

        def construct(self, x, h):
            time_step = x.shape[0]
            outputs = []
            t = 0
            while t < time_step:
                x_t = x[t:t + 1:1]
                x_t = ops.Squeeze(0)(x_t)
                h = self.cell(x_t, h)
                if self.is_lstm:
                    outputs.append(h[0])
                else:
                    outputs.append(h)
                t += 1
            outputs = ops.Stack()(outputs)
            return outputs, h
    """
    assert _counter_fixed(body) == textwrap.dedent("""
    class Steps(nn.Cell):
        def __init__(self, mode):
            super().__init__()
            self.is_lstm = mode == "LSTM"

        def construct(self, x, h):
            time_step = x.shape[0]
            t = ms.Tensor(1, ms.int32)
            x_t = x[0]
            h = self.cell(x_t, h)
            if self.is_lstm:
                outputs = ops.zeros((time_step,) + h[0].shape, h[0].dtype)
                outputs[0] = h[0]
            else:
                outputs = ops.zeros((time_step,) + h.shape, h.dtype)
                outputs[0] = h
            while t < time_step:
                x_t = x[t]
                h = self.cell(x_t, h)
                if self.is_lstm:
                    outputs[t] = h[0]
                else:
                    outputs[t] = h
                t = t + 1
            return outputs, h
    """)


GROWN = "outs = []\n    for t in range(x.shape[0]):\n{body}\n    {after}\n    return y"


@pytest.mark.parametrize("body, after, why", [
    ("        outs.append(h)\n        h = ops.tanh(x[t] + outs[-1])", "y = ops.stack(outs)",
     "the body reads `outs` while it grows"),
    ("        h = ops.tanh(x[t] + h)\n        outs.append(h * 2)", "y = ops.stack(outs)",
     "the appended value `h * 2` is not a plain name"),
    ("        h = ops.tanh(x[t] + h)\n        outs.append(h)\n        other.append(h)", "y = ops.stack(outs)",
     "the body grows several lists"),
    ("        h = ops.tanh(x[t] + h)\n        outs.append(h)", "y = ops.concat(outs)",
     "`outs` is not stacked by the first statement after the loop that uses it"),
    ("        h = ops.tanh(x[t] + h)\n        outs.append(h)", "n = len(outs)\n    y = ops.stack(outs)",
     "`outs` is not stacked by the first statement after the loop that uses it"),
    ("        h = ops.tanh(x[t] + h)\n        outs.append(h)",
     "for g in other:\n        outs = g\n        y = ops.stack(outs)",
     "the statement that stacks `outs` may bind it before it reads it"),
    ("        h = ops.tanh(x[t] + h)\n        outs.append(h)", "n = len(locals())\n    y = ops.stack(outs)",
     "a `locals`/`vars`/`eval`/`exec` call between the loop and the stack"),
    ("        h = ops.tanh(x[t] + h)\n        outs.append(h)", "y = ops.stack(outs)\n    z = outs",
     "`outs` is read again after it is stacked"),
    ("        h = ops.dropout(x[t] + h)\n        outs.append(h)", "y = ops.stack(outs)", "draws random numbers"),
    ("        h = ops.tanh(x[t] + h)\n        if t > 2:\n            break\n        outs.append(h)",
     "y = ops.stack(outs)", "the body has `break`"),
    ("        h = ops.tanh(x[t] + h) * t\n        outs.append(h)", "y = ops.stack(outs)",
     "uses `t` as a Python int"),
    ("        h = ops.tanh(x[t] + h)\n        if h.sum() > 0:\n            outs.append(h)\n        else:\n"
     "            outs.append(-h)", "y = ops.stack(outs)", "grows inside an `if` that is not an `if`/`else` on a "
     "compile-time constant"),
    ("        h = ops.expand_dims(h, 0) + x[t]\n        outs.append(h)", "y = ops.stack(outs)", "may change its shape"),
])
def test_a_grown_list_the_buffer_cannot_take_keeps_the_advice_with_its_reason(body, after, why):
    code = "@ms.jit\ndef f(x, h):\n    other = []\n    " + GROWN.format(body=body, after=after) + "\n"
    found = findings(code)
    assert len(found) == 1 and found[0].fix_object is None, found
    assert "no automatic rewrite: " in found[0].detail and why in found[0].detail, found[0].detail


def test_a_counter_starting_after_0_keeps_the_advice():
    """``range(1, n)`` stacks n - 1 rows: a buffer of n rows written at ``t`` would be wrong."""
    code = """
    @ms.jit
    def f(x, h):
        outs = []
        for t in range(1, x.shape[0]):
            h = ops.tanh(x[t] + h)
            outs.append(h)
        return ops.stack(outs)
    """
    found = findings(code)
    assert len(found) == 1 and found[0].fix_object is None, found
    assert "no automatic rewrite: the counter starts at 1, not 0" in found[0].detail


def test_a_carried_value_starting_as_none_is_peeled():
    """``hidden_state=None`` (a ConvGRU): the peeled first step makes it a Tensor before the ``while``."""
    body = """
    class ConvGRU(nn.Cell):
        def construct(self, x: ms.Tensor, hidden_state=None):
            outputs = []
            for step in range(len(x)):
                output, hidden_state = self.cell(x[step], hidden_state)
                outputs.append(output)
            output = ops.stack(outputs, 0)
            return output
    """
    fixed_text = _counter_fixed(body)
    assert "    output, hidden_state = self.cell(x[0], hidden_state)\n" \
           "        outputs = ops.zeros((len(x),) + output.shape, output.dtype)\n" in fixed_text
    assert "while step < len(x):" in fixed_text and "output = outputs\n" in fixed_text


def test_a_sequence_a_caller_passes_as_a_list_is_not_indexed_by_a_tensor_counter(tmp_path):
    """dgmr: ``construct(self, x: Tensor, ...)`` but the holder calls ``self.gru([h] * n, s)`` (measured: the
    rewrite then fails to compile, tests/test_rnn_buffer_mindspore.py)."""
    body = """
    class ConvGRU(nn.Cell):
        def construct(self, x: ms.Tensor, hidden_state=None):
            outputs = []
            for step in range(len(x)):
                output, hidden_state = self.cell(x[step], hidden_state)
                outputs.append(output)
            return ops.stack(outputs, 0)


    class Generator(nn.Cell):
        def __init__(self):
            super().__init__()
            self.gru = ConvGRU()

        def construct(self, h, s):
            states = [h] * 4
            return self.gru(states, s)
    """
    from ms_lint.config import Config
    from ms_lint.runner import check_files

    path = tmp_path / "gen.py"
    path.write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    found = check_files([str(path)], Config().with_overrides(select=["MSL101"]), use_cache=False)
    assert len(found) == 1 and found[0].fix is None, found
    assert "no automatic rewrite: a caller passes `x` a Python list (`states`)" in found[0].detail


def test_a_python_int_while_keeps_its_shape_and_rewrites_the_step():
    body = """
    @ms.jit
    def f(reward, value):
        out = ops.zeros_like(reward)
        step = reward.shape[0] - 1
        while step >= 0:
            value = reward[step] + 0.9 * value
            out[step] = value
            step -= 1
        return out
    """
    fixed_text = _counter_fixed(body)
    assert "step = ms.Tensor(reward.shape[0] - 1, ms.int32)" in fixed_text
    assert "step = step - 1" in fixed_text and "step -= 1" not in fixed_text


def test_the_counter_read_between_its_start_and_the_loop_is_not_rewritten():
    body = """
    @ms.jit
    def f(x, h):
        t = 0
        h = h + t
        while t < x.shape[0]:
            h = ops.tanh(x[t] + h)
            t += 1
        return h
    """
    found = findings(body)
    assert len(found) == 1 and found[0].fix is None


def test_a_loop_over_the_pieces_of_a_split_is_a_loop_over_a_tensor_axis():
    code = textwrap.dedent("""\
        from mindspore import nn, ops
        from mindspore.ops import operations as P


        class Overlap(nn.Cell):
            def __init__(self, degree=2):
                super().__init__()
                self.split = P.Split(axis=2, output_num=degree).shard(((1, 1, 1, 1),))
                self.parts = [degree]
                self.concat = P.Concat(2)

            def construct(self, x):
                out = []
                for piece in self.split(x):
                    out.append(ops.relu(piece))
                chunks = []
                for piece in ops.chunk(x, 4, axis=0):
                    chunks.append(piece * 2)
                for part in self.parts:
                    x = x * part
                return self.concat(out), ops.cat(chunks), x
        """)
    found = lint(code, select=["MSL101"])
    assert [(f.line, f.message.split(":")[0]) for f in found] == [
        (14, "loop over `self.split(x)`"), (17, "loop over `ops.chunk(x, 4, axis=0)`")]


# -- several lists grown in one body, each stacked after the loop ------------------------------------------------
def several(*lines: str, after=("a = ops.stack(a)", "b = ops.stack(b)"), tail="return a, b") -> str:
    body = "\n".join("        " + line for line in lines)
    stacks = "\n".join("    " + line for line in after)
    return f"""
@ms.jit
def f(x, y):
    a = []
    b = []
    for i in range(x.shape[0]):
{body}
{stacks}
    {tail}
"""


def detail(body: str) -> str:
    found = findings(body)
    assert len(found) == 1, found
    return found[0].detail


def test_two_lists_become_one_vmap_with_an_out_axis_each():
    out = assert_fixed(several("a.append(ops.relu(x[i]))", "b.append(x[i] * y[i])"))
    assert ("a, b = ms.vmap(lambda x_i, y_i: (ops.relu(x_i), x_i * y_i), in_axes=(0, 0), out_axes=(0, 0))(x, y)"
            in out)
    assert "a = []" not in out and "for " not in out and "ops.stack" not in out


def test_several_lists_with_a_shared_body_and_their_own_axes():
    out = assert_fixed(several("h = ops.relu(x[i])", "a.append(h)", "b.append(h * 2)",
                               after=("b = ops.stack(b, 1)", "a = ops.stack(a, 0)")))
    assert "def _b_item(x_i):\n        h = ops.relu(x_i)\n        return h * 2, h\n" in out
    assert "b, a = ms.vmap(_b_item, in_axes=0, out_axes=(1, 0))(x)" in out


def test_several_tuples_concatenated_from_unsqueezed_rows():
    code = """
@ms.jit
def f(x):
    a = ()
    b = ()
    for i in range(x.shape[0]):
        a += (x[i].sum().unsqueeze(0),)
        b = b + (x[i].max().unsqueeze(0),)
    sums = ops.concat(a)
    maxes = ops.concat(b)
    return sums, maxes
"""
    out = assert_fixed(code)
    assert "sums, maxes = ms.vmap(lambda x_i: (x_i.sum(), x_i.max()), in_axes=0, out_axes=(0, 0))(x)" in out


@pytest.mark.parametrize("lines, after, tail, why", [
    # a statement between the stacks
    (("a.append(x[i])", "b.append(x[i] * 2)"), ("a = ops.stack(a)", "y = y * 2", "b = ops.stack(b)"),
     "return a, b, y", "are not each `name = ops.stack(acc, axis)`"),
    # one list stacked, the other returned as a list
    (("a.append(x[i])", "b.append(x[i] * 2)"), ("a = ops.stack(a)",), "return a, b",
     "are not each `name = ops.stack(acc, axis)`"),
    # the same list stacked twice
    (("a.append(x[i])", "b.append(x[i] * 2)"), ("a = ops.stack(a)", "c = ops.stack(a)"), "return a, c",
     "do not stack each once"),
    # a value that does not depend on the slice
    (("a.append(x[i])", "b.append(y)"), ("a = ops.stack(a)", "b = ops.stack(b)"), "return a, b",
     "stacks into `b` values that do not depend on the slice"),
    # the first stack's result is read by the second
    (("a.append(x[i])", "b.append(x[i] * 2)"), ("c = ops.stack(a)", "a = ops.stack(b) + c"), "return a",
     "are not each `name = ops.stack(acc, axis)`"),
    # a list read again after the loop
    (("a.append(x[i])", "b.append(x[i] * 2)"), ("c = ops.stack(a)", "d = ops.stack(b)"), "return c, d, a",
     "later code reads again"),
    # the stacked result overwrites a list the next statement stacks
    (("a.append(x[i])", "b.append(x[i] * 2)"), ("b = ops.stack(a)", "a = ops.stack(b)"), "return a, b",
     "which a later stacking statement reads"),
    # a random op
    (("a.append(ops.dropout(x[i]))", "b.append(x[i] * 2)"), ("a = ops.stack(a)", "b = ops.stack(b)"),
     "return a, b", "not provably free of effects"),
])
def test_several_lists_look_alikes_keep_no_fix(lines, after, tail, why):
    code = several(*lines, after=after, tail=tail)
    assert_flagged_without_fix(code)
    assert "no automatic rewrite: the body" in detail(code) and why in detail(code)


def test_a_list_read_while_another_grows_is_loop_carried():
    code = several("b.append(x[i] + a[-1])", "a.append(x[i])")
    found = findings(code)
    assert len(found) == 1 and found[0].fix_object is None and "carries" in found[0].message


def test_the_same_list_appended_twice_keeps_no_fix():
    code = several("a.append(x[i])", "a.append(x[i] * 2)", after=("a = ops.stack(a)",), tail="return a")
    assert_flagged_without_fix(code)


# -- why no rewrite: the detail names it (benchmarks/realcode.py reads it) ---------------------------------------
@pytest.mark.parametrize("code, why", [
    (loop("if y is None:", "    z = x[i]", "else:", "    z = x[i] * y", "out.append(z)"),
     "holds an `if`; the rewrite moves only plain assignments"),
    (loop("z = x[i]", "for w in (1, 2):", "    z = z * w", "out.append(z)"), "holds a `for` loop"),
    (loop("out.append(x[i] + i)"), "uses `i` other than as the whole index of one axis"),
    (loop("out.append(y[i] * 2)"), "runs to `x.shape[0]` but slices `y` by `i`, whose length along that axis is not "
                                   "known to be the trip count"),
    ("""
@ms.jit
def f(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] * 2)
    y = out
    return ops.stack(y)
""", "the next statement does not stack or concatenate it"),
    ("""
@ms.jit
def f(x):
    rows = [ops.relu(x[i]) for i in range(x.shape[0])]
    return rows
""", "the comprehension is kept as a Python list or tuple"),
])
def test_the_detail_says_why_no_rewrite(code, why):
    text = detail(code)
    assert "no automatic rewrite: " in text and why in text, text


def test_several_lists_stacked_by_the_cells_primitive_over_unstacked_rows():
    code = """
class Heads(nn.Cell):
    def __init__(self):
        super().__init__()
        self.stack = ops.Stack(1)

    def construct(self, x):
        mins = []
        maxes = []
        for row in ops.unstack(x):
            mins.append(row.min(0))
            maxes.append(row.max(0))
        lo = self.stack(mins)
        hi = self.stack(maxes)
        return lo, hi
"""
    out = assert_fixed(code)
    assert "lo, hi = ms.vmap(lambda row: (row.min(0), row.max(0)), in_axes=0, out_axes=(1, 1))(x)" in out


# -- a loop that only sums per-slice terms: vmap + .sum(axis=0), unsafe ---------------------------------------
SUM = """
@ms.jit
def f(x, y):
    total = 0
    for i in range(x.shape[0]):
{body}
    return total
"""


def summing(*lines: str) -> str:
    return SUM.format(body="\n".join("        " + line for line in lines))


def test_summed_terms_become_vmap_and_sum_unsafe():
    code = summing("d = x[i] - y", "total += (d * d).mean()")
    found = findings(code)
    assert len(found) == 1 and found[0].fix["applicability"] == "unsafe"
    out = fixed(code)
    assert not out.changed
    out = fix(HEADER + textwrap.dedent(code), select=["MSL101"], unsafe=True)
    assert out.changed and out.error is None
    cst.parse_module(out.fixed)
    assert ("    def _total_term(x_i):\n        d = x_i - y\n        return (d * d).mean()\n"
            "    total = ms.vmap(_total_term, in_axes=0, out_axes=0)(x).sum(axis=0)\n    return total\n") in out.fixed
    assert not fix(out.fixed, select=["MSL101"], unsafe=True).changed  # idempotent


@pytest.mark.parametrize("lines, start", [
    (("total += x[i].sum() * total",), "0"),  # the total read in the term: loop-carried, not a sum
    (("total += ops.dropout(x[i], p=0.5).sum()",), "0"),  # random: every lane would get the same mask
    (("total += x[i].sum()",), "y"),  # does not start at 0
    (("total += x[i].sum()",), "1"),
])
def test_summed_look_alikes_get_no_vmap_sum(lines, start):
    code = summing(*lines).replace("total = 0", f"total = {start}")
    found = findings(code)
    assert len(found) == 1
    assert found[0].fix is None or "sum(axis=0)" not in found[0].fix["message"]


def test_a_sum_that_leaves_its_temporary_behind_gets_no_vmap_sum():
    code = SUM.format(body="        d = x[i] * 2\n        total += d.sum()")
    code = code.replace("return total", "return total + d")
    found = findings(code)
    assert len(found) == 1
    assert found[0].fix is None or "sum(axis=0)" not in found[0].fix["message"]


@pytest.mark.parametrize("call, fixed_ok", [
    ("ops.binary_cross_entropy_with_logits(x[i], y[i])", False),
    ("ops.binary_cross_entropy_with_logits(x[i], y[i], None, None)", False),
    ("ops.binary_cross_entropy_with_logits(x[i], y[i], weight=w)", False),
    ("ops.binary_cross_entropy_with_logits(x[i], y[i], w, w)", True),
    ("ops.binary_cross_entropy_with_logits(x[i], y[i], weight=w, pos_weight=w)", True),
])
def test_bce_with_logits_is_mapped_only_with_both_weights(call, fixed_ok):
    """MindSpore 2.10's vmap rule for it fails with weight or pos_weight None (tests/test_loop_rewrites_mindspore.py
    measures it)."""
    code = f"""
@ms.jit
def f(x, y, w):
    out = []
    for i in range(x.shape[0]):
        out.append({call})
    return ops.stack(out)
"""
    if fixed_ok:
        assert_fixed(code)
    else:
        assert_flagged_without_fix(code)
        assert "calls `binary_cross_entropy_with_logits` without weight and pos_weight" in detail(code)


def test_a_total_starting_as_a_python_number_gets_no_tensor_counter():
    """A real loop's state must keep one type: ``total = 0`` then ``total += tensor`` fails to compile as a
    Tensor-counter `while` in MindSpore 2.10 (measured in tests/test_loop_rewrites_mindspore.py)."""
    code = summing("total += ops.binary_cross_entropy_with_logits(x[i], y[i])")
    assert_flagged_without_fix(code)
    text = detail(code)
    assert "`total` enters the loop as the Python number `0`" in text
    assert "no automatic rewrite: the body calls `binary_cross_entropy_with_logits` without weight" in text


def test_no_spelling_for_vmap_is_named_as_the_reason():
    code = """
from mindspore import jit
from mindspore.ops import stack

vmap = {"rows": 0}  # the file binds the name: a new import of it would shadow it


@jit
def f(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] * 2)
    return stack(out)
"""
    found = [f for f in lint(textwrap.dedent(code), select=["MSL101"])]
    assert len(found) == 1 and found[0].fix_object is None
    assert "no automatic rewrite: the body is in a file where ms-lint finds no safe spelling" in found[0].detail


# -- rows of a batch-preserving sub-cell's output: `q = self.conv(x)` has x.shape[0] rows ------------------------
def _conv_cell(init: str, construct: str) -> str:
    return (
        "class Attn(nn.Cell):\n"
        "    def __init__(self, query_cell=None):\n"
        "        super().__init__()\n"
        "        self.key = nn.Conv2d(4, 4, 1)\n"
        f"        {init}\n"
        "\n"
        "    def construct(self, x):\n"
        + textwrap.indent(textwrap.dedent(construct).strip("\n"), "        ") + "\n"
    )


ROWS_LOOP = """
query = self.query(x)
key = self.key(x)
out = []
for b in range(x.shape[0]):
    out.append(query[b] * key[b])
return ops.stack(out, 0)
"""


@pytest.mark.parametrize("cell", ["nn.Conv2d(4, 4, 1)", "nn.Conv1d(4, 4, 1)", "nn.ReLU()", "nn.BatchNorm2d(4)",
                                  "nn.Softmax(axis=1)"])
def test_slices_of_a_batch_preserving_sub_cell_output_are_mapped(cell):
    out = assert_fixed(_conv_cell(f"self.query = {cell}", ROWS_LOOP))
    assert "in_axes=(0, 0), out_axes=0)(query, key)" in out


def test_rows_of_the_trip_tensor_and_of_its_convolution_together():
    out = assert_fixed(_conv_cell("self.query = nn.Conv2d(4, 4, 1)", """
        query = self.query(x)
        out = []
        for b in range(x.shape[0]):
            out.append(query[b] + x[b])
        return ops.stack(out, 0)
    """))
    assert "(query, x)" in out


@pytest.mark.parametrize("init, construct", [
    # Dense keeps axis 0 only for a batched input: a 1-D x gives out_channels rows
    ("self.query = nn.Dense(4, 4)", ROWS_LOOP),
    # a cell that is not a known MindSpore one (handed in), or a project cell that moves axes
    ("self.query = query_cell", ROWS_LOOP),
    ("self.query = ops.Transpose()", ROWS_LOOP),
    # the argument is not the trip tensor
    ("self.query = nn.Conv2d(4, 4, 1)", ROWS_LOOP.replace("query = self.query(x)", "query = self.query(x * 2)")),
    ("self.query = nn.Conv2d(4, 4, 1)", ROWS_LOOP.replace("query = self.query(x)", "query = self.query(key)")),
    # bound twice, or x rebound between the convolution and the loop
    ("self.query = nn.Conv2d(4, 4, 1)", ROWS_LOOP.replace("key = self.key(x)", "key = self.key(x)\nquery = query.T")),
    ("self.query = nn.Conv2d(4, 4, 1)", ROWS_LOOP.replace("key = self.key(x)", "key = self.key(x)\nx = x.T")),
    # a row axis other than 0 (the trip count is x.shape[1])
    ("self.query = nn.Conv2d(4, 4, 1)", """
        query = self.query(x)
        key = self.key(x)
        out = []
        for b in range(x.shape[1]):
            out.append(query[:, b] * key[:, b])
        return ops.stack(out, 1)
    """),
    # sliced on axis 1 while the trip count is axis 0
    ("self.query = nn.Conv2d(4, 4, 1)", ROWS_LOOP.replace("query[b] * key[b]", "query[:, b] * key[:, b]")),
])
def test_rows_not_proven_keep_no_fix(init, construct):
    assert_flagged_without_fix(_conv_cell(init, construct))


def test_the_binding_must_precede_the_loop_in_its_block():
    assert_flagged_without_fix(_conv_cell("self.query = nn.Conv2d(4, 4, 1)", """
        if x.shape[0] > 1:
            query = self.query(x)
        else:
            query = x
        key = self.key(x)
        out = []
        for b in range(x.shape[0]):
            out.append(query[b] * key[b])
        return ops.stack(out, 0)
    """))


def test_a_batched_product_of_two_mapped_operands_is_vmapped():
    """ops.bmm rejects a 1-D operand itself, so the 1-D lane hazard of matmul cannot arise."""
    out = assert_fixed("""
    @ms.jit
    def f(q, k):
        return ops.stack([ops.bmm(q[i], k[i]) for i in range(q.shape[0])])
    """.replace("range(q.shape[0])", "range(q.shape[0])"))
    assert "ops.bmm(" in out and "ms.vmap" in out
    assert_flagged_without_fix("""
    @ms.jit
    def f(q, k):
        return ops.stack([ops.mm(q[i], k[i]) for i in range(q.shape[0])])
    """)


# -- a carried tuple rebuilt with its own structure (variable_recurrent's LSTM state) ----------------------------------
TUPLE_STEPS = '''
import mindspore as ms
from mindspore import nn, ops


class Steps(nn.Cell):
    def __init__(self):
        super().__init__()
        self.is_lstm = True

    def construct(self, x, state, lengths):
        outs = []
        t = 0
        while t < x.shape[0]:
            new = ops.tanh(x[t] + state[0])
            alive = lengths > t
            if self.is_lstm:
                h_t = ops.select(alive, new, state[0])
                c_t = ops.select(alive, new * state[1], state[1])
                {rebuild}
            else:
                state = ops.select(alive, new, state)
            outs.append(h_t)
            t += 1
        return ops.stack(outs), state
'''


def test_a_tuple_rebuilt_with_the_carried_structure_gets_the_peeled_fix():
    outcome = fix(TUPLE_STEPS.replace("{rebuild}", "state = (h_t, c_t)"), unsafe=True, select=["MSL101"])
    assert outcome.changed and "outs[t] = h_t" in outcome.fixed and "alive = lengths > 0" in outcome.fixed


@pytest.mark.parametrize("rebuild", [
    "state = [h_t, c_t]",                # a list
    "state = (h_t, c_t, h_t)",           # longer than the carried pair (read as state[0], state[1])
    "state = state + (h_t,)",            # a growing tuple
    "state = (state, h_t)",              # nests the carried value
    "state = (h_t, (c_t, h_t))",         # an element that is not a Tensor
])
def test_a_tuple_that_changes_the_carried_structure_is_still_refused(rebuild):
    outcome = fix(TUPLE_STEPS.replace("{rebuild}", rebuild), unsafe=True, select=["MSL101"])
    assert not outcome.changed, rebuild


def test_a_rebuilt_tuple_beside_a_tensor_under_a_runtime_condition_is_refused():
    """The tuple and the Tensor binding must sit in the two branches of an ``if self.flag:``."""
    source = TUPLE_STEPS.replace("{rebuild}", "state = (h_t, c_t)").replace("if self.is_lstm:", "if x.sum() > 0:")
    assert not fix(source, unsafe=True, select=["MSL101"]).changed


def test_a_tuple_appended_per_step_is_still_refused():
    source = TUPLE_STEPS.replace("{rebuild}", "state = (h_t, c_t)").replace("outs.append(h_t)",
                                                                           "outs.append((h_t, c_t))")
    assert not fix(source, unsafe=True, select=["MSL101"]).changed


@pytest.mark.parametrize("body", [
    """
    @ms.jit
    def scaled_rows(x):
        table = (1.0, 2.0, 3.0)
        out = []
        for i in range(x.shape[0]):
            out.append(ops.exp(x[i]) * table[0])
        y = ops.stack(out)
        table = ops.exp(y)
        return table
    """,
    """
    @ms.jit
    def scaled_rows(x):
        table = (1.0, 2.0, 3.0)
        y = ops.stack([ops.exp(x[i]) * table[0] for i in range(x.shape[0])])
        table = ops.exp(y)
        return table
    """,
    """
    @ms.jit
    def summed_rows(x):
        scale = (2.0, 3.0)
        total = 0
        for i in range(x.shape[0]):
            total += ops.exp(x[i]) * scale[1]
        scale = ops.exp(total)
        return scale
    """,
], ids=["append", "comprehension", "sum"])
def test_vmap_check_reads_kinds_joined_over_the_function(body):
    """A name the mapped body indexes that the function later rebinds to a Tensor is a Tensor to the vmap check
    (the join over the function), though a Python tuple where the loop runs: no fix, as always. The substituted
    body shares the loop's nodes (``walk.replace_nodes``); the check reads a copy, so those nodes' reaching
    bindings do not answer instead (an independent review found fixes offered here when it did not)."""
    assert_flagged_without_fix(body)


# -- a helper's parameter a graph caller fills with one Tensor (mindyolo's make_anchors): flagged, never fixed ------
ANCHORS = """\
    class Head(nn.Cell):
        def __init__(self, strides=(8, 16, 32)):
            super().__init__()
            self.stride = {stride}

        @staticmethod
        def make_anchors(feats, strides, offset=0.5):
            points = ()
            for i, stride in enumerate(strides):
                _, _, h, w = feats[i].shape
                points += (ops.ones((h * w, 1), ms.float32) * stride,)
            return ops.concat(points)

        def construct(self, feats):
            {call}
    """
PARAMETER = "ms.Parameter(ms.Tensor(strides, ms.int32), requires_grad=False)"


@pytest.mark.parametrize("call", [
    "return self.make_anchors(feats, self.stride, 0.5)",
    "return self.make_anchors(feats, strides=self.stride)",
    "return self.make_anchors(feats, ops.cast(self.stride, ms.float32))",
    # an independent review's reproducer: an alias ms-lint does not read passes a tuple; the finding stays true
    # for the call that passes the Parameter, and no fix can break the other
    "anchors = self.make_anchors\n            return self.make_anchors(feats, self.stride) + anchors(feats, (8, 16))",
])
def test_a_helper_parameter_a_graph_caller_fills_with_one_tensor_is_flagged_without_a_fix(call):
    body = ANCHORS.format(stride=PARAMETER, call=call)
    assert flagged_lines(body) == [9]
    assert_flagged_without_fix(body)
    detail = findings(body)[0].detail
    assert "no automatic rewrite: it walks a Tensor as `construct` passes it (`self.make_anchors(feats, " in detail
    assert "may pass a tuple" in detail


@pytest.mark.parametrize("stride, call", [
    ("strides", "return self.make_anchors(feats, self.stride)"),  # a tuple of ints
    ("list(strides)", "return self.make_anchors(feats, self.stride)"),
    ("ops.stack(strides) if strides else strides", "return self.make_anchors(feats, self.stride)"),
    (PARAMETER, "return self.make_anchors(feats, (8, 16, 32))"),  # the attribute is never passed
    (PARAMETER, "return self.make_anchors(feats, *self.pair)"),  # unpacked: which parameter gets what is unknown
    (PARAMETER, "return self.make_anchors(feats, feats)"),  # a bare construct argument: often a tuple
])
def test_a_helper_parameter_no_caller_surely_fills_with_a_tensor_is_not_flagged(stride, call):
    assert flagged_lines(ANCHORS.format(stride=stride, call=call)) == []


# An independent review's reproducers: the attribute or the argument is not one Tensor after all.
ATTRIBUTE_NOT_ALWAYS_A_TENSOR = {
    "a subclass rebinds it": ANCHORS.format(stride=PARAMETER, call="return self.make_anchors(feats, self.stride)")
    + "\n    class Tuned(Head):\n        def __init__(self):\n            super().__init__()\n"
      "            self.stride = (8, 16)\n",
    "another class writes it": ANCHORS.format(stride=PARAMETER, call="return self.make_anchors(feats, self.stride)")
    + "\n    class Model(nn.Cell):\n        def __init__(self):\n            super().__init__()\n"
      "            self.head = Head()\n            self.head.stride = (8, 16)\n",
    "a class attribute stands in": ANCHORS.format(stride=PARAMETER, call="return self.make_anchors(feats, self.stride)")
    .replace("    class Head(nn.Cell):\n", "    class Head(nn.Cell):\n        stride = (8, 16)\n\n")
    .replace("            self.stride = ms.Parameter", "            if strides:\n                self.stride = ms.Parameter"),
    "set only under an if": ANCHORS.format(stride=PARAMETER, call="return self.make_anchors(feats, self.stride)")
    .replace("            self.stride = ms.Parameter", "            if strides:\n                self.stride = ms.Parameter"),
}


@pytest.mark.parametrize("case", sorted(ATTRIBUTE_NOT_ALWAYS_A_TENSOR))
def test_a_parameter_attribute_some_instance_may_hold_as_a_tuple_is_no_evidence(case):
    body = ATTRIBUTE_NOT_ALWAYS_A_TENSOR[case]
    assert flagged_lines(body) == []


def test_a_subclass_that_keeps_the_parameter_attribute_keeps_the_evidence():
    """mindyolo's ``YOLOv8SegHead(YOLOv8Head)`` calls ``super().__init__`` and never rebinds ``self.stride``."""
    body = ANCHORS.format(stride=PARAMETER, call="return self.make_anchors(feats, self.stride)") + \
        "\n    class SegHead(Head):\n        def __init__(self):\n            super().__init__()\n" \
        "            self.masks = 32\n"
    assert flagged_lines(body) == [9]


@pytest.mark.parametrize("call", [
    # the comprehension's target, not construct's Tensor of the same name, is what the call passes
    "pair = ops.ones((2,), ms.float32)\n            return [self.make_anchors(feats, pair) for pair in ((8, 16),)]",
    # a def in construct with its own parameter of that name
    "pair = ops.ones((2,), ms.float32)\n            def run(pair):\n                return self.make_anchors(feats, pair)"
    "\n            return run((8, 16))",
])
def test_a_call_in_an_inner_scope_of_the_caller_is_no_evidence(call):
    assert flagged_lines(ANCHORS.format(stride="strides", call=call)) == []


def test_a_keyword_that_lands_in_kwargs_is_no_evidence():
    body = ANCHORS.format(stride=PARAMETER, call="return self.make_anchors(feats, strides=self.stride)").replace(
        "def make_anchors(feats, strides, offset=0.5):", "def make_anchors(feats, offset=0.5, **strides):")
    assert flagged_lines(body) == []


def test_a_comprehension_over_a_target_of_an_outer_comprehension_is_not_read_as_the_local():
    """``scales`` inside the outer comprehension is its target (a tuple of ints), not the local Tensor."""
    body = """\
        class Neck(nn.Cell):
            def __init__(self):
                super().__init__()
                self.levels = ((1, 2), (2, 4))

            def construct(self, x):
                scales = ops.ones((2,), ms.float32)
                x = x * scales[0]
                return [[x * s for s in scales] for scales in self.levels]
        """
    assert flagged_lines(body) == []
    assert flagged_lines(body.replace("for scales in self.levels", "for level in self.levels")) == [9]


def test_a_helper_parameter_rebound_in_the_helper_is_not_flagged_on_what_callers_pass():
    body = ANCHORS.format(stride=PARAMETER, call="return self.make_anchors(feats, self.stride)").replace(
        "            points = ()\n", "            points = ()\n            strides = tuple(strides.asnumpy())\n")
    assert "strides = tuple(" in body
    assert flagged_lines(body) == []


def test_a_comprehension_over_such_a_parameter_is_flagged_without_a_fix():
    body = """\
        class Head(nn.Cell):
            def __init__(self):
                super().__init__()
                self.scale = ms.Parameter(ms.Tensor([1.0, 2.0, 4.0]), requires_grad=False)

            def scaled(self, x, scales):
                return ops.stack([x * s for s in scales])

            def construct(self, x):
                return self.scaled(x, self.scale)
        """
    assert flagged_lines(body) == [7]
    assert_flagged_without_fix(body)


# -- ``while begin + width < C`` (mindcv's EdgeNeXt ``ssplit``) ---------------------------------------------------
SSPLIT = """\
    import math


    class Encoder(nn.Cell):
        def __init__(self, dim=64, scales=3):
            super().__init__()
            self.width = max(int(math.ceil(dim / scales)), int(math.floor(dim // scales)))

        def ssplit(self, x, width):
            B, C, H, W = x.shape
            begin = 0
            temp = []
            while begin + width < C:
                temp.append(x[:, begin: begin + width, :, :])
                begin += {step}
            temp.append(x[:, begin:, :, :])
            return temp

        def construct(self, x):
            return ops.concat(self.ssplit(x, self.width), axis=1)
    """


def test_a_python_int_while_that_steps_by_a_compile_time_width_up_to_a_shape_is_flagged_without_a_fix():
    """``width`` is ``int(math.ceil(...))`` of ``__init__`` (Python): ``begin`` stays an int, and the loop runs once
    per channel chunk of ``x``. The step is no literal, so there is no trip count and no rewrite."""
    found = findings(SSPLIT.format(step="width"))
    assert [(f.line - HEADER.count("\n"), f.fix_object) for f in found] == [(13, None)]
    assert "`while` on int `begin` up to `C`" in found[0].message
    assert not [f for f in lint(HEADER + textwrap.dedent(SSPLIT.format(step="width")), select=["MSL103"])]


@pytest.mark.parametrize("step", ["ops.reduce_sum(x).astype(ms.int32)", "self.offsets[0]"])
def test_a_while_whose_step_is_a_tensor_or_unknown_is_not_flagged_by_the_width_form(step):
    """A Tensor step makes ``begin`` a Tensor (a real loop); a step the value model cannot tell (an attribute
    never assigned here) may be one."""
    assert findings(SSPLIT.format(step=step)) == []


def test_init_arithmetic_through_int_and_math_is_a_python_number():
    """``self.width = max(int(math.ceil(dim / scales)), ...)`` in ``__init__`` is a Python int, not unknown."""
    from ms_lint.config import Config
    from ms_lint.context import ModuleContext
    from ms_lint.analysis.values import Kind

    module = cst.parse_module(HEADER + textwrap.dedent(SSPLIT.format(step="width")))
    context = ModuleContext(module, module.code, "m.py", Config())
    assert context.attributes.kind("Encoder", "width") is Kind.CONST


# -- a comprehension that calls one cell per step (mindnlp's MusicGen embeds each codebook with its own cell) ------
def test_a_comprehension_that_calls_a_cell_by_its_index_is_a_cell_loop():
    body = """\
        class Embed(nn.Cell):
            def __init__(self, books=4):
                super().__init__()
                self.embed_tokens = nn.CellList([nn.Embedding(16, 8) for _ in range(books)])

            def construct(self, codes):
                return sum(self.embed_tokens[k](codes[:, k]) for k in range(codes.shape[1]))
        """
    assert flagged_lines(body) == []
    assert flagged_lines(body.replace("self.embed_tokens[k](codes[:, k])", "ops.relu(codes[:, k])")) == [7]


def test_a_zip_with_a_cell_list_is_a_layer_stack_whatever_the_other_sequences_are():
    """mindone's and mindnlp's SegFormer decode head: ``zip(encoder_hidden_states, self.linear_c)`` pairs per-stage
    features (annotated ``Tensor``, passed a tuple) with one cell each; the adapter's ``zip(xs, weights,
    self.adapters)`` too. One cell per step: unrolled by the cells, as ``self.blocks[i](x)`` is."""
    body = """\
        class DecodeHead(nn.Cell):
            def __init__(self, stages=4):
                super().__init__()
                self.linear_c = nn.CellList([nn.Dense(8, 8) for _ in range(stages)])

            def construct(self, encoder_hidden_states: ms.Tensor, weights: ms.Tensor):
                outs = ()
                for state, w, mlp in zip(encoder_hidden_states, ops.relu(weights), self.linear_c):
                    outs += (mlp(state) * w,)
                return outs
        """
    assert flagged_lines(body) == []
    without_cells = body.replace(", self.linear_c)", ")").replace("mlp(state)", "state").replace("w, mlp in", "w in")
    assert flagged_lines(without_cells) == [8]


@pytest.mark.parametrize("annotation", ["Optional[ms.Tensor] = None", "ms.Tensor | None = None"])
def test_an_optional_tensor_argument_iterated_or_ranged_by_its_shape_is_a_tensor(annotation):
    body = f"""\
        from typing import Optional


        class Rows(nn.Cell):
            def construct(self, x: {annotation}):
                out = []
                for row in x:
                    out.append(ops.relu(row))
                for i in range(x.shape[0]):
                    out.append(ops.relu(x[i]))
                return out
        """
    assert flagged_lines(body) == [7, 9]
    assert flagged_lines(body.replace(annotation, "Optional[int] = None")) == []


def test_a_comprehension_under_an_isinstance_list_test_walks_the_list():
    """mindone's and mindnlp's BLIP: ``if isinstance(mask, list): [self.invert(m) for m in mask]`` runs only for a
    Python list of masks, whatever the ``Optional[Tensor]`` annotation says; the ``else`` branch takes the Tensor."""
    body = """\
        from typing import Optional


        class Text(nn.Cell):
            def construct(self, x, mask: Optional[ms.Tensor] = None):
                if isinstance(mask, list):
                    masks = [ops.relu(m) for m in mask]
                else:
                    masks = [ops.relu(m) for m in mask]
                return masks
        """
    assert flagged_lines(body) == [9]


@pytest.mark.parametrize("guarded", [
    "if isinstance(mask, list):\n    out = [ops.relu(mask[i]) for i in range(len(mask))]",
    "if isinstance(mask, (list, tuple)):\n    out = [ops.relu(m) * e for m, e in zip(mask, enc)]",
    "if type(mask) is list:\n    out = [ops.relu(m) for m in mask]",
    "if isinstance(mask, List):\n    out = [ops.relu(m) for m in mask]",
    "if isinstance(mask, ms.Tensor):\n    return x * mask\nelse:\n    out = [ops.relu(m) for m in mask]",
    "if not isinstance(mask, list):\n    return x * mask\nout = [ops.relu(m) for m in mask]",
    "out = [ops.relu(m) for m in mask] if isinstance(mask, list) else ops.relu(mask)",
])
def test_an_optional_tensor_argument_that_a_type_test_proves_a_list_is_walked_as_one(guarded):
    """An independent review's reproducers: ``isinstance``/``type`` tests hold in the ``if`` body, the ``else``
    of a Tensor test, after an early ``return`` and in a conditional expression (graph mode folds them)."""
    body = ("from typing import List, Optional\n\n\n"
            "class Net(nn.Cell):\n"
            "    def construct(self, x, mask: Optional[ms.Tensor] = None, enc: Optional[ms.Tensor] = None):\n"
            "        out = x\n"
            + textwrap.indent(guarded, " " * 8) + "\n"
            "        return out\n")
    assert flagged_lines(body) == []
    assert flagged_lines(body.replace("isinstance(mask,", "isinstance(x,").replace("type(mask)", "type(x)")) != []


@pytest.mark.parametrize("annotation", ["feats: Optional[ms.Tensor] = ()", "*feats: ms.Tensor"])
def test_a_default_or_a_star_that_says_tuple_beats_the_tensor_annotation(annotation):
    body = f"""\
        from typing import Optional


        class Net(nn.Cell):
            def construct(self, x, {annotation}):
                out = ()
                for f in feats:
                    out += (ops.relu(f),)
                return out
        """
    assert flagged_lines(body) == []


def test_an_expert_picked_by_a_value_per_row_is_no_cell_per_step():
    """A per-token MoE dispatch: ``self.experts[int(top[k])](x[k])`` runs once per row of ``x``, not per cell."""
    body = """\
        class MoE(nn.Cell):
            def __init__(self):
                super().__init__()
                self.experts = nn.CellList([nn.Dense(4, 4) for _ in range(4)])

            def construct(self, x, top):
                return [self.experts[int(top[k])](x[k:k + 1]) for k in range(x.shape[0])]
        """
    assert flagged_lines(body) == [7]


# -- a Cell's parameter that the Cell holding it fills with one Tensor (mindaudio's LengthRegulator) ---------------
REGULATOR = """\
    class Regulator(nn.Cell):
        def expand(self, x, duration):
            out = ()
            for row, times in zip(x, duration):
                out += (ops.repeat_elements(row, 2, 0) * times,)
            return out

        def construct(self, x, duration):
            {inner}


    class Adaptor(nn.Cell):
        def __init__(self):
            super().__init__()
            self.regulator = Regulator()

        def construct(self, h, log_duration, target=None):
            {outer}
    """


@pytest.mark.parametrize("inner, outer", [
    # the holder's argument is an op's result, the Cell passes its own parameter on to a helper
    ("return self.expand(x, duration)", "return self.regulator(h, ops.round(ops.exp(log_duration)))"),
    ("return self.expand(x, duration)", "return self.regulator(h, duration=ops.exp(log_duration))"),
    # a name whose binding that reaches the call is an op's result, whatever the other branch binds
    ("return self.expand(x, duration)",
     "if target is not None:\n                d = target\n                return self.regulator(h, target)\n"
     "            d = ops.round(log_duration)\n            return self.regulator(h, d)"),
])
def test_a_cell_parameter_its_holder_fills_with_one_tensor_is_flagged_without_a_fix(inner, outer):
    body = REGULATOR.format(inner=inner, outer=outer)
    assert flagged_lines(body) == [4]
    assert_flagged_without_fix(body)
    assert "it walks a Tensor as `construct` passes it (`self.regulator(h, " in findings(body)[0].detail


def test_a_loop_in_construct_over_its_own_parameter_that_the_holder_fills_with_one_tensor_is_flagged():
    body = REGULATOR.format(inner="return ops.stack([ops.exp(row) for row in duration])",
                            outer="return self.regulator(h, ops.exp(log_duration))")
    assert flagged_lines(body) == [9]
    assert_flagged_without_fix(body)


@pytest.mark.parametrize("inner, outer", [
    ("return self.expand(x, duration)", "return self.regulator(h, log_duration)"),  # a bare argument: maybe a tuple
    ("return self.expand(x, duration)", "return self.regulator(h, (log_duration, log_duration))"),
    ("return self.expand(x, duration)", "return self.regulator(h, *ops.split(log_duration, 1))"),
    # the binding that reaches the call is the bare argument
    ("return self.expand(x, duration)",
     "d = log_duration\n            if target is not None:\n                d = ops.round(target)\n"
     "            return self.regulator(h, d)"),
    # construct rebinds the parameter before passing it on
    ("duration = (duration, duration)\n            return self.expand(x, duration)",
     "return self.regulator(h, ops.exp(log_duration))"),
    # the call sits in a comprehension: its ``log_duration`` is the comprehension's own
    ("return self.expand(x, duration)",
     "return [self.regulator(h, ops.exp(log_duration)) for log_duration in ((1, 2),)]"),
    # an independent review's reproducers: construct hands the helper only lists (a Tensor never gets there) ...
    ("if isinstance(duration, (list, tuple)):\n                return self.expand(x, duration)\n"
     "            return x * duration", "return self.regulator(h, ops.round(log_duration))"),
    # ... and a binding on the call's own line, which the reaching bindings do not see in order
    ("return self.expand(x, duration)",
     "d = ops.round(log_duration)\n            d = (1, 2); return self.regulator(h, d)"),
])
def test_a_cell_parameter_no_holder_surely_fills_with_a_tensor_is_not_flagged(inner, outer):
    assert flagged_lines(REGULATOR.format(inner=inner, outer=outer)) == []


def test_a_holder_in_another_module_is_evidence_too(tmp_path):
    from ms_lint.config import Config
    from ms_lint.runner import check_files

    regulator, adaptor = REGULATOR.split("\n\n\n")
    package = tmp_path / "tts"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "regulator.py").write_text(
        HEADER + textwrap.dedent(regulator.format(inner="return self.expand(x, duration)")), encoding="utf-8")
    outer = "from .regulator import Regulator\n\n\n" + textwrap.dedent(adaptor)
    (package / "adaptor.py").write_text(HEADER + outer.format(outer="return self.regulator(h, ops.exp(log_duration))"),
                                        encoding="utf-8")
    files = [str(package / name) for name in ("__init__.py", "regulator.py", "adaptor.py")]
    found = check_files(files, Config().with_overrides(select=["MSL101"]), use_cache=False)
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.fix) for f in found] == [("regulator.py", 8, None)]
    (package / "adaptor.py").write_text(HEADER + outer.format(outer="return self.regulator(h, log_duration)"),
                                        encoding="utf-8")
    assert check_files(files, Config().with_overrides(select=["MSL101"]), use_cache=False) == []


# -- the pieces of a split held by a name, or mapped (mindcv's JSD loss) -----------------------------------------
PIECES = """\
    class JSD(nn.Cell):
        def __init__(self, num_splits=3):
            super().__init__()
            self.map = ops.Map()
            self.softmax = ops.Softmax(axis=1)
            self.num_splits = num_splits

        def construct(self, logits, sizes):
            {bind}
            loss = 0
            for piece in {name}:
                loss += ops.exp(piece).sum()
            return loss
    """


@pytest.mark.parametrize("bind, name", [
    ("pieces = ops.split(logits, 0, self.num_splits)", "pieces"),
    ("pieces = ops.chunk(logits, 4)", "pieces"),
    ("pieces = ops.split(logits, 2)\n            probs = self.map(self.softmax, pieces)", "probs"),
    ("probs = ops.HyperMap()(ops.exp, ops.unstack(logits))", "probs"),
])
def test_a_name_holding_the_pieces_of_a_split_is_flagged_without_a_fix(bind, name):
    body = PIECES.format(bind=bind, name=name)
    line = textwrap.dedent(body).splitlines().index(f"        for piece in {name}:") + 1
    assert flagged_lines(body) == [line]
    assert_flagged_without_fix(body)
    assert f"it walks `{name}`, a tuple of the pieces of `logits`" in findings(body)[0].detail


@pytest.mark.parametrize("bind, name", [
    ("pieces = ops.split(logits, [2, 3, 4])", "pieces"),  # pieces of given sizes: one shape each, no map
    ("sizes = [2] * self.num_splits\n            pieces = ops.split(logits, sizes)", "pieces"),
    ("pieces = mint.split(logits, split_size_or_sections=(2, 6), dim=1)", "pieces"),
    ("pieces = ops.split(logits, 2)\n            if sizes is None:\n                pieces = (logits,)", "pieces"),
    ("sizes = ops.split(logits, 2)", "sizes"),  # a parameter: what the caller passes on entry
])
def test_names_that_may_hold_something_else_are_not_followed(bind, name):
    body = PIECES.format(bind=bind, name=name).replace("from mindspore import nn, ops", "from mindspore import mint, nn, ops")
    code = HEADER.replace("from mindspore import nn, ops", "from mindspore import mint, nn, ops") + textwrap.dedent(body)
    assert [f.line for f in lint(code) if f.code == "MSL101"] == []


def test_a_different_cell_per_piece_by_the_enumerate_index_is_a_layer_stack():
    """mindaudio's Res2Net block: ``self.blocks[i - 1](x_i)`` for each piece of ``self.split(x)``."""
    body = """\
        class Res2Net(nn.Cell):
            def __init__(self, scale=8):
                super().__init__()
                self.split = ops.Split(1, scale)
                self.blocks = nn.CellList([nn.Dense(4, 4) for _ in range(scale - 1)])

            def construct(self, x):
                y = ()
                spx = self.split(x)
                for i, x_i in enumerate(spx):
                    y += (self.blocks[i - 1](x_i) if i else x_i,)
                return ops.concat(y, 1)
        """
    assert flagged_lines(body) == []
    assert flagged_lines(body.replace("self.blocks[i - 1](x_i) if i else x_i", "ops.exp(x_i)")) == [10]


def test_a_list_built_from_the_pieces_is_not_taken_for_them():
    """The comprehension walks the pieces (flagged); the list it builds is a Python list, not followed."""
    body = PIECES.format(bind="pieces = ops.split(logits, 2)\n            probs = [self.softmax(p) for p in pieces]",
                         name="probs")
    assert flagged_lines(body) == [textwrap.dedent(body).splitlines().index(
        "        probs = [self.softmax(p) for p in pieces]") + 1]


# An independent review's reproducers for the pieces: sizes that may differ, and code that differs per piece.
@pytest.mark.parametrize("bind, name", [
    ("pieces = ops.split(logits, self.level_sizes, axis=1)", "pieces"),  # sizes kept in ``__init__``
    ("pieces = ops.split(logits, sizes, axis=1)", "pieces"),  # sizes a parameter: a list as often as an int
    ("pieces = self.splitv(logits)", "pieces"),  # ``P.SplitV(size_splits=...)``
    ("pieces = logits", "mint.split(logits, [64, 32, 16], dim=1)"),  # in place, given sizes
])
def test_pieces_of_sizes_that_may_differ_are_not_walked(bind, name):
    body = PIECES.format(bind=bind, name=name).replace(
        "            self.num_splits = num_splits\n",
        "            self.num_splits = num_splits\n            self.level_sizes = [6400, 1600, 400]\n"
        "            self.splitv = ops.SplitV(size_splits=[1, 2, 5], split_dim=1, num_split=3)\n")
    code = HEADER.replace("from mindspore import nn, ops", "from mindspore import mint, nn, ops") + textwrap.dedent(body)
    assert [f.line for f in lint(code) if f.code == "MSL101"] == []


LEVELS = """\
    class Levels(nn.Cell):
        def __init__(self):
            super().__init__()
            self.softmax = ops.Softmax(axis=1)
            self.blocks = nn.CellList([nn.Dense(4, 4) for _ in range(3)])

        def construct(self, logits):
            pieces = ops.split(logits, 0, 3)
            loss = 0
{loop}
            return loss
    """


@pytest.mark.parametrize("loop", [
    # other code for each piece: a structure, not a map
    "for i, piece in enumerate(pieces):\n"
    "    if i == 0:\n        loss += self.softmax(piece).sum()\n"
    "    else:\n        loss += ops.exp(piece).sum()",
    # a hand-kept counter picking a different cell per piece (Res2Net)
    "i = 0\nfor piece in pieces:\n    loss += self.blocks[i](piece).sum()\n    i += 1",
])
def test_a_walk_over_pieces_with_code_per_piece_is_not_flagged(loop):
    body = LEVELS.format(loop=textwrap.indent(loop, " " * 12))
    assert flagged_lines(body) == []
    same_code = LEVELS.format(loop=textwrap.indent("for piece in pieces:\n    loss += ops.exp(piece).sum()", " " * 12))
    assert flagged_lines(same_code) == [10]


# -- a list with one item per row of a Tensor, built by a comprehension (mindnlp's ChatGLM ``get_masks``) ---------
ROW_LIST = """\
    class Masks(nn.Cell):
        def __init__(self, bos=3):
            super().__init__()
            self.bos = bos
            self.blocks = nn.CellList([nn.Dense(4, 4) for _ in range(3)])

        def construct(self, input_ids: ms.Tensor, mask: ms.Tensor):
            lengths = [row.sum() for row in input_ids]
            {between}
            {loop}
            return mask
    """
ROW_LIST_LOOP = "for i, n in enumerate(lengths):\n                mask[i, :n] = 1"


def row_list_case(loop: str = ROW_LIST_LOOP, between: str = "pass", bind: str = "lengths = [row.sum() for row in input_ids]"):
    return ROW_LIST.format(loop=loop, between=between).replace("lengths = [row.sum() for row in input_ids]", bind)


@pytest.mark.parametrize("loop", [
    ROW_LIST_LOOP,
    "for n in lengths:\n                mask = mask + ops.ones_like(mask) * n",
    "for n, row in zip(lengths, input_ids):\n                mask = mask + row * n",
    "mask = ops.stack([ops.ones_like(mask[0]) * n for n in lengths])",
])
def test_a_loop_over_a_list_built_per_row_of_a_tensor_is_unrolled_per_row(loop):
    body = row_list_case(loop)
    assert flagged_lines(body) == [8, 10]  # the comprehension that builds it, and the walk over it
    walk = [f for f in findings(body) if f.line - HEADER.count("\n") == 10][0]
    assert walk.fix is None
    if "zip" not in loop:
        assert "`lengths` (one per row of `input_ids`)" in walk.message
        assert "it walks `lengths`, a list with one item per row of `input_ids`" in walk.detail


@pytest.mark.parametrize("between, bind", [
    ("lengths.append(ops.ones(()))", None),  # grown: one more than the rows
    ("lengths = lengths[1:]", None),  # rebound
    ("lengths[0:1] = []", None),  # a slice assignment may change its length
    ("del lengths[0]", None),
    ("self.trim(lengths)", None),  # a call it is handed may change it
    ("f = lambda: lengths.pop()", None),  # a nested function that reads it
    ("pass", "lengths = [row.sum() for row in input_ids if row.sum() > 0]"),  # filtered
    ("pass", "lengths = [a for row in input_ids for a in row]"),  # two clauses: rows times columns
    ("pass", "lengths = [cell(input_ids) for cell in self.blocks]"),  # a CellList, not a Tensor
    ("pass", "lengths = [row for row in ops.split(input_ids, 2)]"),  # a split's pieces: not followed
    ("pass", "lengths = [ids for ids in self.bos_ids]"),  # config
])
def test_a_list_that_may_not_hold_one_item_per_row_is_not_followed(between, bind):
    body = row_list_case(between=between, bind=bind or "lengths = [row.sum() for row in input_ids]")
    walk_line = textwrap.dedent(body).splitlines().index("        for i, n in enumerate(lengths):") + 1
    assert walk_line not in flagged_lines(body)


def test_a_list_walk_over_rows_keeps_the_layer_stack_exemption():
    body = row_list_case("for i, n in enumerate(lengths):\n                mask = self.blocks[i](mask) * n")
    assert flagged_lines(body) == [8]


# An independent review's reproducers for the row lists.
NARROWED_ROWS = """\
    class Masks(nn.Cell):
        def get_masks(self, ids{annotation}):
            {guard}
            lengths = [len(r) for r in ids]
            out = ops.zeros((2,))
            for i, n in enumerate(lengths):
                out = out + ops.ones((2,)) * n
            return out

        def construct(self, x: ms.Tensor):
            return self.get_masks(x)
    """


@pytest.mark.parametrize("annotation, guard", [
    ("", "if isinstance(ids, ms.Tensor):\n                return ids"),  # a list after the early return
    (": ms.Tensor", "if not isinstance(ids, (list, tuple)):\n                return ids"),
])
def test_a_row_list_of_a_name_narrowed_to_a_python_list_is_not_followed(annotation, guard):
    body = NARROWED_ROWS.format(annotation=annotation, guard=guard)
    assert flagged_lines(body) == []
    plain = NARROWED_ROWS.format(annotation=": ms.Tensor", guard="pass")
    assert 6 in flagged_lines(plain)


@pytest.mark.parametrize("bind, flagged", [
    ("self.cache = lengths = [row.sum() for row in input_ids]", False),  # another name may grow it
    ("lengths: list = [row.sum() for row in input_ids]", True),
    ("lengths = [int(v) for v in input_ids.numpy()]", False),  # a NumPy array: host code
])
def test_row_list_bindings(bind, flagged):
    body = row_list_case(bind=bind)
    walk_line = textwrap.dedent(body).splitlines().index("        for i, n in enumerate(lengths):") + 1
    assert (walk_line in flagged_lines(body)) is flagged


def test_a_trip_count_from_a_shape_and_configuration_fields_is_a_tensor_axis_loop():
    """mindnlp's Encodec ``encode``: chunks of the input, their length and stride from ``self.config``."""
    body = """\
        class Encodec(nn.Cell):
            def __init__(self, config):
                super().__init__()
                self.config = config

            def construct(self, input_values: ms.Tensor):
                _, channels, input_length = input_values.shape
                chunk_length = self.config.chunk_length
                if chunk_length is None:
                    chunk_length = input_length
                    stride = input_length
                else:
                    stride = self.config.chunk_stride
                step = chunk_length - stride
                frames = []
                for offset in range(0, input_length - step, stride):
                    frames.append(ops.exp(input_values[:, :, offset : offset + chunk_length]))
                return frames
        """
    assert flagged_lines(body) == [16]
    assert flagged_lines(body.replace("self.config = config", "self.config = self.make()")) == []


# -- a parameter's docstring type as evidence (mindocr's RobustScanner ``valid_width_masks``) -------------------
DOCUMENTED = """
class Attention(nn.Cell):
    def construct(self, logits, masks=None):
        out = []
        if masks is not None:
            for mask in masks:
                out.append(ops.cast(mask, ms.float32) * 2)
        return out


class Head(nn.Cell):
    def __init__(self):
        super().__init__()
        self.attention = Attention()

    def forward_test(self, feat, masks):
        \"\"\"Decode.

        Args:
            feat (Tensor): features.
            masks {doc}: the valid width of each image.
        \"\"\"
        return self.attention(feat, masks)

    def construct(self, feat, masks{annotation}):
        return self.forward_test(feat, masks)
"""


@pytest.mark.parametrize("doc", ["(Tensor)", "(`mindspore.Tensor` of shape `(batch_size, width)`, *optional*)",
                                 "(ms.Tensor, optional)"])
def test_a_caller_s_docstring_type_makes_the_loop_a_tensor_walk_reported_without_a_fix(doc):
    body = DOCUMENTED.format(doc=doc, annotation="")
    assert_flagged_without_fix(body)
    assert "only a docstring says `masks` is one Tensor" in findings(body)[0].detail


@pytest.mark.parametrize("doc, annotation", [
    ("", ""),  # nothing says it is one Tensor
    ("(list[Tensor])", ""),
    ("(Tensor or tuple)", ""),
    ("(`tuple(mindspore.Tensor)`)", ""),
    ("(Tensor)", ": List[ms.Tensor]"),  # the entry point's annotation says otherwise than the docstring
])
def test_docstrings_that_name_no_single_tensor_or_are_contradicted_give_no_finding(doc, annotation):
    header = HEADER.replace("import mindspore as ms\n", "from typing import List\n\nimport mindspore as ms\n")
    body = DOCUMENTED.format(doc=doc, annotation=annotation)
    assert findings(body, header) == []


def test_a_function_s_own_docstring_counts_and_a_list_display_passed_contradicts_it():
    own = """
    class Matcher(nn.Cell):
        def construct(self, logits, labels):
            \"\"\"
            Args:
                logits (Tensor): class logits.
                labels (Tensor): the labels of each image.
            \"\"\"
            out = []
            for label in labels:
                out.append(ops.cast(label, ms.float32) * 2)
            return out
    """
    assert_flagged_without_fix(own)
    holder = own + """
    class Loss(nn.Cell):
        def __init__(self):
            super().__init__()
            self.matcher = Matcher()

        def construct(self, logits, first, second):
            return self.matcher(logits, [first, second])
    """
    assert findings(holder) == []


def test_only_the_arguments_section_of_a_docstring_types_a_parameter():
    """An independent review's reproducer: a ``Returns:`` entry that reuses the parameter's name."""
    body = """
    class Fuse(nn.Cell):
        def construct(self, hidden_states):
            \"\"\"Fuse the per-layer states.

            {args}

            Returns:
                hidden_states (Tensor): the fused state.
            \"\"\"
            out = ()
            for h in hidden_states:
                out += (h * 2,)
            return out
    """
    assert findings(body.format(args="Args:\n                hidden_states: one state per layer.")) == []
    assert_flagged_without_fix(body.format(args="Args:\n                hidden_states (Tensor): the states."))
