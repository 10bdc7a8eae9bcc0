"""Instructions the language server's check executes per edit, counted by valgrind: an A/B measure that does not
move with the machine's load (wall and CPU times of the same engine move by about 10% between runs here).

    python benchmarks/edit_instructions.py                      # this tree's engine, the two server_latency files
    python benchmarks/edit_instructions.py --tree /tmp/old      # another checkout's ms_lint (a git worktree)

For each file (mindearth's ``dgmr.py`` from the real-code wheels when present, and ``server_latency.py``'s
generated module of Cells) it runs ``valgrind --tool=callgrind`` twice on a Python process that opens the file
with ``ms_lint.lsp.documents.Checker`` (the server's checker): once followed by ``--edits`` edits (the same edits
``server_latency.py`` sends), once without. The difference over the number of edits is the figure: millions of
instructions per edit. ``PYTHONHASHSEED=0`` keeps runs of one engine alike. Each run takes 30-60 s. Needs valgrind.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

CHILD = """
import sys
import ms_lint.lsp.documents as documents  # from the tree on PYTHONPATH, before server_latency puts its own first
assert documents.__file__.startswith(sys.argv[1]), documents.__file__
sys.path.insert(0, sys.argv[2])
import server_latency
path, count = sys.argv[3], int(sys.argv[4])
text = open(path, encoding="utf-8").read()
checker = documents.Checker()
checker.check(path, text)
for _kind, _change, after in server_latency.edits(text, count)[:count]:
    checker.check(path, after)
"""


def instructions(tree: Path, path: Path, edits: int) -> int:
    with tempfile.TemporaryDirectory(prefix="ms_lint_instr_") as workdir:
        out = os.path.join(workdir, "callgrind.out")
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tree)}
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", CHILD,
             str(tree / "ms_lint"), str(HERE), str(path), str(edits)],
            cwd=str(tree), env=env, capture_output=True, text=True)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or found is None:
            raise SystemExit(f"valgrind run failed ({done.returncode}):\n{done.stderr[-2000:]}")
        return int(found.group(1))


def targets(workdir: Path):
    sys.path.insert(0, str(HERE))
    import server_latency  # noqa: E402  (benchmarks/server_latency.py: the same files and edits)

    return server_latency.prepare(workdir)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="instructions per edit of the language server's check")
    parser.add_argument("--tree", default=str(REPO), help="folder holding the ms_lint package to measure")
    parser.add_argument("--edits", type=int, default=15, help="edits per file (default 15)")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("edit_instructions: valgrind is not installed", file=sys.stderr)
        return 2
    tree = Path(args.tree).resolve()
    with tempfile.TemporaryDirectory(prefix="ms_lint_instr_files_") as workdir:
        for label, path in targets(Path(workdir)):
            opened = instructions(tree, path, 0)
            edited = instructions(tree, path, args.edits)
            print(f"{label}: {(edited - opened) / args.edits / 1e6:.0f}M instructions per edit "
                  f"(opening the file: {opened / 1e6:.0f}M)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
