"""tools/derive_mindspore_api.py: what it reads off MindSpore's source (the shipped data in ms_lint/data)."""
import ast
import importlib.util
import os
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def _derive():
    spec = importlib.util.spec_from_file_location("derive_api", os.path.join(HERE, "..", "tools", "derive_mindspore_api.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compile_time_helpers_are_the_constexpr_and_primexpr_functions_of_a_module():
    tree = ast.parse(textwrap.dedent("""
        from mindspore import ops
        from mindspore.ops.primitive import constexpr, _primexpr

        @constexpr
        def same(a, b):
            return a == b

        @ops.constexpr(reuse_result=False)
        def shape_size(shape):
            return len(shape)

        @_primexpr
        def empty(shape):
            return 0 in shape

        checked_axis = constexpr(lambda axis: axis)

        @ops.jit
        def graph(x):
            return x

        def plain(x):
            return x
        """))
    names = set(_derive().compile_time_helpers(tree, "mindspore.numpy.utils_const"))
    assert names == {f"mindspore.numpy.utils_const.{n}" for n in ("same", "shape_size", "empty", "checked_axis")}


def test_the_shipped_data_lists_the_helpers_the_value_model_relies_on():
    from ms_lint.analysis.values import compile_time_helpers

    helpers = compile_time_helpers()
    assert "mindspore.numpy.utils_const._check_same_type" in helpers
    assert "mindspore.ops.composite.multitype_ops._constexpr_utils.is_same_type" in helpers
    assert "mindspore.ops.isnan" not in helpers


def test_the_shipped_data_holds_what_mindspore_base_classes_assign_in_init():
    """``TrainOneStepCell.__init__`` sets ``self.grad = ops.GradOperation(get_by_list=True, ...)``; its loss-scale
    subclass adds ``self.hyper_map = ops.HyperMap()``. A Cell's or a primitive's kind is left out (their calls
    count as Tensors, while ``grad_reducer`` gives a tuple)."""
    from ms_lint.analysis.values import _derived_attribute, mindspore_api

    api = mindspore_api()
    assert api["attributes"]["mindspore.nn.TrainOneStepCell"]["grad"] == "grad-op"
    assert "mindspore.nn.TrainOneStepCell" in api["bases"]["mindspore.nn.TrainOneStepWithLossScaleCell"]
    assert _derived_attribute("attributes", ["mindspore.nn.TrainOneStepWithLossScaleCell"], "grad") == "grad-op"
    assert _derived_attribute("attribute_builders", ["mindspore.nn.TrainOneStepWithLossScaleCell"],
                              "hyper_map") == "mindspore.ops.HyperMap"
    assert _derived_attribute("attributes", ["mindspore.nn.Optimizer"], "global_step") == "tensor"
    kinds = {kind for found in api["attributes"].values() for kind in found.values()}
    assert not kinds & _derive().LEFT_OUT


def test_an_attribute_a_mindspore_class_sets_to_values_of_different_kinds_is_left_out():
    """``nn.Pad`` keeps ``paddings`` a tuple in CONSTANT mode and makes it a Tensor in the others: a subclass's
    ``if self.paddings[0][0] > 0`` is no Tensor test, so the data says nothing of it (an independent review)."""
    from ms_lint.data import mindspore_api

    assert "paddings" not in mindspore_api()["attributes"].get("mindspore.nn.Pad", {})
    assert mindspore_api()["attributes"]["mindspore.nn.Pad"]["mode"] == "const"


def test_host_queries_are_read_from_a_module_and_the_package_that_reexports_them(tmp_path):
    """A function of ``mint/distributed/distributed.py`` whose docstring returns a bool is a Python value under
    its module's name and under ``mindspore.mint.distributed``, which imports it; one returning a Tensor is not."""
    site = tmp_path
    package = site / "mindspore" / "mint" / "distributed"
    package.mkdir(parents=True)
    (site / "mindspore" / "communication").mkdir()
    (package / "__init__.py").write_text("from mindspore.mint.distributed.distributed import is_initialized, all_reduce\n")
    (package / "distributed.py").write_text(textwrap.dedent('''
        def is_initialized():
            """Check the group.

            Returns:
                bool, whether the default process group has been initialized.
            """

        def all_reduce(tensor):
            """Reduce.

            Returns:
                Tensor, the reduced tensor.
            """
        '''))
    found = dict(_derive().host_queries(str(site / "mindspore"), str(site)))
    assert found == {"mindspore.mint.distributed.distributed.is_initialized": "const",
                     "mindspore.mint.distributed.is_initialized": "const"}


def test_the_shipped_data_knows_the_host_queries_of_mint_distributed():
    from ms_lint.analysis.values import mindspore_api

    functions = mindspore_api()["functions"]
    assert functions["mindspore.mint.distributed.is_initialized"] == "const"
    assert functions["mindspore.communication.get_rank"] == "const"
    assert "mindspore.mint.distributed.all_reduce" not in functions
    public = set(mindspore_api()["public"])  # what a project's ``from mindspore.ops... import *`` may give
    assert {"mindspore.ops.NotEqual", "mindspore.ops.Cast", "mindspore.nn.TrainOneStepWithLossScaleCell"} <= public
    assert "mindspore.ops.static_size" not in public
