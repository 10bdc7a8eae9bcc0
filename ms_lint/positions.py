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
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import libcst as cst
from libcst._add_slots import add_slots
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

from ms_lint.chunks import LINE_END, ast_runs, chunk_bounds, line_starts
from ms_lint.fasttree import NeedsRealTree, is_fast_module

# What PositionProvider counts as a line break (libcst.metadata.position_provider.NEWLINE_RE).


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
        self._line_starts = line_starts(code)

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
    if is_fast_module(module):  # its code is not the file's: the positions would not be either
        raise NeedsRealTree("positions from a fast tree's code")
    state = _TokenCountingState(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    return NodePositions(state.marks, state.tokens)


class StatementPositions(Mapping):
    """Positions of the nodes inside a module's top-level statements and the members of its top-level classes, each
    such unit generated alone.

    A finding needs the positions of a few nodes of a few functions; generating the whole module's code for them
    cost a 50,000-line file of Cells 8.7 s of a 45 s check, and generating each class with a finding still cost it
    about 2 s: a finding in one method generated the whole class. A node is placed through ``parents`` (the
    engine's map of graph code, child -> parent) in the innermost unit that holds it: a member (method) of a
    top-level class, else a top-level statement. The unit's code is generated alone (its first line counted as line
    1; a member under its class body's indentation), and its first line in the file comes from the stdlib ``ast``,
    whose top-level statements, and the statements of a top-level class's body, are libcst's (a
    ``SimpleStatementLine`` holds one ``ast`` statement per small statement) with the same line as the statement's
    syntactic start (the keyword, or the first small statement). The unit's code must be the file's text at that
    line, else, and for any node not placed this way, every position comes from ``node_positions`` of the whole
    module: the answers are ``node_positions``'s either way (``tests/test_positions.py`` compares them node by
    node).
    """

    # Units whose positions are kept (the most recently placed): a file with a finding in each of its 3,000
    # classes kept every class's positions, 43 MB of a 272 MB check of the 55k-line generated file. The engine
    # places a file's findings unit by unit (``statement_rank``), so each is generated once.
    KEEP = 16

    def __init__(self, module: cst.Module, text: str, parents: Mapping[cst.CSTNode, cst.CSTNode]):
        if is_fast_module(module):
            raise NeedsRealTree("positions from a fast tree's code")
        self._module = module
        self._text = text
        self._parents = parents
        self._units: Optional[Dict[cst.CSTNode, Tuple[int, Optional[str]]]] = None  # unit -> (rank, body indent)
        self._first_lines: Optional[Dict[cst.BaseStatement, int]] = None
        self._line_starts: Optional[List[int]] = None
        self._placed: "OrderedDict[cst.BaseStatement, Optional[Tuple[NodePositions, int]]]" = OrderedDict()
        self._full: Optional[NodePositions] = None

    def statement_rank(self, node: object) -> int:
        """The position in the module of the unit holding ``node`` (-1 when it is not placed through one): the
        order in which to ask for many nodes' positions."""
        unit = self._statement_of(node) if isinstance(node, cst.CSTNode) else None
        return self._unit_table()[unit][0] if unit is not None else -1

    # -- Mapping -------------------------------------------------------------------------------------------
    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        placed = self._place(node)
        if placed is None:
            return self._whole()[node]
        positions, lines_before = placed
        where = positions[node]
        return CodeRange(CodePosition(where.start.line + lines_before, where.start.column),
                         CodePosition(where.end.line + lines_before, where.end.column))

    def __contains__(self, node: object) -> bool:
        return self._place(node) is not None or node in self._whole()

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())

    # -- internals -----------------------------------------------------------------------------------------
    def _whole(self) -> NodePositions:
        if self._full is None:
            self._full = node_positions(self._module)
        return self._full

    def _place(self, node: object) -> Optional[Tuple[NodePositions, int]]:
        """The positions of the unit holding ``node`` and the number of lines above that unit."""
        if self._full is not None or not isinstance(node, cst.CSTNode):
            return None
        unit = self._statement_of(node)
        if unit is None:
            return None
        if unit in self._placed:
            self._placed.move_to_end(unit)
        else:
            self._placed[unit] = self._generate(unit)
            if len(self._placed) > self.KEEP:
                self._placed.popitem(last=False)
        placed = self._placed[unit]
        return placed if placed is not None and node in placed[0] else None

    def _unit_table(self) -> Dict[cst.CSTNode, Tuple[int, Optional[str]]]:
        """Each unit -> (its rank in the module, the indentation of the class body that holds it, None for a
        top-level statement). Members are units only where ``ast`` pairs them (``_first_line_of``)."""
        if self._units is None:
            units: Dict[cst.CSTNode, Tuple[int, Optional[str]]] = {}
            first_lines = self._first_lines_table()
            for statement in self._module.body:
                units[statement] = (len(units), None)
                if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
                    indent = statement.body.indent
                    indent = self._module.default_indent if indent is None else indent
                    for member in statement.body.body:
                        if member in first_lines:
                            units[member] = (len(units), indent)
            self._units = units
        return self._units

    def _statement_of(self, node: cst.CSTNode) -> Optional[cst.BaseStatement]:
        """The innermost unit holding ``node``."""
        units = self._unit_table()
        current: Optional[cst.CSTNode] = node
        for _ in range(10_000):
            if current is None:
                return None
            if current in units:
                return current  # type: ignore[return-value]
            current = self._parents.get(current)
        return None

    def _generate(self, unit: cst.BaseStatement) -> Optional[Tuple[NodePositions, int]]:
        first_line = self._first_line_of(unit)
        if first_line is None:
            return None
        state = _TokenCountingState(default_indent=self._module.default_indent,
                                    default_newline=self._module.default_newline)
        indent = self._unit_table()[unit][1]
        if indent is not None:  # a member: generated under its class body's indentation
            state.increase_indent(indent)
        unit._codegen(state)
        positions = NodePositions(state.marks, state.tokens)
        if unit not in positions:
            return None
        lines_before = first_line - positions[unit].start.line
        line_starts = self._line_starts_of_text()
        if not 0 <= lines_before < len(line_starts):
            return None
        tokens = state.tokens
        if (unit is self._module.body[-1] and not self._module.has_trailing_newline and tokens
                and LINE_END.fullmatch(tokens[-1])):
            tokens = tokens[:-1]  # the file's last line has no line break (the module's code drops it too)
        if not self._text.startswith("".join(tokens), line_starts[lines_before]):
            return None  # not the text at that line: trust nothing computed this way
        return positions, lines_before

    def _line_starts_of_text(self) -> List[int]:
        if self._line_starts is None:
            self._line_starts = line_starts(self._text)
        return self._line_starts

    def _first_lines_table(self) -> Dict[cst.BaseStatement, int]:
        if self._first_lines is None:
            self._first_lines = _ast_first_lines(self._module, self._text)
        return self._first_lines

    def _first_line_of(self, statement: cst.BaseStatement) -> Optional[int]:
        """The line of the unit's syntactic start (its keyword; its first small statement), from ``ast``."""
        return self._first_lines_table().get(statement)


def _ast_first_lines(module: cst.Module, text: str) -> Dict[cst.BaseStatement, int]:
    """libcst's top-level statements, and the statements of top-level classes' bodies, -> the line ``ast`` gives
    their first ``ast`` statement; empty when the top-level statements do not pair up one to one (a class whose
    body does not pair up keeps its own line and gives none for its members)."""
    starts = _ast_statement_lines(text)
    top = _paired(module.body, starts) if starts is not None else None
    if top is None:
        return {}
    lines: Dict[cst.BaseStatement, int] = {}
    for statement, (line, members) in top:
        lines[statement] = line
        if members is not None and isinstance(statement, cst.ClassDef) and isinstance(statement.body,
                                                                                        cst.IndentedBlock):
            inner = _paired(statement.body.body, [(member, None) for member in members])
            lines.update((member, member_line) for member, (member_line, _) in inner or ())
    return lines


def _paired(statements: Sequence[cst.BaseStatement], starts: List[Tuple[int, Optional[List[int]]]]
            ) -> Optional[List[Tuple[cst.BaseStatement, Tuple[int, Optional[List[int]]]]]]:
    """Each libcst statement with the ``ast`` statement it starts with (a ``SimpleStatementLine`` holds one per
    small statement); None when the counts differ."""
    paired = []
    index = 0
    for statement in statements:
        if index >= len(starts):
            return None
        paired.append((statement, starts[index]))
        index += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return paired if index == len(starts) else None


def _ast_statement_lines(text: str) -> Optional[List[Tuple[int, Optional[List[int]]]]]:
    """(line, the lines of its body's statements for a class, else None) of each top-level ``ast`` statement; a
    long module is parsed a run of statements at a time (``ms_lint.chunks.ast_runs``: ``ast.parse`` peaks at about
    5 KB per line), and whole when a run does not parse. None when the module does not parse."""
    import ast

    def described(statement) -> Tuple[int, Optional[List[int]]]:
        members = [member.lineno for member in statement.body] if isinstance(statement, ast.ClassDef) else None
        return statement.lineno, members

    bounds = chunk_bounds(text)
    if len(bounds) > 1:
        try:
            return [described(statement) for tree in ast_runs(text, bounds) for statement in tree.body]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # a cut inside a string or a bracket: the whole module decides
    try:
        return [described(statement) for statement in ast.parse(text).body]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
