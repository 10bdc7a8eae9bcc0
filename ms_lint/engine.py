"""Analyze one file: pre-filter, parse once, walk graph code once with every enabled rule, resolve positions.

The cheap text tests come first: a file that never mentions ``mindspore`` cannot define graph code or
configure a graph run, and a file in which no enabled rule can fire (``ms_lint.prefilter``: no graph code, none
of the text a module rule needs) is only syntax-checked with ``compile()``; neither is parsed with libcst.
Positions are resolved only for files that have findings.
"""
from __future__ import annotations

import __future__
import ast
import functools
import operator
import re
import sys
import warnings
from collections import Counter
from dataclasses import dataclass, field
from types import CodeType, MappingProxyType
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Type

import libcst as cst
from libcst.metadata import CodeRange

from ms_lint.analysis import screen
from ms_lint.analysis.config_files import ConfigRead, reading_recorded
from ms_lint.analysis.dataflow import forget_reads
from ms_lint.analysis.index import ProjectIndex, index_for
from ms_lint.analysis.layout import digest_of
from ms_lint.analysis.project import ProjectView, use_fast_trees
from ms_lint.chunks import chunk_bounds, runs
from ms_lint.codes import UNANALYZABLE
from ms_lint.config import Config
from ms_lint.context import ModuleContext
from ms_lint.cstutil import parse_module
from ms_lint.fasttree import FastPositions, NeedsRealTree, analyzing_fast, is_fast_module, parse_for_analysis
from ms_lint.diagnostics import Finding
from ms_lint.noqa import is_suppressed, skips_file
from ms_lint.positions import StatementPositions
from ms_lint.prefilter import rules_that_may_fire
from ms_lint.rules import Rule, all_rules
from ms_lint.rules.base import RawReport
from ms_lint.source import SourceFile, UnreadableSource, read_source
from ms_lint.walk import dispatch, node_hooks

PREFILTER = "mindspore"
# Why files checked on fast trees were analyzed again on libcst's (``NeedsRealTree``'s node class), per process:
# what ``benchmarks/`` report about the fast trees.
REANALYZED: "Counter[str]" = Counter()
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
    # The config files (YAML/JSON) the rules read, as (path, mtime_ns, size): the findings depend on them too
    config_reads: List[ConfigRead] = field(default_factory=list)

    _printed: Optional[str] = field(default=None, repr=False, compare=False)

    @property
    def unanalyzable(self) -> bool:
        return any(f.code == UNANALYZABLE for f in self.findings)

    def printed(self) -> str:
        """libcst's code for ``module``, worked out once: not always the source text (``fixer.carried_over``)."""
        if self._printed is None:
            assert self.module is not None
            self._printed = self.module.code
        return self._printed


def unanalyzable(path: str, reason: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(code=UNANALYZABLE, message=f"cannot analyze file: {reason}", path=path, line=line,
                   column=column, end_line=line, end_column=column)


def _syntax_error(path: str, text: str, exc: "cst.ParserSyntaxError") -> Finding:
    """Python's own message and line where it has one (clearer than the parser's), else libcst's."""
    try:
        python_compile(text, path)
    except SyntaxError as py_exc:
        return unanalyzable(path, f"syntax error: {py_exc.msg}", py_exc.lineno or 1, py_exc.offset or 1)
    except (ValueError, RecursionError, MemoryError):
        pass
    return unanalyzable(path, f"syntax error: {exc.message}", exc.raw_line, exc.raw_column + 1)


def analyze_path(path: str, config: Config, display_path: Optional[str] = None,
                 index: Optional[ProjectIndex] = None, fast_trees: bool = False) -> FileAnalysis:
    shown = display_path or path
    try:
        source = read_source(path)
    except UnreadableSource as exc:
        return FileAnalysis(shown, [unanalyzable(shown, exc.reason, exc.line or 1)])
    return analyze_source(source, config, shown, index=index, fast_trees=fast_trees)


def analyze_source(source: SourceFile, config: Config, display_path: Optional[str] = None,
                   rules: Optional[Sequence[Type[Rule]]] = None, flake8_noqa: bool = True,
                   index: Optional[ProjectIndex] = None, trees=None, fast_trees: bool = False) -> FileAnalysis:
    """Findings of one file. ``index`` is the project the file belongs to (``ms_lint.analysis.index``); without
    one, the file's own package is indexed (once per process and package). ``flake8_noqa=False`` (the flake8
    plugin): ``# flake8: noqa`` is flake8's to apply. ``trees``: what parses the text and resolves positions
    instead of ``cst.parse_module`` and ``node_positions`` (the language server's incremental parser,
    ``ms_lint.lsp.incremental``: same trees, same positions), which also keeps what the scope worked out from the
    trees of the statements an edit left alone (``scope.TreeFacts``).

    ``fast_trees`` (``ms-lint check``, whose findings keep no fix to apply): the file and the other modules its
    questions reach are analyzed on trees built from ``ast`` (``ms_lint.fasttree``: the same findings, messages
    and positions, at about two fifths of libcst's parse); where those cannot answer exactly (``NeedsRealTree``) the
    file is analyzed again on libcst's tree (the other modules' fast trees still answer what they can), and if
    that is not enough, on libcst's trees alone. The result's ``module`` and fixes are then for reporting only."""
    if not fast_trees or trees is not None:
        return _analyze_source(source, config, display_path, rules, flake8_noqa, index, trees, False)
    before = use_fast_trees(True)
    try:
        try:
            with analyzing_fast():
                result = _analyze_source(source, config, display_path, rules, flake8_noqa, index, None, True)
            if not result.unanalyzable:
                return result
            REANALYZED["unanalyzable"] += 1  # too deep for the fast tree, say: libcst's tree decides
        except NeedsRealTree as why:
            REANALYZED[f"own tree: {why}"] += 1
        except Exception as error:  # a rewrite's transformer run over fast nodes, say: libcst's tree decides
            REANALYZED[f"error: {type(error).__name__}"] += 1
        try:
            return _analyze_source(source, config, display_path, rules, flake8_noqa, index, None, False)
        except NeedsRealTree as why:
            REANALYZED[f"other trees: {why}"] += 1
        use_fast_trees(False)
        return _analyze_source(source, config, display_path, rules, flake8_noqa, index, None, False)
    finally:
        use_fast_trees(before)


def _analyze_source(source: SourceFile, config: Config, display_path: Optional[str],
                    rules: Optional[Sequence[Type[Rule]]], flake8_noqa: bool, index: Optional[ProjectIndex],
                    trees, fast: bool) -> FileAnalysis:
    path = display_path or source.path
    result = FileAnalysis(path, source=source)
    text = source.text
    if index is None:
        if PREFILTER not in text and "construct" not in text:
            return result  # alone (flake8): a file that neither names MindSpore nor defines a construct is not read
        if skips_file(text, flake8_noqa):
            return result
        index = index_for(source, config)
    project = ProjectView(index, source.path, config)
    graph_here = bool(project.graph_functions())  # graph code the project makes of this file
    if graph_here and PREFILTER not in text and _stale_and_broken(source, project):
        graph_here = False  # as the command line, whose index holds no summary of a file that does not parse
    if PREFILTER not in text and not graph_here:
        return result
    firing = rules_that_may_fire(text, _enabled(rules, config, path), graph_here)
    # libcst parses the file only when a rule can fire (ms_lint/prefilter.py) and, unless the editor's trees are
    # at hand, a graph function writes a loop or an `if` a firing rule hooks (ms_lint/analysis/screen.py)
    indexed = _index_parsed(source, project)
    parses = bool(firing) and (trees is not None or _graph_syntax_possible(text, project, firing, indexed))
    # A rule's own screen (``Rule.may_fire_in``) may have spared the parse of a file that such a rule used to have
    # parsed, and compiled: it is still compiled, so that what only the compiler rejects is still reported there.
    compiles = parses or not indexed or any(rule.may_fire_in is not None for rule in firing)
    if compiles and skips_file(text, flake8_noqa):
        return result  # asked only here: every return above says nothing either (a tenth of a file's time there)
    if compiles:
        problem = compile_problem(text, path, getattr(trees, "runs", None))
        if problem is not None:
            # What this Python cannot compile is never handed to libcst: its native parser crashes the process at
            # about 1,500 nested parentheses, which CPython rejects at 200; and code CPython cannot compile
            # (a RecursionError on 1,000 nested calls) cannot run as graph code either. A file the index parsed
            # and no rule reads further is not compiled (a tenth of a cold run's CPU on MindSpore's source):
            # what only the compiler rejects there (``return`` outside a function) hides no finding.
            result.findings.append(problem)
            return result
    if not parses:
        return result  # no rule can fire, or no graph function holds what the firing rules hook: nothing to say
    if trees is None:
        forget_reads()  # the memo keeps nodes alive: another file's are of no use here (the editor keeps its own)
    # parsed already for another file's cross-module question (the editor server keeps its own trees)
    context = project.own_context(text) if trees is None else None
    if context is not None and not fast and is_fast_module(context.module):
        context = None  # analyzed again on libcst's tree (``analyze_source``)
    if context is not None:
        module = context.module
    else:
        try:
            if trees is not None:
                module = trees.parse(text)
            else:
                module = parse_for_analysis(text) if fast else parse_module(text)
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
        if context is None:
            context = ModuleContext(module, text, source.path, config, project,
                                    known=getattr(trees, "tree_facts", None))
            if trees is not None:  # the next edit's scope starts from these (the model fills them as it goes)
                trees.tree_facts = context.scope.tree_facts
            # this file's own cross-module questions (the sub-cells it calls in its own Cells) and later files'
            # ask this context; the editor's shadow of the buffer (``lsp.documents._BufferContext``) would parse
            # and model the same text a second time
            project.remember(context)
        result.context = context
        with reading_recorded() as reads:
            reports = run_rules(context, firing)  # only the rules that can fire here (ms_lint/prefilter.py)
        result.config_reads = sorted(reads, key=lambda read: read[0])
    except RecursionError:
        result.findings.append(unanalyzable(path, "too deeply nested to analyze"))
        return result
    if reports:
        _attach_positions(result, module, reports, text, path, trees, context.parents)
    return result


def _graph_syntax_possible(text: str, project: ProjectView, firing: Sequence[Type[Rule]], indexed: bool) -> bool:
    """False when the screens prove no firing rule can report here: no graph function of the file holds a node the
    graph rules hook, and each other rule's own test (``Rule.may_fire_in``) says it cannot fire; True when one
    may, or when they cannot tell (a rule with neither screen; ``indexed`` false: no summary of these very bytes,
    ``_index_parsed``). The rules' own tests are asked last, only when the keywords leave the file unparsed."""
    if not indexed:
        return True
    by_keywords = [rule for rule in firing if screen.rule_keywords([rule]) is not None]
    if by_keywords and screen.may_fire(text, project.index.by_path[project.path], _project_graph(project),
                                       screen.rule_keywords(by_keywords), _constructs_compiled(project)):
        return True
    return any(rule.may_fire_in is None or rule.may_fire_in(text, project.path)
               for rule in firing if rule not in by_keywords)


def _project_graph(project: ProjectView) -> Iterable[str]:
    """The functions of this module the project makes graph code that ``GraphScope._add_project_graph_functions``
    adds: under ``graph-mode = "jit-only"``, not a Cell's ``construct``."""
    found = project.graph_functions()
    if project.config.graph_mode == "auto":
        return found
    return [qualname for qualname, why in found.items() if not why.startswith("construct")]


def _constructs_compiled(project: ProjectView) -> Callable[[str], bool]:
    """Whether ``GraphScope._find_roots`` may make the ``construct`` of a class of this module a root, asked with
    its own tests: not under ``graph-mode = "jit-only"``, nor in a module that refuses graph mode, nor of a Cell
    of a PyNative package that no graph model holds (``ProjectView.eager_cell``). (Its tests on the module's
    ``set_context`` calls and on the class being a Cell read the libcst tree: not asked here.)"""
    if project.config.graph_mode != "auto" or project.refuses_graph_mode():
        return lambda _owner: False
    return lambda owner: not project.eager_cell(owner)


def _stale_and_broken(source: SourceFile, project: ProjectView) -> bool:
    """The index's summary of the file is of other bytes, and these do not parse: the editor's index keeps the
    summary of the buffer's last text that parsed, whose graph functions a text with a syntax error does not have.
    (Bytes the summary was made from count as parsed whatever their coding cookie says; bytes changed since the
    index read them, and parsed, keep the graph code it found.)"""
    summary = project.index.by_path.get(project.path)
    if summary is not None and summary.digest == digest_of(source.raw):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source.text)
    except (SyntaxError, ValueError):
        return True
    except (RecursionError, MemoryError):
        return False  # too deep for this parser, not necessarily broken: keep what the index found
    return False


def _index_parsed(source: SourceFile, project: ProjectView) -> bool:
    """The project index holds a summary of these very bytes, read as this text: the stdlib parser accepted
    them (``ms_lint.analysis.index.summarize_file``)."""
    summary = project.index.by_path.get(project.path)
    return summary is not None and summary.digest == digest_of(source.raw) and _summarized_as(source)


def _summarized_as(source: SourceFile) -> bool:
    """The index read the file's bytes as UTF-8 (``summarize_file``): is that the text checked here? Not under a
    coding cookie that decodes them otherwise (``utf-7``, ``latin-1``): the summary's lines and names would not
    be this text's."""
    try:
        return source.raw.decode("utf-8-sig") == source.text
    except UnicodeDecodeError:
        return False


# ``python script.py`` compiles with the default recursion limit. The analysis raises the limit (RECURSION_LIMIT),
# and at that limit CPython's own compiler overflows the C stack (a segfault) on a 100,000-term sum instead of
# raising RecursionError, so ``compile()`` always runs at the default.
COMPILE_RECURSION_LIMIT = 1000
# libcst's native parser nests ``a and b and c ...`` one level per operand and crashes the process (SIGSEGV) at
# about 7,500 operands, which CPython compiles (its BoolOp is flat): longer chains are MSL900.
BOOL_CHAIN_LIMIT = 2000
_BOOL_WORDS = re.compile(r"\b(?:and|or)\b")


# The ``__future__`` features a later run is compiled with. Not ``barry_as_FLUFL``: its flag, passed to
# ``compile()``, makes ``<>`` valid, but the import written in the source does not (CPython 3.11), so passing it
# on would accept what the whole module rejects.
_FUTURE_FLAGS = functools.reduce(operator.or_, (getattr(__future__, name).compiler_flag
                                                for name in __future__.all_feature_names
                                                if name != "barry_as_FLUFL"), 0)


def python_compile(text: str, path: str, flags: int = 0) -> CodeType:
    """``compile()`` as ``python`` would run the file (default recursion limit, no inherited flags, warnings
    silenced; ``flags``: ``__future__`` features in force); raises what ``compile()`` raises."""
    before = sys.getrecursionlimit()
    lowered = False
    try:
        if before > COMPILE_RECURSION_LIMIT:
            try:
                sys.setrecursionlimit(COMPILE_RECURSION_LIMIT)
                lowered = True
            except RecursionError:  # called deeper than the default limit: keep the current one
                pass
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: not ours to report
            return compile(text, path, "exec", flags=flags, dont_inherit=True, optimize=2)
    finally:
        if lowered:
            sys.setrecursionlimit(before)


_GLOBAL_WORD = re.compile(r"\bglobal\b")


def _compiles_in_runs(text: str, path: str, chunk_lines: Optional[int] = None,
                      compiled: Optional[Dict[Tuple[str, int], int]] = None) -> bool:
    """True when the text is long enough to be cut into runs of top-level statements (``ms_lint.chunks``; runs of
    ``chunk_lines`` lines or more) and every run compiles: then the whole module compiles, with a fraction of
    ``compile()``'s peak memory (about 4 KB per line). False when it is not cut or a run fails: the caller
    compiles it whole, which gives the exact error. The ``__future__`` features the first run imports are passed
    on to the others (the first run's code object carries them); a module naming ``__future__`` after its first
    run, or holding a ``global`` statement (at module level, ``x = 1`` in one run and ``global x`` in a later one
    is an error only the whole module shows), is compiled whole. ``compiled``: the runs compiled before, (text,
    flags) -> the flags its code carries (the language server's, ``lsp.runs.DocumentRuns``); it is left holding
    this text's runs."""
    bounds = chunk_bounds(text, chunk_lines)
    if len(bounds) == 1 or _GLOBAL_WORD.search(text) or "__future__" in text[bounds[1][0]:]:
        return False
    known = compiled.copy() if compiled is not None else {}
    if compiled is not None:
        compiled.clear()
    flags = 0
    try:
        for number, (run, _line) in enumerate(runs(text, bounds)):
            carried = known.get((run, flags))
            if carried is None:
                carried = python_compile(run, path, flags).co_flags & _FUTURE_FLAGS
            if compiled is not None:
                compiled[(run, flags)] = carried
            if number == 0:
                flags = carried
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return False
    return True


def compile_problem(text: str, path: str, runs_of=None) -> Optional[Finding]:
    """MSL900 when Python's own compiler rejects the text (about 10x cheaper than a libcst parse), or when the
    text would crash libcst's parser; None otherwise. Syntax errors get Python's message and position; nesting
    too deep for the compiler (``RecursionError``, ``MemoryError``: 500 nested lists, a 5,000-term sum) is
    reported as such. ``runs_of``: what the language server keeps of the document's runs
    (``lsp.runs.DocumentRuns``): only the runs an edit changed are compiled."""
    try:
        compiled = (_compiles_in_runs(text, path) if runs_of is None
                    else _compiles_in_runs(text, path, runs_of.chunk_lines, runs_of.compiled))
        if not compiled:
            python_compile(text, path)
    except SyntaxError as exc:
        version = f"Python {sys.version_info[0]}.{sys.version_info[1]}"
        return unanalyzable(path, f"syntax error ({version}): {exc.msg}", exc.lineno or 1, exc.offset or 1)
    except (RecursionError, MemoryError) as exc:
        return unanalyzable(path, f"too deeply nested for Python to compile ({type(exc).__name__})")
    except (ValueError, TypeError) as exc:  # e.g. NUL bytes (read_source rejects them first)
        return unanalyzable(path, f"Python cannot compile it ({exc})")
    # ``str.count`` bounds the word count from above (every match is an ``and`` or ``or``) at a fraction of the
    # regex's cost
    if (text.count("and") + text.count("or") >= BOOL_CHAIN_LIMIT
            and len(_BOOL_WORDS.findall(text)) >= BOOL_CHAIN_LIMIT):
        line = _long_bool_chain(text)
        if line is not None:
            return unanalyzable(path, f"an `and`/`or` chain of more than {BOOL_CHAIN_LIMIT} operands (too long for "
                                      "the parser ms-lint uses)", line)
    return None


def _long_bool_chain(text: str) -> Optional[int]:
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return 1
    for node in ast.walk(tree):
        if isinstance(node, ast.BoolOp) and len(node.values) > BOOL_CHAIN_LIMIT:
            return node.lineno
    return None


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
        for attr, node_type in node_hooks(type(rule)):
            (enter if attr[0] == "v" else leave).setdefault(node_type, []).append(getattr(rule, attr))
    if enter or leave:
        scope = context.scope
        # a graph function nested in another (a closure it calls) is walked on its own, with its own value model
        nested = frozenset(info.node for info in scope.graph_functions() if scope.inside_graph_function(info.node))
        for info in scope.graph_functions():
            for rule in rules:
                rule.function = info.node
            context.parents[info.node.body] = info.node
            dispatch(info.node.body, enter, leave, context.parents, nested)
        for rule in rules:
            rule.function = None
    for rule in rules:
        rule.check_module()
    return [report for rule in rules for report in rule.reports]


def _attach_positions(result: FileAnalysis, module: cst.Module, reports: List[RawReport], text: str,
                      path: str, trees=None, parents: Mapping[cst.CSTNode, cst.CSTNode] = MappingProxyType({})
                      ) -> None:
    if trees is not None:
        positions = trees.positions(module)
    elif is_fast_module(module):
        positions = FastPositions()
    else:
        positions = StatementPositions(module, text, parents)
    result.positions = positions
    lines = text.splitlines()
    rank = getattr(positions, "statement_rank", None)
    places = list(range(len(reports)))
    if rank is not None:  # statement by statement: each one's positions generated once, then let go
        places.sort(key=lambda number: rank(reports[number].node))
    found = {number: positions.get(reports[number].node) for number in places}
    for number, report in enumerate(reports):
        where = found[number]
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
            detail=report.detail,
        )
        if is_suppressed(lines, finding.line, finding.code):
            result.suppressed.append(finding)
        else:
            result.findings.append(finding)
    result.findings.sort(key=Finding.sort_key)
