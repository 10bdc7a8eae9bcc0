"""The language server's cross-module contexts: questions about an open document are answered from its buffer."""
import textwrap

import pytest

from ms_lint.analysis import project
from ms_lint.lsp.documents import Checker

BLOCKS = textwrap.dedent("""\
    from mindspore import nn


    class Block(nn.Cell):
        def construct(self, x, step):
            if step > 10:
                x = x + 1
            return x
    """)


def _holder(name: str, source: str, held: str, argument: str = "step") -> str:
    """A Cell ``name`` holding ``source``'s Cell ``held`` and calling it with ``argument`` for its ``step``."""
    return textwrap.dedent(f"""\
        from mindspore import nn

        from {source} import {held}


        class {name}(nn.Cell):
            def __init__(self):
                super().__init__()
                self.block = {held}()

            def construct(self, x, step):
                return self.block(x, {argument})
        """)


NET_ON_DISK = _holder("Net", ".blocks", "Block", "3")
NET_BUFFER = _holder("Net", ".blocks", "Block")


def _codes(checked):
    return [(f.code, f.line) for f in checked.findings]


def _package(tmp_path, net_on_disk):
    """A configured project: ``pkg/blocks.py`` (``BLOCKS``) and ``pkg/net.py`` holding ``net_on_disk``."""
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n", encoding="utf-8")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "blocks.py").write_text(BLOCKS, encoding="utf-8")
    (package / "net.py").write_text(net_on_disk, encoding="utf-8")
    return package


def test_a_full_context_store_does_not_drop_the_open_buffers(tmp_path, monkeypatch):
    """``Block.construct``'s ``step`` is a Tensor only in the unsaved buffer of ``net.py`` (on disk it gets 3). When
    the store of module contexts is full as ``blocks.py`` is checked, its analysis taking the slot seeded for its
    own buffer must not clear the seeded buffers (the question about ``net.py`` then read the file on disk)."""
    package = _package(tmp_path, NET_ON_DISK)
    checker = Checker()
    checker.check(str(package / "net.py"), NET_BUFFER)
    # every slot but the one blocks.py's buffer is about to be seeded into is taken
    monkeypatch.setattr(project, "_MAX_CONTEXTS", len(project._CONTEXTS) + 1)
    checked = checker.check(str(package / "blocks.py"), BLOCKS)
    assert _codes(checked) == [("MSL201", 6)]
    # the finding comes from the buffer: once it is closed, the file on disk gives none
    checker.close(str(package / "net.py"))
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == []


def test_an_open_document_that_does_not_parse_does_not_break_the_others(tmp_path):
    """A half-typed edit (an unclosed parenthesis) in ``net.py``: checking ``blocks.py`` asks about ``net.py``'s
    buffer, which cannot be parsed; it must get what a file that does not parse gives (no context), not an
    internal error (MSL900 on blocks.py)."""
    package = _package(tmp_path, NET_BUFFER)
    checker = Checker()
    assert _codes(checker.check(str(package / "net.py"), NET_BUFFER)) == []
    broken = checker.check(str(package / "net.py"), NET_BUFFER.replace("self.block(x, step)", "self.block(x, step"))
    assert [code for code, _ in _codes(broken)] == ["MSL900"]  # the syntax error, reported on net.py itself
    # what ``ms-lint check`` gives with net.py unparseable on disk: no call site seen, ``step`` a Tensor parameter
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == [("MSL201", 6)]


def test_fix_all_on_one_document_leaves_the_others_reading_its_buffer(tmp_path):
    """``fixed()`` analyzes the fixed text under the document's path and then gives the index its buffer back; the
    other documents' code actions must still read that buffer (``step`` is a Tensor only there), not the file."""
    flagged = "        if x.sum() > 0:\n            x = x * 2\n"
    on_disk = NET_ON_DISK.replace("        return self.block(x, 3)\n", flagged + "        return self.block(x, 3)\n")
    package = _package(tmp_path, on_disk)
    buffer = on_disk.replace("self.block(x, 3)", "self.block(x, step)")
    checker = Checker()
    checker.check(str(package / "net.py"), buffer)
    blocks = checker.check(str(package / "blocks.py"), BLOCKS)
    assert _codes(blocks) == [("MSL201", 6)]
    net = checker.check(str(package / "net.py"), buffer)
    assert net.fixed(True) != buffer  # net.py's own `if` gets a fix
    variants = blocks.variants()
    assert [finding.code for finding, _ in variants] == ["MSL201"]
    assert "ops.where" in blocks.fixed(True)


TOP = textwrap.dedent("""\
    from mindspore import nn

    from .net import Net


    class Top(nn.Cell):
        def __init__(self):
            super().__init__()
            self.net = Net()

        def construct(self, x, step):
            count = 3
            return self.net(x, count)
    """)


@pytest.mark.parametrize("edit", [("count = 3", "count = step"), ("self.net(x, count)", "self.net(x, step)")],
                         ids=["summary-kept", "summary-changed"])
def test_an_edit_reaches_the_contexts_built_from_the_old_text(tmp_path, edit):
    """``Block.construct``'s ``step`` comes from ``Net.construct``'s, which comes from ``Top``'s call: 3 on disk,
    the Tensor ``step`` after an edit of the open ``top.py`` (inside ``construct``: the index's summary of the module
    keeps its shape; or in the call, which the summary records). ``net.py``'s context, built when ``blocks.py`` was
    first checked, worked out its ``step`` from ``top.py``'s old text: the edit must reach it too."""
    package = _package(tmp_path, NET_ON_DISK.replace("self.block(x, 3)", "self.block(x, step)"))
    (package / "top.py").write_text(TOP, encoding="utf-8")
    checker = Checker()
    checker.check(str(package / "top.py"), TOP)
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == []
    checker.check(str(package / "top.py"), TOP.replace(*edit))
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == [("MSL201", 6)]
    # and back: the finding goes with the edit that made it
    checker.check(str(package / "top.py"), TOP)
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == []


def test_closing_a_document_that_does_not_parse_gives_questions_the_file_back(tmp_path):
    """A half-typed buffer of ``net.py`` answers questions with no context; once it is closed unsaved, the file on
    disk (which parses, and passes 3) answers them again: no finding in ``blocks.py``."""
    package = _package(tmp_path, NET_ON_DISK)
    checker = Checker()
    checker.check(str(package / "net.py"), NET_ON_DISK)
    checker.check(str(package / "net.py"), NET_ON_DISK.replace("self.block(x, 3)", "self.block(x, 3"))
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == [("MSL201", 6)]  # no context for net.py
    checker.close(str(package / "net.py"))
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == []


TOP_PASSING_STEP = TOP.replace("self.net(x, count)", "self.net(x, step)")


def test_closing_a_reshaped_document_leaves_the_other_buffers_answering(tmp_path):
    """Closing ``top.py`` unsaved, whose buffer had a new function (another summary: every context of the index is
    dropped), must leave ``net.py``'s buffer answering ``blocks.py``'s code actions (``step`` a Tensor only there)."""
    package = _package(tmp_path, NET_ON_DISK)
    (package / "top.py").write_text(TOP_PASSING_STEP, encoding="utf-8")
    checker = Checker()
    checker.check(str(package / "net.py"), NET_BUFFER)
    checker.check(str(package / "top.py"), TOP_PASSING_STEP + "\n\ndef helper():\n    return 1\n")
    blocks = checker.check(str(package / "blocks.py"), BLOCKS)
    assert _codes(blocks) == [("MSL201", 6)]
    checker.close(str(package / "top.py"))
    assert [finding.code for finding, _ in blocks.variants()] == ["MSL201"]


def test_fix_all_that_reshapes_a_document_leaves_the_other_buffers_answering(tmp_path):
    """``fixed()`` on ``top.py`` analyzes a text of another summary under its path, then gives its buffer back:
    ``net.py``'s buffer, not its file, must still answer ``blocks.py``'s code actions."""
    package = _package(tmp_path, NET_ON_DISK)
    flagged = "        if x.sum() > 0:\n            x = x * 2\n"
    top = TOP_PASSING_STEP.replace("        count = 3\n", flagged + "        count = 3\n")
    (package / "top.py").write_text(top, encoding="utf-8")
    checker = Checker()
    checker.check(str(package / "net.py"), NET_BUFFER)
    blocks = checker.check(str(package / "blocks.py"), BLOCKS)
    assert checker.check(str(package / "top.py"), top).fixed(True) != top
    assert [finding.code for finding, _ in blocks.variants()] == ["MSL201"]


def test_an_edit_reaches_contexts_that_asked_an_earlier_occupant_of_a_slot(tmp_path):
    """``Block`` <- ``Mid`` <- ``Net`` <- ``Top``: opening ``net.py`` (its file's text) seeds its slot over the
    context built from the file, which had worked ``step`` out from ``top.py``; the edit of ``top.py`` must still
    reach ``mid.py``'s context, which asked that earlier occupant."""
    package = _package(tmp_path, _holder("Net", ".mid", "Mid"))
    (package / "mid.py").write_text(_holder("Mid", ".blocks", "Block"), encoding="utf-8")
    (package / "top.py").write_text(TOP, encoding="utf-8")
    checker = Checker()
    checker.check(str(package / "top.py"), TOP)
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == []
    checker.check(str(package / "net.py"), _holder("Net", ".mid", "Mid"))
    checker.check(str(package / "top.py"), TOP.replace("count = 3", "count = step"))
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == [("MSL201", 6)]


def test_a_scripts_unsaved_buffer_decides_msl301_on_the_helper_it_calls(tmp_path):
    """MSL301 reports a helper's ``set_context`` for the scripts that call it; a script whose unsaved buffer turns
    the cache on is read from the buffer, as ``check`` reads that text from the file."""
    from test_script_modes import CALLS_THE_HELPER, HELPER

    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n", encoding="utf-8")
    for name, text in {"src/__init__.py": "", "src/env.py": HELPER, "train.py": CALLS_THE_HELPER}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    checker = Checker()
    helper = textwrap.dedent(HELPER)
    assert [code for code, _ in _codes(checker.check(str(tmp_path / "src/env.py"), helper))] == ["MSL301"]
    cached = "import os\n" + textwrap.dedent(CALLS_THE_HELPER).replace(
        "def main():", 'os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")\n\n\ndef main():')
    checker.check(str(tmp_path / "train.py"), cached)
    assert _codes(checker.check(str(tmp_path / "src/env.py"), helper)) == []


SCRIPT = ("import mindspore as ms\n" + _holder("Net", "src.blocks", "Block", "3")
          + '\n\nif __name__ == "__main__":\n    print(Net()(ms.Tensor([1.0]), 1))\n')


def test_closing_a_document_reseeds_a_buffer_edited_through_another_index(tmp_path):
    """``train.py`` (a root script) sits in its own index and in ``src``'s; its edit goes to its own. Closing
    ``src/other.py`` reseeds ``src``'s index: it must take ``train.py``'s buffer (which passes an int), not take the
    buffer for one that does not parse (then ``Block.construct``'s ``step`` had no call site: a Tensor)."""
    flagged = BLOCKS.replace("        return x\n", "        if x.sum() > 0:\n            x = x * 2\n        return x\n")
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n", encoding="utf-8")
    (tmp_path / "src").mkdir()
    for name, text in {"src/__init__.py": "", "src/blocks.py": flagged, "src/other.py": "X = 1\n",
                       "train.py": SCRIPT}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    checker = Checker()
    checker.check(str(tmp_path / "src/other.py"), "X = 1\n")
    checker.check(str(tmp_path / "train.py"), SCRIPT)
    blocks = checker.check(str(tmp_path / "src/blocks.py"), flagged)
    assert _codes(blocks) == [("MSL201", 8)]
    checker.check(str(tmp_path / "train.py"), SCRIPT.replace("self.block(x, 3)", "self.block(x, 4)"))
    checker.close(str(tmp_path / "src/other.py"))
    assert [(finding.code, finding.line) for finding, _ in blocks.variants()] == [("MSL201", 8)]


def test_the_store_limit_keeps_the_open_buffers_slots(tmp_path, monkeypatch):
    """Block is held by ``aaa.py`` (on disk, passes 3) and the open ``net.py`` (its buffer passes the Tensor
    ``step``). With the store full, storing ``aaa.py``'s context in the middle of ``blocks.py``'s analysis must
    not drop ``net.py``'s seeded slot (the question about it then read the file, which passes 3)."""
    package = _package(tmp_path, NET_ON_DISK)
    (package / "aaa.py").write_text(NET_ON_DISK.replace("class Net(", "class Aaa("), encoding="utf-8")
    checker = Checker()
    checker.check(str(package / "net.py"), NET_BUFFER)
    monkeypatch.setattr(project, "_MAX_CONTEXTS", 2)
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == [("MSL201", 6)]


def test_a_buffer_that_cannot_be_read_answers_as_an_unreadable_file(tmp_path):
    """A NUL byte typed into ``net.py``: the document is MSL900, and questions about it get what an unreadable
    file gives (no context: ``Block.construct``'s ``step`` a Tensor parameter), not its previous buffer's answer."""
    package = _package(tmp_path, NET_ON_DISK)
    checker = Checker()
    checker.check(str(package / "net.py"), NET_ON_DISK.replace("self.block(x, 3)", "self.block(x, 4)"))
    nul = checker.check(str(package / "net.py"), NET_BUFFER + "\x00")
    assert [code for code, _ in _codes(nul)] == ["MSL900"]
    assert _codes(checker.check(str(package / "blocks.py"), BLOCKS)) == [("MSL201", 6)]


def test_a_line_inserted_in_a_function_keeps_what_the_index_worked_out(tmp_path):
    """Typing a new line shifts the lines (and the ``Definition`` spans) of what follows, nothing else the index
    keeps: the project's graph closure is not worked out again, and the finding moves with its line."""
    from ms_lint.analysis.index import _INDEXES

    package = _package(tmp_path, NET_BUFFER)
    blocks = str(package / "blocks.py")
    checker = Checker()
    assert _codes(checker.check(blocks, BLOCKS)) == [("MSL201", 6)]
    index = next(index for index in _INDEXES.values() if blocks in index.by_path)
    closure = index.graph_functions()
    edited = BLOCKS.replace("        if step", "        y = x\n        if step")
    assert _codes(checker.check(blocks, edited)) == [("MSL201", 7)]
    assert index.by_path[blocks].definitions[0].end_line == 9  # the index holds the new text's summary
    assert index.graph_functions() is closure
    # a new call changes what the summary records: that edit does work the closure out again
    assert _codes(checker.check(blocks, edited.replace("y = x", "y = abs(x)"))) == [("MSL201", 7)]
    assert index.graph_functions() is not closure


HEAD_FROM = ("from mindspore import ops\nfrom {module} import Base\n\n\nclass Head(Base):\n"
             "    def construct(self, x):\n        out = []\n        for i in range(x.shape[0]):\n"
             "            out.append(ops.relu(x[i]) * 2)\n        return ops.stack(out)\n")


def _server_codes(checker, path, version):
    return [f.code for f in checker.check(str(path), path.read_text(), version).findings]


def test_a_new_module_open_in_the_editor_is_found_by_the_other_indexes(tmp_path):
    """A loose script imports ``pkg.base``, found nowhere (``Head`` counts as a Cell). The user creates
    ``pkg/base.py`` in the editor (didOpen, then the watcher's report, which ``saved`` gets for an open file):
    the script's own index must look the name up again."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    train = tmp_path / "train.py"
    train.write_text(HEAD_FROM.format(module="pkg.base"))
    checker = Checker()
    assert _server_codes(checker, train, 1) == ["MSL101"]
    base = tmp_path / "pkg" / "base.py"
    base.write_text("class Base:\n    pass\n")
    checker.check(str(base), base.read_text(), 1)
    checker.saved(str(base))
    assert _server_codes(checker, train, 2) == []


@pytest.mark.parametrize("where", ["pkg/base.py", "pkg/build/base.py"])
def test_a_deleted_module_is_dropped_by_the_server(tmp_path, where):
    """The base class's module (a project file, or one the index only looked up: ``build/`` is not walked) is
    deleted and reported: ``Head``'s base is found nowhere now, as ``ms-lint check --no-cache`` says."""
    (tmp_path / "pkg" / "build").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "build" / "__init__.py").write_text("")
    head = tmp_path / "pkg" / "head.py"
    head.write_text(HEAD_FROM.format(module=where[:-3].replace("/", ".")))
    base = tmp_path / where
    base.write_text("class Base:\n    pass\n")
    checker = Checker()
    assert _server_codes(checker, head, 1) == []
    base.unlink()
    checker.saved(str(base))
    assert _server_codes(checker, head, 2) == ["MSL101"]


def test_a_new_module_that_calls_an_open_helper_from_a_cell_makes_it_graph_code(tmp_path):
    """``pkg/net.py`` appears with a Cell whose ``construct`` calls ``helpers.body``: the server adds it to the
    project (``--no-cache`` walks it), so ``body``'s loop is graph code now."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    helpers = tmp_path / "pkg" / "helpers.py"
    helpers.write_text("from mindspore import ops\n\n\ndef body(x):\n    out = []\n    for i in range(x.shape[0]):\n"
                       "        out.append(ops.relu(x[i]) * 2)\n    return ops.stack(out)\n")
    checker = Checker()
    assert _server_codes(checker, helpers, 1) == []
    net = tmp_path / "pkg" / "net.py"
    net.write_text("from mindspore import nn\nfrom pkg.helpers import body\n\n\nclass Net(nn.Cell):\n"
                   "    def construct(self, x):\n        return body(x)\n")
    checker.saved(str(net))
    assert _server_codes(checker, helpers, 2) == ["MSL101"]


PLAIN = "class Base:\n    pass\n"
CELL = "from mindspore import nn\n\n\nclass Base(nn.Cell):\n    pass\n"


def _tree(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)


@pytest.mark.parametrize("change", ["created", "deleted"])
def test_an_init_file_created_or_deleted_renames_the_modules_of_its_folder(tmp_path, change):
    """With ``pkg/sub/__init__.py``, ``pkg/sub/x.py`` is ``pkg.sub.x`` and its ``from ..base import Base``
    resolves; without it, it is ``x`` and the import does not. ``Head`` imports ``Base`` through it."""
    files = {"pkg/__init__.py": "", "pkg/base.py": PLAIN, "pkg/sub/x.py": "from ..base import Base\n",
             "pkg/head.py": HEAD_FROM.format(module="pkg.sub.x")}
    if change == "deleted":
        files.update({"pkg/sub/__init__.py": "", "pkg/sub/x.py": "from pkg.base import Base\n",
                      "pkg/head.py": HEAD_FROM.format(module="x")})
    _tree(tmp_path, files)
    head, init = tmp_path / "pkg" / "head.py", tmp_path / "pkg" / "sub" / "__init__.py"
    checker = Checker()
    assert _server_codes(checker, head, 1) == ["MSL101"]
    if change == "created":
        init.write_text("")
    else:
        init.unlink()
    checker.saved(str(init))
    assert _server_codes(checker, head, 2) == []


def test_a_new_file_that_takes_a_shared_module_name_from_another(tmp_path):
    """``pkg/tools/helper.py`` (no ``__init__.py`` in ``tools``: module ``helper``) holds a Cell base; a new
    root-level ``helper.py`` is found first by the import (the earlier root), as ``check`` gives it."""
    _tree(tmp_path, {"pkg/__init__.py": "", "pkg/tools/helper.py": CELL,
                     "pkg/head.py": HEAD_FROM.format(module="helper")})
    head = tmp_path / "pkg" / "head.py"
    checker = Checker()
    assert _server_codes(checker, head, 1) == ["MSL101"]
    (tmp_path / "helper.py").write_text(PLAIN)
    checker.saved(str(tmp_path / "helper.py"))
    assert _server_codes(checker, head, 2) == []


def test_a_file_the_project_walk_would_not_list_does_not_join_the_project(tmp_path):
    """``tools.py`` beside ``pkg`` is an entry script; a new ``tools/base.py`` (no ``__init__.py``) is no
    project file, and ``from base import Base`` still finds nothing."""
    _tree(tmp_path, {"pkg/__init__.py": "", "tools.py": "y = 1\n", "pkg/head.py": HEAD_FROM.format(module="base")})
    head = tmp_path / "pkg" / "head.py"
    checker = Checker()
    assert _server_codes(checker, head, 1) == ["MSL101"]
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "base.py").write_text(PLAIN)
    checker.saved(str(tmp_path / "tools" / "base.py"))
    assert _server_codes(checker, head, 2) == ["MSL101"]


def test_a_deleted_folder_is_followed(tmp_path):
    import shutil

    _tree(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/base.py": PLAIN,
                     "pkg/head.py": HEAD_FROM.format(module="pkg.sub.base")})
    head = tmp_path / "pkg" / "head.py"
    checker = Checker()
    assert _server_codes(checker, head, 1) == []
    shutil.rmtree(tmp_path / "pkg" / "sub")
    checker.saved(str(tmp_path / "pkg" / "sub"))  # editors report a folder deleted as one event
    assert _server_codes(checker, head, 2) == ["MSL101"]


def test_closing_an_open_document_deleted_on_disk_drops_it(tmp_path):
    _tree(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": PLAIN, "pkg/head.py": HEAD_FROM.format(module="pkg.base")})
    head, base = tmp_path / "pkg" / "head.py", tmp_path / "pkg" / "base.py"
    checker = Checker()
    assert _server_codes(checker, head, 1) == []
    checker.check(str(base), PLAIN, 1)
    base.unlink()
    checker.saved(str(base))
    checker.check(str(base), PLAIN, 2)  # the open buffer checked again: the index reads it
    assert _server_codes(checker, head, 2) == []
    checker.close(str(base))
    assert _server_codes(checker, head, 3) == ["MSL101"]


TWO_CELLS = textwrap.dedent("""\
    from mindspore import nn, ops


    class First(nn.Cell):
        def construct(self, x):
            for i in range(x.shape[0]):
                x = x + ops.ones((2,))
            return x


    class Second(nn.Cell):
        def construct(self, x):
            if x.sum() > 0:
                x = x * 2
            return x
    """)


def test_an_edit_keeps_what_the_scope_read_from_the_statements_it_left_alone(tmp_path, monkeypatch):
    """What the value model reads from a function's tree alone (``values._FunctionFacts``) and the calls of each
    top-level statement (``scope.TreeFacts``) are kept across edits for the statements whose nodes the
    incremental parser kept; the edited class's are worked out again, and the findings are ``analyze_source``'s
    on the new text."""
    from ms_lint import scope
    from ms_lint.analysis import values
    from ms_lint.config import Config
    from ms_lint.engine import analyze_source
    from ms_lint.lsp.documents import source_of

    built, walked = [], []
    real = values._FunctionFacts.__init__
    monkeypatch.setattr(values._FunctionFacts, "__init__",
                        lambda self, func, parameters: built.append(func.name.value) or real(self, func, parameters))
    real_walk = scope._statement_calls
    monkeypatch.setattr(scope, "_statement_calls", lambda stmt: walked.append(
        getattr(getattr(stmt, "name", None), "value", "")) or real_walk(stmt))
    bodies = []  # the graph functions' bodies walked for their calls (``GraphScope.calls_in``)
    real_find = scope.find
    monkeypatch.setattr(scope, "find", lambda root, types, *rest: (
        bodies.append(root) if types is scope.cst.Call else None) or real_find(root, types, *rest))
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n", encoding="utf-8")
    path = tmp_path / "model.py"
    path.write_text(TWO_CELLS, encoding="utf-8")
    checker = Checker()
    first = checker.check(str(path), TWO_CELLS)
    assert [f.code for f in first.findings] == ["MSL101", "MSL201"] and built.count("construct") == 2
    assert len(bodies) == 2  # each ``construct``'s calls, walked once for the closure and the call sites
    built.clear()
    walked.clear()
    bodies.clear()
    edited = TWO_CELLS.replace("x = x * 2", "x = x * 3")
    second = checker.check(str(path), edited)
    assert built == ["construct"]  # ``Second.construct`` only: ``First``'s statement was not parsed again
    assert walked == ["Second"]  # nor walked for its calls: the imports and ``First`` keep theirs
    assert len(bodies) == 1  # nor ``First.construct``'s body for its calls
    alone = analyze_source(source_of(str(path), edited), Config(root=str(tmp_path)), str(path))
    assert [f.to_json() for f in second.findings] == [f.to_json() for f in alone.findings]


def test_a_buffer_broken_into_code_that_names_no_mindspore_says_what_the_command_line_says(tmp_path):
    """The index keeps the summary of the buffer's last text that parsed; its graph functions are not those of a
    text with a syntax error. Such a text that no longer names MindSpore gets nothing, as ``analyze_source`` (and
    ``ms-lint check``) give it, not a syntax error from the old graph code (found by random edits of the
    fixtures: 7 of 1,536 differed)."""
    from ms_lint.config import Config
    from ms_lint.engine import analyze_source
    from ms_lint.lsp.documents import source_of

    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n", encoding="utf-8")
    path = tmp_path / "model.py"
    path.write_text(TWO_CELLS, encoding="utf-8")
    checker = Checker()
    assert [f.code for f in checker.check(str(path), TWO_CELLS).findings] == ["MSL101", "MSL201"]
    # ``First``'s body without its ``class`` line: an unexpected indent, which the stdlib parser rejects too
    broken = TWO_CELLS.replace("from mindspore import nn, ops\n", "").replace("class First(nn.Cell):\n", "")
    alone = analyze_source(source_of(str(path), broken), Config(root=str(tmp_path)), str(path))
    assert [f.code for f in checker.check(str(path), broken).findings] == [f.code for f in alone.findings] == []
    named = "import mindspore\n" + broken  # naming MindSpore, it is checked, and its syntax error reported
    alone = analyze_source(source_of(str(path), named), Config(root=str(tmp_path)), str(path))
    assert [f.code for f in checker.check(str(path), named).findings] == [f.code for f in alone.findings] == ["MSL900"]



HELPED_BLOCKS = BLOCKS + textwrap.dedent("""\


    def shift(x):
        return x + 1
    """)


def _fresh_codes(path, text):
    """What a new index says of ``text`` as ``path`` (``ms-lint check`` on the saved buffer)."""
    from ms_lint.analysis import index as index_module
    from ms_lint.config import load_config
    from ms_lint.engine import analyze_source
    from ms_lint.lsp.documents import source_of

    saved, index_module._INDEXES = index_module._INDEXES, {}
    try:
        result = analyze_source(source_of(str(path), text), load_config(str(path)), str(path))
    finally:
        index_module._INDEXES = saved
    return [(f.code, f.line) for f in result.findings]


@pytest.mark.parametrize("line, kept", [
    ("y = abs(x)", True),  # a new call of a builtin: the graph is what it was
    ("y = x.sum()", True),  # of a method of a value
    ("y = shift(x)", False),  # makes the module's helper graph code
    ("y = self.norm(x)", False),  # a new call of an attribute: sub-cell call sites in other modules may change
], ids=["builtin", "method-of-a-value", "new-graph-helper", "new-attribute-call"])
def test_a_new_call_keeps_the_other_modules_contexts_while_the_graph_stays(tmp_path, line, kept):
    """``Block``'s ``if step > 10`` is a Tensor test because ``net.py`` calls the block with its Tensor ``step``:
    the context of ``net.py`` answers that, and asked nothing about ``blocks.py``. A new call in ``construct``
    changes the summary of ``blocks.py``; while the project's graph code, its call edges and the calls of
    ``self.<attribute>`` stay as they were, that context is kept; otherwise every context goes, as before."""
    from ms_lint.analysis.index import _INDEXES

    package = _package(tmp_path, NET_BUFFER)
    blocks = package / "blocks.py"
    blocks.write_text(HELPED_BLOCKS, encoding="utf-8")
    checker = Checker()
    assert _codes(checker.check(str(blocks), HELPED_BLOCKS)) == [("MSL201", 6)]
    index = next(index for index in _INDEXES.values() if str(blocks) in index.by_path)
    slot = (id(index), "pkg.net")
    net = project._CONTEXTS[slot]
    assert net is not None and "pkg.blocks" not in project.asked_by(slot)
    edited = HELPED_BLOCKS.replace("        if step", f"        {line}\n        if step")
    assert _codes(checker.check(str(blocks), edited)) == [("MSL201", 7)] == _fresh_codes(blocks, edited)
    assert (project._CONTEXTS.get(slot) is net) is kept


def test_a_new_call_in_a_module_the_index_read_lazily_drops_every_context(tmp_path):
    """The index makes a module it read lazily (not one of its project's) a project module when an editor's buffer
    replaces it, and names resolve anew: no context is kept then, whatever the edit, even one that leaves the
    graph as it was (a helper module without graph code)."""
    from ms_lint.analysis.index import ProjectIndex, summarize_file
    from ms_lint.lsp.documents import _keeps_graph

    package = _package(tmp_path, NET_BUFFER)
    helpers = package / "helpers.py"
    helpers.write_text("def scale(x):\n    return x * 2\n", encoding="utf-8")
    edited = b"def scale(x):\n    y = abs(x)\n    return x * 2\n"
    for lazily in (False, True):
        index = ProjectIndex.for_files([str(package / "net.py")])
        known = index.by_path[str(helpers)]
        if lazily:
            index.project_modules.discard(known.name)
        index.graph_functions()
        assert _keeps_graph(index, str(helpers), edited, known, summarize_file(str(helpers), edited)) is not lazily
