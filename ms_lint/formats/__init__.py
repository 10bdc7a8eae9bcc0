"""Output formats for ``check``: each module renders a list of findings to a string."""
from __future__ import annotations

from typing import List

from ms_lint.diagnostics import Finding

FORMATS = ("text", "json", "sarif", "github")


def render(name: str, findings: List[Finding], **options) -> str:
    if name == "text":
        from ms_lint.formats.text import render as fn
    elif name == "json":
        from ms_lint.formats.json_format import render as fn
    elif name == "sarif":
        from ms_lint.formats.sarif import render as fn
    elif name == "github":
        from ms_lint.formats.github import render as fn
    else:
        raise ValueError(name)
    return fn(findings, **options)
