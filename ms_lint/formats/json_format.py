"""One JSON array of finding objects (1-based line and column)."""
from __future__ import annotations

import json
from typing import List

from ms_lint.diagnostics import Finding


def render(findings: List[Finding], **_) -> str:
    return json.dumps([f.to_json() for f in findings], indent=2) + "\n"
