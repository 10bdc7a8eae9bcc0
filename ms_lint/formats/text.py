"""``path:line:col: CODE message``, ``[*]`` where a fix is available, then a summary (ruff's layout)."""
from __future__ import annotations

from collections import Counter
from typing import List

from ms_lint.codes import CODES
from ms_lint.diagnostics import Finding


def render(findings: List[Finding], statistics: bool = False, show_summary: bool = True, **_) -> str:
    lines = []
    for f in findings:
        marker = ""
        if f.fix:
            marker = " [*]" if f.fix["applicability"] == "safe" else " [*unsafe]"
        lines.append(f"{f.path}:{f.line}:{f.column}: {f.code}{marker} {f.message}")
    if statistics and findings:
        counts = Counter(f.code for f in findings)
        fixable = Counter(f.code for f in findings if f.fix)
        lines.append("")
        for code, count in counts.most_common():
            flag = f" ({fixable[code]} fixable)" if fixable[code] else ""
            lines.append(f"{count:>6}  {code}  {CODES.get(code, '')}{flag}")
    if show_summary:
        if findings:
            fixable_safe = sum(1 for f in findings if f.fix and f.fix["applicability"] == "safe")
            fixable_unsafe = sum(1 for f in findings if f.fix and f.fix["applicability"] != "safe")
            noun = "finding" if len(findings) == 1 else "findings"
            summary = f"Found {len(findings)} {noun}"
            extras = []
            if fixable_safe:
                extras.append(f"{fixable_safe} fixable with `ms-lint fix`")
            if fixable_unsafe:
                extras.append(f"{fixable_unsafe} more with `--unsafe-fixes`")
            lines.append(summary + (f" ({'; '.join(extras)})." if extras else "."))
        else:
            lines.append("All checks passed!")
    return "\n".join(lines) + "\n"
