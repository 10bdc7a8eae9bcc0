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


def test_a_rebinding_in_a_loop_forgets_the_constant():
    code = """
    def f(x, flag=False):
        for flag in x:
            pass
        if not flag:
            return (x, x)
        return x
    """
    assert _returned(code, flag=False) is None


def test_an_undecided_branch_that_rebinds_forgets_the_constant():
    code = """
    def f(x, flag=False):
        if x.sum() > 0:
            flag = True
        if not flag:
            return (x, x)
        return x
    """
    assert _returned(code, flag=False) is None


def test_a_branch_that_agrees_keeps_the_constant():
    code = """
    def f(x, flag=False):
        if x.sum() > 0:
            flag = False
        if not flag:
            return (x, x)
        return x
    """
    assert _returned(code, flag=False) == ["(x, x)"]


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
