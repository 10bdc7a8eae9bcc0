"""``ms-lint profile``: which findings cost the compile seconds of your own program.

``ms-lint profile PATH --function F`` compiles ``F`` (the verifier's target options) once in a fresh process with
MindSpore's compile profile and graph dumps on, splits the compile time over the source lines by their share of
graph nodes, and joins the findings of ``check`` to it. ``ms-lint profile SCRIPT.py [-- ARGS...]`` runs a script
instead and stops it right after its first ``--compiles N`` graph compiles. Exit codes: 0 profiled, 2 an error
(MindSpore missing, a target that does not compile, a timeout, a failure predicted before compiling, bad
arguments), always one ``ms-lint: error:`` line.
"""
from __future__ import annotations

import argparse
import os
import sys

from ms_lint.cli import EXIT_CLEAN, EXIT_ERROR
from ms_lint.commands.target_options import add_target_options, read_target_options
from ms_lint.commands.verify import positive_int


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "profile",
        help="compile your program once with MindSpore's profiler: the compile seconds per line and per finding",
        description="Compile --function once (or run SCRIPT.py up to its first compiles) in a fresh process with "
                    "MindSpore's compile profile and graph dumps on; estimate the seconds each source line costs by "
                    "its share of graph nodes, join the findings of `ms-lint check`, and list costly lines no rule "
                    "flags. Needs MindSpore.",
    )
    parser.add_argument("path", metavar="PATH", help="the file of --function, or a script to run (script mode)")
    parser.add_argument("script_args", nargs="*", metavar="ARGS",
                        help="script mode: the script's arguments, after -- (ms-lint profile train.py -- --epochs 1)")
    parser.add_argument("--function", metavar="NAME",
                        help="what to compile: func, Class (a Cell: its construct) or Class.method; without it, "
                             "PATH is run as a script")
    add_target_options(parser)
    parser.add_argument("--compiles", type=positive_int, default=1, metavar="N",
                        help="script mode: stop the script right after its Nth new graph compile (default: 1)")
    parser.add_argument("--confirm", type=positive_int, metavar="N",
                        help="compile once more with each of the top N fixable findings' fix applied (in whichever "
                             "of your files it is) and report the measured saving next to the estimate")
    parser.add_argument("--repeat", type=positive_int, default=3, metavar="K",
                        help="with --confirm: fresh processes per version, medians compared (default: 3)")
    parser.add_argument("--force", action="store_true",
                        help="compile even when the target is predicted to fail (an unrolled loop past the "
                             "call-depth limit)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument("--output", "-o", metavar="FILE",
                        help="also write the profile as JSON to FILE (for `ms-lint check --profile-data FILE`)")
    parser.add_argument("--plot", metavar="FILE.png", help="write a bar chart of the costs (needs matplotlib)")
    parser.add_argument("--config", help="pyproject.toml to use for the findings, instead of the nearest one")
    parser.set_defaults(handler=run)
    parser.__class__ = _split_at_dashes(type(parser))


def _split_at_dashes(base):
    """A parser class that hands everything after ``--`` to the script untouched: argparse alone loses it when an
    option comes between PATH and ``--`` (``profile train.py --compiles 2 -- --steps 2``)."""

    class ProfileParser(base):
        def parse_known_args(self, args=None, namespace=None):
            args = list(sys.argv[1:] if args is None else args)
            extra = []
            if "--" in args:
                cut = args.index("--")
                args, extra = args[:cut], args[cut + 1:]
            parsed, rest = super().parse_known_args(args, namespace)
            parsed.script_args = list(getattr(parsed, "script_args", None) or []) + extra
            return parsed, rest

    return ProfileParser


def _error(message: str) -> int:
    print(f"ms-lint: error: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_ERROR


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # never a traceback on the user's terminal
        return _error(f"profile failed unexpectedly: {type(exc).__name__}: {exc}")


def _findings_source(args):
    from ms_lint.config import ConfigError, ConfigSet, load_config
    from ms_lint.engine import analyze_source
    from ms_lint.source import UnreadableSource, read_source

    configs = ConfigSet(fixed=load_config(path=args.config) if args.config else None)

    def findings_for(path: str) -> list:
        try:
            source = read_source(path)
            return analyze_source(source, configs.for_path(path), path).findings
        except (UnreadableSource, ConfigError):
            return []

    return configs, findings_for


def _run(args: argparse.Namespace) -> int:
    from ms_lint.config import ConfigError
    from ms_lint.profiler.report import render_json, render_text
    from ms_lint.profiler.session import ProfileError, profile_function, profile_script

    setup, setup_name, problem = read_target_options(args)
    if problem:
        return _error(problem)
    path = args.path
    if not os.path.isfile(path):
        return _error(f"{path}: no such file")
    if args.function and args.script_args:
        return _error("--function compiles one target; script arguments (after --) are for script mode")
    try:
        configs, findings_for = _findings_source(args)
        config = configs.for_path(path)
    except ConfigError as exc:
        return _error(str(exc))
    try:
        if args.function:
            from ms_lint.commands.verify import target_defined, unknown_function
            from ms_lint.source import UnreadableSource, read_source

            try:
                source = read_source(path)
            except UnreadableSource as exc:
                return _error(f"{path}: {exc.reason}")
            if not target_defined(source.text, args.function):
                return _error(unknown_function(args.function, path, source, config))
            print(f"ms-lint: profiling {path} {args.function} ...", file=sys.stderr, flush=True)
            profile = profile_function(path, args.function, inputs=args.inputs, init=args.init, setup=setup,
                                       setup_name=setup_name, pythonpath=args.pythonpath, device=args.device,
                                       timeout=args.timeout, verify_config=config.verify,
                                       findings_for=findings_for, force=args.force)
        else:
            print(f"ms-lint: profiling script {path} (stopping it after {args.compiles} graph compile(s)) ...",
                  file=sys.stderr, flush=True)
            profile = profile_script(path, args.script_args, compiles=args.compiles, pythonpath=args.pythonpath,
                                     device=args.device, timeout=args.timeout, findings_for=findings_for)
        if args.confirm:
            from ms_lint.profiler.confirm import confirm

            confirm(profile, args.confirm, configs.for_path, args.timeout, repeat=args.repeat,
                    progress=lambda text: print(text, file=sys.stderr, flush=True))
        if args.plot:
            from ms_lint.profiler.plot import plot

            plot(profile, args.plot)
    except ProfileError as exc:
        return _error(str(exc))
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                handle.write(render_json(profile) + "\n")
        except OSError as exc:
            return _error(f"--output {args.output}: cannot write it ({exc.strerror or exc})")
    sys.stdout.write(render_json(profile) + "\n" if args.format == "json" else render_text(profile))
    return EXIT_CLEAN
