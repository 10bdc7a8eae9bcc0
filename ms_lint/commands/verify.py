"""``ms-lint verify``: run the original and each rewritten version of a module and prove (or refute) the rewrite.

For each fixable finding (unsafe fixes included) in the selected files -- or only those inside ``--function`` --
the module is built twice, the original and the one with only that fix applied, and both run in fresh processes on
the chosen device (see ``ms_lint.verifier``). Exit codes: 0 when every rewrite is verified or a tradeoff (or there
is nothing to verify), 1 when one is a mismatch, slower, or failed, 2 on an error (MindSpore missing, device
unavailable, timeout, bad arguments). The verifier is imported only here, never by ``check``.
"""
from __future__ import annotations

import argparse
import sys
from typing import List

from ms_lint.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from ms_lint.commands.common import add_selection_options, load_run

DEVICES = ("CPU", "GPU", "Ascend")


def _device(value: str) -> str:
    for name in DEVICES:
        if value.lower() == name.lower():
            return name
    raise argparse.ArgumentTypeError(f"invalid device {value!r} (choose from {', '.join(DEVICES)})")


def _positive_int(value: str) -> int:
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


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="run original and rewritten code in fresh processes: compare outputs, compile and run time",
        description="For each fixable finding, run the original module and the module with only that fix applied, "
                    "each in fresh Python processes with the compile cache off, and report whether the rewrite is "
                    "verified, a tradeoff, slower, a mismatch, or fixes/causes a failure. Needs MindSpore.",
    )
    add_selection_options(parser)
    parser.add_argument("--function", metavar="NAME",
                        help="only rewrites inside NAME (func, Class or Class.method), run through NAME")
    parser.add_argument("--inputs", metavar="SPEC",
                        help='inputs, e.g. "xs=float32[100,2]; mask=bool[100]; n=int:4" (default: the '
                             "'# ms-lint: inputs=' comment above the function, then [tool.ms-lint.verify])")
    parser.add_argument("--init", metavar="EXPR", help="constructor call for a Cell or class target, e.g. 'Net(4)'")
    parser.add_argument("--device", type=_device, default="CPU", help="CPU (default), GPU or Ascend")
    parser.add_argument("--repeat", type=_positive_int, default=3, metavar="K",
                        help="fresh processes per version; medians are reported (default: 3)")
    parser.add_argument("--rtol", type=_non_negative_float, default=1e-5, help="relative tolerance (default: 1e-5)")
    parser.add_argument("--atol", type=_non_negative_float, default=1e-6, help="absolute tolerance (default: 1e-6)")
    parser.add_argument("--grad", action="store_true", help="also compare gradients w.r.t. the float inputs")
    parser.add_argument("--timeout", type=_non_negative_float, default=300.0, metavar="SECONDS",
                        help="limit per process (default: 300)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # never a traceback on the user's terminal
        print(f"ms-lint: error: verify failed unexpectedly: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _environment_error(verification) -> bool:
    """MindSpore missing or the device unavailable: no point in trying the other rewrites."""
    if verification.verdict != "error":
        return False
    error = verification.original.error or verification.rewritten.error or {}
    return error.get("kind") in ("mindspore-missing", "mindspore-broken", "numpy-missing", "device-unavailable")


def _run(args: argparse.Namespace) -> int:
    from ms_lint import fixer
    from ms_lint.source import UnreadableSource, read_source
    from ms_lint.verifier import VerifyError, parse_spec, render_json, render_text, verify_finding
    from ms_lint.verifier.runner import ACCEPTED, Verification
    from ms_lint.verifier.targets import target_contains

    if args.timeout <= 0:
        print("ms-lint: error: --timeout must be positive", file=sys.stderr)
        return EXIT_ERROR
    if args.inputs is not None:
        try:
            parse_spec(args.inputs)
        except VerifyError as exc:
            print(f"ms-lint: error: --inputs: {exc}", file=sys.stderr)
            return EXIT_ERROR
    loaded = load_run(args)
    if loaded is None:
        return EXIT_ERROR
    if loaded.stdin:
        print("ms-lint: error: verify needs a file, not stdin", file=sys.stderr)
        return EXIT_ERROR
    files = loaded.files
    if args.function and len(files) != 1:
        print(f"ms-lint: error: --function needs exactly one file, got {len(files)}", file=sys.stderr)
        return EXIT_ERROR

    text_out = args.format == "text"
    results: List[Verification] = []
    exit_code = EXIT_CLEAN
    stop = False
    skipped = 0
    for path in files:
        try:
            source = read_source(path)
        except UnreadableSource as exc:
            print(f"ms-lint: error: {path}: {exc.reason}", file=sys.stderr)
            exit_code = EXIT_ERROR
            continue
        config = loaded.config_for(path)
        variants = fixer.single_fix_variants(source, config, path)
        for finding, rewritten in variants:
            if rewritten == source.text:
                continue
            if args.function and not target_contains(source.text, args.function, finding.line):
                continue
            if not args.function and getattr(finding, "function", None) is None:
                print(f"ms-lint: skipping {finding.path}:{finding.line} {finding.code}: its fix is outside graph "
                      "functions (module level): there is nothing to call", file=sys.stderr)
                skipped += 1
                continue
            print(f"ms-lint: verifying {finding.path}:{finding.line} {finding.code} ...", file=sys.stderr,
                  flush=True)
            try:
                verification = verify_finding(
                    source.text, rewritten, finding, function=args.function, path=path, inputs=args.inputs,
                    init=args.init, device=args.device, repeat=args.repeat, rtol=args.rtol, atol=args.atol,
                    grad=args.grad, timeout=args.timeout, verify_config=config.verify,
                )
            except VerifyError as exc:  # a bad comment/pyproject spec for this function: report, go on
                verification = Verification(function=args.function or "?", verdict="error", message=str(exc),
                                            path=finding.path, code=finding.code, line=finding.line,
                                            device=args.device)
            results.append(verification)
            if text_out:
                sys.stdout.write(render_text(verification) + "\n\n")
                sys.stdout.flush()
            if _environment_error(verification):
                print("ms-lint: stopping: every other rewrite would fail the same way", file=sys.stderr)
                stop = True
                break
        if stop:
            break

    if args.format == "json":
        sys.stdout.write(render_json(results) + "\n")
    elif not results:
        where = f" inside {args.function}" if args.function else ""
        extra = f" ({skipped} module-level fix(es) skipped)" if skipped else ""
        sys.stdout.write(f"nothing to verify: no fixable findings{where}{extra}\n")
    else:
        counts = {}
        for verification in results:
            counts[verification.verdict] = counts.get(verification.verdict, 0) + 1
        summary = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
        sys.stdout.write(f"{len(results)} rewrite(s) checked: {summary}\n")

    if any(v.verdict == "error" for v in results):
        return EXIT_ERROR
    if exit_code == EXIT_ERROR:
        return exit_code
    if any(v.verdict not in ACCEPTED for v in results):
        return EXIT_FINDINGS
    return EXIT_CLEAN
