"""A module's own script code (``if __name__ == "__main__":``, module-level test functions) as evidence of what a
Cell's ``construct`` takes, and ``len(p)`` of a parameter that only a caller shows to be one Tensor: both make an
MSL101 finding without a fix (``ms_lint.analysis.script_calls``, ``shapes.collecting_caller_evidence``). Checked
with the CLI on a package, as users run it: the evidence needs the project index (no graph holder may call the
Cell)."""
import pytest

from tests.project_support import json_check, make

HEAD = '''
import numpy as np
import mindspore as ms
import mindspore.numpy as mnp
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
LOOP_LINE = 11

MAIN = '''
if __name__ == "__main__":
    net = Assigner()
    rois = ms.Tensor(np.ones((2, 100, 4), np.float32))
    gts = ms.Tensor(np.ones((2, 100, 4), np.float32))
    out = net(rois, gts)
'''


@pytest.fixture
def checked(tmp_path, capsys):
    """code -> the MSL101 findings of ``ms-lint check`` on a package that holds it as ``pkg/heads.py`` (beside
    the modules ``more`` names), as [(line, fix, detail)]."""
    def run(code, **more):
        files = {"pkg/__init__.py": "", "pkg/heads.py": code, **{f"pkg/{k}.py": v for k, v in more.items()}}
        root = make(tmp_path / f"p{len(list(tmp_path.iterdir()))}", files)
        _status, found = json_check(root, capsys, "--select", "MSL101", "pkg")
        return [(f["line"], f["fix"], f["detail"]) for f in found if f["path"].endswith("heads.py")]
    return run


def _lines(found):
    return [(line, fix) for line, fix, _detail in found]


def test_the_module_s_main_block_passing_a_tensor_makes_the_len_loop_a_finding_without_a_fix(checked):
    found = checked(HEAD + MAIN)
    assert _lines(found) == [(LOOP_LINE, None)]
    assert "the module's script code passes it (`net(rois, gts)`)" in found[0][2]


def test_without_the_script_call_nothing_is_reported(checked):
    assert checked(HEAD) == []


@pytest.mark.parametrize("old, new", [
    ("rois = ms.Tensor(np.ones((2, 100, 4), np.float32))", "rois = [ms.Tensor(np.ones((100, 4), np.float32))] * 2"),
    ("rois = ms.Tensor(np.ones((2, 100, 4), np.float32))", "rois = ops.split(ms.Tensor(np.ones((2, 4))), 1)"),
    # ops that give tuples: not creation ops (the review's reproducers)
    ("rois = ms.Tensor(np.ones((2, 100, 4), np.float32))", "rois = mnp.broadcast_arrays(gts, gts)"),
    ("rois = ms.Tensor(np.ones((2, 100, 4), np.float32))", "rois = mnp.triu_indices(4)"),
    ("rois = ms.Tensor(np.ones((2, 100, 4), np.float32))", "rois = ops.max_pool2d(gts, 2, return_indices=True)"),
    ("    out = net(rois, gts)", "    rois = list(rois)\n    out = net(rois, gts)"),  # bound twice
    ("net = Assigner()", "net = Other()"),
    ("    out = net(rois, gts)\n", "    out = net(rois, gts)\n    Assigner = Other\n"),  # the name rebound
    ("    net = Assigner()\n", ""),  # ``net`` is not built here
    ("    out = net(rois, gts)", "    outs = [net(rois, gts) for rois in ([[1.0]], [[3.0]])]"),  # its own `rois`
])
def test_script_calls_that_do_not_show_one_tensor_are_not_evidence(checked, old, new):
    assert old in HEAD + MAIN
    assert checked((HEAD + MAIN).replace(old, new)) == []


def test_a_call_before_the_tensor_is_bound_is_not_evidence(checked):
    main = MAIN.replace("    out = net(rois, gts)\n", "").replace("    net = Assigner()\n",
                                                                    "    net = Assigner()\n    out = net(rois, gts)\n")
    assert checked(HEAD + main) == []


def test_a_module_level_test_function_is_script_code_too(checked):
    test = '''
def test_assigner():
    net = Assigner(count=4)
    rois = ops.ones((2, 100, 4), ms.float32)
    return net(rois, rois)
'''
    assert _lines(checked(HEAD + test)) == [(LOOP_LINE, None)]
    assert checked(HEAD + test.replace("def test_assigner():", "def test_assigner(rois):")
                   .replace("    rois = ops.ones((2, 100, 4), ms.float32)\n", "")) == []


@pytest.mark.parametrize("old, new", [
    # the review's reproducers: the name ``Assigner`` does not always build the class whose construct is read
    ("def test_assigner():", "def test_assigner(Assigner):"),  # a parameter
    ("def test_assigner():\n", "def test_assigner():\n    class Assigner(nn.Cell):\n"
                               "        def construct(self, rois, gts):\n            return rois\n"),  # a local class
    ("def test_assigner():", "def Assigner():\n    return Other()\n\n\ndef test_assigner():"),  # a later def
    ("def test_assigner():", "Assigner, Other = Other, Assigner\n\n\ndef test_assigner():"),  # a swap
    ("def test_assigner():", "from other_pkg.assigners import Assigner\n\n\ndef test_assigner():"),  # an import
])
def test_a_name_the_module_or_the_function_binds_again_is_not_the_class(checked, old, new):
    test = '''
def test_assigner():
    net = Assigner()
    rois = ms.Tensor(np.ones((2, 100, 4), np.float32))
    return net(rois, rois)
'''
    assert _lines(checked(HEAD + test)) == [(LOOP_LINE, None)]
    assert old in test
    assert checked(HEAD + test.replace(old, new)) == []


def test_a_second_class_of_the_same_name_takes_no_evidence(checked):
    code = HEAD + "\n\nLEGACY = {'v1': Assigner}\n\n\nclass Assigner(nn.Cell):\n" \
                  "    def construct(self, rois, gts):\n        return rois * gts\n" + MAIN
    assert checked(code) == []


def test_a_module_name_some_function_rebinds_with_global_is_not_evidence(checked):
    code = HEAD + '''

def reset():
    global rois
    rois = [[1.0], [2.0]]


rois = ms.Tensor(np.ones((2, 100, 4), np.float32))
if __name__ == "__main__":
    reset()
    net = Assigner()
    out = net(rois, rois)
'''
    assert checked(code) == []
    assert _lines(checked(code.replace("    global rois\n", ""))) == [(LOOP_LINE, None)]


def test_a_graph_holder_s_call_outweighs_the_script(checked):
    holder = '''

class Holder(nn.Cell):
    def __init__(self):
        super().__init__()
        self.assigner = Assigner()

    def construct(self, a, b):
        return self.assigner(HANDED)
'''
    assert checked(HEAD + holder.replace("HANDED", "[a, b], [a, b]") + MAIN) == []
    assert _lines(checked(HEAD + holder.replace("HANDED", "ops.stack([a, b]), ops.stack([a, b])"))) == \
        [(LOOP_LINE, None)]  # (the holder's own Tensor: its evidence, no script needed)


def test_a_loop_over_the_construct_parameter_itself_takes_the_same_evidence(checked):
    code = HEAD.replace("        return assign(rois, gts)", "        out = []\n        for row in rois:\n"
                                                            "            out.append(ops.sort(row)[0])\n"
                                                            "        return ops.stack(out)")
    assert checked(code) == []
    assert _lines(checked(code + MAIN)) == [(23, None)]


def test_len_of_a_helper_parameter_a_graph_caller_fills_with_a_tensor_is_a_trip_count_without_a_fix(checked):
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
    found = checked(code)
    assert _lines(found) == [(8, None)]
    assert "as `construct` passes it (`self._trim(hidden, counts)`)" in found[0][2]
    assert checked(code.replace("counts = mask.sum(axis=1)", "counts = [3, 4]")) == []


HOLDER_HEAD = "import mindspore as ms\nfrom mindspore import nn, ops\nfrom pkg.heads import Assigner\n\n\n"


@pytest.mark.parametrize("holder", [
    # the second review's reproducers: graph code reaches an instance through a CellList or an alias
    '''class Holder(nn.Cell):
    def __init__(self):
        super().__init__()
        self.assigners = nn.CellList([Assigner(), Assigner()])

    def construct(self, x):
        return self.assigners[0]([x * 2, x * 3], x)
''',
    '''class Holder(nn.Cell):
    def __init__(self):
        super().__init__()
        self.assigner = Assigner()

    def construct(self, x):
        run = self.assigner
        return run([x * 2, x * 3], x)
''',
    '''class Holder(nn.Cell):
    def __init__(self):
        super().__init__()
        cells = []
        for _ in range(3):
            cells.append(Assigner())
        self.matchers = nn.CellList(cells)

    def construct(self, x):
        out = x
        for matcher in self.matchers:
            out = matcher([out, out], x)
        return out
''',
    '''class Holder(nn.Cell):
    def __init__(self):
        super().__init__()
        cells = [Assigner(), Assigner()]
        self.first = cells.pop()
''',
    '''def build():
    return Assigner()
''',
    '''REGISTRY = {"assigner": "Assigner"}
''',
])
def test_graph_code_that_may_reach_an_instance_outweighs_the_script(checked, holder):
    assert checked(HEAD + MAIN, holder=HOLDER_HEAD + holder) == []


def test_instances_kept_in_a_cell_list_nothing_reads_leave_the_script_s_word(checked):
    """mindocr's ``CascadeROIHeads``: one ``BBoxAssigner`` per stage in a ``CellList`` no method reads."""
    holder = '''class Holder(nn.Cell):
    def __init__(self, stages=3):
        super().__init__()
        heads, matchers = [], []
        for _ in range(stages):
            heads.append(nn.Dense(4, 4))
            matchers.append(Assigner(count=stages))
        self.heads = nn.CellList(heads)
        self.matchers = nn.CellList(matchers)

    def construct(self, x):
        return self.heads[0](x)
'''
    assert _lines(checked(HEAD + MAIN, holder=HOLDER_HEAD + holder)) == [(LOOP_LINE, None)]


@pytest.mark.parametrize("old, new", [
    ("MODULE_END", "REGISTRY = {'a': Assigner}\n"),  # module-level code of the defining module
    ("MODULE_END", "def test_list():\n    net = Assigner()\n    gts = ms.Tensor(np.ones((2, 4)))\n"
                   "    return net([gts, gts], gts)\n"),  # another script call passes a list
    ("    out = net(rois, gts)", "    try:\n        pass\n    except ValueError as rois:\n        pass\n"
                                "    out = net(rois, gts)"),
    ("    out = net(rois, gts)", "    match rois:\n        case [*rois]:\n            pass\n"
                                "    out = net(rois, gts)"),
])
def test_the_defining_module_may_not_use_the_class_or_the_input_otherwise(checked, old, new):
    code = HEAD + "\nMODULE_END\n" + MAIN
    assert _lines(checked(code.replace("MODULE_END", ""))) == [(LOOP_LINE, None)]
    assert old in code
    assert checked(code.replace(old, new).replace("MODULE_END", "")) == []


def test_the_cached_finding_goes_when_an_importer_starts_to_reach_the_cell(tmp_path, capsys):
    """The evidence depends on every module that imports the class: the results cache must say so."""
    holder = HOLDER_HEAD + '''class Holder(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matchers = nn.CellList([Assigner()])

    def construct(self, x):
        return x
'''
    root = make(tmp_path / "p", {"pkg/__init__.py": "", "pkg/heads.py": HEAD + MAIN, "pkg/holder.py": holder})
    cache = str(tmp_path / "cache")

    def loop_lines():
        _status, found = json_check(root, capsys, "--cache-dir", cache, "--select", "MSL101", "pkg")
        return [f["line"] for f in found if f["path"].endswith("heads.py")]

    assert loop_lines() == [LOOP_LINE]
    assert loop_lines() == [LOOP_LINE]  # (from the cache)
    (root / "pkg/holder.py").write_text(holder.replace("return x", "return self.matchers[0]([x, x], x)"))
    assert loop_lines() == []
