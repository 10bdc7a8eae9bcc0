"""The verifier's pure-Python parts: input specs, where they come from, output comparison, verdict arithmetic,
rendering, and the clean failures that need no MindSpore (MindSpore missing, timeout). No MindSpore needed here."""

import json
import math
import os
import sys
import textwrap

import pytest

from ms_lint.verifier import VerifyError, parse_spec, resolve_inputs, verify_pair
from ms_lint.verifier.inputs import (
    ScalarSpec,
    TensorSpec,
    _mini_toml_verify_table,
    directives_from_source,
    required_parameters,
    spec_to_string,
    to_specs,
)
from ms_lint.verifier.targets import enclosing_target, target_contains

# -- parsing -------------------------------------------------------------------------------------------------------


def test_parse_issue_example():
    specs = parse_spec("xs=float32[100,2]; mask=bool[100]; n=int:4")
    assert specs == [
        TensorSpec("xs", "float32", (100, 2)),
        TensorSpec("mask", "bool", (100,)),
        ScalarSpec("n", "int", 4),
    ]


def test_parse_all_kinds():
    specs = parse_spec(
        "a=float16[3]; b=int32[2,2]; c=int64[5](0,3); d=float:0.5; e=bool:true; f=bool:False; g=float32[]; "
        "h=float32:0.25; i=float64[2](-1,1)\n j=uint8[1]"
    )
    by_name = {s.name: s for s in specs}
    assert by_name["a"] == TensorSpec("a", "float16", (3,))
    assert by_name["c"] == TensorSpec("c", "int64", (5,), 0, 3)
    assert by_name["d"] == ScalarSpec("d", "float", 0.5)
    assert by_name["e"] == ScalarSpec("e", "bool", True)
    assert by_name["f"] == ScalarSpec("f", "bool", False)
    assert by_name["g"].shape == ()
    assert by_name["h"] == TensorSpec("h", "float32", (), value=0.25)
    assert by_name["i"].low == -1 and by_name["i"].high == 1
    assert [s.name for s in specs] == list("abcdefghij")


def test_round_trip_text():
    text = "xs=float32[100,2]; mask=bool[100]; n=int:4; t=float32:0.5; r=int32[3](0,5); b=bool:true"
    assert spec_to_string(parse_spec(text)) == text


def test_empty_spec_is_no_inputs():
    assert parse_spec("") == []
    assert parse_spec(" ; ") == []


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("xs=float33[100,2]", "unknown dtype 'float33'"),
        ("xs float32[3]", "expected name=type"),
        ("1x=float32[3]", "not a valid parameter name"),
        ("xs=float32[100,-2]", "negative"),
        ("xs=float32[100,a]", "not a non-negative integer"),
        ("xs=float32", "needs a shape"),
        ("n=int", "needs a value"),
        ("n=int:4.5", "not an integer"),
        ("b=bool:maybe", "true or false"),
        ("xs=float[3]", "Python scalar kind"),
        ("x=float32[3]; x=int32[2]", "given twice"),
        ("x=int32[3](5,1)", "empty"),
        ("x=bool[3](0,1)", "no value range"),
        ("x=", "missing type"),
        ("x=float32[100000,100000,100]", "more than"),
    ],
)
def test_bad_specs_raise_verify_error(spec, fragment):
    with pytest.raises(VerifyError) as info:
        parse_spec(spec)
    message = str(info.value)
    assert fragment in message
    assert "Example of a valid spec" in message  # every spec error shows a correct form


def test_mapping_inputs():
    specs = to_specs({"x": "float32[2]", "n": 3, "s": 0.5, "flag": True})
    assert specs == [TensorSpec("x", "float32", (2,)), ScalarSpec("n", "int", 3), ScalarSpec("s", "float", 0.5),
                     ScalarSpec("flag", "bool", True)]
    with pytest.raises(VerifyError, match="unsupported value"):
        to_specs({"x": object()})
    with pytest.raises(VerifyError, match="spec string"):
        to_specs(42)


# -- generation (numpy) ----------------------------------------------------------------------------------------------


def test_generation_is_deterministic_and_typed():
    np = pytest.importorskip("numpy")
    from ms_lint.verifier.inputs import generate

    specs = parse_spec("xs=float32[100,2]; mask=bool[100]; n=int:4; idx=int32[50](0,5); t=float16:0.5")
    first, second = generate(specs, seed=0), generate(specs, seed=0)
    for name in ("xs", "mask", "idx", "t"):
        assert np.array_equal(first[name], second[name])
    assert first["xs"].dtype == np.float32 and first["xs"].shape == (100, 2)
    assert first["mask"].dtype == np.bool_ and 0 < first["mask"].sum() < 100
    assert first["n"] == 4 and isinstance(first["n"], int)
    assert first["idx"].dtype == np.int32 and first["idx"].min() >= 0 and first["idx"].max() < 5
    assert first["t"].shape == () and first["t"].dtype == np.float16 and float(first["t"]) == 0.5
    assert not np.array_equal(first["xs"], generate(specs, seed=1)["xs"])
    # adding an input does not change the others
    more = generate(parse_spec("ys=float32[3]; xs=float32[100,2]"), seed=0)
    assert np.array_equal(more["xs"], first["xs"])


# -- where specs come from ------------------------------------------------------------------------------------------

SOURCE = textwrap.dedent(
    """
    import mindspore as ms
    from mindspore import nn


    # some other comment
    # ms-lint: inputs=xs=float32[100,2];
    # ms-lint: inputs=n=int:4
    @ms.jit
    def func(xs, n):
        return xs * n


    def plain(a, b=2):
        return a


    # ms-lint: inputs=x=float32[4,8]
    # ms-lint: init=Net(8)
    class Net(nn.Cell):
        def __init__(self, k):
            super().__init__()

        # ms-lint: inputs=y=float32[3]
        def helper(self, y):
            return y

        def construct(self, x):
            return x
    """
)


def test_comment_directives():
    assert directives_from_source(SOURCE, "func") == {"inputs": "xs=float32[100,2]; n=int:4"}
    assert directives_from_source(SOURCE, "Net") == {"inputs": "x=float32[4,8]", "init": "Net(8)"}
    assert directives_from_source(SOURCE, "Net.helper") == {"inputs": "y=float32[3]", "init": "Net(8)"}
    assert directives_from_source(SOURCE, "plain") == {}
    assert directives_from_source(SOURCE, "missing") == {}
    assert directives_from_source("def (:", "f") == {}


def test_resolve_precedence(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(
        """
        [tool.ms-lint]
        select = ["MSL"]

        [tool.ms-lint.verify]
        func = "xs=float32[1,2]; n=int:1"
        plain = "a=int32[3]"

        [tool.ms-lint.verify."Net"]
        inputs = "x=float32[2,8]"
        init = "Net(k=3)"
        """
    ))
    path = str(tmp_path / "mod.py")
    # the comment beats pyproject
    got = resolve_inputs(SOURCE, "func", path=path)
    assert got.text == "xs=float32[100,2]; n=int:4" and got.origin == "comment"
    # the argument beats everything
    got = resolve_inputs(SOURCE, "func", path=path, inputs="xs=float32[3,2]; n=int:2")
    assert got.origin == "argument" and got.specs[0].shape == (3, 2)
    # pyproject when there is no comment
    got = resolve_inputs(SOURCE, "plain", path=path)
    assert got.text == "a=int32[3]" and got.origin.startswith("pyproject:")
    # comment's init beats pyproject's; an explicit init beats both
    assert resolve_inputs(SOURCE, "Net", path=path).init == "Net(8)"
    assert resolve_inputs(SOURCE, "Net", path=path, init="Net(1)").init == "Net(1)"
    # an already-loaded table (Config.verify) is used as given
    got = resolve_inputs("def g(q):\n    return q\n", "g", verify_config={"g": {"inputs": "q=int64[2]", "init": "X()"}})
    assert got.text == "q=int64[2]" and got.init == "X()"
    # nothing anywhere
    assert resolve_inputs("def g(q):\n    return q\n", "g").origin == "none"


def test_bad_pyproject_entries(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ms-lint.verify]\nfunc = 3\n')
    with pytest.raises(VerifyError, match="must be a spec string"):
        resolve_inputs("def func(x):\n    pass\n", "func", path=str(tmp_path / "m.py"))
    (tmp_path / "pyproject.toml").write_text('[tool.ms-lint.verify.func]\ninputz = "x=float32[2]"\n')
    with pytest.raises(VerifyError, match="unknown key"):
        resolve_inputs("def func(x):\n    pass\n", "func", path=str(tmp_path / "m.py"))
    (tmp_path / "pyproject.toml").write_text('[tool.ms-lint.verify]\nfunc = "x=floot[2]"\n')
    with pytest.raises(VerifyError, match="unknown dtype 'floot'") as info:
        resolve_inputs("def func(x):\n    pass\n", "func", path=str(tmp_path / "m.py"))
    assert "pyproject.toml" in str(info.value)
    with pytest.raises(VerifyError, match="comment above func"):
        resolve_inputs("# ms-lint: inputs=x=float32[2,]\ndef func(x):\n    pass\n", "func")


def test_mini_toml_fallback():
    text = textwrap.dedent(
        """
        [tool.other]
        func = "nope"
        [tool.ms-lint.verify]
        func = "x=float32[2]"  # trailing comment
        'Net.construct' = 'x=int32[1]'
        [tool.ms-lint.verify."Net"]
        init = "Net(3)"
        """
    )
    table = _mini_toml_verify_table(text)["tool"]["ms-lint"]["verify"]
    assert table == {"func": "x=float32[2]", "Net.construct": "x=int32[1]", "Net": {"init": "Net(3)"}}


def test_required_parameters_and_targets():
    assert required_parameters(SOURCE, "func") == ["xs", "n"]
    assert required_parameters(SOURCE, "plain") == ["a"]
    assert required_parameters(SOURCE, "Net") == ["x"]
    assert required_parameters(SOURCE, "Net.helper") == ["y"]
    assert required_parameters(SOURCE, "nope") is None
    lines = SOURCE.splitlines()
    line_of = {text.strip(): number for number, text in enumerate(lines, 1)}
    assert enclosing_target(SOURCE, line_of["return xs * n"]) == "func"
    assert enclosing_target(SOURCE, line_of["@ms.jit"]) == "func"
    assert enclosing_target(SOURCE, line_of["return y"]) == "Net.helper"
    assert enclosing_target(SOURCE, line_of["return x"]) == "Net"
    assert enclosing_target(SOURCE, line_of["import mindspore as ms"]) is None
    assert target_contains(SOURCE, "Net", line_of["return y"])
    assert not target_contains(SOURCE, "func", line_of["return y"])


# -- comparing outputs ----------------------------------------------------------------------------------------------


def _tensor(key, arr):
    return {"type": "tensor", "key": key, "dtype": str(arr.dtype), "shape": list(arr.shape)}


def test_compare_trees():
    np = pytest.importorskip("numpy")
    from ms_lint.verifier.compare import compare_arrays, compare_trees

    a = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    tree = {"type": "tuple", "items": [_tensor("t0", a), {"type": "scalar", "pytype": "int", "value": 3},
                                       {"type": "none"}]}
    same = compare_trees(tree, {"t0": a}, tree, {"t0": a.copy()})
    assert same.match and same.leaves == 2
    close = compare_trees(tree, {"t0": a}, tree, {"t0": a + np.float32(1e-7)}, rtol=1e-5, atol=1e-6)
    assert close.match
    far = compare_trees(tree, {"t0": a}, tree, {"t0": a + np.float32(1e-2)})
    assert not far.match and "differ beyond" in far.differences[0]
    nan_moved = np.array([np.nan, 1.0, np.inf, -np.inf], np.float32)
    assert "NaN in different places" in compare_arrays(a, nan_moved)
    inf_sign = np.array([1.0, np.nan, -np.inf, -np.inf], np.float32)
    assert "inf" in compare_arrays(a, inf_sign)
    assert "dtype" in compare_arrays(a, a.astype(np.float64))
    assert "shape" in compare_arrays(a, a[:2])
    ints = np.arange(4)
    assert "1 of 4 elements differ" in compare_arrays(ints, np.array([0, 1, 2, 4]))
    b_tree = {"type": "list", "items": tree["items"]}
    assert "structure differs" in compare_trees(tree, {"t0": a}, b_tree, {"t0": a}).differences[0]
    short = {"type": "tuple", "items": tree["items"][:2]}
    assert "length 3 vs 2" in compare_trees(tree, {"t0": a}, short, {"t0": a}).differences[0]
    other_dtype = {"type": "tuple", "items": [dict(_tensor("t0", a), dtype="Float16")] + tree["items"][1:]}
    assert "dtype" in compare_trees(tree, {"t0": a}, other_dtype, {"t0": a}).differences[0]


# -- verdict arithmetic ---------------------------------------------------------------------------------------------


def test_decide_verdicts():
    from ms_lint.verifier.runner import VersionStats, decide

    def stats(compile_s, run_ms):
        return VersionStats(ok=True, compile_s=compile_s, run_ms=run_ms)

    verified = decide(stats(7.0, 3.0), stats(0.2, 0.3))
    assert verified["verdict"] == "verified" and verified["break_even_calls"] is None
    assert math.isclose(verified["compile_speedup"], 35.0) and math.isclose(verified["run_ratio"], 0.1)
    tradeoff = decide(stats(0.8, 2.0), stats(0.1, 22.0))
    assert tradeoff["verdict"] == "tradeoff" and tradeoff["tradeoff_kind"] == "faster-compile-slower-run"
    assert tradeoff["break_even_calls"] == 35  # 0.7 s saved / 20 ms per call
    assert "35" in tradeoff["message"]
    reverse = decide(stats(0.1, 22.0), stats(0.8, 2.0))
    assert reverse["verdict"] == "tradeoff" and reverse["tradeoff_kind"] == "slower-compile-faster-run"
    assert reverse["break_even_calls"] == 35
    assert decide(stats(0.5, 1.0), stats(2.0, 5.0))["verdict"] == "slower"
    assert decide(stats(0.5, 1.0), stats(2.0, 1.0))["verdict"] == "slower"
    # differences inside the noise margin are "the same"
    assert decide(stats(0.50, 1.00), stats(0.52, 1.05))["verdict"] == "verified"


def test_verification_json_and_text():
    from ms_lint.verifier import render_json, render_text, render_text_all
    from ms_lint.verifier.runner import Verification, VersionStats

    v = Verification(function="func", verdict="tradeoff", message="m", path="a.py", code="MSL101", line=3,
                     outputs_match=True, original=VersionStats(True, 0.8, 2.0, 500.0, 0.802, 1),
                     rewritten=VersionStats(True, 0.1, 22.0, 480.0, 0.122, 1), compile_speedup=8.0, run_ratio=11.0,
                     break_even_calls=35, tradeoff_kind="faster-compile-slower-run")
    data = v.to_json()
    for key in ("path", "function", "code", "verdict", "outputs_match", "original", "rewritten", "compile_speedup",
                "run_ratio", "break_even_calls", "message"):
        assert key in data
    assert set(data["original"]) >= {"compile_s", "run_ms", "peak_mb"}
    assert json.loads(render_json([v]))[0]["verdict"] == "tradeoff"
    text = render_text(v)
    assert text.startswith("a.py:3 func MSL101  TRADEOFF")
    assert "break-even   35 calls" in text and "8.0x faster" in text
    assert "1 tradeoff" in render_text_all(iter([v]))
    assert v.accepted


# -- clean failures without MindSpore --------------------------------------------------------------------------------

LOOP = textwrap.dedent(
    """
    import mindspore as ms


    @ms.jit
    def func(x):
        return x + 1
    """
)


def _shadow_mindspore(tmp_path, monkeypatch, body):
    fake = tmp_path / "shadow"
    (fake / "mindspore").mkdir(parents=True)
    (fake / "mindspore" / "__init__.py").write_text(body)
    monkeypatch.setenv("PYTHONPATH", str(fake))


def test_mindspore_missing_is_a_clean_error(tmp_path, monkeypatch):
    pytest.importorskip("numpy")
    # a `mindspore` package that cannot be imported stands in for an interpreter without MindSpore
    _shadow_mindspore(tmp_path, monkeypatch, "raise ImportError(\"No module named 'mindspore'\", name='mindspore')\n")
    v = verify_pair(LOOP, LOOP, function="func", inputs="x=float32[2]", repeat=1, timeout=60)
    assert v.verdict == "error"
    assert "MindSpore is not installed" in v.message and sys.executable in v.message
    assert "Traceback" not in v.message
    assert v.rewritten.runs == 0  # stopped after the first process


def test_timeout_is_a_clean_error(tmp_path, monkeypatch):
    pytest.importorskip("numpy")
    _shadow_mindspore(tmp_path, monkeypatch, "import time\ntime.sleep(60)\n")
    v = verify_pair(LOOP, LOOP, function="func", inputs="x=float32[2]", repeat=1, timeout=1.5)
    assert v.verdict == "error"
    assert "did not finish within 1.5 s" in v.message and "import-mindspore" in v.message


def test_bad_requests_raise_before_running():
    with pytest.raises(VerifyError, match="unknown dtype"):
        verify_pair(LOOP, LOOP, function="func", inputs="x=flaot32[2]")
    with pytest.raises(VerifyError, match="unknown device 'TPU'"):
        verify_pair(LOOP, LOOP, function="func", inputs="x=float32[2]", device="TPU")
    with pytest.raises(VerifyError, match="repeat"):
        verify_pair(LOOP, LOOP, function="func", inputs="x=float32[2]", repeat=0)
    with pytest.raises(VerifyError, match="rtol"):
        verify_pair(LOOP, LOOP, function="func", inputs="x=float32[2]", rtol=-1)


def test_missing_inputs_and_unknown_function_need_no_process():
    v = verify_pair(LOOP, LOOP, function="func")
    assert v.verdict == "error" and "no inputs were given" in v.message and "x=float32[4]" in v.message
    assert v.original.runs == 0
    v = verify_pair(LOOP, LOOP, function="nope", inputs=None)
    assert v.verdict == "error" and "'nope' is not defined" in v.message and "func" in v.message


def test_verifier_is_not_imported_by_check():
    """`check` never runs (or even imports) the verifier."""
    import subprocess

    code = (
        "import sys\n"
        "from ms_lint.cli import main\n"
        "main(['check', '--no-cache', sys.argv[1]])\n"
        "print('VERIFIER-LOADED' if any(m.startswith('ms_lint.verifier') for m in sys.modules) else 'CLEAN')\n"
    )
    fixture = os.path.join(os.path.dirname(__file__), "..", "fixtures", "verify", "loop_200_orig.py")
    out = subprocess.run([sys.executable, "-c", code, fixture], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "CLEAN", out.stdout + out.stderr


# -- tuples, lists, None, Python values (issue 17) ------------------------------------------------------------------


def test_parse_sequences_none_and_bare_literals():
    from ms_lint.verifier.inputs import NoneSpec, SeqSpec

    specs = parse_spec("grads=tuple(60*float32[8,4]); mask=None; n=4; lr=0.5; on=true; off=False; "
                       "mix=list(float32[4], int:3, None, tuple(2*int32[2](0,64))); empty=tuple()")
    by_name = {s.name: s for s in specs}
    grads = by_name["grads"]
    assert isinstance(grads, SeqSpec) and grads.kind == "tuple" and len(grads.items) == 60
    assert grads.items[0] == TensorSpec("grads.0", "float32", (8, 4))
    assert grads.items[59].name == "grads.59"
    assert by_name["mask"] == NoneSpec("mask")
    assert by_name["n"] == ScalarSpec("n", "int", 4)
    assert by_name["lr"] == ScalarSpec("lr", "float", 0.5)
    assert by_name["on"] == ScalarSpec("on", "bool", True) and by_name["off"] == ScalarSpec("off", "bool", False)
    mix = by_name["mix"]
    assert mix.kind == "list" and [type(i).__name__ for i in mix.items] == ["TensorSpec", "ScalarSpec", "NoneSpec",
                                                                            "SeqSpec"]
    assert mix.items[3].items[1] == TensorSpec("mix.3.1", "int32", (2,), 0, 64)
    assert by_name["empty"].items == ()
    assert spec_to_string(specs) == (
        "grads=tuple(60*float32[8,4]); mask=None; n=int:4; lr=float:0.5; on=bool:true; off=bool:false; "
        "mix=list(float32[4], int:3, None, tuple(2*int32[2](0,64))); empty=tuple()")


@pytest.mark.parametrize("spec, fragment", [
    ("g=tuple(60*float32[8,4]", "type must be"),
    ("g=tuple(float32[4],,float32[4])", "empty item"),
    ("g=tuple(3*flaot32[4])", "unknown dtype 'flaot32'"),
    ("g=tuple(200000*float32[1])", "more than"),
    ("g=none", "None"),
])
def test_bad_sequence_specs(spec, fragment):
    with pytest.raises(VerifyError) as info:
        parse_spec(spec)
    assert fragment in str(info.value) and "Example of a valid spec" in str(info.value)


def test_generation_of_sequences_is_per_item_and_deterministic():
    np = pytest.importorskip("numpy")
    from ms_lint.verifier.inputs import encode_values, generate

    specs = parse_spec("grads=tuple(3*float32[2,2]); m=None; n=int:2; l=list(int32[3](0,64), None)")
    first, second = generate(specs), generate(specs)
    assert isinstance(first["grads"], tuple) and len(first["grads"]) == 3
    assert all(np.array_equal(a, b) for a, b in zip(first["grads"], second["grads"]))
    assert not np.array_equal(first["grads"][0], first["grads"][1])  # each item has its own stream
    assert first["m"] is None and first["n"] == 2
    assert isinstance(first["l"], list) and first["l"][1] is None and first["l"][0].max() < 64
    tree, arrays = encode_values(first)
    assert tree["grads"]["t"] == "tuple" and [i["t"] for i in tree["grads"]["items"]] == ["array"] * 3
    assert tree["m"] == {"t": "none"} and tree["n"] == {"t": "value", "value": 2}
    assert tree["l"]["t"] == "list" and len(arrays) == 4
    json.dumps(tree)


def test_missing_inputs_suggestion_uses_the_body():
    source = textwrap.dedent(
        """
        import mindspore as ms

        @ms.jit
        def step(grads, steps, table, idx, lr: float, x):
            out = ()
            for g in grads:
                out = out + (g * lr,)
            for _ in range(steps):
                x = x + 1
            return out, x, table[idx]
        """
    )
    v = verify_pair(source, source, function="step")
    assert v.verdict == "error"
    assert ('--inputs "grads=tuple(4*float32[4]); steps=int:4; table=float32[4]; idx=int32[](0,2); lr=float:0.5; '
            'x=float32[4]"') in v.message


def test_verified_messages_say_no_measurable_change_instead_of_no_slower():
    from ms_lint.verifier.runner import VersionStats, decide

    def stats(compile_s, run_ms):
        return VersionStats(ok=True, compile_s=compile_s, run_ms=run_ms)

    same = decide(stats(0.50, 1.00), stats(0.55, 1.10))  # 1.1x slower: inside the noise, never "no slower"
    assert same["verdict"] == "verified" and "no measurable change in compile or run time" in same["message"]
    assert "no slower" not in same["message"] and "1.1x slower" in same["message"]
    half = decide(stats(2.0, 1.00), stats(0.2, 1.10))
    assert "compiles faster and its run time shows no measurable change" in half["message"]
    both = decide(stats(2.0, 1.00), stats(0.2, 0.2))
    assert "compiles and runs faster" in both["message"]
