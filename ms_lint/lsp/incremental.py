"""Re-parsing only what an edit touched: a document's libcst module, rebuilt from the top-level statements of the
last parse that the edit left alone, and node positions computed per top-level statement.

A top-level statement starts at column 0 of a logical line with nothing open, so the parser's answer for it does
not depend on the statements around it, with three exceptions this module guards against (falling back to a full
``parse_module`` whenever one could apply):

* lines before a module's first statement are the module's ``header``, elsewhere the statement's
  ``leading_lines``: the re-parsed chunk's header is moved to its first statement;
* comments after the last statement are the module's ``footer``: a chunk that does not reach the end of the file
  must have none, one that does gives the module its footer;
* the module's ``default_indent`` and ``default_newline`` come from its first indented block and its first line
  end (blocks and newlines equal to them are stored as None): a chunk that detects other defaults than the
  module had is parsed whole, and so is an edit of the first statement or the header.

The chunk is the statements the edit touched, with the one before when the edit reaches the first line of the
first of them (or the comments and blank lines above it, which may belong to the statement before), and the one
after when it reaches the last line of the last of them (a joined line, a bracket left open). An edit inside a
statement that parses alone keeps the lines around it: the statement still starts at column 0 after them and
ends with a whole line before the next. ``tests/test_lsp_incremental.py`` compares the result with a full parse
(``deep_equals``) over many edits of the fixtures.
"""
from __future__ import annotations

import bisect
import re
from typing import Dict, List, Mapping, Optional, Tuple

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from ms_lint.common_text import common_prefix, common_suffix
from ms_lint.cstutil import parse_module
from ms_lint.lsp.runs import DocumentRuns
from ms_lint.positions import NodePositions, _TokenCountingState, node_positions
from ms_lint.scope import TreeFacts

_NEWLINE = re.compile(r"\r\n?|\n")


class _Statement:
    """A top-level statement's code and the positions of its nodes, its first line counted as line 1."""

    __slots__ = ("node", "code", "positions")

    def __init__(self, node: cst.BaseStatement, module: cst.Module):
        state = _TokenCountingState(default_indent=module.default_indent, default_newline=module.default_newline)
        node._codegen(state)
        self.node = node
        self.code = "".join(state.tokens)
        self.positions = NodePositions(state.marks, state.tokens)


def _code_of(nodes, module: cst.Module) -> str:
    state = _TokenCountingState(default_indent=module.default_indent, default_newline=module.default_newline)
    for node in nodes:
        node._codegen(state)
    return "".join(state.tokens)


class IncrementalParser:
    """Parses the successive texts of one document; ``parse`` equals ``cst.parse_module`` on every text."""

    def __init__(self) -> None:
        self.text: Optional[str] = None
        self.module: Optional[cst.Module] = None
        self._statements: List[_Statement] = []
        self._starts: List[int] = []  # character offset of each top-level statement in ``text``
        self._by_node: Dict[cst.CSTNode, _Statement] = {}
        self.full_parses = 0  # how many texts were parsed whole (tests, the benchmark)
        # what the last scope of the last tree worked out from trees alone (``scope.TreeFacts``): a statement the
        # edit left alone keeps its nodes, and their facts hold (``ModuleContext``); empty before the first
        self.tree_facts = TreeFacts()
        # the stdlib summary and compiling of each run of top-level statements of the last text (``runs``)
        self.runs = DocumentRuns()

    def parse(self, text: str) -> cst.Module:
        if self.module is not None and text == self.text:
            return self.module
        module = self._reparse(text) if self.module is not None and self._statements else None
        if module is None:
            module = parse_module(text)  # what it raises is the engine's to report, as for any parse
            self.full_parses += 1
            self._index(text, module, self._statements_of(module, module.body))
        return module

    @staticmethod
    def _statements_of(module: cst.Module, nodes) -> List[_Statement]:
        """The statements' code and positions; none (nothing reused next time) where code generation recurses
        too deep: that must not turn into a finding a full parse would not give."""
        try:
            return [_Statement(node, module) for node in nodes]
        except (RecursionError, MemoryError):
            return []

    def positions(self, module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
        """``ms_lint.positions.node_positions(module)`` for the module ``parse`` returned last."""
        if module is not self.module or not self._statements and module.body:
            return node_positions(module)
        return _ModulePositions(self, module)

    # -- internals -------------------------------------------------------------------------------------
    def _index(self, text: str, module: cst.Module, statements: List[_Statement]) -> None:
        """Remember the module and where each statement starts; if the pieces do not give back the text exactly
        (a file without a final newline), statements are not reused for the next text."""
        if not statements and module.body:
            self.text, self.module, self._statements, self._starts, self._by_node = text, module, [], [], {}
            return
        header = _code_of(module.header, module)
        offset = len(header)
        starts = []
        for statement in statements:
            starts.append(offset)
            offset += len(statement.code)
        pieces_match = text.startswith(header) and all(
            text.startswith(s.code, start) for s, start in zip(statements, starts))
        footer = _code_of(module.footer, module)
        if not pieces_match or offset + len(footer) != len(text) or not text.endswith(footer):
            statements, starts = [], []
        self.text, self.module = text, module
        self._statements, self._starts = statements, starts
        self._by_node = {s.node: s for s in statements}

    def _reparse(self, text: str) -> Optional[cst.Module]:
        old, module = self.text, self.module
        assert old is not None and module is not None
        prefix = common_prefix(old, text)
        suffix = common_suffix(old, text, min(len(old), len(text)) - prefix)
        changed_end = len(old) - suffix  # the edit replaced old[prefix:changed_end]
        starts, statements = self._starts, self._statements
        count = len(statements)
        first = max(bisect.bisect_right(starts, prefix) - 1, 0)
        last = max(bisect.bisect_right(starts, max(changed_end - 1, prefix)) - 1, first)
        if prefix <= starts[first] + _head_length(statements[first].code):
            first -= 1  # the edit reaches the statement's first line or the lines before it: they may join the last
        if changed_end > starts[last] + _last_line_start(statements[last].code):
            last = min(last + 1, count - 1)  # the edit reaches its last line: the next one may join it
        if first < 1 or prefix < starts[0]:
            return None  # the header or the first statement: parse it whole
        to_end = last == count - 1
        chunk_start = starts[first]
        old_end = len(old) if to_end else starts[last + 1]
        new_end = old_end + len(text) - len(old)
        if not chunk_start <= prefix or changed_end > old_end or new_end < chunk_start:
            return None
        try:
            chunk = parse_module(text[chunk_start:new_end])
        except (cst.ParserSyntaxError, RecursionError, MemoryError):
            return None
        if (chunk.default_indent != module.default_indent or chunk.default_newline != module.default_newline
                or chunk.encoding != module.encoding or (chunk.footer and not to_end) or not chunk.body):
            return None
        body = list(chunk.body)
        if chunk.header:
            body[0] = body[0].with_changes(leading_lines=(*chunk.header, *body[0].leading_lines))
        changes = {"body": (*module.body[:first], *body, *module.body[last + 1:])}
        if to_end:
            changes.update(footer=chunk.footer, has_trailing_newline=chunk.has_trailing_newline)
        new_module = module.with_changes(**changes)
        rebuilt = self._statements_of(new_module, body)
        if len(rebuilt) != len(body):
            return None
        self._index(text, new_module, [*statements[:first], *rebuilt, *statements[last + 1:]])
        if not self._statements:
            return None  # the pieces do not give back the text: parse it whole
        return new_module


class _ModulePositions(Mapping):
    """Positions of a module's nodes from its statements' own, each moved down by the lines above it."""

    def __init__(self, parser: IncrementalParser, module: cst.Module):
        self._module = module
        text = parser.text or ""
        line_starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
        self._parts = [(s, bisect.bisect_right(line_starts, start) - 1)
                       for s, start in zip(parser._statements, parser._starts)]
        self._full: Optional[NodePositions] = None

    def _find(self, node) -> Optional[Tuple[_Statement, int]]:
        for statement, offset in self._parts:
            if node in statement.positions:
                return statement, offset
        return None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._find(node)
        if found is None:  # the module, its header or footer
            if self._full is None:
                self._full = node_positions(self._module)
            return self._full[node]
        statement, offset = found
        where = statement.positions[node]
        return CodeRange(CodePosition(where.start.line + offset, where.start.column),
                         CodePosition(where.end.line + offset, where.end.column))

    def __contains__(self, node: object) -> bool:
        if self._find(node) is not None:
            return True
        if self._full is None:
            self._full = node_positions(self._module)
        return node in self._full

    def __iter__(self):
        if self._full is None:
            self._full = node_positions(self._module)
        return iter(self._full)

    def __len__(self) -> int:
        if self._full is None:
            self._full = node_positions(self._module)
        return len(self._full)


def _head_length(code: str) -> int:
    """The length of a statement's code up to the end of its first line that is neither blank nor only a comment
    (its leading lines, then its ``def``, decorator or first line)."""
    position = 0
    while position < len(code):
        end = code.find("\n", position)
        end = len(code) if end < 0 else end + 1
        stripped = code[position:end].strip()
        if stripped and not stripped.startswith("#"):
            return end
        position = end
    return len(code)


def _last_line_start(code: str) -> int:
    """Where the last line of a statement's code starts (its final line end not counted)."""
    return code.rfind("\n", 0, max(len(code) - 1, 0)) + 1
