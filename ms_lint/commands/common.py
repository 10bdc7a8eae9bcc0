"""Options and set-up shared by the sub-commands that read files (check, fix, verify)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional, Tuple

from ms_lint.analysis.layout import Listings
from ms_lint.config import Config, ConfigError, ConfigSet, load_config
from ms_lint.discovery import PathError, discover_all
from ms_lint.records import field, record

STDIN = "-"


def codes_list(value: str) -> List[str]:
    return [part.strip().upper() for part in value.split(",") if part.strip()]


def jobs_value(value: str) -> Optional[int]:
    """``--jobs N`` or ``--jobs auto`` (None: one worker per core, capped at the number of files)."""
    if value.strip().lower() == "auto":
        return None
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'auto', got {value!r}") from None
    return number  # < 1 is reported by load_run (exit 2 with a message, like every usage error of a command)


def add_selection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .); - reads stdin")
    parser.add_argument("--select", type=codes_list, help="comma-separated codes or prefixes to enable")
    parser.add_argument("--extend-select", type=codes_list, metavar="CODES",
                        help="codes or prefixes to enable on top of the configured selection")
    parser.add_argument("--ignore", type=codes_list, help="comma-separated codes or prefixes to disable")
    parser.add_argument("--extend-ignore", type=codes_list, metavar="CODES",
                        help="codes or prefixes to disable on top of the configured ignores")
    parser.add_argument("--config", help="path to a pyproject.toml to use for every file, instead of the nearest "
                                         "one above each file")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply exclude settings to files named on the command line too (for pre-commit)")
    parser.add_argument("--stdin-filename", metavar="PATH",
                        help="with -: the name of the file read from stdin (config, per-file-ignores, messages)")


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jobs", "-j", type=jobs_value, default=None, metavar="N|auto",
                        help="worker processes (default: auto, one per core, at most one per file)")


@record
class Run:
    """What a run works on: the config of each file, the files, and what discovery could not read."""

    configs: ConfigSet
    files: List[str] = field(default_factory=list)
    unreadable: List[Tuple[str, str]] = field(default_factory=list)  # folders: (path, why)
    stdin: bool = False  # the only input is stdin (``-``)
    stdin_name: str = STDIN
    listings: Optional[Listings] = None  # the folders discovery listed (``ms_lint.analysis.layout.Listings``)

    def config_for(self, path: str) -> Config:
        if self.stdin and path == self.stdin_name:
            return self.configs.for_path(path) if path != STDIN else self.configs.default()
        return self.configs.for_path(path)


def load_run(args: argparse.Namespace) -> Optional[Run]:
    """Config and files for a run, or None after printing a clear error (exit code 2 follows)."""
    jobs = getattr(args, "jobs", None)
    if jobs is not None and jobs < 1:
        print("ms-lint: error: --jobs must be at least 1 (or auto)", file=sys.stderr)
        return None
    paths = args.paths or ["."]
    stdin_name = getattr(args, "stdin_filename", None)
    overrides = {"select": args.select, "ignore": args.ignore,
                 "extend_select": getattr(args, "extend_select", None),
                 "extend_ignore": getattr(args, "extend_ignore", None)}
    try:
        fixed = load_config(path=args.config) if args.config else None
        configs = ConfigSet(fixed=fixed, overrides=overrides)
        if STDIN in paths:
            if len(paths) != 1:
                raise PathError("- (stdin) cannot be combined with other paths")
            name = stdin_name or STDIN
            configs.for_path(name) if name != STDIN else configs.default()  # report a bad config now
            return Run(configs, [name], stdin=True, stdin_name=name)
        if stdin_name:
            raise PathError("--stdin-filename needs - as the path")
        found = discover_all(paths, configs, force_exclude=args.force_exclude)
        for path in found.files:
            configs.for_path(path)  # every config is loaded (and validated) before any work
    except (ConfigError, PathError) as exc:
        print(f"ms-lint: error: {exc}", file=sys.stderr)
        return None
    if not found.files and not found.unreadable and not getattr(args, "quiet", False):
        where = ", ".join(found.empty) if found.empty else ", ".join(paths)
        print(f"ms-lint: warning: no Python files found under {where}", file=sys.stderr)
    return Run(configs, found.files, found.unreadable, listings=found.listings)


def read_stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    return stream.read() if stream is not None else sys.stdin.read().encode("utf-8")


def unreadable_findings(run: Run) -> list:
    """MSL900 for each folder that could not be listed (like an unreadable file: exit 2)."""
    from ms_lint.diagnostics import Finding
    from ms_lint.runner import display_path

    return [Finding(code="MSL900", message=f"cannot analyze folder: {why}", path=display_path(folder), line=1,
                    column=1, end_line=1, end_column=1) for folder, why in run.unreadable]


def cache_dir(args: argparse.Namespace) -> Optional[str]:
    """``--cache-dir``, else ``MS_LINT_CACHE_DIR``, else None (``.ms_lint_cache`` in each config's folder)."""
    return getattr(args, "cache_dir", None) or os.environ.get("MS_LINT_CACHE_DIR") or None
