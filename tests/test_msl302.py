"""MSL302 deprecated-compile-cache-context: every spelling is found, the safe fix keeps behaviour and layout."""
import textwrap

import libcst as cst
import pytest

from ms_lint.testing import fix, lint

SELECT = ["MSL302"]


def findings(code):
    return [(f.line, f.code) for f in lint(code, select=SELECT)]


def fixed(code):
    outcome = fix(code, unsafe=False, select=SELECT)
    assert outcome.error is None, outcome.error
    cst.parse_module(outcome.fixed)
    assert not fix(outcome.fixed, select=SELECT).changed, "second fix changed the code"
    return outcome.fixed


@pytest.mark.parametrize("header, call", [
    ("import mindspore as ms", "ms.set_context(enable_compile_cache=True)"),
    ("import mindspore", "mindspore.set_context(compile_cache_path='./c')"),
    ("import mindspore", "mindspore.context.set_context(enable_compile_cache=True)"),
    ("from mindspore import context", "context.set_context(enable_compile_cache=True)"),
    ("from mindspore import set_context", "set_context(enable_compile_cache=True)"),
    ("from mindspore.context import set_context as sc", "sc(compile_cache_path='./c')"),
    ("import mindspore as ms", "ms.context.set_context(enable_compile_cache=False)"),
])
def test_spellings(header, call):
    assert findings(f"{header}\n{call}\n") == [(2, "MSL302")]


@pytest.mark.parametrize("code", [
    "import mindspore as ms\nms.set_context(mode=ms.GRAPH_MODE)\n",
    "import mindspore as ms\nms.get_context('enable_compile_cache')\n",
    "import mindspore\nfrom mylib import set_context\nset_context(enable_compile_cache=True)\n",
    "import mindspore\nimport os\nos.environ['MS_COMPILER_CACHE_ENABLE'] = '1'\n",
])
def test_not_flagged(code):
    assert findings(code) == []


def test_message_names_the_keys_and_the_variables():
    (finding,) = lint("import mindspore as ms\nms.set_context(enable_compile_cache=True, compile_cache_path='c')\n",
                      select=SELECT)
    assert "`enable_compile_cache` and `compile_cache_path`" in finding.text
    assert "MS_COMPILER_CACHE_ENABLE" in finding.text and "MS_COMPILER_CACHE_PATH" in finding.text
    assert finding.fix["applicability"] == "safe"


def test_only_cache_keys_replace_the_call_and_keep_comments():
    code = textwrap.dedent("""\
        import os
        import mindspore as ms

        # cache
        ms.set_context(enable_compile_cache=True, compile_cache_path="./cache")  # for speed
        """)
    assert fixed(code) == textwrap.dedent("""\
        import os
        import mindspore as ms

        # cache
        os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"
        os.environ["MS_COMPILER_CACHE_PATH"] = "./cache"  # for speed
        """)


def test_other_keys_are_kept_in_order_and_multiline_layout_survives():
    code = textwrap.dedent("""\
        import os
        from mindspore import context


        def main():
            context.set_context(
                enable_compile_cache=True,
                mode=context.GRAPH_MODE,
                compile_cache_path=CACHE,
                device_target="CPU",
            )


        CACHE = "./cache"
        """)
    assert fixed(code) == textwrap.dedent("""\
        import os
        from mindspore import context


        def main():
            os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"
            os.environ["MS_COMPILER_CACHE_PATH"] = CACHE
            context.set_context(
                mode=context.GRAPH_MODE,
                device_target="CPU",
            )


        CACHE = "./cache"
        """)


def test_disabled_cache_becomes_an_explicit_zero():
    # set_context(enable_compile_cache=False) beats MS_COMPILER_CACHE_ENABLE=1 in the environment (measured), so
    # simply dropping the key would change behaviour for users who export the variable.
    code = "import mindspore as ms\nimport os\nms.set_context(mode=ms.GRAPH_MODE, enable_compile_cache=False)\n"
    assert fixed(code) == ("import mindspore as ms\nimport os\nos.environ[\"MS_COMPILER_CACHE_ENABLE\"] = \"0\"\n"
                           "ms.set_context(mode=ms.GRAPH_MODE)\n")


def test_fix_assigns_instead_of_setdefault():
    out = fixed("import mindspore as ms\nms.set_context(enable_compile_cache=True)\n")
    assert "setdefault" not in out and 'os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"' in out
    assert out.splitlines()[:3] == ["import os", "", "import mindspore as ms"]  # with the standard library


def test_existing_environ_alias_is_reused():
    out = fixed("from os import environ as env\nimport mindspore as ms\nms.set_context(compile_cache_path='c')\n")
    assert out.splitlines()[2] == "env[\"MS_COMPILER_CACHE_PATH\"] = 'c'"


@pytest.mark.parametrize("path", ['f"{ROOT}/cache"', "os.path.join(ROOT, 'cache')", "'a' 'b'", "str(ROOT)", "ROOT",
                                  "sys.argv[1]", 'os.environ["CACHE_DIR"]'])
def test_string_paths_are_kept(path):
    out = fixed(f"import os\nimport sys\nimport mindspore as ms\nROOT = '.'\n"
                f"ms.set_context(compile_cache_path={path})\n")
    assert f'os.environ["MS_COMPILER_CACHE_PATH"] = {path}' in out


@pytest.mark.parametrize("code", [
    # the path's type is unknown (a Path object, None...)
    "import mindspore as ms\ndef f(args):\n    ms.set_context(compile_cache_path=args.cache)\n",
    "import os\nimport mindspore as ms\nms.set_context(compile_cache_path=os.environ.get('DIR'))\n",
    # non-literal switch (set_context only accepts a bool)
    "import mindspore as ms\ndef f(args):\n    ms.set_context(enable_compile_cache=args.cache)\n",
    # part of a larger statement
    "import mindspore as ms\nok = ms.set_context(enable_compile_cache=True)\n",
    # a one-line suite: no room for new statements
    "import mindspore as ms\nif True: ms.set_context(enable_compile_cache=True)\n",
    # **kwargs may carry more keys
    "import mindspore as ms\nkw = {}\nms.set_context(enable_compile_cache=True, **kw)\n",
    # a module-level call above where `import os` would be added
    "import mindspore as ms\nms.set_context(enable_compile_cache=True)\nimport numpy as np\n",
    # a comment inside the arguments would be lost
    "import os\nimport mindspore as ms\nms.set_context(mode=0,\n               enable_compile_cache=True,  # fast\n"
    "               compile_cache_path='c')\n",
    "import os\nimport mindspore as ms\nms.set_context(mode=0,  # graph\n               enable_compile_cache=True)\n",
    # `os` is imported only after the call
    "import mindspore as ms\nms.set_context(enable_compile_cache=True)\nimport os\n",
    # the script reads the key back from the context: with only the variable set, get_context returns None
    "import os\nimport mindspore as ms\nms.set_context(enable_compile_cache=True)\n"
    "print(ms.get_context('enable_compile_cache'))\n",
    "import os\nimport mindspore as ms\nms.set_context(compile_cache_path='c')\n"
    "key = 'compile_cache_path'\nprint(ms.get_context(key))\n",
])
def test_reported_without_fix_when_unsure(code):
    found = lint(code, select=SELECT)
    assert [f.code for f in found] == ["MSL302"]
    assert found[0].fix is None
    assert not fix(code, unsafe=True, select=SELECT).changed


def test_two_calls_in_one_block_are_both_fixed():
    code = textwrap.dedent("""\
        import os
        from mindspore import context
        context.set_context(enable_compile_cache=True)
        context.set_context(compile_cache_path="./c", mode=context.GRAPH_MODE)
        """)
    assert fixed(code) == textwrap.dedent("""\
        import os
        from mindspore import context
        os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"
        os.environ["MS_COMPILER_CACHE_PATH"] = "./c"
        context.set_context(mode=context.GRAPH_MODE)
        """)
