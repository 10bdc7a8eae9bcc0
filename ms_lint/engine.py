"""Analyze one file: pre-filter, parse once, walk graph code once with every enabled rule, resolve positions.

The cheap text tests come first: a file that never mentions ``mindspore`` cannot define graph code or
configure a graph run, and a file in which no enabled rule can fire (``ms_lint.prefilter``: no graph code, none
of the text a module rule needs) is only syntax-checked with ``compile()``; neither is parsed with libcst.
Positions are resolved only for files that have findings.
"""
from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Type

import libcst as cst
from libcst.metadata import CodeRange

from ms_lint.analysis.index import ProjectIndex, index_for
from ms_lint.analysis.project import ProjectView
from ms_lint.codes import UNANALYZABLE
from ms_lint.config import Config
from ms_lint.context import ModuleContext
from ms_lint.diagnostics import Finding
from ms_lint.noqa import is_suppressed, skips_file
from ms_lint.positions import node_positions
from ms_lint.prefilter import rules_that_may_fire
from ms_lint.rules import Rule, all_rules
from ms_lint.rules.base import RawReport
from ms_lint.source import SourceFile, UnreadableSource, read_source
from ms_lint.walk import dispatch

PREFILTER = "mindspore"
# libcst's visitors recurse once per tree level; generated code (op-info builder chains hundreds of calls long)
# goes deeper than Python's default limit of 1000.
RECURSION_LIMIT = 20000


@dataclass
class FileAnalysis:
    """Findings of one file, plus the parsed module and context when the fixer needs them."""

    path: str
    findings: List[Finding] = field(default_factory=list)
    source: Optional[SourceFile] = None
    module: Optional[cst.Module] = None
    context: Optional[ModuleContext] = None
    suppressed: List[Finding] = field(default_factory=list)  # findings silenced by noqa (never fixed)
    positions: Optional[Mapping[cst.CSTNode, CodeRange]] = None  # resolved only when there are findings

    @property
    def unanalyzable(self) -> bool:
        return any(f.code == UNANALYZABLE for f in self.findings)


def unanalyzable(path: str, reason: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(code=UNANALYZABLE, message=f"cannot analyze file: {reason}", path=path, line=line,
                   column=column, end_line=line, end_column=column)


def _syntax_error(path: str, text: str, exc: "cst.ParserSyntaxError") -> Finding:
    """Python's own message and line where it has one (clearer than the parser's), else libcst's."""
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as py_exc:
        return unanalyzable(path, f"syntax error: {py_exc.msg}", py_exc.lineno or 1, py_exc.offset or 1)
    except (ValueError, RecursionError, MemoryError):
        pass
    return unanalyzable(path, f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1)


def analyze_path(path: str, config: Config, display_path: Optional[str] = None,
                 index: Optional[ProjectIndex] = None) -> FileAnalysis:
    shown = display_path or path
    try:
        source = read_source(path)
    except UnreadableSource as exc:
        return FileAnalysis(shown, [unanalyzable(shown, exc.reason, exc.line or 1)])
    return analyze_source(source, config, shown, index=index)


def analyze_source(source: SourceFile, config: Config, display_path: Optional[str] = None,
                   rules: Optional[Sequence[Type[Rule]]] = None,
                   index: Optional[ProjectIndex] = None) -> FileAnalysis:
    """Findings of one file. ``index`` is the project the file belongs to (``ms_lint.analysis.index``); without
    one, the file's own package is indexed (once per process and package)."""
    path = display_path or source.path
    result = FileAnalysis(path, source=source)
    text = source.text
    if PREFILTER not in text or skips_file(text):
        return result
    if index is None:
        index = index_for(source, config)
    project = ProjectView(index, source.path, config)
    firing = rules_that_may_fire(text, _enabled(rules, config, path), bool(project.graph_functions()))
    if not firing and _compiles(text, path):
        return result  # no enabled rule can fire here (ms_lint/prefilter.py) and Python parses it: nothing to say
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        result.findings.append(_syntax_error(path, text, exc))
        return result
    except (RecursionError, MemoryError) as exc:
        result.findings.append(unanalyzable(path, f"too deeply nested to parse ({type(exc).__name__})"))
        return result
    result.module = module
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        context = ModuleContext(module, text, source.path, config, project)
        result.context = context
        reports = run_rules(context, firing)  # only the rules that can fire here (ms_lint/prefilter.py)
    except RecursionError:
        result.findings.append(unanalyzable(path, "too deeply nested to analyze"))
        return result
    if reports:
        _attach_positions(result, module, reports, text, path)
    return result


def _compiles(text: str, path: str) -> bool:
    """Python's own parser accepts the text. A skipped file must still get MSL900 for a syntax error, and this
    is about 10x cheaper than parsing with libcst; on failure the caller parses as usual, so the finding is the
    same as before the pre-filter existed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences and the like: not ours to report
        try:
            compile(text, path, "exec", dont_inherit=True, optimize=2)
        except Exception:  # SyntaxError, RecursionError, MemoryError...: let the real parse report it
            return False
    return True


def _enabled(rules: Optional[Sequence[Type[Rule]]], config: Config, path: str) -> List[Type[Rule]]:
    candidates = all_rules() if rules is None else list(rules)
    return [rule for rule in candidates if config.is_enabled(rule.code, path)]


def run_rules(context: ModuleContext, rule_classes: Sequence[Type[Rule]]) -> List[RawReport]:
    """One walk over each graph function dispatches every node to every rule hook that wants it."""
    rules = [cls(context) for cls in rule_classes]
    if not rules:
        return []
    enter: Dict[type, List[Callable]] = {}
    leave: Dict[type, List[Callable]] = {}
    for rule in rules:
        for attr in dir(type(rule)):
            if attr.startswith("visit_") or attr.startswith("leave_"):
                node_type = getattr(cst, attr[6:], None)
                if isinstance(node_type, type):
                    (enter if attr[0] == "v" else leave).setdefault(node_type, []).append(getattr(rule, attr))
    if enter or leave:
        for info in context.scope.graph_functions():
            for rule in rules:
                rule.function = info.node
            context.parents[info.node.body] = info.node
            dispatch(info.node.body, enter, leave, context.parents)
        for rule in rules:
            rule.function = None
    for rule in rules:
        rule.check_module()
    return [report for rule in rules for report in rule.reports]


def _attach_positions(result: FileAnalysis, module: cst.Module, reports: List[RawReport], text: str,
                      path: str) -> None:
    positions = node_positions(module)
    result.positions = positions
    lines = text.splitlines()
    for report in reports:
        where = positions.get(report.node)
        if where is None:
            continue
        finding = Finding(
            code=report.rule.code,
            message=report.message,
            path=path,
            line=where.start.line,
            column=where.start.column + 1,
            end_line=where.end.line,
            end_column=where.end.column + 1,
            fix=report.fix.summary() if report.fix else None,
            fix_object=report.fix,
        )
        if is_suppressed(lines, finding.line, finding.code):
            result.suppressed.append(finding)
        else:
            result.findings.append(finding)
    result.findings.sort(key=Finding.sort_key)
