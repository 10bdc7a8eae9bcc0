"""Check the screen's soundness argument on real code: every graph function ``GraphScope`` finds is a candidate.

    python benchmarks/screen_superset.py                          # MindSpore's source, the packages, the Cells
    python benchmarks/screen_superset.py --corpus packages

The screen before libcst (``ms_lint/analysis/screen.py``) skips a file when no function that *may* be graph code
holds what a firing rule looks at; that is sound only while its candidates hold every function ``GraphScope``
walks. ``tests/test_screen.py`` checks it on the fixtures and rule examples; this checks it on the benchmark
corpora (``diff_engines.py``'s copies), where the code is nobody's test case: each file is checked in this
process with the screen turned off, so that every file a graph rule may fire in is parsed, and ``GraphScope``'s
functions (with the project index) are compared with ``screen.candidates`` on the index's summary of the same
bytes (a def nested in a function counts as its outermost enclosing function, whose text the screen reads). Every
function missing is listed; exit status 1 when any is. ``diff_engines.py`` compares findings; this
catches a gap before a finding falls into it.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
from typing import List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import diff_engines  # noqa: E402  (the corpora's copies)


def _covering_name(scope, node) -> str:
    """The qualname of the definition whose text holds ``node``'s: its own, or for a def nested in a function
    (``learn``'s ``gae``, a ``while_loop`` body) the outermost enclosing function's. The index's summary lists
    module functions and methods only, and the screen reads a candidate's whole text, its nested defs' included."""
    while node in scope.enclosing:
        node = scope.enclosing[node]
    owner = scope.owner_of.get(node)
    return f"{owner}.{node.name.value}" if owner else node.name.value


def check_corpus(target: str) -> Tuple[int, int, List[Tuple[str, List[str]]]]:
    """(files parsed with the screen off, files with graph code compared, (path, missing functions) for each file
    whose ``GraphScope`` functions are not all candidates)."""
    from ms_lint import engine
    from ms_lint.analysis import screen
    from ms_lint.cli import main

    parsed, compared, missing = [0], [0], []
    real_screen, real_rules = engine._graph_syntax_possible, engine.run_rules

    def run_rules(context, rule_classes):
        parsed[0] += 1
        project = context.project
        graph = {_covering_name(context.scope, info.node) for info in context.scope.graph_functions()}
        summary = project.index.by_path.get(project.path) if project is not None else None
        if graph and summary is not None:
            found = list(screen.candidates(context.text, summary, engine._project_graph(project),
                                           engine._constructs_compiled(project)))
            if not any(words is None for _, _, words in found):  # unreadable text: the screen keeps the file
                compared[0] += 1
                lost = graph - {definition.qualname for definition, _, _ in found}
                if lost:
                    missing.append((project.path, sorted(lost)))
        return real_rules(context, rule_classes)

    engine._graph_syntax_possible = lambda *args, **kwargs: True
    engine.run_rules = run_rules
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            main(["check", "--no-cache", "--exit-zero", "--jobs", "1", target])
    finally:
        engine._graph_syntax_possible, engine.run_rules = real_screen, real_rules
    return parsed[0], compared[0], missing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="auto", help="as in throughput.py (default: mindspore,packages,cells)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="ms_lint_screen_") as workdir:
        os.chdir(workdir)
        for kind, target in diff_engines.prepared_corpora(workdir, args.corpus, args.seed, "ms-lint screen check"):
            parsed, compared, missing = check_corpus(target)
            print(f"{kind}: {parsed} files parsed with the screen off, {compared} with graph code compared: "
                  f"{'every graph function a candidate' if not missing else f'{len(missing)} files miss some'}")
            for path, names in missing:
                print(f"  {path}: {', '.join(names)}")
            failed += bool(missing)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
