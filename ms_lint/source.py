"""Reading a Python file into text without ever raising: every failure becomes a reason string."""
from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass
from typing import Optional

BOM = b"\xef\xbb\xbf"


@dataclass
class SourceFile:
    """A decoded file, with what is needed to write it back byte-for-byte the same way."""

    path: str
    text: str  # decoded, without the BOM
    encoding: str  # codec name for writing back ("utf-8", "latin-1", ...)
    has_bom: bool
    raw: bytes

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return BOM + data if self.has_bom else data


class UnreadableSource(Exception):
    """The file cannot be read or decoded; ``reason`` says why in words a user understands."""

    def __init__(self, reason: str, line: Optional[int] = None):
        super().__init__(reason)
        self.reason = reason
        self.line = line


def decode_source(path: str, raw: bytes) -> SourceFile:
    if b"\x00" in raw:
        raise UnreadableSource("binary file (contains NUL bytes), not Python source")
    has_bom = raw.startswith(BOM)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        raise UnreadableSource(f"bad encoding declaration: {exc.msg if hasattr(exc, 'msg') else exc}") from None
    body = raw[len(BOM):] if has_bom else raw
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    try:
        text = body.decode(codec)
    except (UnicodeDecodeError, LookupError) as exc:
        line = body[: getattr(exc, "start", 0)].count(b"\n") + 1 if isinstance(exc, UnicodeDecodeError) else None
        raise UnreadableSource(f"cannot decode as {codec}: {exc.reason if hasattr(exc, 'reason') else exc}", line) from None
    return SourceFile(path=path, text=text, encoding=codec, has_bom=has_bom, raw=raw)


def read_source(path: str) -> SourceFile:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise UnreadableSource(f"cannot read file: {exc.strerror or exc}") from None
    return decode_source(path, raw)
