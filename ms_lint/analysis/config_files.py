"""Scalar values in the JSON and YAML config files a script names literally (``load_yaml("configs/train.yaml")``).

Only what a ``set_context(mode=cfg["mode"])`` needs: the scalars of nested mappings. JSON is read with the
standard library. YAML with a small reader of block mappings (``key: value`` lines, nested by indentation,
comments, quoted and plain scalars) rather than PyYAML, so a finding never depends on what else is installed;
anything else it meets (flow collections, anchors, multi-line scalars, lists) reads as unknown, never as a
guess. Files are read at most once per process and must be small (a config, not a dataset).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
from typing import Dict, Iterator, Optional, Set, Tuple

UNKNOWN = object()  # a key the file does not hold, or holds as something other than a scalar
MAX_BYTES = 1 << 20
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")

_CACHE: Dict[Tuple[str, int, int], Optional[dict]] = {}
# What ``read_config`` was asked while ``reading_recorded`` runs: (absolute path, mtime_ns, size), or (path, None,
# None) for a file that was not there. A file's findings depend on these files too (the results cache checks them).
ConfigRead = Tuple[str, Optional[int], Optional[int]]
_RECORDED: Optional[Set[ConfigRead]] = None
_KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w.\-]*|'[^']*'|\"[^\"]*\") *:(?: +(?P<value>.*?))? *$")


def is_config_path(text: str) -> bool:
    return text.lower().endswith(CONFIG_SUFFIXES)


def read_config(path: str) -> Optional[dict]:
    """The file's top-level mapping, or None when it is missing, too large or not a mapping we can read."""
    try:
        st = os.stat(path)
    except OSError:
        if _RECORDED is not None:
            _RECORDED.add((os.path.abspath(path), None, None))
        return None
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    if _RECORDED is not None:
        _RECORDED.add(key)  # stat'ed before the read: a change after it gives the file a new stamp
    if key not in _CACHE:
        _CACHE[key] = _read(path, st.st_size)
    return _CACHE[key]


@contextlib.contextmanager
def reading_recorded() -> Iterator[Set[ConfigRead]]:
    """The config files read (or looked for) inside the ``with`` block; nested blocks add theirs to the outer."""
    global _RECORDED
    outer = _RECORDED
    _RECORDED = reads = set()
    try:
        yield reads
    finally:
        _RECORDED = outer
        if outer is not None:
            outer.update(reads)


def _read(path: str, size: int) -> Optional[dict]:
    if size > MAX_BYTES:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    if path.lower().endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None
    return read_yaml_mappings(text)


def read_yaml_mappings(text: str) -> Optional[dict]:
    """Nested block mappings of scalars; a key whose value we cannot read maps to UNKNOWN."""
    root: dict = {}
    stack = [(-1, root)]  # (indent of the mapping's keys' parent line, mapping)
    for raw in text.splitlines():
        line = _strip_comment(raw)
        if not line.strip() or line.strip() in ("---", "..."):
            continue
        if line.lstrip().startswith(("- ", "-\t")) or line.strip() == "-":
            continue  # list items: the key that holds them reads as UNKNOWN (see below)
        match = _KEY_LINE.match(line)
        if match is None:
            if line.startswith((" ", "\t")):
                continue  # continuation of a multi-line scalar or a flow collection
            return root if root else None
        indent = len(match.group("indent"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if not stack:
            return None
        mapping = stack[-1][1]
        key = match.group("key").strip("'\"")
        value = match.group("value")
        if value is None or value == "":
            child: dict = {}
            mapping[key] = child
            stack.append((indent, child))
        else:
            mapping[key] = _scalar(value)
    return _unknown_empty(root)


def _unknown_empty(mapping: dict) -> dict:
    """A key with nothing under it held a list or a block scalar: unknown, not an empty mapping."""
    for key, value in mapping.items():
        if isinstance(value, dict):
            mapping[key] = _unknown_empty(value) if value else UNKNOWN
    return mapping


def _strip_comment(line: str) -> str:
    quote = None
    for position, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and (position == 0 or line[position - 1] in " \t"):
            return line[:position].rstrip()
    return line.rstrip()


def _scalar(text: str) -> object:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text[:1] in "[{&*!|>":
        return UNKNOWN  # flow collections, anchors, aliases, tags, block scalars
    lowered = text.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    if lowered in ("null", "~"):
        return None
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text
