"""Which files a run looks at: Python files under the given paths, minus excludes. Never follows symlinked folders.

Each folder's excludes are those of the config that applies to it (the nearest configuring pyproject.toml,
``ms_lint.config.ConfigSet``), so ``ms-lint check sub/`` and ``ms-lint check .`` skip the same files. A folder
that cannot be listed is reported (``Discovery.unreadable``), never skipped in silence.
"""
from __future__ import annotations

import os
from typing import Iterator, List, Tuple, Union

from ms_lint.analysis.layout import Listings, absolute_paths, joiner
from ms_lint.config import Config, ConfigSet
from ms_lint.records import field, record

PYTHON_SUFFIXES = (".py", ".pyi")


class PathError(Exception):
    """A path given on the command line does not exist."""


@record
class Discovery:
    files: List[str] = field(default_factory=list)
    unreadable: List[Tuple[str, str]] = field(default_factory=list)  # (folder, why)
    empty: List[str] = field(default_factory=list)  # paths given that hold no Python file to check
    # the folders' listings read on the way: the runner's walk of the project's packages reads them again
    listings: Listings = field(default_factory=Listings)


def _as_set(config: Union[Config, ConfigSet]) -> ConfigSet:
    return config if isinstance(config, ConfigSet) else ConfigSet(fixed=config)


def discover(paths: List[str], config: Union[Config, ConfigSet], force_exclude: bool = False) -> List[str]:
    """Files to check, in a stable order (see :func:`discover_all`)."""
    return discover_all(paths, config, force_exclude).files


def discover_all(paths: List[str], config: Union[Config, ConfigSet], force_exclude: bool = False) -> Discovery:
    """Files to check, in a stable order, and the folders that could not be read. Files named explicitly are kept
    even if excluded, unless ``force_exclude`` (what pre-commit needs, since it passes file names)."""
    configs = _as_set(config)
    seen = set()
    found = Discovery()
    for path in paths:
        before = len(found.files)
        if os.path.isdir(path):
            if force_exclude and configs.for_path(path).is_excluded(path, check_parents=True):
                continue
            for item, key in _walk(path, configs, found.unreadable, found.listings):
                if key not in seen:
                    seen.add(key)
                    found.files.append(item)
        elif os.path.lexists(path):
            if force_exclude and configs.for_path(path).is_excluded(path, check_parents=True):
                continue
            key = os.path.abspath(path)
            if key not in seen:
                seen.add(key)
                found.files.append(path)
        else:
            raise PathError(f"{path}: no such file or directory")
        if len(found.files) == before and os.path.isdir(path):
            found.empty.append(path)
    return found


def _walk(root: str, configs: ConfigSet, unreadable: List[Tuple[str, str]], listings: Listings
          ) -> Iterator[Tuple[str, str]]:
    """(path joined to ``root``, absolute path) of each Python file under ``root`` that no exclude matches."""
    def failed(error: OSError) -> None:
        unreadable.append((error.filename or root, f"cannot read folder: {error.strerror or error}"))

    absolute_root = absolute_paths([root])[0]
    absolute_of = {root: absolute_root}  # each folder's absolute path, joined from its parent's
    for folder, dirnames, filenames in listings.walk(root, onerror=failed, absolute_top=absolute_root):
        absolute = absolute_of.pop(folder)
        config = configs.for_path(folder, is_folder=True)
        excluded = config.excluded_in(folder)
        dirnames[:] = sorted(d for d in dirnames if not excluded(d))
        inside, absolute_inside = joiner(folder), joiner(absolute)
        for name in dirnames:
            absolute_of[inside(name)] = absolute_inside(name)
        for name in sorted(filenames):
            if name.endswith(PYTHON_SUFFIXES) and not excluded(name):
                full = inside(name)
                configs.remember(full, config)
                yield full, absolute_inside(name)
