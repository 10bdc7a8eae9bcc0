"""Cutting a long module into runs of top-level statements, so that parsing and compiling it needs the memory of
one run at a time.

libcst's native parser holds about 18 KB per line while it parses (1.1 GB for a generated 55k-line module of
3,000 Cells, of which the finished tree keeps 80 MB), CPython's ``compile()`` about 4 KB and ``ast.parse`` about
5 KB per line. Parsing the module a few thousand lines at a time and joining the statements gives the same tree
with a fraction of that peak (``ms_lint.cstutil.parse_module``, ``ms_lint.analysis.index.summarize_file``,
``ms_lint.engine.compile_problem``).

A cut is made only before a line that starts at column 0 with ``def``, ``class``, ``async def`` or ``@``, after
one or more empty lines that follow a line of code (not a comment, not a ``\\`` continuation). Outside a string
or a bracket such a line starts a top-level statement, and the empty lines before it belong to it (libcst keeps
them as its ``leading_lines``; a comment there could belong to the block above, so a comment forbids the cut).
Inside a string or a bracket the cut leaves the run before it unterminated: it does not parse, and each caller
then parses the module whole. So every caller checks that each run parses and falls back to the whole module
otherwise; what they return is what the whole module gives (``tests/test_chunks.py`` compares both on every
fixture and test file with runs of a few lines).
"""
from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

CHUNK_LINES = 2000  # lines per run; a module of fewer lines is never cut
_STATEMENT_STARTS = ("def ", "class ", "async def ", "@")
_LONE_CR = re.compile(r"\r(?!\n)")
LINE_END = re.compile(r"\r\n?|\n")  # Python's line ends, as ``ast`` and libcst number lines (not str.splitlines')


def line_starts(text: str) -> List[int]:
    """The offset of each line's first character (the lines ``LINE_END`` ends)."""
    return [0, *(match.end() for match in LINE_END.finditer(text))]


def chunk_bounds(text: str, chunk_lines: Optional[int] = None) -> List[Tuple[int, int]]:
    """(character offset, 1-based line number) where each run starts, the first at (0, 1); one run for a text
    of at most ``chunk_lines`` lines (default ``CHUNK_LINES``). Runs are cut at the first possible place after
    ``chunk_lines`` lines."""
    if chunk_lines is None:
        chunk_lines = CHUNK_LINES
    bounds = [(0, 1)]
    if text.count("\n") <= chunk_lines or _LONE_CR.search(text):
        return bounds  # a lone "\r" ends a line for Python but not for these line numbers: never cut
    lines = text.split("\n")
    starts = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    last = 0  # 0-based index of the line where the current run starts
    for index in range(1, len(lines)):
        if index - last < chunk_lines or not lines[index].startswith(_STATEMENT_STARTS):
            continue
        first_empty = index
        while first_empty > 0 and lines[first_empty - 1] in ("", "\r"):
            first_empty -= 1
        if first_empty == index or first_empty == 0:
            continue  # no empty line before it, or nothing but empty lines
        code = lines[first_empty - 1].rstrip("\r")
        if code.lstrip().startswith("#") or code.endswith("\\"):
            continue
        bounds.append((starts[first_empty], first_empty + 1))
        last = first_empty
    return bounds


def runs(text: str, bounds: List[Tuple[int, int]]) -> List[Tuple[str, int]]:
    """The text of each run and its first line number."""
    ends = [offset for offset, _ in bounds[1:]] + [len(text)]
    return [(text[offset:end], line) for (offset, line), end in zip(bounds, ends)]


def ast_runs(text: str, bounds: List[Tuple[int, int]], path: str = "<unknown>") -> Iterator["ast.Module"]:
    """The ``ast`` tree of each run, parsed after as many empty lines as precede it so that line numbers are the
    module's, one at a time (the caller drops each before the next is parsed). Raises what ``ast.parse``
    raises: a cut inside a string or a bracket, or a real error, which the whole module must then decide."""
    import ast  # not at import time: the warm path never parses

    for run, line in runs(text, bounds):
        yield ast.parse("\n" * (line - 1) + run, path)
