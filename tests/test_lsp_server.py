"""``ms-lint server`` driven over stdio as an editor drives it: the diagnostics equal ``ms-lint check --output-format
json`` on the same text, and applying a code action's edit gives what ``ms-lint fix --apply`` writes."""
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from ms_lint.cli import main
from ms_lint.lsp.client import Client
from ms_lint.lsp.convert import apply_edits
from lsprotocol.types import TextEdit

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


@pytest.fixture
def server(tmp_path):
    client = Client([sys.executable, "-m", "ms_lint", "server"], cwd=str(tmp_path),
                    env={**os.environ, "PYTHONPATH": str(REPO)})
    client.initialize(tmp_path.as_uri())
    yield client
    client.close()


@pytest.fixture
def cli(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)

    def run(*args):
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def copy_fixture(tmp_path, relative):
    target = tmp_path / Path(relative).name
    shutil.copyfile(FIXTURES / relative, target)
    return target


def check_json(cli, path):
    code, out, err = cli("check", "--no-cache", "--output-format", "json", str(path))
    assert code in (0, 1, 2), err
    return json.loads(out)


def expected_diagnostics(cli, path):
    """check's findings as (range, code, message), in LSP's 0-based lines and columns (ASCII fixtures)."""
    return sorted(((f["line"] - 1, f["column"] - 1, f["end_line"] - 1, f["end_column"] - 1), f["code"], f["message"])
                  for f in check_json(cli, path))


def got(diagnostics):
    return sorted(((d["range"]["start"]["line"], d["range"]["start"]["character"], d["range"]["end"]["line"],
                    d["range"]["end"]["character"]), d["code"], d["message"]) for d in diagnostics)


def open_document(server, path, text=None, version=1):
    uri = path.as_uri()
    text = path.read_text(encoding="utf-8") if text is None else text
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                            "text": text}})
    return uri, server.diagnostics(uri, version)


def change(server, uri, version, text=None, edits=None):
    changes = [{"text": text}] if text is not None else edits
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                             "contentChanges": changes})
    return server.diagnostics(uri, version)


def code_actions(server, uri, diagnostics=(), only=None, whole=False):
    if whole or not diagnostics:
        where = {"start": {"line": 0, "character": 0}, "end": {"line": 100000, "character": 0}}
    else:
        where = diagnostics[0]["range"]
    context = {"diagnostics": list(diagnostics)}
    if only:
        context["only"] = only
    return server.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": where,
                                                      "context": context})


def applied(text, action):
    [change_] = action["edit"]["documentChanges"]
    edits = [TextEdit(range=range_call(e["range"]), new_text=e["newText"]) for e in change_["edits"]]
    return apply_edits(text, edits)


def range_call(data):
    from lsprotocol import types as lsp

    return lsp.Range(start=lsp.Position(**data["start"]), end=lsp.Position(**data["end"]))


@pytest.mark.parametrize("fixture", [
    "loops/per_sample_tuples.py", "loops/decoders.py", "branches/loss_scale_wrapper.py",
    "lookalikes_optim/clip_accumulate_ema.py", "lookalikes/bert_transformer.py", "scripts/train_resnet_cached.py",
])
def test_diagnostics_equal_check_json(server, cli, tmp_path, fixture):
    path = copy_fixture(tmp_path, fixture)
    expected = expected_diagnostics(cli, path)
    assert expected, "the fixture must have findings"
    uri, diagnostics = open_document(server, path)
    assert got(diagnostics) == expected
    assert all(d["source"] == "ms-lint" for d in diagnostics)
    assert server.shutdown() == 0


def test_project_index_sees_unsaved_buffers(server, cli, tmp_path):
    """A finding that needs another module of the package follows that module's buffer, not its file."""
    shutil.copytree(FIXTURES / "project", tmp_path / "project")
    head = tmp_path / "project" / "detr" / "heads" / "attn_head.py"
    base = tmp_path / "project" / "detr" / "heads" / "base.py"
    uri, diagnostics = open_document(server, head)
    before = expected_diagnostics(cli, head)
    assert before and got(diagnostics) == before
    base_text = base.read_text()
    assert "max_len=25" in base_text
    edited = base_text.replace("max_len=25", "max_len=4")
    base_uri, _ = open_document(server, base)
    change(server, base_uri, 2, text=edited)  # not saved: the disk still says 25
    head_text = head.read_text()
    diagnostics = change(server, uri, 2, text=head_text + "\n")
    base.write_text(edited)
    head.write_text(head_text + "\n")
    after = expected_diagnostics(cli, head)
    assert after != before
    assert got(diagnostics) == after


def test_incremental_changes_noqa_and_syntax_errors(server, cli, tmp_path):
    path = copy_fixture(tmp_path, "loops/per_step_lists.py")
    text = path.read_text()
    uri, diagnostics = open_document(server, path)
    assert got(diagnostics) == expected_diagnostics(cli, path)
    first = diagnostics[0]
    line = first["range"]["start"]["line"]
    end = len(text.splitlines()[line])
    noqa = f"  # noqa: {first['code']}"
    diagnostics = change(server, uri, 2, edits=[{"range": {"start": {"line": line, "character": end},
                                                           "end": {"line": line, "character": end}},
                                                 "text": noqa}])
    lines = text.splitlines(keepends=True)
    lines[line] = lines[line].rstrip("\n") + noqa + "\n"
    path.write_text("".join(lines))
    assert len(diagnostics) == len(expected_diagnostics(cli, path)) < len(check_json_lines(text))
    assert got(diagnostics) == expected_diagnostics(cli, path)
    # A syntax error: one MSL900, as check reports it; the server keeps serving.
    broken = "".join(lines).replace("def ", "def (", 1)
    diagnostics = change(server, uri, 3, text=broken)
    path.write_text(broken)
    expected = expected_diagnostics(cli, path)
    assert [d[1] for d in expected] == ["MSL900"] and got(diagnostics) == expected
    assert code_actions(server, uri, diagnostics) == []
    diagnostics = change(server, uri, 4, text="x = 1\x00\n")
    path.write_bytes(b"x = 1\x00\n")
    assert got(diagnostics) == expected_diagnostics(cli, path)
    diagnostics = change(server, uri, 5, text=text)
    path.write_text(text)
    assert got(diagnostics) == expected_diagnostics(cli, path)
    assert server.shutdown() == 0


def check_json_lines(text):
    return [line for line in text.splitlines() if line.strip()]


def test_config_of_the_document_project(server, cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ms-lint]\nignore = ["MSL201"]\n'
                                             '[tool.ms-lint.per-file-ignores]\n"skip_*.py" = ["MSL"]\n')
    path = copy_fixture(tmp_path, "loops/per_sample_tuples.py")
    codes = {f["code"] for f in check_json(cli, path)}
    uri, diagnostics = open_document(server, path)
    assert got(diagnostics) == expected_diagnostics(cli, path)
    assert codes == {"MSL101"}
    skipped = tmp_path / "skip_rows.py"
    shutil.copyfile(path, skipped)
    _, diagnostics = open_document(server, skipped)
    assert diagnostics == [] == check_json(cli, skipped)
    # The pyproject is read again when it changes.
    (tmp_path / "pyproject.toml").write_text('[tool.ms-lint]\nselect = ["MSL201"]\n')
    os.utime(tmp_path / "pyproject.toml", ns=(1, 10**18))
    diagnostics = change(server, uri, 2, text=path.read_text())
    assert got(diagnostics) == expected_diagnostics(cli, path)
    assert {d["code"] for d in diagnostics} == {"MSL201"}


def _fixed_by_cli(cli, tmp_path, relative, *flags):
    copy = tmp_path / "cli" / Path(relative).name
    copy.parent.mkdir(exist_ok=True)
    shutil.copyfile(FIXTURES / relative, copy)
    cli("fix", "--apply", *flags, str(copy))
    return copy.read_text()


def test_safe_quick_fix_equals_fix_apply(server, cli, tmp_path):
    path = copy_fixture(tmp_path, "verify/cell_rows_orig.py")
    uri, diagnostics = open_document(server, path)
    [finding] = diagnostics
    [action] = code_actions(server, uri, diagnostics, only=["quickfix"])
    assert action["kind"] == "quickfix" and action["isPreferred"] is True
    assert "unsafe" not in action["title"] and action["title"].startswith(finding["code"])
    assert action["diagnostics"][0]["range"] == finding["range"]
    fixed = applied(path.read_text(), action)
    assert fixed != path.read_text()
    assert fixed == _fixed_by_cli(cli, tmp_path, "verify/cell_rows_orig.py")
    # The fixed buffer has nothing left to say.
    assert change(server, uri, 2, text=fixed) == []


def test_unsafe_quick_fix_is_titled_unsafe_and_not_preferred(server, cli, tmp_path):
    path = copy_fixture(tmp_path, "verify/safe_div_orig.py")
    uri, diagnostics = open_document(server, path)
    [action] = code_actions(server, uri, diagnostics)
    assert action["isPreferred"] is False and "unsafe" in action["title"]
    assert applied(path.read_text(), action) == _fixed_by_cli(cli, tmp_path, "verify/safe_div_orig.py",
                                                              "--unsafe-fixes")
    assert _fixed_by_cli(cli, tmp_path, "verify/safe_div_orig.py") == path.read_text()  # fix --apply leaves it


def test_fix_all_equals_fix_apply(server, cli, tmp_path):
    relative = "loops/per_sample_tuples.py"
    path = copy_fixture(tmp_path, relative)
    uri, diagnostics = open_document(server, path)
    assert sum(1 for d in diagnostics if (d.get("data") or {}).get("fix", {}).get("applicability") == "safe") > 1
    [action] = code_actions(server, uri, only=["source.fixAll"])
    assert action["kind"] == "source.fixAll.ms-lint"
    assert applied(path.read_text(), action) == _fixed_by_cli(cli, tmp_path, relative)
    # Each quick fix alone changes only its own finding's code; the preferred ones are the safe ones.
    actions = code_actions(server, uri, diagnostics, whole=True, only=["quickfix"])
    fixable = [d for d in diagnostics if (d.get("data") or {}).get("fix")]
    assert len(actions) == len(fixable)
    for action in actions:
        assert action["isPreferred"] == (action["diagnostics"][0]["data"]["fix"]["applicability"] == "safe")


def test_bad_requests_do_not_stop_the_server(server, tmp_path):
    uri = (tmp_path / "never_opened.py").as_uri()
    assert code_actions(server, uri) == []
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\nselect = 3\n")
    path = tmp_path / "model.py"
    path.write_text("import mindspore\n")
    _, diagnostics = open_document(server, path)
    assert [d["code"] for d in diagnostics] == ["MSL900"] and "configuration" in diagnostics[0]["message"]
    assert server.shutdown() == 0


def test_saving_a_module_checks_the_other_open_documents_again(server, cli, tmp_path):
    shutil.copytree(FIXTURES / "project", tmp_path / "project")
    head = tmp_path / "project" / "detr" / "heads" / "attn_head.py"
    base = tmp_path / "project" / "detr" / "heads" / "base.py"
    head_uri, before = open_document(server, head)
    base_uri, _ = open_document(server, base)
    edited = base.read_text().replace("max_len=25", "max_len=4")
    change(server, base_uri, 2, text=edited)
    base.write_text(edited)
    server.notify("textDocument/didSave", {"textDocument": {"uri": base_uri}})
    after = server.diagnostics(head_uri)
    assert got(after) == expected_diagnostics(cli, head) != got(before)
    # Fix-all on the edited base leaves the index with the buffer's text, not the fixed one.
    code_actions(server, base_uri, only=["source.fixAll"])
    assert got(change(server, head_uri, 2, text=head.read_text() + "\n")) == got(after)


def test_edits_faster_than_checks_end_with_the_last_text(server, cli, tmp_path):
    """Edits sent without waiting (typing) are folded into fewer checks; what stays published is the last text's."""
    path = copy_fixture(tmp_path, "loops/per_sample_tuples.py")
    text = path.read_text()
    uri, _ = open_document(server, path)
    lines = text.splitlines(keepends=True)
    for version in range(2, 12):
        lines.insert(0, f"# edit {version}\n")
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": "".join(lines)}]})
    final = server.diagnostics(uri, 11)
    path.write_text("".join(lines))
    assert got(final) == expected_diagnostics(cli, path)
    published = [n for n in server.notifications if n["method"] == "textDocument/publishDiagnostics"
                 and n["params"]["uri"] == uri]
    assert published[-1]["params"]["version"] == 11 and len(published) <= 11
    assert server.shutdown() == 0


def test_untitled_and_non_python_documents(server, tmp_path):
    untitled = "untitled:Untitled-1"
    from conftest import FLAGGED

    server.notify("textDocument/didOpen", {"textDocument": {"uri": untitled, "languageId": "python", "version": 1,
                                                            "text": FLAGGED}})
    assert [d["code"] for d in server.diagnostics(untitled, 1)] == ["MSL101"]
    toml = (tmp_path / "pyproject.toml").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": toml, "languageId": "toml", "version": 1,
                                                            "text": "[tool.ms-lint]\n"}})
    assert code_actions(server, toml) == []
    assert not [n for n in server.notifications if n["params"].get("uri") == toml]
    assert server.shutdown() == 0


@pytest.mark.parametrize("name, text", [
    ("op_info.py", "import mindspore\nfrom mindspore import nn\n\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
                   "        return x\n\n\nop_info = Builder()" + ".input(0, 'x')" * 900 + ".get_op_info()\n"),
    ("nested.py", "import mindspore\nx = " + "f(" * 1000 + "1" + ")" * 1000 + "\n"),
    ("bools.py", "import mindspore\nok = " + " and ".join(["a"] * 2500) + "\n"),
])
def test_deeply_nested_code_gets_what_check_gives(server, cli, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    uri, diagnostics = open_document(server, path)
    assert got(diagnostics) == expected_diagnostics(cli, path)
    lines = text.splitlines(keepends=True)
    lines.insert(1, "import os\n")
    diagnostics = change(server, uri, 2, text="".join(lines))
    path.write_text("".join(lines))
    assert got(diagnostics) == expected_diagnostics(cli, path)
    assert server.shutdown() == 0


def test_range_edits_inside_graph_functions_keep_diagnostics_equal_to_check(server, cli, tmp_path):
    """Incremental changes (the statements around the edit are re-parsed alone) give check's findings each time."""
    path = copy_fixture(tmp_path, "lookalikes_optim/clip_accumulate_ema.py")
    text = path.read_text()
    uri, diagnostics = open_document(server, path)
    assert got(diagnostics) == expected_diagnostics(cli, path)
    lines = text.splitlines(keepends=True)
    version = 1
    for round_ in range(3):
        target = [i + 1 for i, line in enumerate(lines) if line.strip().startswith("def construct(")][round_]
        indent = lines[target][: len(lines[target]) - len(lines[target].lstrip(" "))]
        assert indent.strip(" ") == ""
        steps = [
            ({"start": {"line": target, "character": 0}, "end": {"line": target, "character": 0}},
             f"{indent}scratch = 1\n"),
            ({"start": {"line": target, "character": 0}, "end": {"line": target + 1, "character": 0}}, ""),
            ({"start": {"line": target - 1, "character": 0}, "end": {"line": target - 1, "character": 0}},
             "    # a comment above construct\n"),
        ]
        for where, new_text in steps:
            version += 1
            diagnostics = change(server, uri, version, edits=[{"range": where, "text": new_text}])
            start, end = where["start"]["line"], where["end"]["line"]
            lines[start:end] = [new_text] if new_text else []
            path.write_text("".join(lines))
            assert got(diagnostics) == expected_diagnostics(cli, path), (target, new_text)
    assert server.shutdown() == 0


def test_the_server_asks_for_python_file_events_and_follows_a_new_module(tmp_path, cli):
    """A client that registers file watchers dynamically is asked for ``**/*.py`` events. A new module with a
    Cell that calls an open helper, reported as created, makes the helper's loop graph code: its diagnostics
    follow, as ``ms-lint check`` gives them."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    helpers = tmp_path / "pkg" / "helpers.py"
    helpers.write_text("from mindspore import ops\n\n\ndef body(x):\n    out = []\n    for i in range(x.shape[0]):\n"
                       "        out.append(ops.relu(x[i]) * 2)\n    return ops.stack(out)\n")
    client = Client([sys.executable, "-m", "ms_lint", "server"], cwd=str(tmp_path),
                    env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        client.initialize(tmp_path.as_uri(), watch_files=True)
        uri, diagnostics = open_document(client, helpers)
        assert diagnostics == []
        [registration] = [r for request in client.requests if request["method"] == "client/registerCapability"
                          for r in request["params"]["registrations"]]
        assert registration["method"] == "workspace/didChangeWatchedFiles"
        assert registration["registerOptions"]["watchers"] == [{"globPattern": "**/*.py"}]
        net = tmp_path / "pkg" / "net.py"
        net.write_text("from mindspore import nn\nfrom pkg.helpers import body\n\n\nclass Net(nn.Cell):\n"
                       "    def construct(self, x):\n        return body(x)\n")
        client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": net.as_uri(), "type": 1}]})
        assert got(client.diagnostics(uri)) == expected_diagnostics(cli, helpers) != []
        assert client.shutdown() == 0
    finally:
        client.close()


def test_a_client_without_dynamic_watchers_is_not_asked(server, tmp_path):
    path = tmp_path / "net.py"
    path.write_text("X = 1\n")
    open_document(server, path)
    assert [r for r in server.requests if r["method"] == "client/registerCapability"] == []
