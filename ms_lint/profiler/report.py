"""Text and JSON output of a ``Profile``; the JSON is also the file ``ms-lint check --profile-data`` reads."""
from __future__ import annotations

import json
from typing import Any, Dict, List

from ms_lint.profiler.backend import backend_of
from ms_lint.profiler.session import Profile

FORMAT_VERSION = 1
STOPPED = {
    "compile-limit": "the script was stopped right after its last profiled compile, before that graph ran "
                     "(--compiles)",
    "script-ended": "the script ended before reaching --compiles",
}
TOP_PHASES = 4


def _s(seconds: float) -> str:
    if seconds < 0.1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.2f} s"


def _pct(share: float) -> str:
    return f"{share * 100:.0f}%"


def code_only(text: str) -> str:
    """The line without its trailing comment (the IR's traces carry the whole source line)."""
    import io
    import tokenize

    try:
        for token in tokenize.generate_tokens(io.StringIO(text.strip() + "\n").readline):
            if token.type == tokenize.COMMENT:
                return text.strip()[: token.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return text.strip()


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def rows(profile: Profile) -> List[Dict[str, Any]]:
    """The table: every finding with a cost, and every costly line without one, by estimated seconds."""
    attribution = profile.attribution
    out = []
    lines = {(c.path, c.line): c for c in attribution.lines}
    for item in attribution.findings:
        finding = item.finding
        text = lines.get((finding.path, finding.line))
        out.append({
            "path": profile.display(finding.path), "real_path": finding.path, "line": finding.line,
            "end_line": finding.end_line, "code": finding.code,
            "construct": _cut(code_only(text.text) if text else finding.message, 48), "nodes": item.nodes,
            "seconds": round(item.seconds, 4), "share": round(attribution.share(item.seconds), 4),
            "message": finding.message, "fix": finding.fix, "lines": list(item.lines),
            "measured": item.measured,
        })
    for cost in attribution.blind():
        span = attribution.loops.get((cost.path, cost.line))
        out.append({
            "path": profile.display(cost.path), "real_path": cost.path, "line": cost.line,
            "end_line": span[1] if span and span[0] == cost.line else cost.line,
            "code": None, "construct": _cut(code_only(cost.text), 48), "nodes": cost.nodes,
            "seconds": round(cost.seconds, 4),
            "share": round(attribution.share(cost.seconds), 4), "message": None, "fix": None, "lines": None,
            "measured": None,
        })
    out.sort(key=lambda r: (-r["seconds"], r["path"], r["line"]))
    return out


def to_json(profile: Profile) -> Dict[str, Any]:
    attribution = profile.attribution
    result = profile.run.result
    share = attribution.share
    return {
        "version": FORMAT_VERSION,
        "target": profile.target,
        "mode": profile.mode,
        "device": profile.device,
        "inputs": profile.inputs,
        "compile_s": round(attribution.compile_s, 4),
        "first_call_s": round(result.get("first_call_s") or 0.0, 4),
        "wall_s": round(profile.run.wall_s, 3),
        "graphs": len(profile.run.compiles),
        "stopped": profile.stopped,
        "phases": [{"name": n, "seconds": round(t, 5)} for n, t in attribution.phases],
        "backend": _backend_json(profile),
        "unattributed_s": round(attribution.unattributed_s, 4),
        "rows": rows(profile),
        "lines": [{"path": profile.display(c.path), "real_path": c.path, "line": c.line, "text": c.text,
                   "nodes": c.nodes, "final_nodes": c.final_nodes, "seconds": round(c.seconds, 4),
                   "share": round(share(c.seconds), 4), "function": c.function,
                   "finding": None if c.owner is None else attribution.findings[c.owner].finding.code}
                  for c in attribution.lines],
        "functions": [{"path": profile.display(f.path), "line": f.line, "name": f.name, "nodes": f.nodes,
                       "seconds": round(f.seconds, 4), "share": round(share(f.seconds), 4)}
                      for f in attribution.functions],
        "notes": list(profile.notes),
        "summary": profile.summary(),
    }


def _backend_json(profile: Profile) -> Dict[str, Any]:
    backend = backend_of(profile.run.compiles)
    return {"total_s": round(backend.total_s, 5), "kernel_graphs": backend.kernel_graphs,
            "steps": [{"name": s.name, "seconds": round(s.seconds, 5), "count": s.count, "parent": s.parent}
                      for s in backend.steps]}


def backend_line(profile: Profile) -> str:
    """``backend 49 ms of task_emit 73 ms, 1 kernel graph: OptimizeGraph 16 ms, ...``; empty without [PROF] lines."""
    backend = backend_of(profile.run.compiles)
    if not backend.total_s:
        return ""
    graphs = backend.kernel_graphs
    emit = sum(t for name, t in profile.attribution.phases if name == "task_emit")
    text = f"backend {_s(backend.total_s)}"
    if emit:
        text += f" of task_emit {_s(emit)}"
    text += f", {graphs} kernel graph{'s' if graphs != 1 else ''}: "
    return text + ", ".join(f"{name} {_s(t)}" for name, t in backend.parts())


def render_json(profile: Profile) -> str:
    return json.dumps(to_json(profile), indent=2)


def render_text(profile: Profile) -> str:
    attribution = profile.attribution
    result = profile.run.result
    out = []
    head = f"profile of {profile.target} ({profile.device}"
    if profile.inputs:
        head += f", inputs: {profile.inputs}"
    out.append(head + ")")
    graphs = len(profile.run.compiles)
    phases = sorted(attribution.phases, key=lambda p: -p[1])
    shown = ", ".join(f"{name} {_s(t)}" for name, t in phases[:TOP_PHASES])
    rest = attribution.compile_s - sum(t for _, t in phases[:TOP_PHASES])
    if rest > 0.0005:
        shown += f", other {_s(rest)}"
    first = result.get("first_call_s")
    what = "script ran" if profile.mode == "script" else "first call"
    out.append(f"compile {_s(attribution.compile_s)} in {graphs} graph{'s' if graphs != 1 else ''} "
               f"({what} {_s(first or 0.0)}); {shown}")
    backend = backend_line(profile)
    if backend:
        out.append(backend)
    if profile.stopped:
        out.append(STOPPED.get(profile.stopped, f"the script stopped: {profile.stopped}"))
    everything = rows(profile)
    table = [r for r in everything if r["seconds"] > 0 or r["measured"]]
    outside = [r for r in everything if r not in table]
    confirm = any(r["measured"] for r in table)
    out.append("")
    header = f"  {'seconds':>8} {'share':>5} {'nodes':>6}  {'where':<40} {'code':<7} construct"
    if confirm:
        header += "   [measured saving]"
    out.append(header)
    for row in table:
        where = f"{row['path']}:{row['line']}"
        if len(where) > 40:  # keep the file name and line: cut from the left
            where = "..." + where[-37:]
        line = (f"  {_s(row['seconds']):>8} {_pct(row['share']):>5} {row['nodes']:>6}  {where:<40} "
                f"{row['code'] or '-':<7} {row['construct']}")
        if row["code"] is None:
            line += "   (no finding)"
        measured = row["measured"]
        if measured:
            if measured.get("saving_s") is not None:
                line += f"   [measured {_s(measured['saving_s'])}, {_pct(measured['saving_share'])}]"
            else:
                line += f"   [{measured.get('error', 'not measured')}]"
        out.append(line)
    if not table:
        out.append("  (no findings and no line above 5% of the compile)")
    if outside:
        out.append(f"  not in the compiled graph{'s' if graphs != 1 else ''}: "
                   + ", ".join(f"{r['path']}:{r['line']} {r['code']}" for r in outside[:8])
                   + (f" and {len(outside) - 8} more" if len(outside) > 8 else ""))
    functions = attribution.functions[:5]
    if functions:
        out.append("")
        out.append("functions: " + ", ".join(
            f"{f.name} {_s(f.seconds)} ({_pct(attribution.share(f.seconds))})" for f in functions))
    if any(r["code"] == "MSL201" for r in table):
        out.append("note: MSL201 estimates are lower bounds (control flow slows the passes over the whole graph); "
                   "--confirm measures them")
    for note in profile.notes:
        out.append(f"note: {note}")
    out.append(profile.summary())
    return "\n".join(out) + "\n"
