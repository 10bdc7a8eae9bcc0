"""Findings and fixed texts as LSP values: diagnostics, ranges in the client's position encoding, text edits.

LSP lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (as libcst's positions do), not at every break ``str.splitlines``
knows (form feeds, ``\\u2028``); characters are counted in the encoding negotiated at initialize (UTF-16 unless
the client offers another), ms-lint's columns in code points.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional

from lsprotocol import types as lsp

from ms_lint import line_diff
from ms_lint.codes import UNANALYZABLE
from ms_lint.diagnostics import SAFE, Finding

SOURCE = "ms-lint"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str) -> List[str]:
    """The document's lines as LSP counts them, each with its line end."""
    return _LINE.findall(text)


def _units(chars: str, encoding: str) -> int:
    if encoding == lsp.PositionEncodingKind.Utf32 or chars.isascii():
        return len(chars)
    if encoding == lsp.PositionEncodingKind.Utf8:
        return len(chars.encode("utf-8", "surrogatepass"))
    return len(chars.encode("utf-16-le", "surrogatepass")) // 2


def position(lines: List[str], line: int, column: int, encoding: str) -> lsp.Position:
    """An LSP position from a 1-based line and a 1-based code-point column."""
    index = line - 1
    if index >= len(lines):
        return lsp.Position(line=max(index, 0), character=0)
    text = lines[index].rstrip("\r\n")
    return lsp.Position(line=index, character=_units(text[: max(column - 1, 0)], encoding))


def diagnostic(finding: Finding, lines: List[str], encoding: str) -> lsp.Diagnostic:
    start = position(lines, finding.line, finding.column, encoding)
    end = position(lines, finding.end_line, finding.end_column, encoding)
    severity = lsp.DiagnosticSeverity.Error if finding.code == UNANALYZABLE else lsp.DiagnosticSeverity.Warning
    data: Dict[str, object] = {"fix": finding.fix} if finding.fix else {}
    if finding.detail:
        data["detail"] = finding.detail
    return lsp.Diagnostic(range=lsp.Range(start=start, end=end), message=finding.message, severity=severity,
                          code=finding.code, source=SOURCE, data=data or None)


def action_title(finding: Finding) -> str:
    """What the editor lists: the fix's own message; unsafe fixes say so first."""
    fix = finding.fix or {}
    message = fix.get("message") or finding.message
    if fix.get("applicability") == SAFE:
        return f"{finding.code}: {message}"
    return f"{finding.code} (unsafe fix, may change behaviour): {message}"


def text_edits(original: str, fixed: str, encoding: str) -> List[lsp.TextEdit]:
    """Edits that turn ``original`` into ``fixed``: one per run of changed lines (an import added at the top and
    the rewrite further down are two edits)."""
    old, new = split_lines(original), split_lines(fixed)
    edits = []
    for tag, i1, i2, j1, j2 in line_diff.opcodes(old, new, autojunk=False):
        if tag == "equal":
            continue
        start = _line_start(old, i1, encoding)
        end = _line_start(old, i2, encoding)
        edits.append(lsp.TextEdit(range=lsp.Range(start=start, end=end), new_text="".join(new[j1:j2])))
    return edits


def _line_start(lines: List[str], index: int, encoding: str) -> lsp.Position:
    """The start of line ``index``; past the last line: the end of the text (which may lack a final newline)."""
    if index < len(lines):
        return lsp.Position(line=index, character=0)
    if lines and not lines[-1].endswith(("\n", "\r")):
        return lsp.Position(line=len(lines) - 1, character=_units(lines[-1], encoding))
    return lsp.Position(line=len(lines), character=0)


def apply_edits(text: str, edits: List[lsp.TextEdit], encoding: str = lsp.PositionEncodingKind.Utf16) -> str:
    """The text with the edits applied, as a client applies them (for tests and the benchmark)."""
    lines = split_lines(text)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(pos: lsp.Position) -> int:
        if pos.line >= len(lines):
            return len(text)
        line = lines[pos.line]
        count = 0
        for index, char in enumerate(line):
            if count >= pos.character:
                return offsets[pos.line] + index
            count += _units(char, encoding)
        return offsets[pos.line] + len(line)

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def in_range(diag_range: lsp.Range, wanted: Optional[lsp.Range]) -> bool:
    if wanted is None:
        return True
    key = lambda p: (p.line, p.character)  # noqa: E731
    return key(diag_range.start) <= key(wanted.end) and key(wanted.start) <= key(diag_range.end)
