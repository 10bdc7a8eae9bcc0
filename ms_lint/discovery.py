"""Which files a run looks at: Python files under the given paths, minus excludes. Never follows symlinked folders."""
from __future__ import annotations

import os
from typing import Iterator, List

from ms_lint.config import Config

PYTHON_SUFFIXES = (".py", ".pyi")


class PathError(Exception):
    """A path given on the command line does not exist."""


def discover(paths: List[str], config: Config, force_exclude: bool = False) -> List[str]:
    """Files to check, in a stable order. Files named explicitly are kept even if excluded, unless
    ``force_exclude`` (what pre-commit needs, since it passes file names)."""
    seen = set()
    files: List[str] = []
    for path in paths:
        if os.path.isdir(path):
            if force_exclude and config.is_excluded(path, check_parents=True):
                continue
            for found in _walk(path, config):
                key = os.path.abspath(found)
                if key not in seen:
                    seen.add(key)
                    files.append(found)
        elif os.path.lexists(path):
            if force_exclude and config.is_excluded(path, check_parents=True):
                continue
            key = os.path.abspath(path)
            if key not in seen:
                seen.add(key)
                files.append(path)
        else:
            raise PathError(f"{path}: no such file or directory")
    return files


def _walk(root: str, config: Config) -> Iterator[str]:
    for folder, dirnames, filenames in os.walk(root, followlinks=False, onerror=None):
        dirnames[:] = sorted(d for d in dirnames if not config.is_excluded(os.path.join(folder, d)))
        for name in sorted(filenames):
            if name.endswith(PYTHON_SUFFIXES):
                full = os.path.join(folder, name)
                if not config.is_excluded(full):
                    yield full
