"""Line diffs of a module and its fixed text, in time linear in the file for the usual fix.

``difflib.SequenceMatcher`` looks for the longest matching block of the whole range first, then recurses on both
sides: on a 55,000-line module with 600 rewritten loops, ``ms-lint fix`` spent 104 s (profiled) in
``find_longest_match``. A fix leaves almost every line in place, so the diff is anchored first: the common head
and tail are matched, then lines that occur exactly once on each side (a ``def`` line, a unique statement) and
keep their order on both sides (the longest increasing run of them, as in patience diff) cut the rest into small
gaps, and only those gaps go to ``SequenceMatcher``. The blocks are a valid matching of the two texts (each
block is equal lines, blocks increase on both sides). Texts with at most ``SMALL_GAP`` line pairs, and gaps with
no anchor, go to ``SequenceMatcher`` whole: there the diff is exactly difflib's.
"""
from __future__ import annotations

import bisect
import difflib
from typing import Dict, List, Sequence, Tuple

Block = Tuple[int, int, int]  # (start in a, start in b, length): a[i:i+n] == b[j:j+n]

# A gap whose two sides multiply to at most this many line pairs goes to SequenceMatcher as it is.
SMALL_GAP = 40_000
# Gaps cut inside gaps this deep go to SequenceMatcher as they are (the recursion stays far below Python's limit).
MAX_DEPTH = 40


def matching_blocks(a: Sequence[str], b: Sequence[str], autojunk: bool = True) -> List[Block]:
    """``SequenceMatcher.get_matching_blocks()`` of ``a`` and ``b``, anchored (see the module docstring): the
    blocks in order, adjacent ones joined, ending with the ``(len(a), len(b), 0)`` sentinel."""
    found: List[Block] = []
    _match(a, 0, len(a), b, 0, len(b), autojunk, found)
    joined: List[Block] = []
    for i, j, n in found:
        if n == 0:
            continue
        if joined and joined[-1][0] + joined[-1][2] == i and joined[-1][1] + joined[-1][2] == j:
            last = joined.pop()
            joined.append((last[0], last[1], last[2] + n))
        else:
            joined.append((i, j, n))
    joined.append((len(a), len(b), 0))
    return joined


def opcodes(a: Sequence[str], b: Sequence[str], autojunk: bool = True) -> List[Tuple[str, int, int, int, int]]:
    """``SequenceMatcher.get_opcodes()`` over the anchored blocks."""
    return _AnchoredMatcher(None, a, b, autojunk).get_opcodes()


def grouped_opcodes(a: Sequence[str], b: Sequence[str], context: int = 3, autojunk: bool = True):
    """``SequenceMatcher.get_grouped_opcodes(context)`` over the anchored blocks: the hunks of a unified diff."""
    return _AnchoredMatcher(None, a, b, autojunk).get_grouped_opcodes(context)


class _AnchoredMatcher(difflib.SequenceMatcher):
    """A SequenceMatcher whose matching blocks are the anchored ones; its opcode methods build on them."""

    def get_matching_blocks(self):
        if self.matching_blocks is None:
            self.matching_blocks = [difflib.Match(*block) for block in
                                    matching_blocks(self.a, self.b, self.autojunk)]
        return self.matching_blocks


def _match(a: Sequence[str], alo: int, ahi: int, b: Sequence[str], blo: int, bhi: int, autojunk: bool,
           out: List[Block], depth: int = 0) -> None:
    """Append the matching blocks of ``a[alo:ahi]`` and ``b[blo:bhi]`` to ``out``, in order."""
    if (ahi - alo) * (bhi - blo) <= SMALL_GAP or depth > MAX_DEPTH:
        _small(a, alo, ahi, b, blo, bhi, autojunk, out)
        return
    head = 0
    while alo + head < ahi and blo + head < bhi and a[alo + head] == b[blo + head]:
        head += 1
    if head:
        out.append((alo, blo, head))
        alo, blo = alo + head, blo + head
    tail = 0
    while alo < ahi - tail and blo < bhi - tail and a[ahi - tail - 1] == b[bhi - tail - 1]:
        tail += 1
    ahi_inner, bhi_inner = ahi - tail, bhi - tail
    if alo < ahi_inner and blo < bhi_inner:
        anchors = _anchors(a, alo, ahi_inner, b, blo, bhi_inner)
        if anchors:
            i0, j0 = alo, blo
            for i, j in anchors:
                _match(a, i0, i, b, j0, j, autojunk, out, depth + 1)
                out.append((i, j, 1))
                i0, j0 = i + 1, j + 1
            _match(a, i0, ahi_inner, b, j0, bhi_inner, autojunk, out, depth + 1)
        else:
            _small(a, alo, ahi_inner, b, blo, bhi_inner, autojunk, out)
    if tail:
        out.append((ahi_inner, bhi_inner, tail))


def _small(a: Sequence[str], alo: int, ahi: int, b: Sequence[str], blo: int, bhi: int, autojunk: bool,
           out: List[Block]) -> None:
    """What ``SequenceMatcher`` matches in the range (all of it for a small text: the same diff as difflib)."""
    if alo < ahi and blo < bhi:
        matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=autojunk)
        out.extend((alo + i, blo + j, n) for i, j, n in matcher.get_matching_blocks() if n)


def _anchors(a: Sequence[str], alo: int, ahi: int, b: Sequence[str], blo: int, bhi: int) -> List[Tuple[int, int]]:
    """Lines occurring once in ``a[alo:ahi]`` and once in ``b[blo:bhi]``, as (index in a, index in b) pairs, the
    longest run of them whose b indices increase with their a indices."""
    once_a = _unique_positions(a, alo, ahi)
    once_b = _unique_positions(b, blo, bhi)
    pairs = sorted((i, once_b[line]) for line, i in once_a.items() if line in once_b)
    return _longest_increasing(pairs)


def _unique_positions(lines: Sequence[str], lo: int, hi: int) -> Dict[str, int]:
    seen: Dict[str, int] = {}
    repeated = set()
    for index in range(lo, hi):
        line = lines[index]
        if line in seen:
            repeated.add(line)
        else:
            seen[line] = index
    for line in repeated:
        del seen[line]
    return seen


def _longest_increasing(pairs: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """The longest subsequence of ``pairs`` (sorted by their first item) whose second items increase."""
    tails: List[int] = []  # tails[k]: the smallest b index ending an increasing run of length k + 1
    tail_at: List[int] = []  # the pair index of that end
    previous: List[int] = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(index)
        else:
            tails[k] = j
            tail_at[k] = index
        previous[index] = tail_at[k - 1] if k else -1
    run: List[Tuple[int, int]] = []
    index = tail_at[-1] if tail_at else -1
    while index >= 0:
        run.append(pairs[index])
        index = previous[index]
    run.reverse()
    return run


def unified_diff(a: Sequence[str], b: Sequence[str], fromfile: str, tofile: str, context: int = 3) -> List[str]:
    """The lines of a unified diff (``diff -u``) from ``a`` to ``b`` (lines with their ends), hunks of
    ``context`` lines; empty when they are equal. The format ``difflib.unified_diff`` writes, without dates."""
    out: List[str] = []
    for group in grouped_opcodes(a, b, context):
        if not out:
            out += [f"--- {fromfile}\n", f"+++ {tofile}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_hunk_range(first[1], last[2])} +{_hunk_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                out += ["-" + line for line in a[i1:i2]]
            if tag in ("replace", "insert"):
                out += ["+" + line for line in b[j1:j2]]
    return out


def _hunk_range(start: int, stop: int) -> str:
    """``start,length`` of a hunk side, 1-based; a one-line side is just its number, an empty one names the line
    before it."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"
