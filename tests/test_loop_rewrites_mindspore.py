"""The loop rewrites (MSL101 -> ms.vmap, MSL103 -> ops.ForiLoop) compute what the original computes, on MindSpore.

For every INVALID example with a fix and every fixable fixture under fixtures/loops/, the text ``fix_text``
produces is imported next to the original, both are called on the same small random inputs, and the outputs must
match. This is what allows MSL101 to call its vmap fix *safe*; the ForiLoop fix stays *unsafe* (slower per call)
but must still be exact. Trip counts are scaled down to 8 (with ``unroll-threshold`` 4) where a test can choose.

Each version is imported from its own file as its own module and compiled in this process (small graphs, CPU).
Cells are compared with the original's parameter values copied into the rewritten cell.
"""
import inspect
import pathlib
import re
import textwrap

import pytest

ms = pytest.importorskip("mindspore")
np = pytest.importorskip("numpy")

from ms_lint.config import Config  # noqa: E402
from ms_lint.fixer import fix_text  # noqa: E402
from ms_lint.rules import rule_by_code  # noqa: E402
from ms_lint.source import decode_source  # noqa: E402
from ms_lint.testing import lint  # noqa: E402
from ms_lint.verifier.inputs import directives_from_source, generate, parse_spec  # noqa: E402
from ms_lint.verifier.targets import enclosing_target  # noqa: E402
from mindspore_support import import_source  # noqa: E402

pytestmark = [pytest.mark.mindspore, pytest.mark.usefixtures("graph_mode")]

ROOT = pathlib.Path(__file__).resolve().parent.parent
LOOP_FIXTURES = sorted((ROOT / "fixtures" / "loops").glob("*.py"))
CODES = ["MSL101", "MSL103"]
SMALL_TRIP = 8

# Inputs for the rule examples (they carry no ``# ms-lint: inputs=`` comment: the page shows them as written).
# Anything not listed is float32[6,3].
EXAMPLE_INPUTS = {
    ("MSL101", 1): "logits=float32[6,5]; labels=float32[6,5]; weight=float32[]",
    ("MSL101", 2): "x=float32[4,7]",
    ("MSL101", 4): "anchor=float32[6,3]; positive=float32[6,3]; negative=float32[6,3]",
    ("MSL101", 5): "reward=float32[6,3]; value=float32[3]",
    ("MSL101", 6): "scores=float32[5,4,6]",
    ("MSL101", 9): "x=float32[6,3]; h=float32[3]; w=float32[3,3]",
}


# -- running two versions ----------------------------------------------------------------------------------------
def _import(source: str, tmp_path: pathlib.Path, label: str):
    return import_source(tmp_path, source, f"mslint_loop_case_{label}")


def _targets(source: str):
    """Top-level functions decorated with jit, and Cell classes, of a module."""
    found = []
    for match in re.finditer(r"^(?:@(?:ms\.|mindspore\.)?jit\n)def (\w+)|^class (\w+)\(nn\.Cell\)", source, re.M):
        found.append(match.group(1) or match.group(2))
    return found


def _call(module, target: str, values):
    obj = getattr(module, target)
    if inspect.isclass(obj):
        return obj(), True
    return obj, False


def _flatten(result):
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in _flatten(item)]
    return [result.asnumpy() if hasattr(result, "asnumpy") else np.asarray(result)]


def run_both(original: str, rewritten: str, target: str, spec: str, tmp_path: pathlib.Path):
    """Outputs of ``target`` in both versions for the same inputs (``spec`` in the verifier's syntax)."""
    specs = parse_spec(spec)
    values = generate(specs, seed=7)
    args = [ms.Tensor(values[s.name]) if isinstance(values[s.name], np.ndarray) else values[s.name] for s in specs]
    before = _import(original, tmp_path, "orig")
    after = _import(rewritten, tmp_path, "fixed")
    fn_before, is_cell = _call(before, target, values)
    fn_after, _ = _call(after, target, values)
    if is_cell:  # same weights in both cells
        params_after = dict(fn_after.parameters_and_names())
        for name, param in fn_before.parameters_and_names():
            params_after[name].set_data(ms.Tensor(param.asnumpy()))
    return _flatten(fn_before(*args)), _flatten(fn_after(*args))


def assert_same(expected, actual, what: str):
    assert len(expected) == len(actual), f"{what}: {len(expected)} outputs before, {len(actual)} after"
    for index, (a, b) in enumerate(zip(expected, actual)):
        assert a.shape == b.shape, f"{what}: output {index} shape {a.shape} -> {b.shape}"
        assert a.dtype == b.dtype, f"{what}: output {index} dtype {a.dtype} -> {b.dtype}"
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, err_msg=f"{what}: output {index} differs")


def _fix(source: str, config: Config) -> str:
    outcome = fix_text(decode_source("case.py", source.encode("utf-8")), config.with_overrides(select=CODES),
                       unsafe=True)
    assert outcome.error is None, outcome.error
    return outcome.fixed


def _scaled(source: str, original: str) -> str:
    """``source`` with the large literal trip counts of ``original`` (``range(200)``) cut to SMALL_TRIP."""
    for number in set(re.findall(r"range\((\d{2,})\)", original)):
        source = re.sub(rf"\b{number}\b", str(SMALL_TRIP), source)
    return source


# -- the rule examples -----------------------------------------------------------------------------------------
def _example_cases():
    for code in CODES:
        for index, example in enumerate(rule_by_code(code).INVALID):
            if example.fixed is not None:
                yield pytest.param(code, index, id=f"{code}-invalid-{index}")


@pytest.mark.parametrize("code, index", list(_example_cases()))
def test_example_fix_matches_the_original(code, index, tmp_path):
    example = rule_by_code(code).INVALID[index]
    config = Config(unroll_threshold=4)
    source = textwrap.dedent(example.code)
    original = _scaled(source, source)
    fixed = _fix(original, config)
    # The rewrite run here is the one the page shows, only with the smaller trip count.
    assert fixed == _scaled(textwrap.dedent(example.fixed), source)
    targets = _targets(original)
    assert targets, "no jit function or Cell to call in the example"
    for target in targets:
        params = [p for p in inspect.signature(_signature_holder(original, target, tmp_path)).parameters]
        spec = EXAMPLE_INPUTS.get((code, index)) or "; ".join(f"{p}=float32[6,3]" for p in params)
        expected, actual = run_both(original, fixed, target, spec, tmp_path)
        assert_same(expected, actual, f"{code} example {index} ({target})")


def _signature_holder(source: str, target: str, tmp_path):
    obj = getattr(_import(source, tmp_path, "sig"), target)
    return obj.construct if inspect.isclass(obj) else getattr(obj, "__wrapped__", obj)


# -- the fixtures ----------------------------------------------------------------------------------------------
def _fixture_cases():
    for path in LOOP_FIXTURES:
        source = path.read_text(encoding="utf-8")
        for target in _verifiable_targets(source):
            yield pytest.param(path, target, id=f"{path.stem}-{target}")


def _verifiable_targets(source: str):
    names = re.findall(r"^(?:@[\w.]+\n)*(?:def|class) (\w+)", source, re.M)
    return [name for name in names if "inputs" in directives_from_source(source, name)]


@pytest.mark.parametrize("path, target", list(_fixture_cases()))
def test_fixture_fix_matches_the_original(path, target, tmp_path):
    source = path.read_text(encoding="utf-8")
    fixed = _fix(source, Config())
    spec = directives_from_source(source, target)["inputs"]
    assert fixed != source
    expected, actual = run_both(source, fixed, target, spec, tmp_path)
    assert_same(expected, actual, f"{path.name}:{target}")


@pytest.mark.parametrize("path", LOOP_FIXTURES, ids=lambda p: p.stem)
def test_every_fixable_fixture_finding_is_checked_here(path):
    """A fix in fixtures/loops/ whose function has no inputs comment would escape the equivalence check."""
    source = path.read_text(encoding="utf-8")
    verified = set(_verifiable_targets(source))
    for finding in lint(source, select=CODES):
        if finding.fix_object is not None:
            target = enclosing_target(source, finding.line)
            assert target in verified, f"{path.name}:{finding.line} has a fix but {target} has no inputs comment"


def test_there_are_fixable_fixtures_for_both_rules():
    fixable = set()
    for path in LOOP_FIXTURES:
        fixable.update(f.code for f in lint(path.read_text(encoding="utf-8"), select=CODES) if f.fix_object)
    assert fixable == set(CODES)


# -- the MindSpore API the rewrites rely on ----------------------------------------------------------------------
def test_fori_loop_signature_has_unroll_defaulting_to_true():
    """The rewrite passes ``unroll=False`` explicitly: the default (True) unrolls and gains nothing."""
    signature = inspect.signature(ms.ops.ForiLoop.__call__)
    assert list(signature.parameters)[1:5] == ["lower", "upper", "loop_func", "init_val"]
    assert signature.parameters["unroll"].default is True


def test_fori_loop_rewrite_is_a_real_loop_beyond_the_unroll_depth_limit(tmp_path):
    """The MSL103 example at 600 steps: unrolled, MindSpore 2.10 stops at the call-depth limit; the emitted
    ForiLoop(unroll=False) with a module-level named def compiles and computes the same as a NumPy loop."""
    example = rule_by_code("MSL103").INVALID[0]
    source = textwrap.dedent(example.code).replace("range(200)", "range(600)")
    fixed = _fix(source, Config())
    assert "unroll=False" in fixed and "lambda" not in fixed
    module = _import(fixed, tmp_path, "deep")
    x = np.full((2, 2), 0.01, dtype=np.float32)
    y = np.full((2, 2), -0.5, dtype=np.float32)
    out = module.func(ms.Tensor(x), ms.Tensor(y)).asnumpy()
    expected = x.copy()
    for _ in range(600):
        expected = x + x * y + expected
    np.testing.assert_allclose(out, expected, rtol=1e-4)


# -- gradients through the tuple-row rewrites (float inputs) ------------------------------------------------------
TUPLE_ROWS = ROOT / "fixtures" / "loops" / "per_sample_tuples.py"


def _grad_cases():
    source = TUPLE_ROWS.read_text(encoding="utf-8")
    for target in _verifiable_targets(source):
        yield pytest.param(source, target, directives_from_source(source, target)["inputs"], id=target)
    example = textwrap.dedent(rule_by_code("MSL101").INVALID[4].code)
    yield pytest.param(example, "triplet_margin", EXAMPLE_INPUTS[("MSL101", 4)], id="MSL101-invalid-4")


SEVERAL_LISTS = ROOT / "fixtures" / "loops" / "several_lists.py"
SUMMED_TERMS = ROOT / "fixtures" / "loops" / "summed_terms.py"
SEVERAL_LISTS_EXAMPLE = 7
SUMMED_TERMS_EXAMPLE = 8


def _fixture_and_example_cases(path, index: int, target: str):
    """Every target of a fixture with an inputs comment, then the rule page's example ``index``."""
    source = path.read_text(encoding="utf-8")
    for name in _verifiable_targets(source):
        yield pytest.param(source, name, directives_from_source(source, name)["inputs"], id=f"{path.stem}-{name}")
    example = textwrap.dedent(rule_by_code("MSL101").INVALID[index].code)
    yield pytest.param(example, target, "x=float32[6,3]", id=f"MSL101-invalid-{index}")


def _same_gradients(source: str, target: str, spec: str, tmp_path, label: str):
    """The gradients of the sum of all outputs with respect to every input, before and after the fix (Cells get
    the original's weights)."""
    fixed = _fix(source, Config())
    assert fixed != source
    specs = parse_spec(spec)
    values = generate(specs, seed=13)
    args = [ms.Tensor(values[s.name]) for s in specs]
    grads, cells = [], []
    for text, version in ((source, "orig"), (fixed, "fixed")):
        module = _import(text, tmp_path, f"{label}_{version}")
        fn, is_cell = _call(module, target, values)
        if is_cell:
            cells.append(fn)
            if len(cells) == 2:
                params_after = dict(cells[1].parameters_and_names())
                for name, param in cells[0].parameters_and_names():
                    params_after[name].set_data(ms.Tensor(param.asnumpy()))
        grads.append(_flatten(ms.grad(fn, grad_position=tuple(range(len(specs))))(*args)))
    assert_same(grads[0], grads[1], f"{target} gradients")
    return fixed


@pytest.mark.parametrize("source, target, spec",
                         list(_fixture_and_example_cases(SEVERAL_LISTS, SEVERAL_LISTS_EXAMPLE, "mean_and_spread")))
def test_several_lists_fix_keeps_gradients(source, target, spec, tmp_path):
    """Several lists stacked after one loop -> one vmap returning a tuple: gradients match too."""
    fixed = _same_gradients(source, target, spec, tmp_path, "several")
    assert "out_axes=(" in fixed


def _summed_cases():
    """The summed-terms fixture's targets (and the page example) whose fix is the map-and-sum one; the others get
    the Tensor counter, whose runs are ``test_fixture_fix_matches_the_original``'s."""
    for case in _fixture_and_example_cases(SUMMED_TERMS, SUMMED_TERMS_EXAMPLE, "total_variation_rows"):
        source, target, _spec = case.values
        if "sum(axis=0)" in _fix(source, Config()).split(f" {target}(")[-1].split("\n\n\n")[0]:
            yield case


@pytest.mark.parametrize("source, target, spec", list(_summed_cases()))
def test_summed_terms_fix_keeps_gradients(source, target, spec, tmp_path):
    """A sum of per-slice terms -> vmap + ``.sum(axis=0)`` (unsafe: another order of float additions): outputs
    (``test_fixture_fix_matches_the_original``, rtol 1e-5) and gradients match up to rounding."""
    _same_gradients(source, target, spec, tmp_path, "summed")


@pytest.mark.parametrize("source, target, spec", list(_grad_cases()))
def test_tuple_rows_fix_keeps_gradients(source, target, spec, tmp_path):
    """``rows = rows + (row.unsqueeze(0),)`` + ``ops.concat`` -> vmap: the gradients with respect to every
    float input match too (ms.grad of a non-scalar output: the gradient of the sum of the outputs)."""
    fixed = _fix(source, Config())
    assert fixed != source
    specs = parse_spec(spec)
    values = generate(specs, seed=11)
    args = [ms.Tensor(values[s.name]) for s in specs]
    floats = tuple(i for i, s in enumerate(specs) if str(values[s.name].dtype).startswith("float"))
    if not floats:
        pytest.skip("no float inputs")
    grads = []
    for text, label in ((source, "orig"), (fixed, "fixed")):
        module = _import(text, tmp_path, f"grad_{label}")
        fn, is_cell = _call(module, target, values)
        grads.append(_flatten(ms.grad(fn, grad_position=floats)(*args)))  # sensitivity: ones, i.e. d(sum)
    assert_same(grads[0], grads[1], f"{target} gradients")


MATMUL_LANES = '''
import mindspore as ms
from mindspore import ops


@ms.jit
def matrix_by_vector(a, b):
    return ms.vmap(lambda a_i, b_i: ops.matmul(a_i, b_i), in_axes=(0, 0))(a, b)


@ms.jit
def vector_by_matrix(b, c):
    return ms.vmap(lambda b_i, c_i: ops.matmul(b_i, c_i), in_axes=(0, 0))(b, c)
'''


def test_vmap_of_a_product_of_two_mapped_operands_with_a_1d_lane_is_wrong_in_2_10(tmp_path):
    """Why the vmap rewrite refuses matmul/@ of two mapped operands: with a 1-D lane, MindSpore 2.10 fails to
    compile (2-D x 1-D) or returns the wrong shape (1-D x 2-D: (6, 6, 3) where the loop gives (6, 3))."""
    module = _import(MATMUL_LANES, tmp_path, "matmul")
    a = ms.Tensor(np.ones((6, 5, 4), np.float32))
    b = ms.Tensor(np.ones((6, 4), np.float32))
    c = ms.Tensor(np.ones((6, 4, 3), np.float32))
    with pytest.raises((RuntimeError, ValueError)):
        module.matrix_by_vector(a, b)
    assert module.vector_by_matrix(b, c).shape != (6, 3)


def test_vmap_of_bce_with_logits_needs_both_weights_in_2_10():
    """Why the vmap rewrites refuse ``binary_cross_entropy_with_logits`` without weight and pos_weight: its vmap rule
    calls ``F.rank(weight)`` and fails to compile when they are None; with both given it maps correctly."""
    logits = ms.Tensor(np.linspace(-2, 2, 24, dtype=np.float32).reshape(6, 4))
    labels = ms.Tensor((np.arange(24).reshape(6, 4) % 2).astype(np.float32))
    ones = ms.Tensor(np.ones(4, np.float32))

    def unweighted(a, b):
        return ms.ops.binary_cross_entropy_with_logits(a, b)

    def weighted(a, b):
        return ms.ops.binary_cross_entropy_with_logits(a, b, ones, ones)

    with pytest.raises(TypeError, match="Rank"):
        ms.vmap(unweighted)(logits, labels)
    mapped = ms.vmap(weighted)(logits, labels)
    rows = [ms.ops.binary_cross_entropy_with_logits(logits[i], labels[i], ones, ones).asnumpy() for i in range(6)]
    np.testing.assert_allclose(mapped.asnumpy(), np.stack(rows), rtol=1e-6)


NUMBER_STATE = '''
import mindspore as ms


@ms.jit
def total_from_zero(x):
    total = 0
    i = ms.Tensor(0, ms.int32)
    while i < x.shape[0]:
        total += x[i].sum()
        i = i + 1
    return total
'''


def test_a_real_loop_cannot_carry_a_number_that_becomes_a_tensor_in_2_10(tmp_path):
    """Why the Tensor-counter rewrite refuses a carried value that enters the loop as a Python number."""
    module = _import(NUMBER_STATE, tmp_path, "number_state")
    with pytest.raises(TypeError, match="Type Join Failed"):
        module.total_from_zero(ms.Tensor(np.ones((4, 3), np.float32)))


# -- a sub-cell from another module of the project (fixtures/loops/pde_kernels/) ----------------------------------
PDE_KERNELS = ROOT / "fixtures" / "loops" / "pde_kernels"


def _import_package_versions(tmp_path):
    """The fixture package as written and with ``filters.py`` fixed (the fix sees the whole package), imported as
    two packages of their own: graph mode reads the source of what it compiles."""
    import importlib
    import shutil
    import sys

    source = (PDE_KERNELS / "filters.py").read_text(encoding="utf-8")
    outcome = fix_text(decode_source(str(PDE_KERNELS / "filters.py"), source.encode("utf-8")),
                       Config().with_overrides(select=CODES), path=str(PDE_KERNELS / "filters.py"))
    assert outcome.error is None, outcome.error
    fixed = outcome.fixed
    assert fixed.count("vmap(") == 2 and fixed.count("for idx in") == 2  # the look-alikes keep their loops
    again = fix_text(decode_source(str(PDE_KERNELS / "filters.py"), fixed.encode("utf-8")), Config().with_overrides(select=CODES),
                     path=str(PDE_KERNELS / "filters.py"))
    assert again.fixed == fixed  # idempotent
    modules = []
    for label, text in (("orig", source), ("fixed", fixed)):
        name = f"pde_kernels_{label}_{tmp_path.name}".replace("-", "_")
        shutil.copytree(PDE_KERNELS, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        (tmp_path / name / "filters.py").write_text(text, encoding="utf-8")
        sys.path.insert(0, str(tmp_path))
        try:
            modules.append(importlib.import_module(f"{name}.filters"))
        finally:
            sys.path.remove(str(tmp_path))
    return modules


def test_vmap_over_a_sub_cell_of_another_module_matches_the_loop(tmp_path):
    """PDE-Net's moment-to-kernel loop (a Cell imported from a sibling module, whose construct is followed and
    found pure) -> ``ms.vmap``: outputs and input gradients match, in a Cell's construct (GRAPH_MODE) and in a
    ``@jit`` function."""
    before, after = _import_package_versions(tmp_path)
    moment = ms.Tensor(np.random.RandomState(3).randn(6, 5, 5).astype(np.float32))
    cells = before.MomentFilters(), after.MomentFilters()
    for name, param in cells[0].parameters_and_names():
        dict(cells[1].parameters_and_names())[name].set_data(ms.Tensor(param.asnumpy()))
    assert_same(_flatten(cells[0](moment)), _flatten(cells[1](moment)), "MomentFilters")
    assert_same(_flatten(ms.grad(cells[0])(moment)), _flatten(ms.grad(cells[1])(moment)), "MomentFilters gradients")
    small = moment[:4]
    assert_same(_flatten(before.kernels_of(small)), _flatten(after.kernels_of(small)), "kernels_of")
    assert_same(_flatten(ms.grad(before.kernels_of)(small)), _flatten(ms.grad(after.kernels_of)(small)),
                "kernels_of gradients")


ATTENTION_ROWS = ROOT / "fixtures" / "loops" / "attention_rows.py"


def _jit_calling(cell):
    @ms.jit
    def call(t):
        return cell(t)
    return call


def test_attention_rows_fix_matches_the_loop_with_gradients_and_under_jit(tmp_path):
    """dgmr-like attention: query/key/value from 1x1 convolutions of x, a per-sample loop over a helper with two
    ops.bmm products -> ``ms.vmap`` over (query, key, value): outputs, input and weight gradients match in the
    Cell's construct (GRAPH_MODE) and through a ``@jit`` function calling the Cell."""
    source = ATTENTION_ROWS.read_text(encoding="utf-8")
    fixed = _fix(source, Config())
    assert "ms.vmap(" in fixed and "(query, key, value)" in fixed
    before, after = _import(source, tmp_path, "attn_orig"), _import(fixed, tmp_path, "attn_fixed")
    cells = before.LatentAttention(), after.LatentAttention()
    params_after = dict(cells[1].parameters_and_names())
    for name, param in cells[0].parameters_and_names():
        params_after[name].set_data(ms.Tensor(param.asnumpy()))
    x = ms.Tensor(np.random.RandomState(5).randn(3, 8, 4, 5).astype(np.float32))
    assert_same(_flatten(cells[0](x)), _flatten(cells[1](x)), "LatentAttention")
    grads = [_flatten(ms.grad(cell, grad_position=0, weights=cell.trainable_params())(x)) for cell in cells]
    assert_same(grads[0], grads[1], "LatentAttention gradients")
    jitted = [_jit_calling(cell) for cell in cells]
    assert_same(_flatten(jitted[0](x)), _flatten(jitted[1](x)), "LatentAttention under @jit")
