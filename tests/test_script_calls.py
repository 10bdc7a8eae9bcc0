"""A module's own script code (``if __name__ == "__main__":``, module-level test functions) as evidence of what a
Cell's ``construct`` takes, and ``len(p)`` of a parameter that only a caller shows to be one Tensor: both make an
MSL101 finding without a fix (``ms_lint.analysis.script_calls``, ``shapes.collecting_caller_evidence``)."""
import pytest

from ms_lint.testing import lint

HEAD = '''
import numpy as np
import mindspore as ms
from mindspore import nn, ops


def assign(rois, gts):
    batch_size = len(rois)
    picked = []
    for i in range(batch_size):
        picked.append(ops.sort(rois[i] * gts[i])[0])
    return ops.stack(picked)


class Assigner(nn.Cell):
    def __init__(self, count=8):
        super().__init__()
        self.count = count

    def construct(self, rois, gts):
        return assign(rois, gts)


class Other(nn.Cell):
    def construct(self, rois, gts):
        return rois
'''

MAIN = '''
if __name__ == "__main__":
    net = Assigner()
    rois = ms.Tensor(np.ones((2, 100, 4), np.float32))
    gts = ms.Tensor(np.ones((2, 100, 4), np.float32))
    out = net(rois, gts)
'''


def _loop_findings(code):
    return [(f.line, f.fix) for f in lint(code, select=["MSL101"])]


def test_the_module_s_main_block_passing_a_tensor_makes_the_len_loop_a_finding_without_a_fix():
    findings = lint(HEAD + MAIN, select=["MSL101"])
    assert [(f.line, f.fix) for f in findings] == [(10, None)]
    assert "the module's script code passes it (`net(rois, gts)`)" in findings[0].detail


def test_without_the_script_call_nothing_is_reported():
    assert _loop_findings(HEAD) == []


@pytest.mark.parametrize("change", [
    ("rois = ms.Tensor(np.ones((2, 100, 4), np.float32))", "rois = [ms.Tensor(np.ones((100, 4), np.float32))] * 2"),
    ("rois = ms.Tensor(np.ones((2, 100, 4), np.float32))", "rois = ops.split(ms.Tensor(np.ones((2, 4))), 1)"),
    ("    out = net(rois, gts)", "    rois = list(rois)\n    out = net(rois, gts)"),  # bound twice
    ("net = Assigner()", "net = Other()"),
    ("    out = net(rois, gts)\n", "    out = net(rois, gts)\n    Assigner = Other\n"),  # the name rebound
    ("    net = Assigner()\n", ""),  # ``net`` is not built here
])
def test_script_calls_that_do_not_show_one_tensor_are_not_evidence(change):
    old, new = change
    assert old in HEAD + MAIN
    assert _loop_findings((HEAD + MAIN).replace(old, new)) == []


def test_a_call_before_the_tensor_is_bound_is_not_evidence():
    main = MAIN.replace("    out = net(rois, gts)\n", "").replace("    net = Assigner()\n",
                                                                    "    net = Assigner()\n    out = net(rois, gts)\n")
    assert _loop_findings(HEAD + main) == []


def test_a_module_level_test_function_is_script_code_too():
    test = '''
def test_assigner():
    net = Assigner(count=4)
    rois = ops.ones((2, 100, 4), ms.float32)
    return net(rois, rois)
'''
    assert _loop_findings(HEAD + test) == [(10, None)]
    assert _loop_findings(HEAD + test.replace("def test_assigner():", "def test_assigner(rois):")
                          .replace("    rois = ops.ones((2, 100, 4), ms.float32)\n", "")) == []


def test_a_loop_over_the_construct_parameter_itself_takes_the_same_evidence():
    code = HEAD.replace("        return assign(rois, gts)", "        out = []\n        for row in rois:\n"
                                                            "            out.append(ops.sort(row)[0])\n"
                                                            "        return ops.stack(out)")
    assert _loop_findings(code) == []
    findings = lint(code + MAIN, select=["MSL101"])
    assert [(f.line, f.fix) for f in findings] == [(22, None)]


def test_len_of_a_helper_parameter_a_graph_caller_fills_with_a_tensor_is_a_trip_count_without_a_fix():
    code = '''
from mindspore import Tensor, nn


class Embedder(nn.Cell):
    def _trim(self, vecs, counts):
        kept = []
        for i in range(len(counts)):
            kept.append(vecs[i, :3] * counts[i])
        return kept

    def construct(self, hidden, mask: Tensor):
        counts = mask.sum(axis=1)
        return self._trim(hidden, counts)
'''
    findings = lint(code, select=["MSL101"])
    assert [(f.line, f.fix) for f in findings] == [(8, None)]
    assert "as `construct` passes it (`self._trim(hidden, counts)`)" in findings[0].detail
    assert lint(code.replace("counts = mask.sum(axis=1)", "counts = [3, 4]"), select=["MSL101"]) == []
