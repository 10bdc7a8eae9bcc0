"""The screen before parsing (``ms_lint.analysis.screen``) never hides a finding.

It decides from the project index's summary and the text that no graph function of a file holds a node the graph
rules hook, and the engine then skips libcst. These tests hold it to its argument: its set of functions that may
be graph code holds every function ``GraphScope`` finds, on every fixture and rule example; its ``ast`` test for
``if`` conditions clears nothing ``values.never_tensor`` keeps; and turning it off changes no finding.
"""
import ast
import sys

import libcst as cst
import pytest
from corpus_support import corpus, corpus_project
from project_support import make

import ms_lint.engine as engine
from ms_lint.analysis import screen, screen_conditions
from ms_lint.analysis.values import Kind, never_tensor
from ms_lint.config import Config
from ms_lint.prefilter import GRAPH_CODE
from ms_lint.rules import all_rules
from ms_lint.rules.base import Rule
from ms_lint.source import read_source

RULES = {rule.code: rule for rule in all_rules()}
CORPUS = corpus()


@pytest.fixture(scope="module", params=["auto", "jit-only"])
def checked(tmp_path_factory, request):
    """Each corpus item checked with the graph rules as a file of its own project (a fixture inside a copy of the
    fixtures, so that its package's other modules are indexed), under each ``graph-mode``: (name, path, analysis
    with the screen, analysis without, whether the screen skipped the parse)."""
    base = tmp_path_factory.mktemp("screen")
    results = []
    real = engine._graph_syntax_possible
    for name, path in corpus_project(base, CORPUS):
        # a jit word makes MSL301 fire, and it is not screened
        config = Config(root=str(base), ignore=["MSL3"], graph_mode=request.param)
        source = read_source(str(path))
        recorder = _Recorder(real)
        engine._graph_syntax_possible = recorder
        try:
            screened = engine.analyze_source(source, config, str(path))
            engine._graph_syntax_possible = lambda *args, **kwargs: True
            plain = engine.analyze_source(source, config, str(path))
        finally:
            engine._graph_syntax_possible = real
        results.append((name, path, screened, plain, recorder.verdicts == [False]))
    return results


class _Recorder:
    """The engine's screen, recording its verdicts."""

    def __init__(self, screen_function):
        self.screen_function = screen_function
        self.verdicts = []

    def __call__(self, *args, **kwargs):
        self.verdicts.append(self.screen_function(*args, **kwargs))
        return self.verdicts[-1]


def test_the_screen_skips_some_parses_and_keeps_others(checked):
    skipped = [name for name, _, _, _, skip in checked if skip]
    assert len(skipped) >= 10, "the screen skipped too few files to be exercised"
    assert len(checked) - len(skipped) >= 50


def test_findings_are_the_same_without_the_screen(checked):
    for name, _, screened, plain, _ in checked:
        assert [f.to_json() for f in screened.findings] == [f.to_json() for f in plain.findings], name


def test_the_candidates_hold_every_graph_function(checked):
    """Every function GraphScope takes for graph code (with the project index) is among the screen's."""
    compared = 0
    for name, path, _, plain, _ in checked:
        context = plain.context
        if context is None:
            continue
        graph = {_defined_in(context.scope, info) for info in context.scope.graph_functions()}
        summary = context.project.index.by_path.get(str(path))
        assert summary is not None, name
        found = list(screen.candidates(plain.source.text, summary, engine._project_graph(context.project),
                                       engine._constructs_compiled(context.project)))
        if any(words is None for _, _, words in found):
            continue  # unreadable text: the screen keeps the file
        named = {definition.qualname for definition, _, _ in found}
        assert graph <= named, f"{name}: graph functions {sorted(graph - named)} missing from the screen"
        compared += bool(graph)
    assert compared >= 60


def _defined_in(scope, info) -> str:
    """The qualname of the definition whose text holds a graph function: itself, or for a closure (a def nested
    in a function) the module function or method that holds it."""
    node, owner = info.node, info.owner
    while node in scope.enclosing:
        node = scope.enclosing[node]
        owner = scope.owner_of.get(node)
    return f"{owner}.{node.name.value}" if owner else node.name.value


def _conditions():
    for name, text in CORPUS:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.If, ast.IfExp)):
                yield name, ast.get_source_segment(text, node.test), node.test


def test_the_ast_test_clears_only_what_never_tensor_clears():
    cleared = kept = 0
    for name, code, test in _conditions():
        if screen_conditions.never_tensor(test):
            cleared += 1
            assert never_tensor(cst.parse_expression(f"({code})")), f"{name}: {code}"
        else:
            kept += 1
    assert cleared >= 50 and kept >= 50


@pytest.mark.parametrize("code, cleared", [
    ("x is None", True), ("not (a is None or b in c)", True), ('mode == "train"', True), ("-1", True),
    ("x", False), ("self.training", False), ("x > 0", False), ("x.shape[0] == 2", False), ("...", False),
    ("None", True), ('f"{x}"', True), ("a and b is None", False),
])
def test_never_tensor_cases(code, cleared):
    assert screen_conditions.never_tensor(ast.parse(code, mode="eval").body) is cleared
    if cleared:
        assert never_tensor(cst.parse_expression(f"({code})"))


def test_keywords_of_the_rules():
    assert screen.rule_keywords([RULES["MSL101"]]) == {"for", "while"}
    assert screen.rule_keywords([RULES["MSL102"]]) == {"for"}
    assert screen.rule_keywords([RULES["MSL201"]]) == {screen.TENSOR_IF}
    assert screen.rule_keywords([RULES["MSL301"]]) is None  # a module-wide rule: no screen

    class EveryIf(Rule):
        code = "X1"

        def visit_If(self, node):
            pass

    class Calls(Rule):
        code = "X2"

        def visit_Call(self, node):
            pass

    class JudgesGraphCode(Rule):  # no hook: its check_module looks at graph code some other way
        code = "X3"
        requires_text = GRAPH_CODE

        def check_module(self):
            pass

    assert screen.rule_keywords([EveryIf, RULES["MSL201"]]) == {"if"}
    assert screen.rule_keywords([Calls]) is None
    assert screen.rule_keywords([JudgesGraphCode, RULES["MSL101"]]) is None


def _check(tmp_path, monkeypatch, code):
    """(findings, parsed?, the screen's verdicts) of ``code`` checked as a one-file project with the graph rules
    (MSL301 fires on any ``jit`` and is not screened); the findings are asserted equal to those with the screen
    turned off."""
    return _check_project(tmp_path, monkeypatch, {"model.py": code}, "model.py")


HEAD = """
import mindspore as ms
from mindspore import nn, ops
"""


def test_a_cell_with_only_none_tests_is_not_parsed(tmp_path, monkeypatch):
    codes, parsed, verdicts = _check(tmp_path, monkeypatch, HEAD + """
class Head(nn.Cell):
    def __init__(self, layers):
        super().__init__()
        self.dense = nn.Dense(4, 4)
        for i in range(layers):
            print(i)

    def construct(self, x, mask=None):
        if mask is None:
            return self.dense(x)
        return self.dense(x) * mask
""")
    assert codes == [] and not parsed and verdicts == [False]  # the screen, not the pre-filter, skipped it


@pytest.mark.parametrize("body", [
    "if x.sum() > 0:\n            x = -x\n        return x",
    "return ops.stack([x[i] * 2 for i in range(x.shape[0])])",
    'print(f"{0 if x.sum() > 0 else 1}")\n        return x',
])
def test_a_graph_function_with_a_candidate_is_parsed(tmp_path, monkeypatch, body):
    _, parsed, verdicts = _check(tmp_path, monkeypatch, HEAD + f"""
class Head(nn.Cell):
    def construct(self, x):
        {body}
""")
    assert parsed and verdicts == [True]


@pytest.mark.parametrize("code", [
    # a helper the graph function calls
    HEAD + """
def helper(x):
    return ops.stack([x[i] * 2 for i in range(x.shape[0])])


class Head(nn.Cell):
    def construct(self, x):
        return helper(x)
""",
    # a helper of a MultitypeFuncGraph overload that a HyperMap applies (the project index does not follow these)
    HEAD + """
_scale = ops.MultitypeFuncGraph("scale")


def _scale_rows(g):
    return ops.stack([g[i] * 2 for i in range(g.shape[0])])


@_scale.register("Tensor")
def _scale_one(g):
    return _scale_rows(g)


class Scaler(nn.Cell):
    def __init__(self):
        super().__init__()
        self.hyper_map = ops.HyperMap()

    def construct(self, grads):
        return self.hyper_map(_scale, grads)
""",
    # jit renamed by an import
    """
import mindspore as ms
from mindspore import jit as compiled, ops


@compiled
def step(x):
    return ops.stack([x[i] * 2 for i in range(x.shape[0])])
""",
    # jit bound to a name twice: the last import decides (the index's summary keeps the first)
    """
import mindspore as ms
from mindspore import ops as compiled
from mindspore import jit as compiled, ops


@compiled
def step(x):
    return ops.stack([x[i] * 2 for i in range(x.shape[0])])
""",
    # a method handed to jit inside a nested function (the index's summary drops a nested function's calls)
    HEAD + """
class Trainer:
    def build(self):
        def compiled():
            return ms.jit(self.step)
        return compiled()

    def step(self, x):
        return ops.stack([x[i] * 2 for i in range(x.shape[0])])
""",
    # a function handed to jit at module level
    HEAD + """
def step(x):
    return ops.stack([x[i] * 2 for i in range(x.shape[0])])


fast_step = ms.jit(step)
""",
    # a function handed to jit in a default value (``GraphScope`` reads every call of the module)
    HEAD + """
def step(x):
    return ops.stack([x[i] * 2 for i in range(x.shape[0])])


def trainer(compiled=ms.jit(step)):
    return compiled
""",
    # a helper called from a nested function's decorator inside graph code
    HEAD + """
def scaled(x):
    return ops.stack([x[i] * 2 for i in range(x.shape[0])])


class Net(nn.Cell):
    def construct(self, x):
        @ops.constexpr
        def rows(n=scaled(x)):
            return n
        return x
""",
])
def test_graph_code_reached_by_name_is_checked(tmp_path, monkeypatch, code):
    codes, parsed, verdicts = _check(tmp_path, monkeypatch, code)
    assert parsed and "MSL101" in codes and verdicts == [True]


@pytest.mark.parametrize("handed", ["ms.jit(net.construct)", "ms.jit(fn=net)", "ms.jit(*nets)"])
def test_names_a_jit_module_writes_but_never_hands_to_jit_are_not_parsed(tmp_path, monkeypatch, handed):
    """``prepare`` is written twice in a module that calls ``jit``, but neither ``jit`` nor graph code gets it."""
    codes, parsed, verdicts = _check(tmp_path, monkeypatch, HEAD + f"""
def prepare(batch):
    for item in batch:
        item.check()
    return batch


def run(net, nets, batch):
    batch = prepare(batch)
    return {handed}(batch)
""")
    assert codes == [] and not parsed and verdicts == [False]


def test_plain_python_beside_a_cell_is_not_parsed(tmp_path, monkeypatch):
    """Loops in ``__init__`` and in helpers only ``__init__`` calls are not graph code."""
    codes, parsed, verdicts = _check(tmp_path, monkeypatch, HEAD + """
def make_layers(n):
    return [nn.Dense(4, 4) for _ in range(n)]


class Head(nn.Cell):
    def __init__(self, n=3):
        super().__init__()
        self.layers = nn.CellList(make_layers(n))
        self.last = nn.Dense(4, 4)

    def construct(self, x):
        return self.last(x)
""")
    assert codes == [] and not parsed and verdicts == [False]


def _same_without_screen(tmp_path, monkeypatch, raw: bytes, ignore=("MSL3",)):
    """(findings with the screen, findings without) of a one-file project holding ``raw``."""
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "model.py"
    path.write_bytes(raw)
    config = Config(root=str(tmp_path), ignore=list(ignore))
    screened = [f.to_json() for f in engine.analyze_path(str(path), config).findings]
    monkeypatch.setattr(engine, "_graph_syntax_possible", lambda *args, **kwargs: True)
    plain = [f.to_json() for f in engine.analyze_path(str(path), config).findings]
    return screened, plain


LOOP_HELPER = """
import mindspore as ms
from mindspore import nn, ops


def {name}(y):
    t = ops.ones((4,), ms.float32)
    for i in range(t.shape[0]):
        t = t * 2
    return t


class Net(nn.Cell):
    def construct(self, x):
        def inner(y):  # a call in a nested def: the project index does not follow it
            return {call}(y)
        return inner(x)
"""


@pytest.mark.parametrize("raw", [
    # identifiers Python reads NFKC-normalized, or that \w splits (found by an independent review)
    LOOP_HELPER.format(name="\uff48elper", call="\uff48elper").encode("utf-8"),
    LOOP_HELPER.format(name="a\u00b7b", call="a\u00b7b").encode("utf-8"),
    # a number glued to a keyword (Python 3.11 accepts it)
    (HEAD + """
class Net(nn.Cell):
    def construct(self, x):
        t = ops.ones((4,), ms.float32)
        return ops.stack([t[i] * 2for i in range(t.shape[0])])
""").encode(),
    (HEAD + """
class Net(nn.Cell):
    def construct(self, x):
        t = ops.ones((4,), ms.float32)
        return 1jif t.sum() > 0 else 2
""").encode(),
    # a form feed between `jit` and `as` (the last import decides, the index's summary keeps the first)
    b"""
import mindspore as ms
from mindspore import ops as compiled
from mindspore import jit\fas compiled, ops


@compiled
def step(x):
    return ops.stack([x[i] * 2 for i in range(x.shape[0])])
""",
    # a coding cookie: the index read UTF-8, the check reads UTF-7, where +AAo- is a line break
    (b"# coding: utf-7\n" + HEAD.encode() + b"""
class Net(nn.Cell):
    def construct(self, x):
        t = ops.ones((4,), ms.float32)
        return t  # +AAo-        for i in range(t.shape[0]):+AAo-            t = t * 2
"""),
])
def test_the_screen_keeps_what_reviews_found_it_lost(tmp_path, monkeypatch, raw):
    screened, plain = _same_without_screen(tmp_path, monkeypatch, raw)
    assert plain, "the case must have a finding to lose"
    assert screened == plain


def test_a_deep_not_chain_does_not_crash_the_screen(tmp_path, monkeypatch):
    raw = (HEAD + """
class Net(nn.Cell):
    def construct(self, x):
        if """ + "not " * 1500 + """x:
            return x
        return -x
""").encode()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # what the first file a fresh process checks runs under
    try:
        screened, plain = _same_without_screen(tmp_path, monkeypatch, raw)
    finally:
        sys.setrecursionlimit(limit)
    assert screened == plain
    assert all(finding["code"] != "MSL900" for finding in screened)


EAGER_LAYER = """
from mindspore import nn, ops


class Scale(nn.Cell):
    def construct(self, x):
        rows = [x[i] * 2 for i in range(x.shape[0])]
        return ops.stack(rows)
"""


def _check_project(tmp_path, monkeypatch, files, checked, graph_mode="auto"):
    """(findings of ``checked``, parsed?, the screen's verdicts) in a project of ``files``; the findings are
    asserted equal to those with the screen turned off."""
    make(tmp_path, {"pyproject.toml": "", **files})
    config = Config(root=str(tmp_path), ignore=["MSL3"], graph_mode=graph_mode)
    parses = []
    real = engine.parse_module
    monkeypatch.setattr(engine, "parse_module", lambda text: parses.append(1) or real(text))
    screen_function = engine._graph_syntax_possible
    recorder = _Recorder(screen_function)
    monkeypatch.setattr(engine, "_graph_syntax_possible", recorder)
    screened = engine.analyze_path(str(tmp_path / checked), config)
    parsed = bool(parses)
    monkeypatch.setattr(engine, "_graph_syntax_possible", lambda *args, **kwargs: True)
    plain = engine.analyze_path(str(tmp_path / checked), config)
    monkeypatch.setattr(engine, "_graph_syntax_possible", screen_function)
    assert [f.to_json() for f in screened.findings] == [f.to_json() for f in plain.findings]
    return [f.code for f in screened.findings], parsed, recorder.verdicts


def test_an_eager_cell_of_a_pynative_package_is_not_parsed(tmp_path, monkeypatch):
    """GraphScope never makes its ``construct`` a root, so the screen does not either."""
    codes, parsed, verdicts = _check_project(tmp_path, monkeypatch, {
        "pkg/__init__.py": "", "pkg/pynative/__init__.py": "", "pkg/pynative/layer.py": EAGER_LAYER,
    }, "pkg/pynative/layer.py")
    assert codes == [] and not parsed and verdicts == [False]


def test_a_pynative_cell_a_graph_model_holds_is_parsed(tmp_path, monkeypatch):
    codes, parsed, verdicts = _check_project(tmp_path, monkeypatch, {
        "pkg/__init__.py": "", "pkg/pynative/__init__.py": "", "pkg/pynative/layer.py": EAGER_LAYER,
        "pkg/model.py": """
            from mindspore import nn
            from pkg.pynative.layer import Scale


            class Model(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.scale = Scale()

                def construct(self, x):
                    return self.scale(x)
            """,
    }, "pkg/pynative/layer.py")
    assert codes == ["MSL101"] and parsed and verdicts == [True]


def test_an_eager_construct_that_graph_code_calls_is_parsed(tmp_path, monkeypatch):
    """Not a root, but a reached function that calls it (``self.construct(x)``) brings it back."""
    codes, parsed, verdicts = _check_project(tmp_path, monkeypatch, {
        "pkg/__init__.py": "", "pkg/pynative/__init__.py": "",
        "pkg/pynative/layer.py": EAGER_LAYER + """

import mindspore as ms


class Runner(Scale):
    @ms.jit
    def run(self, x):
        return self.construct(x)
""",
    }, "pkg/pynative/layer.py")
    assert codes == ["MSL101"] and parsed and verdicts == [True]


def test_an_eager_construct_only_named_by_graph_code_is_not_parsed(tmp_path, monkeypatch):
    """``cell.construct(x)``: ``GraphScope`` resolves ``f(...)`` and ``self.f(...)`` only, and neither does the
    screen (``_check_project`` checks the findings with the screen off too)."""
    codes, parsed, verdicts = _check_project(tmp_path, monkeypatch, {
        "pkg/__init__.py": "", "pkg/pynative/__init__.py": "",
        "pkg/pynative/layer.py": EAGER_LAYER + """

import mindspore as ms


@ms.jit
def scaled(cell, x):
    return cell.construct(x)
""",
    }, "pkg/pynative/layer.py")
    assert codes == [] and not parsed and verdicts == [False]


@pytest.mark.parametrize("graph_mode, guard", [
    ("jit-only", ""),
    ("auto", """
from mindspore import get_context, PYNATIVE_MODE

if get_context("mode") != PYNATIVE_MODE:
    raise RuntimeError("this module runs in PyNative mode only")
"""),
])
def test_constructs_graph_scope_never_compiles_are_not_parsed(tmp_path, monkeypatch, graph_mode, guard):
    codes, parsed, verdicts = _check_project(tmp_path, monkeypatch, {"model.py": EAGER_LAYER + guard},
                                             "model.py", graph_mode)
    assert codes == [] and not parsed and verdicts == [False]


def test_the_ast_argument_check_is_msl201s():
    """``screen._validation_guard`` (stdlib tree) says of every ``if`` of the corpus what MSL201's own test says of
    the same statement (libcst tree), matched by line."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    from ms_lint.rules.msl201_tensor_condition_branch import _validation_guard

    compared = guards = 0
    for name, text in CORPUS + [("checks", ARGUMENT_CHECKS), ("chain", CHECK_CHAIN)]:
        try:
            tree = ast.parse(text)
            wrapper = MetadataWrapper(cst.parse_module(text))
        except (SyntaxError, cst.ParserSyntaxError):
            continue
        positions = wrapper.resolve(PositionProvider)
        by_line = {positions[node].start.line: _validation_guard(node)
                   for node in positions if isinstance(node, cst.If)}
        for node in ast.walk(tree):
            if isinstance(node, ast.If):
                assert screen._validation_guard(node) == by_line[node.lineno], (name, node.lineno)
                compared += 1
                guards += by_line[node.lineno]
    assert compared >= 200 and guards >= 3


ARGUMENT_CHECKS = HEAD + """
class Head(nn.Cell):
    def construct(self, x, y):
        if x.sum() > 0:
            raise ValueError("x must not be positive")
        if y.sum() < 0: raise ValueError("negative"); raise ValueError("unreachable")
        return x + y
"""


CHECK_CHAIN = HEAD + """
def check(x):
    if x > 1:
        raise ValueError("too big")
    elif x < -1:
        raise ValueError("too small")
    elif x == 0: raise ValueError("zero")
    else:
        return x
    if x: pass
"""


def test_a_cell_with_only_argument_checks_is_not_parsed(tmp_path, monkeypatch):
    """MSL201 never reports ``if <check>: raise``, whatever the check: the screen passes over them too."""
    codes, parsed, verdicts = _check(tmp_path, monkeypatch, ARGUMENT_CHECKS)
    assert codes == [] and not parsed and verdicts == [False]


@pytest.mark.parametrize("branch", [
    "if x.sum() > 0:\n            raise ValueError('positive')\n        else:\n            x = -x",
    "if x.sum() > 0:\n            print('positive')\n            raise ValueError('positive')",
    "if x.sum() > 0:\n            raise ValueError('positive')\n        elif x.sum() < -1:\n            x = -x",
    # the last ``elif`` only raises, but the ``if`` heading the chain has an ``else``: the chain is reported
    "if x.sum() > 0:\n            raise ValueError('positive')\n"
    "        elif x.sum() < -1:\n            raise ValueError",
])
def test_an_if_that_does_more_than_raise_is_parsed(tmp_path, monkeypatch, branch):
    codes, parsed, verdicts = _check(tmp_path, monkeypatch, HEAD + f"""
class Head(nn.Cell):
    def construct(self, x):
        {branch}
        return x
""")
    assert parsed and verdicts == [True] and "MSL201" in codes


def test_what_the_function_names_clear_the_value_model_never_takes_for_a_tensor(checked):
    """Every ``if`` test of a graph function (the ones MSL201 asks about) that the screen clears with the function's
    names (``LocalNames``) and the class's attributes, the value model MSL201 asks gives another kind than TENSOR."""
    import functools

    from libcst.metadata import MetadataWrapper, PositionProvider

    compared = by_names = 0
    for name, path, _, plain, _ in checked:
        context = plain.context
        if context is None:
            continue
        text = plain.source.text
        tree = ast.parse(text)
        summary = context.project.index.by_path.get(str(path))
        const_calls = screen_conditions.const_calls_of(summary.imports, summary.star_imports)
        attributes = screen_conditions.SelfAttributes(text, const_calls)
        functions = {node.lineno: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        positions = MetadataWrapper(context.module, unsafe_skip_copy=True).resolve(PositionProvider)
        for info in context.scope.graph_functions():
            function = functions.get(positions[info.node.name].start.line)
            if function is None:
                continue
            tests = {(node.test.lineno, node.test.col_offset): node.test
                     for node in ast.walk(function) if isinstance(node, (ast.If, ast.IfExp))}
            names = screen_conditions.LocalNames(function, const_calls)
            self_attribute = functools.partial(attributes.never_tensor, info.owner)
            for node in cst_ifs(info.node):
                if context.enclosing_function(node) is not info.node:
                    continue
                where = positions[node.test].start
                test = tests.get((where.line, where.column))
                assert test is not None, (name, where)
                compared += 1
                if screen_conditions.not_tensor(test, self_attribute, const_calls):
                    continue
                if screen_conditions.not_tensor(test, self_attribute, const_calls, names.cleared(self_attribute)):
                    by_names += 1
                    assert context.values(info.node).kind(node.test) is not Kind.TENSOR, (name, where.line)
    assert compared >= 40 and by_names >= 1, (compared, by_names)


def cst_ifs(function):
    found = []

    class Ifs(cst.CSTVisitor):
        def visit_If(self, node):
            found.append(node)

        def visit_IfExp(self, node):
            found.append(node)

    function.body.visit(Ifs())
    return found


NAMES_CLEARED = HEAD + """
DEBUG = False


class Head(nn.Cell):
    def construct(self, x):
        rows = x.shape[0]
        wide = rows > 4 and x.ndim == 2
        step: int = 2
        if wide:
            x = x * step
        if DEBUG or not wide:
            x = x + 1
        channels = x.shape[1]
        groups = channels
        if groups % 16:
            x = x - 1
        return x
"""


def test_names_bound_only_to_what_is_never_a_tensor_are_cleared(tmp_path, monkeypatch):
    codes, parsed, verdicts = _check(tmp_path, monkeypatch, NAMES_CLEARED)
    assert codes == [] and not parsed and verdicts == [False]


@pytest.mark.parametrize("lines", [
    "flag = x.sum() > 0\n        if flag:",  # bound to a Tensor test
    "y = x\n        if y:",  # bound to a parameter
    "a, b = x.shape[0], x.sum()\n        if b:",  # a tuple target
    "total = 0\n        total += x.sum()\n        if total > 1:",  # augmented
    "n = 1\n        n = x.max()\n        if n:",  # one binding of two is a Tensor
    "keep = lambda keep: keep\n        t = x.sum() > 0\n        if t:",  # a name a lambda binds too, then a Tensor
])
def test_names_a_binding_may_make_a_tensor_keep_the_file(tmp_path, monkeypatch, lines):
    codes, parsed, verdicts = _check(tmp_path, monkeypatch, _negating_construct(lines))
    assert parsed and verdicts == [True] and codes == ["MSL201"]


@pytest.mark.parametrize("lines", [
    "if (m := x.sum()) > 0:",  # a walrus in the test
    "a = b\n        b = a\n        if a:",  # a cycle: not cleared, the model decides (UNKNOWN)
    "def inner(flag):\n            return flag\n        flag = x.shape[0] > 1\n        if flag:",  # also a parameter
    "for v in (1, 2):\n            pass\n        if v:",  # a loop target
])
def test_names_the_screen_cannot_follow_keep_the_file(tmp_path, monkeypatch, lines):
    _, parsed, verdicts = _check(tmp_path, monkeypatch, _negating_construct(lines))
    assert parsed and verdicts == [True]


def _negating_construct(lines: str) -> str:
    """A Cell whose ``construct`` runs ``lines`` (ending with an ``if``) and negates ``x`` under that ``if``."""
    return HEAD + f"""
class Head(nn.Cell):
    def construct(self, x):
        {lines}
            x = -x
        return x
"""


ATTRIBUTE_IN_BLOCKS = HEAD + """
class Head(nn.Cell):
    def __init__(self, mode="col"):
        super().__init__()
        if mode == "col":
            self.split = 1
        elif mode == "row":
            self.split = 2
        else:
            try:
                self.split = len(mode)
            except ValueError:
                self.split = 0

    def construct(self, x):
        if self.split == 1:
            return x * 2
        return x
"""


def test_an_attribute_written_in_blocks_of_init_is_cleared(tmp_path, monkeypatch):
    """``values.self_assignments`` reads the writes inside the ``if``/``try`` blocks of ``__init__`` too."""
    codes, parsed, verdicts = _check(tmp_path, monkeypatch, ATTRIBUTE_IN_BLOCKS)
    assert codes == [] and not parsed and verdicts == [False]


@pytest.mark.parametrize("init", [
    # a Tensor in one of the blocks
    "if flag:\n            self.split = ops.ones((2,))\n        else:\n            self.split = 1",
    # written only in a nested function: not among the class's own writes, the value model asks elsewhere
    "def setup():\n            self.split = 1\n        setup()",
    # written only in a class nested in __init__
    "class Inner:\n            split = 1\n        self.inner = Inner",
])
def test_an_attribute_the_blocks_do_not_clear_keeps_the_file(tmp_path, monkeypatch, init):
    code = HEAD + f"""
class Head(nn.Cell):
    def __init__(self, flag=True):
        super().__init__()
        {init}

    def construct(self, x):
        if self.split == 1:
            return x * 2
        return x
"""
    _, parsed, verdicts = _check(tmp_path, monkeypatch, code)
    assert parsed and verdicts == [True]


def test_a_long_chain_of_names_is_read_once_per_name(monkeypatch):
    """``a1 = a0 + a0; a2 = a1 + a1; ...``: each name is judged once (an independent review timed 2**n without)."""
    lines = ["def construct(self, x):", "    a0 = x.shape[0]"]
    lines += [f"    a{i} = a{i - 1} + a{i - 1}" for i in range(1, 13)]
    lines += ["    if a12:", "        x = -x", "    return x"]
    function = ast.parse("\n".join(lines)).body[0]
    calls = []
    real = screen_conditions.not_tensor

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(screen_conditions, "not_tensor", counted)
    names = screen_conditions.LocalNames(function, frozenset())
    cleared = names.cleared(screen_conditions.any_attribute)
    assert cleared("a12") and not cleared("x")
    assert len(calls) < 500, len(calls)
    assert names.cleared(screen_conditions.any_attribute) is cleared


# -- ``self.<holder>.<attr>`` tests (``ClassAttributes.held_tensor``): what an independent review found the screen
# cleared while the value model calls them Tensors
HOLDER_ACCUMULATE = """
    import mindspore as ms


    class Accumulator:
        def __init__(self, steps):
            self.sync = ms.Parameter(ms.Tensor(True), requires_grad=False)
            self.steps = steps
    """
HOLDER_STEP = """
    from mindspore import nn
    {imports}


    class TrainStep(nn.Cell):
        def __init__(self, net):
            super().__init__()
            self.net = net
            self.accumulator = Accumulator(4)
            self.coef = ms.Parameter(ms.Tensor(1.0))

        def construct(self, x):
            if {test}:
                x = self.net(x)
            return x
    """


@pytest.mark.parametrize("package, imports, test", [
    # a fallback import: the summary keeps the first, the value model the one that binds last
    ("pkg", "import mindspore as ms\n    try:\n        from mindspore.experimental.accumulate import Accumulator\n"
            "    except ImportError:\n        from pkg.accumulate import Accumulator", "self.accumulator.sync"),
    # MindSpore's own source checked as the project: its modules build project objects
    ("mindspore", "import mindspore as ms\n    from mindspore.accumulate import Accumulator", "self.accumulator.sync"),
    # a Tensor's view of a held Parameter
    ("pkg", "import mindspore as ms\n    from pkg.accumulate import Accumulator", "self.coef.real > 0"),
])
def test_held_object_tests_the_value_model_reads_are_kept(tmp_path, monkeypatch, package, imports, test):
    codes, parsed, verdicts = _check_project(tmp_path, monkeypatch, {
        f"{package}/__init__.py": "", f"{package}/accumulate.py": HOLDER_ACCUMULATE,
        f"{package}/step.py": HOLDER_STEP.format(imports=imports, test=test),
    }, f"{package}/step.py")
    assert codes == ["MSL201"] and parsed


@pytest.mark.parametrize("imports, test", [
    ("import mindspore as ms\n    from mindspore.nn import Dense as Accumulator", "self.accumulator.has_bias"),
    ("import mindspore as ms\n    from pkg.accumulate import Accumulator", "self.accumulator.steps > 1"),
])
def test_held_object_tests_nothing_can_make_a_tensor_are_cleared(tmp_path, monkeypatch, imports, test):
    codes, parsed, verdicts = _check_project(tmp_path, monkeypatch, {
        "pkg/__init__.py": "", "pkg/accumulate.py": HOLDER_ACCUMULATE,
        "pkg/step.py": HOLDER_STEP.format(imports=imports, test=test),
    }, "pkg/step.py")
    assert codes == []
    assert not parsed or "steps" in test  # a project class's attribute is read by the libcst side
