"""MSL301's screen before parsing (``ms_lint.analysis.run_screen``): a module whose run-time code cannot call
``@jit`` graph code and that sets no mode is not parsed for MSL301, and no finding changes."""
import textwrap

import pytest
from corpus_support import corpus, corpus_project

import ms_lint.engine as engine
from ms_lint.analysis.run_screen import may_run_jit
from ms_lint.config import Config
from ms_lint.prefilter import Text, requirement, satisfied
from ms_lint.rules.msl301_missing_compile_cache import MissingCompileCache
from ms_lint.source import read_source

RUNS_JIT = [
    # a @jit module function called at module level
    "import mindspore as ms\n@ms.jit\ndef step(x):\n    return x\nstep(1)\n",
    # called from the main guard, jit from an import
    "from mindspore import jit\n@jit(jit_level='O1')\ndef step(x):\n    return x\n"
    "if __name__ == '__main__':\n    step(1)\n",
    # jit(f)(x)
    "import mindspore as ms\ndef f(x):\n    return x\nms.jit(f)(1)\n",
    # a name bound to jit(f)
    "import mindspore\ndef f(x):\n    return x\ncompiled = mindspore.jit(f)\ncompiled(2)\n",
    # a Cell whose construct is decorated, built and called in one expression
    "import mindspore as ms\nfrom mindspore import nn\nclass Net(nn.Cell):\n    @ms.jit\n    def construct(self, x):\n"
    "        return x\nNet()(1)\n",
    # ... or bound first
    "import mindspore as ms\nfrom mindspore import nn\nclass Net(nn.Cell):\n    @ms.jit\n    def construct(self, x):\n"
    "        return x\nnet = Net()\nnet(1)\n",
    # jit renamed by an import: any call may be it
    "from mindspore import jit as J\n@J\ndef step(x):\n    return x\nstep(1)\n",
    # a binding in a module function decorated with another jit (not MindSpore's: not graph code)
    "import mindspore as ms\nimport numba\n@numba.jit\ndef setup():\n    global step\n    step = ms.jit(abs)\n"
    "step(1)\n",
    # a module function that calls a jit function, called from the main guard
    "import mindspore as ms\n@ms.jit\ndef step(x):\n    return x\ndef main():\n    step(1)\n"
    "if __name__ == '__main__':\n    main()\n",
    # ms_function, the old name
    "from mindspore import ms_function\n@ms_function\ndef step(x):\n    return x\ndef main():\n    step(1)\n",
    # a Cell that inherits a @jit construct from a class of the module (GraphScope.find_method follows it)
    "import mindspore as ms\nfrom mindspore import nn\nclass Base(nn.Cell):\n    @ms.jit\n    def construct(self, x):\n"
    "        return x\nclass Net(Base):\n    pass\nnet = Net()\nnet(1)\n",
    # jit renamed by an import with a comment between the name and `as`
    "from mindspore import (\n    jit  # the graph decorator\n    as compile_fn,\n)\n@compile_fn\ndef step(x):\n"
    "    return x\nstep(1)\n",
    # text that does not parse: a maybe
    "import mindspore as ms\n@ms.jit\ndef step(x:\n",
]

NO_JIT_RUN = [
    # a library of @jit functions: defined, called only from each other (graph code, not run-time code)
    "import mindspore as ms\n@ms.jit\ndef step(x):\n    return x\n@ms.jit\ndef other(x):\n    return step(x)\n",
    # ... and from methods of a class: never run-time code
    "import mindspore as ms\n@ms.jit\ndef step(x):\n    return x\nclass Trainer:\n    def run(self, x):\n"
    "        return step(x)\n",
    # a jit Cell never built; calls of other things
    "import mindspore as ms\nfrom mindspore import nn\nclass Net(nn.Cell):\n    @ms.jit\n    def construct(self, x):\n"
    "        return x\nprint(len([1]))\n",
    # a name bound to something else than jit; a method called jit on another object is not called
    "import mindspore as ms\nstep = ms.ops.add\nstep(1, 2)\nx = ms.jit\n",
]


@pytest.mark.parametrize("code", RUNS_JIT)
def test_calls_that_may_run_jit_code(code):
    assert may_run_jit(code)


@pytest.mark.parametrize("code", NO_JIT_RUN)
def test_modules_that_cannot_run_jit_code(code):
    assert not may_run_jit(code)


def test_msl301_screen_keeps_what_check_module_needs():
    library = NO_JIT_RUN[0]
    script = "import mindspore as ms\nms.set_context(mode=ms.GRAPH_MODE)\n" + library
    assert not MissingCompileCache.may_fire_in(library, "pkg/ops.py")
    assert MissingCompileCache.may_fire_in(script, "train.py")  # sets a mode: check_module decides
    assert MissingCompileCache.may_fire_in(RUNS_JIT[0], "train.py")
    assert not MissingCompileCache.may_fire_in(RUNS_JIT[0], "tests/test_train.py")  # a test module
    cached = 'import os\nos.environ["MS_COMPILER_CACHE_ENABLE"] = "1"\n' + RUNS_JIT[0]
    assert not MissingCompileCache.may_fire_in(cached, "train.py")


def test_a_library_of_jit_functions_is_not_parsed(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "kernels.py"
    path.write_text(textwrap.dedent("""\
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def scaled(x, scale):
            if scale is None:
                return x
            return ops.mul(x, scale)
    """), encoding="utf-8")
    parses = []
    real = engine.parse_module
    monkeypatch.setattr(engine, "parse_module", lambda text: parses.append(1) or real(text))
    result = engine.analyze_path(str(path), Config(root=str(tmp_path)))
    assert result.findings == [] and not parses
    assert satisfied(requirement(MissingCompileCache), Text(path.read_text()))  # the text pre-filter kept it


def test_a_library_that_does_not_compile_is_still_reported(tmp_path):
    """The file is no longer parsed for MSL301, but it is still compiled, as when MSL301 had it parsed."""
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "kernels.py"
    path.write_text("import mindspore as ms\n\n\n@ms.jit\ndef scaled(x):\n    return x\n\n\nreturn scaled\n")
    result = engine.analyze_path(str(path), Config(root=str(tmp_path)))
    assert [(f.code, f.line) for f in result.findings] == [("MSL900", 9)]
    assert "outside function" in result.findings[0].message


@pytest.fixture(scope="module")
def screened_and_not(tmp_path_factory):
    """Every fixture and rule example checked with all rules as a file of its own project, with MSL301's screen
    and without it: (name, findings with, findings without, whether the screen left MSL301 out)."""
    base = tmp_path_factory.mktemp("run_screen")
    results = []
    for name, path in corpus_project(base, corpus()):
        config = Config(root=str(base))
        source = read_source(str(path))
        screened = engine.analyze_source(source, config, str(path))
        left_out = (satisfied(requirement(MissingCompileCache), Text(source.text))
                    and not MissingCompileCache.may_fire_in(source.text, str(path)))
        saved = MissingCompileCache.may_fire_in
        MissingCompileCache.may_fire_in = None
        try:
            plain = engine.analyze_source(source, config, str(path))
        finally:
            MissingCompileCache.may_fire_in = saved
        results.append((name, [f.to_json() for f in screened.findings], [f.to_json() for f in plain.findings],
                        left_out))
    return results


def test_findings_are_the_same_without_the_msl301_screen(screened_and_not):
    for name, screened, plain, _ in screened_and_not:
        assert screened == plain, name


def test_the_msl301_screen_is_exercised(screened_and_not):
    left_out = [name for name, _, _, out in screened_and_not if out]
    assert len(left_out) >= 10, left_out
    flagged = [name for name, _, plain, _ in screened_and_not if any(f["code"] == "MSL301" for f in plain)]
    assert len(flagged) >= 10
