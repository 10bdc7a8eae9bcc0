"""The memos of trees' facts (``ms_lint.treememo``): each answers what its function computes afresh, asked once
and again, and ``forget`` (through ``dataflow.forget_reads``, the command line's call) empties them all."""
import pathlib

import libcst as cst
import pytest

from ms_lint import context, cstutil, names, scope, treememo
from ms_lint.analysis import dataflow, values
from ms_lint.walk import find
from corpus_support import fixture_sources

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = fixture_sources()

# (memo, which nodes of a module it is asked about)
MEMOS = [
    (cstutil.code_of, lambda module: find(module, (cst.Call, cst.If, cst.For))),
    (dataflow.body_bindings, lambda module: find(module, cst.FunctionDef)),
    (dataflow._declared_names, lambda module: find(module, cst.FunctionDef)),
    (dataflow.own_code_names, lambda module: find(module, cst.FunctionDef)),
    (values.self_assignments, lambda module: find(module, cst.FunctionDef)),
    (values._rebound_by, lambda module: list(module.body)),
    (names._imports_in, lambda module: list(module.body)),
    (context._binder_names, lambda module: find(module, (cst.FunctionDef, cst.AssignTarget))),
    (scope._body_calls, lambda module: find(module, cst.FunctionDef)),
]


def test_every_memo_is_registered_and_forgotten():
    for memo, _nodes in MEMOS:
        assert memo in treememo._MEMOS
    module = cst.parse_module("import os\ndef f(x):\n    global G\n    self.a = x\n    return g(x)\n")
    for memo, nodes in MEMOS:
        for node in nodes(module):
            memo(node)
    assert all(memo.cache_info().currsize > 0 for memo, _nodes in MEMOS)
    dataflow.forget_reads()  # what the command line calls before each file
    assert all(memo.cache_info().currsize == 0 for memo in treememo._MEMOS)


@pytest.mark.parametrize("path", FIXTURES, ids=[str(p.relative_to(ROOT)) for p in FIXTURES])
def test_memos_answer_as_the_functions_do(path):
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    for memo, nodes in MEMOS:
        asked = nodes(module)
        for node in asked + asked:  # the second time from the memo
            assert memo(node) == memo.__wrapped__(node), (memo.__name__, path.name)


def test_prune_keeps_what_the_last_two_generations_asked():
    memo = treememo.TreeMemo(lambda node: object())  # not registered: the other memos are left alone
    kept, dropped = cst.Name("kept"), cst.Name("dropped")
    first = memo(kept)
    memo(dropped)
    memo.prune()
    assert memo(kept) is first  # asked again in the next generation: moved to it
    memo.prune()
    assert memo.cache_info().currsize == 1  # ``dropped`` was not asked for a whole generation
    assert memo(kept) is first


def test_an_edited_document_does_not_pile_up_old_nodes(tmp_path):
    """Each edit re-parses the statement it touched, whose old nodes the memos would keep alive: after the
    editor's prune per check they hold what the last two checks asked, however many edits came before."""
    from ms_lint.lsp.documents import Checker

    path = tmp_path / "model.py"
    text = (ROOT / "fixtures" / "lookalikes" / "bert_transformer.py").read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    bodies = [number + 1 for number, line in enumerate(lines) if line.strip().startswith("def construct")]
    checker = Checker()
    checker.check(str(path), text)
    sizes = []
    for edit in range(60):
        edited = list(lines)
        target = bodies[edit % len(bodies)]
        edited[target] = edited[target] + " " * (1 + edit % 3)  # a space typed at the end of a construct line
        checker.check(str(path), "\n".join(edited) + "\n")
        sizes.append(sum(memo.cache_info().currsize for memo in treememo._MEMOS))
    assert max(sizes[30:]) <= 1.2 * max(sizes[:10]), sizes
