"""Rule pages: ``rules/<CODE>.md`` in a source checkout, ``ms_lint/rule_pages/<CODE>.md`` once installed.

The pages are written once, in the repository's top-level ``rules/`` folder. A wheel carries them as the data
package ``ms_lint.rule_pages`` (``package-dir`` maps it to ``rules/`` in ``pyproject.toml``), so a non-editable
install finds them next to the code. A checkout, or an editable install, reads ``rules/`` directly.

Also here: the parser for the tagged code blocks (``python invalid|fixed|valid``) that ``rules/README.md``
defines, shared by the page test and the SARIF help text.
"""
from __future__ import annotations

import os
import re
import textwrap
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Sequence, Tuple

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
BLOCK_TAGS = ("invalid", "fixed", "valid")
_FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_CODE = re.compile(r"^[A-Z]+[0-9]+$")


class PageNotFound(LookupError):
    """No page for this code (an unknown code, or pages missing from the installation)."""


def pages_dir() -> Optional[str]:
    """The folder holding the pages, or None when neither the installed nor the checkout layout is there."""
    installed = os.path.join(_PACKAGE_DIR, "rule_pages")
    if os.path.isdir(installed):
        return installed
    checkout_root = os.path.dirname(_PACKAGE_DIR)
    checkout = os.path.join(checkout_root, "rules")
    if os.path.isdir(checkout) and os.path.isfile(os.path.join(checkout_root, "pyproject.toml")):
        return checkout
    return None


def page_path(code: str) -> str:
    code = code.strip().upper()
    folder = pages_dir()
    if not _CODE.match(code) or folder is None:
        raise PageNotFound(code)
    path = os.path.join(folder, f"{code}.md")
    if not os.path.isfile(path):
        raise PageNotFound(code)
    return path


def load_page(code: str) -> str:
    """The markdown text of a rule's page; raises PageNotFound."""
    with open(page_path(code), encoding="utf-8") as handle:
        return handle.read()


def available_codes() -> List[str]:
    """Codes that have a page (``README.md`` is not a page)."""
    folder = pages_dir()
    if folder is None:
        return []
    return sorted(name[:-3] for name in os.listdir(folder) if name.endswith(".md") and _CODE.match(name[:-3]))


@dataclass
class CodeBlock:
    tag: Optional[str]  # "invalid", "fixed", "valid", or None for an untagged block
    info: str  # the whole info string after the fence (``python invalid``)
    code: str
    line: int  # 1-based line of the opening fence


def code_blocks(text: str) -> List[CodeBlock]:
    """Every fenced block in a page, in order, with its tag when the info string is ``python <tag>``."""
    blocks = []
    for match in _FENCE.finditer(text):
        info = match.group("info").strip()
        words = info.split()
        tag = words[1] if len(words) == 2 and words[0] == "python" else None
        blocks.append(CodeBlock(tag, info, match.group("body"), text.count("\n", 0, match.start()) + 1))
    return blocks


def title(text: str) -> str:
    """The page's first heading (``MSL101: loop-over-tensor-axis``), or ''."""
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def section(text: str, heading: str) -> str:
    """The text of a ``## heading`` section, without its heading, stripped ('' when absent)."""
    out: List[str] = []
    inside = False
    in_fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("## "):
            if inside:
                break
            inside = line[3:].strip() == heading
            continue
        if inside:
            out.append(line)
    return "\n".join(out).strip()


# The section headings rules/README.md lists, in their order; a page uses them in this order.
SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Not flagged", "Fix safety", "Options",
            "Known limits", "References")
REQUIRED_SECTIONS = ("What it does", "Why is this bad?")


def normalize_example(code: str) -> str:
    """An example as a page shows it: dedented, without leading or trailing blank lines."""
    return textwrap.dedent(code).strip("\n") + "\n"


def page_problems(text: str, code: str, name: str, fix_applicability: Optional[str], valid: Sequence[str],
                  invalid: Sequence[Any]) -> List[str]:
    """What is wrong with a page, given the rule's attributes (``invalid``: objects with ``code`` and ``fixed``).

    The tagged blocks must be exactly the examples, in order: each ``invalid`` example, followed by a ``fixed``
    block when it declares a fix, and the ``valid`` examples in their own order.
    """
    problems: List[str] = []
    expected_title = f"{code}: {name}"
    if title(text) != expected_title:
        problems.append(f"first heading is {title(text)!r}, expected {expected_title!r}")
    fix_line = next((line for line in text.splitlines() if line.startswith("**Fix:**")), None)
    expected_fix = fix_applicability or "none"
    if fix_line is None:
        problems.append("no '**Fix:** safe|unsafe|none' line")
    elif fix_line[len("**Fix:**"):].split()[:1] != [expected_fix]:
        problems.append(f"{fix_line!r} does not start with the rule's fix applicability {expected_fix!r}")
    headings = [line[3:].strip() for line in _outside_fences(text) if line.startswith("## ")]
    unknown = [h for h in headings if h not in SECTIONS]
    if unknown:
        problems.append(f"unknown sections {unknown} (rules/README.md lists {list(SECTIONS)})")
    known = [h for h in headings if h in SECTIONS]
    if known != sorted(known, key=SECTIONS.index) or len(set(known)) != len(known):
        problems.append(f"sections out of order or repeated: {known}")
    needed = list(REQUIRED_SECTIONS) + (["Example"] if invalid else []) + (["Not flagged"] if valid else [])
    needed += ["Use instead"] if any(getattr(e, "fixed", None) is not None for e in invalid) else []
    problems += [f"missing section '## {h}'" for h in needed if h not in headings]

    blocks = code_blocks(text)
    for block in blocks:
        words = block.info.split()
        if words[:1] == ["python"] and len(words) > 1 and block.tag not in BLOCK_TAGS:
            problems.append(f"line {block.line}: unknown block tag {block.info!r} (use python invalid|fixed|valid)")
    tagged = [b for b in blocks if b.tag in BLOCK_TAGS]
    expected_invalid: List[Tuple[str, str]] = []
    for example in invalid:
        expected_invalid.append(("invalid", normalize_example(example.code)))
        if example.fixed is not None:
            expected_invalid.append(("fixed", normalize_example(example.fixed)))
    shown_invalid = [(b.tag, normalize_example(b.code)) for b in tagged if b.tag != "valid"]
    shown_valid = [normalize_example(b.code) for b in tagged if b.tag == "valid"]
    problems += _sequence_problems("invalid/fixed", shown_invalid, expected_invalid)
    problems += _sequence_problems("valid", shown_valid, [normalize_example(v) for v in valid])
    return problems


def _sequence_problems(what: str, shown: List[Any], expected: List[Any]) -> List[str]:
    if shown == expected:
        return []
    if len(shown) != len(expected):
        return [f"{len(shown)} {what} blocks on the page, the class has {len(expected)}"]
    first = next(i for i, (a, b) in enumerate(zip(shown, expected)) if a != b)
    message = (f"{what} block #{first + 1} differs from the class's example:\n--- page\n{shown[first]}"
               f"--- class\n{expected[first]}")
    return [message]


def _outside_fences(text: str) -> Iterator[str]:
    in_fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if not in_fence:
            yield line
