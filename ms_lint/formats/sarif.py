"""SARIF 2.1.0, shaped for GitHub code scanning (``github/codeql-action/upload-sarif``).

What GitHub needs and what it does with it:

- ``tool.driver.rules``: one entry per rule (id, short and full description, help text from the rule's page),
  referenced by each result's ``ruleId`` / ``ruleIndex``.
- ``artifactLocation.uri``: the path relative to the repository root (the config root, ``%SRCROOT%``), with
  forward slashes, so alerts attach to files in the repository.
- ``region``: 1-based lines and columns. Columns count Unicode code points (``run.columnKind``), as ms-lint does.
- ``partialFingerprints.primaryLocationLineHash``: GitHub matches alerts across commits by it; without it every
  upload of a changed file can open duplicates. It hashes the rule code and the finding's line text (whitespace
  collapsed), plus a counter for identical lines in the same file, so it stays the same when lines above move.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any, Dict, List, Optional

from ms_lint import __version__
from ms_lint.codes import CODES, UNANALYZABLE
from ms_lint.diagnostics import Finding

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
MAX_DESCRIPTION = 1000  # GitHub truncates fullDescription beyond this
_SPACE = re.compile(r"\s+")


def render(findings: List[Finding], root: Optional[str] = None, **_) -> str:
    return json.dumps(build_log(findings, root or os.getcwd()), indent=2, ensure_ascii=False) + "\n"


def build_log(findings: List[Finding], root: str) -> Dict[str, Any]:
    root = os.path.abspath(root)
    rules = _rule_descriptors(findings)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    fingerprints = _fingerprints(findings)
    results = [_result(f, root, index, fingerprints[id(f)]) for f in findings]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "ms-lint",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }},
            "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(root)}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


# -- rules ---------------------------------------------------------------------------------------------------
def _rule_descriptors(findings: List[Finding]) -> List[Dict[str, Any]]:
    """Every registered rule, MSL900, and any other code that occurs in the findings."""
    from ms_lint.rules import all_rules

    classes = {rule.code: rule for rule in all_rules()}
    codes = set(classes) | {UNANALYZABLE} | {f.code for f in findings}
    return [_descriptor(code, classes.get(code)) for code in sorted(codes)]


def _descriptor(code: str, rule_class) -> Dict[str, Any]:
    from ms_lint.pages import PageNotFound, load_page, section

    name = (rule_class.name if rule_class is not None else "") or CODES.get(code, code.lower())
    summary = (rule_class.summary if rule_class is not None else "") or name
    if code == UNANALYZABLE:
        summary = "The file could not be read, decoded or parsed, so nothing in it was checked."
    try:
        page = load_page(code)
    except (PageNotFound, OSError):
        page = None
    full = _first_paragraph(section(page, "What it does")) if page else ""
    help_markdown = page or f"**{code}: {name}**\n\n{summary}\n\nRun `ms-lint rule {code}` for details."
    descriptor: Dict[str, Any] = {
        "id": code,
        "name": name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": _clip(full or summary)},
        "help": {"text": help_markdown, "markdown": help_markdown},
        "defaultConfiguration": {"level": "error" if code == UNANALYZABLE else "warning"},
        "properties": {
            "tags": ["mindspore", "maintainability" if code == UNANALYZABLE else "performance"],
            "precision": "high",
        },
    }
    if rule_class is not None:
        descriptor["properties"]["fix"] = rule_class.fix_applicability or "none"
    return descriptor


def _first_paragraph(text: str) -> str:
    return _SPACE.sub(" ", text.split("\n\n", 1)[0]).strip()


def _clip(text: str) -> str:
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 3].rstrip() + "..."


# -- results -------------------------------------------------------------------------------------------------
def _result(f: Finding, root: str, index: Dict[str, int], fingerprint: str) -> Dict[str, Any]:
    end_line = max(f.end_line, f.line)
    end_column = f.end_column if end_line > f.line else max(f.end_column, f.column)
    location: Dict[str, Any] = {"uri": _uri(f.path, root)}
    if not location["uri"].startswith("file:"):
        location["uriBaseId"] = SRCROOT
    result: Dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": "error" if f.code == UNANALYZABLE else "warning",
        "message": {"text": f.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": location,
            "region": {"startLine": f.line, "startColumn": max(f.column, 1), "endLine": end_line,
                       "endColumn": max(end_column, 1)},
        }}],
        "partialFingerprints": {"primaryLocationLineHash": fingerprint},
    }
    if f.fix:
        result["properties"] = {"fix": f.fix.get("applicability"), "fixMessage": f.fix.get("message")}
    return result


def _uri(path: str, root: str) -> str:
    """Relative to root with forward slashes; an absolute file URI for a file outside root."""
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, root)
    except ValueError:  # another drive (Windows)
        rel = None
    if rel is None or rel == ".." or rel.startswith(".." + os.sep):
        return _file_uri(absolute)
    return _quote(rel.replace(os.sep, "/"))


def _directory_uri(path: str) -> str:
    uri = _file_uri(path)
    return uri if uri.endswith("/") else uri + "/"


def _file_uri(path: str) -> str:
    path = path.replace(os.sep, "/")
    return "file://" + ("" if path.startswith("/") else "/") + _quote(path)


def _quote(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/:@!$&'()*+,;=-._~")


# -- fingerprints --------------------------------------------------------------------------------------------
def _fingerprints(findings: List[Finding]) -> Dict[int, str]:
    """``<16 hex>:<n>`` per finding, as GitHub's own primaryLocationLineHash looks."""
    lines_cache: Dict[str, List[str]] = {}
    seen: Dict[tuple, int] = {}
    out: Dict[int, str] = {}
    for f in sorted(findings, key=Finding.sort_key):
        lines = lines_cache.get(f.path)
        if lines is None:
            lines = lines_cache[f.path] = _read_lines(f.path)
        text = lines[f.line - 1] if 1 <= f.line <= len(lines) else ""
        normalized = _SPACE.sub(" ", text).strip()
        digest = hashlib.sha256(f"{f.code}\0{normalized}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
        key = (f.path, digest)
        seen[key] = seen.get(key, 0) + 1
        out[id(f)] = f"{digest}:{seen[key]}"
    return out


def _read_lines(path: str) -> List[str]:
    from ms_lint.source import UnreadableSource, read_source

    try:
        return read_source(path).text.splitlines()
    except UnreadableSource:
        return []
