"""``# noqa`` / ``# noqa: MSL101,MSL102`` on the reported line, ``# flake8: noqa`` and ``# ms-lint: skip-file``.

The patterns are flake8's own (``flake8/defaults.py``, flake8 7), so ``ms-lint check`` and the flake8 plugin
suppress exactly the same findings:

* ``# noqa`` is written with one space after ``#`` (``#noqa`` is not a noqa comment for flake8), in any case;
* the codes after ``# noqa:`` are compared as written: ``# noqa: MSL101`` or ``# noqa: MSL1`` silence MSL101,
  ``# noqa: msl101`` silences nothing (flake8 matches codes case-sensitively);
* ``# noqa: MSL`` (letters without digits) is not a code list: it is a blanket ``# noqa``, as in flake8;
* a line that starts with ``# flake8: noqa`` (or ``# flake8=noqa``, any case) anywhere in the file skips the file.
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence

NOQA = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
FLAKE8_NOQA_FILE = re.compile(r"\s*# flake8[:=]\s*noqa", re.IGNORECASE)
SKIP_FILE = re.compile(r"^\s*#\s*ms-lint:\s*skip-file\b", re.MULTILINE)
_SPLIT = re.compile(r"[,\s]")
_LINE_ENDS = re.compile(r"\r\n|\r|\n")


def noqa_codes(line: str) -> Optional[List[str]]:
    """None: no noqa. []: blanket noqa. Otherwise the codes it names, as written."""
    match = NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    return [c for c in _SPLIT.split(codes) if c] if codes else []


def is_suppressed(lines: Sequence[str], line: int, code: str) -> bool:
    if not 1 <= line <= len(lines):
        return False
    codes = noqa_codes(lines[line - 1])
    if codes is None:
        return False
    return not codes or code in codes or code.startswith(tuple(codes))


def skips_file(text: str, flake8_noqa: bool = True) -> bool:
    """``# ms-lint: skip-file``, or (``flake8_noqa``) flake8's file-level ``# flake8: noqa``. The flake8 plugin
    passes False: flake8 itself skips such a file, unless ``--disable-noqa`` asks it not to."""
    if SKIP_FILE.search(text) is not None:
        return True
    if not flake8_noqa or "flake8" not in text:
        return False
    return any(FLAKE8_NOQA_FILE.match(line) for line in _LINE_ENDS.split(text))  # flake8's physical lines
