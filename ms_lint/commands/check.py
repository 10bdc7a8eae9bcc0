"""``ms-lint check``: report findings."""
from __future__ import annotations

import argparse
import sys

from ms_lint.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from ms_lint.codes import UNANALYZABLE
from ms_lint.commands.common import add_selection_options, load_run
from ms_lint.formats import FORMATS, render


def register(subparsers) -> None:
    parser = subparsers.add_parser("check", help="report findings (the default use)")
    add_selection_options(parser)
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument("--statistics", action="store_true", help="count findings per code")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write .ms_lint_cache/")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ms_lint.runner import check_files

    loaded = load_run(args)
    if loaded is None:
        return EXIT_ERROR
    config, files = loaded
    if args.jobs is not None and args.jobs < 1:
        print("ms-lint: error: --jobs must be at least 1", file=sys.stderr)
        return EXIT_ERROR
    findings = check_files(files, config, jobs=args.jobs, use_cache=not args.no_cache)
    options = {"statistics": args.statistics, "root": config.root}
    sys.stdout.write(render(args.format, findings, **options))
    if any(f.code == UNANALYZABLE for f in findings):
        return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN
