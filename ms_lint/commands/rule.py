"""``ms-lint rule MSL101``: print a rule's page (what it does, why, examples, fix safety, options)."""
from __future__ import annotations

import argparse
import sys

from ms_lint.cli import EXIT_CLEAN, EXIT_ERROR
from ms_lint.codes import CODES


def register(subparsers) -> None:
    parser = subparsers.add_parser("rule", help="show a rule's page, e.g. `ms-lint rule MSL101`")
    parser.add_argument("code", help="a rule code such as MSL101")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ms_lint.pages import PageNotFound, load_page

    code = args.code.strip().upper()
    if code not in CODES:
        print(f"ms-lint: error: unknown rule code {args.code!r} (known: {', '.join(CODES)}; "
              "`ms-lint rules` lists them)", file=sys.stderr)
        return EXIT_ERROR
    try:
        text = load_page(code)
    except PageNotFound:
        print(f"ms-lint: error: no page for {code} in this installation (rule pages not installed?)", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"ms-lint: error: cannot read the page for {code}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_CLEAN
