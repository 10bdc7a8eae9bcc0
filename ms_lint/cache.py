"""Results cache in ``.ms_lint_cache/``: one JSON file per (ms-lint version, config), keyed by file path.

An entry is reused when the file's mtime and size are unchanged, or, failing that, when its content hash is.
Writes are atomic (temporary file + rename). The folder carries a CACHEDIR.TAG and a ``.gitignore``.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any, Dict, List, Optional

from ms_lint import __version__
from ms_lint.diagnostics import Finding

CACHE_DIR = ".ms_lint_cache"
TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by ms-lint.\n"


class ResultsCache:
    def __init__(self, root: str, config_fingerprint: str):
        self.folder = os.path.join(root, CACHE_DIR)
        self.file = os.path.join(self.folder, __version__, f"{config_fingerprint}-{_code_fingerprint()}.json")
        self.entries: Dict[str, Dict[str, Any]] = {}
        self.dirty = False
        try:
            with open(self.file, "r", encoding="utf-8") as handle:
                self.entries = json.load(handle)
        except (OSError, ValueError):
            self.entries = {}

    @staticmethod
    def _stat(path: str):
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def lookup(self, path: str) -> Optional[List[Finding]]:
        key = os.path.abspath(path)
        entry = self.entries.get(key)
        if entry is None:
            return None
        stat = self._stat(path)
        if stat is None:
            return None
        if [entry["mtime_ns"], entry["size"]] != list(stat):
            digest = _digest(path)
            if digest is None or digest != entry["digest"]:
                return None
            entry["mtime_ns"], entry["size"] = stat
            self.dirty = True
        return [Finding.from_json(item) for item in entry["findings"]]

    def store(self, path: str, findings: List[Finding]) -> None:
        stat = self._stat(path)
        digest = _digest(path)
        if stat is None or digest is None:
            return
        self.entries[os.path.abspath(path)] = {
            "mtime_ns": stat[0], "size": stat[1], "digest": digest,
            "findings": [f.to_json() for f in findings],
        }
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            os.makedirs(os.path.dirname(self.file), exist_ok=True)
            _write_marker(os.path.join(self.folder, "CACHEDIR.TAG"), TAG)
            _write_marker(os.path.join(self.folder, ".gitignore"), "# Automatically created by ms-lint.\n*\n")
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.file), suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self.entries, handle)
            os.replace(tmp, self.file)
        except OSError:
            pass  # a cache that cannot be written is not an error


def _code_fingerprint() -> str:
    """Changes whenever ms-lint's own source changes, so an edited rule never serves stale results."""
    package = os.path.dirname(os.path.abspath(__file__))
    stamp = hashlib.blake2b(digest_size=8)
    for folder, _, names in sorted(os.walk(package)):
        for name in sorted(names):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                stamp.update(f"{name}:{st.st_mtime_ns}:{st.st_size};".encode())
    return stamp.hexdigest()


def _write_marker(path: str, text: str) -> None:
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


def _digest(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as handle:
            return hashlib.blake2b(handle.read(), digest_size=16).hexdigest()
    except OSError:
        return None
