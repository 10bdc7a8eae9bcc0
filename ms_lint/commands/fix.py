"""``ms-lint fix``: show the rewrites for fixable findings as a unified diff, or ``--apply`` them.

Output: the diff on stdout (``--- a/path`` / ``+++ b/path``); on stderr, what could not be fixed (unanalyzable
files, findings left, fixes refused) and a summary line. Exit codes: 0 nothing left to fix, 1 changes pending
(without ``--apply``) or findings without an applicable fix left, 2 an error (MSL900, a file not written, a
broken fix). Files are fixed independently: one bad file never stops the others.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

from ms_lint.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from ms_lint.commands.common import add_selection_options, load_run
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
    parser.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
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
    if args.jobs is not None and args.jobs < 1:
        return _usage("--jobs must be at least 1")
    if args.accept_tradeoff and not args.verified_only:
        return _usage("--accept-tradeoff only makes sense with --verified-only")
    if args.repeat < 1:
        return _usage("--repeat must be at least 1")
    loaded = load_run(args)
    if loaded is None:
        return EXIT_ERROR
    config, files = loaded
    options = FixOptions(apply=args.apply, unsafe=args.unsafe_fixes, diff=args.diff or not args.apply,
                         verified_only=args.verified_only, accept_tradeoff=args.accept_tradeoff,
                         device=args.device, repeat=args.repeat, grad=args.grad)
    results = fix_files(files, config, options, jobs=args.jobs)
    return report(results, options, show_fixes=args.show_fixes, statistics=args.statistics)


def _usage(message: str) -> int:
    print(f"ms-lint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


# -- fixing files --------------------------------------------------------------------------------------

def fix_files(files: Sequence[str], config: Config, options: FixOptions, jobs: Optional[int] = None,
              rules=None) -> List[FileResult]:
    """Fix each file once (a file reached through several paths or symlinks counts once), in input order.

    ``--verified-only`` runs in this process, one file after another: the verifier measures compile and run
    times, which parallel work on the same machine would distort.
    """
    unique: List[str] = []
    seen = set()
    for path in files:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    workers = 1 if options.verified_only or rules is not None else (jobs or os.cpu_count() or 1)
    if workers > 1 and len(unique) >= PARALLEL_THRESHOLD:
        # Largest files first, one at a time: a 1 MB module must not end up last in a worker's batch.
        order = sorted(range(len(unique)), key=lambda i: -_size(unique[i]))
        results: List[Optional[FileResult]] = [None] * len(unique)
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [(i, pool.submit(_fix_task, (unique[i], config, options))) for i in order]
            for index, future in futures:
                try:
                    results[index] = future.result()
                except Exception as exc:  # a worker died (killed, out of memory): the file may be old or new
                    results[index] = _lost(unique[index], exc)
        return [r for r in results if r is not None]
    return [fix_file(path, config, options, rules=rules) for path in unique]


def _lost(path: str, exc: Exception) -> FileResult:
    from ms_lint.engine import unanalyzable
    from ms_lint.runner import display_path

    shown = display_path(path)
    return FileResult(shown, unanalyzable=[unanalyzable(shown, f"internal error (worker process failed: "
                                                               f"{type(exc).__name__}); the file is unchanged "
                                                               "or fully fixed, never partly written")])


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _fix_task(task: Tuple[str, Config, FixOptions]) -> FileResult:
    return fix_file(*task)


def fix_file(path: str, config: Config, options: FixOptions, rules=None) -> FileResult:
    """Fix one file; never raises for a problem with the file (it becomes MSL900 or an error line)."""
    from ms_lint.engine import unanalyzable
    from ms_lint.fixer import fix_text
    from ms_lint.runner import display_path
    from ms_lint.source import UnreadableSource, read_source
    from ms_lint.writer import WriteError, write_atomic

    shown = display_path(path)
    result = FileResult(shown)
    try:
        source = read_source(path)
    except UnreadableSource as exc:
        result.unanalyzable.append(unanalyzable(shown, exc.reason, exc.line or 1))
        return result
    accept = _verifier(source.text, path, shown, config, options, result.notes) if options.verified_only else None
    try:
        outcome = fix_text(source, config, unsafe=options.unsafe, path=shown, accept=accept, rules=rules)
    except Exception as exc:  # an ms-lint bug must not end the run: report it on the file
        result.unanalyzable.append(unanalyzable(shown, f"internal error ({type(exc).__name__}: {exc})"))
        return result
    result.remaining = [_bare(f) for f in outcome.remaining if f.code != "MSL900"]
    result.unanalyzable = [_bare(f) for f in outcome.remaining if f.code == "MSL900"]
    if outcome.error and not result.unanalyzable:
        result.errors.append(f"{shown}: error: {outcome.error}")
    result.errors.extend(f"{shown}: error: {problem}" for problem in outcome.problems)
    result.notes.extend(f"{shown}:{f.line}:{f.column}: {f.code} not fixed: its fix would rewrite a line whose "
                        "finding is suppressed with noqa" for f in outcome.blocked)
    if not outcome.changed:
        return result
    result.changed = True
    result.applied = [_bare(f) for f in outcome.applied]
    if options.diff:
        result.diff = unified_diff(outcome.original, outcome.fixed, shown)
    if options.apply:
        try:
            write_atomic(path, source.encode(outcome.fixed), expected=source.raw)
            result.written = True
        except WriteError as exc:
            result.errors.append(f"{shown}: error: not written: {exc.reason}")
    return result


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
    lines = difflib.unified_diff(_LINES.findall(original), _LINES.findall(fixed), f"a/{name}", f"b/{name}")
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def report(results: List[FileResult], options: FixOptions, show_fixes: bool = False,
           statistics: bool = False) -> int:
    err = []
    for result in results:
        if result.diff:
            _emit(sys.stdout, result.diff)
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
    err.append(summary(fixed, len(done), remaining, options))
    _emit(sys.stderr, "\n".join(err) + "\n")
    if any(r.unanalyzable or r.errors for r in results):
        return EXIT_ERROR
    if remaining or (done and not options.apply):
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


def _emit(stream, text: str) -> None:
    """Write text a narrow console encoding cannot show with escapes instead of failing the run."""
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
    stream.flush()
