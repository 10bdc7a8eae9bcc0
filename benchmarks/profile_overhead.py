"""What ``ms-lint profile`` costs: a profiled compile against a plain one of the same target.

For each target, in rounds (one of each variant per round, so machine load hits all alike; medians):

* plain: a fresh process (the profiler's child without the switches: compile cache off, private folder) that
  imports MindSpore and the module, builds the inputs and makes the first call (compile + one run);
* profiled: the same process with ``MS_JIT=COMPILE_PROFILE:1`` and the two graph dumps on, as ``ms-lint profile``
  runs it, including reading the dumps;
* ``ms-lint profile`` end to end (a subprocess: analysis of the file, the profiled process, the report).

    python benchmarks/profile_overhead.py [--rounds 3] [--out benchmarks/results/profile_overhead.md]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

TARGETS = [
    ("fixtures/verify/loop_200_orig.py", "func", None),
    ("fixtures/profile/cells.py", "Net", "x=float32[8,4]"),
    ("examples/train_detector.py", "Detector", "x=float32[4,16]"),
    ("examples/train_detector.py", "FocalLoss", "logits=float32[32,4]; labels=float32[32,4]"),
]


def _one(path, function, inputs, plain):
    from ms_lint.profiler.runner import run_profile
    from ms_lint.profiler.target import TargetRequest, user_file_test

    target = TargetRequest(path, function, inputs=inputs)
    with open(path, encoding="utf-8") as handle:
        target.prepare(handle.read())
    try:
        run = run_profile(target.request(), timeout=600, is_user_file=user_file_test([target.location.root]),
                          plain=plain)
    finally:
        target.cleanup()
    if not run.ok:
        raise SystemExit(f"{path} {function}: {run.error}")
    return run


def _cli(path, function, inputs):
    command = [sys.executable, "-m", "ms_lint", "profile", path, "--function", function, "--format", "json"]
    if inputs:
        command += ["--inputs", inputs]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "profile_overhead.md"))
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    rows = []
    for path, function, inputs in TARGETS:
        plain_first, plain_wall, prof_first, prof_wall, prof_total, cli = [], [], [], [], [], []
        for _ in range(args.rounds):
            run = _one(path, function, inputs, plain=True)
            plain_first.append(run.result["first_call_s"])
            plain_wall.append(run.wall_s)
            run = _one(path, function, inputs, plain=False)
            prof_first.append(run.result["first_call_s"])
            prof_wall.append(run.wall_s)
            prof_total.append(run.compile_s)
            cli.append(_cli(path, function, inputs))
        med = statistics.median
        rows.append((f"`{path}` `{function}`", med(plain_first), med(prof_first), med(prof_total), med(plain_wall),
                     med(prof_wall), med(cli)))
        print(rows[-1], flush=True)
    lines = [
        "# `ms-lint profile` overhead",
        "",
        f"MindSpore 2.10 CPU, this project's 2-core machine (shared), medians of {args.rounds} rounds, "
        f"`python benchmarks/profile_overhead.py`, measured {time.strftime('%Y-%m-%d')}.",
        "First call = compile + one run inside the process; process = the fresh process from start to exit "
        "(MindSpore import included); `ms-lint profile` = the whole command (analysis, process, dumps read, report).",
        "",
        "| target | plain first call | profiled first call | overhead | TotalTime (profiled) | plain process | "
        "profiled process | `ms-lint profile` |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, pf, qf, total, pw, qw, cli in rows:
        lines.append(f"| {name} | {pf:.2f} s | {qf:.2f} s | {qf / pf - 1:+.0%} | {total:.2f} s | {pw:.2f} s | "
                     f"{qw:.2f} s | {cli:.2f} s |")
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
