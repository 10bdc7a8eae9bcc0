"""The pygls server: diagnostics on open, change and save; each fix as a code action; "fix all" as a source
action. Every handler answers from ``ms_lint.lsp.documents``; nothing here analyzes code itself.

Checks run on one worker thread, so the event loop keeps reading the client's messages meanwhile: edits that
arrive while a document is being checked are folded into one more check of its latest text (typing faster than a
check takes never builds a queue). The checker is only ever used from that thread; messages go out from the
event loop's.
"""
from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import List, Optional, Set

from lsprotocol import types as lsp
from pygls.server import LanguageServer
from pygls.uris import to_fs_path

from ms_lint import __version__
from ms_lint.diagnostics import SAFE
from ms_lint.gcpolicy import collect_less
from ms_lint.lsp.convert import action_title, diagnostic, in_range, split_lines, text_edits
from ms_lint.lsp.documents import Checked, Checker

FIX_ALL = f"{lsp.CodeActionKind.SourceFixAll.value}.ms-lint"
WORKER_STACK = 256 * 1024 * 1024  # bytes of stack for the checking thread (address space; pages are used lazily)
logger = logging.getLogger(__name__)


def _path(uri: str) -> str:
    return to_fs_path(uri) or uri


class MsLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ms-lint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.checker = Checker()
        # The engine analyzes with a recursion limit of 20,000 (generated code nests deeply): give the checking
        # thread the room the main thread has, not a platform's smaller thread default.
        threading.stack_size(WORKER_STACK)
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ms-lint-check")
        self._busy: Set[str] = set()  # documents with a check queued or running (event loop thread only)
        self._again: Set[str] = set()  # documents edited while their check ran

    @property
    def encoding(self) -> str:
        return self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16

    # -- on the event loop ----------------------------------------------------------------------------
    def schedule(self, uri: str) -> None:
        """Check the document's current text on the worker, then publish; at most one check per document queued."""
        if not self.is_python(uri):
            return
        if uri in self._busy:
            self._again.add(uri)
            return
        self._busy.add(uri)
        self._submit(uri)

    def is_python(self, uri: str) -> bool:
        """An open Python document (by language id, or by file name when the client sent none)."""
        if uri not in self.workspace.text_documents:
            return False
        language = self.workspace.get_text_document(uri).language_id
        return language == "python" if language else _path(uri).endswith((".py", ".pyi"))

    def _submit(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        future = self.worker.submit(self.checker.check, _path(uri), document.source, document.version)
        future.add_done_callback(lambda done: self.loop.call_soon_threadsafe(self._checked, uri, done))

    def _checked(self, uri: str, future: Future) -> None:
        try:
            checked: Optional[Checked] = future.result()
        except Exception:  # Checker.check reports its own failures as MSL900; this is a bug in the server
            logger.exception("checking %s failed", uri)
            checked = None
        if uri not in self.workspace.text_documents:  # closed meanwhile
            self._busy.discard(uri)
            self._again.discard(uri)
            return
        if checked is not None:
            lines = split_lines(checked.text)
            self.publish_diagnostics(uri, [diagnostic(f, lines, self.encoding) for f in checked.findings],
                                     version=checked.version)
        if uri in self._again:
            self._again.discard(uri)
            self._submit(uri)
        else:
            self._busy.discard(uri)

    def schedule_others(self, uri: Optional[str]) -> None:
        for other in list(self.workspace.text_documents):
            if other != uri:
                self.schedule(other)

    # -- on the worker ---------------------------------------------------------------------------------
    def checked_text(self, path: str, text: str, version: Optional[int]) -> Checked:
        """The result for this text: the last check's when it was of the same text."""
        found = self.checker.results.get(os.path.abspath(path))
        if found is not None and found.text == text:
            return found
        return self.checker.check(path, text, version)


server = MsLintServer()


@server.feature(lsp.INITIALIZED)
def initialized(ls: MsLintServer, params: lsp.InitializedParams) -> None:
    """Ask the client to report Python files created, changed or deleted on disk (``did_change_watched``): a new
    module may be what an import could not find, or a Cell that makes an open helper graph code. Only a client
    that can register watchers dynamically is asked; others report what they were configured to."""
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace is not None else None
    if watched is None or not watched.dynamic_registration:
        return
    ls.register_capability(lsp.RegistrationParams(registrations=[lsp.Registration(
        id="ms-lint-python-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
            watchers=[lsp.FileSystemWatcher(glob_pattern="**/*.py")]))]))


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: MsLintServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: MsLintServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: MsLintServer, params: lsp.DidSaveTextDocumentParams) -> None:
    """Check the document, then the other open ones: their findings may depend on it (a base class, a helper,
    a sub-cell), and a save is when one expects them to follow."""
    ls.schedule(params.text_document.uri)
    ls.schedule_others(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: MsLintServer, params: lsp.DidCloseTextDocumentParams) -> None:
    ls.worker.submit(ls.checker.close, _path(params.text_document.uri))
    ls.publish_diagnostics(params.text_document.uri, [])


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched(ls: MsLintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        ls.worker.submit(ls.checker.saved, _path(change.uri))
    ls.schedule_others(None)


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL],
                                      resolve_provider=False))
async def code_action(ls: MsLintServer, params: lsp.CodeActionParams) -> List[lsp.CodeAction]:
    uri = params.text_document.uri
    if not ls.is_python(uri):
        return []
    document = ls.workspace.get_text_document(uri)
    work = partial(_code_actions, ls, params, document.source, document.version)
    return await ls.loop.run_in_executor(ls.worker, work)


def _code_actions(ls: MsLintServer, params: lsp.CodeActionParams, text: str,
                  version: Optional[int]) -> List[lsp.CodeAction]:
    uri = params.text_document.uri
    only = params.context.only
    checked = ls.checked_text(_path(uri), text, version)
    actions: List[lsp.CodeAction] = []
    lines = split_lines(checked.text)
    wants = lambda kind: not only or any(kind == k or kind.startswith(f"{k}.") for k in only)  # noqa: E731
    if wants(lsp.CodeActionKind.QuickFix):
        wanted = [f for f in checked.findings if f.fix and in_range(diagnostic(f, lines, ls.encoding).range,
                                                                    params.range)]
        if wanted:
            keys = {_key(f) for f in wanted}
            for finding, fixed in checked.variants():
                if _key(finding) not in keys:
                    continue
                safe = (finding.fix or {}).get("applicability") == SAFE
                actions.append(lsp.CodeAction(
                    title=action_title(finding), kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic(finding, lines, ls.encoding)], is_preferred=safe,
                    edit=_edit(uri, checked, fixed, ls.encoding)))
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


def main() -> int:
    """Serve over stdin/stdout until the client sends exit."""
    collect_less()  # the index and the open documents' trees stay alive (ms_lint.gcpolicy)
    server.start_io()
    return 0
