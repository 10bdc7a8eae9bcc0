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
    lines = sorted((f.line, f.message.split(" on ")[0]) for f in findings(code))
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
    assert out.fixed.startswith("from mindspore import jit\nfrom mindspore import ops\n")
    assert "    # pick the larger gap\n    # positive\n    r = ops.where(x > y, x - y, y - x)\n" in out.fixed
    assert not fix(out.fixed, select=["MSL201"]).changed


@pytest.mark.parametrize("condition, expected", [
    ("not (x > y)", "ops.logical_not(x > y)"),
    ("x > 0 and y > 0", "ops.logical_and(x > 0, y > 0)"),
    ("(x > 0) or not (y > 0)", "ops.logical_or(x > 0, ops.logical_not(y > 0))"),
])
def test_boolean_operators_become_logical_ops(condition, expected):
    out = fix(jit(f"if {condition}:\n    r = x\nelse:\n    r = y\nreturn r"), select=["MSL201"])
    assert f"r = ops.where({expected}, x, y)" in out.fixed


def test_if_without_else_keeps_the_previous_value():
    out = fix(jit("r = x * 2\nif x > y:\n    r = y\nreturn r"), select=["MSL201"])
    assert "r = ops.where(x > y, y, r)" in out.fixed


def test_if_return_then_return_and_conditional_expression():
    out = fix(jit("if x > y:\n    return x\nreturn y"), select=["MSL201"])
    assert out.fixed.rstrip().endswith("return ops.where(x > y, x, y)")
    out = fix(jit("r = (x if x > y else y) * 2\nreturn r"), select=["MSL201"])
    assert "r = (ops.where(x > y, x, y)) * 2" in out.fixed
    cst.parse_module(out.fixed)


@pytest.mark.parametrize("body, reason", [
    ("if x > y:\n    ops.assign(p, x)\nreturn x", "`assign` (a side effect)"),
    ("if x > y:\n    print(x)\nreturn x", "`print` (a side effect)"),
    ("if x > y:\n    p.update(x)\nreturn x", "for its effect"),
    ("if x > y:\n    p.value = x\nreturn x", "cannot update state"),
    ("r = x\nif x > y:\n    r = ops.uniform((2,), x, y)\nreturn r", "random"),
    ("if x > y:\n    r = x @ y\nelse:\n    r = y\nreturn r", "matrix product"),
    ("if x > y:\n    r = x\nelse:\n    s = y\nreturn x", "different names"),
    ("if x > y:\n    r = x\n    s = y\nelse:\n    r = y\nreturn r", "more than"),
    ("if x > y:\n    r = 1.0\nelse:\n    r = 0.0\nreturn r", "Python value"),
    ("if x > y:\n    r = x.sum()\nelse:\n    r = x\nreturn r", "differ in shape"),
    ("if x > y:\n    r = x + helper(x)\nelse:\n    r = y\nreturn r", "cannot see that it is cheap"),
    ("if x > y:\n    r = helper(x)\nelse:\n    r = y\nreturn r", "both branches are Tensors"),
    ("if x > y:\n    r = x\nreturn r", "not bound before"),
    ("if x > y:\n    return x\nx = x + 1\nreturn y", "not followed"),
    ("if x > y:\n    r = x\nelif x < y:\n    r = y\nelse:\n    r = x\nreturn r", "chain"),
    ("q = x * 2\nif q:\n    r = x\nelse:\n    r = y\nreturn r", "bool tensor"),
])
def test_no_fix_and_the_reason_is_in_the_message(body, reason):
    code = HEAD + "def helper(a):\n    return a\n\n\n@ms.jit\ndef f(x, y, p):\n" + textwrap.indent(body, "    ")
    found = findings(code)
    assert found and found[0].fix_object is None
    assert reason in found[0].message


@pytest.mark.parametrize("branch", ["x / y", "ops.log(x)", "ops.sqrt(y)", "x ** y", "ops.pow(x, 2)", "ops.exp(y)"])
def test_inf_nan_hazards_make_the_fix_unsafe(branch):
    code = jit(f"if y > 0:\n    r = {branch}\nelse:\n    r = x\nreturn r")
    finding = only(code)
    assert finding.fix_object.applicability == "unsafe"
    assert "gradient" in finding.fix_object.message
    assert not fix(code, select=["MSL201"]).changed
    assert "ops.where(y > 0" in fix(code, unsafe=True, select=["MSL201"]).fixed


@pytest.mark.parametrize("branch", ["x / 2.0", "x ** 2", "x * y + 1"])
def test_division_by_constants_and_whole_powers_stay_safe(branch):
    finding = only(jit(f"if y > 0:\n    r = {branch}\nelse:\n    r = x\nreturn r"))
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
                    lr = lo
                else:
                    lr = hi
                return lr
        """)
    assert only(code).fix_object.applicability == applicability


def test_learning_rate_schedule_step_argument_may_be_shape_one():
    code = HEAD + textwrap.dedent("""
        class Sched(nn.LearningRateSchedule):
            def construct(self, step):
                lr = step * 0.1 if step < 10 else step * 0.01
                return lr
        """)
    finding = only(code)
    assert finding.fix_object.applicability == "unsafe" and "shape (1,)" in finding.fix_object.message


def test_inherited_global_step_is_a_tensor_and_its_fix_is_unsafe():
    code = HEAD + textwrap.dedent("""
        class Opt(nn.Optimizer):
            def construct(self, grads):
                lr = self.learning_rate * 0.1 if self.global_step < 10 else self.learning_rate * 1.0
                return lr
        """)
    finding = only(code)
    assert finding.fix_object is None or finding.fix_object.applicability == "unsafe"
