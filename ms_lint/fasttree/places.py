"""Where the nodes of fast trees came from, and what libcst would say of them: ``place_of`` (``PositionProvider``'s
range), ``code_of`` (``code_for_node``'s text), ``own_parentheses`` (the length of ``lpar``), read from the source
and ``ast``'s positions (see ``ms_lint.fasttree``).

Every node ``ast`` has a node for (expressions, statements, except clauses) is registered with its position; the
nodes libcst has and ``ast`` has not (``Arg``, an attribute's name...) are not, and the questions above answer None
for them. Every node the builder makes is marked (``is_fast_made``): its ``lpar`` or ``leading_lines`` is one of
the markers below, never libcst's own empty tuple, so a fast node is told from libcst's after its tree was dropped
from the registry too.
"""
from __future__ import annotations

import bisect
from typing import Dict, List, NamedTuple, Optional, Set, Tuple

import libcst as cst

from ms_lint.fasttree.build import COLUMN_BITS, LINE_BITS, MARK_LINES, MARK_PARENS, MASK, MODULE_BITS
from ms_lint.fasttree.text import Source, call_parenthesis, closing_bracket, code_characters, skip_back, skip_forward


class NeedsRealTree(Exception):
    """A question about a fast tree that only libcst's tree answers exactly (the code of a statement, of an
    expression after a line holding a ``#``; the position of a node ``ast`` has no node for): the analysis starts
    again on libcst's trees (``ms_lint.engine``)."""


# The positions of the nodes of the fast trees kept (packed: see ``build._pack``), and each tree's source by number.
# The oldest trees are dropped past ``_KEPT_TREES``: a dropped tree's nodes are still marked, and its questions
# raise ``NeedsRealTree`` (a libcst parse, no wrong answer).
_PLACES: Dict[cst.CSTNode, int] = {}
_SOURCES: Dict[int, Source] = {}
_KEPT_TREES = 400  # more than the contexts ``ProjectView`` keeps (256)


def register(number: int, places: Dict[cst.CSTNode, int], source: Source) -> None:
    """Keep a new tree's positions (``number``: the one packed in them)."""
    if len(_SOURCES) >= _KEPT_TREES:
        for old in list(_SOURCES)[:len(_SOURCES) - _KEPT_TREES + 1]:
            for node in _SOURCES.pop(old).made:
                del _PLACES[node]
    source.made = list(places)
    _PLACES.update(places)
    _SOURCES[number] = source


class Place(NamedTuple):
    """Where a node of a fast tree is in its text: 1-based lines, 0-based character columns, end exclusive
    (libcst's ``CodeRange``)."""

    line: int
    column: int
    end_line: int
    end_column: int


def is_fast_module(module: cst.Module) -> bool:
    """``module`` was made by ``fast_module``."""
    return module.header is MARK_LINES


def is_fast_made(node: cst.CSTNode) -> bool:
    """``node`` was made by ``fast_module`` (registered or not)."""
    return getattr(node, "lpar", None) is MARK_PARENS or getattr(node, "leading_lines", None) is MARK_LINES


def is_fast(node: cst.CSTNode) -> bool:
    """``node`` was made by ``fast_module`` from ``ast``'s node of its kind, and its place is still kept."""
    return node in _PLACES


def _located(node: cst.CSTNode) -> Optional[Tuple[Source, int, int]]:
    packed = _PLACES.get(node)
    if packed is None:
        return None
    source = _SOURCES.get(packed & MASK)
    if source is None:
        return None
    packed >>= MODULE_BITS
    end_column = packed & MASK
    packed >>= COLUMN_BITS
    end_line = packed & MASK
    packed >>= LINE_BITS
    return source, source.offset(packed >> COLUMN_BITS, packed & MASK), source.offset(end_line, end_column)


def place_of(node: cst.CSTNode) -> Optional[Place]:
    """The node's range as libcst's ``PositionProvider`` gives it (parentheses left out), or None where the fast
    tree cannot tell (a node ``ast`` has no node for, a tuple whose parentheses hold a comment)."""
    found = _located(node)
    if found is None:
        return None
    source, start, end = found
    text = source.text
    if isinstance(node, (cst.Tuple, cst.GeneratorExp)):  # ``ast`` counts their own parentheses in
        if text[start] == "(" and closing_bracket(text, start) == end - 1:
            inner = _inside_parentheses(text, start, end - 1)
            if inner is None:
                return None
            start, end = inner
    elif text[end - 1] == ";" and not isinstance(node, cst.BaseExpression):
        # ``ast`` ends a compound statement at its last statement's ``;``, libcst before it
        end = len(text[:end - 1].rstrip(" \t\f"))
    return _place(source, start, end)


def _place(source: Source, start: int, end: int) -> Place:
    starts = source.starts
    line = bisect.bisect_right(starts, start)
    end_line = bisect.bisect_right(starts, end - 1) if end > start else line
    return Place(line, start - starts[line - 1], end_line, end - starts[end_line - 1])


def _inside_parentheses(text: str, opening: int, closing: int) -> Optional[Tuple[int, int]]:
    """The offsets of what a pair of parentheses holds, less the whitespace and comments next to them; None when
    a line with a ``#`` comes before the closing one (``skip_back``)."""
    last = skip_back(text, closing - 1)
    if last is None:
        return None
    return skip_forward(text, opening + 1), last + 1


def code_of(node: cst.CSTNode) -> Optional[str]:
    """The text libcst's ``code_for_node`` gives for an expression of a fast tree (its own parentheses
    included), read from the source; None when the fast tree cannot tell (not an expression ``ast`` has a node for;
    a parenthesis after a line that holds a ``#``; a carriage return in code over several lines)."""
    extent = _own_extent(node)
    if extent is None:
        return None
    source, start, end, _pairs = extent
    return _as_libcst_writes(node, source, start, end)


def own_parentheses(node: cst.CSTNode) -> Optional[int]:
    """How many pairs of parentheses are the node's own (libcst's ``lpar``), for an expression of a fast tree;
    None when the source cannot tell."""
    extent = _own_extent(node)
    return None if extent is None else extent[3]


def _own_extent(node: cst.CSTNode) -> Optional[Tuple[Source, int, int, int]]:
    """(source, start, end, pairs): the node's text with the parentheses that are its own, and how many pairs."""
    if not isinstance(node, cst.BaseExpression):
        return None
    found = _located(node)
    if found is None:
        return None
    source, start, end = found
    text = source.text
    pairs = 0
    if isinstance(node, (cst.Tuple, cst.GeneratorExp)) and text[start] == "(" \
            and closing_bracket(text, start) == end - 1:  # ``ast`` counts these parentheses in
        pairs = 1
        if isinstance(node, cst.GeneratorExp):
            call = call_parenthesis(text, start)
            if call is None:
                return None
            if call:  # the only argument of a call: the parentheses are the call's, libcst gives the generator none
                inner = _inside_parentheses(text, start, end - 1)
                if inner is None:
                    return None
                start, end = inner
                pairs = 0
    statements = _statement_start_set(source)
    while True:  # the parentheses around the node that are its own
        before = -1 if start in statements else skip_back(text, start - 1)
        if before is None:
            return None
        if before < 0 or text[before] != "(":
            return source, start, end, pairs
        call = False if before in statements else call_parenthesis(text, before)
        if call is None:
            return None
        closing = closing_bracket(text, before)
        if call or skip_forward(text, end) != closing or _with_parentheses(text, before, closing):
            return source, start, end, pairs
        start, end, pairs = before, closing + 1, pairs + 1


def _with_parentheses(text: str, opening: int, closing: int) -> bool:
    """``with (...):``: libcst gives these parentheses to the ``With``, not to what they hold."""
    before = skip_back(text, opening - 1)
    return (before is not None and before >= 3 and text[before - 3:before + 1] == "with"
            and (before == 3 or not (text[before - 4].isalnum() or text[before - 4] == "_"))
            and text[skip_forward(text, closing + 1):skip_forward(text, closing + 1) + 1] == ":")


def _as_libcst_writes(node: cst.CSTNode, source: Source, start: int, end: int) -> Optional[str]:
    """The text from ``start`` to ``end`` as ``code_for_node`` writes it: a line inside brackets that starts with
    the indentation of the block the statement is in loses that indentation (libcst keeps it as "indent here",
    and a node's code is written outside any block); lines in strings and after a backslash stay as they are.
    None for text with a carriage return (libcst writes the module's line break)."""
    code = source.text[start:end]
    if "\n" not in code:
        return None if "\r" in code else code
    if "\r" in code:
        return None
    indent = _block_indent(node, source, start)
    if indent is None:
        return None
    if not indent:
        return code
    pieces, copied = [], 0
    for at, char in code_characters(code):
        if char == "\n" and (at == 0 or code[at - 1] != "\\") and code.startswith(indent, at + 1):
            pieces.append(code[copied:at + 1])
            copied = at + 1 + len(indent)
    pieces.append(code[copied:])
    return "".join(pieces)


def _statement_start_set(source: Source) -> Set[int]:
    if source.statement_starts is None:
        source.statement_starts = _statement_starts(source)
        source.statement_start_set = set(source.statement_starts)
    return source.statement_start_set


def _block_indent(node: cst.CSTNode, source: Source, start: int) -> Optional[str]:
    """The indentation of the line where the statement holding the node at ``start`` begins (its decorators
    included): the last statement of the module to begin there or before."""
    _statement_start_set(source)
    starts = source.statement_starts
    at = bisect.bisect_right(starts, start) - 1
    if at < 0:
        return None
    line_start = source.text.rfind("\n", 0, starts[at]) + 1
    line = source.text[line_start:starts[at]]
    return line if not line.strip(" \t\f") else None


def _statement_starts(source: Source) -> List[int]:
    found = []
    for made in source.made:
        if isinstance(made, (cst.BaseStatement, cst.BaseSmallStatement, cst.ExceptHandler)):
            located = _located(made)
            if located is not None:
                found.append(located[1])
            for decorator in getattr(made, "decorators", ()):
                located = _located(decorator.decorator)
                if located is not None:
                    found.append(source.text.rfind("@", 0, located[1]))
    return sorted(found)


def surely_uncommented(node: cst.CSTNode) -> bool:
    """``node`` is a statement of a fast tree, and its text holds no ``#``: from the comment and blank lines just
    above it (libcst's leading lines) to the end of its last line and the comment and blank lines just below (an
    indented block's footer). Then libcst's tree of it holds no comment. False when that is not known."""
    if not isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement)):
        return False
    found = _located(node)
    if found is None:
        return False
    source, start, end = found
    text = source.text
    for decorator in getattr(node, "decorators", ()):  # libcst's def holds its decorators and their comments
        located = _located(decorator.decorator)
        if located is None:
            return False
        start = min(start, located[1])
    first = text.rfind("\n", 0, start) + 1
    while first > 0:  # the lines just above that are blank or comments
        above = text.rfind("\n", 0, first - 1) + 1
        line = text[above:first - 1].strip(" \t\f\r")
        if line and not line.startswith("#"):
            break
        first = above
    last = text.find("\n", end)
    while last >= 0:  # the lines just below that are blank or comments
        below = text.find("\n", last + 1)
        line = text[last + 1:below if below >= 0 else len(text)].strip(" \t\f\r")
        if line and not line.startswith("#"):
            break
        last = below
    return "#" not in text[first:last if last >= 0 else len(text)]
