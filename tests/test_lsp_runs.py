"""The language server summarizes and compiles only the runs of top-level statements an edit changed
(``ms_lint.lsp.runs``): the summary equals ``summarize_file``'s, in order and lines included, and the compile
verdict (MSL900) equals the whole module's, on every text of a series of edits."""
import random
from pathlib import Path

import pytest

import ms_lint.engine as engine
import ms_lint.lsp.runs as runs_module
from ms_lint.analysis.index import summarize_file
from ms_lint.engine import compile_problem
from ms_lint.lsp.runs import DocumentRuns
from corpus_support import fixture_sources

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*fixture_sources(), *(ROOT / "examples").rglob("*.py")])

MODEL = '''import mindspore as ms
from mindspore import nn, ops

SCALE = 2


class Block(nn.Cell):
    def __init__(self, channels=4):
        super().__init__()
        self.dense = nn.Dense(channels, channels)

    def construct(self, x):
        return self.dense(x) * SCALE


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def construct(self, x):
        for i in range(x.shape[0]):
            x = self.block(x)
        return x


def helper(a, b=3):
    return a + b
'''


def same(found, expected):
    """Equal, dicts in the same order (the index compares their keys' order: ``summary.same_shape``)."""
    return found == expected and repr(found) == repr(expected)


def edited(lines, rng):
    """One random edit of a list of lines: a line doubled, dropped, swapped with another, an empty line added,
    or its digits and names changed."""
    lines = list(lines)
    if not lines:
        return ["x = 1\n"]
    i = rng.randrange(len(lines))
    kind = rng.randrange(5)
    if kind == 0:
        lines.insert(i, lines[i])
    elif kind == 1:
        del lines[i]
    elif kind == 2:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 3:
        lines.insert(i, "\n")
    else:
        lines[i] = lines[i].replace("1", "2").replace("x", "y")
    return lines


def test_summaries_equal_summarize_file_through_random_edits_of_every_fixture():
    rng = random.Random(7)
    compared = 0
    for path in SOURCES:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        runs = DocumentRuns()
        for _ in range(6):
            lines = edited(lines, rng)
            raw = "".join(lines).encode("utf-8")
            assert same(runs.summary(str(path), raw), summarize_file(str(path), raw)), path
            compared += 1
    assert compared > 300


def test_an_edit_inside_a_function_parses_only_its_run(monkeypatch, tmp_path):
    path = tmp_path / "model.py"
    runs = DocumentRuns()
    parsed = []
    real = runs_module.summarize_run
    monkeypatch.setattr(runs_module, "summarize_run", lambda tree, *a: parsed.append(tree) or real(tree, *a))
    first = runs.summary(str(path), MODEL.encode())
    assert len(parsed) == 4  # the imports and constant, Block, Net, helper
    parsed.clear()
    text = MODEL.replace("            x = self.block(x)\n", "            x = self.block(x)\n            y = abs(x)\n")
    found = runs.summary(str(path), text.encode())
    assert len(parsed) == 1 and parsed[0].body[0].name == "Net"
    assert same(found, summarize_file(str(path), text.encode()))
    assert found.functions["helper"].line == 28  # moved down by the line added above it
    assert "abs" in found.classes["Net"].methods["construct"].calls
    # a run left in place is the same objects (``same_shape`` passes over them), a moved one is copied
    assert found.classes["Block"] is first.classes["Block"]
    assert found.functions["helper"] is not first.functions["helper"]


def test_a_name_bound_in_two_runs_is_no_constant(tmp_path):
    path = tmp_path / "model.py"
    runs = DocumentRuns()
    assert runs.summary(str(path), MODEL.encode()).constants == {"SCALE": 2}
    text = MODEL + "\n\nSCALE = 3\n"  # the second binding is in helper's run
    found = runs.summary(str(path), text.encode())
    assert found.constants == {} and same(found, summarize_file(str(path), text.encode()))


def test_a_class_defined_again_in_a_later_run_keeps_the_first(tmp_path):
    path = tmp_path / "model.py"
    text = MODEL + "\n\nclass Block:\n    def other(self):\n        pass\n"
    found = DocumentRuns().summary(str(path), text.encode())
    assert list(found.classes["Block"].methods) == ["__init__", "construct"]
    assert [d.qualname for d in found.definitions][-1] == "Block.other"
    assert same(found, summarize_file(str(path), text.encode()))


def test_jit_written_somewhere_reads_every_runs_headers_again(tmp_path):
    # a text without ``jit`` skips the calls in top-level headers; once ``jit`` is written, every run is read again
    path = tmp_path / "model.py"
    runs = DocumentRuns()
    text = MODEL.replace("def helper(a, b=3):", "def helper(a, b=make(step)):")
    assert runs.summary(str(path), text.encode()).jit_arguments == ()
    text += "\n\ncompiled = ms.jit(helper)\n"
    found = runs.summary(str(path), text.encode())
    assert found.jit_arguments == ("helper",)
    assert same(found, summarize_file(str(path), text.encode()))


@pytest.mark.parametrize("text", [
    MODEL.replace("    return a + b\n", "    return a +\n"),  # a syntax error in the last run
    MODEL.replace("class Net(nn.Cell):", "class Net(nn.Cell:"),  # a bracket left open across a cut
    MODEL.replace('SCALE = 2\n', 'SCALE = """\n') + '"""\n',  # a string over every cut
    "\ufeff" + MODEL,  # a byte order mark
    MODEL.replace("\n", "\r\n"),
    MODEL + "\n\nif ms.get_context('mode') != ms.PYNATIVE_MODE:\n    raise RuntimeError('eager only')\n",
])
def test_texts_the_runs_cannot_decide_alone_get_the_whole_modules_summary(text, tmp_path):
    path = tmp_path / "model.py"
    runs = DocumentRuns()
    runs.summary(str(path), MODEL.encode())
    raw = text.encode("utf-8")
    assert same(runs.summary(str(path), raw), summarize_file(str(path), raw))


def test_the_compiler_sees_only_the_runs_an_edit_changed(monkeypatch):
    runs = DocumentRuns()
    compiled = []
    real = engine.python_compile
    monkeypatch.setattr(engine, "python_compile", lambda text, *a: compiled.append(text) or real(text, *a))
    assert compile_problem(MODEL, "m.py", runs) is None
    assert len(compiled) == 4
    compiled.clear()
    text = MODEL.replace("    return a + b\n", "    return a - b\n")
    assert compile_problem(text, "m.py", runs) is None
    assert len(compiled) == 1 and compiled[0].strip().startswith("def helper")
    compiled.clear()
    broken = MODEL.replace("    return a + b\n", "    return a - b\nreturn 2\n")
    found = compile_problem(broken, "m.py", runs)
    assert found is not None and found.line == 29  # the run fails: the whole module gives the error
    assert compiled[-1] == broken


def test_compile_verdicts_equal_the_whole_modules_through_random_edits():
    rng = random.Random(11)
    compared = 0
    for path in SOURCES[::3]:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        runs = DocumentRuns()
        for _ in range(8):
            lines = edited(lines, rng)
            text = "".join(lines)
            expected = compile_problem(text, str(path))
            found = compile_problem(text, str(path), runs)
            assert (found.message, found.line, found.column) == (expected.message, expected.line, expected.column) \
                if expected else found is None, path
            compared += 1
    assert compared > 100
