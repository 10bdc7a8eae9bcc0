"""``path:line:col: CODE message``, ``[*]`` where a fix is available, then a summary (ruff's layout).

``full`` (``--output-format full``) adds, under each finding, the source lines it spans with a marker under the
reported code, the case's longer explanation, the fix on offer and where the rule's page is. ``statistics``
prints only the per-code table (ruff's ``--statistics``); ``quiet`` leaves out the summary line.
"""
from __future__ import annotations

import textwrap
from collections import Counter
from typing import Dict, List, Optional

from ms_lint.codes import CODES
from ms_lint.diagnostics import Finding

MAX_SOURCE_LINES = 4
WIDTH = 100


def marker(f: Finding, unsafe_fixes: bool = False) -> str:
    if not f.fix:
        return ""
    if f.fix.get("applicability") == "safe" or unsafe_fixes:
        return " [*]"
    return " [*unsafe]"


def line_of(f: Finding, unsafe_fixes: bool = False) -> str:
    return f"{f.path}:{f.line}:{f.column}: {f.code}{marker(f, unsafe_fixes)} {f.message}"


def render(findings: List[Finding], statistics: bool = False, show_summary: bool = True, full: bool = False,
           quiet: bool = False, unsafe_fixes: bool = False, sources: Optional[Dict[str, str]] = None,
           fixed: int = 0, **_) -> str:
    if statistics:
        return statistics_table(findings, unsafe_fixes)
    lines = []
    cache: Dict[str, Optional[List[str]]] = dict((k, v.splitlines()) for k, v in (sources or {}).items())
    for f in findings:
        lines.append(line_of(f, unsafe_fixes))
        if full:
            lines.extend(_full_block(f, cache))
    if show_summary and not quiet:
        lines.append(summary(findings, unsafe_fixes, fixed))
    return "\n".join(lines) + ("\n" if lines else "")


def fixable_counts(findings: List[Finding], unsafe_fixes: bool = False):
    """(fixable now, fixable only with --unsafe-fixes): what ``fix --apply`` (with the flags given) would fix."""
    safe = sum(1 for f in findings if f.fix and (f.fix.get("applicability") == "safe" or unsafe_fixes))
    unsafe = sum(1 for f in findings if f.fix and f.fix.get("applicability") != "safe" and not unsafe_fixes)
    return safe, unsafe


def summary(findings: List[Finding], unsafe_fixes: bool = False, fixed: int = 0) -> str:
    if not findings:
        return f"Fixed {fixed} {_plural(fixed, 'finding')}; all checks passed!" if fixed else "All checks passed!"
    safe, unsafe = fixable_counts(findings, unsafe_fixes)
    text = f"Found {len(findings)} {_plural(len(findings), 'finding')}"
    extras = []
    if fixed:
        extras.append(f"{fixed} fixed, {len(findings)} remaining")
    if safe:
        extras.append(f"{safe} fixable with `ms-lint fix`" + (" --unsafe-fixes" if unsafe_fixes else ""))
    if unsafe:
        extras.append(f"{unsafe} more with `--unsafe-fixes`")
    return text + (f" ({'; '.join(extras)})." if extras else ".")


def statistics_table(findings: List[Finding], unsafe_fixes: bool = False) -> str:
    """One line per code: count, code, name, and how many ``fix`` can fix (as the summary counts them)."""
    counts = Counter(f.code for f in findings)
    lines = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        safe, unsafe = fixable_counts([f for f in findings if f.code == code], unsafe_fixes)
        flags = []
        if safe:
            flags.append(f"{safe} fixable")
        if unsafe:
            flags.append(f"{unsafe} with --unsafe-fixes")
        flag = f" ({', '.join(flags)})" if flags else ""
        lines.append(f"{count:>6}  {code}  {CODES.get(code, '')}{flag}")
    return "\n".join(lines) + ("\n" if lines else "")


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"


def _source_lines(path: str, cache: Dict[str, Optional[List[str]]]) -> Optional[List[str]]:
    if path not in cache:
        try:
            from ms_lint.source import UnreadableSource, read_source

            cache[path] = read_source(path).text.splitlines()
        except (UnreadableSource, OSError):
            cache[path] = None
    return cache[path]


def _full_block(f: Finding, cache: Dict[str, Optional[List[str]]]) -> List[str]:
    out: List[str] = []
    lines = _source_lines(f.path, cache)
    if lines and 1 <= f.line <= len(lines):
        last = min(max(f.end_line, f.line), len(lines), f.line + MAX_SOURCE_LINES - 1)
        gutter = len(str(last))
        out.append(f"{' ' * gutter} |")
        for number in range(f.line, last + 1):
            text = lines[number - 1].expandtabs(4)
            out.append(f"{number:>{gutter}} | {text}")
            if number == f.line:
                start = max(f.column - 1, 0)
                end = f.end_column - 1 if f.end_line == f.line and f.end_column > f.column else len(text)
                out.append(f"{' ' * gutter} | {' ' * start}{'^' * max(1, end - start)}")
        if last < f.end_line:
            out.append(f"{' ' * gutter} | ...")
        out.append(f"{' ' * gutter} |")
    if f.detail:
        out.extend(_wrapped("why: ", f.detail))
    if f.fix:
        out.extend(_wrapped(f"fix ({f.fix.get('applicability')}): ", f.fix.get("message", "")))
    if f.code in CODES:
        out.append(f"  = help: `ms-lint rule {f.code}` explains {CODES[f.code]}, with the measured costs")
    out.append("")
    return out


def _wrapped(label: str, text: str) -> List[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=f"  = {label}", subsequent_indent="    " + " " * len(label),
                         break_on_hyphens=False) or [f"  = {label}"]
