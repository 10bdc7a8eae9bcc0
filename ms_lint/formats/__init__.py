"""Output formats for ``check``: each module renders a list of findings to a string.

``text`` is one line per finding; ``full`` adds the source lines, the longer explanation and the fix under each.
With ``statistics``, ``text``/``full`` print only the per-code table and ``json`` prints it as a list.
"""
from __future__ import annotations

import json
from typing import List

from ms_lint.diagnostics import Finding

FORMATS = ("text", "full", "json", "sarif", "github")


def render(name: str, findings: List[Finding], **options) -> str:
    if name in ("text", "full"):
        from ms_lint.formats.text import render as fn

        options["full"] = name == "full"
    elif name == "json":
        if options.get("statistics"):
            return _json_statistics(findings, options.get("unsafe_fixes", False))
        from ms_lint.formats.json_format import render as fn
    elif name == "sarif":
        from ms_lint.formats.sarif import render as fn
    elif name == "github":
        from ms_lint.formats.github import render as fn
    else:
        raise ValueError(name)
    return fn(findings, **options)


def _json_statistics(findings: List[Finding], unsafe_fixes: bool) -> str:
    from ms_lint.codes import CODES
    from ms_lint.formats.text import fixable_counts

    rows = []
    for code in sorted({f.code for f in findings}):
        mine = [f for f in findings if f.code == code]
        safe, unsafe = fixable_counts(mine, unsafe_fixes)
        rows.append({"code": code, "name": CODES.get(code, ""), "count": len(mine), "fixable": safe,
                     "fixable_with_unsafe_fixes": unsafe})
    rows.sort(key=lambda row: (-row["count"], row["code"]))
    return json.dumps(rows, indent=2) + "\n"
