"""``ms-lint verify``: run the original and each rewritten version of a module and prove (or refute) the rewrite.

For each fixable finding (unsafe fixes included) in the selected files -- or only those inside ``--function`` --
the module is built twice, the original and the one with only that fix applied, and both run in fresh processes on
the chosen device (see ``ms_lint.verifier``). ``--against REV`` and ``--rewritten OTHER.py`` verify a rewrite the user
wrote instead: the function as it is in the working tree against the same function at a git revision, or in another
file. The module is imported inside its package (relative imports work); ``--setup`` runs statements in its
namespace before ``--init``. ``--draws K`` compares K input draws; for MSL201 rewrites a probed PyNative run of
the original reports which branches ran. MSL301/MSL302 fixes are verified in script mode (``ms_lint.verifier.script``:
the whole script, twice without and twice with the fix). Exit codes: 0 when every rewrite is verified or a tradeoff
(or there is nothing to verify), 1 when one is a mismatch, slower, or failed, 2 on an error (MindSpore missing, device
unavailable, timeout, bad arguments) or when both versions fail the same way (inputs invalid for the original). The
verifier is imported only here, never by ``check``.
"""
from __future__ import annotations

import argparse
import sys
from typing import List

from ms_lint.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from ms_lint.commands.common import add_selection_options, load_run
from ms_lint.commands.target_options import (
    _non_negative_float, positive_int, add_target_options, read_target_options,
)

ERROR_VERDICTS = ("error", "inputs-invalid")  # exit 2 (as ms_lint.verifier.runner.ERROR_VERDICTS)


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
    parser.add_argument("--against", metavar="REV", nargs="?", const="HEAD",
                        help="verify your own rewrite: NAME (or every function that changed) as it is in the working "
                             "tree against the same function at git revision REV (default: HEAD)")
    parser.add_argument("--rewritten", metavar="OTHER.py",
                        help="verify your own rewrite: the function of the same name in OTHER.py against PATH's; "
                             "OTHER.py is imported in PATH's package")
    add_target_options(parser, timeout_help="limit per process, and per script run in script mode (default: 300)")
    parser.add_argument("--repeat", type=positive_int, default=3, metavar="K",
                        help="fresh processes per version; medians and the spread (max-min over the median) are "
                             "reported, and a change within the spread is 'no measurable change' (default: 3)")
    parser.add_argument("--draws", type=positive_int, default=3, metavar="K",
                        help="input draws compared in every process, seeds 0..K-1 (printed); for an MSL201 rewrite "
                             "the branches of the original that ran on each draw are reported (default: 3)")
    parser.add_argument("--rtol", type=_non_negative_float, default=1e-5, help="relative tolerance (default: 1e-5)")
    parser.add_argument("--atol", type=_non_negative_float, default=1e-6, help="absolute tolerance (default: 1e-6)")
    parser.add_argument("--grad", action="store_true", help="also compare gradients w.r.t. the float inputs")
    parser.add_argument("--script-args", metavar="ARGS", default="",
                        help="script mode (MSL301/MSL302 compile-cache fixes): the arguments the script is run with, "
                             "one shell-quoted string, e.g. \"--epochs 1 --data tiny\"; the script runs twice without "
                             "and twice with the fix, each version in its own private folder, and stdout and the "
                             "second run's time are compared")
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


def _module_error(verification) -> bool:
    """The module cannot be imported or set up: every other rewrite of the same file fails the same way."""
    if verification.verdict != "error":
        return False
    error = verification.original.error or verification.rewritten.error or {}
    return error.get("kind") in ("import-error", "setup-failed", "init-failed")


def _error(message: str) -> int:
    print(f"ms-lint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def graph_targets(source, config, path) -> List[str]:
    """What ``--function`` can name in this file: its graph functions as verify targets (``func``, ``Class`` for a
    Cell's construct, ``Class.method``), in file order."""
    from ms_lint.engine import analyze_source

    try:
        analysis = analyze_source(source, config, path)
    except Exception:  # the list is a help for an error message: never a second error
        return []
    context = analysis.context
    if context is None:
        return []
    names: List[str] = []
    scope = context.scope
    for info in scope.graph_functions():
        func = info.node
        if func not in scope.owner_of:  # a nested def
            continue
        owner = scope.owner_of[func]
        if owner is None:
            name = func.name.value
        elif func.name.value == "construct" and scope.is_cell_class(owner):
            name = owner
        else:
            name = f"{owner}.{func.name.value}"
        if name not in names:
            names.append(name)
    return names


def unknown_function(function: str, path: str, source, config) -> str:
    names = graph_targets(source, config, path)
    listed = ", ".join(names) if names else "none found"
    return f"{path}: --function {function}: no such function or class (graph functions in this file: {listed})"


def target_defined(text: str, function: str) -> bool:
    from ms_lint.verifier.inputs import find_def

    import ast

    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    return bool(find_def(tree, function))


class _Printer:
    """Text mode: one block per verdict; an error verdict is one ``ms-lint: error:`` line on stderr."""

    def __init__(self, text_out: bool):
        self.text_out = text_out

    def show(self, verification) -> None:
        from ms_lint.verifier import render_text

        if not self.text_out:
            return
        if verification.verdict in ERROR_VERDICTS:
            where = verification.path or "<source>"
            if verification.line:
                where += f":{verification.line}"
            what = f" {verification.function}" + (f" {verification.code}" if verification.code else "")
            message = " ".join(verification.message.split())
            print(f"ms-lint: error: {where}{what}: {message}", file=sys.stderr, flush=True)
            return
        sys.stdout.write(render_text(verification) + "\n\n")
        sys.stdout.flush()


def _options(args, setup, setup_name, config):
    return dict(inputs=args.inputs, init=args.init, device=args.device, repeat=args.repeat, draws=args.draws,
                rtol=args.rtol,
                atol=args.atol, grad=args.grad, timeout=args.timeout, verify_config=config.verify,
                pythonpath=list(args.pythonpath), setup=setup, setup_name=setup_name)


def _git_show(path: str, rev: str):
    """(text of PATH at REV, None) or (None, one-line error)."""
    import os
    import subprocess

    directory = os.path.dirname(os.path.abspath(path)) or "."
    name = os.path.basename(path)
    try:
        top = subprocess.run(["git", "-C", directory, "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"--against needs git: {exc}"
    if top.returncode != 0:
        return None, (f"{path} is not in a git repository: --against needs one (or compare with another file: "
                      "--rewritten OTHER.py)")
    shown = subprocess.run(["git", "-C", directory, "show", f"{rev}:./{name}"], capture_output=True, timeout=60)
    if shown.returncode != 0:
        first = (shown.stderr.decode("utf-8", "replace").strip().splitlines() or ["git show failed"])[0]
        return None, f"--against {rev}: cannot read {path} at {rev}: {first.removeprefix('fatal: ')}"
    try:
        return shown.stdout.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, f"--against {rev}: {path} at {rev} is not UTF-8 text"


def _changed_targets(before: str, after: str) -> List[str]:
    """Top-level functions and classes defined in both versions whose code differs."""
    import ast

    def segments(text):
        out = {}
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return out
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out[node.name] = "\n".join(text.splitlines()[start - 1:node.end_lineno])
        return out

    old, new = segments(before), segments(after)
    return [name for name, code in new.items() if name in old and old[name] != code]


def branch_lines(text: str, config, path: str, function: str) -> List[int]:
    """Lines of the MSL201 findings (tensor ``if``s) inside ``function`` in ``text``: the branches whose coverage
    the verifier reports for a hand rewrite of them."""
    from ms_lint.engine import analyze_source
    from ms_lint.source import SourceFile
    from ms_lint.verifier.targets import target_contains

    try:
        source = SourceFile(path=path, text=text, encoding="utf-8", has_bom=False, raw=text.encode("utf-8"))
        analysis = analyze_source(source, config, path)
    except Exception:  # coverage is extra information: never a second error
        return []
    return sorted({f.line for f in analysis.findings if f.code == "MSL201" and target_contains(text, function, f.line)})


def _def_line(text: str, function: str):
    import ast

    from ms_lint.verifier.inputs import find_def

    try:
        chain = find_def(ast.parse(text), function)
    except SyntaxError:
        return None
    return chain[0].lineno if chain else None


def _finish(results, text_out: bool, empty_line: str) -> int:
    from ms_lint.verifier import render_json
    from ms_lint.verifier.runner import ACCEPTED

    if not text_out:
        sys.stdout.write(render_json(results) + "\n")
    elif not results:
        sys.stdout.write(empty_line + "\n")
    elif any(v.verdict not in ERROR_VERDICTS for v in results):
        counts = {}
        for verification in results:
            counts[verification.verdict] = counts.get(verification.verdict, 0) + 1
        summary = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
        sys.stdout.write(f"{len(results)} rewrite(s) checked: {summary}\n")
    if any(v.verdict in ERROR_VERDICTS for v in results):
        return EXIT_ERROR
    if any(v.verdict not in ACCEPTED for v in results):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _run_own_rewrite(args, path, source, config, options) -> int:
    """``--against REV`` / ``--rewritten OTHER.py``: the user's rewrite, through the same harness."""
    from ms_lint.source import UnreadableSource, read_source
    from ms_lint.verifier import VerifyError, verify_pair
    from ms_lint.verifier.runner import Verification

    if args.against is not None:
        before, problem = _git_show(path, args.against)
        if problem:
            return _error(problem)
        original, rewritten, origin = before, source.text, f"{path} at {args.against}"
        if original == rewritten:
            return _error(f"{path} has no changes against {args.against}: edit it first, or compare with an older "
                          "revision (--against HEAD~1)")
    else:
        try:
            other = read_source(args.rewritten)
        except UnreadableSource as exc:
            return _error(f"--rewritten {args.rewritten}: {exc.reason}")
        original, rewritten, origin = source.text, other.text, args.rewritten
    if args.function:
        for text, where in ((rewritten, args.rewritten or path), (original, origin)):
            if not target_defined(text, args.function):
                return _error(unknown_function(args.function, where, source, config)
                              if where == path else f"{where}: --function {args.function}: not defined there")
        targets = [args.function]
    else:
        targets = _changed_targets(original, rewritten)
        if not targets:
            return _error(f"no top-level function or class differs between {origin} and "
                          f"{args.rewritten or path}: name the one to verify with --function")

    printer = _Printer(args.format == "text")
    results = []
    changed = _changed_targets(original, rewritten)
    for target in targets:
        # the tensor ifs to probe: the original's MSL201 findings in the target and in the functions the rewrite
        # changed (a rewritten helper that the target calls)
        lines = sorted({n for name in [target] + [c for c in changed if c != target]
                        for n in branch_lines(original, config, path, name)})
        line = _def_line(source.text, target)
        print(f"ms-lint: verifying {path}:{line or '?'} {target} against {origin} ...", file=sys.stderr, flush=True)
        try:
            verification = verify_pair(original, rewritten, function=target, path=path, line=line,
                                       inputs_source=rewritten, branch_lines=lines, **options)
        except VerifyError as exc:
            verification = Verification(function=target, verdict="error", message=str(exc), path=path, line=line,
                                        device=args.device)
        results.append(verification)
        printer.show(verification)
        if _environment_error(verification) or _module_error(verification):
            break
    return _finish(results, args.format == "text", "nothing to verify")


def _run(args: argparse.Namespace) -> int:
    from ms_lint import fixer
    from ms_lint.source import UnreadableSource, read_source
    from ms_lint.verifier import VerifyError, verify_finding
    from ms_lint.verifier.runner import Verification
    from ms_lint.verifier.script import SCRIPT_CODES, verify_script
    from ms_lint.verifier.targets import target_contains
    import shlex

    setup, setup_name, problem = read_target_options(args)  # --timeout, --inputs, --setup(-file), --pythonpath
    if problem is not None:
        return _error(problem)
    try:
        script_args = shlex.split(args.script_args or "")
    except ValueError as exc:
        return _error(f"--script-args: {exc} (give the arguments as one shell-quoted string)")
    if args.against is not None and args.rewritten is not None:
        return _error("give --against or --rewritten, not both")
    loaded = load_run(args)
    if loaded is None:
        return EXIT_ERROR
    if loaded.stdin:
        return _error("verify needs a file, not stdin")
    files = loaded.files
    own_rewrite = args.against is not None or args.rewritten is not None
    if (args.function or own_rewrite) and len(files) != 1:
        what = "--function" if args.function else ("--against" if args.against is not None else "--rewritten")
        return _error(f"{what} needs exactly one file, got {len(files)}")

    text_out = args.format == "text"
    printer = _Printer(text_out)
    results: List[Verification] = []
    exit_code = EXIT_CLEAN
    skipped = 0
    for path in files:
        try:
            source = read_source(path)
        except UnreadableSource as exc:
            print(f"ms-lint: error: {path}: {exc.reason}", file=sys.stderr)
            exit_code = EXIT_ERROR
            continue
        config = loaded.config_for(path)
        options = _options(args, setup, setup_name, config)
        if own_rewrite:
            return _run_own_rewrite(args, path, source, config, options)
        if args.function and not target_defined(source.text, args.function):
            return _error(unknown_function(args.function, path, source, config))
        variants = fixer.single_fix_variants(source, config, path)
        stop = False
        for finding, rewritten in variants:
            if rewritten == source.text:
                continue
            if args.function and not target_contains(source.text, args.function, finding.line):
                continue
            if not args.function and getattr(finding, "function", None) is None and finding.code in SCRIPT_CODES:
                print(f"ms-lint: verifying {finding.path}:{finding.line} {finding.code} (script mode: 2 runs "
                      "without and 2 with the fix) ...", file=sys.stderr, flush=True)
                verification = verify_script(source.text, rewritten, path=path, code=finding.code,
                                             line=finding.line, script_args=script_args, timeout=args.timeout,
                                             pythonpath=list(args.pythonpath))
                results.append(verification)
                printer.show(verification)
                continue
            if not args.function and getattr(finding, "function", None) is None:
                print(f"ms-lint: skipping {finding.path}:{finding.line} {finding.code}: its fix is outside graph "
                      "functions (module level): there is nothing to call", file=sys.stderr)
                skipped += 1
                continue
            print(f"ms-lint: verifying {finding.path}:{finding.line} {finding.code} ...", file=sys.stderr,
                  flush=True)
            try:
                lines = [finding.line] if finding.code == "MSL201" else []
                verification = verify_finding(source.text, rewritten, finding, function=args.function, path=path,
                                              branch_lines=lines, **options)
            except VerifyError as exc:  # a bad comment/pyproject spec for this function: report, go on
                verification = Verification(function=args.function or "?", verdict="error", message=str(exc),
                                            path=finding.path, code=finding.code, line=finding.line,
                                            device=args.device)
            results.append(verification)
            printer.show(verification)
            if _environment_error(verification):
                print("ms-lint: stopping: every other rewrite would fail the same way", file=sys.stderr)
                stop = True
                break
            if _module_error(verification):
                print(f"ms-lint: skipping the other rewrites of {path}: they would fail the same way",
                      file=sys.stderr)
                break
        if stop:
            break

    where = f" inside {args.function}" if args.function else ""
    extra = f" ({skipped} module-level fix(es) skipped)" if skipped else ""
    code = _finish(results, text_out, f"nothing to verify: no fixable findings{where}{extra}")
    return EXIT_ERROR if exit_code == EXIT_ERROR else code
