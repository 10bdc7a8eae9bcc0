"""Where an import a fix adds goes, so that the file keeps its own import order (isort's, when it has one).

isort and ruff's ``I001`` group the leading imports in sections (``__future__``, standard library, third party,
first party, relative) and sort each: ``import x`` lines before ``from x import y`` lines, then by module name,
case-insensitively; ``from m import a`` and ``from m import b`` become one statement. So a new import:

* joins an existing ``from m import ...`` of the same module (``from mindspore import nn`` -> ``nn, ops``), its
  name placed where isort would put it when the names are sorted, else last;
* otherwise goes into its section: at its sorted place when that section is sorted, else after the section's
  last import of the same top-level package (the file's own order: ``from mindspore import ops`` lands with the
  other ``mindspore`` imports, not after the project's ``from mindformers...``), else after the section;
* or, when the file has no import of that section, starts a new group before the first later section.

First party is the checked file's own top package and what sits beside it in its source root (as ruff's default
``src = ["."]`` finds it), never the contents of an installed-packages folder.
"""
from __future__ import annotations

import os
from typing import Collection, FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

from ms_lint.analysis.layout import STDLIB_NAMES
from ms_lint.cstutil import code_of

FUTURE, STDLIB, THIRD_PARTY, FIRST_PARTY, LOCAL = range(5)


def first_party_names(path: Optional[str]) -> FrozenSet[str]:
    """Top-level names that are this project's own: the file's top package and its source root's entries."""
    if not path:
        return frozenset()
    from ms_lint.analysis.layout import package_of

    package, root = package_of(path)
    names = {package.split(".")[0]} if package else set()
    if os.path.basename(root) in ("site-packages", "dist-packages"):
        return frozenset(names)
    try:
        entries = os.listdir(root)
    except OSError:
        return frozenset(names)
    for entry in entries:
        full = os.path.join(root, entry)
        if entry.endswith(".py"):
            names.add(entry[:-3])
        elif os.path.isfile(os.path.join(full, "__init__.py")):
            names.add(entry)
    return frozenset(names)


def top_modules(stmt: cst.SimpleStatementLine) -> List[str]:
    found = []
    for small in stmt.body:
        if isinstance(small, cst.Import):
            found.extend(code_of(alias.name).split(".")[0] for alias in small.names)
        elif isinstance(small, cst.ImportFrom):
            found.append("." if small.relative else code_of(small.module).split(".")[0] if small.module else ".")
    return found


def is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body)


def section_of(stmt: cst.SimpleStatementLine, first_party: Collection[str]) -> int:
    modules = top_modules(stmt)
    if modules == ["__future__"]:
        return FUTURE
    if "." in modules:
        return LOCAL
    if modules and all(m in first_party for m in modules):
        return FIRST_PARTY
    if modules and all(m in STDLIB_NAMES for m in modules):
        return STDLIB
    return THIRD_PARTY


def sort_key(stmt: cst.SimpleStatementLine) -> Tuple[int, str]:
    """isort's order within a section: straight imports first, then from-imports, by module name."""
    small = stmt.body[0]
    if isinstance(small, cst.Import):
        return 0, code_of(small.names[0].name).lower()
    module = code_of(small.module) if small.module else ""  # type: ignore[union-attr]
    return 1, ("." * len(small.relative) + module).lower()  # type: ignore[union-attr]


def name_key(name: str) -> Tuple[int, str]:
    """isort's ``order-by-type`` for imported names: CONSTANTS, then Classes, then the rest, case-insensitively."""
    if len(name) > 1 and name.isupper():
        return 0, name.lower()
    if name[:1].isupper():
        return 1, name.lower()
    return 2, name.lower()


# -- joining an existing from-import ----------------------------------------------------------------------

def join_from_import(body: List[cst.BaseStatement], limit: int, new: cst.SimpleStatementLine) -> bool:
    """Add the names of ``from m import x`` to a top-level ``from m import ...`` among ``body[:limit]``, in place;
    False when there is none to join (or it is starred)."""
    small = new.body[0]
    if len(new.body) != 1 or not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
        return False
    wanted = (len(small.relative), code_of(small.module) if small.module else "")
    for index, stmt in enumerate(body[:limit]):
        if not (is_import_line(stmt) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.ImportFrom)):
            continue
        existing = stmt.body[0]
        if isinstance(existing.names, cst.ImportStar):
            continue
        if (len(existing.relative), code_of(existing.module) if existing.module else "") != wanted:
            continue
        names = list(existing.names)
        for alias in small.names:
            names = _insert_alias(names, alias)
        body[index] = stmt.with_changes(body=[existing.with_changes(names=names)])
        return True
    return False


def _alias_name(alias: cst.ImportAlias) -> str:
    return code_of(alias.name)


def _insert_alias(names: List[cst.ImportAlias], alias: cst.ImportAlias) -> List[cst.ImportAlias]:
    keys = [name_key(_alias_name(n)) for n in names]
    new_key = name_key(_alias_name(alias))
    position = len(names)
    if keys == sorted(keys):
        position = next((i for i, key in enumerate(keys) if key > new_key), len(names))
    separator = next((n.comma for n in names[:-1] if isinstance(n.comma, cst.Comma)),
                     cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    if position == len(names):
        last = names[-1]
        trailing = last.comma  # a trailing comma (or nothing) moves to the new last name
        names = names[:-1] + [last.with_changes(comma=separator), alias.with_changes(comma=trailing)]
    else:
        names = names[:position] + [alias.with_changes(comma=separator)] + names[position:]
    return names


# -- placing a new statement ------------------------------------------------------------------------------

def insert_import(body: List[cst.BaseStatement], limit: int, new: cst.SimpleStatementLine,
                  first_party: Collection[str]) -> int:
    """Insert ``new`` among the leading imports ``body[:limit]`` (in place); returns where it went."""
    section = section_of(new, first_party)
    lines = [(i, stmt) for i, stmt in enumerate(body[:limit]) if is_import_line(stmt)]
    same = [(i, stmt) for i, stmt in lines if section_of(stmt, first_party) == section]
    if same:
        keys = [sort_key(stmt) for _, stmt in same]
        key = sort_key(new)
        if keys == sorted(keys):
            before = next((i for (i, _), other in zip(same, keys) if other > key), None)
            if before is not None:
                _place_before(body, before, new, same_group=True)
                return before
            at = same[-1][0] + 1
        else:
            tops = set(top_modules(new))
            kin = [i for i, stmt in same if tops & set(top_modules(stmt))]
            at = (kin[-1] if kin else same[-1][0]) + 1
        body.insert(at, new)
        return at
    later = next((i for i, stmt in lines if section_of(stmt, first_party) > section), None)
    if later is not None:
        _place_before(body, later, new, same_group=False)
        return later
    body.insert(limit, new)
    return limit


def _place_before(body: List[cst.BaseStatement], at: int, new: cst.SimpleStatementLine, same_group: bool) -> None:
    """Insert before ``body[at]``; when a group starts there, the new line takes the group's leading lines (the
    blank line and comments above it), and a new group leaves one blank line before the old one."""
    following = body[at]
    if _starts_group(body, at):
        new = new.with_changes(leading_lines=following.leading_lines)
        body[at] = following.with_changes(leading_lines=() if same_group else (cst.EmptyLine(),))
    body.insert(at, new)


def _starts_group(body: Sequence[cst.BaseStatement], at: int) -> bool:
    return at == 0 or not is_import_line(body[at - 1]) or bool(getattr(body[at], "leading_lines", ()))
