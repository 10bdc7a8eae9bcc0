"""The pygls server: diagnostics on open, change and save; each fix as a code action; "fix all" as a source
action. Every handler answers from ``ms_lint.lsp.documents``; nothing here analyzes code itself."""
from __future__ import annotations

import gc
import logging
import os
from typing import List, Optional

from lsprotocol import types as lsp
from pygls.server import LanguageServer
from pygls.uris import to_fs_path

from ms_lint import __version__
from ms_lint.diagnostics import SAFE
from ms_lint.lsp.convert import action_title, diagnostic, in_range, split_lines, text_edits
from ms_lint.lsp.documents import Checked, Checker

FIX_ALL = f"{lsp.CodeActionKind.SourceFixAll.value}.ms-lint"
logger = logging.getLogger(__name__)


class MsLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ms-lint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.checker = Checker()

    @property
    def encoding(self) -> str:
        return self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16

    def check(self, uri: str) -> Optional[Checked]:
        document = self.workspace.get_text_document(uri)
        path = to_fs_path(uri) or uri
        checked = self.checker.check(path, document.source, document.version)
        lines = split_lines(checked.text)
        self.publish_diagnostics(uri, [diagnostic(f, lines, self.encoding) for f in checked.findings],
                                 version=document.version)
        return checked

    def check_others(self, uri: Optional[str]) -> None:
        for other in list(self.workspace.text_documents):
            if other != uri and other in self.workspace.text_documents:
                self.check(other)

    def checked(self, uri: str) -> Optional[Checked]:
        """The result for the open document's current text (checked again if an edit came in since); None for a
        document the client has not opened."""
        if uri not in self.workspace.text_documents:
            return None
        document = self.workspace.get_text_document(uri)
        path = to_fs_path(uri) or uri
        found = self.checker.results.get(os.path.abspath(path))
        if found is not None and found.text == document.source:
            return found
        return self.check(uri)


server = MsLintServer()


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: MsLintServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.check(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: MsLintServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.check(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: MsLintServer, params: lsp.DidSaveTextDocumentParams) -> None:
    """Check the document, then the other open ones: their findings may depend on it (a base class, a helper,
    a sub-cell), and a save is when one expects them to follow."""
    ls.check(params.text_document.uri)
    ls.check_others(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: MsLintServer, params: lsp.DidCloseTextDocumentParams) -> None:
    ls.checker.close(to_fs_path(params.text_document.uri) or params.text_document.uri)
    ls.publish_diagnostics(params.text_document.uri, [])


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched(ls: MsLintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        ls.checker.saved(to_fs_path(change.uri) or change.uri)
    ls.check_others(None)


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL],
                                      resolve_provider=False))
def code_action(ls: MsLintServer, params: lsp.CodeActionParams) -> List[lsp.CodeAction]:
    uri = params.text_document.uri
    only = params.context.only
    checked = ls.checked(uri)
    if checked is None:
        return []
    actions: List[lsp.CodeAction] = []
    lines = split_lines(checked.text)
    wants = lambda kind: not only or any(kind == k or kind.startswith(f"{k}.") for k in only)  # noqa: E731
    if wants(lsp.CodeActionKind.QuickFix):
        wanted = [f for f in checked.findings if f.fix and in_range(diagnostic(f, lines, ls.encoding).range,
                                                                    params.range)]
        if wanted:
            keys = {_key(f) for f in wanted}
            for finding, text in checked.variants():
                if _key(finding) not in keys:
                    continue
                safe = (finding.fix or {}).get("applicability") == SAFE
                actions.append(lsp.CodeAction(
                    title=action_title(finding), kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic(finding, lines, ls.encoding)], is_preferred=safe,
                    edit=_edit(uri, checked, text, ls.encoding)))
    safe_fixes = any(f.fix and f.fix.get("applicability") == SAFE for f in checked.findings)
    if safe_fixes and (wants(FIX_ALL) if only else actions):
        fixed = checked.fixed(unsafe=False)
        if fixed != checked.text:
            actions.append(lsp.CodeAction(title="ms-lint: apply all safe fixes", kind=FIX_ALL,
                                          edit=_edit(uri, checked, fixed, ls.encoding)))
    return actions


def _key(finding) -> tuple:
    return (finding.code, finding.line, finding.column, finding.end_line, finding.end_column)


def _edit(uri: str, checked: Checked, text: str, encoding: str) -> lsp.WorkspaceEdit:
    edits = text_edits(checked.text, text, encoding)
    document = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=checked.version)
    return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=document, edits=edits)])


# As ``ms_lint.runner`` does while analyzing: a parse allocates hundreds of thousands of libcst nodes, none in a
# reference cycle, and the index and the open documents' trees stay alive, so the default thresholds would run
# full collections over them on every check for nothing.
FEWER_COLLECTIONS = (100_000, 50, 100)


def main() -> int:
    """Serve over stdin/stdout until the client sends exit."""
    gc.set_threshold(*FEWER_COLLECTIONS)
    server.start_io()
    return 0
