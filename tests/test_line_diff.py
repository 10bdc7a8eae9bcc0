"""``ms_lint.line_diff``: the anchored line diff behind ``ms-lint fix``'s patch and the editor's fix edits.

It must be a correct diff (the patch turns the old text into the new one, matched lines are equal), the same as
``difflib`` where no anchoring happens, and on a long module with many small rewrites hand ``SequenceMatcher`` only
small gaps (a whole 55,000-line module took it minutes)."""
import difflib
import random
import re

import pytest

from ms_lint import line_diff
from ms_lint.commands.fix import unified_diff as fix_patch


def apply_patch(old, patch):
    """The new lines a unified diff describes, checking every context and removed line against ``old``."""
    new, at = [], 0
    for line in patch[2:]:
        if line.startswith("@@"):
            start, length = re.match(r"@@ -(\d+)(?:,(\d+))? ", line).groups()
            start = int(start) - (0 if length == "0" else 1)
            new += old[at:start]
            at = start
        elif line[0] in " -":
            assert old[at] == line[1:]
            at += 1
            if line[0] == " ":
                new.append(line[1:])
        else:
            new.append(line[1:])
    return new + old[at:]


def random_edit(rng, lines, edits):
    out = list(lines)
    for at in sorted(rng.sample(range(len(out)), min(edits, len(out))), reverse=True):
        choice = rng.random()
        if choice < 0.4:
            out[at:at + rng.randint(1, 3)] = [f"rewritten {rng.randint(0, 5)}\n"]
        elif choice < 0.7:
            out.insert(at, "added\n")
        else:
            del out[at]
    return out


@pytest.mark.parametrize("seed", range(40))
def test_small_texts_diff_exactly_as_difflib(seed):
    rng = random.Random(seed)
    old = [f"line {rng.randint(0, 12)}\n" for _ in range(rng.randint(0, 120))]
    new = random_edit(rng, old, rng.randint(0, 10))
    assert line_diff.matching_blocks(old, new) == [tuple(m) for m in
                                                   difflib.SequenceMatcher(None, old, new).get_matching_blocks()]
    assert line_diff.unified_diff(old, new, "a/m.py", "b/m.py") == [
        line for line in difflib.unified_diff(old, new, "a/m.py", "b/m.py")]


def module_text(cells):
    lines = ["import mindspore as ms\n", "from mindspore import nn, ops\n"]
    for k in range(cells):
        lines += ["\n", f"class Block{k}(nn.Cell):\n", "    def construct(self, x):\n", "        out = []\n",
                  "        for i in range(x.shape[0]):\n", "            out.append(self.f(x[i]))\n",
                  "        return ops.stack(out)\n"]
    return lines


@pytest.mark.parametrize("seed", range(6))
def test_a_long_module_with_many_rewrites_is_a_correct_patch_from_small_gaps(seed, monkeypatch):
    rng = random.Random(seed)
    old = module_text(2000)  # 14,000 lines, most of them repeated in every Cell
    new = random_edit(rng, old, 300)
    sizes = []
    original = difflib.SequenceMatcher.__init__

    def recording(self, isjunk=None, a="", b="", autojunk=True):
        sizes.append(len(a) * len(b))
        original(self, isjunk, a, b, autojunk)

    monkeypatch.setattr(difflib.SequenceMatcher, "__init__", recording)
    patch = line_diff.unified_diff(old, new, "a/m.py", "b/m.py")
    assert apply_patch(old, patch) == new
    blocks = line_diff.matching_blocks(old, new)
    for (i, j, n), (i2, j2, _) in zip(blocks, blocks[1:]):
        assert old[i:i + n] == new[j:j + n] and i + n <= i2 and j + n <= j2
    gaps = sizes[1:]  # the first is the anchored matcher over the whole text, which never searches it
    assert gaps and max(gaps) <= line_diff.SMALL_GAP


def test_fix_patch_of_identical_texts_is_empty_and_of_an_appended_line_is_one_hunk():
    assert fix_patch("a = 1\n", "a = 1\n", "m.py") == ""
    assert fix_patch("a = 1\n", "a = 1\nb = 2\n", "m.py") == (
        "--- a/m.py\n+++ b/m.py\n@@ -1 +1,2 @@\n a = 1\n+b = 2\n")


def test_gaps_past_the_depth_limit_go_to_difflib_whole_and_the_patch_stays_correct(monkeypatch):
    rng = random.Random(7)
    old = module_text(300)
    new = random_edit(rng, old, 60)
    monkeypatch.setattr(line_diff, "MAX_DEPTH", 0)  # only the first cut is anchored
    assert apply_patch(old, line_diff.unified_diff(old, new, "a/m.py", "b/m.py")) == new
