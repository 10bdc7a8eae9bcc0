"""Writing a fixed file back: atomically, byte-faithful, and only over the content we read.

* The new bytes go to a temporary file in the target's own folder (same filesystem), are flushed and fsynced,
  get the target's permission bits (and owner, where allowed), and then replace the target with one
  ``os.replace``: an interrupted run leaves either the old file or the new one, never a mix. A temporary
  file left by a hard kill is named ``.<name>.ms-lint-*.tmp`` and is never the target.
* Encoding, BOM and line ends are the caller's: it passes ``SourceFile.encode(text)`` bytes of a text whose
  newlines the fixer already kept in the file's style.
* Symlinks are written through: the link stays a link and its target gets the new content. (Hard links are
  split by the rename, as with every atomic writer: the other names keep the old content.)
* A read-only file is refused, not replaced: the rename would succeed (it needs only the folder's permission),
  so the file's own permission is checked first. A file without any write bit (0444) is refused even for root,
  who may write anything: the bits say the owner does not want it changed.
* ``expected``: the bytes the fix was computed from. If the file changed on disk since (an editor saved it),
  nothing is written.
"""
from __future__ import annotations

import os
import stat
import tempfile
from typing import Optional


class WriteError(Exception):
    """The file was not written; ``reason`` says why. The original file is untouched."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def write_atomic(path: str, data: bytes, expected: Optional[bytes] = None) -> None:
    """Replace the content of ``path`` (or of the file a symlink ``path`` points to) with ``data``."""
    target = os.path.realpath(path)
    try:
        info = os.stat(target)
    except OSError as exc:
        raise WriteError(f"cannot stat: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise WriteError("not a regular file")
    mode = stat.S_IMODE(info.st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
        raise WriteError(f"the file is read-only (mode {mode:04o}); make it writable to fix it")
    folder, name = os.path.split(target)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.ms-lint-", suffix=".tmp", dir=folder or ".")
    except OSError as exc:
        raise WriteError(f"cannot create a temporary file next to it: {exc.strerror or exc}") from None
    done = False
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        _copy_owner(temporary, info)
        if expected is not None and _read(target) != expected:
            raise WriteError("the file changed on disk while it was being fixed; not written")
        os.replace(temporary, target)
        done = True
    except OSError as exc:
        raise WriteError(f"cannot write: {exc.strerror or exc}") from None
    finally:
        if not done:
            _remove(temporary)
    _sync_folder(folder)


def _copy_owner(temporary: str, info: os.stat_result) -> None:
    """Keep the owner and group when we may (running as root, or the group is one of ours)."""
    if not hasattr(os, "chown"):
        return
    try:
        current = os.stat(temporary)
        if (current.st_uid, current.st_gid) != (info.st_uid, info.st_gid):
            os.chown(temporary, info.st_uid, info.st_gid)
    except OSError:
        pass


def _read(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable where the platform allows it (best effort)."""
    flags = getattr(os, "O_DIRECTORY", None)
    if flags is None:
        return
    try:
        fd = os.open(folder or ".", os.O_RDONLY | flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
