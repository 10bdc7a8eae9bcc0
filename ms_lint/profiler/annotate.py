"""``ms-lint check --profile-data FILE``: order findings by the compile seconds a saved profile gave them, and say
the seconds in each message (``ms-lint profile ... -o FILE`` or ``--format json`` writes the file).

A finding is matched to the profile by file (real path), line and code; findings the profile does not know (other
files, code outside the profiled graphs, code changed since)
keep their place after the profiled ones. This module never imports MindSpore.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Tuple

from ms_lint.records import replaced


class ProfileDataError(ValueError):
    pass


def load(path: str) -> Dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise ProfileDataError(f"--profile-data {path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ProfileDataError(f"--profile-data {path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or "rows" not in data or "compile_s" not in data:
        raise ProfileDataError(f"--profile-data {path}: not a profile (write one with `ms-lint profile ... -o FILE`)")
    return data


def _s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 0.1 else f"{seconds:.2f} s"


def annotate(findings: List, data: Dict) -> List:
    """The findings, profiled ones first (most seconds first), each profiled message ending with its cost."""
    costs: Dict[Tuple[str, int, str], Dict] = {}
    for row in data.get("rows", []):
        if row.get("code") and float(row.get("seconds") or 0) > 0:  # 0: not in the profiled graphs
            costs[(os.path.realpath(row.get("real_path") or row["path"]), int(row["line"]), row["code"])] = row
    total = float(data.get("compile_s") or 0.0)
    profiled, rest = [], []
    for finding in findings:
        row = costs.get((os.path.realpath(finding.path), finding.line, finding.code))
        if row is None:
            rest.append(finding)
            continue
        note = f" [profile: ~{_s(float(row['seconds']))}, {float(row['share']) * 100:.0f}% of {_s(total)} compile]"
        profiled.append((float(row["seconds"]), replaced(finding, message=finding.message + note)))
    profiled.sort(key=lambda pair: (-pair[0], pair[1].sort_key()))
    return [f for _, f in profiled] + rest
