"""Applying fixes to source text: node replacements by identity, needed imports, repeat until stable.

The fixer never writes files (``ms_lint.writer`` does, for ``ms_lint.commands.fix``). What it returns:

* compiles with ``compile()``, parses with libcst, and encodes in the file's encoding;
  a fix that breaks any of these is dropped (and reported in ``FixOutcome.problems``), the others still apply;
* keeps the file's line ends: in a CRLF file every line of the result ends in CRLF, inserted lines included;
* never contains a fix for a noqa-suppressed finding, nor one that would rewrite the line of such a finding,
  and nothing at all for a file with MSL900;
* applies overlapping fixes in different rounds (the later one is re-evaluated on the new code), and stops
  when a round changes nothing; a file whose fixes have not settled after ``MAX_ROUNDS`` rounds is left
  unchanged (a rule bug: its fixes undo each other), so fixing twice always equals fixing once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Type

import libcst as cst

from ms_lint.common_text import common_prefix, common_suffix
from ms_lint.config import Config
from ms_lint.cstutil import parse_module, top_statements
from ms_lint.diagnostics import SAFE, Finding, Fix, ImportRequest
from ms_lint import import_order
from ms_lint.engine import FileAnalysis, analyze_source
from ms_lint.positions import node_positions
from ms_lint.source import SourceFile

MAX_ROUNDS = 8

# accept(finding, candidate_text) -> bool: may veto a single fix (``--verified-only``). ``finding.function``
# names what the verifier should call ("f", "Net" for a Cell's construct, "Cls.method"), None outside graph code.
Accept = Callable[[Finding, str], bool]


@dataclass
class FixOutcome:
    original: str
    fixed: str
    applied: List[Finding] = field(default_factory=list)  # findings whose fix was applied (any round)
    remaining: List[Finding] = field(default_factory=list)  # findings left in the final text
    error: Optional[str] = None  # why nothing was fixed (unanalyzable file, fixes that did not settle)
    rejected: List[Finding] = field(default_factory=list)  # fixes ``accept`` vetoed
    blocked: List[Finding] = field(default_factory=list)  # fixes that would rewrite a noqa'd finding's line
    problems: List[str] = field(default_factory=list)  # fixes dropped because their result was broken
    rounds: int = 0

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def is_applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix_object is not None and (unsafe or finding.fix_object.applicability == SAFE)


def fix_text(source: SourceFile, config: Config, unsafe: bool = False, path: Optional[str] = None,
             accept: Optional[Accept] = None, rules: Optional[Sequence[Type]] = None) -> FixOutcome:
    """Apply every applicable fix, re-checking after each round until nothing changes.

    ``accept(finding, candidate_text) -> bool`` can veto single fixes (used by ``--verified-only``);
    ``candidate_text`` is the current text with only that fix applied. A vetoed or broken fix is not
    offered again in later rounds. ``rules`` limits the analysis to these rule classes (tests).
    """
    original = source.text
    outcome = FixOutcome(original=original, fixed=original)
    checker = _Checker(source)
    refused: Set[Tuple] = set()  # fixes vetoed, blocked or broken: never offered again
    text = original
    for round_number in range(MAX_ROUNDS + 1):
        analysis = analyze_source(_with_text(source, text), config, path, rules=rules)
        outcome.remaining = analysis.findings
        if analysis.unanalyzable:
            if round_number == 0:
                outcome.error = analysis.findings[0].message
            else:  # our own output cannot be analyzed again (e.g. too deep): keep the file as it was
                outcome.error = (f"fixed code could not be analyzed again ({analysis.findings[0].message}); "
                                 "nothing applied")
                outcome.fixed, outcome.applied = original, []
            return outcome
        candidates = _candidates(analysis, unsafe, refused, outcome)
        if accept is not None and candidates:
            candidates = _accepted(analysis, candidates, accept, checker, refused, outcome)
        if not candidates:
            break
        new_text, used = _apply_checked(analysis, candidates, checker, refused, outcome)
        if new_text == text:
            break
        if round_number == MAX_ROUNDS:
            outcome.error = (f"fixes did not settle after {MAX_ROUNDS} rounds (a rule's fixes undo each other); "
                             "nothing applied")
            outcome.fixed, outcome.applied = original, []
            return outcome
        outcome.applied.extend(used)
        outcome.rounds = round_number + 1
        text = new_text
    outcome.fixed = text
    return outcome


def single_fix_variants(source: SourceFile, config: Config, path: Optional[str] = None,
                        rules: Optional[Sequence[Type]] = None) -> List[Tuple[Finding, str]]:
    """For each fixable finding (unsafe included), the module text with only that fix applied.

    Fixes that would rewrite a noqa'd finding's line are left out, as are fixes whose code is broken.
    ``finding.function`` is set as for ``fix_text``'s ``accept``.
    """
    analysis = analyze_source(source, config, path, rules=rules)
    if analysis.unanalyzable:
        return []
    checker = _Checker(source)
    variants = []
    for finding in _candidates(analysis, True, set(), FixOutcome(source.text, source.text)):
        text = _apply_or_none(analysis, [finding])
        if text is not None and checker.problem(text) is None:
            variants.append((finding, text))
    return variants


def apply_fixes(analysis: FileAnalysis, fixes: Sequence[Fix]) -> str:
    """Text of the module with the given fixes applied; fixes overlapping an earlier one are skipped."""
    text, _ = _apply(analysis, fixes)
    return text


# -- choosing fixes ---------------------------------------------------------------------------------------

def _candidates(analysis: FileAnalysis, unsafe: bool, refused: Set[Tuple], outcome: FixOutcome) -> List[Finding]:
    noqa_lines = {f.line for f in analysis.suppressed}
    found = []
    for finding in analysis.findings:
        if not is_applicable(finding, unsafe):
            continue
        key = _fix_key(finding)
        if key in refused:
            continue
        if noqa_lines and _touches_lines(analysis, finding.fix_object, noqa_lines):
            refused.add(key)
            outcome.blocked.append(finding)
            continue
        finding.function = graph_function_name(analysis, finding)
        found.append(finding)
    return found


def _touches_lines(analysis: FileAnalysis, fix: Fix, lines: Set[int]) -> bool:
    for node, _ in fix.edits:
        span = _span(analysis, node)
        if span is not None and any(span[0][0] <= line <= span[1][0] for line in lines):
            return True
    return False


def _accepted(analysis: FileAnalysis, candidates: List[Finding], accept: Accept, checker: "_Checker",
              refused: Set[Tuple], outcome: FixOutcome) -> List[Finding]:
    kept = []
    for finding in candidates:
        text = _apply_or_none(analysis, [finding])
        problem = "it could not be applied" if text is None else checker.problem(text)
        if problem is not None:
            _drop(finding, problem, refused, outcome)
        elif accept(finding, text):
            kept.append(finding)
        else:
            refused.add(_fix_key(finding))
            outcome.rejected.append(finding)
    return kept


def _fix_key(finding: Finding) -> Tuple:
    """Identifies a fix across rounds (line numbers move, the code it rewrites and writes does not)."""
    fix = finding.fix_object
    assert fix is not None
    return (finding.code,) + tuple((_code(old), _code(new)) for old, new in fix.edits)


def _code(node) -> str:
    if node is None:
        return ""
    if isinstance(node, (list, tuple)):
        return "\n".join(_code(n) for n in node)
    try:
        return cst.Module(body=[]).code_for_node(node)
    except Exception:  # a malformed replacement node: identity is the best key left
        return f"<{type(node).__name__}@{id(node)}>"


def graph_function_name(analysis: FileAnalysis, finding: Finding) -> Optional[str]:
    """What the verifier calls to exercise a fix: ``"func"``, ``"Class"`` (a Cell: the fix is in its
    ``construct``) or ``"Class.method"`` -- the top-level function or method a fix edits (for a nested def,
    the function around it). None for fixes outside graph functions (module-level rules).
    """
    context = analysis.context
    fix = finding.fix_object
    if context is None or fix is None:
        return None
    for node, _ in fix.edits:
        func = node if isinstance(node, cst.FunctionDef) else context.enclosing_function(node)
        while func is not None and func not in context.scope.owner_of:  # a nested def: its outer function
            func = context.enclosing_function(func)
        if func is None:
            continue
        owner = context.scope.owner_of[func]
        if owner is None:
            return func.name.value
        if func.name.value == "construct" and context.scope.is_cell_class(owner):
            return owner
        return f"{owner}.{func.name.value}"
    return None


# -- applying fixes --------------------------------------------------------------------------------------

def _apply_checked(analysis: FileAnalysis, candidates: List[Finding], checker: "_Checker", refused: Set[Tuple],
                   outcome: FixOutcome) -> Tuple[str, List[Finding]]:
    """Apply the candidates together; if the result is broken, find and drop the fixes that break it."""
    text, used = _apply_findings(analysis, candidates)
    if text is not None and checker.problem(text) is None:
        return text, used
    good = []
    for finding in (used or candidates):
        single = _apply_or_none(analysis, [finding])
        problem = "it could not be applied" if single is None else checker.problem(single)
        if problem is None:
            good.append(finding)
        else:
            _drop(finding, problem, refused, outcome)
    if not good:
        return analysis.source.text if analysis.source else "", []
    text, used = _apply_findings(analysis, good)
    if text is not None and checker.problem(text) is None:
        return text, used
    # Each is fine alone but not together: one per round, the rest are re-evaluated on the new code.
    return _apply_findings(analysis, good[:1])  # type: ignore[return-value]


def _drop(finding: Finding, problem: str, refused: Set[Tuple], outcome: FixOutcome) -> None:
    refused.add(_fix_key(finding))
    outcome.problems.append(f"{finding.code} fix for line {finding.line} not applied: {problem} "
                            "(an ms-lint bug, please report it)")


def _apply_or_none(analysis: FileAnalysis, findings: List[Finding]) -> Optional[str]:
    return _apply_findings(analysis, findings)[0]


def _apply_findings(analysis: FileAnalysis, findings: List[Finding]) -> Tuple[Optional[str], List[Finding]]:
    try:
        text, used = _apply(analysis, [f.fix_object for f in findings])
    except Exception:  # a rule built a replacement libcst cannot place or print
        return None, []
    text = keep_newlines(analysis.source.text if analysis.source else text, text)
    return text, [findings[i] for i in used]


def _apply(analysis: FileAnalysis, fixes: Sequence[Fix]) -> Tuple[str, List[int]]:
    assert analysis.module is not None
    replacements: Dict[cst.CSTNode, object] = {}
    taken: List[Tuple[Tuple[int, int], Tuple[int, int]]] = []
    imports: List[ImportRequest] = []
    used: List[int] = []
    for index, fix in enumerate(fixes):
        spans = [_span(analysis, node) for node, _ in fix.edits]
        if not spans or any(span is None for span in spans) or any(
                _overlaps(span, other) for span in spans for other in taken):
            continue
        taken.extend(spans)  # type: ignore[arg-type]
        for node, replacement in fix.edits:
            replacements[node] = replacement
        imports.extend(fix.imports)
        used.append(index)
    original = analysis.source.text if analysis.source is not None else analysis.printed()
    if not replacements:
        return original, used
    parents = analysis.context.parents if analysis.context is not None else {}
    module = replace_nodes(analysis.module, replacements, parents)
    module = add_imports(module, imports, analysis.path)
    printed = analysis.printed()
    if printed != original:
        return carried_over(original, printed, module.code), used
    return module.code, used


def carried_over(original: str, printed: str, fixed: str) -> str:
    """``fixed`` is ``printed`` (libcst's code for the text ``original``) with a fix applied; the same change made to
    ``original``. libcst does not give back every text it parses: blank lines before a last line of spaces
    (``"return x\n\n\n \n"``) come back as ``"return x\n \n"``, and writing its code would delete them.
    ValueError when the change reaches where the two texts differ."""
    same = common_prefix(original, printed)
    start = common_prefix(printed, fixed)
    suffix = common_suffix(printed, fixed, min(len(printed), len(fixed)) - start)
    end = len(printed) - suffix  # the fix replaced printed[start:end]
    if end > same:
        raise ValueError("the fix reaches text libcst does not give back")
    return original[:start] + fixed[start:len(fixed) - suffix] + original[end:]


def _span(analysis: FileAnalysis, node: cst.CSTNode):
    if analysis.positions is None or node not in analysis.positions:
        if analysis.module is None:
            return None
        analysis.positions = node_positions(analysis.module)
    where = analysis.positions.get(node)
    if where is None:
        return None
    return (where.start.line, where.start.column), (where.end.line, where.end.column)


def _overlaps(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def replace_nodes(module: cst.Module, replacements: Dict[cst.CSTNode, object],
                  parents: Mapping[cst.CSTNode, cst.CSTNode]) -> cst.Module:
    """``module.visit(_Replace(replacements))``, visiting only the top-level statements that hold a replaced node
    (found through ``parents``, the engine's child -> parent map of graph code): a transformer rebuilds every node
    it visits, and on a 55,000-line module with 600 fixes visiting all of it took 43 s (profiled). A node that
    cannot be placed that way (not in graph code) makes it visit the whole module."""
    top = top_statements(module)
    touched = set()
    for node in replacements:
        current: Optional[cst.CSTNode] = node
        while current is not None and current not in top:
            current = parents.get(current)
        if current is None:
            return module.visit(_Replace(replacements))
        touched.add(top[current])
    transformer = _Replace(replacements)
    body: List[cst.CSTNode] = []
    for statement in module.body:
        if statement not in touched:
            body.append(statement)
            continue
        result = statement.visit(transformer)
        if isinstance(result, cst.FlattenSentinel):
            body.extend(result.nodes)
        elif not isinstance(result, cst.RemovalSentinel):
            body.append(result)
    return module.with_changes(body=body)


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


# -- checking results ------------------------------------------------------------------------------------

class _Checker:
    """What a fixed text must satisfy: libcst parses it, Python compiles it, and it encodes in the file's
    encoding. (A file Python cannot compile is MSL900 and never fixed, so every original compiles.)"""

    def __init__(self, source: SourceFile):
        self.source = source
        self.path = source.path

    def problem(self, text: str) -> Optional[str]:
        from ms_lint.engine import compile_problem

        rejected = compile_problem(text, self.path)  # first: libcst's parser must never see what CPython rejects
        if rejected is not None:
            reason = rejected.message.replace("cannot analyze file: ", "")
            return f"the fixed code does not compile ({reason}, line {rejected.line})"
        try:
            parse_module(text)  # a long module a run of statements at a time (``ms_lint.chunks``)
        except cst.ParserSyntaxError as exc:
            return f"the fixed code does not parse ({exc.message})"
        except (RecursionError, MemoryError):
            return "the fixed code is too deeply nested to parse"
        try:
            self.source.encode(text)
        except UnicodeEncodeError:
            return f"the fixed code cannot be encoded as {self.source.encoding}"
        return None


_BARE_LF = re.compile(r"(?<!\r)\n")


def keep_newlines(original: str, text: str) -> str:
    """In a file whose lines all end in CRLF, make the lines a fix inserted end in CRLF too.

    libcst writes the module's default newline for new nodes, but a rule may carry "\\n" in code it built.
    Python reads CRLF and LF alike (also inside string literals), so this never changes what code means.
    """
    crlf = original.count("\r\n")
    if crlf and crlf == original.count("\n") and "\n" in text:
        return _BARE_LF.sub("\r\n", text)
    return text


# -- imports ---------------------------------------------------------------------------------------------

def add_imports(module: cst.Module, requests: Sequence[ImportRequest], path: Optional[str] = None) -> cst.Module:
    """Add each requested import statement once, where the file's own import order puts it
    (``ms_lint.import_order``: joined to a ``from`` import of the same module, else in its isort section).

    A request is skipped when a top-level import already binds the same name to the same thing
    (``from mindspore import ops`` is present in ``from mindspore import nn, ops``). ``path``: the file's path,
    which tells the project's own (first-party) packages from installed ones.
    """
    present = set()
    for stmt in module.body:
        if import_order.is_import_line(stmt):
            present.update(_bindings(stmt))
    wanted: List[cst.SimpleStatementLine] = []
    for request in requests:
        try:
            statement = cst.parse_statement(request.statement.strip() + module.default_newline)
        except cst.ParserSyntaxError:
            raise ValueError(f"bad import request {request.statement!r}") from None
        if not import_order.is_import_line(statement):
            raise ValueError(f"import request is not an import: {request.statement!r}")
        bindings = set(_bindings(statement))
        if bindings and bindings <= present:
            continue
        present |= bindings
        wanted.append(statement)
    if not wanted:
        return module
    body = list(module.body)
    limit = _import_insert_index(body)
    first_party = import_order.first_party_names(path)
    for statement in wanted:
        if import_order.join_from_import(body, limit, statement):
            continue
        import_order.insert_import(body, limit, statement, first_party)
        limit += 1
    return module.with_changes(body=body)


def _bindings(stmt: cst.SimpleStatementLine):
    """What each import binds: ("import", "a.b", local name) or ("from", "module", name, local name)."""
    for small in stmt.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = _code(alias.name)
                local = alias.asname.name.value if alias.asname else full  # type: ignore[union-attr]
                yield ("import", full, local)
        elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            module = ("." * len(small.relative)) + (_code(small.module) if small.module else "")
            for alias in small.names:
                name = _code(alias.name)
                local = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
                yield ("from", module, name, local)


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _import_insert_index(body: List[cst.CSTNode]) -> int:
    last_import = None
    for index, stmt in enumerate(body):
        if import_order.is_import_line(stmt):
            last_import = index
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            break
    if last_import is not None:
        return last_import + 1
    return 1 if body and _is_docstring(body[0]) else 0


def _with_text(source: SourceFile, text: str) -> SourceFile:
    """The file as it reads after a round of fixes. ``raw`` is what the project index summarizes this file from
    (``index_for``): empty bytes there made the file an empty module to the index, so in ``fix`` a Cell whose
    base lives in another module was no Cell and its findings were never fixed."""
    try:
        raw = source.encode(text)
    except UnicodeEncodeError:  # a fix inserted text the file's encoding cannot hold: the disk's bytes then
        raw = source.raw
    return SourceFile(path=source.path, text=text, encoding=source.encoding, has_bom=source.has_bom, raw=raw)
