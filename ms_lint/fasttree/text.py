"""Reading Python source around ``ast``'s positions: line starts, UTF-8 columns, string literals, brackets,
whitespace and comments (what ``ms_lint.fasttree`` needs of the text that ``ast`` leaves out)."""
from __future__ import annotations

import ast
import keyword
import re
from typing import Iterator, List, Optional, Tuple

from ms_lint.chunks import line_starts

IDENTIFIER = re.compile(r"\w+")
# One whole string literal: prefix, quotes, body (a backslash escapes the next character, a line break included, in
# raw strings too; a long string ends at the first three quotes).
STRING = re.compile("[rRbBuUfF]{0,2}(?:" + "|".join([
    r"'''(?:[^\\']|\\(?:\r\n|.)|'(?!''))*'''", r'"""(?:[^\\"]|\\(?:\r\n|.)|"(?!""))*"""',
    r"'(?:[^'\\\r\n]|\\(?:\r\n|.))*'", r'"(?:[^"\\\r\n]|\\(?:\r\n|.))*"',
]) + ")", re.DOTALL)
# Keywords after which a ``(`` opens a parenthesized expression (``None``, ``True``, ``False`` end one: a call).
KEYWORDS = frozenset(keyword.kwlist) - {"None", "True", "False"}
BLANK = " \t\f\\"  # a backslash: a line continuation, the only place one can stand between tokens


class Source:
    """Character offsets of ``ast``'s positions (lines split as the tokenizer splits them; columns in UTF-8
    bytes)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)
        self.ascii = text.isascii()
        self.made: list = []  # the nodes of its tree that ``places`` registered
        # the offsets where statements begin, sorted and as a set, worked out when first asked (``places.code_of``)
        self.statement_starts: Optional[List[int]] = None
        self.statement_start_set: set = set()

    def offset(self, line: int, column: int) -> int:
        start = self.starts[line - 1]
        if self.ascii:
            return start + column
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        raw = self.text[start:end]
        if raw.isascii():
            return start + column
        return start + len(raw.encode("utf-8")[:column].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> str:
        return self.text[self.offset(node.lineno, node.col_offset):  # type: ignore[attr-defined]
                         self.offset(node.end_lineno, node.end_col_offset)]  # type: ignore[attr-defined]


def string_tokens(code: str) -> List[str]:
    """The string literals of an implicit concatenation's source, in order (what lies between them is
    whitespace, line continuations, comments and parentheses)."""
    whole = STRING.fullmatch(code)
    if whole is not None:
        return [code]
    tokens, at, size = [], 0, len(code)
    while at < size:
        char = code[at]
        if char == "#":
            at = code.find("\n", at)
            if at < 0:
                break
            continue
        match = STRING.match(code, at)
        if match is None:
            at += 1
            continue
        tokens.append(match.group())
        at = match.end()
    return tokens


def string_end(text: str, at: int) -> int:
    """The offset after the string literal whose quote is at ``at``."""
    match = STRING.match(text, at)
    return len(text) if match is None else match.end()


def code_characters(text: str, at: int = 0) -> Iterator[Tuple[int, str]]:
    """(offset, character) of ``text`` from ``at`` on, less its string literals and comments (a comment's line
    break is kept)."""
    size = len(text)
    while at < size:
        char = text[at]
        if char == "#":
            at = text.find("\n", at)
            if at < 0:
                return
        elif char in "'\"":
            at = string_end(text, at)
        else:
            yield at, char
            at += 1


def closing_bracket(text: str, start: int) -> int:
    """The offset of the bracket closing the one at ``start`` (strings and comments skipped)."""
    depth = 0
    for at, char in code_characters(text, start):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return at
    return len(text)


def top_level_colons(code: str) -> int:
    """The colons of a slice's source outside brackets, strings and comments."""
    if code.count(":") < 2:
        return code.count(":")
    count = depth = 0
    for _at, char in code_characters(code):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 0:
            count += 1
    return count


def skip_back(text: str, at: int) -> Optional[int]:
    """The offset of the last character at or before ``at`` that is not whitespace (-1: none); None when that
    means crossing a line with a ``#`` (a comment, or a ``#`` in a string: reading backwards cannot tell)."""
    while at >= 0:
        char = text[at]
        if char in BLANK:
            at -= 1
        elif char == "\n" or char == "\r":
            line_start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
            if "#" in text[line_start:at]:
                return None
            at -= 1
        else:
            return at
    return -1


def skip_forward(text: str, at: int) -> int:
    """The offset of the first character at or after ``at`` that is neither whitespace nor in a comment."""
    size = len(text)
    while at < size:
        char = text[at]
        if char in BLANK or char == "\n" or char == "\r":
            at += 1
        elif char == "#":
            at = text.find("\n", at)
            if at < 0:
                return size
        else:
            return at
    return size


def call_parenthesis(text: str, at: int) -> Optional[bool]:
    """Whether the ``(`` at ``at`` opens a call's arguments or a class's bases: what comes before it ends an
    expression (a name that is no keyword, a closing bracket, a string). None when that cannot be read."""
    before = skip_back(text, at - 1)
    if before is None:
        return None
    if before < 0:
        return False
    char = text[before]
    if char in ")]}'\"":
        ends_expression = True
    elif not (char.isalnum() or char == "_"):
        return False
    else:
        word_start = before
        while word_start > 0 and (text[word_start - 1].isalnum() or text[word_start - 1] == "_"):
            word_start -= 1
        ends_expression = text[word_start:before + 1] not in KEYWORDS
    if ends_expression and ("\n" in text[before:at] or "\r" in text[before:at]):
        return None  # a statement that starts with ``(``, or a call across lines in brackets: not told apart here
    return ends_expression
