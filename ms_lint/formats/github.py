"""GitHub Actions workflow commands: one ``::error`` annotation per finding."""
from __future__ import annotations

from typing import List

from ms_lint.codes import CODES
from ms_lint.diagnostics import Finding


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(findings: List[Finding], **_) -> str:
    lines = []
    for f in findings:
        title = f"{f.code} {CODES.get(f.code, '')}".strip()
        props = ",".join([
            f"file={_escape_property(f.path)}",
            f"line={f.line}", f"col={f.column}", f"endLine={f.end_line}", f"endColumn={f.end_column}",
            f"title={_escape_property(title)}",
        ])
        message = _escape_data(f"{f.code} {f.message}")
        lines.append(f"::error {props}::{message}")
    return "\n".join(lines) + ("\n" if lines else "")
