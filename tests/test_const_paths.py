"""``const_paths``: the returns a call with constant arguments can reach, and what the value model reads from them
(a helper parameter annotated ``Tensor`` whose caller unpacks ``self.encode(x, False)``)."""
import textwrap

import libcst as cst
import pytest

from ms_lint.analysis.const_paths import call_constants, reachable_returns
from ms_lint.testing import lint
from ms_lint.walk import find


def _function(code: str) -> cst.FunctionDef:
    return find(cst.parse_module(textwrap.dedent(code)), cst.FunctionDef)[0]


def _returned(code: str, **constants):
    reached = reachable_returns(_function(code), constants)
    return None if reached is None else [cst.Module([]).code_for_node(r.value) for r in reached]


ENCODE = """
def encode(self, x, return_dict=None):
    return_dict = return_dict if return_dict is not None else self.config.return_dict
    frames = ops.stack([x, x])
    if not return_dict:
        return (frames, x)
    return Output(frames, x)
"""


def test_a_false_flag_reaches_only_the_tuple():
    assert _returned(ENCODE, return_dict=False) == ["(frames, x)"]


def test_a_true_flag_reaches_only_the_object():
    assert _returned(ENCODE, return_dict=True) == ["Output(frames, x)"]


def test_the_none_default_rules_nothing_out():
    assert _returned(ENCODE, return_dict=None) is None  # ``self.config.return_dict`` decides


def test_an_or_default_keeps_both_when_the_flag_is_false():
    code = ENCODE.replace("return_dict if return_dict is not None else self.config.return_dict",
                          "return_dict or self.config.return_dict")
    assert _returned(code, return_dict=False) is None
    assert _returned(code, return_dict=True) == ["Output(frames, x)"]


FLAG_THEN = """
def f(x, flag=False):
    BEFORE
    if not flag:
        return (x, x)
    return x
"""


@pytest.mark.parametrize("before, expected", [
    ("for flag in x:\n        pass", None),  # a loop rebinds it: forgotten
    ("if x.sum() > 0:\n        flag = True", None),  # an undecided branch rebinds it to another value
    ("if x.sum() > 0:\n        flag = False", ["(x, x)"]),  # both ways agree: kept
])
def test_what_happens_to_a_constant_before_the_test(before, expected):
    assert _returned(FLAG_THEN.replace("BEFORE", before), flag=False) == expected


def test_a_raising_branch_does_not_go_on():
    code = """
    def f(x, mode="a"):
        if mode == "a":
            raise ValueError(mode)
        return x
    """
    assert _returned(code, mode="a") == []


def test_returns_inside_other_blocks_are_all_kept():
    code = """
    def f(x, flag=False):
        with ctx():
            if flag:
                return x
        if flag:
            return x, x
        return (x, 1)
    """
    assert _returned(code, flag=False) == ["x", "(x, 1)"]


@pytest.mark.parametrize("statement", ["(flag := True)", "global flag", "del flag"])
def test_functions_that_bind_names_oddly_are_not_read(statement):
    code = f"""
    def f(x, flag=False):
        {statement}
        if not flag:
            return (x, x)
        return x
    """
    assert _returned(code, flag=False) is None


def test_generators_are_not_read():
    code = """
    def f(x, flag=False):
        if not flag:
            yield x
        return (x, x)
    """
    assert _returned(code, flag=False) is None


def test_call_constants_reads_literals_and_literal_defaults():
    func = _function("def f(self, x, a=None, b=3, c=[1]):\n    return x\n")
    call = cst.parse_expression("self.f(y, False, c=())")
    assert call_constants(func, True, call) == {"a": False, "b": 3}  # (a tuple, a list: not scalars)
    assert call_constants(func, True, cst.parse_expression("self.f(y, *rest)")) is None


MODEL = '''
import mindspore
from mindspore import nn, ops


class Codec(nn.Cell):
    def encode(self, values, return_dict=None):
        return_dict = return_dict if return_dict is not None else self.return_dict
        frames = []
        for offset in range(0, 8, 2):
            frames.append(values[:, offset:offset + 2])
        codes = ops.stack(frames)
        if not return_dict:
            return (codes, frames)
        return CodecOutput(codes, frames)

    def decode(self, codes: mindspore.Tensor, scales):
        decoded = []
        for code, scale in zip(codes, scales):
            decoded.append(self.decoder(code) * scale)
        return ops.stack(decoded)

    def construct(self, values, codes=None, scales=None):
        if codes is None:
            codes, scales = self.encode(values, FLAG)
        return self.decode(codes, scales)
'''


def test_a_tensor_annotated_parameter_unpacked_from_the_tuple_branch_is_found():
    findings = lint(MODEL.replace("FLAG", "False"), select=["MSL101"])
    assert [(f.code, f.line) for f in findings] == [("MSL101", 19)]
    assert findings[0].fix is None  # (``scales`` is a list: no vmap over both)


def test_the_same_call_that_can_return_the_object_is_not():
    assert lint(MODEL.replace("FLAG", "True"), select=["MSL101"]) == []
    assert lint(MODEL.replace("FLAG", "None"), select=["MSL101"]) == []


OVERRIDDEN = '''
import mindspore
from mindspore import nn, ops


class Codec(nn.Cell):
    def encode(self, values, flag=False):
        codes = ops.stack([values, values])
        if flag:
            return Output(codes)
        return codes, values

    def decode(self, codes: mindspore.Tensor, scale):
        decoded = []
        for code in codes:
            decoded.append(ops.tanh(code) * scale)
        return ops.stack(decoded)

    def construct(self, values):
        BINDING
        return self.decode(codes, scale)
'''
LIST_CODEC = '''

class ListCodec(Codec):
    def encode(self, values, flag=False):
        return [values, values * 2], values
'''


@pytest.mark.parametrize("binding", ["codes, scale = self.encode(values, False)",
                                     "codes, scale = self.encode(values)",
                                     "codes = self.encode(values)[0]; scale = values"])
def test_a_helper_a_subclass_overrides_says_nothing_of_what_the_caller_gets(binding):
    """The review's reproducer: ``ListCodec`` inherits ``construct`` and ``decode`` but its ``encode`` gives a list;
    a safe vmap fix of the shared ``decode`` loop mapped each list item's axis 0 instead of walking the list."""
    code = OVERRIDDEN.replace("BINDING", binding)
    assert [f.fix for f in lint(code + LIST_CODEC, select=["MSL101"]) if f.fix is not None] == []
    if "False" in binding:
        assert [(f.code, f.line) for f in lint(code, select=["MSL101"])] == [("MSL101", 15)]


def test_an_override_in_another_module_of_the_project_counts_too(tmp_path, capsys):
    from tests.project_support import json_check, make

    code = OVERRIDDEN.replace("BINDING", "codes, scale = self.encode(values, False)")
    files = {"pkg/__init__.py": "", "pkg/codec.py": code,
             "pkg/lists.py": "from pkg.codec import Codec\n" + LIST_CODEC}
    _status, found = json_check(make(tmp_path / "with", files), capsys, "--select", "MSL101", "pkg")
    assert found == []
    del files["pkg/lists.py"]
    _status, found = json_check(make(tmp_path / "without", files), capsys, "--select", "MSL101", "pkg")
    assert [f["line"] for f in found] == [15]  # (its vmap fix is right: ``codes`` is the stacked Tensor)


def test_a_single_result_of_an_overridden_helper_is_no_evidence_either():
    """The same bug, older than the constant returns (the review's ``c5``): ``codes = self.encode(values)``."""
    code = '''
import mindspore
from mindspore import nn, ops


class Codec(nn.Cell):
    def encode(self, values):
        return ops.stack([values, values])

    def decode(self, codes: mindspore.Tensor, scale):
        decoded = []
        for code in codes:
            decoded.append(ops.tanh(code) * scale)
        return ops.stack(decoded)

    def construct(self, values):
        codes = self.encode(values)
        return self.decode(codes, values)
'''
    assert [f.fix is not None for f in lint(code, select=["MSL101"])] == [True]
    subclass = "\n\nclass ListCodec(Codec):\n    def encode(self, values):\n        return [values, values * 2]\n"
    assert [f.fix for f in lint(code + subclass, select=["MSL101"]) if f.fix is not None] == []
