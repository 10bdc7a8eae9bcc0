"""``ms-lint server``: the language server for editors (stdin/stdout; needs the ``lsp`` extra: pygls)."""
from __future__ import annotations

import argparse
import sys

from ms_lint.cli import EXIT_ERROR


def register(subparsers) -> None:
    parser = subparsers.add_parser("server", help="run the language server on stdin/stdout (for editors)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        from ms_lint.lsp.server import main
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("pygls", "lsprotocol"):
            print("ms-lint: error: the language server needs pygls: pip install 'ms-lint[lsp]'", file=sys.stderr)
            return EXIT_ERROR
        raise
    return main()
