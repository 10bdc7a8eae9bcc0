"""Applying fixes to source text: node replacements by identity, needed imports, repeat until stable.

The fixer never writes files (see ``ms_lint.commands.fix`` for that). It guarantees that what it returns
parses, that fixes for noqa-suppressed findings and files with MSL900 are never applied, and that
overlapping fixes are never applied in the same round (the later one is re-evaluated on the new code).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from ms_lint.config import Config
from ms_lint.diagnostics import SAFE, Finding, Fix, ImportRequest
from ms_lint.engine import FileAnalysis, analyze_source
from ms_lint.source import SourceFile

MAX_ROUNDS = 8


@dataclass
class FixOutcome:
    original: str
    fixed: str
    applied: List[Finding] = field(default_factory=list)  # findings whose fix was applied (any round)
    remaining: List[Finding] = field(default_factory=list)  # findings left in the final text
    error: Optional[str] = None  # why nothing was fixed (unanalyzable file, a fix that did not parse)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def is_applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix_object is not None and (unsafe or finding.fix_object.applicability == SAFE)


def fix_text(source: SourceFile, config: Config, unsafe: bool = False, path: Optional[str] = None,
             accept=None) -> FixOutcome:
    """Apply every applicable fix, re-checking after each round until nothing changes.

    ``accept(finding, candidate_text) -> bool`` can veto single fixes (used by ``--verified-only``).
    """
    text = source.text
    outcome = FixOutcome(original=text, fixed=text)
    for _ in range(MAX_ROUNDS):
        analysis = analyze_source(_with_text(source, text), config, path)
        if analysis.unanalyzable:
            outcome.error = analysis.findings[0].message
            outcome.remaining = analysis.findings
            return outcome
        candidates = [f for f in analysis.findings if is_applicable(f, unsafe)]
        if accept is not None:
            candidates = [f for f in candidates if accept(f, apply_fixes(analysis, [f.fix_object]))]
        if not candidates:
            outcome.remaining = analysis.findings
            break
        new_text = apply_fixes(analysis, [f.fix_object for f in candidates])
        if new_text == text:
            outcome.remaining = analysis.findings
            break
        try:
            cst.parse_module(new_text)
        except cst.ParserSyntaxError as exc:  # a rule bug: refuse rather than corrupt the file
            outcome.error = f"a fix produced code that does not parse ({exc.message}); nothing applied"
            outcome.fixed = source.text
            outcome.remaining = analysis.findings
            return outcome
        outcome.applied.extend(candidates)
        text = new_text
    outcome.fixed = text
    return outcome


def single_fix_variants(source: SourceFile, config: Config, path: Optional[str] = None
                        ) -> List[Tuple[Finding, str]]:
    """For each fixable finding (unsafe included), the module text with only that fix applied."""
    analysis = analyze_source(source, config, path)
    if analysis.unanalyzable:
        return []
    return [(f, apply_fixes(analysis, [f.fix_object])) for f in analysis.findings if f.fix_object is not None]


def apply_fixes(analysis: FileAnalysis, fixes: Sequence[Fix]) -> str:
    """Text of the module with the given fixes applied; fixes overlapping an earlier one are skipped."""
    assert analysis.module is not None
    replacements: Dict[cst.CSTNode, object] = {}
    taken: List[Tuple[Tuple[int, int], Tuple[int, int]]] = []
    imports: List[ImportRequest] = []
    for fix in fixes:
        spans = [_span(analysis, node) for node, _ in fix.edits]
        if any(span is None for span in spans) or any(_overlaps(span, other) for span in spans for other in taken):
            continue
        taken.extend(spans)  # type: ignore[arg-type]
        for node, replacement in fix.edits:
            replacements[node] = replacement
        imports.extend(fix.imports)
    if not replacements:
        return analysis.module.code
    module = analysis.module.visit(_Replace(replacements))
    module = add_imports(module, imports)
    return module.code


def _span(analysis: FileAnalysis, node: cst.CSTNode):
    if analysis.positions is None or node not in analysis.positions:
        from libcst.metadata import MetadataWrapper, PositionProvider

        analysis.positions = MetadataWrapper(analysis.module, unsafe_skip_copy=True).resolve(PositionProvider)
    where = analysis.positions.get(node)
    if where is None:
        return None
    return (where.start.line, where.start.column), (where.end.line, where.end.column)


def _overlaps(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: Dict[cst.CSTNode, object]):
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        if original_node not in self.replacements:
            return updated_node
        replacement = self.replacements[original_node]
        if replacement is None:
            return cst.RemovalSentinel.REMOVE
        if isinstance(replacement, (list, tuple)):
            return cst.FlattenSentinel(replacement)
        return replacement


def add_imports(module: cst.Module, requests: Sequence[ImportRequest]) -> cst.Module:
    """Add each requested import statement once, after the module's last top-level import."""
    present = {_normalise(module.code_for_node(stmt)) for stmt in module.body if _is_import_line(stmt)}
    wanted: List[str] = []
    for request in requests:
        key = _normalise(request.statement)
        if key not in present and request.statement not in wanted:
            wanted.append(request.statement)
            present.add(key)
    if not wanted:
        return module
    new_lines = [cst.parse_statement(statement + module.default_newline) for statement in wanted]
    body = list(module.body)
    index = _import_insert_index(body)
    return module.with_changes(body=body[:index] + new_lines + body[index:])


def _is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body
    )


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _import_insert_index(body: List[cst.CSTNode]) -> int:
    last_import = None
    for index, stmt in enumerate(body):
        if _is_import_line(stmt):
            last_import = index
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            break
    if last_import is not None:
        return last_import + 1
    return 1 if body and _is_docstring(body[0]) else 0


def _normalise(statement: str) -> str:
    return " ".join(statement.split())


def _with_text(source: SourceFile, text: str) -> SourceFile:
    return SourceFile(path=source.path, text=text, encoding=source.encoding, has_bom=source.has_bom, raw=b"")
