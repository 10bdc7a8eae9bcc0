"""The options that name what to run and how, shared by ``verify`` and ``profile``: ``--inputs``,
``--setup``/``--setup-file``, ``--init``, ``--pythonpath``, ``--device``, ``--timeout``, their argument types,
help and checks."""
from __future__ import annotations

import argparse
import os
from typing import Optional, Tuple

DEVICES = ("CPU", "GPU", "Ascend")
INPUTS_HELP = (
    "inputs, ';'-separated name=TYPE: a tensor dtype[shape] (float32[100,2]; float32[] is 0-d), with a value range "
    "dtype[shape](low,high) (int32[8](0,64): integers in [0,64); float32[4,4](0,1)); a 0-d tensor dtype:value "
    "(float32:0.5); a Python value int:4, float:0.5, bool:true (or just 4, 0.5, true), str:mean (or 'mean'); None; "
    "a tuple or list of "
    "those: tuple(60*float32[8,4]), list(float32[4], int:3), tuple(2*tuple(float32[2], None)). Example: "
    "\"grads=tuple(60*float32[8,4]); lr=float:0.01; mask=None\". Default: the '# ms-lint: inputs=' comment above "
    "the function, then [tool.ms-lint.verify]"
)


def _device(value: str) -> str:
    for name in DEVICES:
        if value.lower() == name.lower():
            return name
    raise argparse.ArgumentTypeError(f"invalid device {value!r} (choose from {', '.join(DEVICES)})")


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _non_negative_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not number >= 0:
        raise argparse.ArgumentTypeError("must be a non-negative number")
    return number


def add_target_options(parser: argparse.ArgumentParser, timeout: float = 300.0,
                       timeout_help: Optional[str] = None) -> None:
    parser.add_argument("--inputs", metavar="SPEC", help=INPUTS_HELP)
    parser.add_argument("--setup", metavar="STATEMENTS",
                        help="Python statements run in the module's namespace before --init, e.g. "
                             "'from .configuration import TinyConfig; cfg = TinyConfig(hidden_size=16)'")
    parser.add_argument("--setup-file", metavar="FILE", help="like --setup, the statements read from FILE")
    parser.add_argument("--init", metavar="EXPR",
                        help="constructor call for a Cell or class target, e.g. 'Net(4)' or 'Net(cfg)' after --setup")
    parser.add_argument("--pythonpath", metavar="DIR", action="append", default=[],
                        help="a folder to put on sys.path after the package root (repeatable); the module is "
                             "imported as pkg.sub.module from the folder above its top __init__.py")
    parser.add_argument("--device", type=_device, default="CPU", help="CPU (default), GPU or Ascend")
    parser.add_argument("--timeout", type=_non_negative_float, default=timeout, metavar="SECONDS",
                        help=timeout_help or f"limit per process (default: {timeout:g})")


def read_target_options(args: argparse.Namespace) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """``(setup, setup_name, None)``, or ``(None, None, error)`` with the one-line problem (as ``verify`` says it)."""
    from ms_lint.verifier import VerifyError, parse_spec

    if args.timeout <= 0:
        return None, None, "--timeout must be positive"
    if args.inputs is not None:
        try:
            parse_spec(args.inputs)
        except VerifyError as exc:
            return None, None, f"--inputs: {exc}"
    if args.setup is not None and args.setup_file is not None:
        return None, None, "give --setup or --setup-file, not both"
    setup, setup_name = args.setup, "--setup"
    if args.setup_file is not None:
        try:
            with open(args.setup_file, encoding="utf-8") as handle:
                setup = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or exc
            return None, None, f"--setup-file {args.setup_file}: cannot read it ({why})"
        setup_name = args.setup_file
    if setup is not None:
        try:
            compile(setup, setup_name, "exec")
        except SyntaxError as exc:
            return None, None, f"{setup_name}: line {exc.lineno}: {exc.msg}"
    for directory in args.pythonpath:
        if not os.path.isdir(directory):
            return None, None, f"--pythonpath {directory}: not a folder"
    return setup, setup_name, None
