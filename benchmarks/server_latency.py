"""How fast ``ms-lint server`` answers an edit: didChange sent -> publishDiagnostics for that version received.

    python benchmarks/server_latency.py            # writes benchmarks/results/server.md
    python benchmarks/server_latency.py --no-write --edits 10

Two model files of about 1,000 lines, each copied with its package into a temporary folder (an empty
pyproject.toml: default settings):

* ``mindearth/cell/dgmr/dgmr.py`` from the real-code corpus (``benchmarks/.realcode/``, fetched by
  ``benchmarks/realcode.py``; skipped when absent): 1,087 lines, 11 Cells, 20 findings;
* a generated Cell-heavy module (``benchmarks/corpus.py``'s Cell templates, seed 0) of 1,000+ lines.

The server is started over stdio as an editor starts it (``ms-lint server``), the file opened (the first check
builds the project index), then edited in a graph function over and over, one notification at a time, waiting for
each answer: a character typed at the end of a line (the file's ``ast`` summary keeps its shape), a line inserted
(every later line moves) and the line removed again, a line with a call inserted (the summary changes, as typing
code changes it) and removed again. Each answer is compared with ``analyze_source`` on the same
text in this process: the benchmark fails if the server's diagnostics differ.
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from ms_lint.lsp.client import Client  # noqa: E402

REALCODE = HERE / ".realcode" / "mindearth-gpu-0.2.0"
DGMR = "mindearth/cell/dgmr/dgmr.py"
RESULTS = HERE / "results" / "server.md"


def generated_module(lines: int = 1000, seed: int = 0) -> str:
    from corpus import Writer, cell_module

    rng = random.Random(seed)
    parts: List[str] = []
    while sum(part.count("\n") for part in parts) < lines:
        text = cell_module(Writer(rng))
        parts.append(text if not parts else text.split("from mindspore import nn, ops\n", 1)[-1])
    return "\n\n".join(parts)


def prepare(workdir: Path) -> List[Tuple[str, Path]]:
    (workdir / "pyproject.toml").write_text("")
    targets = []
    if (REALCODE / DGMR).is_file():
        for source in (REALCODE / "mindearth").rglob("*.py"):
            dest = workdir / "real" / source.relative_to(REALCODE)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
        targets.append(("mindearth dgmr.py (real)", workdir / "real" / DGMR))
    generated = workdir / "generated" / "cells.py"
    generated.parent.mkdir(parents=True)
    generated.write_text(generated_module())
    targets.append(("generated Cells", generated))
    return targets


def graph_lines(text: str) -> List[int]:
    """0-based lines of statements just inside ``def construct`` bodies (where people edit graph code)."""
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines):
        if line.strip().startswith("def construct(") and line.rstrip().endswith(":"):
            for after in range(number + 1, min(number + 6, len(lines))):
                stripped = lines[after].strip()
                if stripped and not stripped.startswith(("#", '"""', "'''")) and lines[after].rstrip().endswith(")"):
                    found.append(after)
                    break
    return found


# What each edit does, in turn: a space typed at the end of a line; a line without a call inserted (the module's
# ``ast`` summary keeps its shape: only line numbers move) and removed; a line with a call inserted (the
# function's calls change, so the summary does: what typing code does) and removed.
KINDS = ("typed", "inserted", "removed", "called", "removed")


def edits(text: str, count: int) -> List[Tuple[str, dict, str]]:
    """(kind, the didChange content change, the text after it), cycling through ``KINDS``."""
    targets = graph_lines(text)
    if not targets:
        raise SystemExit("no construct body to edit")
    plan = []
    current = text.splitlines(keepends=True)
    for step in range(count):
        line = targets[(step // len(KINDS)) % len(targets)]
        kind = KINDS[step % len(KINDS)]
        if kind == "typed":
            column = len(current[line].rstrip("\r\n"))
            change = {"range": _span(line, column, line, column), "text": " "}
            current[line] = current[line].rstrip("\r\n") + " \n"
        elif kind in ("inserted", "called"):
            indent = current[line][: len(current[line]) - len(current[line].lstrip())]
            new = f"{indent}scratch = x\n" if kind == "inserted" else f"{indent}scratch = abs(x)\n"
            change = {"range": _span(line + 1, 0, line + 1, 0), "text": new}
            current.insert(line + 1, new)
        else:
            change = {"range": _span(line + 1, 0, line + 2, 0), "text": ""}
            del current[line + 1]
            if current[line].rstrip("\r\n").endswith(" "):  # and the space typed before
                current[line] = current[line].rstrip("\r\n")[:-1] + "\n"
                change = [change, {"range": _span(line, len(current[line]) - 1, line, len(current[line])),
                                   "text": ""}]
        plan.append((kind, change, "".join(current)))
    return plan


def _span(l1: int, c1: int, l2: int, c2: int) -> dict:
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


def expected(path: Path, text: str) -> List[tuple]:
    from ms_lint.config import Config, load_config
    from ms_lint.engine import analyze_source
    from ms_lint.lsp.documents import source_of

    config = load_config(str(path.parent)) if path else Config()
    findings = analyze_source(source_of(str(path), text), config, str(path)).findings
    return sorted((f.line - 1, f.column - 1, f.end_line - 1, f.end_column - 1, f.code, f.message) for f in findings)


def shown(diagnostics: List[dict]) -> List[tuple]:
    return sorted((d["range"]["start"]["line"], d["range"]["start"]["character"], d["range"]["end"]["line"],
                   d["range"]["end"]["character"], d["code"], d["message"]) for d in diagnostics)


def measure(label: str, path: Path, count: int, workdir: Path) -> Dict[str, object]:
    text = path.read_text(encoding="utf-8")
    client = Client([sys.executable, "-m", "ms_lint", "server"], cwd=str(workdir),
                    env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        client.initialize(workdir.as_uri())
        uri = path.as_uri()
        start = time.perf_counter()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": text}})
        first_diagnostics = client.diagnostics(uri, 1, timeout=600)
        first = time.perf_counter() - start
        if shown(first_diagnostics) != expected(path, text):
            raise SystemExit(f"{label}: the first check differs from analyze_source")
        latencies: Dict[str, List[float]] = {kind: [] for kind in KINDS}
        mismatches = 0
        cpu_times: List[float] = []
        for version, (kind, change, after) in enumerate(edits(text, count), start=2):
            changes = change if isinstance(change, list) else [change]
            start = time.perf_counter()
            cpu = server_cpu(client)
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                     "contentChanges": changes})
            diagnostics = client.diagnostics(uri, version)
            latencies[kind].append(time.perf_counter() - start)
            cpu_times.append(server_cpu(client) - cpu)
            if shown(diagnostics) != expected(path, after):
                mismatches += 1
        client.shutdown()
    finally:
        client.close()
    every = [value for values in latencies.values() for value in values]
    return {"label": label, "lines": text.count("\n"), "findings": len(first_diagnostics), "first": first,
            "latencies": latencies, "all": every, "mismatches": mismatches, "cpu": cpu_times}


def server_cpu(client: Client) -> float:
    """User + system CPU seconds the server process has used (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{client.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


STAGES = ("summary (ast)", "compile", "parse (libcst)", "module contexts", "rules", "positions")


def breakdown(path: Path, count: int) -> Dict[str, float]:
    """Median CPU seconds per stage of one edit's check, in this process (``ms_lint.lsp.documents.Checker``, what
    the server runs), the same edits as the server got. "rules" includes what the rules ask of other modules
    (the buffer's own cross-module context: its parse and context are counted in their stages too)."""
    import ms_lint.analysis.index as index_module
    import ms_lint.context as context_module
    import ms_lint.engine as engine
    import ms_lint.lsp.documents as documents
    from ms_lint.lsp.incremental import IncrementalParser
    from ms_lint.lsp.runs import DocumentRuns

    spent: Dict[str, float] = {}
    restore = []
    running = set()  # stages being timed: a stage called inside itself counts once

    def timed(owner, name: str, stage: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            if stage in running:
                return original(*args, **kwargs)
            running.add(stage)
            start = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                running.discard(stage)
                spent[stage] = spent.get(stage, 0.0) + time.process_time() - start

        restore.append((owner, name, original))
        setattr(owner, name, wrapper)

    timed(index_module, "summarize_file", "summary (ast)")
    timed(DocumentRuns, "summary", "summary (ast)")  # an open document's: only the runs an edit changed
    timed(engine, "compile_problem", "compile")
    timed(IncrementalParser, "parse", "parse (libcst)")
    timed(context_module.ModuleContext, "__init__", "module contexts")
    timed(engine, "run_rules", "rules")
    timed(engine, "_attach_positions", "positions")
    samples: Dict[str, List[float]] = {stage: [] for stage in STAGES + ("total",)}
    try:
        checker = documents.Checker()
        text = path.read_text(encoding="utf-8")
        checker.check(str(path), text)
        for _, _, after in edits(text, count):
            spent.clear()
            start = time.process_time()
            checker.check(str(path), after)
            spent["total"] = time.process_time() - start
            for stage in samples:
                samples[stage].append(spent.get(stage, 0.0))
    finally:
        for owner, name, original in restore:
            setattr(owner, name, original)
    return {stage: statistics.median(values) for stage, values in samples.items()}


def render(rows: List[Dict[str, object]], count: int) -> str:
    def ms(value: float) -> str:
        return f"{value * 1000:.0f} ms"

    out = ["# `ms-lint server`: time from didChange to publishDiagnostics", "",
           f"`python benchmarks/server_latency.py`; {count} edits per file, one at a time; "
           f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs "
           "(shared with other work: the maximum is noise, the median is the figure).", "",
           "| file | lines | findings | first check (index built) | edit: median | p90 | max | typed | inserted "
           "| removed | call inserted | server CPU per edit (median) | diagnostics = analyze_source |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        every = sorted(row["all"])  # type: ignore[arg-type]
        p90 = every[min(len(every) - 1, int(len(every) * 0.9))]
        latencies = row["latencies"]
        kinds = [ms(statistics.median(latencies[k])) for k in ("typed", "inserted", "removed", "called")]  # type: ignore[index]
        agree = "yes" if not row["mismatches"] else f"**no** ({row['mismatches']} edits differ)"
        out.append(f"| {row['label']} | {row['lines']} | {row['findings']} | {ms(row['first'])} | "
                   f"**{ms(statistics.median(every))}** | {ms(p90)} | {ms(every[-1])} | {' | '.join(kinds)} | "
                   f"{ms(statistics.median(row['cpu']))} | {agree} |")
    out += ["", "Target (issue 19): re-checking an edited 1,000-line model file answers in 50 ms or less after the "
                "first check.", "",
            "Where an edit's time goes (CPU, median over the same edits, in the benchmark's own process):", "",
            "| file | " + " | ".join(STAGES) + " | total |", "|---|" + "---|" * (len(STAGES) + 1)]
    for row in rows:
        stages = row["stages"]  # type: ignore[index]
        out.append(f"| {row['label']} | " + " | ".join(ms(stages[s]) for s in STAGES + ("total",)) + " |")
    out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=30, help="edits per file (default: 30)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ms-lint-server-") as folder:
        workdir = Path(folder)
        rows = []
        for label, path in prepare(workdir):
            row = measure(label, path, args.edits, workdir)
            row["stages"] = breakdown(path, args.edits)
            rows.append(row)
    report = render(rows, args.edits)
    print(report)
    if not args.no_write:
        RESULTS.write_text(report)
    return 1 if any(row["mismatches"] for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
