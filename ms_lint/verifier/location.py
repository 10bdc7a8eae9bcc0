"""Where a module lives in its package, and how the verifier imports each version of it.

``locate(path)`` walks up from the file through the folders that hold an ``__init__.py``: the folder above the
last one is the *root* (first on ``sys.path`` in the child) and the file is imported as ``pkg.sub.module``, so its
relative imports and the absolute imports of its own package work as they do for the user. A file outside any
package is imported as a top-level module with its own folder first on ``sys.path`` (as ``python file.py`` does).

A version whose text is the file on disk is imported in place, under its own name. Any other version (a rewrite,
the file at a git revision) is written as a copy next to the file -- ``_ms_lint_verify_<label>_<token>.py`` in the
same package, so relative imports resolve the same way -- and removed when the verification ends
(``VersionCopies``). Where the folder cannot be written, the copy goes to a private temporary folder and is imported
under the same package name (relative imports still resolve; only ``__file__`` differs).
"""

from __future__ import annotations

import os
import secrets
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ms_lint.config import VERIFY_COPY_PREFIX as COPY_PREFIX


@dataclass(frozen=True)
class ModuleLocation:
    path: str  # absolute path of the file
    root: str  # folder to put first on sys.path
    module: str  # dotted name of the file's module ("pkg.sub.model"; "pkg" for pkg/__init__.py)
    package: str  # the package that holds it ("pkg.sub"; "" for a top-level module)

    def copy_name(self, stem: str) -> str:
        return f"{self.package}.{stem}" if self.package else stem


def locate(path: str) -> ModuleLocation:
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    parts: List[str] = []
    current = directory
    while os.path.isfile(os.path.join(current, "__init__.py")):
        name = os.path.basename(current)
        if not name.isidentifier():
            break
        parts.insert(0, name)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    package = ".".join(parts)
    if stem == "__init__" and parts:
        module = package
    else:
        module = f"{package}.{stem}" if package else stem
    return ModuleLocation(path=path, root=current, module=module, package=package)


def disk_text(path: Optional[str]) -> Optional[str]:
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


@dataclass
class VersionCopies:
    """The files written for the versions that are not the file on disk; ``cleanup()`` removes them all."""

    written: List[str] = field(default_factory=list)
    dirs: List[str] = field(default_factory=list)

    def place(self, location: ModuleLocation, label: str, source: str) -> Dict[str, str]:
        """Write ``source`` as a sibling copy of the module; the request keys for importing it."""
        token = secrets.token_hex(4)
        stem = f"{COPY_PREFIX}{label}_{token}"
        target_dir = os.path.dirname(location.path)
        copy = os.path.join(target_dir, stem + ".py")
        try:
            fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError:  # a read-only package: a private folder, same package name
            private = tempfile.mkdtemp(prefix="ms-lint-verify-copy-")
            self.dirs.append(private)
            copy = os.path.join(private, stem + ".py")
            fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        self.written.append(copy)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(source)
        return {"module_file": copy, "module_name": location.copy_name(stem), "in_place": False}

    def cleanup(self) -> None:
        import shutil

        for path in self.written:
            try:
                os.unlink(path)
            except OSError:
                pass
        for directory in self.dirs:
            shutil.rmtree(directory, ignore_errors=True)
        self.written.clear()
        self.dirs.clear()
