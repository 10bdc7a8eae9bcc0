"""MSL301 missing-compile-cache: which modules count as graph-compiling scripts, where it reports, the fix."""
import textwrap

import libcst as cst
import pytest

from ms_lint.testing import fix, lint
from corpus_support import fixture_sources

SELECT = ["MSL301"]


def findings(code, path="train.py"):
    return [(f.line, f.code) for f in lint(code, select=SELECT, path=path)]


def fixed(code, path="train.py"):
    outcome = fix(code, unsafe=True, select=SELECT, path=path)
    assert outcome.error is None, outcome.error
    return outcome.fixed


GUARD = """
if __name__ == "__main__":
    from mindspore import nn
    net = nn.Dense(2, 2)
    print(net(None))
"""


@pytest.mark.parametrize("header, call", [
    ("import mindspore as ms", "ms.set_context(mode=ms.GRAPH_MODE)"),
    ("import mindspore as ms", "ms.set_context(mode=0, device_target='CPU')"),
    ("from mindspore import context", "context.set_context(mode=context.GRAPH_MODE)"),
    ("import mindspore", "mindspore.context.set_context(mode=mindspore.context.GRAPH_MODE)"),
    ("from mindspore import set_context, GRAPH_MODE", "set_context(mode=GRAPH_MODE)"),
    ("from mindspore.context import set_context, GRAPH_MODE", "set_context(mode=GRAPH_MODE)"),
    ("import mindspore as ms\nfrom mindspore import context", "context.set_context(mode=ms.GRAPH_MODE)"),
])
def test_graph_mode_spellings_are_reported_at_the_set_context_line(header, call):
    code = f"{header}\n\n{call}\n{GUARD}"
    line = code.splitlines().index(call) + 1
    assert findings(code) == [(line, "MSL301")]


def test_set_context_inside_main_function_of_a_script():
    code = textwrap.dedent("""\
        import mindspore as ms
        from mindspore import nn


        def main():
            ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
            print("training")
            print(nn.Dense(2, 2)(ms.Tensor([[1.0, 2.0]])))


        if __name__ == "__main__":
            main()
        """)
    assert findings(code) == [(6, "MSL301")]
    # Calling its own main() is not compiling: what main() calls is what counts.
    assert findings(code.replace("    print(nn.Dense(2, 2)(ms.Tensor([[1.0, 2.0]])))\n", "")) == []


@pytest.mark.parametrize("mode", ["ms.PYNATIVE_MODE", "1", "args.mode",
                                  "ms.GRAPH_MODE if args.graph else ms.PYNATIVE_MODE"])
def test_pynative_or_invisible_modes_without_jit_are_not_reported(mode):
    code = f"import mindspore as ms\n\nms.set_context(mode={mode})\n{GUARD}"
    assert findings(code) == []


def test_set_context_with_unpacked_config_is_never_reported():
    code = textwrap.dedent("""\
        import mindspore as ms

        @ms.jit
        def step(x):
            return x * 2

        if __name__ == "__main__":
            ms.set_context(**{"mode": ms.GRAPH_MODE})
            ms.set_context(mode=ms.GRAPH_MODE)
            step(1)
        """)
    assert findings(code) == []


@pytest.mark.parametrize("enable", [
    'os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"',
    'os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")',
    'os.putenv("MS_COMPILER_CACHE_ENABLE", "1")',
    'os.environ["MS_COMPILER_CACHE_ENABLE"] = "0"',  # deliberately off
    'ms.set_context(enable_compile_cache=True)',
    'ms.set_context(enable_compile_cache=False)',
])
def test_scripts_that_configure_the_cache_are_not_reported(enable):
    code = f"import os\nimport mindspore as ms\n\n{enable}\nms.set_context(mode=ms.GRAPH_MODE)\n{GUARD}"
    assert findings(code) == []


def test_library_that_sets_graph_mode_at_import_is_not_a_script():
    code = textwrap.dedent("""\
        import mindspore as ms
        from mindspore import nn

        ms.set_context(mode=ms.GRAPH_MODE)


        class Net(nn.Cell):
            def construct(self, x):
                return x * 2


        def build():
            return Net()
        """)
    assert findings(code) == []


def test_module_level_code_that_runs_a_cell_makes_a_script():
    code = textwrap.dedent("""\
        import numpy as np
        import mindspore as ms
        from mindspore import nn

        ms.set_context(mode=ms.GRAPH_MODE)
        net = nn.Dense(2, 2)
        print(net(ms.Tensor(np.ones((1, 2), np.float32))))
        """)
    assert findings(code) == [(5, "MSL301")]


def test_module_level_call_of_a_local_main_makes_a_script():
    code = textwrap.dedent("""\
        import mindspore as ms
        from mindspore.train import Model


        def main():
            ms.set_context(mode=ms.GRAPH_MODE)
            model = Model(None)
            model.train(1, None)


        main()
        """)
    assert findings(code) == [(6, "MSL301")]


def test_jit_script_without_set_context_is_reported_at_the_main_guard():
    code = textwrap.dedent("""\
        import mindspore as ms


        @ms.jit
        def step(x):
            return x + 1


        def run():
            return step(ms.Tensor(1.0))


        if __name__ == "__main__":
            run()
        """)
    assert findings(code) == [(13, "MSL301")]


@pytest.mark.parametrize("body", [
    "fast = ms.jit(slow)\n    fast(1.0)",
    "ms.jit(slow)(1.0)",
    "Jitted()(1.0)",
    "net = Jitted()\n    net(1.0)",
])
def test_other_jit_spellings_called_from_the_guard(body):
    code = textwrap.dedent("""\
        import mindspore as ms
        from mindspore import nn


        def slow(x):
            return x * 2


        class Jitted(nn.Cell):
            @ms.jit
            def construct(self, x):
                return x * 3


        if __name__ == "__main__":
            BODY
        """).replace("BODY", body)
    assert findings(code) == [(15, "MSL301")]


def test_jit_defined_but_never_called_by_the_script_is_not_reported():
    code = textwrap.dedent("""\
        import mindspore as ms
        from mindspore import nn


        @ms.jit
        def step(x):
            return x + 1


        if __name__ == "__main__":
            net = nn.Dense(2, 2)  # PyNative: no graph compile
            print(net)
        """)
    assert findings(code) == []


def test_message_says_what_the_cache_keys_on():
    (finding,) = lint("import mindspore as ms\nms.set_context(mode=ms.GRAPH_MODE)\n" + GUARD, select=SELECT)
    message = finding.detail  # the long form (--output-format full); the message itself is one short line
    for phrase in ("entry script", "local modules", "environment variables", "command-line arguments",
                   "config files", "installed packages", "shapes and dtypes", "8x8 and 3x3", "4x4",
                   "MS_COMPILER_CACHE_ENABLE=1"):
        assert phrase in message, phrase
    assert finding.fix["applicability"] == "unsafe"


# -- the fix ---------------------------------------------------------------------------------------------------
def test_fix_is_unsafe_only():
    code = "import mindspore as ms\nms.set_context(mode=ms.GRAPH_MODE)\n" + GUARD
    assert not fix(code, unsafe=False, select=SELECT).changed
    assert fix(code, unsafe=True, select=SELECT).changed


def test_fix_imports_os_before_the_inserted_lines_and_keys_the_path_on_the_script_name():
    code = textwrap.dedent("""\
        \"\"\"Train.\"\"\"
        import sys
        import mindspore as ms

        ms.set_context(mode=ms.GRAPH_MODE)

        if __name__ == "__main__":
            net = ms.nn.Dense(2, 2)
            print(net(None), sys.argv)
        """)
    out = fixed(code, path="train_net.py")
    lines = out.splitlines()
    assert lines[1:4] == ["import os", "import sys", "import mindspore as ms"]  # with the standard library, sorted
    assert lines.index('os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")') > 3
    # next to the script, named after it: not relative to the folder the script is run from
    assert ('    "MS_COMPILER_CACHE_PATH", os.path.join(os.path.dirname(os.path.abspath(__file__)), '
            '"ms_compile_cache", "train_net"))') in lines
    compile(out, "train_net.py", "exec")
    assert findings(out) == []
    assert fix(out, unsafe=True, select=SELECT).fixed == out


def test_fix_reuses_the_existing_environ_spelling():
    code = textwrap.dedent("""\
        from os import environ
        import mindspore as ms

        ms.set_context(mode=ms.GRAPH_MODE)

        if __name__ == "__main__":
            net = ms.nn.Dense(2, 2)
            print(net(None), environ.get("HOME"))
        """)
    out = fixed(code)
    assert 'environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")' in out
    # the cache path is built with os.path, imported where the file already imports from os
    assert "import os" not in out and out.startswith("from os import environ, path\n")


def test_fix_goes_after_the_last_import_before_the_first_def_even_after_sys_path_tweaks():
    code = textwrap.dedent("""\
        import os
        import sys
        sys.path.insert(0, os.path.dirname(__file__))
        import mindspore as ms
        from mindspore import context


        def main():
            context.set_context(mode=context.GRAPH_MODE)
            net = ms.nn.Dense(2, 2)
            net(None)


        import json

        if __name__ == "__main__":
            main()
        """)
    out = fixed(code)
    lines = out.splitlines()
    enable = lines.index('os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")')
    assert lines[enable - 4] == "from mindspore import context"
    assert lines[enable - 3] == ""  # one blank line after the import block, as isort wants
    assert lines.index("def main():") > enable
    cst.parse_module(out)


def test_unnamed_or_odd_file_names_get_a_generic_cache_folder():
    code = "import mindspore as ms\nms.set_context(mode=ms.GRAPH_MODE)\n" + GUARD
    assert '"ms_compile_cache/my script"' not in fixed(code, path="my script.py")
    assert '"ms_compile_cache"' in fixed(code, path="my script.py")


def test_crlf_file_stays_crlf():
    code = "import mindspore as ms\r\nms.set_context(mode=ms.GRAPH_MODE)\r\nif __name__ == '__main__':\r\n    pass\r\n"
    out = fix(code, unsafe=True, select=SELECT).fixed
    assert "\n" not in out.replace("\r\n", "")


def test_module_level_argument_parsing_makes_a_script():
    code = textwrap.dedent("""\
        import argparse
        from mindspore import context
        from src.trainer import train

        parser = argparse.ArgumentParser()
        args = parser.parse_args()
        if args.distributed:
            context.set_context(mode=context.GRAPH_MODE, device_target="Ascend")
        else:
            context.set_context(mode=context.GRAPH_MODE)
        train(args)
        """)
    assert findings(code) == [(8, "MSL301")]


# -- no fix where the cache would go stale (MSL303) ---------------------------------------------------------------
STALE_SCRIPT = textwrap.dedent("""\
    import argparse

    import numpy as np
    import mindspore as ms
    from mindspore import nn

    ms.set_context(mode=ms.GRAPH_MODE)


    class Net(nn.Cell):
        def __init__(self, depth):
            super().__init__()
            self.depth = depth

        def construct(self, x):
            for _ in range(self.depth):
                x = x * 2
            return x


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--depth", type=int, default=2)
        args = parser.parse_args()
        print(Net(args.depth)(ms.Tensor(np.ones((2, 2), np.float32))))
    """)


def test_no_fix_when_turning_the_cache_on_would_make_a_stale_graph():
    """`--depth` becomes a graph constant: with the cache on, `--depth 3` would reuse the graph built for 2."""
    (finding,) = lint(STALE_SCRIPT, select=SELECT, path="train.py")
    assert finding.line == 7 and finding.fix is None
    assert "`args.depth`" in finding.detail and "no fix is offered" in finding.detail
    assert "not fixed" in finding.message and len(finding.message) <= 120
    assert not fix(STALE_SCRIPT, unsafe=True, select=SELECT).changed


def test_a_global_rebound_from_the_command_line_counts_as_stale():
    code = textwrap.dedent("""\
        import argparse
        import mindspore as ms

        STEPS = 5


        @ms.jit
        def run(x):
            for _ in range(STEPS):
                x = x + 1
            return x


        def main():
            global STEPS
            STEPS = argparse.ArgumentParser().parse_args().steps
            print(run(ms.Tensor(1.0)))


        if __name__ == "__main__":
            main()
        """)
    (finding,) = lint(code, select=SELECT, path="bench.py")
    assert finding.fix is None and "`STEPS`" in finding.detail


def test_the_fix_never_creates_a_stale_cache_hazard_in_the_fixtures():
    """Whatever MSL301's fix turns on, MSL303 must then have nothing new to say."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parent.parent / "fixtures"
    checked = 0
    for path in fixture_sources(root):
        if "verify" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        outcome = fix(text, unsafe=True, select=SELECT, path=path.name)
        if not outcome.changed:
            continue
        checked += 1
        before = {f.message for f in lint(text, select=["MSL303"], path=path.name)}
        after = {f.message for f in lint(outcome.fixed, select=["MSL303"], path=path.name)}
        assert after <= before, (path.name, after - before)
    assert checked >= 2
