"""Diff the findings of two ms-lint versions on the benchmark corpora: a speed-up must change no finding.

    python benchmarks/diff_engines.py                       # main (git ref) against the working tree, 3 corpora
    python benchmarks/diff_engines.py --base HEAD~3         # any git ref as the old engine
    python benchmarks/diff_engines.py --base-dir /work/main # or another checkout's ms_lint package
    python benchmarks/diff_engines.py --corpus packages,cells --jobs 1

The old engine is the ``ms_lint`` package of ``--base`` (exported with ``git archive`` into a temporary folder)
or of ``--base-dir``; the new one is this working tree's. Both run ``ms-lint check --no-cache --format json`` on
the same copies of the corpora (``benchmarks/throughput.py``'s: MindSpore's source, the eight model packages, the
generated Cell-heavy corpus) with default settings. Every finding is compared whole (code, path, positions,
message, fix, detail); every difference is listed. Exit status 1 when any corpus differs.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Dict, Iterator, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import cell_corpus  # noqa: E402  (benchmarks/cell_corpus.py: the generated Cell-heavy corpus)
import throughput  # noqa: E402  (benchmarks/throughput.py: the corpora)


def export_ref(ref: str, dest: str) -> str:
    """The ``ms_lint`` package as committed at ``ref``, written under ``dest``; returns the folder to put on
    PYTHONPATH."""
    os.makedirs(dest, exist_ok=True)
    archive = subprocess.run(["git", "-C", REPO, "archive", ref, "ms_lint"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    return dest


def run_engine(code_dir: str, target: str, cwd: str, jobs: int) -> Tuple[List[dict], float, float]:
    """(findings, wall seconds, CPU seconds: user + system of the command and its workers)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = code_dir + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    command = [sys.executable, "-m", "ms_lint", "check", "--no-cache", "--exit-zero", "--format", "json",
               "--jobs", str(jobs), target]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 2) or "Traceback" in done.stderr:
        raise SystemExit(f"ms-lint from {code_dir} failed on {target}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout), wall, cpu


def key(finding: dict) -> Tuple:
    return (finding.get("path"), finding.get("line"), finding.get("column"), finding.get("code"))


def differences(old: List[dict], new: List[dict]) -> List[str]:
    """Every finding only one engine gives, and every finding both give with any field different."""
    def by_key(findings: List[dict]) -> Dict[Tuple, List[str]]:
        table: Dict[Tuple, List[str]] = {}
        for finding in findings:
            table.setdefault(key(finding), []).append(json.dumps(finding, sort_keys=True))
        return table

    before, after = by_key(old), by_key(new)
    lines = []
    for where in sorted(set(before) | set(after), key=lambda k: tuple("" if v is None else str(v) for v in k)):
        a, b = sorted(before.get(where, [])), sorted(after.get(where, []))
        if a == b:
            continue
        shown = f"{where[0]}:{where[1]}:{where[2]} {where[3]}"
        for item in a:
            if item not in b:
                lines.append(f"- {shown}: {item}")
        for item in b:
            if item not in a:
                lines.append(f"+ {shown}: {item}")
    return lines


def prepare_corpus(kind: str, root: str, seed: int = 0) -> bool:
    """Write a copy of the corpus ``kind`` (``throughput.py``'s names, or a folder) to ``root``; False when it is
    not at hand (MindSpore not installed)."""
    if kind == "mindspore":
        source = throughput.mindspore_source()
        if source is None:
            return False
        throughput.copy_folder(source, root)
    elif kind == "packages":
        throughput.copy_packages(root)
    elif kind == "cells":
        cell_corpus.build(root, 150, 3000, seed)
    elif kind == "synthetic":
        throughput.synthetic.build(root, 600, seed)
    else:
        throughput.copy_folder(kind, root)
    return True


def prepared_corpora(workdir: str, corpus: str, seed: int, note: str) -> Iterator[Tuple[str, str]]:
    """(kind, its copy's path relative to ``workdir``) for each corpus ``corpus`` names (``--corpus``: "auto" or
    a comma-separated list, as in throughput.py), each written under ``workdir`` when its turn comes, beside a
    ``pyproject.toml`` of default settings saying ``note``; a corpus not at hand is reported and skipped."""
    chosen = list(throughput.CORPORA) if corpus == "auto" else [c.strip() for c in corpus.split(",")]
    with open(os.path.join(workdir, "pyproject.toml"), "w", encoding="utf-8") as handle:
        handle.write(f"# {note}: default settings\n")
    for number, kind in enumerate(chosen):
        root = os.path.join(workdir, f"corpus{number}")
        if not prepare_corpus(kind, root, seed):
            print(f"{kind}: not installed, skipped")
            continue
        yield kind, os.path.relpath(root, workdir)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="git ref of the old engine (default: main)")
    parser.add_argument("--base-dir", help="folder holding the old engine's ms_lint package (instead of --base)")
    parser.add_argument("--new-dir", default=REPO, help="folder holding the new engine's ms_lint (default: this tree)")
    parser.add_argument("--corpus", default="auto", help="as in throughput.py (default: mindspore,packages,cells)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    differing = 0
    with tempfile.TemporaryDirectory(prefix="ms_lint_diff_") as workdir:
        old_dir = args.base_dir or export_ref(args.base, os.path.join(workdir, "old_engine"))
        base_name = args.base_dir or args.base
        for kind, target in prepared_corpora(workdir, args.corpus, args.seed, "ms-lint engine diff"):
            old, old_wall, old_cpu = run_engine(old_dir, target, workdir, args.jobs)
            new, new_wall, new_cpu = run_engine(args.new_dir, target, workdir, args.jobs)
            lines = differences(old, new)
            verdict = "identical" if not lines else f"{len(lines)} differences"
            print(f"{kind}: {len(old)} findings ({base_name}: {old_wall:.1f} s wall, {old_cpu:.1f} s CPU) / "
                  f"{len(new)} (new: {new_wall:.1f} s wall, {new_cpu:.1f} s CPU): {verdict}")
            for line in lines:
                print("  " + line)
            differing += bool(lines)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
