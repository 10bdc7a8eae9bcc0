"""Helpers the test suite uses to run rule examples (VALID / INVALID) through the real engine and fixer."""
from __future__ import annotations

import textwrap
from typing import List, Optional

from ms_lint.config import Config
from ms_lint.diagnostics import Finding
from ms_lint.engine import analyze_source
from ms_lint.fixer import FixOutcome, fix_text
from ms_lint.source import decode_source


def lint(code: str, config: Optional[Config] = None, path: str = "example.py", select: Optional[List[str]] = None
         ) -> List[Finding]:
    """Findings for a snippet (dedented); ``select`` limits the codes."""
    config = config or Config()
    if select:
        config = config.with_overrides(select=select)
    source = decode_source(path, textwrap.dedent(code).encode("utf-8"))
    return analyze_source(source, config, path).findings


def fix(code: str, config: Optional[Config] = None, unsafe: bool = False, select: Optional[List[str]] = None,
        path: str = "example.py") -> FixOutcome:
    config = config or Config()
    if select:
        config = config.with_overrides(select=select)
    source = decode_source(path, textwrap.dedent(code).encode("utf-8"))
    return fix_text(source, config, unsafe=unsafe, path=path)
