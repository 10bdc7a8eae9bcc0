"""The text pre-filter never hides a finding: a file it skips has no findings with the filter turned off either.

``ms_lint.prefilter`` decides from the text alone whether any enabled rule can fire, so that most files are never
parsed. These tests hold it to that: the graph-code test agrees with ``GraphScope`` on every fixture and rule
example, every rule's INVALID examples pass the filter, and turning the filter off changes no finding.
"""
import textwrap
import warnings

import libcst as cst
import pytest
from corpus_support import ROOT, corpus

import ms_lint.engine as engine
from ms_lint.config import Config
from ms_lint.context import ModuleContext
from ms_lint.prefilter import (
    ANY,
    GRAPH_CODE,
    AllOf,
    AnyOf,
    CalledWith,
    CalledWords,
    CodeWords,
    Text,
    can_hold_graph_code,
    may_fire,
    requirement,
    rules_that_may_fire,
    satisfied,
)
from ms_lint.rules import all_rules
from ms_lint.source import decode_source

CORPUS = corpus()


def graph_function_names(text):
    module = cst.parse_module(text)
    context = ModuleContext(module, text, "example.py", Config())
    return [info.node.name.value for info in context.scope.graph_functions()]


def test_there_is_something_to_check():
    assert len(CORPUS) >= 20
    assert sum(1 for _, text in CORPUS if not can_hold_graph_code(text)) >= 3, "no example exercises the skip path"


@pytest.mark.parametrize("name, text", CORPUS, ids=[name for name, _ in CORPUS])
def test_graph_code_test_agrees_with_graph_scope(name, text):
    try:
        functions = graph_function_names(text)
    except cst.ParserSyntaxError:
        functions = []  # a file that does not parse has no graph functions to miss
    if functions:
        assert can_hold_graph_code(text), f"{name}: graph functions {functions} but the pre-filter skips the file"


@pytest.mark.parametrize("name, text", CORPUS, ids=[name for name, _ in CORPUS])
def test_findings_are_the_same_without_the_filter(name, text, monkeypatch):
    source = decode_source(name, text.encode("utf-8"))
    config = Config(root=str(ROOT))
    with_filter = [f.to_json() for f in engine.analyze_source(source, config, name).findings]
    monkeypatch.setattr(engine, "rules_that_may_fire", lambda text, rules, *_: list(rules))
    without = [f.to_json() for f in engine.analyze_source(source, config, name).findings]
    assert with_filter == without


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_every_invalid_example_passes_the_filter_for_its_rule(rule):
    for example in rule.INVALID:
        code = textwrap.dedent(example.code)
        assert may_fire(code, [rule]), (
            f"{rule.code} flags this INVALID example, but its requires_text ({requirement(rule)!r}) would skip "
            f"the file:\n{code}"
        )


# -- the graph-code test on its own ---------------------------------------------------------------------------
GRAPH = {
    "decorator": "import mindspore as ms\n@ms.jit\ndef f(x):\n    return x\n",
    "decorator with arguments": "import mindspore\n@mindspore.jit(jit_level='O1')\ndef f(x):\n    return x\n",
    "aliased import": "from mindspore import jit as compile_graph\n@compile_graph\ndef f(x):\n    return x\n",
    "jit call": "import mindspore as ms\ndef f(x):\n    return x\ng = ms.jit(f)\n",
    "ms_function": "from mindspore import ms_function\n@ms_function\ndef f(x):\n    return x\n",
    "cell": "from mindspore import nn\nclass Net(nn.Cell):\n    def construct(self, x):\n        return x\n",
    "def continued": ("from mindspore import nn\nclass Net(nn.Cell):\n    def \\\n construct(self, x):\n"
                      "        return x\n"),
    "jit in an f-string field": "import mindspore as ms\nprint(f'{ms.jit(len)}')\n",
    "jit after a continued f-string": "import mindspore as ms\nprint(f'a \\\n{ms.jit(len)}')\n",
    "triple-quoted f-string": "import mindspore as ms\nprint(f'''\n{ms.jit(len)}\n''')\n",
    "unterminated string": "import mindspore as ms\nx = 'oops\n@ms.jit\ndef f(x):\n    return x\n",
    "jit after a string with an escaped quote": "import mindspore as ms\ns = 'it\\'s'; g = ms.jit(len)\n",
    "jit after a raw string ending in a backslash pair": "import mindspore as ms\ns = r'\\\\'; g = ms.jit(len)\n",
    "other jit (a superset is fine)": "import numba\n@numba.jit\ndef f(x):\n    return x\n",
}

NOT_GRAPH = {
    "no words at all": "import mindspore\nx = mindspore.Tensor([1])\n",
    "docstring example": 'import mindspore\ndef f():\n    """\n    >>> @mindspore.jit\n    ... def g(x):\n    ...     '
                         'return x\n    >>> class N(nn.Cell):\n    ...     def construct(self, x):\n    """\n',
    "comment": "import mindspore\n# @mindspore.jit would compile this; def construct(self) too\nx = 1\n",
    "string with a quote char inside": "import mindspore\nmsg = \"don't use ms.jit here\"\nother = '#'\n",
    "longer identifiers": "import mindspore\njit_level = 'O0'\nconstructor = None\ndef construct_graph():\n    pass\n",
    "construct called, not defined": "import mindspore\nnet.construct(x)\n",
    "bytes and raw strings": "import mindspore\nb = rb'jit' + Rb\"def construct\"\n",
    "triple quotes holding quotes": "import mindspore\ns = '''it's \"jit\" ''' + \"\"\"def construct\"\"\"\n",
}


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_graph_code_is_kept(name):
    assert can_hold_graph_code(GRAPH[name])


@pytest.mark.parametrize("name", sorted(NOT_GRAPH))
def test_text_that_only_mentions_graph_words_is_skipped(name):
    assert not can_hold_graph_code(NOT_GRAPH[name])


def test_kept_examples_really_hold_graph_code():
    """The ``GRAPH`` cases MindSpore would compile are graph code for GraphScope too (the filter is no looser)."""
    for name in ("decorator", "decorator with arguments", "aliased import", "jit call", "ms_function", "cell",
                 "def continued"):
        assert graph_function_names(GRAPH[name]), name


# -- requirements per rule ----------------------------------------------------------------------------------------
class _HooksOnly:
    def visit_For(self, node):
        pass


class _ModuleRule:
    def check_module(self):
        pass


class _Declared(_ModuleRule):
    requires_text = ("set_context", "MS_COMPILER_CACHE")


class _DeclaredGraph(_ModuleRule):
    requires_text = GRAPH_CODE


class _DeclaredCode(_ModuleRule):
    requires_text = CodeWords("set_context")


def test_requirement_defaults_and_declarations():
    assert requirement(_HooksOnly) is GRAPH_CODE
    assert requirement(_ModuleRule) is ANY
    assert requirement(_Declared) == ("set_context", "MS_COMPILER_CACHE")
    assert requirement(_DeclaredGraph) is GRAPH_CODE
    assert requirement(_DeclaredCode) == CodeWords("set_context")


def test_may_fire_combines_the_enabled_rules():
    plain = "import mindspore\nx = 1\n"
    assert not may_fire(plain, [_HooksOnly, _Declared, _DeclaredGraph])
    assert may_fire(plain, [_HooksOnly, _ModuleRule])
    assert may_fire(plain + "mindspore.set_context(mode=0)\n", [_HooksOnly, _Declared])
    assert may_fire(GRAPH["cell"], [_HooksOnly])
    assert not may_fire(plain, [])


def test_only_the_rules_that_can_fire_are_run_on_a_parsed_file():
    rules = [_HooksOnly, _Declared, _DeclaredCode, _ModuleRule]
    assert rules_that_may_fire(GRAPH["cell"], rules) == [_HooksOnly, _ModuleRule]
    with_cache = GRAPH["cell"] + 'os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"\n'
    assert rules_that_may_fire(with_cache, rules) == [_HooksOnly, _Declared, _ModuleRule]
    assert rules_that_may_fire("import mindspore\nx = 1\n", [_HooksOnly, _Declared]) == []


def test_real_rules_left_out_of_a_graph_file_without_cache_settings():
    text = GRAPH["cell"]
    codes = [rule.code for rule in rules_that_may_fire(text, all_rules())]
    assert codes == ["MSL101", "MSL102", "MSL103", "MSL201"]
    # ...and leaving them out changes nothing: the skipped rules find nothing when run anyway.
    module = cst.parse_module(text)
    skipped = [rule for rule in all_rules() if rule.code not in codes]
    assert engine.run_rules(ModuleContext(module, text, "cell.py", Config()), skipped) == []


def test_a_skipped_file_with_a_syntax_error_still_gets_msl900():
    source = decode_source("bad.py", b"import mindspore\ndef f(:\n    pass\n")
    findings = engine.analyze_source(source, Config(), "bad.py").findings
    assert [f.code for f in findings] == ["MSL900"]
    assert findings[0].line == 2


def test_code_words_count_only_outside_strings_and_comments():
    rules = [_DeclaredCode]
    assert may_fire("import mindspore as ms\nms.set_context(mode=0)\n", rules)
    assert may_fire("from mindspore import set_context as sc\nsc(mode=0)\n", rules)
    assert may_fire("import mindspore as ms\nprint(f'{ms.set_context(mode=0)}')\n", rules)
    assert not may_fire('import mindspore\ndef f():\n    """>>> ms.set_context(mode=0)"""\n', rules)
    assert not may_fire("import mindspore\n# call ms.set_context(mode=0) first\n", rules)
    assert not may_fire("import mindspore\nset_context_mode = 0\n", rules)


# -- where a name is written: called, decorating, renamed (CalledWords) --------------------------------------------
CALLED = {
    "call": "ms.jit(f)",
    "call after blanks and a line break": "g = (ms.jit\n     (f))",
    "decorator": "@ms.jit\ndef f(x):\n    return x",
    "bare decorator with a comment": "@jit  # compile it\ndef f(x):\n    return x",
    "decorator with arguments": "@jit(jit_level='O1')\ndef f(x):\n    return x",
    "spaced decorator": "@ ms . jit\ndef f(x):\n    return x",
    "continued decorator": "@ms.\\\njit\ndef f(x):\n    return x",
    "parenthesized decorator": "@(\n    ms.jit\n)\ndef f(x):\n    return x",
    "import alias": "from mindspore import jit as compile_graph",
    "last line without a newline": "@ms.jit",
}
NOT_CALLED = {
    "plain import": "from mindspore import jit\nfrom mindspore import (\n    jit,\n    nn,\n)",
    "a definition": "def jit(fn=None):\n    return fn\nclass jit (object):\n    pass",
    "an attribute of it": "doc = jit.__doc__",
    "a keyword argument": "run(jit=False)",
    "assigned to a name": "compile_graph = ms.jit\nx = 1",
    "in a list": "names = [jit, ms_function]",
    "a condition, next to longer names": "jit_level = 'O0'\nif jit:\n    set_jit_config(x)",
}


@pytest.mark.parametrize("name", sorted(CALLED))
def test_called_words_are_found_where_qualify_can_resolve_them(name):
    assert Text("import mindspore as ms\n" + CALLED[name]).has_called_words(["jit"])


@pytest.mark.parametrize("name", sorted(NOT_CALLED))
def test_called_words_ignore_names_that_are_never_callees(name):
    text = "import mindspore as ms\n" + NOT_CALLED[name] + "\n"
    assert Text(text).has_code_words(["jit"]), "the example must mention the word in code"
    assert not Text(text).has_called_words(["jit"])
    assert not can_hold_graph_code(text)


def test_called_word_in_an_f_string_field_keeps_the_file():
    assert Text("import mindspore as ms\nprint(f'{ms.jit}')\n").has_called_words(["jit"])
    assert Text("import mindspore as ms\nprint(rf'''\n{ms.jit}''')\n").has_called_words(["jit"])
    assert not Text("import mindspore as ms\nprint(elif_('ms.jit'))\n").has_called_words(["jit"])


def test_requirements_combine():
    both = AllOf(CalledWords("set_context"), CodeWords("mode"))
    either = AnyOf(CalledWords("jit"), both)
    assert satisfied(both, Text("ms.set_context(mode=ms.GRAPH_MODE)\n"))
    assert not satisfied(both, Text("ms.set_context(device_target='CPU')\n"))
    assert not satisfied(both, Text("def set_context(mode=None):\n    pass\n"))
    assert satisfied(either, Text("@ms.jit\ndef f(x):\n    return x\n"))
    assert not satisfied(either, Text("from mindspore import jit, set_context\nmode = 1\n"))


def test_library_module_that_defines_jit_is_not_graph_code():
    """MindSpore's graph/api.py defines ``jit`` and mentions it everywhere; none of it can be a jit root."""
    text = textwrap.dedent('''\
        import mindspore
        from mindspore.common.api import _cell_graph_executor


        def jit(function=None, *, capture_mode="ast", jit_level="O0"):
            """Compile ``function``.

            >>> @jit
            ... def f(x):
            ...     return x
            """
            wrap = _wrap(function, jit_level)
            return wrap


        jit.__doc__ = jit.__doc__.strip()
        __all__ = ["jit"]
        ''')
    assert not can_hold_graph_code(text)
    assert graph_function_names(text) == []


FSTRING_FIELD = {
    "simple field": "print(f'{ms.jit(g)}')",
    "field after literal braces": "print(f'{{x}} {ms.jit(g)}')",
    "string with a brace in the field": "print(f'{d[\"}\"] + ms.jit(g)}')",
    "multi-line triple-quoted field": "print(f'''\ntext {\n    ms.jit(g)\n} more''')",
    "raw f-string": "print(rf'\\d {ms.jit(g)}')",
    "nested f-string": "print(f'{f\"{ms.jit(g)}\"}')",
    "format spec with a field": "print(f'{x:{ms.jit(g)}}')",
    "field after an escaped backslash": "print(f'\\\\{ms.jit(g)}')",
    "raw field after a backslash": "print(rf'\\{ms.jit(g)}')",
    "field after an invalid escape": "print(f'\\{ms.jit(g)}')",
    "field after an escaped quote": "print(f'it\\'s {ms.jit(g)}')",
    "raw field after an escaped quote": "print(rf'it\\'s {ms.jit(g)}')",
    "field on a continued line": "print(f'a \\\n{ms.jit(g)}')",
}
FSTRING_LITERAL = {
    "word in the literal text": "raise ValueError(f\"For '{name}', jit can't compile {x}\")",
    "doubled braces": "print(f'{{ms.jit(g)}} {x}')",
    "plain string after an f-string": "print(f'{x}' + 'ms.jit(g)')",
    "triple-quoted literal text": "print(f'''\n@ms.jit is {x}\n''')",
}


@pytest.mark.parametrize("name", sorted(FSTRING_FIELD))
def test_words_in_f_string_fields_are_code(name):
    text = "import mindspore as ms\n" + FSTRING_FIELD[name] + "\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "invalid escape sequence '\{'": valid all the same
        compile(text, name, "exec")
    assert can_hold_graph_code(text)


@pytest.mark.parametrize("name", sorted(FSTRING_LITERAL))
def test_words_in_f_string_literal_text_are_not(name):
    text = "import mindspore as ms\n" + FSTRING_LITERAL[name] + "\n"
    compile(text, name, "exec")
    assert not can_hold_graph_code(text)


def test_called_with_a_keyword():
    mode = CalledWith("set_context", "mode")
    assert satisfied(mode, Text("ms.set_context(device_target='CPU',\n               mode=ms.GRAPH_MODE)\n"))
    assert satisfied(mode, Text("from mindspore import set_context as configure\nconfigure(mode=0)\n"))
    assert not satisfied(mode, Text("ms.set_context(jit_syntax_level=ms.STRICT)\nopen(f, mode='rb')\n"))
    assert not satisfied(mode, Text("ms.set_context(device_id=mode_id)\nif mode == 1:\n    pass\n"))
    assert not satisfied(mode, Text("def set_context(mode=None):\n    pass\n"))
    assert not satisfied(mode, Text("ms.set_context(device_target='CPU')  # mode=GRAPH_MODE\n"))

