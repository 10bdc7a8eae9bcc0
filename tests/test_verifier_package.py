"""`ms-lint verify` on code inside its package, with real MindSpore (no mocks): relative and absolute imports of
the package, an ``__init__.py`` that imports its siblings, a config class the Cell's ``__init__`` needs
(``--setup``), ``--pythonpath``, a hand rewrite ``--against HEAD`` and ``--rewritten OTHER.py``, and the error
paths (one ``ms-lint: error:`` line, exit 2, no traceback, nothing left in the package).

Each test builds its own small package in a tmp dir and runs one process per version (``--repeat 1``).
"""

import json
import os
import subprocess
import textwrap

import pytest

from ms_lint.verifier.location import COPY_PREFIX, VersionCopies, locate
from verify_support import listing, one_error_line, verify

INIT = "from .layers import scale\nfrom .model import Net, rows\n"
LAYERS = textwrap.dedent(
    """
    from mindspore import ops

    SCALE = 2.0


    def scale(x):
        return ops.relu(x) * SCALE
    """
)
CONFIGURATION = textwrap.dedent(
    """
    class TinyConfig:
        def __init__(self, hidden_size=4, factor=2.0):
            self.hidden_size = hidden_size
            self.factor = factor
    """
)
MODEL = textwrap.dedent(
    """
    import mindspore as ms
    from mindspore import nn, ops

    from mypkg.configuration import TinyConfig

    from .layers import SCALE, scale


    class Net(nn.Cell):
        def __init__(self, config: TinyConfig):
            super().__init__()
            self.factor = config.factor

        def construct(self, x):
            out = []
            for i in range(x.shape[0]):
                out.append(ops.tanh(x[i]) * self.factor)
            return scale(ops.stack(out))


    @ms.jit
    def rows(x):
        out = []
        for i in range(x.shape[0]):
            out.append(ops.tanh(x[i]) * SCALE)
        return scale(ops.stack(out))
    """
)
ROWS_LOOP = """    out = []
    for i in range(x.shape[0]):
        out.append(ops.tanh(x[i]) * SCALE)
    return scale(ops.stack(out))
"""
assert ROWS_LOOP in MODEL
ROWS_BY_HAND = MODEL.replace(ROWS_LOOP, "    return scale(ops.tanh(x) * SCALE)\n")


# A rewrite whose outputs match is "verified" or a "tradeoff" (exit 0), or "slower" (exit 1) when a loaded machine
# measured its compile time above the original's: what these tests check is that it ran in place and matched.
MATCHED = {"verified": 0, "tradeoff": 0, "slower": 1}


def checked_in_place(code, verification):
    assert verification["verdict"] in MATCHED, verification["message"]
    assert verification["outputs_match"] is True
    assert code == MATCHED[verification["verdict"]]


def make_package(tmp_path, model=MODEL):
    """proj/mypkg/{__init__,layers,configuration,model}.py; returns (proj, model path)."""
    pkg = tmp_path / "proj" / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(INIT)
    (pkg / "layers.py").write_text(LAYERS)
    (pkg / "configuration.py").write_text(CONFIGURATION)
    (pkg / "model.py").write_text(model)
    return tmp_path / "proj", pkg / "model.py"


# -- no MindSpore needed -----------------------------------------------------------------------------------------


def test_locate_walks_up_through_init_files(tmp_path):
    proj, model = make_package(tmp_path)
    (proj / "mypkg" / "sub").mkdir()
    (proj / "mypkg" / "sub" / "__init__.py").write_text("")
    (proj / "mypkg" / "sub" / "deep.py").write_text("")
    (proj / "script.py").write_text("")
    loc = locate(str(model))
    assert (loc.root, loc.module, loc.package) == (str(proj), "mypkg.model", "mypkg")
    deep = locate(str(proj / "mypkg" / "sub" / "deep.py"))
    assert (deep.module, deep.package) == ("mypkg.sub.deep", "mypkg.sub")
    init = locate(str(proj / "mypkg" / "__init__.py"))
    assert (init.module, init.package) == ("mypkg", "mypkg")
    script = locate(str(proj / "script.py"))
    assert (script.root, script.module, script.package) == (str(proj), "script", "")


def test_copies_live_in_the_package_and_are_removed(tmp_path):
    proj, model = make_package(tmp_path)
    copies = VersionCopies()
    keys = copies.place(locate(str(model)), "rewritten", "x = 1\n")
    assert os.path.dirname(keys["module_file"]) == str(proj / "mypkg")
    assert keys["module_name"].startswith(f"mypkg.{COPY_PREFIX}rewritten_")
    copies.cleanup()
    assert not any(COPY_PREFIX in name for name in os.listdir(proj / "mypkg"))


def test_unknown_function_lists_the_graph_functions(tmp_path, capsys):
    _, model = make_package(tmp_path)
    code, out = verify(capsys, model, "--function", "Nett")
    assert code == 2
    line = one_error_line(out)
    assert "--function Nett: no such function or class" in line and "graph functions in this file: Net, rows" in line


@pytest.mark.parametrize("argv, fragment", [
    (["--setup", "x = (", "--function", "rows"], "--setup: line 1"),
    (["--setup", "x = 1", "--setup-file", "f.py"], "not both"),
    (["--setup-file", "/nonexistent/setup.py"], "cannot read it"),
    (["--pythonpath", "/nonexistent/dir"], "not a folder"),
    (["--against", "HEAD", "--rewritten", "x.py"], "not both"),
    (["--against", "HEAD"], "not in a git repository"),
    (["--rewritten", "/nonexistent/other.py"], "--rewritten /nonexistent/other.py"),
])
def test_request_errors_are_one_line(tmp_path, capsys, argv, fragment):
    _, model = make_package(tmp_path)
    before = listing(tmp_path)
    code, out = verify(capsys, model, *argv)
    assert code == 2
    assert fragment in one_error_line(out)
    assert listing(tmp_path) == before


# -- real MindSpore ------------------------------------------------------------------------------------------------

mindspore_test = pytest.mark.mindspore


@mindspore_test
def test_automatic_fix_verified_in_place_inside_its_package(tmp_path, capsys, mindspore):
    proj, model = make_package(tmp_path)
    before = listing(proj)
    code, out = verify(capsys, model, "--function", "rows", "--inputs", "x=float32[8,2]", "--repeat", "1",
                       "--format", "json")
    data = json.loads(out.out)
    assert len(data) == 1 and data[0]["code"] == "MSL101", data
    checked_in_place(code, data[0])
    assert listing(proj) == before  # the rewritten copy is gone, no __pycache__


@mindspore_test
def test_missing_dependency_is_one_line_naming_it(tmp_path, capsys, mindspore):
    proj, model = make_package(tmp_path)
    (proj / "mypkg" / "layers.py").write_text(LAYERS + "import nosuch_dep_pkg\n")
    before = listing(proj)
    code, out = verify(capsys, model, "--function", "rows", "--inputs", "x=float32[8,2]", "--repeat", "1")
    assert code == 2
    line = one_error_line(out)
    assert "cannot import mypkg.model: no module named 'nosuch_dep_pkg'" in line
    assert "layers.py:" in line and "pip install nosuch_dep_pkg" in line and "--pythonpath" in line
    assert out.out == ""
    assert listing(proj) == before


@mindspore_test
def test_pythonpath_for_a_script_outside_the_package(tmp_path, capsys, mindspore):
    proj = tmp_path / "proj"
    (proj / "helpers").mkdir(parents=True)
    (proj / "helpers" / "__init__.py").write_text("")
    (proj / "helpers" / "consts.py").write_text("SCALE = 3.0\n")
    (proj / "scripts").mkdir()
    script = proj / "scripts" / "run.py"
    script.write_text(textwrap.dedent(
        """
        import mindspore as ms
        from mindspore import ops

        from helpers.consts import SCALE


        # ms-lint: inputs=x=float32[6,2]
        @ms.jit
        def rows(x):
            out = []
            for i in range(x.shape[0]):
                out.append(ops.tanh(x[i]) * SCALE)
            return ops.stack(out)
        """
    ))
    code, out = verify(capsys, script, "--repeat", "1")
    assert code == 2
    assert "no module named 'helpers'" in one_error_line(out)
    code, out = verify(capsys, script, "--repeat", "1", "--pythonpath", proj, "--format", "json")
    [data] = json.loads(out.out)
    checked_in_place(code, data)


@mindspore_test
def test_cell_built_with_setup_and_a_config_class(tmp_path, capsys, mindspore):
    proj, model = make_package(tmp_path)
    # without --init: the error names the parameter and shows a template with the config import
    code, out = verify(capsys, model, "--function", "Net", "--inputs", "x=float32[8,2]", "--repeat", "1")
    assert code == 2
    line = one_error_line(out)
    assert "Net.__init__ needs config" in line and '--init "Net(config=config)"' in line
    assert "from mypkg.configuration import TinyConfig; config = TinyConfig(...)" in line
    # with --setup (a relative import run in the module's namespace) and --init
    code, out = verify(capsys, model, "--function", "Net", "--inputs", "x=float32[8,2]", "--repeat", "1",
                       "--setup", "from .configuration import TinyConfig; cfg = TinyConfig(factor=3.0)",
                       "--init", "Net(cfg)", "--format", "json")
    data = json.loads(out.out)
    assert data[0]["verdict"] in ("verified", "tradeoff", "slower"), data[0]["message"]
    assert data[0]["outputs_match"] is True and data[0]["init"] == "Net(cfg)"
    # --setup-file, failing: one line naming the file and the line
    setup = tmp_path / "setup_ms.py"
    setup.write_text("from .configuration import TinyConfig\ncfg = TinyConfig(nope=1)\n")
    code, out = verify(capsys, model, "--function", "Net", "--inputs", "x=float32[8,2]", "--repeat", "1",
                       "--setup-file", setup, "--init", "Net(cfg)")
    assert code == 2
    line = one_error_line(out)
    assert f"{setup} failed (line 2): TypeError" in line and "nope" in line


def _git(cwd, *argv):
    subprocess.run(["git", *argv], cwd=cwd, check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                            GIT_COMMITTER_EMAIL="t@t"))


@mindspore_test
def test_hand_rewrite_against_head_and_rewritten_file(tmp_path, capsys, mindspore):
    proj, model = make_package(tmp_path)
    _git(proj, "init", "-q")
    _git(proj, "add", ".")
    _git(proj, "commit", "-q", "-m", "base")
    # nothing changed yet: a clear error
    code, out = verify(capsys, model, "--against")
    assert code == 2 and "has no changes against HEAD" in one_error_line(out)
    # the rewrite by hand, in the working tree; only `rows` changed, so it is the one verified
    model.write_text(ROWS_BY_HAND)
    before = listing(proj)
    code, out = verify(capsys, model, "--against", "--inputs", "x=float32[8,2]", "--repeat", "1", "--format", "json")
    data = json.loads(out.out)
    assert [d["function"] for d in data] == ["rows"]
    checked_in_place(code, data[0])
    assert listing(proj) == before  # the HEAD copy is gone
    # a wrong hand rewrite is a mismatch (exit 1)
    model.write_text(ROWS_BY_HAND.replace("ops.tanh(x) * SCALE", "ops.tanh(x) * SCALE + 1"))
    code, out = verify(capsys, model, "--against", "HEAD", "--function", "rows", "--inputs", "x=float32[8,2]",
                       "--repeat", "1")
    assert code == 1 and "MISMATCH" in out.out
    # a bad revision
    code, out = verify(capsys, model, "--against", "nosuchrev", "--function", "rows")
    assert code == 2 and "cannot read" in one_error_line(out)
    # --rewritten: the other file is imported in the package (its relative imports resolve)
    _git(proj, "checkout", "-q", "--", ".")
    other = tmp_path / "rows_by_hand.py"
    other.write_text(ROWS_BY_HAND)
    code, out = verify(capsys, model, "--rewritten", other, "--function", "rows", "--inputs", "x=float32[8,2]",
                       "--repeat", "1", "--format", "json")
    data = json.loads(out.out)
    checked_in_place(code, data[0])
    code, out = verify(capsys, model, "--rewritten", other, "--function", "Nope")
    assert code == 2 and "--function Nope" in one_error_line(out)


OPTIM = textwrap.dedent(
    """
    import mindspore as ms
    from mindspore import ops

    from .layers import SCALE


    @ms.jit
    def clip_all(grads, bias, n):
        out = []
        for g in grads:
            out.append(ops.clip_by_value(g * SCALE, -1.0, 1.0))
        if bias is None:
            return tuple(out), n * 2
        return tuple(out), bias
    """
)


@mindspore_test
def test_hypermap_rewrite_over_a_tuple_of_60_gradients_with_none_and_an_int(tmp_path, capsys, mindspore):
    proj, _ = make_package(tmp_path)
    optim = proj / "mypkg" / "optim.py"
    optim.write_text(OPTIM)
    # without inputs: the suggestion makes `grads` a tuple (it is iterated)
    code, out = verify(capsys, optim, "--repeat", "1")
    assert code == 2 and 'grads=tuple(4*float32[4])' in one_error_line(out)
    code, out = verify(capsys, optim, "--repeat", "1", "--inputs", "grads=tuple(60*float32[8,4]); bias=None; n=3",
                       "--format", "json")
    data = json.loads(out.out)
    assert len(data) == 1 and data[0]["code"] == "MSL102"
    checked_in_place(code, data[0])
    assert data[0]["inputs"] == "grads=tuple(60*float32[8,4]); bias=None; n=int:3"
