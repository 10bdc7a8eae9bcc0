"""``ms-lint profile`` without MindSpore: parsing the compile profile and dumps, attribution, the report, errors
found before compiling, and ``check --profile-data``."""
import json
import os
import textwrap

import pytest

from ms_lint.profiler.attribution import attribute, function_names
from ms_lint.profiler.parse import count_nodes, pair_dumps, parse_profile
from ms_lint.profiler.report import code_only

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PROFILE_TEXT = textwrap.dedent("""\
    loss 0.5
    TotalTime = 1.0, [4]
    [bootstrap]: 0.05
    [type_inference]: 0.6
    [optimize]: 0.2, [2]
        [opt_a]: 0.15
    [validate]: 0.01
    [task_emit]: 0.1
    Sums
    [type_inference]: 99
    TotalTime = 0.5, [1]
    [type_inference]: 0.4
    """)

IR = textwrap.dedent("""\
    # IR entry: @1_net_construct_1
    subgraph attr:
    # Parameters: 1, (<Tensor[Float32], (2, 2)>)
    # In file /p/net.py:5~9, 4~16/    def construct(self, x):/
    subgraph @1_net_construct_1(%para1_x) {
      %0(CNode_1) = PrimFunc_Add(%para1_x, %para1_x)
          : (<Tensor[Float32], (2, 2)>) -> (<Tensor[Float32], (2, 2)>)
          # Fullname with scope: (Default/Add-op0)
          # In file /p/net.py:5~9, 4~16/    def construct(self, x):/
          # In file /p/net.py:7, 12~20/        y = x + x  # a comment/
          # In file /site/mindspore/ops.py:10~12/def add(a, b):/
          # In file /site/mindspore/ops.py:12, 4~10/    return a + b/
      %1(CNode_2) = call @2_loop_body_3(%0)
          : (<Tensor[Float32], (2, 2)>) -> (<Tensor[Float32], (2, 2)>)
          # Fullname with scope: (Default/call-op1)
          # In file /p/net.py:5~9, 4~16/    def construct(self, x):/
          # In file /p/net.py:9, 8~16/        return self.body(y)/
      Return(%1)
          : (<Tensor[Float32], (2, 2)>)
          # Fullname with scope: (Default/Return-op2)
          # In file /site/mindspore/ops.py:12, 4~10/    return a + b/
    }
    # In file /p/net.py:1~3/@ms.jit/
    subgraph @2_loop_body_3(%para2_y) {
      %0(CNode_3) = PrimFunc_Mul(%para2_y, %para2_y)
          : (<Tensor[Float32], (2, 2)>) -> (<Tensor[Float32], (2, 2)>)
          # Fullname with scope: (Default/Mul-op0)
          # In file /p/net.py:1~3/@ms.jit/
          # In file /p/net.py:3, 4~10/    for _ in range(4): y = y * y/
      Return(%0)
          : (<Tensor[Float32], (2, 2)>)
          # Fullname with scope: (Default/Return-op1)
          # In file /p/net.py:1~3/@ms.jit/
          # In file /p/net.py:3, 4~10/    for _ in range(4): y = y * y/
    }
    """)


def _user(path):
    return path.startswith("/p/")


def test_parse_profile_takes_the_top_level_phases_of_each_graph():
    compiles = parse_profile(PROFILE_TEXT)
    assert [c.total_s for c in compiles] == [1.0, 0.5]
    assert compiles[0].phases == [("bootstrap", 0.05), ("type_inference", 0.6), ("optimize", 0.2),
                                  ("validate", 0.01), ("task_emit", 0.1)]
    assert compiles[1].phases == [("type_inference", 0.4)]


def test_nodes_go_to_the_innermost_user_statement_and_calls_to_their_callee():
    counts = count_nodes(IR, _user)
    assert counts.total == 5
    assert counts.unattributed == 1  # the Return traced only to MindSpore's file
    # the call node's trace ends at the call site; it is counted where its callee's nodes are (the loop line)
    assert counts.lines == {("/p/net.py", 7): 1, ("/p/net.py", 3): 3}
    assert counts.functions == {("/p/net.py", 5, "construct"): 1, ("/p/net.py", 1, "?"): 3}


# A @jit function: `x = y * 0.5` before a loop whose body also multiplies by a scalar. MindSpore builds its
# `_tensor_mul_scalar` graph once, for the first caller (line 2), and every call in the loop calls that graph.
SHARED_IR = textwrap.dedent("""\
    # In file /site/mindspore/mul_impl.py:10~12/@mul.register("Tensor", "Number")/
    subgraph @9_tensor_mul_scalar_1(%para1_x, %para2_y) {
      %0(CNode_1) = PrimFunc_Muls(%para1_x, %para2_y)
          : (<Tensor[Float32], (4)>) -> (<Tensor[Float32], (4)>)
          # Fullname with scope: (Default/Muls-op0)
          # In file /p/s.py:1~5/@ms.jit/
          # In file /p/s.py:2, 8~15/    x = y * 0.5/
          # In file /site/mindspore/mul_impl.py:12, 4~20/    return muls(x, y)/
    }
    # In file /p/s.py:1~5/@ms.jit/
    subgraph @2_solve_1(%para3_y) {
      %0(CNode_2) = call @9_tensor_mul_scalar_1(%para3_y, F32(0.5))
          : (<Tensor[Float32], (4)>) -> (<Tensor[Float32], (4)>)
          # Fullname with scope: (Default/call-op0)
          # In file /p/s.py:1~5/@ms.jit/
          # In file /p/s.py:2, 8~15/    x = y * 0.5/
      %1(CNode_3) = call @9_tensor_mul_scalar_1(%0, F32(0.5))
          : (<Tensor[Float32], (4)>) -> (<Tensor[Float32], (4)>)
          # Fullname with scope: (Default/call-op1)
          # In file /p/s.py:1~5/@ms.jit/
          # In file /p/s.py:4, 12~19/        x = x * 0.5/
      %2(CNode_4) = call @9_tensor_mul_scalar_1(%1, F32(0.5))
          : (<Tensor[Float32], (4)>) -> (<Tensor[Float32], (4)>)
          # Fullname with scope: (Default/call-op2)
          # In file /p/s.py:1~5/@ms.jit/
          # In file /p/s.py:4, 12~19/        x = x * 0.5/
      Return(%2)
          : (<Tensor[Float32], (4)>)
          # Fullname with scope: (Default/Return-op3)
          # In file /p/s.py:1~5/@ms.jit/
          # In file /p/s.py:4, 12~19/        x = x * 0.5/
    }
    """)


def test_calls_of_mindspores_shared_graphs_stay_at_their_call_site():
    from ms_lint.profiler.parse import read_graph

    _nodes, headers = read_graph(SHARED_IR)
    assert {name: frames[0].path for name, frames in headers.items()} == {
        "9_tensor_mul_scalar_1": "/site/mindspore/mul_impl.py", "2_solve_1": "/p/s.py"}
    counts = count_nodes(SHARED_IR, _user)
    assert counts.lines == {("/p/s.py", 2): 2, ("/p/s.py", 4): 3}  # not 4 on line 2 and 1 on the loop line


def test_attribution_splits_early_and_late_phases_by_their_graphs_nodes():
    from ms_lint.diagnostics import Finding
    from ms_lint.profiler.parse import CompileTimes, NodeCounts

    early = NodeCounts(total=10, lines={("/p/a.py", 3): 8, ("/p/a.py", 7): 2}, texts={})
    late = NodeCounts(total=4, lines={("/p/a.py", 3): 1, ("/p/a.py", 7): 3}, texts={})
    times = CompileTimes(1.0, [("type_inference", 0.7), ("optimize", 0.1), ("validate", 0.05), ("task_emit", 0.15)])
    loop = Finding("MSL103", "m", "/p/a.py", 2, 5, 4, 1)
    attribution = attribute([times], [{"type_inference": early, "validate": late}], [loop], lambda p: None)
    by_line = {c.line: c.seconds for c in attribution.lines}
    assert by_line[3] == pytest.approx(0.8 * 0.8 + 0.2 * 0.25)
    assert by_line[7] == pytest.approx(0.8 * 0.2 + 0.2 * 0.75)
    assert attribution.findings[0].seconds == pytest.approx(by_line[3])
    assert [c.line for c in attribution.blind()] == [7]  # 31% of the compile and no finding


def test_the_innermost_finding_owns_a_line():
    from ms_lint.diagnostics import Finding
    from ms_lint.profiler.parse import CompileTimes, NodeCounts

    counts = NodeCounts(total=10, lines={("/p/a.py", 3): 6, ("/p/a.py", 4): 4}, texts={})
    outer = Finding("MSL103", "loop", "/p/a.py", 2, 5, 6, 1)
    inner = Finding("MSL201", "if", "/p/a.py", 4, 9, 5, 1)
    attribution = attribute([CompileTimes(1.0, [("type_inference", 1.0)])], [{"type_inference": counts}],
                            [outer, inner], lambda p: None)
    seconds = {f.finding.code: f.seconds for f in attribution.findings}
    assert seconds == {"MSL103": pytest.approx(0.6), "MSL201": pytest.approx(0.4)}


def test_a_lines_owner_is_its_findings_place_in_the_sorted_list():
    from ms_lint.diagnostics import Finding
    from ms_lint.profiler.parse import CompileTimes, NodeCounts

    counts = NodeCounts(total=10, lines={("/p/a.py", 3): 1, ("/p/a.py", 9): 9}, texts={})
    cheap = Finding("MSL201", "if", "/p/a.py", 3, 9, 4, 1)  # first in file order, last by seconds
    costly = Finding("MSL101", "loop", "/p/a.py", 8, 9, 10, 1)
    attribution = attribute([CompileTimes(1.0, [("type_inference", 1.0)])], [{"type_inference": counts}],
                            [cheap, costly], lambda p: None)
    assert [f.finding.code for f in attribution.findings] == ["MSL101", "MSL201"]
    owners = {c.line: attribution.findings[c.owner].finding.code for c in attribution.lines}
    assert owners == {9: "MSL101", 3: "MSL201"}


def test_dumps_pair_by_their_counter(tmp_path):
    for name in ("01_type_inference_0001.ir", "21_validate_0293.ir", "01_type_inference_0296.ir",
                 "31_validate_0412.ir", "ms_output_optimize.pb"):
        (tmp_path / name).write_text("")
    graphs = pair_dumps(str(tmp_path))
    assert [sorted(os.path.basename(p) for p in g.values()) for g in graphs] == [
        ["01_type_inference_0001.ir", "21_validate_0293.ir"], ["01_type_inference_0296.ir", "31_validate_0412.ir"]]


def test_function_names_know_classes_and_decorator_lines():
    source = "import ms\n\nclass Net:\n    def construct(self):\n        pass\n\n@ms.jit\ndef f(x):\n    return x\n"
    assert function_names(source) == {4: "Net.construct", 8: "f", 7: "f"}


def test_code_only_drops_the_trailing_comment():
    assert code_only("        for _ in range(200):  # expect: MSL103") == "for _ in range(200):"
    assert code_only("x = '#' + y") == "x = '#' + y"


# -- errors before compiling -----------------------------------------------------------------------------------------

def test_an_unrolled_loop_past_the_depth_limit_is_reported_without_compiling(run_cli):
    deep = os.path.join(ROOT, "fixtures", "verify", "deep_loop_orig.py")
    code, out, err = run_cli("profile", deep, "--function", "func")
    assert code == 2 and out == ""
    error = [line for line in err.splitlines() if line.startswith("ms-lint: error:")]
    assert len(error) == 1
    assert "600 iterations" in error[0] and "call-depth limit" in error[0] and "--force" in error[0]


def test_unknown_function_lists_the_graph_functions(run_cli):
    cells = os.path.join(ROOT, "fixtures", "profile", "cells.py")
    code, out, err = run_cli("profile", cells, "--function", "nosuch")
    assert code == 2
    assert err.strip().endswith("no such function or class (graph functions in this file: Smooth, Gate, Net, "
                                "row_norms)")


def test_usage_errors(run_cli, tmp_path):
    cells = os.path.join(ROOT, "fixtures", "profile", "cells.py")
    assert run_cli("profile", str(tmp_path / "nope.py"), "--function", "f")[0] == 2
    with pytest.raises(SystemExit) as exited:
        run_cli("profile", cells, "--function", "Net", "--confirm", "0")
    assert exited.value.code == 2
    code, _, err = run_cli("profile", cells, "--function", "Net", "--inputs", "x=flaot32[2]")
    assert code == 2 and "--inputs" in err and "dtype" in err


def _shadow_mindspore(tmp_path, monkeypatch, body):
    fake = tmp_path / "shadow"
    (fake / "mindspore").mkdir(parents=True)
    (fake / "mindspore" / "__init__.py").write_text(body)
    monkeypatch.setenv("PYTHONPATH", str(fake))


def test_mindspore_missing_is_one_line_exit_2(run_cli, tmp_path, monkeypatch):
    pytest.importorskip("numpy")
    _shadow_mindspore(tmp_path, monkeypatch, "raise ImportError(\"No module named 'mindspore'\", name='mindspore')\n")
    cells = os.path.join(ROOT, "fixtures", "profile", "cells.py")
    code, out, err = run_cli("profile", cells, "--function", "row_norms")
    assert code == 2 and out == ""
    error = [line for line in err.splitlines() if line.startswith("ms-lint: error:")]
    assert len(error) == 1 and "MindSpore is not installed" in error[0]


def test_timeout_is_one_line_exit_2_and_kills_the_child(run_cli, tmp_path, monkeypatch):
    import tempfile

    pytest.importorskip("numpy")
    _shadow_mindspore(tmp_path, monkeypatch, "import time\ntime.sleep(120)\n")
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    cells = os.path.join(ROOT, "fixtures", "profile", "cells.py")
    code, out, err = run_cli("profile", cells, "--function", "row_norms", "--timeout", "2")
    assert code == 2
    error = [line for line in err.splitlines() if line.startswith("ms-lint: error:")]
    assert len(error) == 1 and "did not finish within 2 s" in error[0] and "import-mindspore" in error[0]
    assert list(private.iterdir()) == []
    for pid in os.listdir("/proc"):  # the child's request file is in `private`: other users' profiles don't count
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    command = handle.read()
            except OSError:
                continue
            assert not (b"ms_lint.profiler.child" in command and str(private).encode() in command), pid


# -- check --profile-data --------------------------------------------------------------------------------------------

def test_check_profile_data_orders_and_annotates(run_cli, tmp_path):
    cells = os.path.join(ROOT, "fixtures", "profile", "cells.py")
    data = {"version": 1, "compile_s": 2.0, "rows": [
        {"path": "cells.py", "real_path": cells, "line": 21, "code": "MSL201", "seconds": 0.2, "share": 0.1},
        {"path": "cells.py", "real_path": cells, "line": 45, "code": "MSL101", "seconds": 1.5, "share": 0.75},
    ]}
    saved = tmp_path / "p.json"
    saved.write_text(json.dumps(data))
    code, out, _ = run_cli("check", cells, "--profile-data", str(saved))
    assert code == 1
    lines = out.splitlines()
    assert ":45:" in lines[0] and lines[0].endswith("[profile: ~1.50 s, 75% of 2.00 s compile]")
    assert ":21:" in lines[1] and lines[1].endswith("[profile: ~0.20 s, 10% of 2.00 s compile]")
    assert ":12:" in lines[2] and "[profile" not in lines[2]
    saved.write_text("[]")
    code, _, err = run_cli("check", cells, "--profile-data", str(saved))
    assert code == 2 and "not a profile" in err


def _synthetic_profile():
    from ms_lint.diagnostics import Finding
    from ms_lint.profiler.parse import CompileTimes, NodeCounts
    from ms_lint.profiler.runner import ProfileRun
    from ms_lint.profiler.session import Profile

    counts = NodeCounts(total=10, lines={("/p/a.py", 3): 7, ("/p/a.py", 9): 3},
                        texts={("/p/a.py", 3): "for _ in range(200):  # hot", ("/p/a.py", 9): "y = f(x)"})
    times = [CompileTimes(2.0, [("type_inference", 1.5), ("task_emit", 0.5)])]
    loop = Finding("MSL103", "`range(200)` runs 200 iterations", "/p/a.py", 3, 9, 4, 1,
                   fix={"applicability": "unsafe", "message": "ForiLoop"})
    elsewhere = Finding("MSL201", "`if` on a Tensor", "/p/a.py", 20, 9, 21, 1)
    attribution = attribute(times, [{"type_inference": counts}], [loop, elsewhere], lambda p: None)
    run = ProfileRun(True, {"first_call_s": 2.2}, compiles=times)
    return Profile(target="a.py f", mode="function", run=run, attribution=attribution, display=lambda p: p)


def test_text_report_table_and_summary():
    from ms_lint.profiler.report import render_text, to_json

    text = render_text(_synthetic_profile())
    lines = text.splitlines()
    assert lines[1].startswith("compile 2.00 s in 1 graph (first call 2.20 s); type_inference 1.50 s")
    table = [line for line in lines if "/p/a.py:" in line and "not in the compiled" not in line]
    assert "MSL103" in table[0] and "1.40 s" in table[0] and "70%" in table[0] and "# hot" not in table[0]
    assert "(no finding)" in table[1] and "0.60 s" in table[1]
    assert "not in the compiled graph: /p/a.py:20 MSL201" in text
    assert lines[-1] == ("1 finding explains 1.40 s of 2.00 s compile time (70%); 1 costly line without a finding "
                         "(0.60 s)")
    data = to_json(_synthetic_profile())
    assert [(r["code"], r["line"]) for r in data["rows"]] == [("MSL103", 3), (None, 9), ("MSL201", 20)]
    assert data["rows"][0]["share"] == 0.7


def test_plot_writes_a_png(tmp_path):
    from ms_lint.profiler.plot import plot  # matplotlib comes with the test extra: no skip

    out = tmp_path / "p.png"
    plot(_synthetic_profile(), str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv, script_args, compiles", [
    (["t.py", "--compiles", "2", "--", "--steps", "2"], ["--steps", "2"], 2),
    (["t.py", "--", "--steps", "5", "-x"], ["--steps", "5", "-x"], 1),
    (["--compiles", "3", "t.py", "--", "--function", "f"], ["--function", "f"], 3),
])
def test_script_arguments_after_dashes_reach_the_script(argv, script_args, compiles):
    from ms_lint.cli import build_parser

    parsed = build_parser().parse_args(["profile"] + argv)
    assert (parsed.path, parsed.script_args, parsed.compiles, parsed.function) == ("t.py", script_args, compiles,
                                                                                   None)


def test_long_paths_keep_their_file_name_and_line():
    from ms_lint.profiler.report import render_text

    profile = _synthetic_profile()
    profile.display = lambda p: "/a/very/long/folder/name/that/goes/on/and/on" + p
    text = render_text(profile)
    row = next(line for line in text.splitlines() if "MSL103" in line)
    assert "  ...der/name/that/goes/on/and/on/p/a.py:3 MSL103  for _ in range(200):" in row


# MindSpore 2.10 CPU with MS_DEV_RUNTIME_CONF="compile_statistics:True": a Cell with control flow (two kernel
# graphs) whose backend steps come before its tree and `compile_graph` after it, then a @jit function.
BACKEND_TEXT = textwrap.dedent("""\
    [MS_RUNTIME_PROF]The jit_level is: O0, and enable kernelbykernel executor.
    [MS_DEV_RUNTIME_CONF] config:  compile_statistics:True
    [PROF]WaitAllCommInit costs 0.007 msec.
    [PROF]ConstructKernelGraph costs 5.0 msec.
    [PROF]BackendCommonOptimization costs 8.0 msec.
    [PROF]OptimizeGraph costs 40.0 msec.
    [PROF]CreateKernel costs 20.0 msec.
    [PROF]CreateDeviceAddress costs 6.0 msec.
    [PROF]ConstructKernelGraph costs 1.0 msec.
    [PROF]OptimizeGraph costs 10.0 msec.
    [PROF]CreateKernel costs 4.0 msec.
    [PROF]CompileSubGraph costs 100.0 msec.
    [PROF]GraphSchedulerLink costs 5.0 msec.
    [PROF]GraphScheduler costs 13.0 msec.
    [PROF]compile_backend_graph costs 120.0 msec.

    TotalTime = 0.75, [3]
    [type_inference]: 0.5
    [validate]: 0.01
    [task_emit]: 0.15
    Sums
    [PROF]CleanCompileRes costs 10.0 msec.
    [PROF]compile_graph costs 764.0 msec.
    [PROF]PreLaunchCommKernel costs 0.016 msec.
    (8, 4)
    [PROF]ConstructKernelGraph costs 3.0 msec.
    [PROF]OptimizeGraph costs 18.0 msec.
    [PROF]CompileSubGraph costs 38.0 msec.
    [PROF]GraphScheduler costs 4.0 msec.
    [PROF]compile_backend_graph costs 44.0 msec.

    TotalTime = 1.0, [2]
    [type_inference]: 0.9
    [task_emit]: 0.05
    """)


def test_backend_steps_belong_to_the_graph_they_compile():
    from ms_lint.profiler.backend import backend_of

    first, second = parse_profile(BACKEND_TEXT)
    assert [p[0] for p in first.phases] == ["type_inference", "validate", "task_emit"]
    names = [name for name, _ in first.backend]
    assert names[0] == "WaitAllCommInit" and names[-3:] == ["CleanCompileRes", "compile_graph", "PreLaunchCommKernel"]
    assert dict(first.backend)["compile_backend_graph"] == pytest.approx(0.12)
    assert [name for name, _ in second.backend] == ["ConstructKernelGraph", "OptimizeGraph", "CompileSubGraph",
                                                    "GraphScheduler", "compile_backend_graph"]
    one = backend_of([first])
    assert one.kernel_graphs == 2 and one.total_s == pytest.approx(0.12)
    parts = dict(one.parts())
    assert list(parts)[:2] == ["OptimizeGraph", "CreateKernel"]
    assert parts["OptimizeGraph"] == pytest.approx(0.05) and parts["other"] == pytest.approx(0.12 - 0.099)
    both = backend_of([first, second])
    assert both.kernel_graphs == 3 and both.total_s == pytest.approx(0.164)
    assert next(s for s in both.steps if s.name == "OptimizeGraph").parent == "CompileSubGraph"


def test_backend_line_in_the_text_report_and_json():
    from ms_lint.profiler.report import render_text, to_json

    profile = _synthetic_profile()
    profile.run.compiles[0].backend = [("ConstructKernelGraph", 0.004), ("OptimizeGraph", 0.016),
                                       ("CompileSubGraph", 0.03), ("compile_backend_graph", 0.049)]
    lines = render_text(profile).splitlines()
    assert lines[2] == ("backend 49 ms of task_emit 0.50 s, 1 kernel graph: OptimizeGraph 16 ms, "
                        "ConstructKernelGraph 4 ms, other 29 ms")
    data = to_json(profile)["backend"]
    assert data["kernel_graphs"] == 1 and data["total_s"] == 0.049
    assert data["steps"][1] == {"name": "OptimizeGraph", "seconds": 0.016, "count": 1, "parent": "CompileSubGraph"}
    assert to_json(_synthetic_profile())["backend"] == {"total_s": 0.0, "kernel_graphs": 0, "steps": []}
    assert not render_text(_synthetic_profile()).splitlines()[2].startswith("backend")


def test_runtime_conf_keeps_the_users_keys():
    from ms_lint.profiler.runner import runtime_conf

    assert runtime_conf(None) == "compile_statistics:True"
    merged = runtime_conf("memory_statistics:True, compile_statistics:False")
    assert merged == "memory_statistics:True,compile_statistics:True"


def test_overrides_load_the_rewritten_copy_under_the_modules_own_name(tmp_path, monkeypatch):
    import importlib
    import sys

    from ms_lint.profiler.child import _Overrides

    (tmp_path / "helper_mod_p20.py").write_text("VALUE = 'original'\n")
    copy = tmp_path / "_ms_lint_verify_confirm_1234.py"
    copy.write_text("VALUE = 'rewritten'\nFILE = __file__\n")
    (tmp_path / "pkg_p20").mkdir()
    (tmp_path / "pkg_p20" / "__init__.py").write_text("")
    (tmp_path / "pkg_p20" / "other.py").write_text("from . import sibling\nVALUE = sibling.VALUE\n")
    (tmp_path / "pkg_p20" / "sibling.py").write_text("VALUE = 'original'\n")
    sibling_copy = tmp_path / "pkg_p20" / "_ms_lint_verify_confirm_5678.py"
    sibling_copy.write_text("VALUE = 'rewritten sibling'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    finder = _Overrides({str(tmp_path / "helper_mod_p20.py"): str(copy),
                         str(tmp_path / "pkg_p20" / "sibling.py"): str(sibling_copy)})
    monkeypatch.setattr(sys, "meta_path", [finder] + sys.meta_path)
    try:
        helper = importlib.import_module("helper_mod_p20")
        assert (helper.__name__, helper.VALUE, helper.FILE) == ("helper_mod_p20", "rewritten", str(copy))
        assert importlib.import_module("pkg_p20.other").VALUE == "rewritten sibling"  # relative import too
    finally:
        for name in ("helper_mod_p20", "pkg_p20", "pkg_p20.other", "pkg_p20.sibling"):
            sys.modules.pop(name, None)
