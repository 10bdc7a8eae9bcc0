"""Round trip on real code: ``ms-lint fix --apply --unsafe-fixes`` over a copy of the installed MindSpore's own
Python source (about 2100 files, 595k lines), with every registered rule.

* no traceback, no broken fix (an "error:" line), and exit 2 only for files reported as MSL900;
* every changed file parses (libcst) and compiles; unchanged files are byte-identical, so they parse exactly
  as before; permission bits of changed files are kept;
* exactly the files with applied fixes changed: files without findings (and MSL900 files) are byte-identical;
* a second run (diff mode) has nothing left to change, and the summary counts match what happened.

The counts are printed (run with ``-s`` to see them).
"""
import importlib.util
import os
import re
import shutil
import stat
import subprocess
import sys
from collections import Counter

import libcst as cst
import pytest

pytestmark = pytest.mark.mindspore

LINE = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<code>MSL\d{3})(?P<rest>.*)$")
SUMMARY = re.compile(r"^(?P<verb>Fixed|Would fix) (?P<n>\d+) findings? in (?P<m>\d+) files?; (?P<k>\d+) remaining")


def _copy_package(src: str, dst: str) -> dict:
    """Copy the .py/.pyi files (modes kept); returns relative path -> bytes."""
    contents = {}
    for folder, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in filenames:
            if name.endswith((".py", ".pyi")):
                source = os.path.join(folder, name)
                rel = os.path.relpath(source, src)
                target = os.path.join(dst, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(source, target)
                with open(target, "rb") as handle:
                    contents[rel] = handle.read()
    return contents


def _run(root: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ms_lint", "fix", "--config", "pyproject.toml", *args, "mindspore"],
                          cwd=root, capture_output=True, text=True, timeout=1200)


def _parse_report(stderr: str):
    applied, remaining, unanalyzable, errors = [], [], set(), []
    summary = None
    for line in stderr.splitlines():
        match = LINE.match(line)
        if match:
            path = os.path.relpath(match["path"], "mindspore")
            if match["code"] == "MSL900":
                unanalyzable.add(path)
            elif match["rest"].startswith(" fixed:"):
                applied.append((path, match["code"]))
            elif match["rest"].startswith(" not fixed:"):
                continue  # a note about a finding that is also listed as remaining
            else:
                remaining.append((path, match["code"]))
        elif ": error: " in line:
            errors.append(line)
        elif SUMMARY.match(line):
            summary = SUMMARY.match(line)
    return applied, remaining, unanalyzable, errors, summary


def test_fix_round_trip_on_mindspore_source(tmp_path):
    pytest.importorskip("mindspore")
    package = os.path.dirname(importlib.util.find_spec("mindspore").origin)
    root = tmp_path / "copy"
    before = _copy_package(package, str(root / "mindspore"))
    assert len(before) > 1000
    (root / "pyproject.toml").write_text("[tool.ms-lint]\nexclude = []\n")

    first = _run(str(root), "--apply", "--unsafe-fixes", "--show-fixes")
    assert "Traceback" not in first.stderr, first.stderr[-3000:]
    applied, remaining, unanalyzable, errors, summary = _parse_report(first.stderr)
    assert errors == [], errors[:10]
    assert first.returncode == (2 if unanalyzable else 1 if remaining else 0), first.stderr[-3000:]

    after = {}
    for rel in before:
        with open(root / "mindspore" / rel, "rb") as handle:
            after[rel] = handle.read()
    changed = {rel for rel in before if after[rel] != before[rel]}
    fixed_files = {path for path, _ in applied}
    with_findings = fixed_files | {path for path, _ in remaining} | unanalyzable

    assert changed == fixed_files
    assert all(after[rel] == before[rel] for rel in before if rel not in with_findings)
    assert all(after[rel] == before[rel] for rel in unanalyzable)
    for rel in sorted(changed):
        target = root / "mindspore" / rel
        text = after[rel].decode("utf-8-sig")
        cst.parse_module(text)
        compile(after[rel], str(target), "exec", dont_inherit=True)
        original = os.stat(os.path.join(package, rel))
        assert stat.S_IMODE(os.stat(target).st_mode) == stat.S_IMODE(original.st_mode)
    assert summary is not None and summary["verb"] == "Fixed"
    assert int(summary["n"]) == len(applied) and int(summary["m"]) == len(changed)
    assert int(summary["k"]) == len(remaining)

    second = _run(str(root), "--unsafe-fixes")
    assert second.stdout == "", second.stdout[:3000]
    assert "Would fix 0 findings in 0 files;" in second.stderr
    _, remaining_2, unanalyzable_2, errors_2, _ = _parse_report(second.stderr)
    assert errors_2 == [] and unanalyzable_2 == unanalyzable
    assert Counter(code for _, code in remaining_2) == Counter(code for _, code in remaining)
    for rel in before:
        with open(root / "mindspore" / rel, "rb") as handle:
            assert handle.read() == after[rel], rel

    lines = sum(data.count(b"\n") for data in before.values())
    print(f"\nround trip over {len(before)} files ({lines} lines) of MindSpore's source:")
    print(f"  files changed: {len(changed)}; fixes applied: {len(applied)} "
          f"{dict(sorted(Counter(code for _, code in applied).items()))}")
    print(f"  findings left: {len(remaining)} {dict(sorted(Counter(code for _, code in remaining).items()))}; "
          f"unanalyzable (MSL900): {len(unanalyzable)} {sorted(unanalyzable)}")
