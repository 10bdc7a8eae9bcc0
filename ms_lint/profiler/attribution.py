"""From node counts and phase times to seconds per source line, per function and per finding.

Compile cost is close to linear in the number of graph nodes (MindSpore 2.10 CPU: a 10/100/300-iteration loop
compiled in 0.11/0.32/0.78 s with 76/706/2106 nodes on its body line), so each phase's time is split by each line's
share of the nodes of the graph that phase works on: the phases before ``validate`` (parse, type inference, the
optimizer) by the nodes after type inference, ``validate`` and the backend phases after it (``task_emit``...) by
the nodes of the validated graph. A node belongs to the innermost frame of its trace that is in the user's files.
Nodes with no such frame (MindSpore's own graphs) are kept as "unattributed". Tensor ``if``s are under-weighted by
this split (3% of the nodes, about 8% of the time, measured): their cost is partly in passes that do not scale with
nodes.

Each line then belongs to the innermost finding whose span (``line``..``end_line``: the whole loop or ``if``
statement) contains it; a finding's seconds are those of its lines. Lines that cost much and belong to no finding
are where the rules are blind.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ms_lint.profiler.parse import CompileTimes, NodeCounts

LATE_PHASES_FROM = "validate"
BLIND_SHARE = 0.05  # a line without a finding is listed when it has at least this share of the compile


@dataclass
class LineCost:
    path: str
    line: int
    text: str
    nodes: int = 0  # after type inference
    final_nodes: int = 0  # in the validated graph
    seconds: float = 0.0
    function: Optional[str] = None
    owner: Optional[int] = None  # index of the finding that owns it

    def key(self) -> Tuple[str, int]:
        return (self.path, self.line)


@dataclass
class FunctionCost:
    path: str
    line: int
    name: str
    nodes: int = 0
    seconds: float = 0.0


@dataclass
class FindingCost:
    finding: object  # ms_lint.diagnostics.Finding
    nodes: int = 0
    seconds: float = 0.0
    lines: List[int] = field(default_factory=list)
    measured: Optional[dict] = None  # --confirm


@dataclass
class Attribution:
    compile_s: float
    phases: List[Tuple[str, float]]
    lines: List[LineCost]
    functions: List[FunctionCost]
    findings: List[FindingCost]
    unattributed_s: float
    total_nodes: int

    def share(self, seconds: float) -> float:
        return seconds / self.compile_s if self.compile_s > 0 else 0.0

    loops: Dict[Tuple[str, int], Tuple[int, int]] = field(default_factory=dict)  # line -> its innermost loop

    def blind(self) -> List[LineCost]:
        """Costly code without a finding: the lines no finding owns, gathered into their innermost ``for``/``while``
        (one row for a loop the rules cannot see), kept when they reach ``BLIND_SHARE`` of the compile."""
        groups: Dict[Tuple[str, int], LineCost] = {}
        for cost in self.lines:
            if cost.owner is not None:
                continue
            span = self.loops.get((cost.path, cost.line))
            key = (cost.path, span[0] if span else cost.line)
            group = groups.get(key)
            if group is None:
                head = next((c for c in self.lines if (c.path, c.line) == key), None) if span else cost
                group = groups[key] = LineCost(cost.path, key[1], head.text if head else cost.text,
                                               function=cost.function)
            group.nodes += cost.nodes
            group.final_nodes += cost.final_nodes
            group.seconds += cost.seconds
        found = [g for g in groups.values() if self.share(g.seconds) >= BLIND_SHARE]
        return sorted(found, key=lambda c: (-c.seconds, c.path, c.line))


def _merge_phases(compiles: Sequence[CompileTimes]) -> List[Tuple[str, float]]:
    order: List[str] = []
    totals: Dict[str, float] = {}
    for times in compiles:
        for name, seconds in times.phases:
            if name not in totals:
                order.append(name)
                totals[name] = 0.0
            totals[name] += seconds
    return [(name, totals[name]) for name in order]


def _split(times: CompileTimes) -> Tuple[float, float]:
    """(seconds of the phases before validate, seconds of validate and after); time not in a phase goes early."""
    early = late = 0.0
    seen_late = False
    for name, seconds in times.phases:
        seen_late = seen_late or name == LATE_PHASES_FROM
        if seen_late:
            late += seconds
        else:
            early += seconds
    early += max(0.0, times.total_s - early - late)
    return early, late


def function_names(source: str) -> Dict[int, str]:
    """``def`` line -> qualified name (``Net.construct``, ``helper``, ``outer.<locals>.inner``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    names: Dict[int, str] = {}

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names[child.lineno] = prefix + child.name
                for decorator in child.decorator_list:  # the IR's frame of a decorated def starts there
                    names.setdefault(decorator.lineno, prefix + child.name)
                walk(child, prefix + child.name + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return names


def attribute(compiles: Sequence[CompileTimes], graphs: Sequence[Dict[str, NodeCounts]],
              findings: Iterable[object], source_of: Callable[[str], Optional[str]]) -> Attribution:
    """Seconds per line, function and finding. ``graphs[i]`` holds the dumps of the graph ``compiles[i]`` timed;
    when the counts differ, all dumps are pooled against all phase times."""
    pairs: List[Tuple[CompileTimes, List[Dict[str, NodeCounts]]]]
    if len(compiles) == len(graphs):
        pairs = [(c, [g]) for c, g in zip(compiles, graphs)]
    else:
        pooled = CompileTimes(sum(c.total_s for c in compiles), _merge_phases(compiles))
        pairs = [(pooled, list(graphs))]
    lines: Dict[Tuple[str, int], LineCost] = {}
    functions: Dict[Tuple[str, int], FunctionCost] = {}
    unattributed = 0.0
    total_nodes = 0
    for times, dumps in pairs:
        early, late = _split(times)
        first = [d.get("type_inference") or d.get("validate") for d in dumps]
        final = [d.get("validate") or d.get("type_inference") for d in dumps]
        for seconds, counts_list, attr in ((early, first, "nodes"), (late, final, "final_nodes")):
            total = sum(c.total for c in counts_list if c)
            if not total:
                unattributed += seconds
                continue
            for counts in counts_list:
                if not counts:
                    continue
                if attr == "nodes":
                    total_nodes += counts.total
                unattributed += seconds * counts.unattributed / total
                for key, n in counts.lines.items():
                    cost = lines.setdefault(key, LineCost(key[0], key[1], counts.texts.get(key, "")))
                    setattr(cost, attr, getattr(cost, attr) + n)
                    cost.seconds += seconds * n / total
                for (path, line, name), n in counts.functions.items():
                    cost = functions.setdefault((path, line), FunctionCost(path, line, name))
                    if attr == "nodes":
                        cost.nodes += n
                    cost.seconds += seconds * n / total
    names: Dict[str, Dict[int, str]] = {}
    for cost in functions.values():
        if cost.path not in names:
            names[cost.path] = function_names(source_of(cost.path) or "")
        cost.name = names[cost.path].get(cost.line, cost.name)
    for cost in lines.values():
        owner = _innermost_def(names.get(cost.path) or {}, functions, cost)
        cost.function = owner
    joined = _join(list(findings), lines)
    loops: Dict[Tuple[str, int], Tuple[int, int]] = {}
    for path in {cost.path for cost in lines.values() if cost.owner is None}:
        spans = loop_spans(source_of(path) or "")
        for cost in lines.values():
            if cost.path == path:
                inside = [s for s in spans if s[0] <= cost.line <= s[1]]
                if inside:
                    loops[(path, cost.line)] = min(inside, key=lambda s: s[1] - s[0])
    compile_s = sum(c.total_s for c in compiles)
    return Attribution(
        compile_s=compile_s,
        phases=_merge_phases(compiles),
        lines=sorted(lines.values(), key=lambda c: (-c.seconds, c.path, c.line)),
        functions=sorted(functions.values(), key=lambda c: (-c.seconds, c.path, c.line)),
        findings=joined,
        unattributed_s=unattributed,
        total_nodes=total_nodes,
        loops=loops,
    )


def loop_spans(source: str) -> List[Tuple[int, int]]:
    """``(first line, last line)`` of every ``for``/``while`` statement."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree)
            if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]


def _innermost_def(names: Dict[int, str], functions: Dict[Tuple[str, int], FunctionCost],
                   cost: LineCost) -> Optional[str]:
    best = None
    for (path, line), function in functions.items():
        if path == cost.path and line <= cost.line and (best is None or line > best[0]):
            best = (line, function.name)
    return best[1] if best else None


def _join(findings: List[object], lines: Dict[Tuple[str, int], LineCost]) -> List[FindingCost]:
    joined = [FindingCost(f) for f in findings]
    for cost in lines.values():
        owner = None
        for index, item in enumerate(joined):
            f = item.finding
            if f.path != cost.path or not f.line <= cost.line <= f.end_line:
                continue
            if owner is None or (f.end_line - f.line) < (joined[owner].finding.end_line -
                                                         joined[owner].finding.line):
                owner = index
        cost.owner = owner
        if owner is not None:
            joined[owner].seconds += cost.seconds
            joined[owner].nodes += cost.nodes
            joined[owner].lines.append(cost.line)
    for item in joined:
        item.lines.sort()
    order = sorted(range(len(joined)), key=lambda i: (-joined[i].seconds, joined[i].finding.path,
                                                      joined[i].finding.line))
    moved = {old: new for new, old in enumerate(order)}
    for cost in lines.values():  # ``owner`` indexes the sorted list
        if cost.owner is not None:
            cost.owner = moved[cost.owner]
    return [joined[i] for i in order]
