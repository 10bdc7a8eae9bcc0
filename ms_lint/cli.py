"""The ``ms-lint`` command: one sub-command per module in ``ms_lint.commands``.

Exit codes (stable): 0 clean, 1 findings (or pending fixes), 2 usage, configuration or analysis error.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import List, Optional

from ms_lint import __version__

COMMANDS = ("check", "fix", "verify", "profile", "rules", "rule", "server")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, its width found as ``shutil.get_terminal_size`` finds it without importing
    ``shutil`` (and with it zlib, bz2 and lzma: 2.4 ms of a warm run): ``add_argument`` builds a formatter for
    every option, to check its metavar."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: Optional[int] = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # usage errors exit 2, as argparse does, but without a traceback path
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"ms-lint: error: {message}\n")


def build_parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``only`` (a run of one command imports that command's module alone: a
    warm ``check`` spent a third of its time importing the other six)."""
    parser = _Parser(prog="ms-lint", description="Static analyzer for MindSpore graph-mode code.")
    parser.add_argument("--version", action="version", version=f"ms-lint {__version__}")
    # ``prog`` given: argparse would otherwise build a help formatter to work it out, which imports shutil (and
    # with it zlib, bz2, lzma) on every run
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser, prog=parser.prog)
    for name in COMMANDS if only is None else (only,):
        try:
            module = importlib.import_module(f"ms_lint.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ms_lint.commands.{name}":
                continue  # a command not built yet
            raise
        module.register(subparsers)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print("ms-lint: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_ERROR


def entry() -> int:
    """The ``ms-lint`` command (its console script and ``python -m ms_lint``): ``main`` in a process that ends with
    the run, which lets the garbage collector leave long-lived objects alone (``ms_lint.gcpolicy``)."""
    from ms_lint.gcpolicy import end_short_lived, short_lived_process

    if sys.argv[1:2] != ["server"]:  # the language server lives as long as the editor
        short_lived_process()
    code = main()
    host = sys.modules.get("ms_lint.host")
    if host is not None:  # an analysis host was started: it has ended by now, or ends while reaped
        try:
            host.reap_ended()
        except KeyboardInterrupt:  # the report is out; what is left is killed (``reap_ended``)
            print("ms-lint: interrupted", file=sys.stderr)
            code = EXIT_ERROR
    return end_short_lived(code)


if __name__ == "__main__":
    raise SystemExit(entry())
