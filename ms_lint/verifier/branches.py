"""Which branches of the original's tensor ``if``s ran: a probe on each condition, read in a PyNative run.

An MSL201 rewrite (``if c: a else: b`` -> ``ops.where(c, a, b)``) is only compared on the side that the drawn
inputs reach; when every draw takes the same branch, the other side was never checked. In graph mode the branch
taken cannot be observed from Python, so the verifier runs a *probed* copy of the original once more, in PyNative
mode with ``MS_JIT=0`` (``ms.jit`` functions and Cells run as plain Python, on the same inputs and weights): each
probed condition ``c`` becomes ``__ms_lint_probe__(ID, c)``, which records ``bool(c)`` -- the very value the ``if``
then tests -- and returns ``c`` unchanged. For an ``if``/``elif`` chain, branch ``k`` ran as often as probe ``k``
was true (it is only evaluated when the ones before it were false); the ``else`` side ran as often as the last
probe was false. Nothing is inferred: a draw whose PyNative run fails gives no coverage, and the report says so.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

PROBE_NAME = "__ms_lint_probe__"


@dataclass
class Chain:
    """One ``if`` (with its ``elif``s) or one conditional expression at a finding's line."""

    line: int
    kind: str  # "if" | "ifexp"
    probes: List[int] = field(default_factory=list)  # probe ids, in chain order
    lines: List[int] = field(default_factory=list)  # line of each condition
    spans: List[Tuple[int, int, int, int]] = field(default_factory=list)  # each condition's ast position
    has_else: bool = False

    def branch_names(self) -> List[str]:
        names = []
        for index, line in enumerate(self.lines):
            names.append("then" if index == 0 else f"elif (line {line})")
        names.append("else" if self.has_else or self.kind == "ifexp" else "no branch (falls through)")
        return names

    def to_json(self) -> Dict[str, object]:
        return {"line": self.line, "kind": self.kind, "probes": list(self.probes), "lines": list(self.lines),
                "has_else": self.has_else}


def _span(node: ast.expr) -> Tuple[int, int, int, int]:
    return (node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0)


def _is_elif(lines: List[str], node: ast.If) -> bool:
    text = lines[node.lineno - 1][node.col_offset:] if node.lineno - 1 < len(lines) else ""
    return text.lstrip().startswith("elif")


def find_chains(source: str, lines_wanted: Sequence[int]) -> List[Chain]:
    """The ``if`` statements and conditional expressions whose condition starts on one of ``lines_wanted``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    text_lines = source.splitlines()
    wanted = set(lines_wanted)
    chains: List[Chain] = []
    in_chain = set()
    next_id = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.lineno in wanted and id(node) not in in_chain:
            if _is_elif(text_lines, node):
                continue  # the head of its chain is probed (or it was not asked for)
            chain = Chain(line=node.lineno, kind="if")
            current = node
            while True:
                in_chain.add(id(current))
                chain.probes.append(next_id)
                chain.lines.append(current.test.lineno)
                chain.spans.append(_span(current.test))
                next_id += 1
                orelse = current.orelse
                if len(orelse) == 1 and isinstance(orelse[0], ast.If) and _is_elif(text_lines, orelse[0]):
                    current = orelse[0]
                    continue
                chain.has_else = bool(orelse)
                break
            chains.append(chain)
        elif isinstance(node, ast.IfExp) and (node.lineno in wanted or node.test.lineno in wanted):
            chains.append(Chain(line=node.lineno, kind="ifexp", probes=[next_id], lines=[node.test.lineno],
                                spans=[_span(node.test)], has_else=True))
            next_id += 1
    chains.sort(key=lambda c: (c.line, c.probes[0]))
    return chains


def instrument(source: str, chains: List[Chain]) -> str:
    """``source`` with each probed condition wrapped in ``__ms_lint_probe__(ID, ...)``."""
    if not chains:
        return source
    lines = source.splitlines(keepends=True)
    raw = [line.encode("utf-8") for line in lines]
    # insert from the end, so earlier offsets stay valid (ast offsets are in UTF-8 bytes)
    edits: List[Tuple[int, int, bytes]] = []
    for chain in chains:
        for probe, (line, col, end_line, end_col) in zip(chain.probes, chain.spans):
            edits.append((line - 1, col, f"{PROBE_NAME}({probe}, ".encode()))
            edits.append((end_line - 1, end_col, b")"))
    for row, col, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        raw[row] = raw[row][:col] + text + raw[row][col:]
    return b"".join(raw).decode("utf-8")


def coverage(chains: List[Chain], per_draw: Sequence[Optional[Dict[str, List[int]]]]) -> List[Dict[str, object]]:
    """For each chain, how often each branch ran in each draw.

    ``per_draw[d]`` is ``{probe id (str): [true count, false count]}`` from the probed run of draw ``d`` (None when
    that run failed)."""
    report = []
    for chain in chains:
        names = chain.branch_names()
        counts: List[List[Optional[int]]] = []  # [draw][branch]
        for draw in per_draw:
            if draw is None:
                counts.append([None] * len(names))
                continue
            row = []
            for index, probe in enumerate(chain.probes):
                row.append(int(draw.get(str(probe), [0, 0])[0]))
            last = chain.probes[-1]
            row.append(int(draw.get(str(last), [0, 0])[1]))
            counts.append(row)
        report.append({"line": chain.line, "kind": chain.kind, "branches": names, "counts": counts})
    return report


def unexercised(entry: Dict[str, object]) -> List[str]:
    """The branch names of one coverage entry that ran in no draw (empty when coverage is unknown)."""
    counts = [row for row in entry["counts"] if row[0] is not None]  # type: ignore[index]
    if not counts:
        return []
    names = entry["branches"]  # type: ignore[assignment]
    return [name for index, name in enumerate(names) if not any(row[index] for row in counts)]  # type: ignore


def describe(entry: Dict[str, object]) -> str:
    """``if at line 12: then in draws 0, 2 (5 times); else in draw 1 (3 times)``."""
    what = "if" if entry["kind"] == "if" else "conditional expression"
    rows = entry["counts"]  # type: ignore[assignment]
    if all(row[0] is None for row in rows):  # type: ignore[union-attr]
        return f"{what} at line {entry['line']}: unknown (the probed PyNative run failed)"
    parts = []
    for index, name in enumerate(entry["branches"]):  # type: ignore[arg-type]
        draws = [str(d) for d, row in enumerate(rows) if row[index]]  # type: ignore[arg-type, index]
        times = sum(row[index] or 0 for row in rows)  # type: ignore[union-attr, index]
        if draws:
            label = "draw" if len(draws) == 1 else "draws"
            parts.append(f"{name} in {label} {', '.join(draws)} ({times} time{'s' if times != 1 else ''})")
        else:
            parts.append(f"{name} never")
    return f"{what} at line {entry['line']}: " + "; ".join(parts)
