"""``ms-lint fix``: show the rewrites for fixable findings as a unified diff, or ``--apply`` them.

Output: the diff on stdout (``--- a/path`` / ``+++ b/path``); on stderr, what could not be fixed (unanalyzable
files, findings left, fixes refused) and a summary line. Exit codes: 0 nothing left to fix, 1 changes pending
(without ``--apply``) or findings without an applicable fix left, 2 an error (MSL900, a file not written, a
broken fix). Files are fixed independently: one bad file never stops the others.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

from ms_lint import line_diff
from ms_lint.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from ms_lint.commands.common import add_jobs_option, add_selection_options, load_run, read_stdin, unreadable_findings
from ms_lint.config import Config
from ms_lint.diagnostics import Finding

PARALLEL_THRESHOLD = 24  # below this many files, worker start-up costs more than it saves


@dataclass
class FixOptions:
    apply: bool = False
    unsafe: bool = False
    diff: bool = True  # produce the unified diff text
    verified_only: bool = False
    accept_tradeoff: bool = False
    device: str = "CPU"
    repeat: int = 3
    grad: bool = False


@dataclass
class FileResult:
    """What happened to one file. Findings carry no fix objects (results cross process boundaries)."""

    path: str
    changed: bool = False  # the fix changes the file (written when --apply and ``written``)
    written: bool = False
    diff: str = ""
    applied: List[Finding] = field(default_factory=list)
    remaining: List[Finding] = field(default_factory=list)
    unanalyzable: List[Finding] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # lead to exit 2
    notes: List[str] = field(default_factory=list)  # refused fixes (noqa, verification), for the user


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "fix", help="show the rewrites for fixable findings as a diff; --apply writes them")
    add_selection_options(parser)
    parser.add_argument("--apply", action="store_true", help="write the fixes to the files")
    parser.add_argument("--diff", action="store_true",
                        help="print the unified diff (the default without --apply; with --apply, also print it)")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="also apply fixes marked unsafe (they may change behaviour, e.g. NaN gradients)")
    parser.add_argument("--show-fixes", action="store_true", help="list every applied fix on stderr")
    parser.add_argument("--statistics", action="store_true", help="count applied fixes per code on stderr")
    add_jobs_option(parser)
    parser.add_argument("--quiet", "-q", action="store_true", help="no summary line, no warnings")
    parser.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="exit 1 when a fix was applied, even if nothing is left")
    verify = parser.add_argument_group("verified fixes (need the verify extra: MindSpore)")
    verify.add_argument("--verified-only", action="store_true",
                        help="apply only rewrites the verifier proves: both versions run, outputs match and the "
                             "rewrite is faster (needs an inputs spec for the function)")
    verify.add_argument("--accept-tradeoff", action="store_true",
                        help="with --verified-only, also apply rewrites verified as a trade-off "
                             "(faster compile, slower run or the reverse)")
    verify.add_argument("--device", default="CPU", help="device for --verified-only runs (default: CPU)")
    verify.add_argument("--repeat", type=int, default=3, help="runs per version for --verified-only (default: 3)")
    verify.add_argument("--grad", action="store_true", help="with --verified-only, also compare gradients")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.accept_tradeoff and not args.verified_only:
        return _usage("--accept-tradeoff only makes sense with --verified-only")
    if args.repeat < 1:
        return _usage("--repeat must be at least 1")
    loaded = load_run(args)
    if loaded is None:
        return EXIT_ERROR
    options = FixOptions(apply=args.apply, unsafe=args.unsafe_fixes, diff=args.diff or not args.apply,
                         verified_only=args.verified_only, accept_tradeoff=args.accept_tradeoff,
                         device=args.device, repeat=args.repeat, grad=args.grad)
    if loaded.stdin:
        return fix_stdin(loaded.stdin_name, loaded.config_for(loaded.stdin_name), options, diff=args.diff,
                         quiet=args.quiet, exit_non_zero_on_fix=args.exit_non_zero_on_fix)
    results = fix_files(loaded.files, loaded.config_for, options, jobs=args.jobs)
    results.extend(FileResult(f.path, unanalyzable=[f]) for f in unreadable_findings(loaded))
    return report(results, options, show_fixes=args.show_fixes, statistics=args.statistics, quiet=args.quiet,
                  exit_non_zero_on_fix=args.exit_non_zero_on_fix)


def fix_stdin(name: str, config: Config, options: FixOptions, diff: bool = False, quiet: bool = False,
              exit_non_zero_on_fix: bool = False) -> int:
    """``fix -``: the fixed source on stdout (the diff instead with ``--diff``), what is left on stderr. Fixes
    marked unsafe need ``--unsafe-fixes`` as for files; nothing is written anywhere."""
    from ms_lint.source import UnreadableSource, decode_source

    raw = read_stdin()
    try:
        source = decode_source(name, raw)
    except UnreadableSource as exc:
        from ms_lint.engine import unanalyzable

        write_bytes(raw)  # what cannot be fixed comes back unchanged, as ruff does
        result = FileResult(name, unanalyzable=[unanalyzable(name, exc.reason, exc.line or 1)])
        return report([result], FixOptions(apply=True), quiet=quiet)
    stdin_options = FixOptions(apply=True, unsafe=options.unsafe, diff=diff)
    result, fixed = fix_source(source, name, config, stdin_options)
    if diff:
        emit_outcome(sys.stdout, result.diff)
    else:
        write_bytes(source.encode(fixed) if result.changed else raw)
    result.written = result.changed
    result.diff = ""
    return report([result], stdin_options, quiet=quiet, exit_non_zero_on_fix=exit_non_zero_on_fix)


def _usage(message: str) -> int:
    print(f"ms-lint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


# -- fixing files --------------------------------------------------------------------------------------

def fix_files(files: Sequence[str], config, options: FixOptions, jobs: Optional[int] = None,
              rules=None) -> List[FileResult]:
    """Fix each file once (a file reached through several paths or symlinks counts once), in input order.

    ``config``: one Config, or a function giving each file's. ``--verified-only`` runs in this process, one file
    after another: the verifier measures compile and run times, which parallel work would distort. Workers
    (``--jobs``, capped at files and cores) that die cost only the file they were fixing.
    """
    from ms_lint.processes import worker_count
    from ms_lint.pool import run_batches

    config_of = config if callable(config) else (lambda _path: config)
    unique: List[str] = []
    seen = set()
    for path in files:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    workers = 1 if options.verified_only or rules is not None else worker_count(jobs, len(unique))
    if workers > 1 and len(unique) >= PARALLEL_THRESHOLD:
        # Largest files first, one at a time: a 1 MB module must not end up last in a worker's batch.
        order = sorted(range(len(unique)), key=lambda i: -_size(unique[i]))
        tasks = [(i, unique[i], config_of(unique[i]), options) for i in order]
        done = run_batches(tasks, _fix_task, workers, 1, _lost)
        results: List[Optional[FileResult]] = [None] * len(unique)
        for index, result in done:
            results[index] = result
        return [r for r in results if r is not None]
    return [fix_file(path, config_of(path), options, rules=rules) for path in unique]


def _lost(task, why: str):
    from ms_lint.engine import unanalyzable
    from ms_lint.runner import display_path

    index, path = task[0], task[1]
    shown = display_path(path)
    return index, FileResult(shown, unanalyzable=[unanalyzable(shown, f"internal error: the process fixing it died "
                                                                      f"({why}); the file is unchanged or fully "
                                                                      "fixed, never partly written")])


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _fix_task(task: Tuple[int, str, Config, FixOptions]) -> Tuple[int, FileResult]:
    return task[0], fix_file(task[1], task[2], task[3])


def fix_file(path: str, config: Config, options: FixOptions, rules=None) -> FileResult:
    """Fix one file; never raises for a problem with the file (it becomes MSL900 or an error line)."""
    from ms_lint.engine import unanalyzable
    from ms_lint.runner import display_path
    from ms_lint.source import UnreadableSource, read_source

    shown = display_path(path)
    try:
        source = read_source(path)
    except UnreadableSource as exc:
        return FileResult(shown, unanalyzable=[unanalyzable(shown, exc.reason, exc.line or 1)])
    return fix_source(source, shown, config, options, rules=rules, write_to=path)[0]


def fix_source(source, shown: str, config: Config, options: FixOptions, rules=None,
               write_to: Optional[str] = None) -> Tuple[FileResult, str]:
    """Fix one decoded source; with ``options.apply`` and ``write_to``, write the result there. Returns the
    result and the fixed text (the original text when nothing changed or nothing could be fixed)."""
    from ms_lint.engine import analyze_source, unanalyzable
    from ms_lint.fixer import fix_text
    from ms_lint.writer import WriteError, write_atomic

    path = write_to or shown
    result = FileResult(shown)
    accept = _verifier(source.text, path, shown, config, options, result.notes) if options.verified_only else None
    try:
        outcome = fix_text(source, config, unsafe=options.unsafe, path=shown, accept=accept, rules=rules)
    except Exception as exc:  # an ms-lint bug must not end the run: report it on the file
        result.unanalyzable.append(unanalyzable(shown, f"internal error ({type(exc).__name__}: {exc})"))
        return result, source.text
    result.remaining = [_bare(f) for f in outcome.remaining if f.code != "MSL900"]
    result.unanalyzable = [_bare(f) for f in outcome.remaining if f.code == "MSL900"]
    if outcome.error and not result.unanalyzable:
        result.errors.append(f"{shown}: error: {outcome.error}")
    result.errors.extend(f"{shown}: error: {problem}" for problem in outcome.problems)
    result.notes.extend(f"{shown}:{f.line}:{f.column}: {f.code} not fixed: its fix would rewrite a line whose "
                        "finding is suppressed with noqa" for f in outcome.blocked)
    if not outcome.changed:
        return result, source.text
    result.changed = True
    result.applied = [_bare(f) for f in outcome.applied]
    if options.diff:
        result.diff = unified_diff(outcome.original, outcome.fixed, shown)
    if options.apply and write_to is not None:
        try:
            write_atomic(write_to, source.encode(outcome.fixed), expected=source.raw)
            result.written = True
        except WriteError as exc:
            result.errors.append(f"{shown}: error: not written: {exc.reason}")
            # Nothing was fixed: what is left is what the file on disk has, at its own positions.
            try:
                left = analyze_source(source, config, shown, rules=rules).findings
            except Exception:  # the analysis already ran once on this text; never lose the error line
                left = list(result.remaining) + list(result.applied)
            result.remaining = [_bare(f) for f in left if f.code != "MSL900"]
            result.applied = []
    return result, outcome.fixed


def _bare(finding: Finding) -> Finding:
    finding.fix_object = None
    return finding


def _verifier(original: str, path: str, shown: str, config: Config, options: FixOptions,
              notes: List[str]) -> Callable[[Finding, str], bool]:
    """The ``accept`` callback for ``--verified-only``: each fix is verified against the file as read (so a
    later fix is judged with the earlier ones in place), for the graph function it rewrites."""
    from ms_lint.verifier import VerifyError, resolve_inputs, verify_pair
    from ms_lint.verifier.inputs import required_parameters

    real = os.path.realpath(path)

    def accept(finding: Finding, candidate: str) -> bool:
        where = f"{shown}:{finding.line}:{finding.column}: {finding.code}"
        function = finding.function
        if function is None:
            notes.append(f"{where} not fixed: not verifiable (the fix is not inside a top-level graph "
                         "function or method)")
            return False
        try:
            resolved = resolve_inputs(original, function, path=real, pyproject=config.source)
        except VerifyError as exc:
            notes.append(f"{where} not fixed: bad inputs spec for {function}: {exc}")
            return False
        if resolved.origin == "none" and required_parameters(original, function) != []:
            notes.append(f"{where} not fixed: not verified, no inputs spec for {function} (add "
                         f"'# ms-lint: inputs=x=float32[8,4]' above it, or {function.split('.')[0]} = \"...\" "
                         "under [tool.ms-lint.verify] in pyproject.toml)")
            return False
        try:
            verification = verify_pair(original, candidate, function=function, device=options.device,
                                       repeat=options.repeat, grad=options.grad, path=real,
                                       pyproject=config.source, code=finding.code, line=finding.line)
        except VerifyError as exc:
            notes.append(f"{where} not fixed: cannot verify {function}: {exc}")
            return False
        ok = accepts(verification.verdict, options.accept_tradeoff)
        status = "verified, applied" if ok else "not fixed"
        notes.append(f"{where} {status}: {verification.verdict}: {verification.message}")
        return ok

    return accept


def accepts(verdict: str, accept_tradeoff: bool) -> bool:
    """``verified`` always; ``tradeoff`` (faster compile but slower run, or the reverse) only when asked."""
    return verdict == "verified" or (accept_tradeoff and verdict == "tradeoff")


# -- output ----------------------------------------------------------------------------------------------

_LINES = re.compile(r"[^\n]*\n|[^\n]+$")


def unified_diff(original: str, fixed: str, shown: str) -> str:
    """A ``diff -u`` / git style patch; lines are split on "\\n" only (CR and form feeds stay in the line)."""
    name = shown.replace(os.sep, "/").lstrip("/")
    lines = line_diff.unified_diff(_LINES.findall(original), _LINES.findall(fixed), f"a/{name}", f"b/{name}")
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def report(results: List[FileResult], options: FixOptions, show_fixes: bool = False,
           statistics: bool = False, quiet: bool = False, exit_non_zero_on_fix: bool = False) -> int:
    err = []
    for result in results:
        if result.diff:
            emit_outcome(sys.stdout, result.diff)
        for f in result.unanalyzable:
            err.append(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}")
        err.extend(result.errors)
        err.extend(result.notes)
        if show_fixes and result.changed and (result.written or not options.apply):
            err.extend(f"{f.path}:{f.line}:{f.column}: {f.code} fixed: {f.message}" for f in result.applied)
        for f in result.remaining:
            marker = ""
            if f.fix:
                marker = " [*]" if f.fix.get("applicability") == "safe" else " [*unsafe]"
            err.append(f"{f.path}:{f.line}:{f.column}: {f.code}{marker} {f.message}")
    done = [r for r in results if r.changed and (r.written or not options.apply)]
    fixed = sum(len(r.applied) for r in done)
    remaining = [f for r in results for f in r.remaining]
    if statistics and fixed:
        counts = Counter(f.code for r in done for f in r.applied)
        err.extend(f"{count:>6}  {code} fixed" for code, count in sorted(counts.items()))
    if not quiet:
        err.append(summary(fixed, len(done), remaining, options))
    if err:
        emit_outcome(sys.stderr, "\n".join(err) + "\n")
    if any(r.unanalyzable or r.errors for r in results):
        return EXIT_ERROR
    if remaining or (done and not options.apply) or (exit_non_zero_on_fix and fixed):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def summary(fixed: int, files: int, remaining: List[Finding], options: FixOptions) -> str:
    """"Fixed 3 findings in 2 files; 1 remaining (1 need --unsafe-fixes)." ("Would fix" without --apply)."""
    verb = "Fixed" if options.apply else "Would fix"
    text = f"{verb} {fixed} {_plural(fixed, 'finding')} in {files} {_plural(files, 'file')}; {len(remaining)} remaining"
    need_unsafe = 0 if options.unsafe else sum(
        1 for f in remaining if f.fix and f.fix.get("applicability") != "safe")
    extras = []
    if need_unsafe:
        extras.append(f"{need_unsafe} need --unsafe-fixes")
    if options.verified_only:
        unverified = sum(1 for f in remaining if f.fix and (options.unsafe or f.fix.get("applicability") == "safe"))
        if unverified:
            extras.append(f"{unverified} not verified")
    return text + (f" ({', '.join(extras)})" if extras else "") + "."


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"


def write_bytes(data: bytes) -> None:
    """Source bytes to stdout as they are (the file's encoding, BOM and line ends)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:
        buffer.write(data)
        buffer.flush()
    else:  # a text-only stream (tests capturing output)
        sys.stdout.write(data.decode("utf-8", "surrogateescape"))
        sys.stdout.flush()


def emit_outcome(stream, text: str) -> None:
    """Write text a narrow console encoding cannot show with escapes instead of failing the run."""
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
    stream.flush()
