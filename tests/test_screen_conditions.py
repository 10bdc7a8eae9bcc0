"""The screen's test of ``if`` conditions (``ms_lint.analysis.screen_conditions``) clears only what the value model
never takes for a Tensor.

MSL201 reports an ``if`` only when ``FunctionValues.kind`` gives its test TENSOR, so the screen may skip a file
whose graph functions hold no other test. These tests hold ``not_tensor`` to that on every condition of every
graph function in the fixtures and rule examples, and check by example what it clears and what it keeps: the
writes of ``self.<attr>`` that make it a Tensor, rebinding a parameter, an annotation, an imported ``len``.
"""
import ast
import functools
import textwrap

import libcst as cst
import pytest
from corpus_support import corpus, corpus_project

import ms_lint.engine as engine
from ms_lint.analysis.screen_conditions import SelfAttributes, const_calls_of, not_tensor
from ms_lint.analysis.values import Kind
from ms_lint.config import Config
from ms_lint.cstutil import code_of
from ms_lint.source import read_source
from ms_lint.walk import find

CORPUS = corpus()


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """Each corpus item analysed without the screen (every file parsed), inside a copy of the fixtures."""
    base = tmp_path_factory.mktemp("screen_conditions")
    results = []
    real = engine._graph_syntax_possible
    engine._graph_syntax_possible = lambda *args, **kwargs: True
    try:
        for name, path in corpus_project(base, CORPUS):
            result = engine.analyze_source(read_source(str(path)), Config(root=str(base), ignore=["MSL3"]), str(path))
            results.append((name, result))
    finally:
        engine._graph_syntax_possible = real
    return results


def test_what_the_screen_clears_the_model_never_takes_for_a_tensor(analysed):
    cleared = kept = tensors = 0
    for name, result in analysed:
        context = result.context
        if context is None or context.project is None:
            continue
        summary = context.project.index.by_path.get(context.project.path)
        if summary is None:
            continue
        const_calls = const_calls_of(summary.imports, summary.star_imports)
        attributes = SelfAttributes(result.source.text, const_calls)
        for info in context.scope.graph_functions():
            owner = context.scope.owner_of.get(info.node)
            values = context.values(info.node)
            for node in find(info.node, (cst.If, cst.IfExp)):
                if context.enclosing_function(node) is not info.node:
                    continue
                code = code_of(node.test)
                try:
                    test = ast.parse(f"({code})", mode="eval").body
                except SyntaxError:
                    continue
                tensor = values.kind(node.test) is Kind.TENSOR
                tensors += tensor
                if not_tensor(test, functools.partial(attributes.never_tensor, owner), const_calls):
                    cleared += 1
                    assert not tensor, f"{name}: `{code}` in {info.node.name.value} is a Tensor test"
                else:
                    kept += 1
    assert cleared >= 50 and kept >= 100 and tensors >= 50, (cleared, kept, tensors)


def _check(tmp_path, monkeypatch, code):
    """(finding codes, whether libcst parsed the file) for ``code`` as a one-file project."""
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    parses = []
    real = engine.parse_module
    monkeypatch.setattr(engine, "parse_module", lambda text: parses.append(1) or real(text))
    result = engine.analyze_path(str(path), Config(root=str(tmp_path), ignore=["MSL3"]))
    return [f.code for f in result.findings], bool(parses)


CELL = """
import mindspore as ms
from mindspore import nn, ops, Tensor
{imports}

class Block(nn.Cell):
    def __init__(self, has_bias=True, scale: float = 1.0, gate=None, mode: str = "a"):
        super().__init__()
        self.dense = nn.Dense(4, 4)
        {init}

    def construct(self, x):
        {body}
        return x
"""


@pytest.mark.parametrize("init, body", [
    ("self.has_bias = has_bias", "if self.has_bias:\n            x = x + 1"),
    ("self.scale = scale\n        self.use_gate = gate is not None", "if self.scale > 1 and self.use_gate:\n"
                                                                         "            x = x * 2"),
    ("self.k = 3", "if self.k == 3 or not self.training:\n            x = x + 1"),
    ("self.mode = mode", "x = x + 1 if self.mode else x"),
    ("", "if len(x.shape) == 4 and x.ndim != 2:\n            x = x + 1"),
    ("", "if x.shape[0] > 1 or isinstance(x, tuple):\n            x = x + 1"),
    ("", "if x.dtype == ms.float16 and self.dense.has_bias:\n            x = x + 1"),
])
def test_tests_the_model_decides_without_the_function_are_not_parsed(tmp_path, monkeypatch, init, body):
    codes, parsed = _check(tmp_path, monkeypatch, CELL.format(imports="", init=init, body=body))
    assert codes == [] and not parsed


@pytest.mark.parametrize("imports, init, body, reported", [
    # a Tensor attribute
    ("", "self.w = Tensor(1.0, ms.float32)", "if self.w > 0:\n            x = x + 1", True),
    # a literal here, a Tensor in another method
    ("", "self.flag = False", "if self.flag:\n            x = x + 1\n        self.flag = ops.isnan(x).any()", True),
    # the parameter is rebound to a Tensor before it is stored
    ("", "has_bias = Tensor(has_bias)\n        self.has_bias = has_bias", "if self.has_bias:\n            x = x + 1",
     True),
    # a tuple target: not a plain write, the model is asked
    ("", "self.a, self.b = 1, Tensor(2)", "if self.b:\n            x = x + 1", False),
    # never assigned here: the value may come from a base class in another module
    ("", "", "if self.threshold > 0:\n            x = x + 1", False),
    # an imported ``len`` is not the builtin
    ("from mindspore.ops import reduce_sum as len", "", "if len(x) > 1:\n            x = x + 1", True),
    # a Tensor view of a Tensor
    ("", "", "if ops.abs(x).T > 1:\n            x = x + 1", True),
    # a test nothing clears
    ("", "", "if x.sum() > 0:\n            x = x + 1", True),
])
def test_tests_the_model_must_decide_are_parsed(tmp_path, monkeypatch, imports, init, body, reported):
    codes, parsed = _check(tmp_path, monkeypatch, CELL.format(imports=imports, init=init, body=body))
    assert parsed
    assert (codes == ["MSL201"]) is reported


def test_an_annotated_parameter_without_default_is_asked():
    text = textwrap.dedent("""
        class Block(Cell):
            def __init__(self, w: Tensor, n=2):
                self.w = w
                self.n = n
    """)
    attributes = SelfAttributes(text)
    assert not attributes.never_tensor("Block", "w") and attributes.never_tensor("Block", "n")


def test_writes_in_an_in_module_base_count():
    text = textwrap.dedent("""
        class Base(Cell):
            def __init__(self):
                self.gate = Tensor(1.0)

        class Head(Base):
            def __init__(self):
                super().__init__()
                self.k = 2

            def reset(self):
                self.k = self.k + 1
                self.m = self.compute(self.m)

        class Other(Base):
            def __init__(self, gate=False):
                self.gate = gate
    """)
    attributes = SelfAttributes(text)
    assert not attributes.never_tensor("Head", "gate")  # Base writes a Tensor
    assert not attributes.never_tensor("Other", "gate")  # so does Other's base
    assert attributes.never_tensor("Head", "k")  # ``self.k + 1``: UNKNOWN plus CONST in ``_InitEnv``
    assert not attributes.never_tensor("Head", "m")  # what a method returns may be a Tensor
    assert not attributes.never_tensor("Missing", "k") and not attributes.never_tensor(None, "k")
    assert attributes.never_tensor("Head", "training")


def test_classes_under_a_block_are_not_collected():
    """``GraphScope`` does not collect a class under a module-level ``if``, so neither does the screen."""
    text = textwrap.dedent("""
        if True:
            class Head(Cell):
                def __init__(self):
                    self.k = 2
    """)
    assert not SelfAttributes(text).never_tensor("Head", "k")


def test_a_starred_base_is_in_the_chain(tmp_path, monkeypatch):
    """libcst keeps ``*Base`` among a class's bases (an ``Arg`` holding the name), so the value model joins what
    Base writes: found in review, the screen once read only plain-name bases and skipped this file."""
    code = """
import mindspore as ms
from mindspore import nn, ops, Tensor


class Base:
    def __init__(self):
        self.flag = Tensor(1.0)


class Net(nn.Cell, *Base):
    def __init__(self, flag=False):
        super().__init__()
        self.flag = flag

    def construct(self, x):
        if self.flag:
            return x + 1
        return x
"""
    assert not SelfAttributes(textwrap.dedent(code)).never_tensor("Net", "flag")
    codes, parsed = _check(tmp_path, monkeypatch, code)
    assert parsed and codes == ["MSL201"]


def test_reading_the_classes_warns_nothing(tmp_path, monkeypatch, recwarn):
    """``1if c else 2`` makes Python's parser warn (SyntaxWarning); the screen's reading of the module for its
    classes must not print it on the user's stderr."""
    import warnings

    warnings.simplefilter("always")
    codes, parsed = _check(tmp_path, monkeypatch, CELL.format(
        imports="", init="self.flag = has_bias", body="y = [1if self.flag else 2]\n        if self.flag:\n"
                                                        "            x = x + 1"))
    assert codes == [] and not parsed  # the classes were read: every test needed self.flag
    assert not [w for w in recwarn if issubclass(w.category, SyntaxWarning)]
