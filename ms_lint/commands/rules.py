"""``ms-lint rules``: every rule with its code, name, whether it fixes and how safely."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Dict, List

from ms_lint.cli import EXIT_CLEAN
from ms_lint.codes import CODES, UNANALYZABLE


def register(subparsers) -> None:
    parser = subparsers.add_parser("rules", help="list every rule (code, name, fix, summary)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.set_defaults(handler=run)


def rule_table() -> List[Dict[str, object]]:
    """One row per registered rule, then MSL900 (reported by the engine itself, not by a rule class)."""
    from ms_lint.rules import all_rules

    rows: List[Dict[str, object]] = []
    for rule in all_rules():
        rows.append({
            "code": rule.code,
            "name": rule.name or CODES.get(rule.code, ""),
            "fixable": rule.fix_applicability is not None,
            "safety": rule.fix_applicability,  # "safe", "unsafe" or None
            "summary": rule.summary,
        })
    rows.append({
        "code": UNANALYZABLE,
        "name": CODES[UNANALYZABLE],
        "fixable": False,
        "safety": None,
        "summary": "The file could not be read, decoded or parsed, so nothing in it was checked.",
    })
    return rows


def render_text(rows: List[Dict[str, object]]) -> str:
    headers = ["CODE", "NAME", "FIXABLE", "SAFETY", "SUMMARY"]
    cells = [[str(row["code"]), str(row["name"]), "yes" if row["fixable"] else "no",
              str(row["safety"]) if row["fixable"] else "-", str(row["summary"])] for row in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers[:-1])]
    lines = []
    for values in [headers] + cells:
        left = "  ".join(v.ljust(w) for v, w in zip(values[:-1], widths))
        lines.append(f"{left}  {values[-1]}".rstrip())
    lines.append("")
    lines.append("safety: safe fixes are applied by `ms-lint fix --apply`; unsafe ones need --unsafe-fixes too.")
    lines.append("`ms-lint rule CODE` shows a rule's page.")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    rows = rule_table()
    if args.format == "json":
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(rows))
    return EXIT_CLEAN
