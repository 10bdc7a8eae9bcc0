"""Text and JSON rendering of verifications: one readable block per rewrite."""

from __future__ import annotations

import json
from typing import Iterable, List, Optional

from ms_lint.verifier import branches as _branches
from ms_lint.verifier.runner import Verification, format_ms, format_s, spread_text

_MARK = {
    "verified": "VERIFIED",
    "tradeoff": "TRADEOFF",
    "slower": "SLOWER",
    "mismatch": "MISMATCH",
    "original-failed": "ORIGINAL FAILED (rewrite fixes it)",
    "rewrite-failed": "REWRITE FAILED",
    "inputs-invalid": "INPUTS INVALID FOR THE ORIGINAL",
    "error": "ERROR",
}


def _mb(value: Optional[float]) -> str:
    return "?" if value is None else f"{value:.0f} MB"


def _factor(before: Optional[float], after: Optional[float], unit: str = "") -> str:
    if not before or not after:
        return ""
    if after <= before:
        return f"({before / after:.1f}x faster{unit})"
    return f"({after / before:.1f}x slower{unit})"


def render_text(verification: Verification) -> str:
    """A block like::

        loop_200.py:8 func MSL101  TRADEOFF
          outputs     match (1 value(s), rtol=1e-05 atol=1e-06)
          compile     835 ms -> 108 ms  (7.7x faster)
          run         1.84 ms -> 22.2 ms per call  (12.1x slower)
          peak memory 612 MB -> 530 MB
          break-even  36 calls: ...
    """
    v = verification
    if v.mode == "script":
        return _render_script(v)
    where = v.path or "<source>"
    if v.line:
        where += f":{v.line}"
    head = f"{where} {v.function}"
    if v.code:
        head += f" {v.code}"
    mark = _MARK.get(v.verdict, v.verdict.upper())
    if v.one_sided and v.verdict in ("verified", "tradeoff", "slower"):
        mark += " (not every branch ran)"
    lines = [f"{head}  {mark}"]
    o, r = v.original, v.rewritten

    if v.outputs_match is not None:
        state = "match" if v.outputs_match else "DIFFER"
        lines.append(f"  outputs      {state} (rtol={v.rtol:g} atol={v.atol:g}, {v.device}, inputs: "
                     f"{v.inputs or 'none'})")
        if v.params_compared:
            lines.append("  parameters   compared after every call (the Cell's state)")
    if v.seeds and (v.outputs_match is not None or v.draws > 1):
        seeds = ", ".join(str(seed) for seed in v.seeds)
        every = " (outputs compared on every draw)" if v.draws > 1 else ""
        lines.append(f"  draws        {v.draws}, seeds {seeds}{every}" + (f"; {v.draws_note}" if v.draws_note else ""))
    if v.grads_match is not None:
        lines.append(f"  gradients    {'match' if v.grads_match else 'DIFFER'}")
    for diff in v.differences[:6]:
        lines.append(f"    - {diff}")
    if len(v.differences) > 6:
        lines.append(f"    - ... and {len(v.differences) - 6} more")

    if o.compile_s is not None or r.compile_s is not None:
        orig_c = format_s(o.compile_s) if o.compile_s is not None else "failed"
        rew_c = format_s(r.compile_s) if r.compile_s is not None else "failed"
        lines.append(f"  compile      {orig_c} -> {rew_c}  {_factor(o.compile_s, r.compile_s)}".rstrip())
    if o.run_ms is not None or r.run_ms is not None:
        orig_r = format_ms(o.run_ms) if o.run_ms is not None else "-"
        rew_r = format_ms(r.run_ms) if r.run_ms is not None else "-"
        lines.append(f"  run          {orig_r} -> {rew_r} per call  {_factor(o.run_ms, r.run_ms)}".rstrip())
    if o.run_ms is not None or r.run_ms is not None:
        lines.append(f"  peak memory  {_mb(o.peak_mb)} -> {_mb(r.peak_mb)}")
    if v.break_even_calls is not None:
        if v.tradeoff_kind == "faster-compile-slower-run":
            lines.append(f"  break-even   {v.break_even_calls} calls (the rewrite wins below, loses above)")
        else:
            lines.append(f"  break-even   {v.break_even_calls} calls (the rewrite wins above)")
    if o.compile_s is not None and r.compile_s is not None:
        lines.append(f"  spread       {spread_text(o, r)}")
    if o.runs or r.runs:
        lines.append(f"  processes    {o.runs} original, {r.runs} rewritten (medians)")
    for entry in v.branches:
        lines.append(f"  branches     {_branches.describe(entry)} (original, PyNative run of each draw)")
    if v.branches_note:
        lines.append(f"  note         {v.branches_note}")
    notes: List[str] = []
    for note in o.notes + r.notes:
        if note not in notes:
            notes.append(note)
    for note in notes:
        lines.append(f"  note         {note}")
    lines.append(f"  => {v.message}")
    return "\n".join(lines)


def _render_script(v: Verification) -> str:
    where = (v.path or "<script>") + (f":{v.line}" if v.line else "")
    head = f"{where} <script>" + (f" {v.code}" if v.code else "")
    lines = [f"{head}  {_MARK.get(v.verdict, v.verdict.upper())}"]
    args = " ".join(v.script_args) if v.script_args else "(none)"
    lines.append(f"  script args  {args}")
    if v.outputs_match is not None:
        state = "same" if v.outputs_match else "DIFFERS"
        lines.append(f"  stdout       {state} on every run with the fix ({v.script_stdout_lines} lines)")
    for diff in v.differences[:6]:
        lines.append(f"    - {diff}")
    orig = v.script_runs.get("original", [])
    fixed = v.script_runs.get("fixed", [])
    if len(orig) == 2 and len(fixed) == 2:
        lines.append(f"  first run    {format_s(orig[0])} -> {format_s(fixed[0])}  (without -> with the fix: writes the "
                     "cache)")
        factor = f"{orig[1] / fixed[1]:.1f}x faster" if fixed[1] <= orig[1] else f"{fixed[1] / orig[1]:.1f}x slower"
        lines.append(f"  second run   {format_s(orig[1])} -> {format_s(fixed[1])}  ({factor}: loads it)")
    if v.script_spread is not None:
        lines.append(f"  spread       the two runs without the fix differ by {v.script_spread:.0%}")
    if fixed:
        lines.append(f"  cache        {v.script_cache_files} file(s) written by the first run with the fix, in a "
                     "private folder")
    walls = v.script_runs.get("original_wall", []), v.script_runs.get("fixed_wall", [])
    if len(walls[0]) == 2 and len(walls[1]) == 2:
        lines.append(f"  process      {format_s(walls[0][1])} -> {format_s(walls[1][1])} second run, whole process "
                     "with `import mindspore`")
    lines.append("  processes    the script's time after `import mindspore`; a fresh python each run, the "
                 "compile-cache variables removed")
    lines.append(f"  => {v.message}")
    return "\n".join(lines)


def render_text_all(verifications: Iterable[Verification]) -> str:
    verifications = list(verifications)
    blocks = [render_text(v) for v in verifications]
    if not blocks:
        return "nothing to verify"
    counts = {}
    for v in verifications:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    summary = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    return "\n\n".join(blocks) + f"\n\n{len(blocks)} rewrite(s): {summary}"


def render_json(verifications: Iterable[Verification]) -> str:
    """A JSON list with one object per verification (``Verification.to_json``)."""
    return json.dumps([v.to_json() for v in verifications], indent=2)
