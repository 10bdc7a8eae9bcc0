"""Cross-file fingerprints carried over an edit that keeps every summary's shape (``ms_lint.analysis.carry``).

Each edit below is checked twice: the fingerprints a cached run stores after it equal those a fresh index works
out, and its findings equal ``--no-cache``'s. Edits that keep the shape must be carried (the index never works a
recipe out); edits that change it must not be.
"""
import glob
import json
import os

import pytest

from ms_lint.analysis.index import ProjectIndex
from ms_lint.config import Config

HELPERS = """\
from mindspore import ops


def gate(x):
    return 3


def scaled(x):
    return ops.relu(x) * 2
"""

BASE = """\
from mindspore import nn


class Base(nn.Cell):
    def __init__(self, steps=4):
        super().__init__()
        self.steps = steps
"""

NET = """\
from mindspore import ops

from .base import Base
from .helpers import gate, scaled


class Net(Base):
    def construct(self, x):
        if gate(x):
            x = x + 1
        for i in range(self.steps):
            x = scaled(x)
        return x
"""

MAIN = """\
import mindspore as ms

from pkg.net import Net

if __name__ == "__main__":
    ms.set_context(mode=ms.GRAPH_MODE)
    Net()(ms.Tensor([1.0]))
"""

# (file, old text, new text, carried?)
EDITS = {
    "comment appended": ("pkg/helpers.py", "return ops.relu(x) * 2\n", "return ops.relu(x) * 2\n# tuned\n", True),
    "line inserted in a body": ("pkg/helpers.py", "    return 3\n", "    y = x\n    return 3\n", True),
    "return kind changed, same shape": ("pkg/helpers.py", "    return 3\n", "    return x\n", True),
    "line inserted above a class": ("pkg/base.py", "from mindspore import nn\n", "from mindspore import nn\n\n", True),
    "call added": ("pkg/helpers.py", "    return 3\n", "    return ops.abs(x)\n", False),
    "default changed": ("pkg/base.py", "steps=4", "steps=40", False),
    "base class changed": ("pkg/base.py", "class Base(nn.Cell):", "class Base(object):", False),
    "import added": ("pkg/net.py", "from mindspore import ops\n", "from mindspore import nn, ops\n", False),
}


@pytest.fixture
def package(write):
    write("pkg/__init__.py", "")
    write("pkg/helpers.py", HELPERS)
    write("pkg/base.py", BASE)
    write("pkg/net.py", NET)
    write("main.py", MAIN)
    return write


def check_json(run_cli, *args):
    code, out, err = run_cli("check", "--format", "json", "--exit-zero", *args)
    assert "Traceback" not in err, err
    return json.loads(out)


def stored_fingerprints(tmp_path):
    [found] = glob.glob(str(tmp_path / ".ms_lint_cache" / "*" / "fingerprints-*.json"))
    with open(found, encoding="utf-8") as handle:
        return json.load(handle)["fingerprints"]


def fresh_fingerprints(tmp_path):
    files = [os.path.join(folder, name) for folder, _, names in os.walk(tmp_path) if ".ms_lint_cache" not in folder
             for name in names if name.endswith(".py")]
    index = ProjectIndex.for_files(files, **Config().index_options())
    return {os.path.abspath(path): index.fingerprint_for(path) for path in files}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_fingerprints_after_an_edit_are_those_a_fresh_index_gives(run_cli, package, tmp_path, monkeypatch, name):
    path, old, new, carried = EDITS[name]
    check_json(run_cli, ".")
    text = (tmp_path / path).read_text(encoding="utf-8")
    assert old in text
    package(path, text.replace(old, new))
    worked_out = []
    recipe = ProjectIndex.fingerprint_recipe

    def counted(self, file):
        worked_out.append(file)
        return recipe(self, file)

    monkeypatch.setattr(ProjectIndex, "fingerprint_recipe", counted)
    after = check_json(run_cli, ".")
    assert (worked_out == []) is carried, worked_out
    monkeypatch.setattr(ProjectIndex, "fingerprint_recipe", recipe)
    assert stored_fingerprints(tmp_path) == fresh_fingerprints(tmp_path)
    assert after == check_json(run_cli, "--no-cache", ".")


def test_a_carried_edit_reaches_the_files_that_read_the_module(run_cli, package, tmp_path):
    """``gate`` returns a Python int, then (same shape) its Tensor argument: ``if gate(x)`` in another module
    becomes a Tensor branch. The fingerprint of ``net.py`` names ``helpers.py``'s digest, so it is checked again."""
    before = check_json(run_cli, ".")
    assert [(f["path"], f["code"]) for f in before] == [("main.py", "MSL301")]
    package("pkg/helpers.py", HELPERS.replace("    return 3\n", "    return x\n"))
    after = check_json(run_cli, ".")
    assert [(f["path"], f["line"]) for f in after if f["code"] == "MSL201"] == [("pkg/net.py", 9)]
    package("pkg/helpers.py", HELPERS)
    assert check_json(run_cli, ".") == before


def test_carried_runs_keep_the_stamps_of_modules_outside_the_project(run_cli, write, tmp_path, monkeypatch):
    """A base class in a sibling package is read when fingerprints are worked out, not when they are carried: a
    carried run must still store its stamp, so that the next edit is carried too, and changing the base is seen
    (and not carried over)."""
    write("pkg_a/__init__.py", "")
    write("pkg_a/net.py", "from mindspore import ops\nfrom pkg_b.base import Base\n\n\nclass Net(Base):\n"
          "    def construct(self, x):\n        out = []\n        for i in range(x.shape[0]):\n"
          "            out.append(ops.relu(x[i]) * 2)\n        return ops.stack(out)\n")
    write("pkg_b/__init__.py", "")
    write("pkg_b/base.py", "from mindspore import nn\n\n\nclass Base(nn.Cell):\n    pass\n")
    assert [f["code"] for f in check_json(run_cli, "pkg_a")] == ["MSL101"]
    worked_out = []
    recipe = ProjectIndex.fingerprint_recipe
    monkeypatch.setattr(ProjectIndex, "fingerprint_recipe", lambda self, path: worked_out.append(path) or recipe(
        self, path))
    net = tmp_path / "pkg_a" / "net.py"
    for edit in ("# edited\n", "# and again\n"):
        write("pkg_a/net.py", net.read_text() + edit)
        assert [f["code"] for f in check_json(run_cli, "pkg_a")] == ["MSL101"]
        assert worked_out == []  # carried, both times
    write("pkg_b/base.py", "class Base:\n    pass  # a plain class now, not a Cell\n")
    write("pkg_a/net.py", net.read_text() + "# once more\n")
    assert check_json(run_cli, "pkg_a") == []
    assert worked_out  # the base changed: worked out again
    assert check_json(run_cli, "--no-cache", "pkg_a") == []


def stamps_file(tmp_path):
    [found] = glob.glob(str(tmp_path / ".ms_lint_cache" / "*" / "stamps-*.json"))
    return found


def test_a_run_after_a_touch_keeps_the_recipes(run_cli, package, tmp_path, monkeypatch):
    """A touched file (same bytes) saves the fingerprints under the new state: with their recipes, so the next
    edit that keeps the shape is still carried."""
    check_json(run_cli, ".")
    base = tmp_path / "pkg" / "base.py"
    stat = base.stat()
    os.utime(base, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    check_json(run_cli, ".")
    with open(stamps_file(tmp_path), encoding="utf-8") as handle:
        assert json.load(handle)["recipes"]
    monkeypatch.setattr(ProjectIndex, "fingerprint_recipe", lambda self, path: pytest.fail("worked out again"))
    package("pkg/helpers.py", HELPERS + "# edited\n")
    check_json(run_cli, ".")


@pytest.mark.parametrize("damage", ["a path that is not a string", "an index out of range", "recipes not a dict"])
def test_damaged_recipes_are_ignored(run_cli, package, tmp_path, damage):
    check_json(run_cli, ".")
    with open(stamps_file(tmp_path), encoding="utf-8") as handle:
        data = json.load(handle)
    if damage == "a path that is not a string":
        data["paths"][0] = ["not", "a", "path"]
    elif damage == "an index out of range":
        first = next(iter(data["recipes"]))
        data["recipes"][first][1] = [len(data["paths"]) + 5]
    else:
        data["recipes"] = ["x"]
    with open(stamps_file(tmp_path), "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    package("pkg/helpers.py", HELPERS.replace("    return 3\n", "    return x\n"))
    assert check_json(run_cli, ".") == check_json(run_cli, "--no-cache", ".")
