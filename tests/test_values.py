"""The value model: Tensor values vs compile-time constants, as every rule sees them."""
import pathlib
import textwrap

import libcst as cst
import pytest

from ms_lint.config import Config
from ms_lint.context import ModuleContext
from ms_lint.analysis.values import Kind

HEADER = """
import mindspore as ms
from mindspore import nn, ops, Parameter, Tensor
from mindspore.ops import operations as P
N = 200

class Net(nn.Cell):
    def __init__(self, hidden=4, config=None):
        super().__init__()
        self.cells = nn.CellList([nn.Dense(2, 2) for _ in range(3)])
        self.dense = nn.Dense(2, 2)
        self.step = Parameter(Tensor(0, ms.int32), name="step")
        self.max_len = 100
        self.reduce_sum = P.ReduceSum()
        self.use_bias = config.use_bias
        self.weights = self.trainable_params()
        self.scale = 2.0

    def construct(self, x, grads, flag=False, *rest):
        n = x.shape[0]
        s = ops.reduce_sum(x)
        total = 0
        total = total + x
        return {probe}
"""


def context_of(code):
    module = cst.parse_module(code)
    return module, ModuleContext(module, code, "t.py", Config())


def kind_of(expression):
    code = textwrap.dedent(HEADER).replace("{probe}", expression)
    module, context = context_of(code)
    cls = next(s for s in module.body if isinstance(s, cst.ClassDef))
    construct = next(s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "construct")
    ret = construct.body.body[-1].body[0]
    return context.values(construct).kind(ret.value), context.values(construct).fold(ret.value)


@pytest.mark.parametrize("expression", [
    "x.shape", "x.shape[0]", "x.ndim", "x.dtype", "len(grads)", "n", "n * 2", "ops.shape(x)[1]",
    "x is None", "isinstance(x, Tensor)", "self.training", "self.max_len", "flag", "N", "3",
    "self.scale * 2", "x.shape[0] > 2",
])
def test_constants(expression):
    assert kind_of(expression)[0] is Kind.CONST


@pytest.mark.parametrize("expression", [
    "x", "x > 0", "s", "s > 0", "ops.reduce_sum(x) > 0", "(x == 0).all()", "not s", "self.step == 1",
    "self.reduce_sum(x)", "self.dense(x)", "x * 2 + 1", "x[0]", "total", "P.ReduceSum()(x)", "x.sum()",
])
def test_tensors(expression):
    assert kind_of(expression)[0] is Kind.TENSOR


@pytest.mark.parametrize("expression, kind", [
    ("grads", Kind.TENSOR_SEQ),
    ("rest", Kind.TENSOR_SEQ),
    ("self.weights", Kind.TENSOR_SEQ),
    ("self.cells", Kind.CELL_SEQ),
    ("self.dense", Kind.CELL),
    ("self.reduce_sum", Kind.OP),
    ("self.use_bias", Kind.UNKNOWN),
    ("tuple(ops.neg(g) for g in grads)", Kind.TENSOR_SEQ),
    ("[ops.neg(g) for g in grads]", Kind.TENSOR_SEQ),
    ("tuple(str(g) for g in grads)", Kind.UNKNOWN),
])
def test_other_kinds(expression, kind):
    assert kind_of(expression)[0] is kind


@pytest.mark.parametrize("expression, value", [
    ("200", 200), ("N", 200), ("self.max_len", 100), ("N // 2 + 1", 101), ("x.shape[0]", None), ("flag", None),
])
def test_fold_int(expression, value):
    assert kind_of(expression)[1] == value


def helper_kinds(call_args):
    code = textwrap.dedent(f"""
    import mindspore as ms
    from mindspore import ops
    def helper(a, b):
        return a
    @ms.jit
    def f(x):
        return helper({call_args})
    """)
    module, context = context_of(code)
    helper = module.body[2]
    values = context.values(helper)
    return values.env["a"], values.env["b"]


def test_helper_parameters_take_their_kind_from_call_sites():
    assert helper_kinds("x, 3") == (Kind.TENSOR, Kind.CONST)
    assert helper_kinds("x.shape[0], ops.exp(x)") == (Kind.CONST, Kind.TENSOR)


def test_unrolled_loop_index_is_constant_and_elements_follow_the_sequence():
    code = textwrap.dedent("""
    import mindspore as ms
    from mindspore import ops
    @ms.jit
    def f(x, grads):
        for i in range(4):
            a = i
        for g in grads:
            b = g
        for j, g2 in enumerate(grads):
            c = j
            d = g2
        return a
    """)
    module, context = context_of(code)
    env = context.values(module.body[2]).env
    assert env["a"] is Kind.CONST and env["i"] is Kind.CONST
    assert env["b"] is Kind.TENSOR
    assert env["c"] is Kind.CONST and env["d"] is Kind.TENSOR


def test_attributes_set_by_mindspore_base_classes():
    """``nn.Optimizer`` sets ``global_step`` (a Parameter) and ``parameters``; subclasses use them unassigned."""
    code = textwrap.dedent("""
    import mindspore as ms
    from mindspore import nn
    from mindspore.nn.optim.optimizer import Optimizer
    class MyOpt(Optimizer):
        def construct(self, grads):
            return self.global_step == 1, self.parameters, self._parameters, self.other
    class Local(nn.Cell):
        def __init__(self):
            super().__init__()
            self.global_step = 3
        def construct(self, x):
            return self.global_step
    class Step(nn.TrainOneStepCell):
        def construct(self, x):
            return self.weights, self.optimizer
    """)
    module, context = context_of(code)
    classes = [s for s in module.body if isinstance(s, cst.ClassDef)]

    def returned(cls):
        construct = next(s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "construct")
        values = context.values(construct)
        value = construct.body.body[-1].body[0].value
        items = value.elements if isinstance(value, cst.Tuple) else [cst.Element(value)]
        return [values.kind(e.value) for e in items]

    assert returned(classes[0]) == [Kind.TENSOR, Kind.TENSOR_SEQ, Kind.TENSOR_SEQ, Kind.UNKNOWN]
    assert returned(classes[1]) == [Kind.CONST]  # the module's own assignment wins
    assert returned(classes[2]) == [Kind.TENSOR_SEQ, Kind.CELL]


def test_module_constants_rebound_elsewhere_are_not_literals():
    """``STEPS = 100`` is not 100 when an ``if`` at module level or a ``global`` in a function rebinds it."""
    from ms_lint.analysis.values import ModuleConstants

    code = textwrap.dedent("""
    import os
    STEPS = 100
    FAST = 200
    ARGS = 300
    WIDTH = 16
    LAYERS = 4
    LAYERS += 1
    if os.environ.get("FAST"):
        FAST = 2

    def main(args):
        global ARGS
        ARGS = args.steps

    def helper():
        WIDTH = 3
        return WIDTH
    """)
    constants = ModuleConstants(cst.parse_module(code))
    assert constants.values == {"STEPS": 100, "WIDTH": 16}


def test_parameter_tested_for_membership_in_literals_is_a_python_value():
    code = textwrap.dedent("""
    import mindspore as ms
    from mindspore import nn, ops

    class ClipGradients(nn.Cell):
        def construct(self, grads, clip_type, clip_value):
            if clip_type not in (0, 1):
                return grads
            return clip_type
    """)
    module, context = context_of(code)
    cls = next(s for s in module.body if isinstance(s, cst.ClassDef))
    construct = cls.body.body[0]
    env = context.values(construct).env
    assert env["clip_type"] is Kind.CONST
    assert env["clip_value"] is Kind.TENSOR


@pytest.mark.parametrize("expression, kind", [
    ("ops.depend(s, x)", Kind.TENSOR),
    ("ops.depend(n, x)", Kind.CONST),
    ("ops.depend(grads, x)", Kind.TENSOR_SEQ),
])
def test_depend_returns_its_first_argument(expression, kind):
    assert kind_of(expression)[0] is kind


def local_env(code, function_index=-1):
    code = textwrap.dedent(code)
    module, context = context_of(code)
    classes = [s for s in module.body if isinstance(s, cst.ClassDef)]
    construct = next(m for m in classes[-1].body.body if isinstance(m, cst.FunctionDef) and m.name.value == "construct")
    return context.values(construct).env


LOSS_SCALE_CELL = """
import mindspore as ms
from mindspore import nn, ops


def _finite(x):
    return ops.isfinite(x).all()


class TrainStep(nn.Cell):
    def __init__(self, network, optimizer, sens=1.0):
        super().__init__()
        self.network = network
        self.optimizer = optimizer
        self.debug = False

    def process_loss_scale(self, overflow):
        return ops.logical_not(overflow)

    def overflow_of(self, grads):
        return {overflow_body}

    def python_flag(self, step):
        return step > 10

    def maybe(self, x):
        if self.debug:
            return x
        return None

    def construct(self, x, grads):
        loss = self.network(x)
        cond = self.overflow_of(grads)
        overflow = self.process_loss_scale(cond)
        flag = self.python_flag(3)
        unsure = self.maybe(x)
        finite = _finite(loss)
        for i, (g, p) in enumerate(zip(grads, self.optimizer.parameters)):
            last_grad = g
            index = i
        return overflow
"""


def test_method_results_take_the_kind_their_returns_give():
    env = local_env(LOSS_SCALE_CELL.replace("{overflow_body}", "ops.isfinite(grads[0]).all()"))
    assert env["cond"] is Kind.TENSOR
    assert env["overflow"] is Kind.TENSOR  # returns logical_not of a Tensor argument
    assert env["flag"] is Kind.UNKNOWN  # returns a Python bool, but a call is never a compile-time constant
    assert env["unsure"] is Kind.UNKNOWN  # a Tensor on one path, None on the other: not called a Tensor
    assert env["finite"] is Kind.TENSOR  # a module function


def test_a_returned_parameter_follows_the_argument():
    env = local_env(LOSS_SCALE_CELL.replace("{overflow_body}", "self.unknown_helper(grads)"))
    assert env["cond"] is Kind.UNKNOWN  # a method this module does not define
    code = LOSS_SCALE_CELL.replace("{overflow_body}", "grads").replace(
        "return ops.logical_not(overflow)", "return overflow")
    assert local_env(code)["overflow"] is Kind.TENSOR_SEQ  # a returned parameter is the argument's kind


def test_recursive_helpers_end_as_unknown():
    code = LOSS_SCALE_CELL.replace("{overflow_body}", "self.overflow_of(grads)")
    assert local_env(code)["cond"] is Kind.UNKNOWN


def test_enumerate_of_zip_binds_each_element():
    env = local_env(LOSS_SCALE_CELL.replace("{overflow_body}", "grads"))
    assert env["index"] is Kind.CONST
    assert env["last_grad"] is Kind.TENSOR


FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"


def test_a_call_result_does_not_make_a_rebound_name_a_tensor():
    """``FeaturePicker`` in the fixture: ``features`` first holds what an unknown backbone returns (a list of
    (name, tensor) pairs), so the Tensor that ``self.pool`` returns later must not make ``item[0] == self.key`` a
    Tensor condition."""
    env = local_env((FIXTURES / "branches" / "overflow_from_helpers.py").read_text(encoding="utf-8"))
    assert env["features"] is Kind.UNKNOWN
    assert env["item"] is Kind.UNKNOWN


SEQUENCES = """
import mindspore as ms
from mindspore import nn, ops
from mindspore.ops import composite as C


class Clip(nn.Cell):
    def construct(self, grads, bound):
        clipped = ()
        for grad in grads:
            clipped = clipped + (ops.clip_by_value(grad, -bound, bound),)
        return clipped


class Step(nn.Cell):
    def __init__(self, network, weights):
        super().__init__()
        self.network = network
        self.weights = weights
        self.grad = C.GradOperation(get_by_list=True)
        self.clip = Clip()
        self.hyper_map = C.HyperMap()
        self.add = ops.Add()
        self.dense = nn.Dense(2, 2)

    def construct(self, x, bound):
        grads = self.grad(self.network, self.weights)(x)
        clipped = self.clip(grads, bound)
        summed = self.hyper_map(self.add, clipped, grads)
        total = self.dense(x)
        return summed, total
"""


def sequence_kinds():
    module = cst.parse_module(SEQUENCES)
    context = ModuleContext(module, SEQUENCES, "sequences.py", Config())
    found = {}
    for info in context.scope.graph_functions():
        found[(info.owner, info.node.name.value)] = context.values(info.node).env
    return found


def test_tuple_accumulation_gradients_hypermap_results_and_sub_cell_returns_are_tensor_sequences():
    kinds = sequence_kinds()
    assert kinds[("Clip", "construct")]["clipped"] is Kind.TENSOR_SEQ  # () then clipped + (g,)
    step = kinds[("Step", "construct")]
    assert step["grads"] is Kind.TENSOR_SEQ  # GradOperation(get_by_list=True)(net, weights)(x)
    assert step["clipped"] is Kind.TENSOR_SEQ  # the sub-cell's construct returns the tuple it built
    assert step["summed"] is Kind.TENSOR_SEQ  # a HyperMap over tensor sequences
    assert step["total"] is Kind.TENSOR  # a MindSpore layer: a Tensor, as before


GRADIENTS = """
import mindspore as ms
from mindspore import nn, ops
from mindspore.ops import composite as C


class Grads(nn.Cell):
    def __init__(self, network, weights):
        super().__init__()
        self.network = network
        self.weights = weights
        self.first = ops.GradOperation()
        self.first_off = C.GradOperation(get_all=False, get_by_list=False)
        self.first_sens = ops.GradOperation(sens_param=True)
        self.every_input = ops.GradOperation(get_all=True)
        self.by_list = ops.GradOperation(get_by_list=True)
        self.both = ops.GradOperation(get_all=True, get_by_list=True)
        self.positional = ops.GradOperation(True)
        self.flagged = ops.GradOperation(get_all=flag)

    def construct(self, x, y, pair, sens):
        g = self.first(self.network)(x, y)
        g_off = self.first_off(self.network)(x, y)
        g_sens = self.first_sens(self.network)(x, y, sens)
        g_inline = ops.GradOperation()(self.network)(x)
        g_pair = self.first(self.network)((x, y), y)
        g_keyword = self.first(self.network)(x=x, y=y)
        fn = self.first(self.network)
        g_all = self.every_input(self.network)(x, y)
        g_list = self.by_list(self.network, self.weights)(x, y)
        g_both = self.both(self.network, self.weights)(x, y)
        g_positional = self.positional(self.network)(x, y)
        g_flagged = self.flagged(self.network)(x, y)
        g_attribute = self.first(self.network)(self.weights, y)
        g_constant = self.first(self.network)(ms.Tensor([1.0, 2.0]), y)
        return g
"""


def test_gradient_of_the_first_input_only_is_a_tensor():
    module = cst.parse_module(GRADIENTS)
    context = ModuleContext(module, GRADIENTS, "gradients.py", Config())
    cls = next(s for s in module.body if isinstance(s, cst.ClassDef))
    construct = next(s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "construct")
    env = context.values(construct).env
    # GradOperation() / get_all=False, get_by_list=False / sens_param: the gradient w.r.t. the first input.
    for name in ("g", "g_off", "g_sens", "g_inline"):
        assert env[name] is Kind.TENSOR, name
    assert env["fn"] is Kind.GRAD_FN_FIRST  # the gradient function itself is not a Tensor
    # The first input is a tuple, or passed by keyword: its gradient's kind is not known.
    assert env["g_pair"] is Kind.UNKNOWN
    assert env["g_keyword"] is Kind.UNKNOWN
    # get_all=True: a tuple, one gradient per input; get_by_list=True: one per weight; not a Tensor.
    assert env["g_all"] is not Kind.TENSOR
    assert env["g_list"] is Kind.TENSOR_SEQ
    assert env["g_both"] is not Kind.TENSOR
    assert env["g_positional"] is not Kind.TENSOR  # GradOperation(True): get_all=True, by position
    assert env["g_flagged"] is not Kind.TENSOR  # get_all not a literal
    # A constant first input (a Tensor attribute, a Tensor literal): MindSpore 2.10 gives ``()``, no gradient.
    assert env["g_attribute"] is Kind.UNKNOWN
    assert env["g_constant"] is Kind.UNKNOWN


@pytest.mark.parametrize("expression, kind", [
    # MindSpore's @constexpr helpers (listed by tools/derive_mindspore_api.py) give Python values.
    ("ms.numpy.utils_const._check_same_type(x.dtype, ms.float32)", Kind.UNKNOWN),
    ("ops.composite.multitype_ops._constexpr_utils.is_same_type(x.dtype, ms.int32)", Kind.UNKNOWN),
    ("ms.numpy.isnan(x)", Kind.TENSOR),
    ("ops.isnan(x)", Kind.TENSOR),
    # private but not compile-time: a Tensor as before (mindformers reads the squared local norm this way)
    ("ops._grad_experimental.grad_comm_ops.get_squared_device_local_norm_param()", Kind.TENSOR),
])
def test_compile_time_mindspore_helpers_are_not_the_tensor_api(expression, kind):
    assert kind_of(expression)[0] is kind


@pytest.mark.parametrize("test, names", [
    ("isinstance(a, (list, tuple))", {"a"}),
    ("isinstance(a, int) and isinstance(b, float)", {"a", "b"}),
    ("isinstance(a, Tensor)", set()),
    ("isinstance(a, (int, Tensor))", set()),
    ("isinstance(a, list) or isinstance(b, list)", set()),
    ("isinstance(a.b, list)", set()),
])
def test_isinstance_tests_that_prove_python_values(test, names):
    from ms_lint.analysis.narrowing import python_typed

    assert python_typed(cst.parse_expression(test)) == names


def test_a_static_method_called_through_self_binds_its_first_argument_to_its_first_parameter():
    code = textwrap.dedent("""
        import mindspore as ms
        from mindspore import nn, ops


        class Net(nn.Cell):
            @staticmethod
            def pick(x, flag=False):
                if x.sum() > 0:
                    return x
                return x * 2

            def construct(self, x):
                return self.pick(x)
        """)
    module, context = context_of(code)
    cls = next(s for s in module.body if isinstance(s, cst.ClassDef))
    pick = next(s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "pick")
    # ``x`` is what construct passes (a Tensor), not ``flag``: with ``self`` dropped it would bind one place off
    assert context.values(pick).kind(cst.parse_expression("x")) is Kind.TENSOR


def test_a_chain_of_single_assignments_keeps_kinds_and_ints_however_long():
    # Each name is bound once; every link reads the one before it. Two passes over the bindings once lost the
    # third link (``c``) and everything after it.
    code = textwrap.dedent("""
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def f(x):
            a = x * 2
            b = a + 1
            c = b + 1
            d = ops.exp(c) - 1
            n = 4
            m = n * 2
            k = m + 1
            steps = k * 10
            return d
        """)
    module, context = context_of(code)
    values = context.values(module.body[2])
    assert [values.env[name] for name in "abcd"] == [Kind.TENSOR] * 4
    assert [values.fold(cst.parse_expression(name)) for name in ("n", "m", "k", "steps")] == [4, 8, 9, 90]


def test_a_name_used_in_a_loop_before_its_only_binding_takes_that_binding_on_the_second_pass():
    code = textwrap.dedent("""
        import mindspore as ms


        @ms.jit
        def f(x, n=3):
            for i in range(n):
                if i > 0:
                    x = x + prev
                prev = x * 2
            return x
        """)
    module, context = context_of(code)
    values = context.values(module.body[1])
    assert values.env["prev"] is Kind.TENSOR
    assert values.kind(cst.parse_expression("x + prev")) is Kind.TENSOR


def test_a_method_chain_is_evaluated_in_time_linear_in_its_length(monkeypatch):
    # ``_kind_Call`` reads the receiver, and the callee's ``_kind_Attribute`` read it again: each link doubled the
    # work, so a 12-link builder chain took thousands of evaluations (mindspore-rl's MCTS.__init__: seconds).
    from ms_lint.analysis import values as values_module

    def evaluations(links):
        chain = "Builder()" + "".join(f".add_attr('k{i}', {i})" for i in range(links))
        code = textwrap.dedent(f"""
            import mindspore as ms


            @ms.jit
            def f(x):
                op = {chain}
                return op
            """)
        module, context = context_of(code)
        model = context.values(module.body[1])
        calls = []
        original = values_module.ExpressionKinds.kind

        def counted(self, expr):
            calls.append(expr)
            return original(self, expr)

        monkeypatch.setattr(values_module.ExpressionKinds, "kind", counted)
        model.kind(cst.parse_expression(chain))
        monkeypatch.setattr(values_module.ExpressionKinds, "kind", original)
        return len(calls)

    short, long = evaluations(6), evaluations(12)
    assert long <= 2.5 * short  # linear: about twice the work for twice the links (it was 2^6 = 64 times)


def test_callers_are_read_only_for_a_helper_whose_own_code_names_a_parameter(monkeypatch):
    code = textwrap.dedent("""
        import mindspore as ms
        from mindspore import nn


        def factory(cls):
            def make(*args):
                return cls(*args)
            return make


        def scale(x, factor):
            return x * factor


        class Net(nn.Cell):
            def construct(self, x):
                op = factory(nn.ReLU)
                return scale(x, 2)
        """)
    module, context = context_of(code)
    asked = []
    original = ModuleContext._param_kinds_from_calls

    def recorded(self, func, bound):
        asked.append(func.name.value)
        return original(self, func, bound)

    monkeypatch.setattr(ModuleContext, "_param_kinds_from_calls", recorded)
    defs = {node.name.value: node for node in module.body if isinstance(node, cst.FunctionDef)}
    context.values(defs["factory"])  # ``cls`` is named only inside ``make``: no kind of it is ever asked
    assert asked == []
    assert context.values(defs["scale"]).env["x"] is Kind.TENSOR  # from construct's call
    assert asked == ["scale"]


def _probe_expression(expression):
    code = textwrap.dedent(HEADER).replace("{probe}", expression)
    module, context = context_of(code)
    cls = next(s for s in module.body if isinstance(s, cst.ClassDef))
    construct = next(s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "construct")
    return context.values(construct), construct.body.body[-1].body[0].value


@pytest.mark.parametrize("expression, never", [
    ("x is None", True), ("s is not None and x in grads", True), ("not (x is None)", True), ("'train' == x", True),
    ("1 < 2", True), ("None", True), ("not 3", True),
    ("x > 0", False), ("s", False), ("x is None or s > 0", False), ("not s", False), ("1 < s", False),
])
def test_never_tensor_is_a_syntactic_bound_of_kind(expression, never):
    # ``never_tensor`` lets MSL201 skip the value model: when it says so, the model must agree, whatever the
    # names hold (here ``x`` and ``s`` are Tensors)
    from ms_lint.analysis.values import never_tensor

    values, expr = _probe_expression(expression)
    assert never_tensor(expr) is never
    if never:
        assert values.kind(expr) is not Kind.TENSOR
    else:
        assert values.kind(expr) is Kind.TENSOR


def fixture_graph_conditions(kinds):
    """(path, context, graph function, node) for every node of these kinds in the fixtures' graph functions."""
    from ms_lint.walk import find

    from corpus_support import fixture_sources

    for path in fixture_sources():
        try:
            module, context = context_of(path.read_text(encoding="utf-8"))
        except cst.ParserSyntaxError:
            continue
        for func in context.scope.functions:
            if context.scope.is_graph_function(func):
                for node in find(func.body, kinds):
                    yield path, context, func, node


def test_never_tensor_agrees_with_the_model_on_every_fixture_condition():
    from ms_lint.analysis.values import never_tensor

    checked = 0
    for path, context, func, node in fixture_graph_conditions((cst.If, cst.IfExp)):
        if never_tensor(node.test):
            checked += 1
            assert context.values(func).kind(node.test) is not Kind.TENSOR, (path, cst.Module([]).code_for_node(node.test))
    assert checked > 20


@pytest.mark.parametrize("expression, free", [
    ("self.use_bias", True), ("not self.step", True), ("self.max_len > 1 and self.scale", True),
    ("self.step.T", True), ("ms.float32 == self.scale", True), ("self.step > 0 or 1 < 2", True),
    ("s > 0", False), ("s.T", False), ("self.dense(x)", False), ("n > 1", False), ("x.shape[0] > 1", False),
    ("flag", False), ("self.use_bias and flag", False), ("self.reduce_sum(x) > 0", False),
])
def test_reads_no_locals_gives_the_models_kind_without_the_model(expression, free):
    # MSL201 decides conditions that read only the class's attributes with ``class_kinds``, never building the
    # function's value model: its kind must be the model's, Tensor (``self.step``) or not (``self.use_bias``)
    from ms_lint.analysis.values import reads_no_locals

    code = textwrap.dedent(HEADER).replace("{probe}", expression)
    module, context = context_of(code)
    cls = next(s for s in module.body if isinstance(s, cst.ClassDef))
    construct = next(s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "construct")
    expr = construct.body.body[-1].body[0].value
    assert reads_no_locals(expr) is free
    if free:
        assert context.class_kinds(construct).kind(expr) is context.values(construct).kind(expr)


def test_reads_no_locals_agrees_with_the_model_on_every_fixture_condition():
    from ms_lint.analysis.values import reads_no_locals

    checked = tensors = 0
    for path, context, func, node in fixture_graph_conditions((cst.If, cst.IfExp, cst.While)):
        if reads_no_locals(node.test):
            checked += 1
            kind = context.values(func).kind(node.test)
            tensors += kind is Kind.TENSOR
            assert context.class_kinds(func).kind(node.test) is kind, (path, cst.Module([]).code_for_node(node.test))
    assert checked > 30 and tensors > 3  # flags and Tensor attributes (``if self.step < 1000:``) both seen


def test_msl201_decides_an_if_on_a_flag_attribute_without_a_value_model(monkeypatch):
    import ms_lint.context
    from ms_lint.testing import lint

    built = []
    original = ms_lint.context.FunctionValues

    def counting(*args, **kwargs):
        built.append(args[4].name.value)
        return original(*args, **kwargs)

    monkeypatch.setattr(ms_lint.context, "FunctionValues", counting)
    code = """
        import mindspore as ms
        from mindspore import nn, Parameter, Tensor

        class Head(nn.Cell):
            def __init__(self, has_bias=True):
                super().__init__()
                self.has_bias = has_bias
                self.step = Parameter(Tensor(0, ms.int32))

            def construct(self, x):
                if self.has_bias and not self.training:
                    x = x + 1
                return x
        """
    assert lint(code, select=["MSL201"]) == []
    assert built == []  # decided from the class's attributes alone
    flagged = lint(code.replace("self.has_bias and", "self.step < 10 and"), select=["MSL201"])
    assert [f.code for f in flagged] == ["MSL201"]  # a Tensor attribute still goes the whole way
    assert built == ["construct"]


# -- ``self.config.<field>``: a model's configuration object holds Python values (mindnlp's Encodec) --------------
CONFIG_HOLDER = """
import mindspore as ms
from mindspore import nn, ops


class Base(nn.Cell):
    def __init__(self, config):
        super().__init__()
        {bind}


class Model(Base):
    def construct(self, x):
        return {probe}
"""


def config_kind(bind, probe):
    code = textwrap.dedent(CONFIG_HOLDER).replace("{bind}", bind).replace("{probe}", probe)
    module, context = context_of(code)
    cls = [s for s in module.body if isinstance(s, cst.ClassDef)][-1]
    construct = cls.body.body[0]
    return context.values(construct).kind(construct.body.body[-1].body[0].value)


@pytest.mark.parametrize("bind", [
    "self.config = config", "self.config = config.text_config", "self.config = ms.train.Config()",
    "pass",  # kept by a base in another module (``PreTrainedModel.__init__``)
])
def test_fields_of_a_configuration_holder_are_python_values(bind):
    for probe in ("self.config.chunk_length", "self.config.vision.depth", "self.config.sizes[0]"):
        assert config_kind(bind.replace("ms.train.Config()", "EncodecConfig()"), probe) is Kind.CONST
    assert config_kind(bind, "x.sum() > self.config.threshold") is Kind.TENSOR


@pytest.mark.parametrize("bind", [
    "self.config = ops.ones((2,))",  # not a configuration object
    "self.config = self.make()",
    "self.config, self.other = config, None",  # written in a way the writes do not show
])
def test_a_holder_bound_to_something_else_is_not_read_as_a_configuration(bind):
    assert config_kind(bind, "self.config.chunk_length") is Kind.UNKNOWN


def test_a_project_class_named_config_that_keeps_a_parameter_holds_a_tensor():
    code = textwrap.dedent("""
    import mindspore as ms
    from mindspore import nn, Parameter, Tensor


    class ScaleConfig:
        def __init__(self, dim):
            self.gate = Parameter(Tensor(0.5, ms.float32), name="gate")


    class Model(nn.Cell):
        def __init__(self, dim):
            super().__init__()
            self.config = ScaleConfig(dim)

        def construct(self, x):
            return self.config.gate > 0
    """)
    module, context = context_of(code)
    construct = [s for s in module.body if isinstance(s, cst.ClassDef)][-1].body.body[1]
    assert context.values(construct).kind(construct.body.body[-1].body[0].value) is Kind.TENSOR


@pytest.mark.parametrize("annotation, kind", [
    ("InferenceSession", Kind.UNKNOWN),  # a class of the project: no Tensor by its declared type
    ("nn.Cell", Kind.UNKNOWN),
    ("ops.Size", Kind.UNKNOWN),
    ("ms.Tensor", Kind.TENSOR),
    ("mindspore.common.tensor.Tensor", Kind.TENSOR),
    ("ms.COOTensor", Kind.TENSOR),
    ("ms.tensor", Kind.TENSOR),  # mindone writes the function ``mindspore.tensor`` as a type
    ("Any", Kind.TENSOR),  # says nothing: the entry-point guess stands
    (None, Kind.TENSOR),
    ("Array", Kind.TENSOR),  # ``Array = ms.Tensor``: a name the module binds, no class (an independent review)
    ("tuple", Kind.TENSOR),  # a builtin: no evidence either way
    ("np.ndarray", Kind.TENSOR),
    ("Callable", Kind.UNKNOWN),
])
def test_a_construct_parameter_annotated_with_another_class_is_no_tensor_guess(annotation, kind):
    """mindone's SAM2 video model: ``construct(self, inference_session: Sam2VideoInferenceSession, ...)`` and a
    frame index from ``inference_session.add_new_frame(...)`` was taken for a Tensor."""
    code = textwrap.dedent(f"""
    import mindspore
    import mindspore as ms
    import numpy as np
    from typing import Any, Callable
    from mindspore import nn, ops

    Array = ms.Tensor


    class InferenceSession:
        pass


    class Model(nn.Cell):
        def construct(self, session{': ' + annotation if annotation else ''}):
            return session
    """)
    module, context = context_of(code)
    construct = [s for s in module.body if isinstance(s, cst.ClassDef)][-1].body.body[0]
    assert context.values(construct).kind(construct.body.body[-1].body[0].value) is kind


@pytest.mark.parametrize("signature, name, kind", [
    ("gradients: tuple, loss: ms.Tensor = None", "gradients", Kind.TENSOR_SEQ),  # mindsponge's optimizers
    ("weights: ParameterTuple", "weights", Kind.TENSOR_SEQ),
    ("x, n: Steps = 200", "n", Kind.CONST),  # a literal default says more than the class
])
def test_a_class_annotation_does_not_override_the_name_or_the_default(signature, name, kind):
    code = textwrap.dedent(f"""
    import mindspore as ms
    from mindspore import nn, ParameterTuple


    class Steps:
        pass


    class Model(nn.Cell):
        def construct(self, {signature}):
            return {name}
    """)
    module, context = context_of(code)
    construct = [s for s in module.body if isinstance(s, cst.ClassDef)][-1].body.body[0]
    assert context.values(construct).kind(construct.body.body[-1].body[0].value) is kind


def test_a_list_grown_by_appending_tensors_is_handed_on_as_a_tensor_sequence():
    """``decoded = []`` then ``decoded.append(frame)``: the empty display reads as a constant, right for a list of
    names or flags; what a caller hands a helper (``handed_kind``) is a sequence of Tensors when only Tensors are
    appended."""
    code = textwrap.dedent('''
import mindspore as ms
from mindspore import nn, ops


class Decoder(nn.Cell):
    def construct(self, codes, params):
        decoded = []
        for code in codes:
            decoded.append(ops.tanh(code))
        names = []
        for p in params:
            names.append(p.name)
        mixed = []
        mixed.append(ops.tanh(codes))
        mixed.extend(params)
        return decoded, names, mixed
''')
    module, context = context_of(code)
    construct = [f for f in module.body[-1].body.body if isinstance(f, cst.FunctionDef)][0]
    model = context.values(construct)
    returned = construct.body.body[-1].body[0].value.elements
    kinds = [(model.kind(e.value), model.handed_kind(e.value)) for e in returned]
    assert kinds == [(Kind.CONST, Kind.TENSOR_SEQ), (Kind.CONST, Kind.CONST), (Kind.CONST, Kind.CONST)]
