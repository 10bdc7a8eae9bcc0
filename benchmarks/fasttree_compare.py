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
from typing import Iterator, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import libcst as cst  # noqa: E402

from ms_lint import fasttree  # noqa: E402
from ms_lint.cstutil import parse_module  # noqa: E402
from ms_lint.positions import node_positions  # noqa: E402
from ms_lint.walk import _child_fields  # noqa: E402

LAYOUT = {"indent", "first_colon", "second_colon", "default_indent", "default_newline", "encoding",
          "leading_whitespace"}
SCALARS = ("value", "star", "start", "end", "has_trailing_newline")


def difference(fast, real, path: str = "module") -> Optional[str]:
    """The first difference between a fast tree and libcst's outside layout, or None."""
    if isinstance(fast, (list, tuple)) and isinstance(real, (list, tuple)):
        if len(fast) != len(real):
            return f"{path}: {len(fast)} != {len(real)} items"
        for index, (one, other) in enumerate(zip(fast, real)):
            found = difference(one, other, f"{path}[{index}]")
            if found:
                return found
        return None
    if type(fast) is not type(real):
        return f"{path}: {type(fast).__name__} != {type(real).__name__}"
    if not isinstance(fast, cst.CSTNode):
        return None if fast == real else f"{path}: {fast!r} != {real!r}"
    for name in _child_fields(type(fast)):
        if name not in LAYOUT:
            found = difference(getattr(fast, name), getattr(real, name), f"{path}.{name}")
            if found:
                return found
    for name in (*SCALARS, "posonly_ind", "star_arg", "asynchronous", "second_colon"):
        if not hasattr(fast, name):
            continue
        one, other = getattr(fast, name), getattr(real, name)
        if isinstance(one, (cst.CSTNode, cst.MaybeSentinel)) or isinstance(other, (cst.CSTNode, cst.MaybeSentinel)):
            if type(one) is not type(other):
                return f"{path}.{name}: {type(one).__name__} != {type(other).__name__}"
        elif one != other:
            return f"{path}.{name}: {one!r} != {other!r}"
    return None


def twins(real, fast) -> Iterator[Tuple[object, object]]:
    """Each node of libcst's tree with the fast tree's node in its place."""
    yield real, fast
    if isinstance(real, (list, tuple)):
        for one, other in zip(real, fast):
            yield from twins(one, other)
    elif isinstance(real, cst.CSTNode):
        for name in _child_fields(type(real)):
            if name not in LAYOUT:
                yield from twins(getattr(real, name), getattr(fast, name))


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
                problems.append(f"{path}: place of {type(one).__name__}: {tuple(place[:4])} != {expected}")
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
