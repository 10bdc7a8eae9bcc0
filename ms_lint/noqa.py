"""``# noqa`` / ``# noqa: MSL101,MSL102`` on the reported line, and ``# ms-lint: skip-file``."""
from __future__ import annotations

import re
from typing import List, Optional, Sequence

NOQA = re.compile(r"#\s*noqa(?::[\s]*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
SKIP_FILE = re.compile(r"^\s*#\s*ms-lint:\s*skip-file\b", re.MULTILINE)
CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


def noqa_codes(line: str) -> Optional[List[str]]:
    """None: no noqa. []: blanket noqa. Otherwise the codes it names."""
    match = NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    return [c.upper() for c in CODE.findall(codes)] if codes else []


def is_suppressed(lines: Sequence[str], line: int, code: str) -> bool:
    if not 1 <= line <= len(lines):
        return False
    codes = noqa_codes(lines[line - 1])
    if codes is None:
        return False
    return not codes or any(code.startswith(c) for c in codes)


def skips_file(text: str) -> bool:
    return SKIP_FILE.search(text) is not None
