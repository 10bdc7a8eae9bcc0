"""Line and column of nodes: libcst's PositionProvider's answers at about a sixth of its cost.

``MetadataWrapper(module).resolve(PositionProvider)`` regenerates the module's code and, for every token, splits
it on newlines and updates a line and a column, and for every node builds two ``CodePosition`` objects and a
``CodeRange``: on MindSpore's ``ops/function/math_func.py`` (12,754 lines) that took about 1 s, and a cold run
resolved positions for each of the 17 files with findings. A finding needs the position of one or two nodes.

``node_positions`` runs the same code generation with a state that records, per node, only the number of tokens
emitted when the node starts and ends (the same ``record_syntactic_position`` / ``before_codegen`` /
``after_codegen`` protocol PositionProvider uses, so the same start and end tokens), and turns token counts
into lines and columns only for the nodes someone asks about.
"""
from __future__ import annotations

import bisect
import itertools
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

import libcst as cst
from libcst._add_slots import add_slots
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

# What PositionProvider counts as a line break (libcst.metadata.position_provider.NEWLINE_RE).
_NEWLINE = re.compile(r"\r\n?|\n")


@add_slots
@dataclass(frozen=False)
class _TokenCountingState(CodegenState):
    """Code generation that remembers, for each node, how many tokens preceded its start and its end."""

    marks: Dict[cst.CSTNode, Tuple[int, int]] = field(default_factory=dict)
    starts: List[int] = field(default_factory=list)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.starts.pop()
        if node not in self.marks:  # the syntactic position, recorded inside, wins (as in PositionProvider)
            self.marks[node] = (start, len(self.tokens))

    def pop_trailing_newline(self) -> None:
        """Keep every token: marks count tokens, and the module's final code is not needed."""

    @contextmanager
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> Iterator[None]:
        start = len(self.tokens)
        try:
            yield
        finally:
            end = len(self.tokens)
            marks = self.marks
            self.marks[node] = (marks[start_node][0] if start_node is not None else start,
                                marks[end_node][1] if end_node is not None else end)


class NodePositions(Mapping):
    """``positions[node]`` is the ``CodeRange`` PositionProvider gives ``node``, computed when asked."""

    def __init__(self, marks: Dict[cst.CSTNode, Tuple[int, int]], tokens: List[str]):
        self._marks = marks
        self._offsets = [0, *itertools.accumulate(map(len, tokens))]  # token count -> character offset
        code = "".join(tokens)
        self._line_starts = [0, *(match.end() for match in _NEWLINE.finditer(code))]

    def _position(self, token_count: int) -> CodePosition:
        offset = self._offsets[token_count]
        line = bisect.bisect_right(self._line_starts, offset)
        return CodePosition(line, offset - self._line_starts[line - 1])

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end = self._marks[node]
        return CodeRange(self._position(start), self._position(end))

    def __contains__(self, node: object) -> bool:
        return node in self._marks

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._marks)

    def __len__(self) -> int:
        return len(self._marks)


def node_positions(module: cst.Module) -> NodePositions:
    state = _TokenCountingState(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    return NodePositions(state.marks, state.tokens)
