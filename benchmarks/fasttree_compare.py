"""Check ``ms_lint.fasttree`` against libcst node by node on real code: the tree, every place, every expression's code.

    python benchmarks/fasttree_compare.py                      # MindSpore's source and the real-code packages
    python benchmarks/fasttree_compare.py DIR [DIR ...]        # any folders of Python files

For every file both parsers accept: the fast tree must be libcst's tree less layout (the same node classes, the
same names, numbers and string literals as written, the same shape); for each node the fast tree places,
``fasttree.place_of`` must be what libcst's ``PositionProvider`` (``ms_lint.positions.node_positions``) gives; for
each expression whose code the fast tree reads, ``fasttree.code_of`` must be ``code_for_node``'s text, and
``fasttree.own_parentheses`` the length of its ``lpar``. A None (the
fast tree cannot tell: ``ms-lint check`` then asks libcst's tree) is counted, not a difference. Prints the counts
and every difference; exit status 1 on any difference.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import libcst as cst  # noqa: E402

from ms_lint import fasttree  # noqa: E402
from ms_lint.cstutil import parse_module  # noqa: E402
from ms_lint.fasttree.compare import difference, twins  # noqa: E402
from ms_lint.positions import node_positions  # noqa: E402

def compare_file(path: str, counts: collections.Counter, problems: List[str]) -> None:
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    try:
        real = parse_module(text)
    except (cst.ParserSyntaxError, RecursionError, MemoryError, ValueError):
        counts["files libcst does not parse"] += 1
        return
    try:
        fast = fasttree.fast_module(text)
    except fasttree.FastTreeRefused:
        counts["files refused"] += 1
        return
    counts["files"] += 1
    found = difference(fast, real)
    if found:
        problems.append(f"{path}: tree: {found}")
        return
    positions = node_positions(real)
    for one, other in twins(real, fast):
        if not isinstance(one, cst.CSTNode) or not fasttree.is_fast(other):
            continue
        place = fasttree.place_of(other)
        if place is None:
            counts["places left to libcst"] += 1
        else:
            where = positions[one]
            expected = (where.start.line, where.start.column, where.end.line, where.end.column)
            if (place.line, place.column, place.end_line, place.end_column) != expected:
                problems.append(f"{path}: place of {type(one).__name__}: {tuple(place)} != {expected}")
            counts["places"] += 1
        if isinstance(one, cst.BaseExpression):
            code = fasttree.code_of(other)
            if code is None:
                counts["codes left to libcst"] += 1
            elif code != cst.Module([]).code_for_node(one):
                problems.append(f"{path}: code of {type(one).__name__}: {code[:60]!r}")
            else:
                counts["codes"] += 1
            pairs = fasttree.own_parentheses(other)
            if pairs is not None and pairs != len(getattr(one, "lpar", ())):
                problems.append(f"{path}: parentheses of {type(one).__name__}: {pairs} != {len(one.lpar)}")


def default_folders() -> List[str]:
    import realcode
    import throughput

    folders = [throughput.mindspore_source()] if throughput.mindspore_source() else []
    packages = sorted({row.package for row in realcode.read_rows()} | set(throughput.PACKAGES))
    return folders + [realcode.package_root(package) for package in packages if not package.startswith("mindspore@")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", help="folders of Python files (default: MindSpore's source and the "
                                                   "real-code corpus packages)")
    args = parser.parse_args(argv)
    folders = args.folders or default_folders()
    counts: collections.Counter = collections.Counter()
    problems: List[str] = []
    start = time.perf_counter()
    for folder in folders:
        for root, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".py"):
                    compare_file(os.path.join(root, name), counts, problems)
    for problem in problems:
        print(problem)
    print(", ".join(f"{key}: {value:,}" for key, value in sorted(counts.items()))
          + f"; {len(problems)} differences ({time.perf_counter() - start:.0f} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
