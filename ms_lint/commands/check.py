"""``ms-lint check``: report findings; with ``--fix`` also apply the fixes, with ``--diff`` show them (ruff's flags).

``check --fix`` is ``fix --apply`` reported like ``check`` (the findings left, in the chosen format, and how many
were fixed); ``check --diff`` is ``fix`` (the diff on stdout, nothing written). ``-`` reads the source from
stdin (``--stdin-filename`` names it); ``check --fix -`` prints the fixed source on stdout and the findings left
on stderr.
"""
from __future__ import annotations

import argparse
import sys
from typing import List

from ms_lint.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from ms_lint.codes import UNANALYZABLE
from ms_lint.commands.common import (
    Run, add_jobs_option, add_selection_options, cache_dir, load_run, read_stdin, unreadable_findings,
)
from ms_lint.diagnostics import Finding
from ms_lint.formats import FORMATS, render


def register(subparsers) -> None:
    parser = subparsers.add_parser("check", help="report findings (the default use)")
    add_selection_options(parser)
    parser.add_argument("--output-format", "--format", dest="output_format", choices=FORMATS, default="text",
                        help="output format (default: text; full adds the source lines and the explanation)")
    parser.add_argument("--statistics", action="store_true", help="print only the count of findings per code")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="with --fix: exit 1 when a fix was applied, even if nothing is left")
    parser.add_argument("--quiet", "-q", action="store_true", help="print the findings only: no summary line")
    parser.add_argument("--fix", action="store_true", help="apply the fixes (as `ms-lint fix --apply`)")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a diff, write nothing (as `ms-lint fix`)")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="with --fix/--diff, also apply fixes marked unsafe; fixable counts include them")
    parser.add_argument("--profile-data", metavar="FILE",
                        help="order findings by the compile seconds in a saved `ms-lint profile -o FILE` and add "
                             "them to the messages")
    add_jobs_option(parser)
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the results cache")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="results cache folder (default: $MS_LINT_CACHE_DIR, else .ms_lint_cache next to the "
                             "pyproject.toml)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args)
    if loaded is None:
        return EXIT_ERROR
    if args.diff:
        return _diff(args, loaded)
    if args.fix:
        return _fix(args, loaded)
    if loaded.stdin:
        findings = _check_stdin(loaded)
    else:
        from ms_lint.runner import check_files

        findings = check_files(loaded.files, loaded.config_for, jobs=args.jobs, use_cache=not args.no_cache,
                               cache_dir=cache_dir(args), listings=loaded.listings)
    findings = sorted(findings + unreadable_findings(loaded), key=Finding.sort_key)
    if args.profile_data:
        from ms_lint.profiler.annotate import ProfileDataError, annotate, load

        try:
            findings = annotate(findings, load(args.profile_data))
        except ProfileDataError as exc:
            print(f"ms-lint: error: {exc}", file=sys.stderr)
            return EXIT_ERROR
    return _output(args, loaded, findings, fixed=0)


def _output(args: argparse.Namespace, loaded: Run, findings: List[Finding], fixed: int, stream=None) -> int:
    options = {"statistics": args.statistics, "root": loaded.configs.default().root, "quiet": args.quiet,
               "unsafe_fixes": args.unsafe_fixes, "fixed": fixed}
    (stream or sys.stdout).write(render(args.output_format, findings, **options))
    if any(f.code == UNANALYZABLE for f in findings):
        return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    if fixed and args.exit_non_zero_on_fix:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _check_stdin(loaded: Run) -> List[Finding]:
    from ms_lint.engine import analyze_source, unanalyzable
    from ms_lint.source import UnreadableSource, decode_source

    name = loaded.stdin_name
    try:
        source = decode_source(name, read_stdin())
    except UnreadableSource as exc:
        return [unanalyzable(name, exc.reason, exc.line or 1)]
    try:
        return analyze_source(source, loaded.config_for(name), name).findings
    except Exception as exc:  # an ms-lint bug must not end the run: report it on the input
        return [unanalyzable(name, f"internal error ({type(exc).__name__}: {exc})")]


def _options(args: argparse.Namespace, apply: bool):
    from ms_lint.commands.fix import FixOptions

    return FixOptions(apply=apply, unsafe=args.unsafe_fixes, diff=not apply)


def _diff(args: argparse.Namespace, loaded: Run) -> int:
    """``check --diff``: exactly ``ms-lint fix`` (the diff on stdout, nothing written)."""
    from ms_lint.commands.fix import FileResult, fix_files, fix_stdin, report

    options = _options(args, apply=False)
    if loaded.stdin:
        return fix_stdin(loaded.stdin_name, loaded.config_for(loaded.stdin_name), options, diff=True,
                         quiet=args.quiet)
    results = fix_files(loaded.files, loaded.config_for, options, jobs=args.jobs)
    results.extend(FileResult(f.path, unanalyzable=[f]) for f in unreadable_findings(loaded))
    return report(results, options, statistics=args.statistics, quiet=args.quiet)


def _fix(args: argparse.Namespace, loaded: Run) -> int:
    """``check --fix``: fix, then report what is left like ``check`` (errors, e.g. a file not written, on
    stderr, exit 2)."""
    from ms_lint.commands.fix import emit_outcome, fix_files, fix_source, write_bytes

    options = _options(args, apply=True)
    stream = sys.stdout
    if loaded.stdin:
        from ms_lint.engine import unanalyzable
        from ms_lint.source import UnreadableSource, decode_source

        name = loaded.stdin_name
        raw = read_stdin()
        try:
            source = decode_source(name, raw)
        except UnreadableSource as exc:
            write_bytes(raw)
            from ms_lint.commands.fix import FileResult

            results = [FileResult(name, unanalyzable=[unanalyzable(name, exc.reason, exc.line or 1)])]
        else:
            result, fixed_text = fix_source(source, name, loaded.config_for(name), options)
            result.written = result.changed
            write_bytes(source.encode(fixed_text) if result.changed else raw)
            results = [result]
        stream = sys.stderr  # stdout holds the fixed source
    else:
        results = fix_files(loaded.files, loaded.config_for, options, jobs=args.jobs)
    errors = [line for r in results for line in r.errors]
    if errors:
        emit_outcome(sys.stderr, "\n".join(errors) + "\n")
    findings = [f for r in results for f in r.remaining + r.unanalyzable]
    findings = sorted(findings + unreadable_findings(loaded), key=Finding.sort_key)
    fixed = sum(len(r.applied) for r in results if r.changed and r.written)
    code = _output(args, loaded, findings, fixed, stream=stream)
    return EXIT_ERROR if errors else code
