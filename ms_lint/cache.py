"""Results cache in ``.ms_lint_cache/``: one JSON file per (ms-lint version, config), keyed by file path.

An entry is reused when the file's mtime and size are unchanged, or, failing that, when its content hash is.
Writes are atomic (temporary file + rename). The folder carries a CACHEDIR.TAG and a ``.gitignore``.
"""
from __future__ import annotations

import functools
import json
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ms_lint import __version__
from ms_lint.analysis.layout import digest_of, same_locations
from ms_lint.blake import blake2b
from ms_lint.diagnostics import Finding

CACHE_DIR = ".ms_lint_cache"
# (mtime_ns, size, content digest) of the bytes a result was computed from, and the config files (YAML/JSON) the
# analysis read: (path, mtime_ns, size), or (path, None, None) for one it looked for and did not find
# (``ms_lint.analysis.config_files``).
ConfigReads = Sequence[Tuple[str, Optional[int], Optional[int]]]
Stamp = Tuple[int, int, str, ConfigReads]
# ``ProjectIndex.derived_tables``: (graph closure, call edges, sub-cell holders or None, constructions or None)
DerivedTables = tuple
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
            _replace_file(self.file, lambda handle: handle.write(json.dumps(self.entries)))
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
    results: reading them is much cheaper than parsing every module of the project again.

    The summaries of files summarized since the whole set was written go to a second, small file, read after the
    first (``delta_file``): after an edit only that one is written, not every summary of the project again (9.4 MB
    on MindSpore's source, 0.2 to 0.3 s of a run). The whole set is written again once the delta holds more than
    ``DELTA_SHARE`` of the entries. A reader that meets a new whole set with an old delta (a run stopped between
    writing the one and removing the other) takes the delta's entries: each is the summary of the (mtime, size)
    it names, so one whose file has changed since is made again, never used.

    Each summary is pickled on its own, after a pickled header of every entry's stamps, name, path, digest and
    place in the file (``_write_store``): a run reads the header, and reads and unpickles a summary when it is
    first asked for (``summary.StoredSummary``, ``StoredBlob``). A run after an edit reads a few dozen of the
    store's summaries; reading all 9.5 MB of the packages' store took 6-9 ms of each process that loads it."""

    DELTA_SHARE = 0.05

    def __init__(self, root: str, folder: Optional[str] = None):
        base = os.path.abspath(folder) if folder else os.path.join(root, CACHE_DIR)
        self.file = os.path.join(base, __version__, f"summaries-{_code_fingerprint()}.pickle")
        self.delta_file = self.file[: -len(".pickle")] + ".delta.pickle"
        # what the whole set on disk holds for each path (``_signature``), not the entries themselves: a file
        # summarized again frees its old summary (the edited 55k-line module of the Cell corpus: 14 MB)
        self._whole: Dict[str, tuple] = {}

    def load(self) -> Optional[Dict[str, Any]]:
        whole = _read_store(self.file)
        if whole is None:
            return None
        self._whole = {path: _signature(entry) for path, entry in whole.items()}
        entries = dict(whole)
        delta = _read_store(self.delta_file)
        if delta is not None:
            entries.update(delta)
        return entries

    def save(self, entries: Dict[str, Any]) -> None:
        """Write what differs from the whole set on disk to the delta, or everything to a new whole set."""
        changed = {path: entry for path, entry in entries.items() if self._whole.get(path) != _signature(entry)}
        folder = os.path.dirname(self.file)
        try:
            os.makedirs(folder, exist_ok=True)
            _write_marker(os.path.join(os.path.dirname(folder), "CACHEDIR.TAG"), TAG)
            _write_marker(os.path.join(os.path.dirname(folder), ".gitignore"), "# Automatically created by ms-lint.\n*\n")
            if self._whole and len(changed) <= self.DELTA_SHARE * len(entries):
                _replace_file(self.delta_file, lambda handle: _write_store(handle, changed), binary=True)
            else:
                _replace_file(self.file, lambda handle: _write_store(handle, entries), binary=True)
                self._whole = {path: _signature(entry) for path, entry in entries.items()}
                if os.path.exists(self.delta_file):
                    os.remove(self.delta_file)
            current = {os.path.basename(self.file), os.path.basename(self.delta_file)}
            for name in os.listdir(folder):
                if name.startswith("summaries-") and name.endswith(".pickle") and name not in current:
                    os.remove(os.path.join(folder, name))
        except OSError:
            pass  # a cache that cannot be written is not an error


# The store's files: this line, the length of the header (8 bytes, little-endian), the pickled header (path ->
# mtime, size, name, path, digest, offset and length of the summary's pickle after the header), the pickles.
_STORE_MAGIC = b"ms-lint summaries 2\n"


def _write_store(handle, entries: Dict[str, Any]) -> None:
    """Write ``SummaryCache`` entries (path -> mtime, size, summary) as ``_read_store`` reads them."""
    import pickle

    from ms_lint.analysis.summary import pickled_summary

    header: Dict[str, tuple] = {}
    blobs: List[bytes] = []
    offset = 0
    for path, (mtime, size, summary) in entries.items():
        blob = pickled_summary(summary)
        header[path] = (mtime, size, summary.name, summary.path, summary.digest, offset, len(blob))
        blobs.append(blob)
        offset += len(blob)
    head = pickle.dumps(header, protocol=pickle.HIGHEST_PROTOCOL)
    handle.write(_STORE_MAGIC + len(head).to_bytes(8, "little") + head)
    for blob in blobs:
        handle.write(blob)


def _read_store(path: str) -> Optional[Dict[str, Any]]:
    """The entries ``_write_store`` wrote, each summary read and unpickled when first asked for; None when the
    file is missing or not such a file (another ms-lint's, a damaged one: the summaries are made again)."""
    import pickle

    from ms_lint.analysis.summary import stored_summary

    try:
        source = _BlobFile(path)
        head = os.pread(source.fd, len(_STORE_MAGIC) + 8, 0)
        if len(head) != len(_STORE_MAGIC) + 8 or not head.startswith(_STORE_MAGIC):
            return None
        size = int.from_bytes(head[len(_STORE_MAGIC):], "little")
        header = pickle.loads(os.pread(source.fd, size, len(head)))
    except Exception:  # noqa: BLE001  missing, truncated, from another Python: rebuild
        return None
    if not isinstance(header, dict):
        return None
    start = len(_STORE_MAGIC) + 8 + size
    try:
        blobs_size = os.fstat(source.fd).st_size - start
    except OSError:
        return None
    entries: Dict[str, Any] = {}
    for key, item in header.items():
        if not isinstance(item, tuple) or len(item) != 7:
            return None
        mtime, stamp_size, name, summary_path, digest, offset, length = item
        if not (isinstance(name, str) and isinstance(summary_path, str) and isinstance(digest, str)
                and type(offset) is int and type(length) is int and 0 <= offset <= offset + length <= blobs_size):
            return None
        entries[key] = (mtime, stamp_size, stored_summary(name, summary_path, digest,
                                                          StoredBlob(source, start + offset, length)))
    return entries


class _OfAnOpenFile:
    """What refers to an open store file: a copy is the same object (a second file object would close the
    descriptor the first reads), and none is pickled (a ``StoredSummary`` pickles its bytes)."""

    __slots__ = ()

    def __copy__(self):
        return self

    def __deepcopy__(self, memo: dict):
        return self

    def __reduce__(self):
        raise TypeError(f"a {type(self).__name__} refers to an open summary store file: it is not pickled")


class _BlobFile(_OfAnOpenFile):
    """An open store file, closed once no ``StoredBlob`` of it is left. Its summaries stay readable after a run
    replaces the file (``_replace_file`` renames a new one over it: this one's bytes live while it is open)."""

    __slots__ = ("fd",)

    def __init__(self, path: str):
        self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except (OSError, AttributeError):
            pass


class StoredBlob(_OfAnOpenFile):
    """Where a summary's pickle lies in an open store file (``summary.StoredSummary`` reads it when first asked
    for anything but its name, path and digest)."""

    __slots__ = ("source", "offset", "length")

    def __init__(self, source: _BlobFile, offset: int, length: int):
        self.source = source
        self.offset = offset
        self.length = length

    def read(self) -> bytes:
        """The pickle; OSError when the file no longer holds it (cut short by another program)."""
        try:
            data = os.pread(self.source.fd, self.length, self.offset)
        except (MemoryError, OverflowError, ValueError) as error:  # a length the header checks should not let by
            raise OSError(f"cannot read a stored summary ({type(error).__name__})") from error
        if len(data) != self.length:
            raise OSError(f"read {len(data)} of a stored summary's {self.length} bytes")
        return data


def _signature(entry: Any) -> tuple:
    """What says that two summary entries (``SummaryCache``: mtime, size, summary) hold the same: the stamps, and
    the summary's bytes and module name (it is made from those, by the code the store's file name fingerprints)."""
    try:
        mtime, size, summary = entry
        return mtime, size, summary.digest, summary.name, summary.path
    except (TypeError, ValueError, AttributeError):
        return ("entry", entry)  # not a summary entry: compared whole


def _load_pickle(path: str) -> Any:
    import pickle

    try:
        with open(path, "rb") as handle:
            return pickle.load(handle)
    except Exception:  # missing, truncated or from another Python: rebuild
        return None


class FingerprintStore:
    """The cross-file fingerprints of the checked files for one project state (``analysis.index.project_state``):
    a warm run whose project has not changed, nor the modules outside it that the index read (their (mtime, size)
    are stored with the fingerprints: a few hundred stats), reads them here instead of building the project index.
    Module names that found no file, or an installed one, are looked up again only when something changed
    (``same_project``): a new module that shadows one, with nothing else changed, is seen at the next change or
    with ``--no-cache``. The state is salted with the source roots and ``sys.path`` (``runner.check_files``):
    another environment or ``PYTHONPATH`` makes another state.

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
        # the tables the stamps file names by a token (``tables``), pickled: the graph closure and more that the
        # project's summaries give, carried with the recipes (``load_tables``)
        self.tables_file = os.path.join(base, __version__, f"tables-{fingerprint}.pickle")
        # set by ``load`` when the fingerprints held across touched files: the stamps to save them under
        self.refreshed: Optional[Dict[str, Tuple[int, int, Optional[str]]]] = None
        self.saved_state: object = None  # the state the stored fingerprints were saved under (set by ``load``)
        self._paired: Dict[str, Any] = {}  # salt -> the stamps file's data, read at most once
        self._data: Any = None  # the fingerprints file's data, once read (``warm``)

    def warm(self, state: str) -> Optional[Dict[str, str]]:
        """The fingerprints stored for ``state`` exactly (nothing changed since: a warm run), else None; a
        fraction of ``load``'s time when they are not (the stamps file is not read)."""
        if self._data is None:
            data = _read_json(self.file)
            self._data = data if isinstance(data, dict) and isinstance(data.get("fingerprints"), dict) else {}
            self.saved_state = self._data.get("state")
        data = self._data
        if data and data.get("state") == state and _same_stamps(data.get("outside")):
            return data["fingerprints"]
        return None

    def load(self, state: str, stamps: Optional[Dict[str, Tuple[int, int]]] = None, salt: str = "",
             roots: Optional[List[str]] = None) -> Dict[str, str]:
        """The fingerprints stored for ``state``; or, given the project's ``stamps`` and the ``salt`` the state
        was hashed with (the configuration's fingerprint, the source roots and ``sys.path``), those stored for the same files and bytes under
        the same configuration, when the module names the index looked up still find the same files
        from the project's source ``roots`` (``same_project``)."""
        found = self.warm(state)
        if found is not None:
            return found
        data = self._data
        if not data:
            return {}
        if stamps is not None:
            self.refreshed = self._same_content(stamps, salt, roots or [])
            if self.refreshed is not None:
                return data["fingerprints"]
        return {}

    def _same_content(self, stamps: Dict[str, Tuple[int, int]], salt: str, roots: List[str]
                      ) -> Optional[Dict[str, Tuple[int, int, Optional[str]]]]:
        """When the project holds the files it held when the fingerprints were stored (``same_project``), and
        they and the modules outside it that the index read then (a sibling package, an installed base class)
        have the same bytes: the new stamps, with the stored digests; else None."""
        data = self.paired_stamps(salt)
        if data is None:
            return None
        refreshed: Dict[str, Tuple[int, int, Optional[str]]] = {}
        for path, old in data["files"].items():
            # project files have their stamps; a removed project file or an outside module is stat'ed here
            now = stamps.get(path) or _stat(path)
            if now is None or not isinstance(old, list) or len(old) != 3:
                return None
            mtime_ns, size = now
            if old[0] != mtime_ns or old[1] != size:
                if old[1] != size or not isinstance(old[2], str) or _digest(path) != old[2]:
                    return None
            refreshed[path] = (mtime_ns, size, old[2])
        return refreshed if same_project(data, stamps, roots) else None  # after the stamps: an edit fails faster

    def paired_stamps(self, salt: str) -> Optional[Dict[str, Any]]:
        """The stamps file (``files``: path -> [mtime, size, digest]; ``recipes``: path -> [what the summaries say,
        [indexes into ``paths``]]) when it was written with the stored fingerprints (not by another run that saved
        between them: call ``load`` first) and under this configuration (another one, e.g. other cell-bases,
        makes other fingerprints of the same files); else None."""
        if salt not in self._paired:
            data = _read_json(self.stamps_file)
            if (not isinstance(data, dict) or self.saved_state is None or data.get("state") != self.saved_state
                    or data.get("salt") != salt or not isinstance(data.get("files"), dict)):
                data = None
            self._paired[salt] = data
        return self._paired[salt]

    def save(self, state: str, fingerprints: Dict[str, str],
             stamps: Optional[Dict[str, Tuple[int, int, Optional[str]]]] = None, salt: str = "",
             recipes: Optional[Dict[str, Tuple[str, List[str]]]] = None, project: Iterable[str] = (),
             located: Optional[Dict[str, Optional[str]]] = None,
             tables: Union[DerivedTables, str, None] = None) -> None:
        """``stamps``: (mtime, size, digest) of every project file the fingerprints were computed from
        (``analysis.index.content_stamps``); without them only an unchanged state finds the fingerprints.
        ``recipes``: each file's ``ProjectIndex.fingerprint_recipe`` (``ms_lint.analysis.carry`` reads them);
        ``project``: the project's files; ``located``: the module names the index looked up and the file each
        was found in, or None (``ProjectIndex.located``): ``same_project`` compares both. ``tables``: what the
        summaries the recipes were worked out from give the whole project (``ProjectIndex.derived_tables``),
        carried with them (``load_tables``); or the token of the tables file on disk, when it holds them."""
        kept = set(project)
        outside = {path: list(stamp[:2]) for path, stamp in (stamps or {}).items() if path not in kept}
        _write_json(self.file, {"state": state, "fingerprints": fingerprints, "outside": outside})
        if stamps is not None:
            data: Dict[str, Any] = {"state": state, "salt": salt,
                                    "files": {path: list(stamp) for path, stamp in stamps.items()},
                                    "project": sorted(project), "located": located or {}}
            if recipes:
                paths = sorted({path for _, read in recipes.values() for path in read})
                number = {path: i for i, path in enumerate(paths)}
                data["paths"] = paths
                data["recipes"] = {path: [said, [number[p] for p in read]] for path, (said, read) in recipes.items()}
            token = tables if isinstance(tables, str) else self._save_tables(tables) if tables is not None else None
            if token is not None:
                data["tables"] = token
            _write_json(self.stamps_file, data)
        current = {os.path.basename(self.file), os.path.basename(self.stamps_file) if stamps is not None else "",
                   os.path.basename(self.tables_file) if stamps is not None else ""}
        folder = os.path.dirname(self.file)
        try:  # those of an older ms-lint source (and stamps that no longer describe these fingerprints)
            for name in os.listdir(folder):
                if (name.startswith(("fingerprints-", "stamps-", "tables-")) and name.endswith((".json", ".pickle"))
                        and name not in current):
                    os.remove(os.path.join(folder, name))
        except OSError:
            pass

    def _save_tables(self, tables: DerivedTables) -> Optional[str]:
        """Pickle ``tables`` to the tables file; the token that names them there (None when it cannot be written)."""
        import pickle

        pickled = pickle.dumps(tables, protocol=pickle.HIGHEST_PROTOCOL)
        token = blake2b(pickled, digest_size=12).hexdigest()
        try:
            os.makedirs(os.path.dirname(self.tables_file), exist_ok=True)
            _replace_file(self.tables_file, lambda handle: pickle.dump((token, pickled), handle), binary=True)
        except OSError:
            return None
        return token

    def load_tables(self, data: Dict[str, Any]) -> Optional[DerivedTables]:
        """The tables a ``paired_stamps`` names (``save``): (graph closure, call edges, holders table or None,
        constructions or None); None when the tables file holds others, or none that read as saved."""
        import pickle

        token = stored_tables_token(data)
        if token is None:
            return None
        stored = _load_pickle(self.tables_file)
        if not (isinstance(stored, tuple) and len(stored) == 2 and stored[0] == token
                and isinstance(stored[1], bytes)):
            return None
        try:
            tables = pickle.loads(stored[1])
        except Exception:  # noqa: BLE001  damaged: worked out again
            return None
        if not (isinstance(tables, tuple) and len(tables) == 4 and isinstance(tables[0], dict)
                and isinstance(tables[1], dict) and (tables[2] is None or _pair_of_dicts(tables[2]))
                and (tables[3] is None or isinstance(tables[3], dict))):
            return None
        return tables


def _same_stamps(stamps: object) -> bool:
    """Have the modules outside the project that stored fingerprints read (path -> [mtime, size]) kept their
    stamps? The project's state does not cover them: a sibling package or an installed base class edited while
    the project stayed as it was."""
    if not isinstance(stamps, dict):
        return False
    for path, stamp in stamps.items():
        now = _stat(path)
        if now is None or list(now) != stamp:
            return False
    return True


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


def same_project(data: Dict[str, Any], stamps: Dict[str, Tuple[int, int]], roots: List[str]) -> bool:
    """Did the stored fingerprints (``FingerprintStore.paired_stamps``) see the project that ``stamps`` (its
    files now) and ``roots`` (its source roots) make? The same files (a check of a sub-folder is a smaller
    project, whose index resolves fewer names), and every module name the index looked up (outside the project's
    files: a name in a folder the project's walk skips, an installed package, a name found nowhere) finds the file
    it found then, or still none (``layout.same_locations``: a new module, or one that shadows an
    installed one, resolves names to other classes)."""
    project, located = data.get("project"), data.get("located")
    if not isinstance(project, list) or len(project) != len(stamps) or not all(path in stamps for path in project):
        return False
    if not isinstance(located, dict) or not all(
            isinstance(name, str) and (path is None or isinstance(path, str)) for name, path in located.items()):
        return False
    return same_locations(located, roots)


def stored_located(data: Dict[str, Any]) -> Dict[str, Optional[str]]:
    """The ``located`` of a ``FingerprintStore.paired_stamps`` (``same_project`` has checked its types)."""
    located = data.get("located")
    return located if isinstance(located, dict) else {}


def stored_files(data: Dict[str, Any]) -> Dict[str, Tuple[int, int, Optional[str]]]:
    """The (mtime, size, digest) of each file of a ``FingerprintStore.paired_stamps`` that reads as saved."""
    return {path: (stamp[0], stamp[1], stamp[2]) for path, stamp in data["files"].items()
            if isinstance(stamp, list) and len(stamp) == 3}


def stored_recipes(data: Dict[str, Any]) -> Dict[str, Tuple[str, List[str]]]:
    """The fingerprint recipes of a ``FingerprintStore.paired_stamps`` (empty when it holds none, or they do not
    read as saved)."""
    paths, recipes = data.get("paths"), data.get("recipes")
    if (not isinstance(paths, list) or not isinstance(recipes, dict)
            or not all(isinstance(path, str) for path in paths)):
        return {}
    out: Dict[str, Tuple[str, List[str]]] = {}
    try:
        for path, (said, numbers) in recipes.items():
            if not isinstance(said, str) or not all(isinstance(n, int) and 0 <= n < len(paths) for n in numbers):
                return {}
            out[path] = (said, [paths[n] for n in numbers])
    except (TypeError, ValueError):
        return {}
    return out


def stored_tables_token(data: Dict[str, Any]) -> Optional[str]:
    """The token of the tables a ``paired_stamps`` names (``FingerprintStore.save``), to name them again."""
    token = data.get("tables")
    return token if isinstance(token, str) else None


def _pair_of_dicts(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(isinstance(part, dict) for part in value)


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
    import tempfile  # only a run that writes needs it

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as handle:
        dump(handle)
    os.replace(tmp, path)


def _write_json(path: str, data: Any) -> None:
    """Atomically; a cache that cannot be written is not an error."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # json.dumps, not json.dump: only the one-shot call uses the C encoder (dump writes through the pure-Python
        # one, 3-4x slower on the 0.8 MB of stamps a run writes after a touch)
        _replace_file(path, lambda handle: handle.write(json.dumps(data)))
    except OSError:
        pass


@functools.lru_cache(maxsize=None)
def _code_fingerprint() -> str:
    """Changes whenever ms-lint's own source changes, so an edited rule never serves stale results. Worked out
    once per process: the code a process runs is the code it loaded."""
    package = os.path.dirname(os.path.abspath(__file__))
    stamp = blake2b(digest_size=8)
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
    except (OSError, TypeError, ValueError):
        return None
