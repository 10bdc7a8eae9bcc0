"""Script mode: verify a compile-cache fix (MSL301, MSL302) by running the whole script, as its user does.

A compile-cache fix changes nothing a function returns; what it changes is the *next run* of the script. So the
script runs four times, each a fresh ``python SCRIPT ARGS`` with the compile-cache variables removed from the
environment: twice as it is and twice with the fix applied (interleaved: without, with, without, with). Each
version has its own private working folder, kept across its two runs, so the second run with the fix finds the
cache the first one wrote. The fixed script is a copy next to the original (its imports and ``__file__``-relative
paths resolve the same way), removed afterwards; ``MS_COMPILER_CACHE_PATH`` is set to the private folder for the
runs with the fix, which the fix's ``os.environ.setdefault`` keeps, so no cache lands beside the script.

The verdict compares stdout (every run with the fix must print what the script prints without it: a stale graph
served from the cache shows up here) and the wall time of the second runs, against the spread of the two runs
without the fix.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence

from ms_lint.verifier.child import scrub_cache_env
from ms_lint.verifier.location import VersionCopies, locate
from ms_lint.verifier.runner import Verification, format_s, kill_group

SCRIPT_CODES = ("MSL301", "MSL302")
MIN_REL_NOISE = 0.05
ABS_NOISE_S = 0.05
OUTPUT_FILES = ("stdout.txt", "stderr.txt")


def _env(cache_dir: Optional[str], script_dir: str, extra_path: Sequence[str]) -> Dict[str, str]:
    env = dict(os.environ)
    scrub_cache_env(env)
    env.pop("MS_JIT", None)
    env.setdefault("GLOG_v", "3")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ beside the user's modules
    paths = [p for p in extra_path if p]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    if cache_dir:
        env["MS_COMPILER_CACHE_PATH"] = cache_dir
    return env


def _run_once(python: str, script: str, args: Sequence[str], workdir: str, env: Dict[str, str], timeout: float,
              index: int) -> Dict[str, Any]:
    out_path = os.path.join(workdir, f"stdout{index}.txt")
    err_path = os.path.join(workdir, f"stderr{index}.txt")
    record_path = os.path.join(workdir, f"timing{index}.json")
    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "script_child.py")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([python, runner, record_path, script, *args], cwd=workdir, env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except BaseException as exc:  # timeout, Ctrl-C: never leave the script (its own session) behind
            kill_group(proc)
            if not isinstance(exc, subprocess.TimeoutExpired):
                raise
            return {"ok": False, "timeout": True, "wall_s": time.perf_counter() - start, "stdout": "",
                    "stderr": ""}
        wall = time.perf_counter() - start
    with open(out_path, "rb") as handle:
        stdout = handle.read().decode("utf-8", "replace")
    with open(err_path, "rb") as handle:
        stderr = handle.read().decode("utf-8", "replace")
    timing: Dict[str, Any] = {}
    try:
        with open(record_path) as handle:
            timing = json.load(handle)
    except (OSError, ValueError):
        pass
    for name in (out_path, err_path, record_path):
        try:
            os.unlink(name)
        except OSError:
            pass
    return {"ok": code == 0, "code": code, "wall_s": wall, "script_s": timing.get("script_s", wall),
            "import_s": timing.get("import_s"), "stdout": stdout, "stderr": stderr, "timeout": False}


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _masked_compare(a1: str, a2: str, b: str) -> Optional[List[str]]:
    """Lines of ``b`` that differ from the runs without the fix, ignoring lines that differ between those two runs
    (timings, dates). None when the two runs without the fix do not even have the same number of lines."""
    la, la2, lb = a1.splitlines(), a2.splitlines(), b.splitlines()
    if len(la) != len(la2):
        return None
    if len(lb) != len(la):
        return [f"{len(lb)} lines instead of {len(la)}"]
    diffs = []
    for number, (x, x2, y) in enumerate(zip(la, la2, lb), start=1):
        if x == x2 and x != y:
            diffs.append(f"line {number}: {x[:80]!r} vs {y[:80]!r}")
    return diffs


def _files_under(folder: str) -> int:
    count = 0
    for _, _, names in os.walk(folder):
        count += len(names)
    return count


def verify_script(original_source: str, fixed_source: str, *, path: str, code: Optional[str] = None,
                  line: Optional[int] = None, script_args: Sequence[str] = (), timeout: float = 300,
                  python: Optional[str] = None, pythonpath: Sequence[str] = ()) -> Verification:
    """Run ``path`` twice without and twice with the fix; compare stdout and the second runs' wall time."""
    started = time.perf_counter()
    python = python or sys.executable
    verification = Verification(function="<script>", verdict="error", message="", path=path, code=code, line=line,
                                repeat=2, draws=1)
    verification.mode = "script"
    verification.script_args = list(script_args)
    location = locate(path)
    script_dir = os.path.dirname(location.path)
    copies = VersionCopies()
    folders = {"original": tempfile.mkdtemp(prefix="ms-lint-verify-script-original-"),
               "fixed": tempfile.mkdtemp(prefix="ms-lint-verify-script-fixed-")}
    try:
        fixed_file = copies.place(location, "fixed", fixed_source)["module_file"]
        extra = [script_dir] if os.path.dirname(fixed_file) != script_dir else []
        extra += [os.path.abspath(p) for p in pythonpath]
        cache_dir = os.path.join(folders["fixed"], "ms_compile_cache")
        envs = {"original": _env(None, script_dir, [os.path.abspath(p) for p in pythonpath]),
                "fixed": _env(cache_dir, script_dir, extra)}
        scripts = {"original": location.path, "fixed": fixed_file}
        runs: Dict[str, List[Dict[str, Any]]] = {"original": [], "fixed": []}
        for index in range(2):
            for label in ("original", "fixed"):
                run = _run_once(python, scripts[label], list(script_args), folders[label], envs[label], timeout,
                                index)
                runs[label].append(run)
                if run["timeout"]:
                    verification.message = (f"cannot verify: run {index + 1} of the script "
                                            f"{'with' if label == 'fixed' else 'without'} the fix did not finish "
                                            f"within {timeout:g} s; raise --timeout or make the run shorter "
                                            "(--script-args)")
                    return _done(verification, runs, started)
                if not run["ok"]:
                    return _failed(verification, label, index, run, runs, started)
                if label == "fixed" and index == 0:
                    verification.script_cache_files = _files_under(folders["fixed"])
        return _judge_script(verification, runs, started)
    finally:
        copies.cleanup()
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)


def _done(verification: Verification, runs, started: float) -> Verification:
    verification.script_runs = {label: [round(r["script_s"], 3) for r in items] for label, items in runs.items()}
    verification.script_runs.update({f"{label}_wall": [round(r["wall_s"], 3) for r in items]
                                     for label, items in runs.items()})
    verification.elapsed_s = time.perf_counter() - started
    return verification


def _failed(verification: Verification, label: str, index: int, run, runs, started: float) -> Verification:
    why = _last_line(run["stderr"]) or f"exit status {run['code']}"
    if label == "original":
        verification.verdict = "error"
        verification.message = (f"cannot verify: the script fails without the fix (exit status {run['code']}: "
                                f"{why}); give it the arguments it needs with --script-args \"...\"")
    else:
        verification.verdict = "rewrite-failed"
        verification.message = (f"the script fails with the fix on run {index + 1} (exit status {run['code']}: "
                                f"{why}); it runs without it")
    return _done(verification, runs, started)


def _judge_script(verification: Verification, runs, started: float) -> Verification:
    a1, a2 = runs["original"]
    b1, b2 = runs["fixed"]
    _done(verification, runs, started)
    problems: List[str] = []
    unknown = False
    for name, run in (("first", b1), ("second", b2)):
        diffs = _masked_compare(a1["stdout"], a2["stdout"], run["stdout"])
        if diffs is None:
            unknown = True
            break
        problems.extend(f"{name} run with the fix, {d}" for d in diffs)
    lines = len(a1["stdout"].splitlines())
    verification.script_stdout_lines = lines
    if unknown:
        verification.outputs_match = None
        verification.verdict = "error"
        verification.message = ("cannot verify: the script prints a different number of lines on two runs without "
                                "the fix, so its output cannot be compared; make its output deterministic")
        return verification
    verification.outputs_match = not problems
    verification.differences = problems
    if problems:
        verification.verdict = "mismatch"
        verification.message = ("with the fix the script prints something else (" + "; ".join(problems[:3]) +
                                "): the compile cache served a stale graph, or the fix changed the run; keep the "
                                "cache off for this script")
        return verification
    t_a = [a1["script_s"], a2["script_s"]]
    spread = abs(t_a[0] - t_a[1]) / max(min(t_a), 1e-9)
    margin = max(spread, MIN_REL_NOISE)
    verification.script_spread = spread
    before, after = a2["script_s"], b2["script_s"]
    verification.compile_speedup = before / after if after > 0 else None
    timing = (f"second run {format_s(before)} -> {format_s(after)} "
              f"({before / after:.2f}x), first run {format_s(a1['script_s'])} -> {format_s(b1['script_s'])} (the "
              f"script after `import mindspore`; whole process, second run: {format_s(a2['wall_s'])} -> "
              f"{format_s(b2['wall_s'])})")
    same = "same stdout on all four runs" if lines else "the script prints nothing, so only its exit status is compared"
    cache = getattr(verification, "script_cache_files", 0)
    if before > after * (1 + margin) + ABS_NOISE_S:
        verification.verdict = "verified"
        verification.message = (f"{same}; with the cache the second run is {before / after:.1f}x faster: {timing}")
    elif after > before * (1 + margin) + ABS_NOISE_S:
        verification.verdict = "slower"
        verification.message = f"{same}, but the second run with the cache is slower: {timing}"
    else:
        verification.verdict = "verified"
        verification.message = (f"{same}; no measurable change in the second run (within the {margin:.0%} spread of "
                                f"the two runs without the fix): {timing}")
        if not cache:
            verification.message += "; the first run with the fix wrote no cache files, so the cache did not turn on"
    if not lines and verification.verdict == "verified":
        verification.message += "; print the results to compare them"
    if verification.code == "MSL302":
        verification.message += (" (MSL302: the original already caches through the deprecated set_context keys, "
                                 "so equal times are the expected result; the fix keeps the cache on without them)")
    return verification
