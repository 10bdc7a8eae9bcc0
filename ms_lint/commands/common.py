"""Options and set-up shared by the sub-commands that read files (check, fix)."""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional, Tuple

from ms_lint.config import Config, ConfigError, load_config
from ms_lint.discovery import PathError, discover


def codes_list(value: str) -> List[str]:
    return [part.strip().upper() for part in value.split(",") if part.strip()]


def add_selection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
    parser.add_argument("--select", type=codes_list, help="comma-separated codes or prefixes to enable")
    parser.add_argument("--ignore", type=codes_list, help="comma-separated codes or prefixes to disable")
    parser.add_argument("--config", help="path to a pyproject.toml to use instead of the nearest one")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply exclude settings to files named on the command line too (for pre-commit)")


def load_run(args: argparse.Namespace) -> Optional[Tuple[Config, List[str]]]:
    """Config and files for a run, or None after printing a clear error (exit code 2 follows)."""
    try:
        config = load_config(path=args.config) if args.config else load_config()
        config = config.with_overrides(args.select, args.ignore)
        files = discover(args.paths or ["."], config, force_exclude=args.force_exclude)
    except (ConfigError, PathError) as exc:
        print(f"ms-lint: error: {exc}", file=sys.stderr)
        return None
    return config, files
