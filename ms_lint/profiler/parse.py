"""Read what one profiled compile leaves behind: the ``MS_JIT=COMPILE_PROFILE:1`` timing tree and the ``.ir`` dumps.

The timing tree (MindSpore 2.10 prints it on stdout, once per compiled graph)::

    TotalTime = 0.659143, [25]
    [bootstrap]: 0.000548529
    [type_inference]: 0.328431
    [optimize]: 0.133223, [54]
        [py_interpret_to_execute]: 0.00153147
    ...
    Sums

Only the unindented ``[phase]: seconds`` lines after ``TotalTime`` are phases of the pipeline; the indented ones
are their sub-steps. With ``MS_DEV_RUNTIME_CONF="compile_statistics:True"`` the backend adds its own steps, each
printed when it ends (children before parents), before the tree of the graph they compile (they run in its
``task_emit``), and for a Cell a few after it::

    [PROF]ConstructKernelGraph costs 4.168 msec.
    [PROF]OptimizeGraph costs 16.186 msec.
    [PROF]compile_backend_graph costs 48.947 msec.
    ...
    [PROF]compile_graph costs 764.389 msec.      (a Cell only: after its tree)

An ``.ir`` dump (``MS_DEV_SAVE_GRAPHS=1``) lists every node followed by its source trace, outermost frame first::

      %0(CNode_14) = PrimFunc_Cast(%para3_input, I64(30)) ...
          : (<Tensor[Bool], ()>, <Int64, NoShape>) -> (<Tensor[Bool], ()>)
          # Fullname with scope: (Default/branch-BranchBlock/Cast-op0)
          # In file /tmp/net.py:28~30, 4~29/    def construct(self, x):/
          # In file /tmp/net.py:15, 11~18/        if x.sum() > 0:/
          # In file .../mindspore/graph/_parse/standard_method.py:2791~2793/def bool_(x):/

A frame whose text is a ``def`` is the function the node is in; the others are the statement that made it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

_TOTAL = re.compile(r"^TotalTime = ([0-9.eE+-]+)")
_PHASE = re.compile(r"^\[([^\]]+)\]: ([0-9.eE+-]+)")
_FRAME = re.compile(r"# In file (.+?):(\d+)(?:~(\d+))?(?:, [\d~]+)?/(.*)/\s*$")
_BACKEND = re.compile(r"^\[PROF\](\w+) costs ([0-9.eE+-]+) msec")
AFTER_TREE = frozenset({"ParallelPostProcess", "CleanCompileRes", "compile_graph", "PreLaunchCommKernel"})
_DUMP = re.compile(r"^(\d+)_(type_inference|validate)_(\d+)\.ir$")


@dataclass
class CompileTimes:
    """One graph's compile: ``TotalTime`` and its top-level phases, in pipeline order."""

    total_s: float
    phases: List[Tuple[str, float]] = field(default_factory=list)
    backend: List[Tuple[str, float]] = field(default_factory=list)  # ``[PROF]`` steps, in the order printed

    def phase(self, name: str) -> float:
        return sum(t for n, t in self.phases if n == name)


def parse_profile(text: str) -> List[CompileTimes]:
    """Every timing tree in ``text`` (a process's stdout), in order."""
    compiles: List[CompileTimes] = []
    current: Optional[CompileTimes] = None
    pending: List[Tuple[str, float]] = []  # backend steps of the graph whose tree comes next
    for line in text.splitlines():
        total = _TOTAL.match(line)
        if total:
            current = CompileTimes(float(total.group(1)), backend=pending)
            pending = []
            compiles.append(current)
            continue
        step = _BACKEND.match(line)
        if step:
            name, seconds = step.group(1), float(step.group(2)) / 1000
            if name in AFTER_TREE and compiles and not pending:
                compiles[-1].backend.append((name, seconds))
            else:
                pending.append((name, seconds))
            current = None
            continue
        if current is None:
            continue
        phase = _PHASE.match(line)
        if phase:
            current.phases.append((phase.group(1), float(phase.group(2))))
        elif line.strip() and not line.startswith((" ", "\t")):
            current = None  # "Sums", the user's own prints: the tree is over
    return compiles


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    end_line: int
    text: str

    @property
    def is_def(self) -> bool:
        # a decorated function's frame starts at its first decorator: ``file.py:6~11/@ms.jit/``
        return self.text.lstrip().startswith(("def ", "async def ", "@"))


@dataclass
class Node:
    graph: str  # the subgraph it is in
    callee: Optional[str]  # the subgraph it calls (``call @name(...)``), if any
    frames: List[Frame]


_SUBGRAPH = re.compile(r"^subgraph @(\S+?)(?:\(| parent:)")
_CALL = re.compile(r"= call @(\S+?)\(")


def read_graph(ir_text: str) -> Tuple[List[Node], Dict[str, List[Frame]]]:
    """Every node of one dump, with its trace, outermost frame first; and each subgraph's header trace (the
    ``# In file`` lines just above ``subgraph @name``: the function it was made from)."""
    nodes: List[Node] = []
    headers: Dict[str, List[Frame]] = {}
    current: Optional[List[Frame]] = None
    header: Optional[List[Frame]] = None  # the trace block just read, when it belongs to no node
    previous = ""
    graph = ""
    statement = ""
    for raw in ir_text.splitlines():
        line = raw.strip()
        if line.startswith("# In file "):
            if current is None:
                current = []
                if previous.startswith("# Fullname with scope"):  # a node (not a subgraph's header)
                    call = _CALL.search(statement)
                    nodes.append(Node(graph, call.group(1) if call else None, current))
                    header = None
                else:
                    header = current
            match = _FRAME.match(line)
            if match:
                start = int(match.group(2))
                current.append(Frame(match.group(1), start, int(match.group(3) or start), match.group(4)))
            continue
        block = header if current is not None else None  # a header ends right above its ``subgraph @`` line
        current = header = None
        previous = line
        if line.startswith(("%", "Return(")):
            statement = line
        elif raw.startswith("subgraph @"):
            found = _SUBGRAPH.match(raw)
            graph = found.group(1) if found else ""
            if block is not None:
                headers[graph] = block
    return nodes, headers


def read_nodes(ir_text: str) -> List[Node]:
    """Every node of one dump (subgraph headers left out), with its trace, outermost frame first."""
    return read_graph(ir_text)[0]


def node_traces(ir_text: str) -> List[List[Frame]]:
    return [node.frames for node in read_nodes(ir_text)]


@dataclass
class NodeCounts:
    """Nodes of one dump attributed to the user's code: per (file, line) and per (file, def line, name)."""

    total: int = 0
    unattributed: int = 0  # nodes whose trace has no frame in the user's files (MindSpore's own graphs)
    lines: Dict[Tuple[str, int], int] = field(default_factory=dict)
    functions: Dict[Tuple[str, int, str], int] = field(default_factory=dict)
    texts: Dict[Tuple[str, int], str] = field(default_factory=dict)


_DEF_NAME = re.compile(r"(?:async\s+)?def\s+(\w+)")


def count_nodes(ir_text: str, is_user_file: Callable[[str], bool]) -> NodeCounts:
    """Each node goes to the innermost frame in the user's files: the statement line, and the enclosing def.

    A ``call @g(...)`` node goes where most of ``g``'s own nodes go when ``g`` is made from the user's code: the
    calls that chain the iterations of an unrolled loop carry only the call site in their trace
    (``y = self.loop(x)``), not the loop. A call of one of MindSpore's own graphs (``_tensor_add_scalar``...) stays
    where it is: such a graph is shared by every call with the same types, and its nodes carry the trace of the
    first caller only (a loop's calls would all go to the line before the loop).
    """
    counts = NodeCounts()
    placed = []
    by_graph: Dict[str, Dict[Tuple[Frame, Optional[Frame]], int]] = {}
    nodes, headers = read_graph(ir_text)
    users_graph = {name for name, frames in headers.items() if frames and is_user_file(frames[0].path)}
    for node in nodes:
        counts.total += 1
        user = [f for f in node.frames if is_user_file(f.path)]
        statements = [f for f in user if not f.is_def]
        if not statements:
            counts.unattributed += 1
            continue
        where = statements[-1]
        defs = [f for f in user if f.is_def and f.line <= where.line <= f.end_line]
        spot = (where, defs[-1] if defs else None)
        placed.append((node, spot))
        if node.callee is None:
            graph_spots = by_graph.setdefault(node.graph, {})
            graph_spots[spot] = graph_spots.get(spot, 0) + 1
    for node, spot in placed:
        if node.callee in users_graph and by_graph.get(node.callee):
            spots = by_graph[node.callee]
            spot = max(spots, key=lambda s: (spots[s], -s[0].line))
        where, function = spot
        key = (where.path, where.line)
        counts.lines[key] = counts.lines.get(key, 0) + 1
        counts.texts.setdefault(key, where.text.strip())
        if function is not None:
            match = _DEF_NAME.match(function.text.strip())
            fkey = (function.path, function.line, match.group(1) if match else "?")
            counts.functions[fkey] = counts.functions.get(fkey, 0) + 1
    return counts


def dump_files(folder: str) -> List[Tuple[str, str]]:
    """``(pass, path)`` of the type_inference and validate dumps, in the order MindSpore wrote them (the last
    number of the name is a process-wide counter: one type_inference then one validate per compiled graph)."""
    found = []
    for root, _dirs, names in os.walk(folder):
        for name in names:
            match = _DUMP.match(name)
            if match:
                found.append((int(match.group(3)), match.group(2), os.path.join(root, name)))
    found.sort()
    return [(kind, path) for _, kind, path in found]


def pair_dumps(folder: str) -> List[Dict[str, str]]:
    """One ``{"type_inference": path, "validate": path}`` per compiled graph, in compile order."""
    graphs: List[Dict[str, str]] = []
    for kind, path in dump_files(folder):
        if kind == "type_inference" or not graphs or "validate" in graphs[-1]:
            graphs.append({})
        graphs[-1][kind] = path
    return graphs
