"""Results cache in ``.ms_lint_cache/``: one JSON file per (ms-lint version, config), keyed by file path.

An entry is reused when the file's mtime and size are unchanged, or, failing that, when its content hash is.
Writes are atomic (temporary file + rename). The folder carries a CACHEDIR.TAG and a ``.gitignore``.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ms_lint import __version__
from ms_lint.analysis.layout import digest_of
from ms_lint.diagnostics import Finding

CACHE_DIR = ".ms_lint_cache"
# (mtime_ns, size, content digest) of the bytes a result was computed from, and the config files (YAML/JSON) the
# analysis read: (path, mtime_ns, size), or (path, None, None) for one it looked for and did not find
# (``ms_lint.analysis.config_files``).
ConfigReads = Sequence[Tuple[str, Optional[int], Optional[int]]]
Stamp = Tuple[int, int, str, ConfigReads]
TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by ms-lint.\n"


class ResultsCache:
    def __init__(self, root: str, config_fingerprint: str, folder: Optional[str] = None):
        """``folder``: ``--cache-dir`` / ``MS_LINT_CACHE_DIR``; default ``.ms_lint_cache`` under ``root``."""
        self.folder = os.path.abspath(folder) if folder else os.path.join(root, CACHE_DIR)
        self.config_fingerprint = config_fingerprint
        self.file = os.path.join(self.folder, __version__, f"{config_fingerprint}-{_code_fingerprint()}.json")
        self.entries: Dict[str, Dict[str, Any]] = {}
        self.dirty = False
        try:
            with open(self.file, "r", encoding="utf-8") as handle:
                self.entries = json.load(handle)
        except (OSError, ValueError, RecursionError):
            self.entries = {}

    def lookup(self, path: str, depends: str = "", key: Optional[str] = None,
               stat: Optional[Tuple[int, int]] = None) -> Optional[List[Finding]]:
        """Cached findings of ``path``, if its content and ``depends`` (what its findings owe to other files of
        the project: ``ProjectIndex.fingerprint_for``) are those they were computed from. ``key`` (its absolute
        path) and ``stat`` (its (mtime_ns, size), taken earlier in the run) when the caller has them: a ``stat``
        that is not the entry's own is taken again here (the file may have changed since; the digest then
        decides, and the entry takes the stamp of the bytes it was compared with)."""
        entry = self.entries.get(key or os.path.abspath(path))
        if entry is None or entry.get("depends", "") != depends:
            return None
        if stat is None or [entry["mtime_ns"], entry["size"]] != list(stat):
            stat = _stat(path)
        if stat is None:
            return None
        if [entry["mtime_ns"], entry["size"]] != list(stat):
            digest = _digest(path)
            if digest is None or digest != entry["digest"]:
                return None
            entry["mtime_ns"], entry["size"] = stat
            self.dirty = True
        if not _same_reads(entry.get("reads", [])):
            return None
        return [Finding.from_json(item) for item in entry["findings"]]

    def store(self, path: str, findings: List[Finding], stamp: Optional[Stamp] = None, depends: str = "") -> None:
        """Remember ``findings`` for ``path``. ``stamp`` describes the bytes they were computed from (the runner's
        workers send it, so the file is not read again here); without it the file is stat'ed and hashed now."""
        if stamp is None:
            stat = _stat(path)
            digest = _digest(path)
            if stat is None or digest is None:
                return
            stamp = (stat[0], stat[1], digest, ())
        entry = {"mtime_ns": stamp[0], "size": stamp[1], "digest": stamp[2], "depends": depends,
                 "findings": [f.to_json() for f in findings]}
        if stamp[3]:
            entry["reads"] = [list(read) for read in stamp[3]]
        self.entries[os.path.abspath(path)] = entry
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            os.makedirs(os.path.dirname(self.file), exist_ok=True)
            _write_marker(os.path.join(self.folder, "CACHEDIR.TAG"), TAG)
            _write_marker(os.path.join(self.folder, ".gitignore"), "# Automatically created by ms-lint.\n*\n")
            _replace_file(self.file, lambda handle: json.dump(self.entries, handle))
            self._remove_stale()
        except OSError:
            pass  # a cache that cannot be written is not an error

    def _remove_stale(self) -> None:
        """Results of the same config from an older ms-lint source can never be used again: delete them."""
        folder, current = os.path.dirname(self.file), os.path.basename(self.file)
        for name in os.listdir(folder):
            if name.startswith(self.config_fingerprint + "-") and name.endswith(".json") and name != current:
                try:
                    os.remove(os.path.join(folder, name))
                except OSError:
                    pass


class SummaryStore:
    """The project index's module summaries (``ms_lint.analysis.index.SummaryCache`` entries), pickled next to the
    results: reading them is much cheaper than parsing every module of the project again."""

    def __init__(self, root: str, folder: Optional[str] = None):
        base = os.path.abspath(folder) if folder else os.path.join(root, CACHE_DIR)
        self.file = os.path.join(base, __version__, f"summaries-{_code_fingerprint()}.pickle")

    def load(self) -> Optional[Dict[str, Any]]:
        import pickle

        try:
            with open(self.file, "rb") as handle:
                entries = pickle.load(handle)
        except Exception:  # missing, truncated or from another Python: rebuild
            return None
        return entries if isinstance(entries, dict) else None

    def save(self, entries: Dict[str, Any]) -> None:
        import pickle

        folder = os.path.dirname(self.file)
        try:
            os.makedirs(folder, exist_ok=True)
            _write_marker(os.path.join(os.path.dirname(folder), "CACHEDIR.TAG"), TAG)
            _write_marker(os.path.join(os.path.dirname(folder), ".gitignore"), "# Automatically created by ms-lint.\n*\n")
            _replace_file(self.file, lambda handle: pickle.dump(entries, handle, protocol=pickle.HIGHEST_PROTOCOL),
                          binary=True)
            for name in os.listdir(folder):
                if name.startswith("summaries-") and name.endswith(".pickle") and name != os.path.basename(self.file):
                    os.remove(os.path.join(folder, name))
        except OSError:
            pass  # a cache that cannot be written is not an error


class FingerprintStore:
    """The cross-file fingerprints of the checked files for one project state (``analysis.index.project_state``):
    a warm run whose project has not changed reads them here instead of building the project index.

    Next to them, in a second file read only when the state differs, the (mtime, size, content digest) of each
    project file and of each module outside the project the index read (a sibling package, an installed base
    class), with the state and configuration they were saved under: when every file whose stamp moved still
    holds the same bytes (``touch``, an editor saving an unchanged buffer, a checkout that rewrote files with
    their old text), the fingerprints still hold, and the run stays warm instead of loading every summary to
    compute them again."""

    def __init__(self, root: str, folder: Optional[str] = None):
        base = os.path.abspath(folder) if folder else os.path.join(root, CACHE_DIR)
        fingerprint = _code_fingerprint()
        self.file = os.path.join(base, __version__, f"fingerprints-{fingerprint}.json")
        self.stamps_file = os.path.join(base, __version__, f"stamps-{fingerprint}.json")
        # set by ``load`` when the fingerprints held across touched files: the stamps to save them under
        self.refreshed: Optional[Dict[str, Tuple[int, int, Optional[str]]]] = None

    def load(self, state: str, stamps: Optional[Dict[str, Tuple[int, int]]] = None, salt: str = "") -> Dict[str, str]:
        """The fingerprints stored for ``state``; or, given the project's ``stamps`` and the ``salt`` (the
        configuration's fingerprint) the state was hashed with, those stored for the same files and bytes under
        the same configuration."""
        data = _read_json(self.file)
        if not isinstance(data, dict) or not isinstance(data.get("fingerprints"), dict):
            return {}
        if data.get("state") == state:
            return data["fingerprints"]
        if stamps is not None:
            self.refreshed = self._same_content(stamps, salt, data.get("state"))
            if self.refreshed is not None:
                return data["fingerprints"]
        return {}

    def _same_content(self, stamps: Dict[str, Tuple[int, int]], salt: str, saved_state: object
                      ) -> Optional[Dict[str, Tuple[int, int, Optional[str]]]]:
        """When the project holds the files it held when the fingerprints were stored, and they and the modules
        outside it that the index read then (a sibling package, an installed base class) have the same bytes:
        the new stamps, with the stored digests; else None."""
        data = _read_json(self.stamps_file)
        # written with these fingerprints (not by another run that saved between them), under this configuration
        # (another one, e.g. other cell-bases, makes other fingerprints of the same files)
        if (not isinstance(data, dict) or data.get("state") != saved_state or data.get("salt") != salt
                or not isinstance(data.get("files"), dict)):
            return None
        stored = data["files"]
        if not stamps.keys() <= stored.keys():
            return None  # a new project file
        refreshed: Dict[str, Tuple[int, int, Optional[str]]] = {}
        for path, old in stored.items():
            # project files have their stamps; a removed project file or an outside module is stat'ed here
            now = stamps.get(path) or _stat(path)
            if now is None or not isinstance(old, list) or len(old) != 3:
                return None
            mtime_ns, size = now
            if old[0] != mtime_ns or old[1] != size:
                if old[1] != size or not isinstance(old[2], str) or _digest(path) != old[2]:
                    return None
            refreshed[path] = (mtime_ns, size, old[2])
        return refreshed

    def save(self, state: str, fingerprints: Dict[str, str],
             stamps: Optional[Dict[str, Tuple[int, int, Optional[str]]]] = None, salt: str = "") -> None:
        """``stamps``: (mtime, size, digest) of every project file the fingerprints were computed from
        (``analysis.index.content_stamps``); without them only an unchanged state finds the fingerprints."""
        _write_json(self.file, {"state": state, "fingerprints": fingerprints})
        if stamps is not None:
            _write_json(self.stamps_file, {"state": state, "salt": salt,
                                           "files": {path: list(stamp) for path, stamp in stamps.items()}})
        current = {os.path.basename(self.file), os.path.basename(self.stamps_file) if stamps is not None else ""}
        folder = os.path.dirname(self.file)
        try:  # those of an older ms-lint source (and stamps that no longer describe these fingerprints)
            for name in os.listdir(folder):
                if name.startswith(("fingerprints-", "stamps-")) and name.endswith(".json") and name not in current:
                    os.remove(os.path.join(folder, name))
        except OSError:
            pass


def _same_reads(reads: object) -> bool:
    """Are the config files an entry's analysis read (``Stamp``) as they were: the same (mtime, size), or still
    absent? A config file edited, created or removed makes the entry stale (a script's mode may come from it)."""
    if not isinstance(reads, list):
        return False
    for read in reads:
        if not isinstance(read, list) or len(read) != 3 or not isinstance(read[0], str):
            return False
        now = _stat(read[0])
        if (list(now) if now is not None else [None, None]) != read[1:]:
            return False
    return True


def _stat(path: str) -> Optional[Tuple[int, int]]:
    """(mtime_ns, size), or None for a path that cannot be stat'ed (gone, or not a path: a corrupt cache file)."""
    try:
        st = os.stat(path)
    except (OSError, TypeError, ValueError):
        return None
    return st.st_mtime_ns, st.st_size


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError, RecursionError):  # missing, not JSON, or nested too deep to load: rebuild
        return None


def _replace_file(path: str, dump: Callable[[Any], None], binary: bool = False) -> None:
    """Write ``path`` atomically: ``dump(handle)`` into a temporary file of its folder, then a rename (readers
    never see half a file). Raises OSError."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as handle:
        dump(handle)
    os.replace(tmp, path)


def _write_json(path: str, data: Any) -> None:
    """Atomically; a cache that cannot be written is not an error."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _replace_file(path, lambda handle: json.dump(data, handle))
    except OSError:
        pass


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
    """The file's ``digest_of`` (the digest the index gives a module's bytes), or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return digest_of(handle.read())
    except OSError:
        return None
