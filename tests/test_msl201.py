"""MSL201 tensor-condition-branch: what is a Tensor condition, when the select rewrite is offered, and how safe."""
import textwrap

import libcst as cst
import pytest

from ms_lint.testing import fix, lint

HEAD = """
import mindspore as ms
from mindspore import nn, ops
from mindspore.common.initializer import initializer


"""


def jit(body, params="x, y"):
    return HEAD + f"@ms.jit\ndef f({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def line_of(code, text, nth=0):
    """1-based line of the nth line containing ``text`` in the snippet as lint sees it (dedented)."""
    lines = [i for i, line in enumerate(textwrap.dedent(code).splitlines(), 1) if text in line]
    return lines[nth]


def findings(code):
    return [f for f in lint(code) if f.code == "MSL201"]


def only(code):
    found = findings(code)
    assert len(found) == 1, found
    return found[0]


# -- what is flagged --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("condition", [
    "x > y", "x < 100", "ops.reduce_sum(x) > 0", "(x == 0).all()", "ops.isfinite(x).all()", "not ops.isnan(x).any()",
    "x.sum() != y", "x > 0 and y > 0",
])
def test_tensor_conditions_are_flagged(condition):
    code = jit(f"if {condition}:\n    x = x * 2\nreturn x")
    assert only(code).line == line_of(code, "if ")


@pytest.mark.parametrize("condition", [
    "x.shape[0] > 1", "x.ndim == 2", "x.dtype == ms.float16", "len(x.shape) > 1", "x is None", "y is not None",
    "isinstance(x, tuple)", "n > 3", "flag", "not flag", "mode == 'train'", "x.shape[0] % 2 == 0",
])
def test_compile_time_conditions_are_not_flagged(condition):
    code = jit(f"n = x.shape[0]\nif {condition}:\n    x = x * 2\nreturn x", params="x, y, flag=False, mode='eval'")
    assert findings(code) == []


def test_a_condition_at_the_end_of_a_chain_of_assignments_is_flagged_and_a_shape_chain_is_not():
    tensor_chain = jit("h = x * 2\nscore = h + y\nmargin = score - 1\ngap = margin * 0.5\nif gap > 0:\n"
                       "    x = x + 1\nreturn x")
    assert [f.line for f in findings(tensor_chain)] == [line_of(tensor_chain, "if gap")]
    shape_chain = jit("n = x.shape[0]\nhalf = n // 2\nquarter = half // 2\nrest = quarter - 1\nif rest > 0:\n"
                      "    x = x + 1\nreturn x")
    assert findings(shape_chain) == []


def test_a_comprehension_variable_is_not_the_local_of_the_same_name():
    # ``w`` in the comprehension is its own loop variable over Python ints, not the Tensor ``w`` bound above
    code = HEAD + textwrap.dedent("""
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.dense = nn.Dense(4, 4)
                self.sizes = (1, 2, 3)

            def construct(self, x):
                y = self.dense(x)
                z = y * 2
                w = z + 1
                out = w
                flags = [w > 1 for w in self.sizes]
                if flags[0]:
                    out = out + 1
                return out
        """)
    assert findings(code) == []


def test_a_helper_reading_only_keyword_only_parameters_takes_their_kinds_from_its_callers():
    code = HEAD + textwrap.dedent("""
        def gate(x, *, score):
            if score > 0:
                return score * 2
            return score


        class Net(nn.Cell):
            def construct(self, x):
                s = ops.reduce_sum(x)
                return gate(x, score=s)
        """)
    assert [f.line for f in findings(code)] == [line_of(code, "if score")]


def test_config_attributes_training_and_loop_indices_are_not_flagged():
    code = HEAD + textwrap.dedent("""
        class Net(nn.Cell):
            def __init__(self, use_bias=True, act="relu"):
                super().__init__()
                self.use_bias = use_bias
                self.act = act
                self.bias = ms.Parameter(ms.Tensor(0.0, ms.float32))

            def construct(self, x):
                if self.use_bias and self.act == "relu":
                    x = x + self.bias
                if self.training:
                    x = x * 2
                for i in range(3):
                    if i == 0:
                        x = x + 1
                return x
        """)
    assert findings(code) == []


def test_tensor_while_loops_are_not_flagged_but_ifs_inside_them_are():
    code = jit("""
        i = ops.zeros((), ms.int32)
        while i < y:
            if x.sum() > 0:
                x = x * 0.5
            i = i + 1
        return x
        """)
    assert [f.line for f in findings(code)] == [line_of(code, "if x.sum()")]


def test_bare_entry_arguments_are_flagged_only_when_call_sites_pass_tensors():
    code = HEAD + textwrap.dedent("""
        class Net(nn.Cell):
            def construct(self, x, overflow, maximize):
                x = x if not maximize else -x
                if overflow:
                    x = x * 0.5
                return self.step(x, x > 0)

            @ms.jit
            def step(self, x, done):
                if done:
                    x = x + 1
                return x
        """)
    assert [f.line for f in findings(code)] == [line_of(code, "if done")]


def test_validation_guards_and_flag_named_entry_parameters_are_not_flagged():
    code = jit("""
        if x > y:
            raise ValueError("x must not exceed y")
        if is_training:
            x = x * 2
        if not use_cache and x.ndim > 1:
            x = x + 1
        return x
        """, params="x, y, is_training, use_cache")
    assert findings(code) == []


def test_an_argument_check_in_a_cycle_of_helpers_leaves_the_other_findings_as_they_were():
    """The value models of helpers that call each other depend on the order they are built in; an argument check
    asked before its function's model (an independent review's case) lost the Tensor test of ``h``."""
    code = HEAD + textwrap.dedent("""
        class Net(nn.Cell):
            def construct(self, x):
                return f(x)


        def f(a):
            if a.sum() > 0:
                raise ValueError("positive")
            return g(a, ops.ones((2,))) + h(a)


        def g(b, c):
            if c.sum() > 0:
                c = c * 2
            return f(c)


        def h(p):
            if p.sum() > 0:
                p = p * 2
            return p
        """)
    assert sorted(f.line for f in findings(code)) == [line_of(code, "if c.sum()"), line_of(code, "if p.sum()")]


def test_parameters_elif_and_conditional_expressions_are_flagged():
    code = HEAD + textwrap.dedent("""
        class Opt(nn.Optimizer):
            def construct(self, grads):
                if self.global_step == 1:
                    return grads
                elif self.global_step > 5:
                    return grads
                scale = self.global_step * 2 if self.global_step > 3 else self.global_step
                return scale
        """)
    lines = sorted((f.line, f.text.split(" on ")[0]) for f in findings(code))
    assert lines == [(line_of(code, "if self.global_step == 1"), "`if`"), (line_of(code, "elif"), "`elif`"),
                     (line_of(code, "scale ="), "`a if c else b`")]


def test_helper_parameters_take_kinds_from_call_sites():
    code = HEAD + textwrap.dedent("""
        def helper(a, k):
            if k > 2:
                a = a * 2
            if a > 0:
                a = a + 1
            return a


        @ms.jit
        def f(x):
            return helper(x, 3)
        """)
    assert [f.line for f in findings(code)] == [line_of(code, "if a > 0")]


# -- fixes --------------------------------------------------------------------------------------------------
def test_if_else_same_target_becomes_where_and_import_is_added():
    code = "from mindspore import jit\n" + textwrap.dedent("""
        @jit
        def f(x, y):
            # pick the larger gap
            if x > y:
                r = x - y  # positive
            else:
                r = y - x
            return r
        """)
    out = fix(code, select=["MSL201"])
    assert out.fixed.startswith("from mindspore import jit, ops\n")
    assert "    # pick the larger gap\n    # positive\n    r = ops.where(x > y, x - y, y - x)\n" in out.fixed
    assert not fix(out.fixed, select=["MSL201"]).changed


@pytest.mark.parametrize("condition, expected", [
    ("not (x > y)", "ops.logical_not(x > y)"),
    ("x > 0 and y > 0", "ops.logical_and(x > 0, y > 0)"),
    ("(x > 0) or not (y > 0)", "ops.logical_or(x > 0, ops.logical_not(y > 0))"),
])
def test_boolean_operators_become_logical_ops(condition, expected):
    out = fix(jit(f"if {condition}:\n    r = x - y\nelse:\n    r = y - x\nreturn r"), select=["MSL201"])
    assert f"r = ops.where({expected}, x - y, y - x)" in out.fixed


def test_if_without_else_keeps_the_previous_value():
    out = fix(jit("r = x - y\nif x > y:\n    r = y - x\nreturn r"), select=["MSL201"])
    assert "r = ops.where(x > y, y - x, r)" in out.fixed


def test_if_return_then_return_and_conditional_expression():
    out = fix(jit("if x > y:\n    return x - y\nreturn y - x"), select=["MSL201"])
    assert out.fixed.rstrip().endswith("return ops.where(x > y, x - y, y - x)")
    out = fix(jit("r = (x - y if x > y else y - x) * 2\nreturn r"), select=["MSL201"])
    assert "r = (ops.where(x > y, x - y, y - x)) * 2" in out.fixed
    cst.parse_module(out.fixed)


@pytest.mark.parametrize("body, reason", [
    ("if x > y:\n    ops.assign_add(p, x)\nreturn x", "adds to `p` has its dtype"),
    ("if x > y:\n    ops.assign(p, x)\nelse:\n    ops.print_(x)\nreturn x", "(a side effect)"),
    ("if x > y:\n    ops.assign(p, x)\n    ops.print_(x)\nreturn x", "(a side effect)"),
    ("if p > y:\n    ops.assign(p, x)\n    ops.assign(x, y)\nreturn x", "reads a name the branch assigns"),
    ("if x > y:\n    s = x * 2\n    ops.assign(p, s)\nreturn s", "read after the `if`"),
    ("if x > y:\n    print(x)\nreturn x", "`print` (a side effect)"),
    ("if x > y:\n    p.update(x)\nreturn x", "for its effect"),
    ("if x > y:\n    p.value = x\nreturn x", "cannot update state"),
    ("r = x\nif x > y:\n    r = ops.uniform((2,), x, y)\nreturn r", "random"),
    ("if x > y:\n    r = x @ y\nelse:\n    r = y\nreturn r", "matrix product"),
    ("if x > y:\n    r = x\nelse:\n    s = y\nreturn x", "nothing that is read after"),
    ("if x > y:\n    r = x\n    s = y\nelse:\n    r = y\nreturn r + s", "on some paths only"),
    ("if x > y:\n    r = 1.0\nelse:\n    r = 0.0\nreturn r", "Python value"),
    ("if x > y:\n    r = x.sum()\nelse:\n    r = x\nreturn r", "differ in shape"),
    ("if x > y:\n    r = x + helper(x)\nelse:\n    r = y\nreturn r", "whose body is not only name assignments"),
    ("if x > y:\n    r = lookup(x)\nelse:\n    r = y\nreturn r", "both branches are Tensors"),  # not in-module
    ("if x > y:\n    r = helper(x)\nelse:\n    r = y\nreturn r", "whose body is not only name assignments"),
    ("if x > y:\n    r = x\nreturn r", "not bound to a known Tensor before"),
    ("if x > y:\n    return x\nops.assign(p, y)\nreturn y", "neither an assignment nor a return"),
    ("if x > y:\n    r = x\nelif x < y:\n    print(x)\n    r = y\nelse:\n    r = x\nreturn r", "`print`"),
    ("if x > y:\n    return x\nfor i in range(3):\n    y = y + x\nreturn y", "`for` statement"),
    ("q = x * 2\nif q:\n    r = x\nelse:\n    r = y\nreturn r", "bool tensor"),
])
def test_no_fix_and_the_reason_is_in_the_message(body, reason):
    helper = "def helper(a):\n    if a.ndim == 0:\n        return a\n    return a\n"  # not followed: a branch
    code = HEAD + helper + "\n\n@ms.jit\ndef f(x, y, p):\n" + textwrap.indent(body, "    ")
    found = findings(code)
    assert found and found[0].fix_object is None
    assert reason in found[0].text


@pytest.mark.parametrize("branch", ["x / y", "ops.log(x)", "ops.sqrt(y)", "x ** y", "ops.pow(x, 2)", "ops.exp(y)"])
def test_inf_nan_hazards_make_the_fix_unsafe(branch):
    code = jit(f"if y > 0:\n    r = {branch}\nelse:\n    r = x\nreturn r")
    finding = only(code)
    assert finding.fix_object.applicability == "unsafe"
    assert "gradient" in finding.fix_object.message
    assert not fix(code, select=["MSL201"]).changed
    assert "ops.where(y > 0" in fix(code, unsafe=True, select=["MSL201"]).fixed


@pytest.mark.parametrize("branch", ["x / 2.0", "x ** 2", "x * 3 + 1"])
def test_division_by_constants_and_whole_powers_stay_safe(branch):
    finding = only(jit(f"if x > 0:\n    r = {branch}\nelse:\n    r = x\nreturn r"))
    assert finding.fix_object.applicability == "safe"


@pytest.mark.parametrize("declaration, applicability", [
    ("ms.Parameter(initializer(0, [1], ms.int32))", "unsafe"),
    ("ms.Parameter(ms.Tensor([0], ms.int32))", "unsafe"),
    ("ms.Parameter(ms.Tensor(0, ms.int32))", "safe"),
    ("ms.Parameter(initializer(0, [], ms.int32))", "safe"),
])
def test_parameter_conditions_of_shape_one_make_the_fix_unsafe(declaration, applicability):
    code = HEAD + textwrap.dedent(f"""
        class Sched(nn.Cell):
            def __init__(self):
                super().__init__()
                self.step = {declaration}

            def construct(self, lo, hi):
                if self.step < 10:
                    lr = lo * 0.1
                else:
                    lr = lo
                return lr
        """)
    assert only(code).fix_object.applicability == applicability


def test_learning_rate_schedule_step_argument_may_be_shape_one():
    code = HEAD + textwrap.dedent("""
        class Sched(nn.LearningRateSchedule):
            def __init__(self):
                super().__init__()
                self.high = ms.Tensor(0.1, ms.float32)
                self.low = ms.Tensor(0.01, ms.float32)

            def construct(self, step):
                lr = self.high if step < 10 else self.low
                return lr
        """)
    finding = only(code)
    assert finding.fix_object.applicability == "unsafe" and "shape (1,)" in finding.fix_object.message
    assert "shape (1,)" in finding.text


def test_branches_that_carry_the_conditions_shape_are_safe_even_for_a_shape_one_step():
    """``ops.where(step < 10, step * 0.1, step * 0.01)``: a shape-(1,) step gives (1,) either way."""
    code = HEAD + textwrap.dedent("""
        class Sched(nn.LearningRateSchedule):
            def construct(self, step):
                lr = step * 0.1 if step < 10 else step * 0.01
                return lr
        """)
    assert only(code).fix_object.applicability == "safe"


def test_inherited_global_step_is_a_tensor_and_its_fix_is_unsafe():
    code = HEAD + textwrap.dedent("""
        class Opt(nn.Optimizer):
            def construct(self, grads):
                lr = self.learning_rate * 0.1 if self.global_step < 10 else self.learning_rate * 1.0
                return lr
        """)
    finding = only(code)
    assert finding.fix_object is None or finding.fix_object.applicability == "unsafe"


# -- adversarial review: shapes, guarded indexing, Python scalars -------------------------------------------------
@pytest.mark.parametrize("body, reason", [
    # a 0-d reduction against an argument of any shape: the `if` returns () or the argument's shape
    ("s = x.sum()\nif s > 0:\n    s = y\nreturn s", "have one shape"),
    # two different arguments: one may be 0-d, the other shape (1,)
    ("if x > y:\n    r = x\nelse:\n    r = y\nreturn r", "have one shape"),
    # the condition's tensor does not appear in the branches: a shape-(1,) condition broadcasts them
    ("if y > 0:\n    r = x * 2\nelse:\n    r = x\nreturn r", "condition `y > 0`"),
    ("if x > 0:\n    r = x * y\nelse:\n    r = x\nreturn r", "have one shape"),
])
def test_unproven_shapes_make_the_fix_unsafe(body, reason):
    finding = only(jit(body))
    assert finding.fix_object.applicability == "unsafe"
    assert reason in finding.fix_object.message and reason in finding.text


@pytest.mark.parametrize("body", [
    "if x > y:\n    r = x - y\nelse:\n    r = y - x\nreturn r",
    "d = ops.abs(x - y)\nr = 0.5 * d * d if d < 1.0 else d - 0.5\nreturn r",
    # every binding of `s` has the leaves of x, so `s` does too
    "s = x * 2\nif x > 0:\n    s = s + 1\nif s.sum() > 3:\n    s = ops.zeros_like(x)\nreturn s",
    "m = x.astype(ms.float32)\nif (m > 0).all():\n    r = ops.cast(m, ms.float16)\nelse:\n"
    "    r = ops.zeros_like(m).astype(ms.float16)\nreturn r",
])
def test_proven_shapes_keep_the_fix_safe(body):
    for finding in findings(jit(body)):
        assert finding.fix_object is not None and finding.fix_object.applicability == "safe", finding.text


def test_a_value_rebound_after_it_was_read_is_not_followed():
    """``h`` was computed from the old ``x``; ``x`` is 0-d afterwards: their shapes are not the same."""
    code = jit("h = x * 2\nx = x.sum()\nif x > 0:\n    r = h\nelse:\n    r = x\nreturn r")
    assert only(code).fix_object.applicability == "unsafe"


def test_a_method_returning_only_a_reduction_is_0_d():
    code = HEAD + textwrap.dedent("""
        class Step(nn.Cell):
            def __init__(self):
                super().__init__()
                self.scale = ms.Parameter(ms.Tensor(1024.0, ms.float32), name="scale")

            def construct(self, grads):
                overflow = ops.logical_not(self._finite(grads))
                return self.scale * 0.5 if overflow else self.scale * 2.0

            def _finite(self, grads):
                return ops.stack([ops.isfinite(g).all() for g in grads]).all()
        """)
    assert [f.fix_object.applicability for f in findings(code)] == ["safe"]


def test_a_branch_indexing_with_a_tensor_gets_no_fix():
    finding = only(jit("if y < 3:\n    r = x[y]\nelse:\n    r = x[0]\nreturn r"))
    assert finding.fix_object is None and "indexes with a Tensor" in finding.text


def test_arguments_a_caller_passes_python_values_for_are_constants():
    code = HEAD + textwrap.dedent("""
        @ms.jit
        def rollout(x, num_steps, decay):
            if num_steps > 1:
                x = x * 2
            if decay > 0.5:
                x = x * 3
            return x


        def main(x):
            return rollout(x, 3, ms.Tensor(0.9))
        """)
    assert [f.line for f in findings(code)] == [line_of(code, "if decay > 0.5")]


def test_bitwise_or_of_bool_tensors_is_a_bool_condition():
    out = fix(jit("if (x > 0) | (y > 0):\n    r = x - y\nelse:\n    r = y - x\nreturn r"), select=["MSL201"])
    assert "r = ops.where((x > 0) | (y > 0), x - y, y - x)" in out.fixed


def test_a_flag_argument_passed_on_to_helpers_stays_unflagged():
    code = HEAD + textwrap.dedent("""
        class Block(nn.Cell):
            def __init__(self):
                super().__init__()
                self.dense = nn.Dense(4, 4)

            def construct(self, x, is_training):
                return self._forward(x, is_training)

            def _forward(self, x, training):
                if training:
                    x = self.dense(x)
                return self._inner(x, training)

            def _inner(self, x, flag):
                if not flag:
                    return x
                return x * 2
        """)
    assert findings(code) == []
    tensor_flag = code.replace("return self._forward(x, is_training)",
                               "return self._forward(x, ops.reduce_sum(x) > 0)")
    assert [f.line for f in findings(tensor_flag)] == [line_of(code, "if training:"), line_of(code, "if not flag:")]


def test_a_python_tuple_in_a_branch_is_not_a_number():
    """``x * (1.0, 0.5)`` is a shape-(2,) Tensor in graph mode (measured): a tuple constant carries a shape."""
    code = HEAD + textwrap.dedent("""
        class Scale(nn.Cell):
            def __init__(self, steps=10):
                super().__init__()
                self.scales = (1.0, 0.5)
                self.steps = steps

            def construct(self, x):
                if x > 0:
                    r = x * self.scales
                else:
                    r = x
                s = x * self.steps if x > 1 else x
                return r, s
        """)
    found = findings(code)
    assert [f.fix_object.applicability for f in found] == ["unsafe", "safe"]


# -- a compile-time test joined to a Tensor test ------------------------------------------------------------------
SPLIT = """
if h.dtype == ms.float16 and (ops.isinf(h).any() or ops.isnan(h).any()):
    c = 65504.0 - 1000
    h = ops.clamp(h, -c, c)
return h
"""


def test_compile_time_part_stays_an_if_and_the_tensor_part_becomes_a_select():
    code = jit(SPLIT, "h")
    finding = only(code)
    assert finding.fix["applicability"] == "safe"
    outcome = fix(code, select=["MSL201"])
    assert outcome.error is None
    assert ("    if h.dtype == ms.float16:\n"
            "        c = 65504.0 - 1000\n"
            "        h = ops.where(ops.logical_or(ops.isinf(h).any(), ops.isnan(h).any()), ops.clamp(h, -c, c), h)\n"
            ) in outcome.fixed
    assert not findings(outcome.fixed)
    assert not fix(outcome.fixed, select=["MSL201"]).changed  # idempotent


def test_several_compile_time_tests_and_several_constants():
    code = jit("""
    if flag and h.dtype == ms.float16 and ops.isinf(h).any():  # keep
        big = 65504.0
        c = 64504.0
        h = ops.clamp(h, -c, c)
    return h
    """, "h, flag=True")
    outcome = fix(code, select=["MSL201"], unsafe=True)
    kept = "    if flag and h.dtype == ms.float16:  # keep\n        big = 65504.0\n        c = 64504.0\n"
    assert kept in outcome.fixed
    assert "h = ops.where(ops.isinf(h).any(), ops.clamp(h, -c, c), h)" in outcome.fixed


@pytest.mark.parametrize("body", [
    # the Tensor test first
    """
    if ops.isinf(h).any() and h.dtype == ms.float16:
        c = 64504.0
        h = ops.clamp(h, -c, c)
    return h
    """,
    # a Tensor computed before the assignment
    """
    if h.dtype == ms.float16 and ops.isinf(h).any():
        c = ops.abs(h).min() + 64504.0
        h = ops.clamp(h, -c, c)
    return h
    """,
    # two Tensors assigned
    """
    if h.dtype == ms.float16 and ops.isinf(h).any():
        c = 64504.0
        h = ops.clamp(h, -c, c)
        k = ops.clamp(k, -c, c)
    return h, k
    """,
    # the Tensor test reads a name the branch assigns (the old value, in the original)
    """
    c = 10.0
    if h.dtype == ms.float16 and (h > c).any():
        c = 64504.0
        h = ops.clamp(h, -c, c)
    return h
    """,
    # an else branch
    """
    if h.dtype == ms.float16 and ops.isinf(h).any():
        c = 64504.0
        h = ops.clamp(h, -c, c)
    else:
        h = h * 1.0
    return h
    """,
])
def test_split_not_offered(body):
    code = jit(body, "h, k")
    finding = only(code)
    assert finding.fix_object is None, finding.fix


# -- a compile-time test joined to a Tensor test with ``or`` ------------------------------------------------------
def test_or_keeps_the_compile_time_if_with_the_branch_and_selects_on_the_tensor_test_in_its_else():
    # Where the compile-time test holds, ``or`` never reads the Tensor test and the branch always runs: the
    # branch stays as written under it; otherwise the select is on the Tensor test alone.
    code = jit("""
    if h.dtype == ms.float16 or ops.isinf(h).any():
        c = 64504.0
        h = ops.clamp(h, -c, c)
    return h
    """, "h")
    finding = only(code)
    assert finding.fix["applicability"] == "safe"
    assert finding.fix["message"].startswith("keep `if h.dtype == ms.float16` with the branch as written")
    outcome = fix(code, select=["MSL201"])
    assert outcome.error is None
    assert ("    if h.dtype == ms.float16:\n"
            "        c = 64504.0\n"
            "        h = ops.clamp(h, -c, c)\n"
            "    else:\n"
            "        h = ops.where(ops.isinf(h).any(), ops.clamp(h, -64504.0, 64504.0), h)\n"
            "    return h\n") in outcome.fixed
    cst.parse_module(outcome.fixed)
    assert not findings(outcome.fixed)
    assert not fix(outcome.fixed, select=["MSL201"], unsafe=True).changed  # idempotent


@pytest.mark.parametrize("body, reason", [
    # a compile-time test on the right: ``or`` reads the Tensor test first
    ("""
    if ops.isinf(h).any() or h.dtype == ms.float16:
        h = ops.clamp(h, -100.0, 100.0)
    return h
    """, None),
    # a branch with a side effect: the select would run it whichever way the Tensor test goes
    ("""
    if h.dtype == ms.float16 or ops.isinf(h).any():
        ops.print_("clamping")
        h = ops.clamp(h, -100.0, 100.0)
    return h
    """, "print_"),
    # a branch that calls a helper ms-lint cannot see into
    ("""
    if h.dtype == ms.float16 or ops.isinf(h).any():
        h = rescale(h)
    return h
    """, "rescale"),
    # a number Tensor as the Tensor part: truthiness, not a bool condition
    ("""
    if h.dtype == ms.float16 or h.sum():
        h = ops.clamp(h, -100.0, 100.0)
    return h
    """, "bool tensor"),
    # an else branch
    ("""
    if h.dtype == ms.float16 or ops.isinf(h).any():
        h = ops.clamp(h, -100.0, 100.0)
    else:
        h = h * 1.0
    return h
    """, None),
])
def test_or_split_not_offered(body, reason):
    code = jit(body, "h")
    finding = only(code)
    assert finding.fix_object is None, finding.fix
    if reason is not None:
        assert reason in finding.detail


def test_or_split_keeps_a_left_part_of_unknown_kind_as_written():
    # ``if u or c: B`` is ``if u: B`` else ``if c: B`` whatever ``u`` is (``or`` tests ``u`` first): the left part
    # stays the ``if`` it was; only a visibly Tensor one makes the whole test a select instead.
    code = jit("""
    if lookup(h) or ops.isinf(h).any():
        h = ops.clamp(h, -100.0, 100.0)
    return h
    """, "h")
    outcome = fix(code, select=["MSL201"])
    assert ("    if lookup(h):\n        h = ops.clamp(h, -100.0, 100.0)\n    else:\n"
            "        h = ops.where(ops.isinf(h).any(), ops.clamp(h, -100.0, 100.0), h)\n") in outcome.fixed


def test_or_split_with_a_tensor_test_on_an_argument_is_unsafe():
    # The select broadcasts the condition: ``step`` (an argument of unknown shape) may widen the result.
    code = jit("""
    if interval == 1 or step % interval == 0:
        v = v * ops.clamp(1.0 - (v * v).mean(), 0.8, 1.25)
    return v
    """, "v, step, interval=1")
    finding = only(code)
    assert finding.fix["applicability"] == "unsafe"
    outcome = fix(code, select=["MSL201"], unsafe=True)
    assert "    if interval == 1:\n        v = v * ops.clamp(" in outcome.fixed
    assert "    else:\n        v = ops.where(step % interval == 0, v * ops.clamp(" in outcome.fixed
    assert not fix(outcome.fixed, select=["MSL201"], unsafe=True).changed


# -- dicts of tensors read by constant keys (ms_lint/analysis/dict_keys.py) ------------------------------------
def test_a_key_of_a_plain_dict_holding_tensors_is_a_tensor_condition():
    code = jit("""
        state = {"failed": x > 0, "k": 0}
        while state["k"] < 3:
            state["failed"] = ops.logical_not(y > state["k"])
            if state["failed"]:
                break
            state["k"] = state["k"] + 1
        return state
    """)
    found = findings(code)
    assert [f.line for f in found] == [line_of(code, 'if state["failed"]')]


@pytest.mark.parametrize("body", [
    # a key holding Python values only: folded at compile time
    """
    cfg = {"depth": 3, "scale": 0.5}
    if cfg["depth"] > 2:
        x = x * cfg["scale"]
    return x
    """,
    # passed to a call: the callee may store anything under any key
    """
    state = {"failed": x > 0}
    update(state, x)
    if state["failed"]:
        x = x + 1
    return x
    """,
    # written under a variable key: any key may now hold a tensor or not
    """
    state = {"failed": x > 0}
    for name in ("failed",):
        state[name] = x > 0
    if state["failed"]:
        x = x + 1
    return x
    """,
])
def test_dicts_that_are_not_plain_or_hold_python_values_are_not_tensor_conditions(body):
    assert findings(jit(body)) == []


# -- tuple results of helpers (values.return_elements) -----------------------------------------------------------
NET_WITH_SEARCH = HEAD + """
class Search(nn.Cell):
    def __init__(self):
        super().__init__()
        self.false_flag = ms.Tensor(False)
        self.rhos = (0.5, 0.25)

    def _search(self, g, loss, *inputs):
        res = self.rhos[-1]
        found = self.false_flag
        for rho in self.rhos:
            found = self._try(g, loss, rho, *inputs)
            if found:
                res = rho
                break
        return res, found

    def _try(self, g, loss, rho, *inputs):
        return (g * rho).sum() < loss

    def construct(self, g, loss, *inputs):
        rho, found = self._search(g, loss, *inputs)
        if not found:
            g = g * 0
        return g * rho
"""


def test_items_of_a_helpers_tuple_result_take_the_kinds_it_returns():
    found = findings(NET_WITH_SEARCH)
    assert sorted(f.line for f in found) == [line_of(NET_WITH_SEARCH, "if found:"),
                                             line_of(NET_WITH_SEARCH, "if not found:")]


def test_a_tuple_result_whose_returns_disagree_stays_unknown():
    code = NET_WITH_SEARCH.replace("        return res, found\n", "        if loss is None:\n"
                                   "            return res, True\n        return res, found\n")
    assert [f.line for f in findings(code)] == [line_of(code, "if found:")]


# -- learning-rate schedules: float hazards are harmless, constants from checked arguments are 0-d -------------
SCHEDULE = '''
from mindspore import Parameter, Tensor, nn, ops
from mindspore._checkparam import args_type_check
from mindspore.common import dtype as mstype
from mindspore.nn.learning_rate_schedule import LearningRateSchedule


def _steps(steps, ratio, total):
    if ratio is None:
        if not isinstance(steps, int):
            raise TypeError("steps")
        return steps
    return int(total * ratio)


class Warm(BASE):
    @args_type_check(learning_rate=(int, float), warmup_steps=int, total_steps=int)
    def __init__(self, learning_rate, total_steps, warmup_steps=None, ratio=None, loose=None):
        super().__init__()
        warmup = STEPS
        self.learning_rate = learning_rate
        self.warmup_steps = Tensor(warmup, DTYPE)
        self.total_steps = Tensor(max(1, total_steps - warmup), mstype.float32)
        EXTRA

    def construct(self, global_step):
        global_step = ops.cast(global_step, DTYPE)
        if self.warmup_steps != 0 and global_step < self.warmup_steps:
            percent = global_step OP self.warmup_steps
        else:
            percent = (self.total_steps - global_step) OP self.total_steps
        return self.learning_rate * percent
'''


def schedule(base="LearningRateSchedule", steps="_steps(warmup_steps, ratio, total_steps)",
             dtype="mstype.float32", op="/", extra="pass"):
    return (SCHEDULE.replace("BASE", base).replace("STEPS", steps).replace("DTYPE", dtype)
            .replace(" OP ", f" {op} ").replace("EXTRA", extra))


@pytest.mark.parametrize("steps", ["_steps(warmup_steps, ratio, total_steps)", "warmup_steps + 0",
                                   "max(0, warmup_steps)", "int(warmup_steps)"])
def test_schedule_with_checked_constants_and_float_divisions_gets_a_safe_select(steps):
    found = only(schedule(steps=steps))
    assert found.fix_object.applicability == "safe"
    outcome = fix(schedule(steps=steps), select=["MSL201"])
    assert "ops.where(ops.logical_and(self.warmup_steps != 0, global_step < self.warmup_steps)" in outcome.fixed
    assert not fix(outcome.fixed, unsafe=True, select=["MSL201"]).changed


@pytest.mark.parametrize("variant, reason", [
    (dict(base="nn.Cell"), "a division"),  # a plain Cell: its gradients may be taken
    (dict(extra="self.scale = Parameter(Tensor(1.0, mstype.float32))"), "a division"),  # something to train
    (dict(dtype="mstype.int32", op="//"), "a division"),  # integer division by zero is not a NaN
    (dict(steps="loose"), "one shape"),  # an unchecked argument may be a list: Tensor(loose) not provably 0-d
    (dict(steps="warmup_steps if warmup_steps else [0]"), "one shape"),
    # checked, but args_type_check lets None through and Tensor(None, mstype.float32) does not raise
    (dict(steps="warmup_steps"), "one shape"),
    # a base from elsewhere (it may create Parameters we cannot see)
    (dict(base="LearningRateSchedule, nn.Cell"), "a division"),
])
def test_schedule_look_alikes_stay_unsafe(variant, reason):
    found = only(schedule(**variant))
    assert found.fix_object.applicability == "unsafe"
    assert reason in found.fix_object.message


@pytest.mark.parametrize("helper", [
    # the guard does not raise: the argument may still be anything
    "if not isinstance(steps, int):\n        steps = steps\n    return steps",
    # a loop rebinds the name after the guard
    "if not isinstance(steps, int):\n        raise TypeError('x')\n    for s in range(2):\n        steps = [s]\n"
    "    return steps",
    # one path returns something that is not a number
    "if not isinstance(steps, int):\n        raise TypeError('x')\n    if ratio:\n        return [steps]\n"
    "    return steps",
])
def test_step_helpers_that_do_not_prove_a_number_keep_the_fix_unsafe(helper):
    code = schedule(steps="_loose(warmup_steps, ratio)") + (
        "\n\ndef _loose(steps, ratio):\n    " + helper + "\n")
    found = only(code)
    assert found.fix_object.applicability == "unsafe"
    assert "one shape" in found.fix_object.message


def test_schedule_construct_with_a_second_input_keeps_the_division_unsafe():
    """Only ``construct(self, global_step)`` is the optimizer's call; another input may carry a gradient."""
    code = schedule().replace("def construct(self, global_step):", "def construct(self, global_step, scale):")
    found = only(code)
    assert found.fix_object.applicability == "unsafe" and "a division" in found.fix_object.message


def test_conditional_assigns_become_selects_in_order():
    body = ("if y.dtype == ms.float32 and x > y:\n    ops.assign(p, x)\n    if y.ndim == 0:\n"
            "        ops.assign(z, p + 1)\nreturn x")
    out = fix(HEAD + "@ms.jit\ndef f(x, y, p, z):\n" + textwrap.indent(body, "    "), select=["MSL201"])
    assert ("    if y.dtype == ms.float32:\n        ops.assign(p, ops.where(ops.reshape(x > y, ()), x, p))\n"
            "        if y.ndim == 0:\n            ops.assign(z, ops.where(ops.reshape(x > y, ()), p + 1, z))\n"
            in out.fixed), out.fixed
    assert fix(out.fixed, select=["MSL201"]).changed is False


def test_conditional_assigns_without_a_compile_time_test_lose_the_if():
    out = fix(jit("if x > y:\n    # keep\n    ops.assign(p, x)\nreturn x", params="x, y, p"), select=["MSL201"])
    assert "    # keep\n    ops.assign(p, ops.where(ops.reshape(x > y, ()), x, p))\n    return x" in out.fixed
    cst.parse_module(out.fixed)


def test_an_assign_to_a_local_tensor_is_an_unsafe_select():
    found = findings(HEAD + "@ms.jit\ndef f(x, y, p):\n    r = x * 2\n    if x > y:\n        ops.assign(r, x)\n"
                     "    return r\n")
    assert found[0].fix_object is not None and found[0].fix_object.applicability == "unsafe"
    assert "`r` is a local Tensor, not a Parameter" in found[0].text


SOFTMAX_OR_ONE_HOT = HEAD + '''
from mindspore import Parameter, Tensor
from mindspore.ops import operations as P


class SoftOrHard(nn.Cell):
    def __init__(self):
        super().__init__()
        self.softmax = P.Softmax()
        self.onehot = P.OneHot()
        self.argmax = P.Argmax()
        self.on = Tensor(1.0, ms.float32)
        self.off = Tensor(0.0, ms.float32)
        self.hard = Parameter(Tensor(0.0, ms.float32), name="hard", requires_grad=False)

    def construct(self, x):
        if self.hard == 0:
            w = self.softmax(x)
        else:
            w = self.onehot(self.argmax(x), x.shape[-1], self.on, self.off)
        return w * x
'''


def test_softmax_one_hot_and_argmax_primitives_make_an_unsafe_select():
    """OneHot and Argmax keep no state and are finite for finite inputs, Softmax is a gradient hazard (NaN on a
    fully masked row): a branch that calls them is an unsafe select, not a refusal."""
    (finding,) = findings(SOFTMAX_OR_ONE_HOT)
    assert finding.fix is not None, finding.detail
    assert "cheap and free of side effects" not in (finding.detail or "")
    fixed = fix(SOFTMAX_OR_ONE_HOT, unsafe=True, select=["MSL201"]).fixed
    assert "ops.where(self.hard == 0, self.softmax(x), self.onehot(" in fixed


@pytest.mark.parametrize("body, fixed_line", [
    ("if x > y:\n    ops.assign(p, x)\nelse:\n    ops.assign(p, y)\nreturn x",
     "ops.assign(p, ops.where(ops.reshape(x > y, ()), p, y))"),
    ("if x > y:\n    ops.assign_sub(p, 1)\nreturn x", "ops.assign(p, ops.where(ops.reshape(x > y, ()), p - 1, p))"),
    ("if x > y:\n    ops.assign_add(p, ops.cast(x * 2, p.dtype))\nreturn x",
     "ops.assign(p, ops.where(ops.reshape(x > y, ()), p + ops.cast(x * 2, p.dtype), p))"),
])
def test_else_branches_and_assign_add_become_selects(body, fixed_line):
    code = jit(body, params="p, x, y")
    (finding,) = findings(code)
    assert finding.fix_object is not None and finding.fix_object.applicability == "safe", finding.detail
    assert fixed_line in fix(code, select=["MSL201"]).fixed


def test_a_compile_time_test_with_an_else_keeps_the_if():
    """``if flag and x > y: A else: B``: with the flag false, B must run; this shape is not split."""
    code = jit("if flag and x > y:\n    ops.assign(p, x)\nelse:\n    ops.assign(p, y)\nreturn x", params="p, x, y, flag=True")
    (finding,) = findings(code)
    assert finding.fix_object is None
    assert "with an `else`" in finding.text


def test_a_test_that_reads_an_alias_of_a_written_parameter_keeps_its_if():
    """``count = self.count; if count < 3: assign(self.count, ...)``: the select form evaluates the test again
    before each assign, and the alias would then read the new count."""
    code = HEAD + '''
from mindspore import Parameter, Tensor


class Counted(nn.Cell):
    def __init__(self):
        super().__init__()
        self.count = Parameter(Tensor(0, ms.int32), name="count")
        self.total = Parameter(Tensor(0.0, ms.float32), name="total")

    def construct(self, x):
        count = self.count
        if count < 3:
            ops.assign(self.count, self.count + 1)
            ops.assign(self.total, self.total + x)
        return self.total + 0
'''
    (finding,) = findings(code)
    assert finding.fix_object is None
    assert "reads `count`, bound to `self.count`, which the branch assigns" in finding.detail


def test_softmax_in_a_branch_makes_the_select_unsafe():
    """A fully masked attention row (all -inf) is NaN after softmax: the untaken side's NaN reaches the gradient."""
    code = jit("if x.sum() > 0:\n    w = ops.softmax(x, -1)\nelse:\n    w = x\nreturn w")
    (finding,) = findings(code)
    assert finding.fix_object is not None and finding.fix_object.applicability == "unsafe"


# -- the gradient w.r.t. the first input (``GradOperation()``) ---------------------------------------------------
GRAD_GUARD = """
import mindspore as ms
from mindspore import nn, ops


class InputGradient(nn.Cell):
    def __init__(self, network):
        super().__init__()
        self.network = network
        self.grad = ops.GradOperation({options})
        self.zero = ops.zeros((2, 3), ms.float32)

    def construct(self, x, y):
        g = self.grad(self.network)(x, y)
        if ops.isnan(g.sum()):
            g = {replacement}
        return g
"""


def test_a_gradient_of_the_first_input_is_a_tensor_the_select_can_keep():
    code = GRAD_GUARD.format(options="", replacement="ops.zeros_like(g)")
    finding = only(code)
    assert finding.fix["applicability"] == "safe"
    outcome = fix(code, select=["MSL201"])
    assert "        g = ops.where(ops.isnan(g.sum()), ops.zeros_like(g), g)\n" in outcome.fixed
    assert not fix(outcome.fixed, select=["MSL201"], unsafe=True).changed


def test_a_gradient_against_a_stored_zero_of_its_own_shape_is_unsafe():
    # ``self.zero`` has a shape of its own: the select would broadcast it against the gradient.
    code = GRAD_GUARD.format(options="sens_param=False", replacement="self.zero")
    finding = only(code)
    assert finding.fix["applicability"] == "unsafe"
    assert "have one shape" in finding.detail


@pytest.mark.parametrize("options", ["get_all=True", "get_by_list=True", "True", "get_all=flag"])
def test_gradients_that_are_tuples_are_not_bound_to_a_tensor(options):
    # get_all=True: one gradient per input, a tuple; get_by_list=True: one per weight.
    code = GRAD_GUARD.format(options=options, replacement="ops.zeros_like(g)")
    finding = only(code)
    assert finding.fix_object is None, finding.fix
    assert "`g` is not bound to a known Tensor before the `if`" in finding.detail


# -- a flag stored on self: every value it is set to must be a bool Tensor -----------------------------------------
FLAG = """
import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore.ops import operations as P


class PaddedEnergy(nn.Cell):
    def __init__(self, atom_mask):
        super().__init__()
        self.atom_mask = Tensor(atom_mask, ms.bool_)
        {writes}

    def construct(self, energy):
        if self.has_padding:
            energy = energy * 0.5
        return energy
"""


@pytest.mark.parametrize("writes", [
    "self.has_padding = ops.logical_not(self.atom_mask.all())",
    "self.has_padding = ops.logical_not(ops.reduce_all(self.atom_mask))",
    "self.has_padding = P.LogicalNot()(ops.reduce_all(self.atom_mask))",
])
def test_a_flag_set_only_to_bool_tensors_becomes_the_select_condition(writes):
    code = FLAG.format(writes=writes)
    finding = only(code)
    assert finding.fix["applicability"] in ("safe", "unsafe")
    outcome = fix(code, select=["MSL201"], unsafe=True)
    assert "        energy = ops.where(self.has_padding, energy * 0.5, energy)\n" in outcome.fixed
    cst.parse_module(outcome.fixed)
    assert not fix(outcome.fixed, select=["MSL201"], unsafe=True).changed


def test_a_flag_of_a_full_reduction_is_0_d_so_the_select_is_safe():
    finding = only(FLAG.format(writes="self.has_padding = ops.logical_not(self.atom_mask.all())"))
    assert finding.fix["applicability"] == "safe"


@pytest.mark.parametrize("writes, reason", [
    # False without a mask, a bool Tensor with one (mindsponge's neighbour list): ops.where rejects a Python bool
    ("self.has_padding = False\n        self.has_padding = ops.logical_not(self.atom_mask.all())",
     "`self.has_padding` is also set to the Python bool `False`, and ops.where needs a Tensor condition"),
    # a number Tensor: truthiness, not a bool condition
    ("self.has_padding = ops.ones((), ms.int32)",
     "cannot see that every value `self.has_padding` is set to is a bool tensor"),
    # a write ms-lint does not follow
    ("self.has_padding = ops.logical_not(self.atom_mask.all())\n        self.has_padding += 1",
     "cannot see every value `self.has_padding` is set to"),
])
def test_a_flag_that_may_not_be_a_bool_tensor_gets_no_fix(writes, reason):
    found = findings(FLAG.format(writes=writes))
    assert len(found) == 1 and found[0].fix_object is None, found
    assert reason in found[0].detail


# -- helpers a select would run: followed when their body is name assignments and a return -------------------------
HELPERS = """
import mindspore as ms
from mindspore import nn, ops

keep_sum = ops.ReduceSum(keep_dims=True)
counter = ms.Parameter(ms.Tensor(0, ms.int32), name="counter")


def cheap(v, factor):
    \"\"\"Rescale.\"\"\"
    energy = keep_sum(v * v, -1)
    return v * ops.clamp(1.0 - factor * energy, 0.5, 2.0)


def divides(v, factor):
    return v / (factor + keep_sum(v * v, -1))


def counts(v, factor):
    done = ops.assign_add(counter, 1)
    return v * factor


def prints(v, factor):
    ops.print_(v)
    return v * factor


def draws(v, factor):
    noise = ops.standard_normal(v.shape)
    return v + factor * noise


class Controller(nn.Cell):
    def __init__(self, interval=1, factor=0.1):
        super().__init__()
        self.interval = interval
        self.factor = factor
        self.step = ms.Parameter(ms.Tensor(0, ms.int32), name="step")

    def scale(self, v):
        return {helper}(v, self.factor)

    def construct(self, v):
        if self.interval == 1 or self.step % self.interval == 0:
            v = self.scale(v)
        return v
"""


def test_a_pure_helper_is_followed_into_and_a_module_primitive_is_cheap():
    # Unsafe only for the shape: what a helper returns is not followed by the shape proof.
    finding = only(HELPERS.format(helper="cheap"))
    assert finding.fix["applicability"] == "unsafe"
    assert finding.detail.endswith("use ops.where(cond, a, b), but check it: cannot see that `self.scale(v)` and `v` "
                                   "have one shape: ops.where broadcasts them, an `if` keeps the shape of the side it "
                                   "takes")
    outcome = fix(HELPERS.format(helper="cheap"), select=["MSL201"], unsafe=True)
    assert "            v = ops.where(self.step % self.interval == 0, self.scale(v), v)\n" in outcome.fixed


@pytest.mark.parametrize("helper, applicability, reason", [
    ("divides", "unsafe", "division"),
    ("counts", None, "in `self.scale`, in `counts`, a branch calls `assign_add` (a side effect)"),
    ("prints", None, "a branch calls `prints`, whose body is not only name assignments and a `return`"),
    ("draws", None, "in `self.scale`, in `draws`, a branch calls the random op `standard_normal`"),
])
def test_helpers_with_hazards_effects_or_random_ops(helper, applicability, reason):
    finding = only(HELPERS.format(helper=helper))
    if applicability is None:
        assert finding.fix_object is None, finding.fix
    else:
        assert finding.fix["applicability"] == applicability
    assert reason in finding.detail


IN_PLACE_HELPER = """
import mindspore as ms
from mindspore import nn, ops


def rescale(v, s):
    v *= s
    return v


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.s = ms.Tensor(2.0, ms.float32)

    def construct(self, x, t):
        y = x
        if t.sum() > 0:
            y = rescale(x, self.s)
        return y + x
"""


def test_a_helper_that_updates_its_argument_in_place_is_not_selected():
    """``v *= s`` on a parameter updates the caller's Tensor in graph mode: a select would do it either way."""
    found = [f for f in lint(IN_PLACE_HELPER) if f.code == "MSL201"]
    assert len(found) == 1 and found[0].fix_object is None and "`rescale`" in found[0].detail


def test_a_command_code_counts_only_where_the_entry_point_tests_it():
    agent = HEAD + textwrap.dedent("""
        class Agent(nn.Cell):
            def construct(self, command, batch):
                if command == 1:
                    return batch * 2
                return batch
        """)
    assert findings(agent) == []  # no call passes a Tensor: a Python code picking a branch
    sampler = HEAD + textwrap.dedent("""
        class Sampler(nn.Cell):
            def __init__(self):
                super().__init__()
                self.net = nn.Dense(4, 4)

            def _last_step(self, mean, noise, t):
                if t == 0:
                    return mean
                return mean + noise

            def construct(self, x, t):
                mean = self.net(x) * ops.exp(-t)
                return self._last_step(mean, ops.randn_like(x), t)
        """)
    assert only(sampler).line == line_of(sampler, "if t == 0")  # construct computes with t: a Tensor


def test_an_isinstance_guard_narrows_only_the_operand_it_guards():
    code = jit("""
        mask = ops.reduce_sum(x) > 0
        if mask or (isinstance(mask, (list, tuple)) and not mask):
            x = x + 1
        return x
        """)
    assert only(code).line == line_of(code, "if mask or")


def test_wrapping_a_parameter_in_tensor_does_not_make_it_a_python_number():
    code = HEAD + textwrap.dedent("""
        from mindspore import Tensor


        def helper(x, scale):
            if scale > 1:
                x = x / scale
            return x * Tensor(scale, ms.float32)


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.s = ms.Parameter(Tensor(2.0), name="s")

            def construct(self, x):
                return helper(x, self.s * 2)
        """)
    assert only(code).line == line_of(code, "if scale > 1")  # graph mode builds Tensor(t) from a Tensor too


def test_an_augmented_assignment_in_a_branch_makes_the_select_unsafe_for_that_reason_alone():
    """``done_status += 1`` updates ``self.zero``'s Tensor in place (measured, MindSpore 2.10): unsafe. The shapes
    are proven: every write of ``self.zero`` is a 0-d Tensor, ``+= 1`` keeps the shape, and ``masks[t] = ...``
    reads ``t`` without binding it."""
    code = textwrap.dedent("""\
        import mindspore as ms
        from mindspore import nn


        class Record(nn.Cell):
            def __init__(self):
                super().__init__()
                self.zero = ms.Tensor(0, ms.int64)
                self.step = ms.Tensor(3, ms.int64)
                self.zero = ms.Tensor(0, ms.int64)

            def construct(self, dones, masks):
                done_status = self.zero
                done_num = self.zero
                t = self.step
                t += 1
                masks[t] = 1
                if dones.any():
                    done_status += 1
                    done_num = t
                return done_status, done_num, masks
        """)
    found = [f for f in lint(code, select=["MSL201"]) if f.line == 18]
    assert len(found) == 1 and found[0].fix_object is not None
    message = found[0].fix_object.message
    assert found[0].fix_object.applicability == "unsafe"
    assert "`done_status += 1` updates in place the Tensor its name holds" in message
    assert "one shape" not in message


# -- look-alikes met in mindone 0.5.0's audit (benchmarks/realcode/audit.tsv) ------------------------------------
def cell(construct, extra=""):
    return HEAD + textwrap.dedent(extra) + "class Net(nn.Cell):\n" + textwrap.indent(textwrap.dedent(construct), "    ")


@pytest.mark.parametrize("annotation, flagged", [
    ("List[float]", False), ("Optional[int]", False), ("Tuple[int, ...]", False), ("list[list[int]]", False),
    ("Union[int, Tuple[int, int]]", False), ("List[ms.Tensor]", True), ("Optional[ms.Tensor]", True),
])
def test_a_construct_parameter_annotated_with_python_values_is_not_a_tensor(annotation, flagged):
    """``conditioning_scale: List[float]`` zipped with a CellList: each ``scale`` is a Python float."""
    code = cell(f"""\
        def __init__(self, nets):
            super().__init__()
            self.nets = nn.CellList(nets)

        def construct(self, x, scales: {annotation}):
            for scale, net in zip(scales, self.nets):
                if scale == 0.0:
                    continue
                x = net(x) * 2
            return x
        """, extra="from typing import List, Optional, Tuple, Union\n\n\n")
    assert bool(findings(code)) is flagged


@pytest.mark.parametrize("call, flagged", [("size(0)", False), ("size()", False), ("dim()", False), ("sum()", True)])
def test_a_tensors_size_is_a_python_int(call, flagged):
    code = cell(f"""\
        def construct(self, x, w):
            n = x.shape[1] + 2
            if n > w.{call}:
                x = x * 2
            return x
        """)
    assert bool(findings(code)) is flagged


def test_the_items_a_sub_cell_returns_from_shapes_are_not_tensors():
    """``embeddings, num_frames, width = self.patch_embed(x)``: ``num_frames`` is ``x.shape[1]`` in the
    sub-cell's ``construct``; ``embeddings`` stays a Tensor."""
    code = HEAD + textwrap.dedent("""\
        class PatchEmbed(nn.Cell):
            def __init__(self):
                super().__init__()
                self.proj = nn.Dense(4, 4)

            def construct(self, x):
                batch, frames, width = x.shape
                return self.proj(x), frames, width


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.patch_embed = PatchEmbed()
                self.table = ms.Parameter(ops.zeros((1, 8, 4)))

            def construct(self, x):
                embeddings, num_frames, width = self.patch_embed(x)
                embeddings = embeddings * 2
                if num_frames != self.table.shape[1]:
                    x = x * 2
                if embeddings.sum() > 0:
                    x = x + 1
                return x
        """)
    assert [f.line for f in findings(code)] == [line_of(code, "if embeddings.sum() > 0")]


def test_a_parameter_tested_before_the_function_rebinds_it_to_a_tensor_is_the_argument():
    """``if max_len < 0: max_len = lengths.max()``: the test reads the argument (a config int), the later Tensor
    binding does not reach it; the test after the rebinding is a Tensor test."""
    code = cell("""\
        def __init__(self, config):
            super().__init__()
            self.config = config

        def embed(self, x, lengths, max_len=200):
            if max_len < 0:
                max_len = lengths.max()
            else:
                max_len = ops.minimum(lengths.max(), max_len)
            if max_len > 4:
                x = x * 2
            return x

        def construct(self, x, lengths):
            return self.embed(x, lengths, max_len=self.config.max_len)
        """)
    assert [f.line for f in findings(code)] == [line_of(code, "if max_len > 4")]


@pytest.mark.parametrize("query, flagged", [
    ("mint.distributed.is_initialized()", False), ("mint.distributed.get_world_size() > 1", False),
    ("mint.isfinite(x).all()", True),
])
def test_host_queries_of_mint_distributed_are_python_values(query, flagged):
    code = cell(f"""\
        def construct(self, x):
            if {query}:
                x = x * 2
            return x
        """, extra="from mindspore import mint\n\n\n")
    assert bool(findings(code)) is flagged


@pytest.mark.parametrize("method", ["split(2)", "chunk(2)", "unbind(0)", "tensor_split(2)", "vsplit(2)"])
def test_the_truth_of_what_a_tensor_splitting_method_returns_is_a_tuple_s(method):
    """``past = prompt.permute(...).split(2)`` then ``if past:`` (mindnlp's ChatGLM2 prefix prompt): these
    methods return a tuple of Tensors in MindSpore 2.10, whose truth is known when the graph is compiled."""
    code = jit(f"""
        past = ops.relu(x).{method}
        if past:
            y = y * 2
        if past[0].sum() > 0:
            y = y + 1
        return y
        """)
    assert [f.line for f in findings(code)] == [line_of(code, "if past[0]")]


@pytest.mark.parametrize("annotation, tensor", [
    ("Optional[ms.Tensor] = None", True),
    ("Union[ms.Tensor, None] = None", True),
    ("Union[None, ms.Tensor] = None", True),
    ("ms.Tensor | None = None", True),
    ("ms.Tensor = None", True),
    ("Optional[int] = None", False),
    ("Optional[List[ms.Tensor]] = None", False),  # a list of Tensors: its truth is a Python list's
    ("Union[ms.Tensor, int] = None", False),  # another type than None: not known
    ("= None", False),  # a None default without an annotation: a Python value, as the label policy says
    ("Optional[ms.Tensor] = False", False),  # the default contradicts the annotation (mindone's FastSpeech2 flags)
])
def test_an_optional_tensor_argument_is_a_tensor_where_the_code_uses_it_as_one(annotation, tensor):
    """HF-style ``construct(self, input_ids: Optional[Tensor] = None)``: ``None`` is decided when the graph is
    compiled; wherever the code reads the argument as a Tensor it is one, as for ``x: Tensor = None``."""
    code = HEAD.replace("import mindspore as ms\n", "from typing import List, Optional, Union\nimport mindspore as ms\n") + (
        "class M(nn.Cell):\n"
        f"    def construct(self, x, mask{':' if not annotation.startswith('=') else ''} {annotation}):\n"
        "        if mask is None:\n"
        "            return x\n"
        "        if mask.sum() > 0:\n"
        "            x = x * 2\n"
        "        return x\n")
    found = findings(code)
    assert [f.line for f in found] == ([line_of(code, "if mask.sum()")] if tensor else [])


def test_a_method_no_tensor_has_says_its_receiver_is_no_tensor():
    """mindone's SqueezeBERT: ``head_mask.count(None) == len(head_mask)`` on what ``get_head_mask`` returns, a
    Python list; MindSpore 2.10's Tensor has no ``count`` (nor ``append``, ``keys``, ``get``...)."""
    code = HEAD.replace("import mindspore as ms\n", "from typing import Optional\nimport mindspore as ms\n") + (
        "class M(nn.Cell):\n"
        "    def construct(self, x, head_mask: Optional[ms.Tensor] = None):\n"
        "        if head_mask is None:\n"
        "            empty = True\n"
        "        elif head_mask.count(None) == len(head_mask):\n"
        "            empty = True\n"
        "        elif head_mask.sum() > 0:\n"
        "            empty = False\n"
        "        return x\n")
    assert [f.line for f in findings(code)] == [line_of(code, "head_mask.sum()")]


def test_the_truth_of_an_optional_tensor_argument_is_as_often_a_mistyped_flag():
    """``output_attentions: Optional[Tensor] = None`` (mindone's InternVL, mindnlp's MobileBERT): tested for truth
    alone, an optional argument is read as a flag, as an untyped one is; used as a Tensor it is one."""
    code = HEAD.replace("import mindspore as ms\n", "from typing import Optional\nimport mindspore as ms\n") + (
        "class M(nn.Cell):\n"
        "    def construct(self, x, output_attentions: Optional[ms.Tensor] = None, mask: Optional[ms.Tensor] = None):\n"
        "        outputs = (x, x) if output_attentions else (x, None)\n"
        "        if not mask:\n"
        "            x = x + 1\n"
        "        if mask is not None and mask.sum() > 0:\n"
        "            x = x * 2\n"
        "        return outputs, x\n")
    assert [f.line for f in findings(code)] == [line_of(code, "mask.sum()")]


def test_a_dict_of_tensors_taken_for_a_tensor_still_gives_tensors():
    """``out = self.backbone(x)`` returning a dict: ``out.get(...)``, ``out.items()`` and ``out.pop(...)`` give its
    Tensors (only ``count``, list mutators and string methods say the receiver is no Tensor)."""
    code = HEAD + (
        "class Backbone(nn.Cell):\n"
        "    def construct(self, x):\n"
        "        return {'logits': x * 2, 'aux': x + 1}\n\n\n"
        "class M(nn.Cell):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.backbone = Backbone()\n\n"
        "    def construct(self, x):\n"
        "        out = self.backbone(x)\n"
        "        if out.get('logits').sum() > 0:\n"
        "            x = x + 1\n"
        "        aux = out.pop('aux')\n"
        "        if aux.mean() > 0:\n"
        "            x = x - 1\n"
        "        return x\n")
    assert [f.line for f in findings(code)] == [line_of(code, "out.get"), line_of(code, "aux.mean")]


# -- a Parameter of an object the class holds, read directly or through a @property (mindone's TrainStep) ----------
HELD = HEAD + """
class Accumulator:
    def __init__(self, steps):
        self.sync = ms.Parameter(ms.Tensor(True), requires_grad=False)
        self.steps = steps

    def step(self, grads):
        ops.assign(self.sync, ops.logical_not(self.sync))
        return grads


class TrainStep(nn.Cell):
    def __init__(self, net, optimizer):
        super().__init__()
        self.net = net
        self.optimizer = optimizer
        self.accumulator = Accumulator(4)

    @property
    def sync_gradients(self):
        return self.accumulator.sync

    def construct(self, x):
        grads = self.accumulator.step(self.net(x))
        if {test}:
            self.optimizer(grads)
        return grads
"""


@pytest.mark.parametrize("test", ["self.accumulator.sync", "self.sync_gradients", "not self.sync_gradients"])
def test_a_parameter_of_a_held_object_is_a_tensor_condition(test):
    code = HELD.format(test=test)
    assert [f.line for f in findings(code)] == [line_of(code, f"if {test}:")]


@pytest.mark.parametrize("test, change", [
    ("self.accumulator.steps", None),  # a Python number the held object keeps
    ("self.accumulator.sync", ("        self.accumulator = Accumulator(4)\n",
                               "        self.accumulator = Accumulator(4)\n        self.accumulator.sync = False\n")),
    ("self.accumulator.sync", ("    def step(self, grads):\n", "    def reset(self):\n        self.sync = True\n\n"
                               "    def step(self, grads):\n")),  # the class binds it to a bool too
    ("self.accumulator.sync", ("        self.accumulator = Accumulator(4)\n",
                               "        self.accumulator = Accumulator(4) if optimizer else None\n")),
    ("self.sync_gradients", ("    @property\n", "")),  # a plain method: its bound method is no Tensor
    ("self.sync_gradients", ("        return self.accumulator.sync\n",
                             "        return self.accumulator.steps > 1\n")),  # the getter gives a Python bool
    # a setter binds the name: what it holds then is not only what the getter returns
    ("self.sync_gradients", ("        self.accumulator = Accumulator(4)\n",
                             "        self.accumulator = Accumulator(4)\n        self.sync_gradients = True\n")),
    # an independent review's reproducers: the attribute or the holder written from outside the class
    ("self.accumulator.sync", ("        self.accumulator = Accumulator(4)\n",
                               "        self.accumulator = Accumulator(4)\n"
                               "        setattr(self.accumulator, \"sync\", True)\n")),
    ("self.accumulator.sync", ("        self.accumulator = Accumulator(4)\n",
                               "        self.accumulator = Accumulator(4)\n"
                               "        self.accumulator.sync, self.every = True, 4\n")),
    ("self.accumulator.sync", ("class TrainStep(nn.Cell):\n",
                               "class NoAccumulation:\n    sync = True\n\n\n"
                               "def build(net, optimizer, steps):\n    step = TrainStep(net, optimizer)\n"
                               "    if steps == 1:\n        step.accumulator = NoAccumulation()\n    return step\n\n\n"
                               "class TrainStep(nn.Cell):\n")),
])
def test_what_a_held_object_or_a_property_may_hold_as_a_python_value_is_not_flagged(test, change):
    code = HELD.format(test=test)
    if change is not None:
        assert change[0] in code
        code = code.replace(change[0], change[1])
    assert findings(code) == []


def test_a_held_object_of_a_class_in_another_module(tmp_path):
    from ms_lint.config import Config
    from ms_lint.runner import check_files

    accumulator, rest = HELD.split("\n\nclass TrainStep")
    package = tmp_path / "train"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "accumulate.py").write_text(accumulator + "\n", encoding="utf-8")
    step = HEAD + "from .accumulate import Accumulator\n\n\nclass TrainStep" + rest.format(test="self.sync_gradients")
    (package / "step.py").write_text(step, encoding="utf-8")
    files = [str(package / name) for name in ("__init__.py", "accumulate.py", "step.py")]
    found = check_files(files, Config().with_overrides(select=["MSL201"]), use_cache=False)
    assert [(f.path.rsplit("/", 1)[-1], f.line) for f in found] == [
        ("step.py", step.splitlines().index("        if self.sync_gradients:") + 1)]
    (package / "step.py").write_text(step.replace("self.accumulator = Accumulator(4)\n",
                                                  "self.accumulator = Accumulator(4)\n        self.accumulator.sync = 0\n"),
                                     encoding="utf-8")
    assert check_files(files, Config().with_overrides(select=["MSL201"]), use_cache=False) == []


@pytest.mark.parametrize("imported, test, flagged", [
    # MindSpore's private helpers are no ops: ``math_func._check_same_type`` is ``dtype1 == dtype2`` (msadapter)
    ("from mindspore.ops.function.math_func import _check_same_type", "not _check_same_type(x.dtype, y.dtype)", False),
    ("from mindspore.ops.function import math_func", "math_func._check_same_type(x.dtype, y.dtype)", False),
    ("from mindspore.ops.function.math_func import logical_not", "logical_not(x).all()", True),
])
def test_a_private_mindspore_helper_is_not_taken_for_an_op(imported, test, flagged):
    code = jit(f"if {test}:\n    x = x + 1\nreturn x").replace(HEAD, HEAD + imported + "\n\n\n")
    assert [f.line for f in findings(code)] == ([line_of(code, f"if {test}:")] if flagged else [])


# -- a test only evaluated when not training, on a name that is a Tensor only when training (mindone's DAC) --------
QUANTIZE = HEAD + """
class Quantize(nn.Cell):
    def __init__(self, n_codebooks=8):
        super().__init__()
        self.n_codebooks = n_codebooks
        self.quantizers = nn.CellList([nn.Dense(4, 4) for _ in range(n_codebooks)])

    def construct(self, hidden, n_quantizers: int = None):
        n_quantizers = n_quantizers if n_quantizers is not None else self.n_codebooks
{training}
        out = hidden
        for i, quantizer in enumerate(self.quantizers):
{test}
            out = out + quantizer(hidden)
        return out
"""
TRAINING = "        if self.training:\n            n_quantizers = ops.ones((hidden.shape[0],), ms.int32) * self.n_codebooks"


@pytest.mark.parametrize("training, test", [
    (TRAINING, "            if self.training is False and i >= n_quantizers:\n                break"),
    (TRAINING, "            if not self.training and i >= n_quantizers:\n                break"),
    (TRAINING, "            if not self.training:\n                if i >= n_quantizers:\n                    break"),
    (TRAINING, "            if self.training:\n                pass\n            elif i >= n_quantizers:\n"
               "                break"),
    (TRAINING.replace("if self.training:", "if not self.training:\n            pass\n        else:"),
     "            if self.training is False and i >= n_quantizers:\n                break"),
])
def test_a_name_that_is_a_tensor_only_when_training_is_a_python_value_where_training_is_false(training, test):
    code = QUANTIZE.format(training=training, test=test)
    assert findings(code) == []


@pytest.mark.parametrize("training, test", [
    (TRAINING, "            if self.training and i >= n_quantizers:\n                break"),  # training: a Tensor
    (TRAINING, "            if i >= n_quantizers:\n                break"),  # either way
    # a Tensor when not training too
    (TRAINING + "\n        else:\n            n_quantizers = ops.ones((1,), ms.int32)",
     "            if self.training is False and i >= n_quantizers:\n                break"),
    ("        n_quantizers = ops.ones((hidden.shape[0],), ms.int32)",
     "            if self.training is False and i >= n_quantizers:\n                break"),
    # an independent review's reproducers: the flag changes inside construct, after the Tensor binding
    (TRAINING + "\n            self.training = False",
     "            if self.training is False and i >= n_quantizers:\n                break"),
    (TRAINING + "\n            self.set_train(False)",
     "            if not self.training and i >= n_quantizers:\n                break"),
])
def test_where_the_name_may_be_a_tensor_the_test_is_still_flagged(training, test):
    code = QUANTIZE.format(training=training, test=test)
    assert [f.line for f in findings(code)] == [line_of(code, "i >= n_quantizers")]


# -- configuration fields (``self.config.<field>`` is a Python value): a review's reproducers ----------------------
CONFIG_FIELD = """\
import mindspore as ms
from mindspore import nn, ops


class Block(nn.Cell):
    def construct(self, x, mask):
        if mask.any():
            x = x * 2
        return x


class Model(nn.Cell):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.block = Block()

    def construct(self, x, flag):
        y = x
        if flag.sum() > 0:
            y = x + self.config.channel_bias
        return self.block(y, {mask})
"""


def test_a_configuration_field_in_a_select_may_be_a_list_so_the_fix_is_unsafe():
    """``config.channel_bias = [0.1, 0.2, 0.3]``: ``ops.where`` would broadcast the branch that keeps ``x``."""
    found = [f for f in lint(CONFIG_FIELD.format(mask="x > 0"), select=["MSL201"]) if f.line == 20]
    assert len(found) == 1 and found[0].fix_object.applicability == "unsafe"


def test_a_method_of_a_configuration_sub_object_may_return_a_tensor():
    """``self.config.masking.build_mask(x)`` passed for ``mask``: ``mask.any()`` stays a Tensor test."""
    code = CONFIG_FIELD.format(mask="self.config.masking.build_mask(x)")
    assert [f.line for f in lint(code, select=["MSL201"])] == [7, 20]
    assert [f.line for f in lint(CONFIG_FIELD.format(mask="self.config.use_mask"), select=["MSL201"])] == [20]


def test_a_method_of_a_parameter_annotated_with_a_project_class_gives_no_tensor():
    """mindone's SAM2 video model: ``frame_idx = inference_session.add_new_frame(frame, frame_idx)``, then a helper
    compares ``frame_idx - t`` with 0 (an audited false positive)."""
    code = textwrap.dedent("""\
        import mindspore as ms
        from typing import Optional
        from mindspore import nn


        class Session:
            def add_new_frame(self, frame, idx):
                return idx


        class Tracker(nn.Cell):
            def construct(self, session: {annotation}, frame_idx: Optional[int] = None, frame=None):
                if frame is not None:
                    frame_idx = session.add_new_frame(frame, frame_idx)
                if frame_idx - 1 < 0:
                    return frame
                return frame_idx
        """)
    assert [f.line for f in lint(code.format(annotation="Session"), select=["MSL201"])] == []
    assert [f.line for f in lint(code.format(annotation="ms.Tensor"), select=["MSL201"])] == [15]
