"""flake8 plugin: ms-lint's findings in flake8 (and so in every editor that runs flake8).

The same engine as ``ms-lint check`` runs on the text flake8 already read (``"".join(lines)``), with the
``[tool.ms-lint]`` table of the nearest ``pyproject.toml`` above the file (thresholds, ``graph-mode``, ``ignore``,
``per-file-ignores``, ``exclude``; cached per folder). Findings come out at the same line and column as
``ms-lint check``: flake8 adds 1 to the 0-based column a plugin yields.

Suppression is left to flake8: findings that ms-lint's own ``# noqa`` handling would drop are yielded too, so
flake8's ``# noqa`` rules, ``--disable-noqa`` and ``--select``/``--extend-ignore`` decide, as for any plugin.
Excludes from ``[tool.ms-lint]`` apply to the files flake8 passes, as ``ms-lint check --force-exclude`` does.

The plugin never raises: an exception in a plugin aborts the user's whole flake8 run, so every failure
(a bad ``[tool.ms-lint]`` table, an internal error) becomes one MSL900 finding on line 1.
"""
from __future__ import annotations

import ast
import os
from typing import Dict, Iterator, List, Sequence, Tuple

from ms_lint import __version__
from ms_lint.codes import UNANALYZABLE

Result = Tuple[int, int, str, type]
_STDIN_NAMES = ("stdin", "-")

# Folder -> its Config, or the ConfigError message. flake8 checks many files per process; config is read once.
_CONFIGS: Dict[str, object] = {}


def _config_for(filename: str):
    """The Config that applies to ``filename``, or a str: why it could not be loaded."""
    from ms_lint.config import ConfigError, load_config

    if filename in _STDIN_NAMES or not os.path.exists(filename):
        folder = os.getcwd()  # stdin (or --stdin-display-name naming no real file): config of the working folder
    else:
        folder = os.path.dirname(os.path.abspath(filename))
    if folder not in _CONFIGS:
        try:
            _CONFIGS[folder] = load_config(start=folder)
        except ConfigError as exc:
            _CONFIGS[folder] = str(exc)
    return _CONFIGS[folder]


class Plugin:
    """flake8 ``tree`` plugin (flake8 picks the kind from these ``__init__`` parameter names)."""

    name = "ms-lint"
    version = __version__

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str):
        del tree  # libcst parses the text itself; flake8 needs the parameter to know the plugin's kind
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Result]:
        try:
            results = self._check()
        except Exception as exc:  # anything raised here would stop the user's whole flake8 run
            results = [self._unanalyzable(f"internal error ({type(exc).__name__}: {exc})")]
        yield from results

    def _check(self) -> List[Result]:
        from ms_lint.engine import analyze_source
        from ms_lint.source import SourceFile

        config = _config_for(self.filename)
        if isinstance(config, str):
            return [self._unanalyzable(f"configuration error: {config}")]
        if self.filename not in _STDIN_NAMES and config.is_excluded(self.filename, check_parents=True):
            return []
        text = "".join(self.lines)
        source = SourceFile(path=self.filename, text=text, encoding="utf-8", has_bom=False,
                            raw=text.encode("utf-8", "surrogatepass"))
        analysis = analyze_source(source, config, self.filename, flake8_noqa=False)
        findings = sorted(analysis.findings + analysis.suppressed, key=lambda f: (f.line, f.column, f.code))
        return [(f.line, max(f.column - 1, 0), f"{f.code} {f.message}", type(self)) for f in findings]

    def _unanalyzable(self, reason: str) -> Result:
        return (1, 0, f"{UNANALYZABLE} cannot analyze file: {reason}", type(self))
