"""What the language server keeps of a document's runs of top-level statements across edits: each run's stdlib
summary for the project index, and the runs Python's compiler accepted.

Every edit gives the index a new summary of the buffer (``documents._update``) and asks the compiler whether it
has a syntax error (MSL900, ``engine.compile_problem``): two whole-module parses per keystroke, about a sixth of an
edit's time on a 1,000-line model file. ``ms_lint.chunks`` already cuts long modules into runs of top-level
statements that parse and compile alone; here the document is cut wherever a run may start (before each
top-level ``def``, ``class`` or decorator that follows an empty line), and only the runs whose text the edit
changed are parsed and compiled again. A run's summary does not depend on its place (``summary.join_runs`` moves
its lines), nor does its compiling.

Both answers equal the whole module's (``index.summarize_file``, ``compile()``): where a run does not parse or
compile alone, or the module's text needs the whole tree (the PyNative guard, ``global``, a late ``__future__``),
the whole module decides, as the command line's long-module path does (``tests/test_lsp_runs.py``).
"""
from __future__ import annotations

import ast
import os
import sys
import warnings
from typing import Dict, Optional, Tuple

from ms_lint.analysis.index import summarize_file
from ms_lint.analysis.layout import digest_of, module_name_of
from ms_lint.analysis.summary import ModuleSummary, RunSummary, join_runs, placed, summarize_run
from ms_lint.chunks import chunk_bounds, runs
from ms_lint.prefilter import JIT_WORDS

class DocumentRuns:
    """One open document's runs, as its last text had them (only the last text's: an edit drops the others)."""

    # cut wherever ``chunk_bounds`` may: each top-level definition its own run, as far as the text allows (the
    # summary here, the compile check in ``engine.compile_problem``)
    chunk_lines = 1

    def __init__(self) -> None:
        # run text -> its summary parsed alone; (run text, first line) -> that summary at the line: a run that
        # stays in place keeps the same objects, which ``summary.same_shape`` then passes over
        self._parsed: Dict[str, RunSummary] = {}
        self._placed: Dict[Tuple[str, int], RunSummary] = {}
        self._summarized_as: Optional[Tuple[Optional[str], bool]] = None  # (package, jit_words) of those
        # (run text, the ``__future__`` flags it was compiled with) -> the flags its code carries
        self.compiled: Dict[Tuple[str, int], int] = {}

    def summary(self, path: str, raw: bytes) -> Optional[ModuleSummary]:
        """``summarize_file(path, raw)``, parsing only the runs this document's last text did not have."""
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None
        bounds = chunk_bounds(text, self.chunk_lines)
        if len(bounds) == 1 or ("get_context" in text and "PYNATIVE_MODE" in text):
            return summarize_file(path, raw)  # one run, or the PyNative guard, which reads the whole tree
        name, package, _ = module_name_of(path)
        setting = (package, any(word in text for word in JIT_WORDS))
        same = setting == self._summarized_as
        parsed, at_lines = (self._parsed, self._placed) if same else ({}, {})
        kept_parsed: Dict[str, RunSummary] = {}
        kept_placed: Dict[Tuple[str, int], RunSummary] = {}
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20000))  # as summarize_file
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for run, line in runs(text, bounds):
                    alone = kept_parsed.get(run) or parsed.get(run)
                    if alone is None:
                        alone = summarize_run(ast.parse(run, path), *setting)
                    kept_parsed[run] = alone
                    key = (run, line)
                    found = kept_placed.get(key) or at_lines.get(key)
                    kept_placed[key] = found if found is not None else (placed(alone, line - 1) if line > 1 else alone)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return summarize_file(path, raw)  # a cut inside a string or a bracket, or a real error
        finally:
            sys.setrecursionlimit(limit)
        self._parsed, self._placed, self._summarized_as = kept_parsed, kept_placed, setting
        return join_runs(kept_placed.values(), name, os.path.abspath(path), digest_of(raw), text)
