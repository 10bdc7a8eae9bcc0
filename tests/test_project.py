"""Project-wide analysis: the index (ms_lint/analysis/index.py) and what it lets each file's rules see.

Every test builds a small package of its own: a base Cell in one module and its subclass in the next, helpers
called across modules, re-exports through ``__init__.py``, an installed package found without importing it.
"""
import ast
import json
import os
import re
import sys
import textwrap

import pytest
from project_support import json_check, make

from ms_lint.analysis.index import ProjectIndex, constructor_value
from ms_lint.analysis.layout import is_test_module
from ms_lint.cli import main

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def check(tmp_path, capsys, *args):
    code, found = json_check(tmp_path, capsys, *args)
    return code, [(f["path"].replace(os.sep, "/"), f["line"], f["code"]) for f in found]


BASE = """\
    from mindspore import nn, ops


    class BaseDecoder(nn.Cell):
        def __init__(self, max_len=25):
            super().__init__()
            self.num_steps = max_len + 1
            self.reduce = ops.ReduceSum()

        def overflow(self, x):
            return ops.isinf(x).any()
    """

HEAD = """\
    from mindspore import ops

    from .base import BaseDecoder


    class Head(BaseDecoder):
        def construct(self, x):
            for _ in range(self.num_steps):
                x = ops.tanh(x)
            if self.overflow(x):
                x = x * 0
            return self.reduce(x, -1)
    """


def package(tmp_path, **extra):
    files = {"pkg/__init__.py": "from .heads.head import Head\n", "pkg/heads/__init__.py": "",
             "pkg/heads/base.py": BASE, "pkg/heads/head.py": HEAD}
    files.update(extra)
    return make(tmp_path, files)


def test_a_cell_through_a_base_in_another_module_is_graph_code(tmp_path, capsys):
    package(tmp_path)
    code, found = check(tmp_path, capsys, "pkg")
    assert code == 1
    # the constructor default gives the trip count; the base's method returns a Tensor, so the `if` is one
    assert found == [("pkg/heads/head.py", 8, "MSL103"), ("pkg/heads/head.py", 10, "MSL201")]


def test_checking_one_file_still_indexes_its_whole_package(tmp_path, capsys):
    package(tmp_path)
    code, found = check(tmp_path, capsys, "pkg/heads/head.py")
    assert [f[2] for f in found] == ["MSL103", "MSL201"]


def test_a_file_alone_outside_its_package_sees_nothing(tmp_path, capsys):
    (tmp_path / "head.py").write_text(textwrap.dedent(HEAD).replace("from .base import", "from base_missing import"))
    code, found = check(tmp_path, capsys, "head.py")
    assert found == [] and code == 0  # the base cannot be read and Head has a construct: a Cell, but nothing known


def test_a_construction_with_a_config_value_makes_the_count_unknown(tmp_path, capsys):
    package(tmp_path, **{"pkg/build.py": """\
        from .heads.head import Head


        def build(cfg):
            return Head(max_len=cfg.max_len)
        """})
    code, found = check(tmp_path, capsys, "pkg")
    assert [f[2] for f in found] == ["MSL201"]


def test_a_literal_construction_refines_the_count_and_super_init_counts(tmp_path, capsys):
    package(tmp_path, **{"pkg/heads/short.py": """\
        from .base import BaseDecoder


        class Short(BaseDecoder):
            def __init__(self):
                super().__init__(max_len=4)
        """})
    index = ProjectIndex.for_files([str(tmp_path / "pkg/heads/head.py")])
    value, origin = constructor_value(index, ("pkg.heads.base", "BaseDecoder"), "max_len")
    assert value == 4 and "as the project builds BaseDecoder" in origin  # the only construction passes 4
    assert index.constructions(("pkg.heads.base", "BaseDecoder")) == [([], {"max_len": 4})]


# mindocr's RobustScanner: the head's constructor default reaches the decoder's loop through two ``__init__``s
PASSED_ON = {
    "pkg/heads/holder.py": """\
        from mindspore import nn

        from .base import BaseDecoder


        class Holder(nn.Cell):
            def __init__(self, dim, max_len=40, **kwargs):
                super().__init__()
                self.decoder = BaseDecoder(max_len=max_len)

            def construct(self, x):
                return self.decoder(x)
        """,
    "pkg/heads/outer.py": """\
        from mindspore import nn

        from .holder import Holder


        class Outer(nn.Cell):
            def __init__(self, size=30):
                super().__init__()
                self.holder = Holder(8, size)

            def construct(self, x):
                return self.holder(x)
        """,
}


def passed_on_count(tmp_path, **extra):
    package(tmp_path, **{**PASSED_ON, **extra})
    index = ProjectIndex.for_files([str(tmp_path / "pkg/heads/head.py")])
    return constructor_value(index, ("pkg.heads.base", "BaseDecoder"), "max_len")


def test_a_parameter_an_init_passes_on_counts_what_its_class_is_built_with(tmp_path, capsys):
    """``BaseDecoder(max_len=max_len)`` in ``Holder.__init__``, and ``Holder(8, size)`` in ``Outer.__init__``:
    the count is Outer's default, 30, two constructors up; the finding says where it comes from."""
    value, origin = passed_on_count(tmp_path)
    assert value == 30
    assert origin == "the default `size=30` (pkg/heads/outer.py:7), passed on by Outer, passed on by Holder"
    code, found = check(tmp_path, capsys, "pkg")
    assert ("pkg/heads/head.py", 8, "MSL103") in found


@pytest.mark.parametrize("build, expected", [
    ("Outer(size=4)", 4),  # a literal construction of the outermost class refines its default
    ("Outer(size=cfg.size)", None),  # an unknown value anywhere up the chain: unknown
    # ``**cfg`` may set it or leave the default (mindocr's ``SARHead(..., **sar_args)``): the default counts, and
    # the origin says the dict may set it
    ("Outer(**cfg)", 30),
    ("Holder(8, **cfg)", 40),  # Holder's own default, larger than Outer's 30
    ("Outer(size=4, **cfg)", 4),  # named beside the dict: the dict cannot set it too
    ("Outer(4, **cfg)", 4),  # ... or passed by position
    ("Outer(*cfg)", None),  # unpacked positionally: any parameter, unknown
    ("Holder(8, 20)", 30),  # the largest of what the project builds with
])
def test_constructions_up_the_chain_refine_or_unknown_the_count(tmp_path, build, expected):
    value, origin = passed_on_count(tmp_path, **{"pkg/build.py": f"""\
        from .heads.outer import Outer
        from .heads.holder import Holder


        def build(cfg):
            return {build}
        """})
    assert value == expected
    assert ("may set it" in origin) == ("**" in build and "4" not in build)


def test_an_init_handing_on_its_own_kwargs_leaves_the_count_to_what_its_class_is_built_with(tmp_path):
    """``super().__init__(**kwargs)`` in a subclass built with ``max_len=4``: not the base's default (an
    independent review's reproducer); what the subclass is built with is not followed, so it is unknown."""
    package(tmp_path, **{"pkg/heads/short.py": """\
        from .base import BaseDecoder


        class ShortDecoder(BaseDecoder):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)


        def build():
            return ShortDecoder(max_len=4)
        """})
    index = ProjectIndex.for_files([str(tmp_path / "pkg/heads/head.py")])
    assert constructor_value(index, ("pkg.heads.base", "BaseDecoder"), "max_len") == (None, "")


@pytest.mark.parametrize("rebinding", [
    "max_len = max_len * 2",
    "max_len += 1",
    "for max_len in (1, 2): pass",
    "fn = lambda max_len: BaseDecoder(max_len=max_len)",
    "[max_len for max_len in range(3)]",
    "global max_len",
    "import max_len",
])
def test_a_parameter_its_init_may_rebind_is_not_passed_on(tmp_path, rebinding):
    holder = PASSED_ON["pkg/heads/holder.py"].replace(
        "        super().__init__()\n", f"        super().__init__()\n                {rebinding}\n")
    assert rebinding in holder
    value, _ = passed_on_count(tmp_path, **{"pkg/heads/holder.py": holder})
    assert value is None


@pytest.mark.parametrize("init, build, expected", [
    # a keyword-only parameter after ``*args`` takes no positional argument: the default, 25, stands
    ("def __init__(self, hidden, *extra, max_len=25):", "BaseDecoder(16, 40)", 25),
    ("def __init__(self, hidden, *, max_len=25):", "BaseDecoder(16, max_len=40)", 40),
    ("def __init__(self, hidden, max_len=25):", "BaseDecoder(16, 40)", 40),
])
def test_only_positional_parameters_take_positional_arguments(tmp_path, init, build, expected):
    base = BASE.replace("def __init__(self, max_len=25):", init)
    assert init in base
    package(tmp_path, **{"pkg/heads/base.py": base, "pkg/build.py": f"""\
        from .heads.base import BaseDecoder


        def build():
            return {build}
        """})
    index = ProjectIndex.for_files([str(tmp_path / "pkg/heads/head.py")])
    assert constructor_value(index, ("pkg.heads.base", "BaseDecoder"), "max_len")[0] == expected


@pytest.mark.parametrize("subclass", [
    # ``Base.__init__(self, ...)`` builds the base as ``super().__init__(...)`` does
    "class Short(BaseDecoder):\n    def __init__(self):\n        BaseDecoder.__init__(self, max_len=4)\n",
    # a mixin without ``__init__`` first: ``super().__init__`` reaches BaseDecoder's
    "class Mixin:\n    pass\n\n\nclass Short(Mixin, BaseDecoder):\n    def __init__(self):\n"
    "        super().__init__(max_len=4)\n",
])
def test_the_base_a_subclass_init_builds_is_the_one_python_runs(tmp_path, subclass):
    package(tmp_path, **{"pkg/heads/short.py": "from .base import BaseDecoder\n\n\n" + subclass})
    index = ProjectIndex.for_files([str(tmp_path / "pkg/heads/head.py")])
    assert constructor_value(index, ("pkg.heads.base", "BaseDecoder"), "max_len")[0] == 4


def test_a_mixin_with_its_own_init_takes_the_super_call(tmp_path):
    """``class Short(Mixin, BaseDecoder)`` with ``Mixin.__init__``: Python runs the mixin's, not BaseDecoder's."""
    package(tmp_path, **{"pkg/heads/short.py": """\
        from .base import BaseDecoder


        class Mixin:
            def __init__(self, **kwargs):
                self.log = True


        class Short(Mixin, BaseDecoder):
            def __init__(self):
                super().__init__(max_len=4)
        """})
    index = ProjectIndex.for_files([str(tmp_path / "pkg/heads/head.py")])
    assert index.constructions(("pkg.heads.base", "BaseDecoder")) == []
    assert index.constructions(("pkg.heads.short", "Mixin")) == [([], {"max_len": 4})]


def test_a_cycle_of_passed_on_parameters_ends(tmp_path):
    """A class that builds itself from its own parameter: the count is unknown, and the recursion ends."""
    value, _ = passed_on_count(tmp_path, **{"pkg/heads/outer.py": """\
        from mindspore import nn

        from .holder import Holder


        class Outer(nn.Cell):
            def __init__(self, size=30):
                super().__init__()
                self.holder = Holder(8, size)
                self.again = Outer(size)
        """})
    assert value is None


def test_an_edit_of_the_outer_default_changes_the_decoder_module_s_fingerprint(tmp_path):
    """The decoder's findings read Outer's default two modules away: the results cache must see its edit."""
    package(tmp_path, **PASSED_ON)
    head = str(tmp_path / "pkg/heads/head.py")
    before = ProjectIndex.for_files([head]).fingerprint_for(head)
    outer = tmp_path / "pkg/heads/outer.py"
    outer.write_text(outer.read_text().replace("size=30", "size=3"))
    after = ProjectIndex.for_files([head]).fingerprint_for(head)
    assert before != after
    assert passed_on_count(tmp_path)[0] == 30  # ``package`` rewrote it


def test_the_index_follows_reexports_and_relative_imports(tmp_path):
    package(tmp_path)
    index = ProjectIndex.for_files([str(tmp_path / "pkg/__init__.py")])
    assert index.resolve("pkg.Head") == ("pkg.heads.head", "Head")
    assert index.class_ref("pkg.heads.head", "BaseDecoder") == ("pkg.heads.base", "BaseDecoder")
    assert index.is_cell(("pkg.heads.head", "Head"))
    assert [ref for ref in index.method_owner_chain(("pkg.heads.head", "Head"))] == [
        ("pkg.heads.head", "Head"), ("pkg.heads.base", "BaseDecoder")]


def test_methods_of_a_base_reached_from_a_subclass_construct_are_graph_code(tmp_path, capsys):
    make(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": """\
            from mindspore import nn, ops


            class Base(nn.Cell):
                def per_row(self, x):
                    out = []
                    for i in range(x.shape[0]):
                        out.append(ops.relu(x[i]))
                    return ops.stack(out)

                def unused(self, x):
                    for i in range(x.shape[0]):
                        x = x + 1
                    return x
            """,
        "pkg/net.py": """\
            from .base import Base


            class Net(Base):
                def construct(self, x):
                    return self.per_row(x)
            """,
    })
    code, found = check(tmp_path, capsys, "pkg")
    assert found == [("pkg/base.py", 7, "MSL101")]  # `unused` is never called from graph code
    index = ProjectIndex.for_files([str(tmp_path / "pkg/net.py")])
    assert "Base.per_row" in index.graph_functions_in(str(tmp_path / "pkg/base.py"))


def test_helpers_imported_by_jit_code_and_functions_given_to_a_project_jit_wrapper(tmp_path, capsys):
    make(tmp_path, {
        "tools/__init__.py": "",
        "tools/compile.py": """\
            import mindspore as ms


            def compiled(fn):
                return ms.jit(fn)
            """,
        "tools/steps.py": """\
            from mindspore import ops


            def rows(x):
                return ops.stack([ops.relu(x[i]) for i in range(x.shape[0])])


            def step(x):
                total = x
                for i in range(x.shape[1]):
                    total = total + x[:, i:i + 1]
                return total
            """,
        "tools/run.py": """\
            import mindspore as ms

            from .compile import compiled
            from .steps import rows, step


            @ms.jit
            def forward(x):
                return rows(x)


            fast_step = compiled(step)
            """,
    })
    code, found = check(tmp_path, capsys, "tools")
    assert ("tools/steps.py", 5, "MSL101") in found  # the comprehension in `rows`, reached from @jit forward
    assert ("tools/steps.py", 10, "MSL101") in found  # `step`, handed to the project's jit wrapper


def test_nested_cells_and_cells_defined_in_functions(tmp_path, capsys):
    make(tmp_path, {"m.py": """\
        from mindspore import nn, ops


        class Outer:
            class Inner(nn.Cell):
                def construct(self, x):
                    for i in range(x.shape[0]):
                        x = x + ops.relu(x[i])
                    return x


        def build():
            class Local(nn.Cell):
                def construct(self, x):
                    if ops.isinf(x).any():
                        x = x * 0
                    return x
            return Local()
        """})
    code, found = check(tmp_path, capsys, "m.py")
    assert [(line, rule) for _, line, rule in found] == [(7, "MSL101"), (15, "MSL201")]


def row_loop_on(module: str, base: str) -> str:
    """A Cell built on ``base`` from ``module`` (another file) whose ``construct`` loops over ``x``'s rows at line 8
    (MSL101 once the base is known to be a Cell)."""
    return textwrap.dedent(f"""\
        from mindspore import ops
        from {module} import {base}


        class Net({base}):
            def construct(self, x):
                out = []
                for i in range(x.shape[0]):
                    out.append(ops.relu(x[i]))
                return ops.stack(out)
        """)


def test_an_installed_package_is_read_without_being_imported(tmp_path, capsys, monkeypatch):
    site = make(tmp_path / "site", {
        # importing this package would fail: the index must only read its source
        "extlib/__init__.py": "raise ImportError('extlib must not be imported by ms-lint')\nfrom .layers import Block\n",
        "extlib/layers.py": """\
            from mindspore import nn


            class Block(nn.Cell):
                pass
            """,
    })
    monkeypatch.syspath_prepend(str(site))
    make(tmp_path / "proj", {"model.py": row_loop_on("extlib", "Block")})
    code, found = check(tmp_path / "proj", capsys, "model.py")
    assert found == [("model.py", 8, "MSL101")]
    assert "extlib" not in sys.modules


def test_names_of_the_standard_library_and_scientific_packages_are_no_project_code(tmp_path, monkeypatch):
    """Which project function does ``np.sum`` call, which project class does ``OrderedDict(...)`` build: none, known
    without summarizing their modules. Whether a class built on one of their classes is a Cell still reads them."""
    from ms_lint.analysis import index as index_module
    from ms_lint.analysis.index import ProjectIndex

    summarized = []
    real = index_module.summarize_file
    monkeypatch.setattr(index_module, "summarize_file",
                        lambda path, raw=None: summarized.append(path) or real(path, raw))
    make(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": """\
        import collections
        import numpy as np
        from mindspore import nn


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.table = collections.OrderedDict()

            def construct(self, x):
                return np.sum(x)
        """})
    index = ProjectIndex.for_files([str(tmp_path / "pkg" / "model.py")])
    assert index.outside_project("numpy.sum") and index.outside_project("collections.OrderedDict")
    assert not index.outside_project("pkg.model.Net") and not index.outside_project(None)
    assert ("pkg.model", "Net.construct") in index.graph_functions()
    assert index.constructions(("pkg.model", "Net")) == [] and index.sub_cell_holders(("pkg.model", "Net")) == []
    assert all(str(tmp_path) in path for path in summarized), summarized  # only the project's own files
    deque_cell = make(tmp_path / "deque", {"model.py": """\
        import collections


        class Net(collections.deque):
            def construct(self, x):
                return x
        """})
    other = ProjectIndex.for_files([str(deque_cell / "model.py")])
    assert other.is_cell(("model", "Net"))  # deque is C code: an unresolved base, and the class has a construct


def test_a_package_of_a_standard_module_name_beside_a_checked_script_is_read(tmp_path, capsys):
    make(tmp_path, {"code/__init__.py": "", "code/base.py": """\
        from mindspore import nn


        class Base(nn.Cell):
            pass
        """, "train.py": row_loop_on("code.base", "Base")})
    assert check(tmp_path, capsys, "train.py")[1] == [("train.py", 8, "MSL101")]
    assert check(tmp_path, capsys, ".")[1] == [("train.py", 8, "MSL101")]
    from ms_lint.analysis.index import ProjectIndex

    alone = ProjectIndex.for_files([str(tmp_path / "train.py")])  # ``code`` is no module of this index's project
    assert "code.base" not in alone.project_modules
    assert not alone.outside_project("code.base.Base")  # but a source root holds it: it may be the project's
    assert alone.outside_project("json.loads")


def test_a_package_of_a_standard_module_name_on_the_import_path_is_read(tmp_path, capsys, monkeypatch):
    """A user's own ``code`` package found through ``PYTHONPATH`` (not in the standard library's or an installed
    packages' folder) may be the project's: its names are resolved by reading it, as any other package's."""
    make(tmp_path, {"lib/code/__init__.py": "", "lib/code/net.py": """\
        from mindspore import nn


        class Net(nn.Cell):
            def construct(self, x):
                return x
        """, "scripts/train.py": """\
        import mindspore as ms
        from code.net import Net

        ms.set_context(mode=ms.GRAPH_MODE)
        net = Net()
        net(1)
        """})
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    assert check(tmp_path, capsys, "scripts/train.py")[1] == [("scripts/train.py", 4, "MSL301")]
    from ms_lint.analysis.index import ProjectIndex

    index = ProjectIndex.for_files([str(tmp_path / "scripts" / "train.py")])
    assert not index.outside_project("code.net.Net") and index.outside_project("json.loads")


UNRESOLVED = """\
    from mindspore import ops
    from transformers_ms import PreTrainedModel


    class Model(PreTrainedModel):
        def construct(self, x):
            for i in range(x.shape[0]):
                x = x + ops.relu(x[i])
            return x


    def run(net, x):
        return net(x)
    """


def test_unresolved_bases_with_construct_are_cells_unless_configured(tmp_path, capsys):
    make(tmp_path, {"model.py": UNRESOLVED})
    assert check(tmp_path, capsys, "model.py")[1] == [("model.py", 7, "MSL101")]
    (tmp_path / "pyproject.toml").write_text('[tool.ms-lint]\nunresolved-bases = "not-cell"\n')
    assert check(tmp_path, capsys, "model.py")[1] == []
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ms-lint]\nunresolved-bases = "not-cell"\ncell-bases = ["transformers_ms.PreTrainedModel"]\n')
    assert check(tmp_path, capsys, "model.py")[1] == [("model.py", 7, "MSL101")]
    (tmp_path / "pyproject.toml").write_text('[tool.ms-lint]\nunresolved-bases = "sometimes"\n')
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["check", "--no-cache", "model.py"]) == 2
    finally:
        os.chdir(cwd)
    assert "unresolved-bases" in capsys.readouterr().err


def test_the_cache_notices_a_change_in_another_module(tmp_path, capsys):
    package(tmp_path)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        def run():
            assert main(["check", "--output-format", "json", "pkg/heads/head.py"]) in (0, 1)
            return [f["code"] for f in json.loads(capsys.readouterr().out)]

        assert run() == ["MSL103", "MSL201"]
        assert run() == ["MSL103", "MSL201"]  # warm
        base = tmp_path / "pkg/heads/base.py"
        base.write_text(base.read_text().replace("max_len=25", "max_len=5"))
        assert run() == ["MSL201"]  # head.py did not change; what it owes to base.py did
    finally:
        os.chdir(cwd)


def test_test_modules_are_recognised():
    assert is_test_module("pkg/tests/helpers.py")
    assert is_test_module("test_train.py") and is_test_module("train_test.py") and is_test_module("conftest.py")
    assert not is_test_module("pkg/train.py") and not is_test_module("contest.py")


def test_entry_script_mode_from_an_imported_argparse_default(tmp_path, capsys):
    make(tmp_path, {
        "config.py": """\
            import argparse

            parser = argparse.ArgumentParser()
            parser.add_argument("--mode", type=int, default=0)
            parser.add_argument("--device_target", default="CPU")
            args = parser.parse_args()
            """,
        "train.py": """\
            import mindspore as ms
            from mindspore import nn

            from config import args

            if __name__ == "__main__":
                ms.set_context(mode=args.mode)
                net = nn.Dense(2, 2)
                print(net(ms.Tensor([[1.0, 2.0]])))
            """,
        "eval_pynative.py": """\
            import argparse

            import mindspore as ms
            from mindspore import nn

            parser = argparse.ArgumentParser()
            parser.add_argument("--mode", type=int, default=1)

            if __name__ == "__main__":
                args = parser.parse_args()
                ms.set_context(mode=args.mode)
                print(nn.Dense(2, 2)(ms.Tensor([[1.0, 2.0]])))
            """,
    })
    code, found = check(tmp_path, capsys, "train.py", "eval_pynative.py")
    assert found == [("train.py", 7, "MSL301")]


def test_flake8_gives_the_project_findings_too(tmp_path):
    import subprocess

    package(tmp_path)
    done = subprocess.run([sys.executable, "-m", "flake8", "--select", "MSL", "pkg"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    lines = {line.split(" ")[0] + line.split(" ")[1] for line in done.stdout.splitlines()}
    assert lines == {"pkg/heads/head.py:8:9:MSL103", "pkg/heads/head.py:10:9:MSL201"}, done.stdout + done.stderr


def test_sub_cell_arguments_take_the_kinds_their_callers_pass(tmp_path, capsys):
    make(tmp_path, {"pkg/__init__.py": "", "pkg/blocks.py": """\
        from mindspore import nn


        class Block(nn.Cell):
            def construct(self, x, channels, step):
                if channels % 16:
                    x = x * 2
                if step > 10:
                    x = x + 1
                return x
        """, "pkg/net.py": """\
        from mindspore import nn

        from .blocks import Block


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def construct(self, x, step):
                c = x.shape[1]
                return self.block(x, c, step)
        """})
    code, found = check(tmp_path, capsys, "pkg")
    # `channels` is a Python int computed from a shape in the caller: not a Tensor branch; `step` is a Tensor
    assert found == [("pkg/blocks.py", 8, "MSL201")]


def test_a_jit_method_called_by_graph_code_takes_the_kinds_its_callers_pass(tmp_path, capsys):
    # an optimizer's construct hands a Python number from its param groups to a @jit method, which hands it to a
    # base-class helper in another module: folded at compile time, not a Tensor branch; a Tensor passed the same
    # way, and a @jit function no graph code calls (the entry-point guess), still are
    make(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": """\
        from mindspore import nn, ops


        class Optim(nn.Cell):
            def decay(self, weight_decay, grads):
                if weight_decay != 0.:
                    grads = ops.mul(grads, weight_decay)
                return grads
        """, "pkg/adam.py": """\
        from mindspore import jit, ops

        from .base import Optim


        class Adam(Optim):
            def __init__(self, groups):
                super().__init__()
                self.groups = groups

            @jit
            def implementation(self, weight_decay, scale, grads):
                grads = self.decay(weight_decay, grads)
                if scale > 1:
                    grads = grads / scale
                return grads

            def construct(self, grads, scale):
                for group in self.groups:
                    grads = self.implementation(group["weight_decay"], scale, grads)
                return grads


        @jit
        def alone(weight_decay, x):
            if weight_decay != 0.:
                x = x * 2
            return x
        """})
    code, found = check(tmp_path, capsys, "pkg")
    assert sorted(found) == [("pkg/adam.py", 14, "MSL201"), ("pkg/adam.py", 26, "MSL201")]
    code, found = check(tmp_path, capsys, "pkg/base.py")  # checked alone: the same answer
    assert found == []


def test_constructor_injected_sub_cells_take_the_kinds_their_holder_passes(tmp_path, capsys):
    """``controller: Controller`` stored as ``self.controllers = CellList(controller)`` and called as
    ``self.controllers[i](x, step)``: every subclass's ``construct`` may be the one called, so a Tensor ``step``
    makes its ``if step % n == 0`` a Tensor branch, even with ``step: int = 0`` in the signature."""
    make(tmp_path, {"sim/__init__.py": "", "sim/control.py": """\
        from mindspore import nn


        class Controller(nn.Cell):
            def __init__(self, control_step: int = 1):
                super().__init__()
                self.control_step = control_step

            def construct(self, velocity, step: int = 0):
                return velocity
        """, "sim/thermostat.py": """\
        from .control import Controller


        class Rescale(Controller):
            def construct(self, velocity, step: int = 0):
                if step % self.control_step == 0:
                    velocity = velocity * 0.5
                return velocity
        """, "sim/updater.py": """\
        import mindspore as ms
        from mindspore import Parameter, Tensor, nn, ops

        from .control import Controller


        class Updater(nn.Cell):
            def __init__(self, controller: Controller = None):
                super().__init__()
                self.controllers = nn.CellList([controller])
                self.controller = nn.CellList(controller)
                self.step = Parameter(Tensor(0, ms.int32), name="step")
                self.identity = ops.Identity()

            def construct(self, velocity):
                step = self.identity(self.step)
                for i in range(1):
                    velocity = self.controller[i](velocity, step)
                return velocity
        """, "sim/offline.py": """\
        from mindspore import nn

        from .thermostat import Rescale


        class Fixed(Rescale):
            def construct(self, velocity, step: int = 0):
                if step % self.control_step == 0:
                    velocity = velocity + 1
                return velocity


        class Runner(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fixed = Fixed()

            def construct(self, velocity):
                return self.fixed(velocity, 3)
        """})
    code, found = check(tmp_path, capsys, "sim")
    # Fixed is also a Rescale a holder of a Controller may call with a Tensor, but the project builds it only
    # as Runner.fixed, called with the Python int 3: the two kinds disagree, so its step stays unknown
    assert found == [("sim/thermostat.py", 6, "MSL201")]


def test_two_scripts_with_one_name_in_different_folders_are_each_analysed_as_themselves(tmp_path, capsys):
    """``a/train.py`` and ``b/train.py`` outside any package share the module name ``train``: each still reads
    its own argparse default (PyNative in one, GRAPH_MODE in the other), whichever the index met first."""
    script = """\
        import argparse

        import mindspore as ms
        from mindspore import nn

        parser = argparse.ArgumentParser()
        parser.add_argument("--mode", type=int, default={mode})

        if __name__ == "__main__":
            args = parser.parse_args()
            ms.set_context(mode=args.mode)
            net = nn.Dense(2, 2)
            print(net(ms.Tensor([[1.0, 2.0]])))
        """
    make(tmp_path, {"a/train.py": script.replace("{mode}", "1"), "b/train.py": script.replace("{mode}", "0")})
    for order in (("a", "b"), ("b", "a")):
        code, found = check(tmp_path, capsys, *order)
        assert found == [("b/train.py", 11, "MSL301")]


def test_fix_sees_the_cells_the_index_finds_as_check_does(tmp_path, capsys):
    """``fix`` re-analyses the text of each round; the index must summarize that text, not empty bytes (which made
    the file an empty module, so a Cell through a base in another module was never fixed)."""
    make(tmp_path, {
        "models/__init__.py": "",
        "models/base.py": """\
            from mindspore import nn


            class BaseGate(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.scale = 2.0
            """,
        "models/gate.py": """\
            from models.base import BaseGate


            class Gate(BaseGate):
                def construct(self, x):
                    if x.sum() > 0:
                        y = x * self.scale
                    else:
                        y = x - 1.0
                    return y
            """,
    })
    code, found = check(tmp_path, capsys, "models/gate.py")
    assert found == [("models/gate.py", 6, "MSL201")]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["fix", "--apply", "--unsafe-fixes", "models/gate.py"]) == 0
    finally:
        os.chdir(cwd)
    fixed = (tmp_path / "models" / "gate.py").read_text()
    assert "ops.where(x.sum() > 0, x * self.scale, x - 1.0)" in fixed and "if x.sum()" not in fixed


def test_contexts_left_by_a_freed_index_are_not_given_to_a_new_one_with_its_id():
    import weakref

    from ms_lint.analysis import project

    old, new = ProjectIndex(), ProjectIndex()
    project._CONTEXTS[(id(new), "pkg.mod")] = "a context built for another index"
    project._OWNERS[id(new)] = weakref.ref(old)  # what a freed index whose id ``new`` now has would leave
    project.claim(new)
    assert (id(new), "pkg.mod") not in project._CONTEXTS
    project._CONTEXTS[(id(new), "pkg.mod")] = "its own"
    project.claim(new)
    assert project._CONTEXTS.pop((id(new), "pkg.mod")) == "its own"


def test_methods_of_objects_a_cell_holds_are_graph_code_when_construct_calls_them(tmp_path, capsys):
    """``self.svd.qr(x)`` in ``construct`` with ``self.svd = SVD()`` in ``__init__``: SVD's method runs in the graph
    (in another module, or this one); its other methods, and methods of objects built from arguments, do not."""
    make(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/linalg.py": """\
            from mindspore import nn, ops


            class SVD(nn.Cell):
                def qr(self, a):
                    for _ in range(0, 100):
                        a = ops.relu(a)
                    return a

                def unused(self, a):
                    for _ in range(0, 100):
                        a = ops.relu(a)
                    return a


            class Smoother:
                def run(self, a):
                    for _ in range(0, 32):
                        a = ops.tanh(a)
                    return a


            class Local(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.smoother = Smoother()

                def construct(self, x):
                    return self.smoother.run(x)
            """,
        "pkg/loss.py": """\
            from mindspore import nn

            from pkg.linalg import SVD


            class Loss(nn.Cell):
                def __init__(self, solver):
                    super().__init__()
                    self.svd = SVD()
                    self.solver = solver

                def construct(self, x):
                    return self.svd.qr(x) + self.solver.qr(x)
            """,
    })
    code, found = check(tmp_path, capsys, "pkg")
    assert found == [("pkg/linalg.py", 6, "MSL103"), ("pkg/linalg.py", 18, "MSL103")]


REFUSES = """\
    from mindspore import context, jit, nn, ops


    class PrivateModel:
        def __init__(self, network):
            mode = context.get_context("mode")
            if mode != context.{mode}:
                raise ValueError("only this mode is supported")
            self.network = network


    class Step(nn.Cell):
        def construct(self, grads):
            out = ()
            for grad in grads:
                out += (ops.relu(grad),)
            return out


    @jit
    def rows(x):
        return [ops.relu(x[i]) for i in range(x.shape[0])]
    """


def test_a_module_that_refuses_graph_mode_runs_its_cells_eagerly(tmp_path, capsys):
    make(tmp_path, {"pkg/__init__.py": "", "pkg/eager.py": REFUSES.format(mode="PYNATIVE_MODE"),
                    "pkg/graph.py": REFUSES.format(mode="GRAPH_MODE")})
    code, found = check(tmp_path, capsys, "pkg")
    # the @jit function compiles in either module; Step.construct only where graph mode is not refused
    assert found == [("pkg/eager.py", 22, "MSL101"), ("pkg/graph.py", 15, "MSL102"),
                     ("pkg/graph.py", 22, "MSL101")]


@pytest.mark.parametrize("source, refuses", [
    ("if ms.get_context('mode') != ms.PYNATIVE_MODE:\n    raise RuntimeError('eager only')\n", True),
    ("def build():\n    def inner():\n        mode = get_context('mode')\n        if mode != 1:\n"
     "            raise ValueError\n    return inner\n", True),
    ("if PYNATIVE_MODE != get_context('mode'):\n    raise RuntimeError\n", True),
    ("if ms.get_context('mode') != ms.PYNATIVE_MODE:\n    log('graph mode')\n    raise RuntimeError\n", True),
    ("if x:\n    pass\nelif get_context('mode') != PYNATIVE_MODE:\n    raise RuntimeError\n", True),
    ("if ms.get_context('mode') == ms.PYNATIVE_MODE:\n    raise RuntimeError\n", False),  # ==, not !=
    ("if ms.get_context('mode') != ms.PYNATIVE_MODE:\n    print('eager only')\n", False),  # no raise
    ("if ms.get_context('mode') != ms.GRAPH_MODE:\n    raise RuntimeError\n", False),
    ("if other != ms.PYNATIVE_MODE:\n    raise RuntimeError\n", False),  # not the mode
    ("x = 1\n", False),
    # inside blocks of every kind
    ("try:\n    pass\nexcept ImportError:\n    if get_context('mode') != PYNATIVE_MODE:\n        raise RuntimeError\n",
     True),
    ("with lock:\n    class Eager:\n        if get_context('mode') != PYNATIVE_MODE:\n            raise ValueError\n",
     True),
    ("match flag:\n    case 1:\n        if get_context('mode') != PYNATIVE_MODE:\n            raise ValueError\n", True),
    # the walk is breadth-first: the guard at the outer level is read before the assignment nested deeper
    ("def f():\n    if a:\n        mode = get_context('mode')\n    if mode != PYNATIVE_MODE:\n        raise ValueError\n",
     False),
    ("def f():\n    mode = get_context('mode')\n    if a:\n        if mode != PYNATIVE_MODE:\n            raise ValueError\n",
     True),
    ("f = lambda: get_context('mode') != PYNATIVE_MODE\n", False),
])
def test_refuses_graph_mode_reads_the_guard(source, refuses):
    import ast

    from ms_lint.analysis.summary import refuses_graph_mode

    assert refuses_graph_mode(ast.parse(source)) is refuses


def test_the_guards_walk_is_ast_walk_less_the_expressions():
    """``refuses_graph_mode`` walks statements only, in ``ast.walk``'s order (which assignments an ``if`` sees)."""
    import ast

    from ms_lint.analysis import summary
    from ms_lint.analysis.summary import _walk_statements

    with open(summary.__file__, encoding="utf-8") as handle:
        source = handle.read()
    source += ("\ntry:\n    pass\nexcept* ValueError:\n    x = 1\nelse:\n    y = 2\nfinally:\n    z = 3\n"
               "match q:\n    case [a, *b] if a:\n        c = 1\n    case _:\n        pass\n"
               "async def g():\n    async with a as b:\n        async for c in d:\n            await c\n")
    tree = ast.parse(source)
    blocks = (ast.Module, ast.stmt, ast.excepthandler, ast.match_case)
    expected = [node for node in ast.walk(tree) if isinstance(node, blocks)]
    assert list(_walk_statements(tree)) == expected
    assert len(expected) > 300


STEP = """\
    from mindspore import jit, nn, ops


    class Step(nn.Cell):
        def construct(self, grads):
            out = ()
            for grad in grads:
                out += (ops.relu(grad),)
            return out


    @jit
    def rows(x):
        return [ops.relu(x[i]) for i in range(x.shape[0])]
    """
def holding(name: str, source: str, held: str) -> str:
    """A module with the Cell ``name``, which holds ``held`` (imported from ``source``) and hands it its grads."""
    return textwrap.dedent(f"""\
        from mindspore import nn

        from {source} import {held}


        class {name}(nn.Cell):
            def __init__(self):
                super().__init__()
                self.inner = {held}()

            def construct(self, grads):
                return self.inner(grads)
        """)


STEPS = {"pkg/__init__.py": "", "pkg/pynative/__init__.py": "", "pkg/pynative/optim.py": STEP,
         "pkg/models/__init__.py": "", "pkg/models/step.py": STEP, "pkg/models/non_pynative.py": STEP}


def test_a_package_named_for_pynative_mode_runs_its_cells_eagerly(tmp_path, capsys):
    """mindformers keeps its PyNative-mode stack in ``mindformers/pynative/``, chosen at run time: its Cells run
    eagerly (``@jit`` code still compiles). Only a whole part of the dotted name counts."""
    make(tmp_path, STEPS)
    code, found = check(tmp_path, capsys, "pkg")
    assert found == [("pkg/models/non_pynative.py", 7, "MSL102"), ("pkg/models/non_pynative.py", 14, "MSL101"),
                     ("pkg/models/step.py", 7, "MSL102"), ("pkg/models/step.py", 14, "MSL101"),
                     ("pkg/pynative/optim.py", 14, "MSL101")]


def test_a_pynative_packages_cell_held_by_a_graph_model_or_set_to_graph_mode_compiles(tmp_path, capsys):
    """A graph-mode model outside the package that holds the Cell as a sub-cell compiles its ``construct``; so does
    a module of the package that sets GRAPH_MODE itself."""
    held = STEP.replace("class Step(", "class Held(")
    net = holding("Net", ".pynative.held", "Held")
    script = "import mindspore as ms\n" + textwrap.dedent(STEP) + "\n\nms.set_context(mode=ms.GRAPH_MODE)\n"
    make(tmp_path, {"pkg/__init__.py": "", "pkg/pynative/__init__.py": "", "pkg/pynative/held.py": held,
                    "pkg/pynative/optim.py": STEP, "pkg/pynative/script.py": script, "pkg/net.py": net})
    code, found = check(tmp_path, capsys, "pkg")
    assert [f for f in found if f[2] == "MSL102"] == [("pkg/pynative/held.py", 7, "MSL102"),
                                                      ("pkg/pynative/script.py", 8, "MSL102")]


def test_pynative_packages_names_them_and_an_empty_list_turns_it_off(tmp_path, capsys):
    make(tmp_path, dict(STEPS, **{"pyproject.toml": '[tool.ms-lint]\npynative-packages = []\n'}))
    code, found = check(tmp_path, capsys, "pkg")
    assert [f for f in found if f[2] == "MSL102"] == [
        ("pkg/models/non_pynative.py", 7, "MSL102"), ("pkg/models/step.py", 7, "MSL102"),
        ("pkg/pynative/optim.py", 7, "MSL102")]
    make(tmp_path, {"pyproject.toml": '[tool.ms-lint]\npynative-packages = ["models"]\n'})
    code, found = check(tmp_path, capsys, "pkg")
    assert [f for f in found if f[2] == "MSL102"] == [("pkg/pynative/optim.py", 7, "MSL102")]


def test_what_a_method_of_a_held_project_object_returns_decides_its_callers_conditions(tmp_path, capsys):
    make(tmp_path, {
        "rl/__init__.py": "",
        "rl/buffer.py": """\
            import mindspore as ms
            from mindspore import Tensor, nn


            class StepBuffer(nn.Cell):
                def __init__(self, steps=3):
                    super().__init__()
                    self.count = ms.Parameter(Tensor(0, ms.int32), name="count")
                    self.steps = steps
                    self.true = Tensor(True, ms.bool_)
                    self.false = Tensor(False, ms.bool_)

                def ready(self):
                    check = self.true
                    if self.count <= self.steps:  # a Parameter: a Tensor test here too
                        check = self.false
                    return check, self.count

                def full_size(self):
                    return self.steps, self.count
            """,
        "rl/trainer.py": """\
            import mindspore as ms
            from mindspore import nn

            from .buffer import StepBuffer


            class Trainer(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.buffer = StepBuffer()

                @ms.jit
                def step(self, x):
                    check, count = self.buffer.ready()
                    if check:
                        x = x + count
                    size, _ = self.buffer.full_size()
                    if size > 2:
                        x = x * 2
                    return x
            """,
    })
    code, found = check(tmp_path, capsys, "rl")
    # `ready` returns a bool Tensor built in StepBuffer, `full_size` a Python int first: only `if check` is one
    assert ("rl/trainer.py", 15, "MSL201") in found
    assert ("rl/trainer.py", 18, "MSL201") not in found


def test_a_sub_project_with_its_own_index_options_gets_them_whichever_file_comes_first(tmp_path, capsys):
    """``check`` builds one project index, with the first file's config; a file whose own pyproject.toml sets
    other index options (here ``pynative-packages = []``) is analyzed with its own, cached or not."""
    make(tmp_path, {"pyproject.toml": "[tool.ms-lint]\n", "aaa.py": STEP,
                    "sub/pyproject.toml": "[tool.ms-lint]\npynative-packages = []\n",
                    "sub/pkg/__init__.py": "", "sub/pkg/pynative/__init__.py": "", "sub/pkg/pynative/optim.py": STEP})
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for args in (["--no-cache"], [], []):  # cold, then filling and reading the cache
            assert main(["check", "--output-format", "json", *args, "aaa.py", "sub/pkg"]) == 1
            found = [(f["path"].replace(os.sep, "/"), f["line"], f["code"])
                     for f in json.loads(capsys.readouterr().out)]
            assert ("sub/pkg/pynative/optim.py", 7, "MSL102") in found, args
            assert ("aaa.py", 7, "MSL102") in found
    finally:
        os.chdir(cwd)


def test_a_pynative_packages_cell_reached_through_a_held_chain_or_a_subclass_outside_compiles(tmp_path, capsys):
    """A graph model outside the package holds ``Mid`` (in the package), which holds ``Step``: both compile. A
    subclass outside the package inherits ``construct``: the inherited one compiles."""
    mid = holding("Mid", ".leaf", "Step")
    net = holding("Net", ".pynative.mid", "Mid")
    fast = """\
        from .pynative.other import Step


        class Fast(Step):
            pass
        """
    make(tmp_path, {"pkg/__init__.py": "", "pkg/pynative/__init__.py": "", "pkg/pynative/leaf.py": STEP,
                    "pkg/pynative/mid.py": mid, "pkg/net.py": net, "pkg/pynative/other.py": STEP,
                    "pkg/fast.py": fast, "pkg/pynative/alone.py": STEP})
    code, found = check(tmp_path, capsys, "pkg")
    assert [f for f in found if f[2] == "MSL102"] == [("pkg/pynative/leaf.py", 7, "MSL102"),
                                                      ("pkg/pynative/other.py", 7, "MSL102")]


# -- an edited module keeps what the edit cannot change ------------------------------------------------------

def _index_answers(index):
    """Every answer of the index that its memos hold, for every class and import of the project."""
    out = {}
    for name in sorted(index.project_modules):
        summary = index.modules[name]
        for qual, info in summary.classes.items():
            ref = (name, qual)
            out[("cell", ref)] = index.is_cell(ref)
            out[("chain", ref)] = list(index.method_owner_chain(ref))
            out[("holders", ref)] = sorted(index.sub_cell_holders(ref))
            out[("eager", ref)] = index.eager_cell(ref)
            out[("constructions", ref)] = index.constructions_text(ref)
            out[("passed on", ref)] = list(index.passed_on_holders(ref))
            for dotted in info.bases + list(info.attribute_classes.values()):
                out[("class", name, dotted)] = index.class_ref(name, dotted)
        for target in summary.imports.values():
            out[("resolve", target)] = index.resolve(target)
        functions = list(summary.functions.values()) + [m for info in summary.classes.values()
                                                        for m in info.methods.values()]
        for dotted in {call for function in functions for call in function.calls} | set(summary.imports):
            out[("qualify", name, dotted)] = index.qualify(name, dotted)
        out[("importers", name)] = sorted(index.importers_of(name))
    out["graph"] = sorted(index.graph_functions().items())
    return out


EDITS = [
    ("body call", lambda text: text.replace("return ", "return touch_helper() or ", 1)),
    ("new function", lambda text: text + "\n\ndef added_helper(x):\n    return x\n"),
    ("new import", lambda text: "import os\n" + text),
    ("new class", lambda text: text + "\n\nclass AddedBlock(nn.Cell):\n    def construct(self, x):\n        return x\n"),
    ("new base", lambda text: re.sub(r"class (\w+)\((\w+)\)", r"class \1(\2, object)", text, count=1)),
    ("new sub-cell", lambda text: re.sub(r"(\n(\s+)super\(\)\.__init__\(\)\n)",
                                         r"\1\2self.extra_block = nn.Dense(2, 2)\n", text, count=1)),
]


SUB_CELL_PACKAGE = {
    "pkg/__init__.py": "from .head import Head\n",
    "pkg/base.py": """
        from mindspore import nn

        class Base(nn.Cell):
            def construct(self, x):
                return x
        """,
    "pkg/block.py": """
        from mindspore import nn

        class Block(nn.Cell):
            def construct(self, x):
                return x * 2
        """,
    "pkg/head.py": """
        from .base import Base
        from .block import Block

        class Head(Base):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def construct(self, x):
                return self.block(x)
        """,
}
# (file, old, new): each one flips what one group of kept memos would answer if it were kept wrongly
PACKAGE_EDITS = [
    ("pkg/head.py", "from .block import Block\n", "class Block:\n    pass\n"),  # ``Block`` is now the module's own
    ("pkg/head.py", "return self.block(x)", "return self.block(x) + touch(x)"),  # keeps every group
    ("pkg/base.py", "class Base(nn.Cell)", "class Base(object)"),  # Head is no longer a Cell
    ("pkg/block.py", "class Block(", "class Block2("),  # ``Block`` no longer resolves
    ("pkg/head.py", "self.block = Block()", "self.block = None"),  # Head no longer holds a Block
    ("pkg/head.py", "from .block import Block\n", "from .block import Block\nfrom .base import Base as Other\n"),
]


@pytest.mark.parametrize("file, old, new", PACKAGE_EDITS)
def test_an_edit_gives_the_answers_of_an_index_built_from_the_new_text(tmp_path, file, old, new):
    root = make(tmp_path, SUB_CELL_PACKAGE)
    modules = sorted(str(p) for p in (root / "pkg").rglob("*.py"))
    path = str(root / file)
    before = open(path, encoding="utf-8").read()
    assert old in before
    index = ProjectIndex.for_files(modules)
    _index_answers(index)  # fill every memo first
    index.update_file(path, before.replace(old, new).encode("utf-8"))
    kept = _index_answers(index)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(before.replace(old, new))
    assert kept == _index_answers(ProjectIndex.for_files(modules))


def test_editing_a_module_the_index_read_lazily_rebuilds_what_the_project_modules_decide(tmp_path):
    # ``ext.lib`` is read on first use (not a project module) until its text is given: from then on it is one, so
    # the sub-cell holders and importers built without it cannot be kept (found by an independent review)
    root = make(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": """
            from mindspore import nn
            from ext.lib import Block

            class Net(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.b = Block()

                def construct(self, x):
                    return self.b(x)
            """,
        "ext/__init__.py": "",
        "ext/lib.py": """
            from mindspore import nn
            from pkg.a import Net

            class Block(nn.Cell):
                def construct(self, x):
                    return x

            class Holder(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.net = Net()

                def construct(self, x):
                    return self.net(x)
            """,
    })
    sys.path.insert(0, str(root))
    try:
        lib = str(root / "ext" / "lib.py")
        new = (root / "ext" / "lib.py").read_text().replace("return x\n", "return x + 0\n").encode()
        kept = ProjectIndex.for_files([str(root / "pkg" / "a.py")])
        _index_answers(kept)
        kept.update_file(lib, new)
        fresh = ProjectIndex.for_files([str(root / "pkg" / "a.py")])
        fresh.update_file(lib, new)
        assert kept.sub_cell_holders(("pkg.a", "Net")) == fresh.sub_cell_holders(("pkg.a", "Net")) == [
            ("ext.lib", "Holder", "net")]
        assert kept.importers_of("pkg.a") == fresh.importers_of("pkg.a") == {"ext.lib"}
    finally:
        sys.path.remove(str(root))


@pytest.mark.parametrize("edit_name, edit", EDITS)
def test_an_edited_module_gives_the_answers_of_an_index_built_from_the_new_text(tmp_path, edit_name, edit):
    # ``update_file`` keeps resolved names, class chains and sub-cell holders when the new summary leaves what
    # they read unchanged (``index.kept_memos``): every answer must be a fresh index's, after every kind of edit
    import shutil

    shutil.copytree(os.path.join(FIXTURES, "project"), tmp_path / "project")
    package = tmp_path / "project" / "detr"
    modules = sorted(str(p) for p in package.rglob("*.py"))
    changed = 0
    for path in modules:
        before = open(path, encoding="utf-8").read()
        after = edit(before)
        if after == before:
            continue
        index = ProjectIndex.for_files(modules)
        _index_answers(index)  # fill every memo first
        index.update_file(path, after.encode("utf-8"))
        kept = _index_answers(index)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(after)
        try:
            fresh = _index_answers(ProjectIndex.for_files(modules))
        finally:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(before)
        assert kept == fresh, (edit_name, path)
        changed += 1
    assert changed >= 1


def test_sub_cells_set_in_another_order_drop_the_holders_memo():
    """The holders table lists a class's sub-cells in the order its ``__init__`` sets them (a second review of the
    carry): two equal dicts in another order keep names and chains, not holders."""
    from ms_lint.analysis.index import BASES, HOLDERS, NAMES, kept_memos
    from ms_lint.analysis.summary import summarize

    text = ("from mindspore import nn\n\n\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.first = nn.Dense(2, 2)\n        self.second = nn.Dense(2, 2)\n")
    swapped = text.replace("        self.first = nn.Dense(2, 2)\n        self.second = nn.Dense(2, 2)\n",
                           "        self.second = nn.Dense(2, 2)\n        self.first = nn.Dense(2, 2)\n")
    old, new = (summarize(ast.parse(t), "pkg.net", "pkg/net.py", "d", "pkg", t) for t in (text, swapped))
    assert kept_memos(old, new) == frozenset({NAMES, BASES})
    assert kept_memos(old, old) == frozenset({NAMES, BASES, HOLDERS})


NAMES_NO_MINDSPORE = """\
    from .layers import Block


    class Net(Block):
        def construct(self, x):
            for i in range(x.shape[0]):
                x = x + 1
            return x
    """


def _block_package(tmp_path, net_bytes):
    make(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": """\
        from mindspore import nn


        class Block(nn.Cell):
            def construct(self, x):
                return x
        """})
    (tmp_path / "pkg" / "net.py").write_bytes(net_bytes)


def test_a_coding_cookie_the_bytes_do_not_follow_keeps_a_module_s_graph_code(tmp_path, capsys):
    """``net.py`` names no MindSpore; its Cell comes from its base. Its cookie says latin-1 while the bytes are
    UTF-8: the index's summary (of these very bytes, read as UTF-8) still makes its ``construct`` graph code."""
    cookie = b"# -*- coding: latin-1 -*-\n# caf\xc3\xa9\n"
    _block_package(tmp_path, cookie + textwrap.dedent(NAMES_NO_MINDSPORE).encode())
    assert check(tmp_path, capsys, "pkg")[1] == [("pkg/net.py", 8, "MSL101")]


def test_a_module_saved_again_after_the_index_read_it_keeps_its_graph_code(tmp_path):
    """The summary is of the bytes before the save; the new bytes parse, so the graph code it found stands."""
    from ms_lint.analysis.index import index_for
    from ms_lint.config import Config
    from ms_lint.engine import analyze_path
    from ms_lint.source import read_source

    _block_package(tmp_path, textwrap.dedent(NAMES_NO_MINDSPORE).encode())
    path = str(tmp_path / "pkg" / "net.py")
    config = Config(root=str(tmp_path))
    index = index_for(read_source(path), config)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("# saved\n")
    assert [f.code for f in analyze_path(path, config, index=index).findings] == ["MSL101"]


def test_a_base_method_calling_self_runs_the_override_of_each_subclass_that_inherits_it(tmp_path, capsys):
    """mindocr's ``BaseDecoder.construct`` calls ``self.construct_test(...)``: on a ``ParallelSARDecoder`` that is
    the subclass's decoding loop. A subclass with its own ``construct`` never runs the base's, so its override is
    not made graph code by it."""
    make(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": """\
            from mindspore import nn


            class BaseDecoder(nn.Cell):
                def decode(self, x):
                    raise NotImplementedError

                def construct(self, x):
                    return self.decode(x)
            """,
        "pkg/heads.py": """\
            from mindspore import nn, ops

            from .base import BaseDecoder


            class StepDecoder(BaseDecoder):
                def decode(self, x):
                    out = []
                    for i in range(x.shape[0]):
                        out.append(ops.relu(x[i]))
                    return ops.stack(out)


            class OwnConstruct(BaseDecoder):
                def decode(self, x):
                    for i in range(x.shape[0]):
                        x = x + 1
                    return x

                def construct(self, x):
                    return x * 2


            class Deeper(StepDecoder):
                def decode(self, x):
                    rows = [ops.relu(x[i]) for i in range(x.shape[0])]
                    return ops.stack(rows)
            """,
    })
    code, found = check(tmp_path, capsys, "pkg")
    assert found == [("pkg/heads.py", 9, "MSL101"), ("pkg/heads.py", 26, "MSL101")]
    graph = ProjectIndex.for_files([str(tmp_path / "pkg/heads.py")]).graph_functions_in(str(tmp_path / "pkg/heads.py"))
    assert graph["StepDecoder.decode"].endswith("on a subclass")
    assert "OwnConstruct.decode" not in graph





def test_an_override_is_graph_code_only_where_a_compiled_construct_runs_the_base_s_code(tmp_path, capsys):
    """Look-alikes an independent review found: a subclass that is no Cell (a plain helper class held by
    nothing), a Cell of a module that sets PyNative mode, and one whose other base brings its own ``construct``
    (``class Both(Left, Right)`` runs ``Right.construct``, by Python's method order) compile none of the base's
    ``construct``: their ``step`` stays Python. A plain subclass's ``step`` is graph code."""
    loop = "\n".join(["        out = []", "        for i in range(x.shape[0]):", "            out.append(ops.relu(x[i]))",
                      "        return ops.stack(out)", ""])
    make(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": """\
            from mindspore import nn


            class Base(nn.Cell):
                def construct(self, x):
                    return self.step(x)

                def step(self, x):
                    return x


            class Coder:
                def encode(self, x):
                    return self.encode_one(x)

                def encode_one(self, x):
                    return x
            """,
        "pkg/subs.py": ("from mindspore import ops\n\nfrom .base import Base, Coder\n\n\n"
                        "class Left(Base):\n    pass\n\n\n"
                        "class Right(Base):\n    def construct(self, x):\n        return x * 2\n\n\n"
                        "class Both(Left, Right):\n    def step(self, x):\n" + loop + "\n\n"
                        "class EagerCoder(Coder):\n    def encode_one(self, x):\n" + loop + "\n\n"
                        "class Plain(Base):\n    def step(self, x):\n" + loop),
        "pkg/eager.py": ("import mindspore as ms\nfrom mindspore import ops\n\nfrom .base import Base\n\n"
                         "ms.set_context(mode=ms.PYNATIVE_MODE)\n\n\n"
                         "class EagerStep(Base):\n    def step(self, x):\n" + loop),
    })
    code, found = check(tmp_path, capsys, "pkg")
    assert found == [("pkg/subs.py", 34, "MSL101")]

def test_a_write_from_a_set_up_method_is_the_subclass_s_own_value(tmp_path, capsys):
    """The base sets ``self.scale`` to a Tensor; the subclass's ``__init__`` calls ``self.build(scale)``, which sets
    a Python float: that write is no update of the base's Tensor (only writes by graph code are)."""
    make(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": """\
            from mindspore import Tensor, nn


            class Scaled(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.scale = Tensor(1.0)
            """,
        "pkg/sub.py": """\
            from .base import Scaled


            class Fixed(Scaled):
                def __init__(self, scale=2.0):
                    super().__init__()
                    self.build(scale)

                def build(self, scale):
                    self.scale = float(scale)

                def construct(self, x):
                    if self.scale > 1.0:
                        x = x * self.scale
                    return x
            """,
    })
    code, found = check(tmp_path, capsys, "pkg")
    assert found == []


def test_attributes_a_mindspore_base_class_sets_in_init_have_their_kinds_in_a_subclass(tmp_path, capsys):
    """mindaudio's ``TrainOneStepWithLossScaleCellv2`` uses ``self.grad`` and ``self.hyper_map`` that MindSpore's
    ``TrainOneStepWithLossScaleCell`` sets: the gradients are one Tensor per weight (whatever the name holding
    them), and a per-element loop over them unrolls once per parameter."""
    make(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/step.py": """\
            from mindspore import nn, ops


            class TrainStep(nn.TrainOneStepWithLossScaleCell):
                def construct(self, *inputs):
                    weights = self.weights
                    loss = self.network(*inputs)
                    sens = ops.ones_like(loss) * self.scale_sense
                    deltas = self.grad(self.network, weights)(*inputs, sens)
                    deltas = self.hyper_map(ops.partial(ops.div, sens), deltas)
                    clipped = ()
                    for delta in deltas:
                        clipped = clipped + (ops.clip_by_value(delta, -1.0, 1.0),)
                    return ops.depend(loss, self.optimizer(clipped))
            """,
    })
    code, found = check(tmp_path, capsys, "pkg")
    assert found == [("pkg/step.py", 12, "MSL102")]


def test_a_primitive_a_base_in_another_module_holds_gives_shape_ints(tmp_path, capsys):
    """mindocr's ``VaryQwenModel`` reads ``bs, seq_len = self.shape(input_ids)`` with ``self.shape = P.Shape()``
    set by ``QwenModel`` in the next module: ``range(bs)`` runs over the batch axis."""
    make(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": """\
            from mindspore import nn, ops


            class BaseModel(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.shape = ops.Shape()
            """,
        "pkg/model.py": """\
            from mindspore import ops

            from .base import BaseModel


            class Model(BaseModel):
                def construct(self, input_ids):
                    bs, seq_len = self.shape(input_ids)
                    rows = []
                    for i in range(bs):
                        rows.append(input_ids[i] * 2)
                    return ops.stack(rows)
            """,
    })
    code, found = check(tmp_path, capsys, "pkg")
    assert found == [("pkg/model.py", 10, "MSL101")]


def test_a_parameter_a_mindspore_base_sets_up_stays_a_tensor_when_construct_assigns_it(tmp_path, capsys):
    """mindcv's ``GradientAccumulation(boost.GradientAccumulation)``: the base's ``__init__`` makes
    ``self._accumulation_step`` a Parameter; ``construct`` adds to it and sets it back to 0, which updates the
    Parameter. A subclass whose own ``__init__`` sets the attribute to an int owns a Python int."""
    make(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/accumulate.py": """\
            from mindspore import boost, ops


            class Accumulate(boost.GradientAccumulation):
                def construct(self, loss, grads):
                    self._accumulation_step += 1
                    if self._accumulation_step >= self._max_accumulation_step:
                        loss = ops.depend(loss, self.optimizer(grads))
                        self._accumulation_step = 0
                    return loss


            class Counted(boost.GradientAccumulation):
                def __init__(self, max_accumulation_step, optimizer):
                    super().__init__(max_accumulation_step, optimizer)
                    self._accumulation_step = 4

                def construct(self, loss, grads):
                    if self._accumulation_step >= 2:
                        loss = ops.depend(loss, self.optimizer(grads))
                    return loss
            """,
    })
    code, found = check(tmp_path, capsys, "pkg")
    assert found == [("pkg/accumulate.py", 7, "MSL201")]


# -- a package that re-exports MindSpore under its own names (tinyms: ``layers``, ``primitives``) ----------------
REEXPORTING = {
    "kit/__init__.py": "",
    "kit/layers.py": """\
        from mindspore.nn import Cell
        from mindspore.nn.wrap import *
        from mindspore.nn.layer import *
        """,
    "kit/primitives.py": """\
        from mindspore.ops.composite import *
        from mindspore.ops.operations import *
        """,
    "kit/own.py": """\
        class TrainOneStepWithLossScaleCell:
            def get_overflow_status(self, status, grads):
                return False
        """,
    "kit/bert.py": """\
        from kit import layers
        from kit import primitives as P
        from kit import own


        class TrainStep(layers.TrainOneStepWithLossScaleCell):
            def construct(self, x):
                loss = self.network(x)
                status, scale = self.start_overflow_check(loss, self.scale_sense)
                grads = self.grad(self.network, self.weights)(x, P.Cast()(scale, 0))
                overflow = self.get_overflow_status(status, grads)
                if overflow:
                    return loss
                return self.optimizer(grads)


        class Accumulate(layers.Cell):
            def __init__(self):
                super().__init__()
                self.not_equal = P.NotEqual()
                self.step = 0

            def construct(self, x, local_step):
                is_accu_step = self.not_equal(local_step, 4)
                if is_accu_step:
                    return x
                return x * 2


        class Plain(own.TrainOneStepWithLossScaleCell, layers.Cell):
            def construct(self, x, grads):
                if self.get_overflow_status(x, grads):
                    return x
                return x * 2
        """,
}


def test_names_a_package_reexports_from_mindspore_are_mindspore_names(tmp_path, capsys):
    """``layers.TrainOneStepWithLossScaleCell`` (a star import of ``mindspore.nn.wrap``) is MindSpore's, whose
    ``get_overflow_status`` gives a Tensor; ``P.NotEqual()`` (a star import of ``mindspore.ops.operations``) is a
    primitive. A class the package defines itself under a MindSpore name is its own: no MindSpore method there."""
    make(tmp_path, REEXPORTING)
    code, found = json_check(tmp_path, capsys, "kit")
    lines = sorted((f["path"].replace(os.sep, "/"), f["line"], f["code"]) for f in found)
    assert lines == [("kit/bert.py", 12, "MSL201"), ("kit/bert.py", 25, "MSL201")]


def test_the_index_maps_reexported_names_and_leaves_the_projects_own(tmp_path):
    from ms_lint.analysis.index import ProjectIndex

    make(tmp_path, REEXPORTING)
    index = ProjectIndex.for_files([str(p) for p in (tmp_path / "kit").glob("*.py")])
    assert index.mindspore_name("kit.layers.Cell") == "mindspore.nn.Cell"
    assert index.mindspore_name("kit.layers.TrainOneStepWithLossScaleCell") == "mindspore.nn.TrainOneStepWithLossScaleCell"
    assert index.mindspore_name("kit.primitives.NotEqual") == "mindspore.ops.NotEqual"
    assert index.mindspore_name("kit.own.TrainOneStepWithLossScaleCell") is None
    assert index.mindspore_name("numpy.sum") is None
    assert index.qualify("kit.bert", "layers.Cell") == "mindspore.nn.Cell"
    assert index.is_cell(("kit.bert", "Accumulate"))


@pytest.mark.parametrize("layers, mapped", [
    # the later star import wins: the project's own class
    ("from mindspore.nn.wrap import *\nfrom kit.own import *\n", None),
    # MindSpore's star import after the project's: MindSpore's
    ("from kit.own import *\nfrom mindspore.nn.wrap import *\n", "mindspore.nn.TrainOneStepWithLossScaleCell"),
    # rebound by an assignment the summary does not record
    ("from mindspore.nn.wrap import *\nfrom kit import own\nTrainOneStepWithLossScaleCell = own.TrainOneStepWithLossScaleCell\n",
     None),
])
def test_a_star_import_of_mindspore_gives_a_name_only_when_nothing_later_does(tmp_path, layers, mapped):
    """An independent review's reproducers: ``import *`` order, a module-level rebinding."""
    files = dict(REEXPORTING)
    files["kit/layers.py"] = layers
    make(tmp_path, files)
    index = ProjectIndex.for_files([str(p) for p in (tmp_path / "kit").glob("*.py")])
    assert index.mindspore_name("kit.layers.TrainOneStepWithLossScaleCell") == mapped


REBOUND = ("from mindspore.nn.wrap import *\nfrom kit import own\n"
           "TrainOneStepWithLossScaleCell = own.TrainOneStepWithLossScaleCell\n")


def test_a_long_lived_index_reads_a_star_importers_rebinding_from_the_text_it_was_given(tmp_path):
    """The language server's index: an edit binding a star import's name in the buffer takes the name from
    MindSpore (the disk still holds the star import alone), and taking the binding out gives it back; each
    answer is a fresh index's for that text."""
    files = dict(REEXPORTING)
    files["kit/layers.py"] = "from mindspore.nn.wrap import *\nfrom kit import own\n"
    make(tmp_path, files)
    paths = [str(p) for p in (tmp_path / "kit").glob("*.py")]
    layers = str(tmp_path / "kit" / "layers.py")
    index = ProjectIndex.for_files(paths)
    name = "kit.layers.TrainOneStepWithLossScaleCell"
    assert index.mindspore_name(name) == "mindspore.nn.TrainOneStepWithLossScaleCell"
    index.update_file(layers, REBOUND.encode())
    assert index.mindspore_name(name) is None
    (tmp_path / "kit" / "layers.py").write_text(REBOUND)
    assert ProjectIndex.for_files(paths).mindspore_name(name) is None
    index.update_file(layers, files["kit/layers.py"].encode())
    assert index.mindspore_name(name) == "mindspore.nn.TrainOneStepWithLossScaleCell"


def test_a_cached_run_sees_a_star_importers_new_rebinding(tmp_path, capsys):
    """Binding a star-imported name at module level changes no import, class or function of the module, and
    makes ``layers.TrainOneStepWithLossScaleCell`` the project's own class (no Tensor overflow flag): the cached
    run analyzes the importer again and finds what ``--no-cache`` finds (its fingerprint reads the module's
    digest; the summary's shape changes too, by its ``star_words``)."""
    files = dict(REEXPORTING)
    files["kit/layers.py"] = "from mindspore.nn.wrap import *\nfrom mindspore.nn import Cell\nfrom kit import own\n"
    make(tmp_path, files)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    _, before = check(tmp_path, capsys, *cache, "kit")
    assert ("kit/bert.py", 12, "MSL201") in before
    (tmp_path / "kit" / "layers.py").write_text(files["kit/layers.py"] + REBOUND.split("\n")[2] + "\n")
    _, cached = check(tmp_path, capsys, *cache, "kit")
    _, fresh = check(tmp_path, capsys, "kit")
    assert ("kit/bert.py", 12, "MSL201") not in fresh
    assert cached == fresh


def test_a_name_mindspore_does_not_define_is_not_made_mindspores_by_a_star_import(tmp_path):
    """``static_size = _static_numel`` next to ``from mindspore.ops import *``: a project helper returning an int,
    not ``mindspore.ops.static_size`` (no such op), so ``F.static_size(x) > 1024`` is no Tensor test; a name the
    module never mentions that MindSpore does not define either gives nothing."""
    make(tmp_path, {
        "kit/__init__.py": "",
        "kit/F.py": "from mindspore.ops import *\n\n\ndef _static_numel(x):\n    return 4\n\n\nstatic_size = _static_numel\n",
        "kit/net.py": """\
            import mindspore as ms
            from kit import F


            @ms.jit
            def step(x):
                if F.static_size(x) > 1024:
                    x = x * 2
                return x
            """,
    })
    index = ProjectIndex.for_files([str(p) for p in (tmp_path / "kit").glob("*.py")])
    assert index.mindspore_name("kit.F.static_size") is None
    assert index.mindspore_name("kit.F.no_such_op") is None
    assert index.mindspore_name("kit.F.NotEqual") == "mindspore.ops.NotEqual"
    assert main(["check", "--no-cache", "-q", str(tmp_path / "kit")]) == 0


def test_a_method_is_found_without_reading_the_bases_past_the_class_that_defines_it(tmp_path, monkeypatch):
    """``find_method`` walks ``method_owner_chain`` only as far as the first class defining the method: the
    constructions table asks every class the project builds for its ``__init__``, and a base's module (an installed
    package) is read only for a class that inherits it."""
    from ms_lint.analysis import index as index_module

    site = make(tmp_path / "site", {
        "extlib/__init__.py": "",
        "extlib/base.py": """
            class Base:
                def __init__(self, size=3):
                    self.size = size
            """,
    })
    monkeypatch.syspath_prepend(str(site))
    root = make(tmp_path / "proj", {
        "pkg/__init__.py": "",
        "pkg/heads.py": """
            from extlib.base import Base

            class Own(Base):
                def __init__(self, size=4):
                    super().__init__(size)

            class Inherits(Base):
                pass
            """,
    })
    index = ProjectIndex.for_files([str(root / "pkg" / "heads.py")])
    read = []
    real = index_module.summarize_file
    monkeypatch.setattr(index_module, "summarize_file", lambda path, raw=None: read.append(path) or real(path, raw))
    assert index.find_method(("pkg.heads", "Own"), "__init__")[0] == ("pkg.heads", "Own")
    assert read == []  # the base's module was not read
    assert index.find_method(("pkg.heads", "Inherits"), "__init__")[0] == ("extlib.base", "Base")
    assert [os.path.relpath(path, site) for path in read] == ["extlib/__init__.py", "extlib/base.py"]
    assert index.method_owner_chain(("pkg.heads", "Own")) == [("pkg.heads", "Own"), ("extlib.base", "Base")]


def test_a_star_import_of_a_module_that_cannot_be_read_gives_no_name_and_no_walk(tmp_path, monkeypatch):
    """``from ._ext import *`` of a compiled extension in a package that star-imports its submodules (SciPy's
    ``linalg``): what the extension exports is unknown, so it gives no name. Asked for by the name
    ``lib._ext.<name>``, the walk used to find the package in the extension's place and look ``_ext`` up there
    through the same star imports, the name one part longer each time, until the depth limit: thousands of
    lookups, none kept, on every question about such a name."""
    from ms_lint.analysis import index as index_module

    stars = "".join(f"from ._part{n} import *\n" for n in range(4))
    make(tmp_path, {
        "lib/__init__.py": "from ._ext import *\n" + stars,
        "lib/_ext.cpython-311-x86_64-linux-gnu.so": "",
        **{f"lib/_part{n}.py": f"from ._ext import *\n\n\ndef helper{n}(x):\n    return x\n" for n in range(4)},
        "model/__init__.py": "",
        "model/net.py": """\
            import mindspore as ms
            from lib import helper2, dft


            @ms.jit
            def step(x):
                return dft(helper2(x))
            """,
    })
    index = ProjectIndex.for_files([str(tmp_path / "model/net.py"), str(tmp_path / "lib/__init__.py")])
    walked = []
    resolve = index_module.ProjectIndex._resolve
    monkeypatch.setattr(index_module.ProjectIndex, "_resolve",
                        lambda self, full, depth: walked.append(full) or resolve(self, full, depth))
    assert index.resolve("lib.dft") is None
    assert index.resolve("lib._ext.dft") is None
    assert len(walked) < 40, len(walked)
    assert index.resolve("lib.helper2") == ("lib._part2", "helper2")
    assert index.module_holding("lib.dft").name == "lib"
