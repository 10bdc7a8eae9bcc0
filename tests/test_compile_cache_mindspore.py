"""The compile-cache fixes and hazards, checked with real MindSpore in fresh processes.

Each script runs twice from a temporary folder with no ``MS_COMPILER_CACHE_*`` variables inherited. MindSpore
2.10 writes ``<cache path>/rank_0/graph_cache/compile_cache_0.mindir`` and ``compile_dependency.hash`` on the
first run and logs ``Use the compilation cache and execute the backend actions only`` when a later run loads
them (a WARNING-level glog line on stderr). Timing is not asserted.
"""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mindspore")

from ms_lint.config import Config  # noqa: E402
from ms_lint.fixer import fix_text  # noqa: E402
from ms_lint.source import decode_source  # noqa: E402
from ms_lint.testing import lint  # noqa: E402

pytestmark = pytest.mark.mindspore

HIT = "Use the compilation cache and execute the backend actions only"
DEPRECATED = "'enable_compile_cache' will be deprecated"

STEP_LOOP = """\
@ms.jit
def run(x):
    for _ in range(20):
        x = x * 0.5 + 1.0
    return x


if __name__ == "__main__":
    out = run(ms.Tensor(np.ones((4, 4), np.float32)))
    print("RESULT", float(out.sum()))
"""


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MS_COMPILER_CACHE") and k != "MS_DEV_FORCE_USE_COMPILE_CACHE"}
    env["GLOG_v"] = "2"  # WARNING: the level of the cache hit/miss lines
    env.update(extra)
    return env


def _run(script: pathlib.Path, **extra) -> str:
    done = subprocess.run([sys.executable, script.name], cwd=script.parent, env=_env(**extra),
                          capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    return output


def _result(output: str) -> str:
    return [line for line in output.splitlines() if line.startswith("RESULT")][-1]


def _fix(text: str, code: str, path: str, unsafe: bool) -> str:
    outcome = fix_text(decode_source(path, text.encode("utf-8")), Config().with_overrides(select=[code]),
                       unsafe=unsafe, path=path)
    assert outcome.error is None and outcome.changed, outcome.error
    return outcome.fixed


def _cache_files(folder: pathlib.Path):
    graph_cache = folder / "rank_0" / "graph_cache"
    return sorted(p.name for p in graph_cache.iterdir()) if graph_cache.is_dir() else []


def test_msl301_fix_writes_the_cache_then_the_second_run_loads_it(tmp_path):
    original = "import numpy as np\nimport mindspore as ms\n\nms.set_context(mode=ms.GRAPH_MODE)\n\n\n" + STEP_LOOP
    assert [f.code for f in lint(original, select=["MSL301"], path="loop_script.py")] == ["MSL301"]
    script = tmp_path / "loop_script.py"
    script.write_text(_fix(original, "MSL301", "loop_script.py", unsafe=True))

    first = _run(script)
    cache = tmp_path / "ms_compile_cache" / "loop_script"
    assert {"compile_cache_0.mindir", "compile_dependency.hash"} <= set(_cache_files(cache))
    assert HIT not in first

    second = _run(script)
    assert HIT in second
    assert _result(second) == _result(first)

    off = _run(script, MS_COMPILER_CACHE_ENABLE="0")  # setdefault: the shell can still turn it off
    assert HIT not in off


def test_msl302_fix_keeps_cache_location_and_drops_the_deprecation_warning(tmp_path):
    original = ("import numpy as np\nimport mindspore as ms\n\n"
                "ms.set_context(mode=ms.GRAPH_MODE, enable_compile_cache=True, compile_cache_path=\"./cache302\")\n"
                "\n\n" + STEP_LOOP)
    before = tmp_path / "before"
    before.mkdir()
    (before / "script.py").write_text(original)
    old = _run(before / "script.py")
    assert DEPRECATED in old
    assert "compile_cache_0.mindir" in _cache_files(before / "cache302")

    after = tmp_path / "after"
    after.mkdir()
    fixed = _fix(original, "MSL302", "script.py", unsafe=False)
    assert "enable_compile_cache" not in fixed
    (after / "script.py").write_text(fixed)
    first = _run(after / "script.py")
    assert DEPRECATED not in first
    assert "compile_cache_0.mindir" in _cache_files(after / "cache302")
    second = _run(after / "script.py")
    assert HIT in second
    assert _result(second) == _result(first) == _result(old)


def test_msl303_hazard_is_real_an_env_var_loop_count_gives_a_stale_result(tmp_path):
    script = tmp_path / "env_steps.py"
    script.write_text(textwrap.dedent("""\
        import os

        import numpy as np
        import mindspore as ms

        os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")
        os.environ.setdefault("MS_COMPILER_CACHE_PATH", "./cache303")
        STEPS = int(os.environ.get("STEPS", "1"))


        @ms.jit
        def count(x):
            for _ in range(STEPS):
                x = x + 1.0
            return x


        if __name__ == "__main__":
            print("RESULT", float(count(ms.Tensor(np.zeros((1,), np.float32)))[0]))
        """))
    assert [(f.line, f.code) for f in lint(script.read_text(), select=["MSL303"])] == [(13, "MSL303")]
    assert _result(_run(script, STEPS="1")) == "RESULT 1.0"
    stale = _run(script, STEPS="5")
    assert HIT in stale
    assert _result(stale) == "RESULT 1.0"  # not 5.0: the cache does not key on the environment
