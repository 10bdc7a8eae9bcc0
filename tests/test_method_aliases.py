"""A method reached through an attribute ``__init__`` binds to it (``self.step = self._step if n > 1 else
self._dummy_step``, mindone's ``GradAccumulator``): graph code when graph code calls the attribute."""
from __future__ import annotations

import textwrap

import pytest

from ms_lint.analysis.summary import summarize
from ms_lint.config import Config
from ms_lint.runner import check_files

ACCUMULATOR = """\
import mindspore as ms
from mindspore import nn, ops


class Accumulator:
    def __init__(self, params, steps):
        self.grads = params.clone(prefix="acc", init="zeros")
        self.sync = ms.Parameter(ms.tensor(True), requires_grad=False)
        self.count = ms.Parameter(ms.tensor(0, ms.int32), requires_grad=False)
        self.steps = steps
        {binding}

    def _dummy_step(self, grads):
        return grads

    def _step(self, grads):
        ops.assign_add(self.count, 1)
        ops.assign(self.sync, self.count % self.steps == 0)
        if self.sync:
            return self.grads
        return grads
"""
TRAIN = """\
from mindspore import nn

from .accumulate import Accumulator


class TrainStep(nn.Cell):
    def __init__(self, net, optimizer, steps=4):
        super().__init__()
        self.net = net
        self.optimizer = optimizer
        self.accumulator = Accumulator(optimizer.parameters, steps)

    def construct(self, x):
        {call}
"""
CONDITIONAL = "self.step = self._step if steps > 1 else self._dummy_step"


def _check(tmp_path, binding=CONDITIONAL, call="return self.optimizer(self.accumulator.step(self.net(x)))"):
    package = tmp_path / "train"
    package.mkdir()
    files = {"__init__.py": "", "accumulate.py": ACCUMULATOR.format(binding=binding),
             "step.py": TRAIN.format(call=call)}
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    found = check_files([str(package / name) for name in files], Config().with_overrides(select=["MSL201"]),
                        use_cache=False)
    return [(f.path.rsplit("/", 1)[-1], f.line) for f in found]


@pytest.mark.parametrize("binding", [
    CONDITIONAL,
    "self.step = self._step",
    "if steps > 1:\n            self.step = self._step\n        else:\n            self.step = self._dummy_step",
    "self.step = self._dummy_step if steps == 1 else (self._step if steps > 1 else self._dummy_step)",
])
def test_a_method_an_init_alias_binds_is_graph_code_when_graph_code_calls_the_alias(tmp_path, binding):
    line = ACCUMULATOR.format(binding=binding).splitlines().index("        if self.sync:") + 1
    assert _check(tmp_path, binding=binding) == [("accumulate.py", line)]


def test_an_alias_of_the_class_s_own_method_called_on_self(tmp_path):
    call = "return self.run(x)"
    text = TRAIN.format(call=call).replace(
        "        self.accumulator = Accumulator(optimizer.parameters, steps)\n",
        "        self.flag = ms.Parameter(ms.tensor(True), requires_grad=False)\n"
        "        self.run = self._gated if steps else self._plain\n\n"
        "    def _plain(self, x):\n        return self.net(x)\n\n"
        "    def _gated(self, x):\n        if self.flag:\n            return self.net(x)\n        return x\n",
    ).replace("from mindspore import nn\n", "import mindspore as ms\nfrom mindspore import nn\n")
    package = tmp_path / "own"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "step.py").write_text(text, encoding="utf-8")
    found = check_files([str(package / "step.py")], Config().with_overrides(select=["MSL201"]), use_cache=False)
    assert [f.line for f in found] == [text.splitlines().index("        if self.flag:") + 1]


@pytest.mark.parametrize("binding, call", [
    # no graph code calls the alias
    (CONDITIONAL, "return self.optimizer(self.net(x))"),
    # one choice is not an attribute of self: what the attribute holds is unknown, nothing is followed
    ("self.step = self._step if steps > 1 else (lambda grads: grads)", None),
    # bound outside ``__init__``: not read
    ("self.steps = steps\n\n    def use_accumulation(self):\n        self.step = self._step", None),
])
def test_no_alias_no_graph_code(tmp_path, binding, call):
    kwargs = {"binding": binding} if call is None else {"binding": binding, "call": call}
    assert _check(tmp_path, **kwargs) == []


def test_the_summary_records_the_choices_in_order():
    tree_text = textwrap.dedent(ACCUMULATOR.format(
        binding="self.step = self._step if steps > 1 else self._dummy_step\n        self.zero = self._zero"))
    import ast

    summary = summarize(ast.parse(tree_text), "train.accumulate", "accumulate.py", "digest", "train")
    assert summary.classes["Accumulator"].method_aliases == {"step": ["_step", "_dummy_step"], "zero": ["_zero"]}
