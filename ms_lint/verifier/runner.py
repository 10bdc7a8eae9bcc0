"""Run an original and a rewritten module in fresh processes, compare them, and give a verdict.

``verify_pair`` is the entry point. Each version runs ``repeat`` times, each time in its own fresh Python subprocess
(``python -m ms_lint.verifier.child``), in a private temporary working directory, with the compile-cache environment
variables removed, on the chosen device. Runs of the two versions are interleaved so that drift in machine load hits
both alike. The numbers reported are medians over the processes.

Verdicts:

* ``verified``: outputs (and gradients with ``grad=True``) match, and the rewrite is not slower to compile nor to run
  (beyond a noise margin).
* ``tradeoff``: outputs match; the rewrite wins on one of compile time / run time and loses on the other.
  ``break_even_calls`` says where the totals cross (see ``tradeoff_kind``).
* ``slower``: outputs match but the rewrite is slower and wins on nothing.
* ``mismatch``: outputs or gradients differ.
* ``original-failed``: the original fails (e.g. ``Exceed function call depth limit``) and the rewrite runs: the
  rewrite fixes a real crash. Outputs can't be compared.
* ``rewrite-failed``: the rewrite fails to import, compile or run (also when both fail).
* ``error``: the verification itself could not be done: MindSpore missing, device unavailable, timeout, inputs that
  don't fit the function in either version.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ms_lint.verifier.child import ENV_KINDS, scrub_cache_env
from ms_lint.verifier.compare import compare_trees, load_leaves
from ms_lint.verifier.errors import VerifyError
from ms_lint.verifier.inputs import (
    ArraySpec,
    has_random,
    ScalarSpec,
    TensorSpec,
    encode_values,
    generate,
    required_parameters,
    resolve_inputs,
    suggest_types,
)
from ms_lint.verifier.location import VersionCopies, disk_text, locate
from ms_lint.verifier.targets import constructor_needs, defined_targets, enclosing_target

VERDICTS = ("verified", "tradeoff", "slower", "mismatch", "original-failed", "rewrite-failed", "inputs-invalid",
            "error")
ERROR_VERDICTS = ("error", "inputs-invalid")  # exit 2: the verification could not be done as asked
ACCEPTED = ("verified", "tradeoff")
DEVICES = ("CPU", "GPU", "Ascend")
SETUP_KINDS = ("import-error", "setup-failed", "target-not-found", "init-failed", "bad-inputs")
RUN_KINDS = ("call-failed", "grad-failed", "output-unsupported", "crashed")

# noise margins: a difference smaller than this is "the same". With two or more processes per version the relative
# margin is the measured spread instead (see ``_margins``); the absolute floors stay.
REL_NOISE = 0.20
COMPILE_ABS_NOISE_S = 0.03
RUN_ABS_NOISE_S = 30e-6
MIN_REL_SPREAD = 0.02  # timer and scheduling jitter: never claim a change smaller than this
SPREAD_COMPILE_ABS_NOISE_S = 0.005
DEFAULT_DRAWS = 3

STEADY_CALLS = 20


@dataclass
class VersionStats:
    """What one version did over its processes (medians)."""

    ok: bool = False
    compile_s: Optional[float] = None
    run_ms: Optional[float] = None
    peak_mb: Optional[float] = None
    first_call_s: Optional[float] = None
    runs: int = 0
    error: Optional[Dict[str, Any]] = None
    notes: List[str] = field(default_factory=list)
    compile_samples_s: List[float] = field(default_factory=list)  # one per process
    run_samples_ms: List[float] = field(default_factory=list)

    @property
    def compile_spread(self) -> Optional[float]:
        """(max - min) / median of the compile times over the processes; None with fewer than two."""
        return _spread(self.compile_samples_s)

    @property
    def run_spread(self) -> Optional[float]:
        return _spread(self.run_samples_ms)

    def to_json(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {
            "compile_s": _round(self.compile_s, 4),
            "run_ms": _round(self.run_ms, 4),
            "peak_mb": _round(self.peak_mb, 1),
            "first_call_s": _round(self.first_call_s, 4),
            "runs": self.runs,
            "compile_samples_s": [_round(v, 4) for v in self.compile_samples_s],
            "run_samples_ms": [_round(v, 4) for v in self.run_samples_ms],
            "compile_spread": _round(self.compile_spread, 4),
            "run_spread": _round(self.run_spread, 4),
        }
        if self.error:
            data["error"] = dict(self.error)
        if self.notes:
            data["notes"] = list(self.notes)
        return data


@dataclass
class Verification:
    """The outcome of verifying one rewrite."""

    function: str
    verdict: str
    message: str
    path: Optional[str] = None
    code: Optional[str] = None
    line: Optional[int] = None
    outputs_match: Optional[bool] = None
    grads_match: Optional[bool] = None
    differences: List[str] = field(default_factory=list)
    original: VersionStats = field(default_factory=VersionStats)
    rewritten: VersionStats = field(default_factory=VersionStats)
    compile_speedup: Optional[float] = None
    run_ratio: Optional[float] = None
    break_even_calls: Optional[int] = None
    tradeoff_kind: Optional[str] = None  # "faster-compile-slower-run" | "slower-compile-faster-run"
    device: str = "CPU"
    inputs: str = ""
    inputs_origin: str = ""
    init: Optional[str] = None
    repeat: int = 3
    rtol: float = 1e-5
    atol: float = 1e-6
    grad: bool = False
    elapsed_s: float = 0.0
    draws: int = 1
    seeds: List[int] = field(default_factory=list)
    draws_note: str = ""
    branches: List[Dict[str, Any]] = field(default_factory=list)  # ms_lint.verifier.branches.coverage
    branches_note: str = ""
    one_sided: List[str] = field(default_factory=list)  # "else of the if at line 12": never ran in any draw
    params_compared: bool = False  # a Cell's Parameters after every call were compared too
    mode: str = "function"  # "script": a compile-cache fix, verified by running the script (ms_lint.verifier.script)
    script_args: List[str] = field(default_factory=list)
    script_runs: Dict[str, List[float]] = field(default_factory=dict)  # wall seconds per run, per version
    script_cache_files: int = 0
    script_stdout_lines: int = 0
    script_spread: Optional[float] = None

    @property
    def accepted(self) -> bool:
        """True for verified and tradeoff (what ``fix --verified-only --accept-tradeoff`` applies)."""
        return self.verdict in ACCEPTED

    def to_json(self) -> Dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "function": self.function,
            "code": self.code,
            "verdict": self.verdict,
            "outputs_match": self.outputs_match,
            "grads_match": self.grads_match,
            "original": self.original.to_json(),
            "rewritten": self.rewritten.to_json(),
            "compile_speedup": _round(self.compile_speedup, 3),
            "run_ratio": _round(self.run_ratio, 3),
            "break_even_calls": self.break_even_calls,
            "tradeoff_kind": self.tradeoff_kind,
            "message": self.message,
            "differences": list(self.differences),
            "device": self.device,
            "inputs": self.inputs,
            "inputs_origin": self.inputs_origin,
            "init": self.init,
            "repeat": self.repeat,
            "rtol": self.rtol,
            "atol": self.atol,
            "grad": self.grad,
            "elapsed_s": _round(self.elapsed_s, 2),
            "draws": self.draws,
            "seeds": list(self.seeds),
            "branches": [dict(entry) for entry in self.branches],
            "branches_unexercised": list(self.one_sided),
            "params_compared": self.params_compared,
            "mode": self.mode,
            **({"script": {"args": list(self.script_args), "wall_s": dict(self.script_runs),
                           "cache_files": self.script_cache_files, "stdout_lines": self.script_stdout_lines,
                           "spread": _round(self.script_spread, 4),
                           "second_run_speedup": _round(self.compile_speedup, 3)}}
               if self.mode == "script" else {}),
        }


def _round(value: Optional[float], digits: int) -> Optional[float]:
    if value is None:
        return None
    return round(float(value), digits)


def _median(values: List[float]) -> Optional[float]:
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    n = len(values)
    mid = n // 2
    return values[mid] if n % 2 else (values[mid - 1] + values[mid]) / 2


def _spread(values: List[float]) -> Optional[float]:
    values = [v for v in values if v is not None]
    if len(values) < 2:
        return None
    middle = _median(values)
    if not middle or middle <= 0:
        return None
    return (max(values) - min(values)) / middle


def _package_root() -> str:
    """The directory holding the ms_lint package (ms_lint/verifier/runner.py -> three levels up)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _is_site_dir(path: str) -> bool:
    import site

    dirs = []
    try:
        dirs.extend(site.getsitepackages())
    except AttributeError:  # some virtualenv versions
        pass
    try:
        dirs.append(site.getusersitepackages())
    except AttributeError:
        pass
    norm = os.path.normcase(os.path.realpath(path))
    return any(norm == os.path.normcase(os.path.realpath(d)) for d in dirs if d)


def child_env(base: Optional[Mapping[str, str]] = None, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The environment for a child: no compile cache, ms_lint importable, quiet MindSpore logs."""
    env = dict(os.environ if base is None else base)
    scrub_cache_env(env)
    env.pop("MS_JIT", None)
    env.update(extra or {})
    root = _package_root()
    if not _is_site_dir(root):  # a source checkout: make ms_lint importable (never put site-packages first)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("GLOG_v", "3")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@dataclass
class _Run:
    ok: bool
    result: Dict[str, Any]
    leaves: Optional[Dict[str, Any]] = None
    error: Optional[Dict[str, Any]] = None


def _tail(path: str, limit: int = 1500) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def run_version(
    source: str,
    *,
    function: str,
    label: str,
    display_path: Optional[str],
    module_dir: Optional[str],
    init: Optional[str],
    device: str,
    inputs_file: Optional[str],
    input_order: List[str],
    scalars: Dict[str, Any],
    grad: bool,
    timeout: float,
    python: str,
    jit: str = "auto",
    steady_calls: int = STEADY_CALLS,
    keep_workdir: bool = False,
    module: Optional[Mapping[str, Any]] = None,
    setup: Optional[str] = None,
    setup_name: Optional[str] = None,
    inputs_tree: Optional[Mapping[str, Any]] = None,
    extra_draws: Sequence[Mapping[str, Any]] = (),
    probe: bool = False,
) -> _Run:
    """One fresh process running one version once.

    ``module`` says how to import this version (``module_file``, ``module_name``, ``in_place``, ``package``,
    ``sys_root``, ``pythonpath``, ``display_module``: see ``ms_lint.verifier.location``); without it the source is
    written to the private folder and loaded as a standalone module.
    """
    workdir = tempfile.mkdtemp(prefix=f"ms-lint-verify-{label}-")
    try:
        if module is None:
            src_dir = os.path.join(workdir, "src")
            os.mkdir(src_dir)
            basename = os.path.basename(display_path) if display_path else f"{label}.py"
            if not basename.endswith(".py"):
                basename += ".py"
            module_file = os.path.join(src_dir, basename)
            with open(module_file, "w", encoding="utf-8") as handle:
                handle.write(source)
        else:
            module_file = module["module_file"]
        request = {
            "module_file": module_file,
            "module_dir": module_dir,
            "display_path": display_path or f"<{label}>",
            "function": function,
            "init": init,
            "device": device,
            "inputs_file": inputs_file,
            "input_order": input_order,
            "scalars": scalars,
            "steady_calls": steady_calls,
            "grad": grad,
            "jit": jit,
            "setup": setup,
            "setup_name": setup_name,
            "inputs_tree": dict(inputs_tree) if inputs_tree else None,
            "extra_draws": [dict(d) for d in extra_draws],
            "probe": bool(probe),
        }
        if module is not None:
            request.update({k: v for k, v in module.items() if k != "module_file"})
            request["module_dir"] = None
        request_file = os.path.join(workdir, "request.json")
        with open(request_file, "w") as handle:
            json.dump(request, handle)
        stdout_path = os.path.join(workdir, "stdout.txt")
        stderr_path = os.path.join(workdir, "stderr.txt")
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            try:
                proc = subprocess.Popen(
                    [python, "-m", "ms_lint.verifier.child", request_file],
                    cwd=workdir,
                    env=child_env(extra={"MS_JIT": "0"} if probe else None),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                )
            except OSError as exc:
                error = {"kind": "internal", "message": f"cannot start {python}: {exc}"}
                return _Run(False, {"error": error}, error=error)
            try:
                returncode = proc.wait(timeout=timeout)
            except BaseException as exc:  # timeout, Ctrl-C: never leave the child (its own session) behind
                kill_group(proc)
                if not isinstance(exc, subprocess.TimeoutExpired):
                    raise
                error = {"kind": "timeout",
                         "message": f"the {label} version did not finish within {timeout:g} s "
                                    f"(stuck at: {_read(os.path.join(workdir, 'stage.txt')) or 'start'})"}
                return _Run(False, {"error": error}, error=error)
        result_path = os.path.join(workdir, "result.json")
        if not os.path.exists(result_path):
            stage = _read(os.path.join(workdir, "stage.txt")) or "start"
            how = f"signal {-returncode}" if returncode < 0 else f"exit status {returncode}"
            if returncode < 0:
                try:
                    how = f"signal {signal.Signals(-returncode).name}"
                except ValueError:
                    pass
            tail = _tail(stderr_path)
            kind = "crashed" if stage in ("first-call", "steady", "grad") else "internal"
            error = {"kind": kind, "message": f"the {label} process died ({how}) during {stage}"
                                              + (f"; its last output: {tail[-600:]}" if tail else "")}
            return _Run(False, {"error": error, "stage": stage}, error=error)
        with open(result_path) as handle:
            result = json.load(handle)
        if not result.get("ok"):
            return _Run(False, result, error=result.get("error") or {"kind": "internal", "message": "unknown"})
        leaves = load_leaves(os.path.join(workdir, "outputs.npz"))
        return _Run(True, result, leaves=leaves)
    finally:
        if not keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return ""


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _normalize_device(device: str) -> str:
    for name in DEVICES:
        if str(device).lower() == name.lower():
            return name
    raise VerifyError(f"unknown device {device!r}: expected one of {', '.join(DEVICES)}")


def _stats(runs: List[_Run]) -> VersionStats:
    stats = VersionStats(runs=len(runs))
    good = [r for r in runs if r.ok]
    if runs and not good:
        stats.error = runs[0].error
    stats.ok = bool(good) and len(good) == len(runs)
    if not good:
        if runs:
            stats.peak_mb = runs[0].result.get("peak_mb")
        return stats
    compiles, steadies, firsts, peaks = [], [], [], []
    for run in good:
        first = run.result["first_call_s"]
        steady = run.result["run_s"]
        firsts.append(first)
        steadies.append(steady)
        compiles.append(max(first - steady, 1e-6))
        if run.result.get("peak_mb") is not None:
            peaks.append(run.result["peak_mb"])
    stats.compile_samples_s = list(compiles)
    stats.run_samples_ms = [max(v, 1e-9) * 1e3 for v in steadies]
    stats.compile_s = _median(compiles)
    stats.first_call_s = _median(firsts)
    run_s = _median(steadies)
    stats.run_ms = None if run_s is None else max(run_s, 1e-9) * 1e3
    stats.peak_mb = _median(peaks)
    for run in good:
        for note in run.result.get("notes", []):
            if note not in stats.notes:
                stats.notes.append(note)
    if len(good) != len(runs):
        bad = next(r for r in runs if not r.ok)
        stats.error = bad.error
    return stats


def format_s(seconds: Optional[float]) -> str:
    if seconds is None:
        return "?"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.0f} ms"
    return f"{seconds:.2f} s"


def format_ms(ms: Optional[float]) -> str:
    if ms is None:
        return "?"
    if ms < 1:
        return f"{ms * 1e3:.0f} us"
    if ms < 1000:
        return f"{ms:.3g} ms" if ms < 100 else f"{ms:.0f} ms"
    return f"{ms / 1e3:.2f} s"


def _margins(orig: VersionStats, rew: VersionStats) -> Dict[str, Any]:
    """The relative margins a change must exceed to count, and how they were found.

    With two or more processes per version: the larger of the two versions' spreads ((max - min) / median of the
    per-process numbers), at least ``MIN_REL_SPREAD``; with one process there is no spread, and the fixed
    ``REL_NOISE`` is used."""
    out: Dict[str, Any] = {}
    for what, spreads, abs_noise in (
        ("compile", (orig.compile_spread, rew.compile_spread), SPREAD_COMPILE_ABS_NOISE_S),
        ("run", (orig.run_spread, rew.run_spread), RUN_ABS_NOISE_S),
    ):
        if None in spreads:
            out[what] = (REL_NOISE, COMPILE_ABS_NOISE_S if what == "compile" else RUN_ABS_NOISE_S, False)
        else:
            out[what] = (max(max(spreads), MIN_REL_SPREAD), abs_noise, True)
    return out


def spread_text(orig: VersionStats, rew: VersionStats) -> str:
    """``compile 4% / 9%, run 2% / 3% (original / rewrite: max-min over the median, 3 + 3 processes)``, or why
    there is none."""
    if orig.compile_spread is None or rew.compile_spread is None:
        return f"not measured (one process per version: --repeat 2 or more); margin {REL_NOISE:.0%}"

    def pct(value: Optional[float]) -> str:
        return "?" if value is None else f"{value * 100:.0f}%"

    return (f"compile {pct(orig.compile_spread)} / {pct(rew.compile_spread)}, run {pct(orig.run_spread)} / "
            f"{pct(rew.run_spread)} (original / rewrite: max-min over the median, {len(orig.compile_samples_s)}"
            f" + {len(rew.compile_samples_s)} processes)")


def decide(orig: VersionStats, rew: VersionStats) -> Dict[str, Any]:
    """Speedup, ratio, break-even and verdict for two versions whose outputs match.

    A change counts only when it is larger than the spread of the repeated measurements (``_margins``): within
    it, the message says "no measurable change" and gives the spread."""
    oc, rc = orig.compile_s, rew.compile_s
    orun, rrun = orig.run_ms / 1e3, rew.run_ms / 1e3
    compile_speedup = oc / rc if rc > 0 else None
    run_ratio = rrun / orun if orun > 0 else None
    margins = _margins(orig, rew)
    c_rel, c_abs, c_measured = margins["compile"]
    r_rel, r_abs, r_measured = margins["run"]

    compile_worse = rc > oc * (1 + c_rel) + c_abs
    compile_better = oc > rc * (1 + c_rel) + c_abs
    run_worse = rrun > orun * (1 + r_rel) + r_abs
    run_better = orun > rrun * (1 + r_rel) + r_abs

    out: Dict[str, Any] = {"compile_speedup": compile_speedup, "run_ratio": run_ratio, "break_even_calls": None,
                           "tradeoff_kind": None}
    speed = f"compile {format_s(oc)} -> {format_s(rc)} ({_factor(oc, rc)}), run {format_ms(orig.run_ms)} -> " \
            f"{format_ms(rew.run_ms)} per call ({_factor(orun, rrun)})"
    if compile_better and run_worse:
        calls = (oc - rc) / (rrun - orun)
        out["break_even_calls"] = max(1, int(math.ceil(round(calls, 6))))
        out["tradeoff_kind"] = "faster-compile-slower-run"
        out["verdict"] = "tradeoff"
        out["message"] = (f"outputs match; {speed}. The rewrite saves {format_s(oc - rc)} of compile time but costs "
                          f"{format_ms((rrun - orun) * 1e3)} more per call: it is a net win for processes that make "
                          f"fewer than ~{out['break_even_calls']} calls, a net loss above that")
    elif compile_worse and run_better:
        calls = (rc - oc) / (orun - rrun)
        out["break_even_calls"] = max(1, int(math.ceil(round(calls, 6))))
        out["tradeoff_kind"] = "slower-compile-faster-run"
        out["verdict"] = "tradeoff"
        out["message"] = (f"outputs match; {speed}. The rewrite costs {format_s(rc - oc)} more compile time but saves "
                          f"{format_ms((orun - rrun) * 1e3)} per call: it pays off after ~{out['break_even_calls']} "
                          "calls per process")
    elif compile_worse or run_worse:
        out["verdict"] = "slower"
        what = " and ".join(w for w, bad in (("compiles slower", compile_worse), ("runs slower", run_worse)) if bad)
        out["message"] = f"outputs match but the rewrite {what} and gains nothing: {speed}"
    else:
        out["verdict"] = "verified"
        same = [what for what, better in (("compile", compile_better), ("run", run_better)) if not better]
        if c_measured and r_measured:
            within = {"compile": f"the compile ratio {_ratio(oc, rc)} is within the {c_rel:.0%} spread "
                                 f"(+ {format_s(c_abs)})",
                      "run": f"the run ratio {_ratio(orun, rrun)} is within the {r_rel:.0%} spread "
                             f"(+ {format_ms(r_abs * 1e3)})"}
            noise = " and ".join(within[w] for w in same) + " of the repeated measurements"
        else:
            noise = f"within the noise margin of {REL_NOISE:.0%} + {format_s(COMPILE_ABS_NOISE_S)} compile / " \
                    f"{format_ms(RUN_ABS_NOISE_S * 1e3)} run (one process per version: no spread measured)"
        if len(same) == 2:
            out["message"] = (f"outputs match; no measurable change in compile or run time ({noise}): {speed}")
        elif same:
            gained = "compiles" if compile_better else "runs"
            out["message"] = (f"outputs match; the rewrite {gained} faster and its {same[0]} time shows no "
                              f"measurable change ({noise}): {speed}")
        else:
            out["message"] = f"outputs match and the rewrite compiles and runs faster: {speed}"
    return out


def _ratio(before: Optional[float], after: Optional[float]) -> str:
    """How much slower the rewrite is (``1.08x``); below 1 it is faster."""
    if not before or not after:
        return "?"
    return f"{after / before:.2f}x"


def _factor(before: Optional[float], after: Optional[float]) -> str:
    if not before or not after:
        return "?"
    if after <= before:
        return f"{before / after:.1f}x faster"
    return f"{after / before:.1f}x slower"


def verify_pair(
    original_source: str,
    rewritten_source: str,
    *,
    function: str,
    inputs: Union[None, str, Mapping[str, Any]] = None,
    device: str = "CPU",
    repeat: int = 3,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    grad: bool = False,
    timeout: float = 300,
    init: Optional[str] = None,
    path: Optional[str] = None,
    code: Optional[str] = None,
    line: Optional[int] = None,
    seed: int = 0,
    python: Optional[str] = None,
    jit: str = "auto",
    pyproject: Optional[str] = None,
    verify_config: Optional[Mapping[str, Any]] = None,
    keep_workdirs: bool = False,
    pythonpath: Sequence[str] = (),
    setup: Optional[str] = None,
    setup_name: Optional[str] = None,
    inputs_source: Optional[str] = None,
    draws: int = DEFAULT_DRAWS,
    branch_lines: Sequence[int] = (),
) -> Verification:
    """Run both versions of a module ``repeat`` times each in fresh processes and judge the rewrite.

    ``function`` is ``name``, ``Class`` (a Cell, built with ``init`` or its defaults) or ``Class.method``.
    ``inputs`` is a spec string (``"x=float32[100,2]; n=int:4"``), a dict (name -> type string, Python scalar or
    numpy array), or None to take it from a ``# ms-lint: inputs=`` comment above the function in
    ``original_source`` or from ``[tool.ms-lint.verify]`` (``verify_config``, the loaded table, else the
    pyproject.toml given as ``pyproject`` or nearest ``path``).
    With ``path``, the module is imported inside its package (``ms_lint.verifier.location``): the version whose
    text is the file on disk in place, the other as a sibling copy removed afterwards; ``pythonpath`` folders come
    next on ``sys.path``. ``setup`` (statements; ``setup_name`` names them in messages) runs in the module's
    namespace before ``init``. ``inputs_source`` is the text whose ``# ms-lint:`` comments give the inputs when
    ``original_source`` has none for the target (the working tree when the original is an older revision).
    ``draws`` input draws (seeds ``seed``, ``seed + 1``, ...) are compared in every process: the first one is
    timed, the others reuse its compiled graph. ``branch_lines`` are lines of the original whose tensor ``if`` (or
    conditional expression) a rewrite replaced (MSL201): one more process runs a probed copy of the original in
    PyNative mode on every draw and reports which branches ran (``ms_lint.verifier.branches``).
    ``timeout`` is per process. ``jit="auto"`` wraps a target that is not already ``ms.jit``-decorated (or a Cell)
    in ``ms.jit`` so it is compiled as graph code.

    Raises VerifyError for a bad request (bad input spec, unknown device name, bad numbers). Every problem found
    while running (MindSpore missing, device unavailable, timeout, a crash) comes back as a verdict.
    """
    started = time.perf_counter()
    if not isinstance(function, str) or not function.strip():
        raise VerifyError("function must name the function to verify: 'name', 'Class' or 'Class.method'")
    function = function.strip()
    device = _normalize_device(device)
    if not isinstance(repeat, int) or repeat < 1:
        raise VerifyError(f"repeat must be a positive integer, got {repeat!r}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not isinstance(value, (int, float)) or value < 0 or math.isnan(value):
            raise VerifyError(f"{name} must be a non-negative number, got {value!r}")
    if not timeout or timeout <= 0:
        raise VerifyError(f"timeout must be positive, got {timeout!r}")
    if jit not in ("auto", "always", "never"):
        raise VerifyError(f"jit must be 'auto', 'always' or 'never', got {jit!r}")
    if not isinstance(draws, int) or draws < 1:
        raise VerifyError(f"draws must be a positive integer, got {draws!r}")

    resolved = resolve_inputs(original_source, function, path=path, inputs=inputs, init=init, pyproject=pyproject,
                              verify_config=verify_config)
    if inputs_source is not None and inputs_source != original_source:
        other = resolve_inputs(inputs_source, function, path=path, inputs=inputs, init=init, pyproject=pyproject,
                               verify_config=verify_config)
        if resolved.origin == "none":
            resolved.specs, resolved.origin = other.specs, other.origin
        if resolved.init is None:
            resolved.init = other.init
    verification = Verification(
        function=function, verdict="error", message="", path=path, code=code, line=line, device=device,
        inputs=resolved.text, inputs_origin=resolved.origin, init=resolved.init, repeat=repeat, rtol=float(rtol),
        atol=float(atol), grad=bool(grad),
    )
    if resolved.specs and not has_random(resolved.specs):
        if draws > 1:
            verification.draws_note = "the inputs have no random part: one draw"
        draws = 1
    verification.draws = draws
    verification.seeds = [int(seed) + k for k in range(draws)]
    if not resolved.specs:
        required = required_parameters(original_source, function)
        if required is None and function.split(".")[0] not in defined_targets(original_source):
            known = ", ".join(defined_targets(original_source)) or "none"
            verification.message = (f"cannot verify: {function!r} is not defined at the top level of the module "
                                    f"(top-level functions and classes: {known})")
            return verification
        if required:
            suggested = suggest_types(original_source, function, required)
            verification.message = (
                f"cannot verify {function}: it takes ({', '.join(required)}) and no inputs were given; pass "
                f"--inputs \"{'; '.join(f'{p}={suggested[p]}' for p in required)}\" (your shapes, dtypes and values; "
                "tuple(N*dtype[shape]) for a tuple, None, int:4 / float:0.5 / bool:true for Python values), put a "
                f"'# ms-lint: inputs=...' comment above the function, or add {function} to [tool.ms-lint.verify] "
                "in pyproject.toml"
            )
            return verification

    if resolved.init is None:
        needed = constructor_needs(original_source, function)
        if needed:
            verification.message = needed
            verification.original.error = {"kind": "init-failed", "message": needed}
            verification.elapsed_s = time.perf_counter() - started
            return verification
    if setup:
        try:
            compile(setup, setup_name or "--setup", "exec")
        except SyntaxError as exc:
            raise VerifyError(f"{setup_name or '--setup'}: line {exc.lineno}: {exc.msg}") from None

    try:
        import numpy as np
    except ImportError:
        verification.message = ("numpy is not installed: the verifier needs it (and MindSpore); install "
                                "`ms-lint[verify]`")
        verification.elapsed_s = time.perf_counter() - started
        return verification

    python = python or sys.executable
    module_dir = os.path.dirname(os.path.abspath(path)) if path else None
    sources = {"original": original_source, "rewritten": rewritten_source}
    shared = tempfile.mkdtemp(prefix="ms-lint-verify-inputs-")
    copies = VersionCopies()
    try:
        modules: Dict[str, Optional[Dict[str, Any]]] = {"original": None, "rewritten": None}
        if path:
            location = locate(path)
            on_disk = disk_text(location.path)
            base = {"package": location.package, "sys_root": location.root,
                    "pythonpath": [os.path.abspath(d) for d in pythonpath], "display_module": location.module}
            for label, text in sources.items():
                if text == on_disk:
                    modules[label] = dict(base, module_file=location.path, module_name=location.module,
                                          in_place=True)
                else:
                    modules[label] = dict(base, **copies.place(location, label, text))
        arrays: Dict[str, Any] = {}
        trees = []
        for index, draw_seed in enumerate(verification.seeds):
            draw_tree, _ = encode_values(generate(resolved.specs, seed=draw_seed), arrays, prefix=f"d{index}_")
            trees.append(draw_tree)
        tree = trees[0]
        scalars: Dict[str, Any] = {}
        inputs_file = None
        if arrays:
            inputs_file = os.path.join(shared, "inputs.npz")
            np.savez(inputs_file, **arrays)
        common = dict(function=function, display_path=path, module_dir=module_dir, init=resolved.init,
                      device=device, inputs_file=inputs_file, input_order=[s.name for s in resolved.specs],
                      scalars=scalars, grad=bool(grad), timeout=float(timeout), python=python, jit=jit,
                      keep_workdir=keep_workdirs, setup=setup, setup_name=setup_name, inputs_tree=tree,
                      extra_draws=trees[1:])
        runs: Dict[str, List[_Run]] = {"original": [], "rewritten": []}
        failed_for_good = set()
        for _ in range(repeat):
            for label in ("original", "rewritten"):
                if label in failed_for_good:
                    continue
                run = run_version(sources[label], label=label, module=modules[label], **common)
                runs[label].append(run)
                if not run.ok:
                    kind = (run.error or {}).get("kind")
                    if kind in ENV_KINDS or kind == "timeout":
                        return _finish_error(verification, label, run, runs, started)
                    # a program failure is deterministic enough: don't pay for it again
                    failed_for_good.add(label)
        judged = _judge(verification, runs, rtol, atol, started, original_source, [s.name for s in resolved.specs])
        if branch_lines and judged.verdict not in ERROR_VERDICTS:
            _branch_coverage(judged, original_source, branch_lines, modules["original"], copies, path, common)
            judged.elapsed_s = time.perf_counter() - started
        return judged
    finally:
        copies.cleanup()
        shutil.rmtree(shared, ignore_errors=True)


def verify_finding(
    original_source: str,
    rewritten_source: str,
    finding: Any,
    *,
    function: Optional[str] = None,
    path: Optional[str] = None,
    **options: Any,
) -> Verification:
    """``verify_pair`` for one finding's rewrite (``finding`` has ``.line``, ``.code`` and ``.path``).

    The target is ``function`` if given, else ``finding.function`` (set by the fixer; None for a module-level
    fix gives an ``error`` verdict), else -- for objects without that attribute -- the top-level function enclosing
    the finding (``func``, ``Class`` for code in ``construct``, ``Class.method``). For ``fix --verified-only``:
    apply when ``result.accepted`` (or only ``result.verdict == "verified"`` without ``--accept-tradeoff``).
    """
    line = getattr(finding, "line", None)
    code = getattr(finding, "code", None)
    path = path or getattr(finding, "path", None)
    # the fixer names what runs the fix's code (finding.function, None for module-level fixes); for an object
    # without that attribute, find the enclosing def
    if function:
        target = function
    elif hasattr(finding, "function"):
        target = finding.function
    else:
        target = enclosing_target(original_source, line) if line else None
    if not target:
        return Verification(
            function="<module>", verdict="error", path=path, code=code, line=line,
            device=str(options.get("device", "CPU")),
            message=f"the finding at line {line} is not inside a function or class: there is nothing to call; "
                    "name the entry point with --function",
        )
    return verify_pair(original_source, rewritten_source, function=target, path=path, code=code, line=line,
                       **options)


def _finish_error(verification: Verification, label: str, run: _Run, runs: Dict[str, List[_Run]],
                  started: float) -> Verification:
    verification.original = _stats(runs["original"])
    verification.rewritten = _stats(runs["rewritten"])
    error = run.error or {}
    kind = error.get("kind")
    message = error.get("message", "unknown error")
    if kind in ("mindspore-missing", "device-unavailable", "numpy-missing", "mindspore-broken"):
        verification.message = f"cannot verify: {message}"
    elif kind == "timeout":
        verification.message = f"cannot verify: {message}; raise the timeout or use smaller inputs"
    else:
        verification.message = f"cannot verify ({label} run): {message}"
    verification.verdict = "error"
    verification.elapsed_s = time.perf_counter() - started
    return verification


def _error_text(stats: VersionStats) -> str:
    error = stats.error or {}
    return error.get("message", "unknown error")


def _branch_coverage(verification: Verification, original_source: str, lines: Sequence[int],
                     module: Optional[Dict[str, Any]], copies: VersionCopies, path: Optional[str],
                     common: Dict[str, Any]) -> None:
    """Run the probed original (PyNative, ``MS_JIT=0``) on every draw; record which branches ran."""
    from ms_lint.verifier import branches

    chains = branches.find_chains(original_source, lines)
    if not chains:
        return
    probed = branches.instrument(original_source, chains)
    probe_module = None
    if path and module is not None:
        location = locate(path)
        probe_module = dict(module, **copies.place(location, "probe", probed))
    options = dict(common, grad=False, steady_calls=0)
    run = run_version(probed, label="probe", module=probe_module, probe=True, **options)
    if not run.ok:
        verification.branches_note = ("branch coverage unknown: the original does not run in PyNative mode with "
                                      f"MS_JIT=0 ({(run.error or {}).get('message', 'unknown error')})")
        verification.branches = branches.coverage(chains, [None] * verification.draws)
        return
    per_draw = run.result.get("branch_counts") or []
    verification.branches = branches.coverage(chains, per_draw)
    errors = run.result.get("probe_errors") or []
    if errors:
        verification.branches_note = f"the probed PyNative run failed on {'; '.join(errors)[:300]}"
    one_sided, never = [], []
    for entry in verification.branches:
        what = "if" if entry["kind"] == "if" else "conditional expression"
        missing = branches.unexercised(entry)
        if missing and len(missing) == len(entry["branches"]):
            never.append(f"the {what} at line {entry['line']}")
        one_sided.extend(f"{name} of the {what} at line {entry['line']}" for name in missing)
    verification.one_sided = one_sided
    if one_sided and verification.verdict not in ("original-failed", "rewrite-failed"):
        draws = f"{verification.draws} draw{'s' if verification.draws != 1 else ''}"
        if never:
            verification.message += (f". {', '.join(never).capitalize()} ran in none of the {draws}: these inputs "
                                     "never reach the rewritten code, so it is unchecked; call it through a function "
                                     "that reaches it, or change the inputs")
        sides = [side for side in one_sided if not any(side.endswith(n.removeprefix("the ")) for n in never)]
        if sides:
            verification.message += (f". Only one side was exercised: the {', '.join(sides)} ran in none of the "
                                     f"{draws}, so the rewrite is unchecked there; choose inputs (or value ranges) "
                                     "that reach it")


def _normalized_error(stats: VersionStats) -> Optional[str]:
    """The failure without what differs between the two copies of the module (file names, line numbers)."""
    import re

    error = stats.error or {}
    if error.get("kind") not in RUN_KINDS:
        return None
    text = error.get("message", "")
    text = re.sub(r"_ms_lint_verify_\w+", "MODULE", text)
    text = re.sub(r"(\.py)?:\d+", ":N", text)
    text = re.sub(r"line \d+", "line N", text)
    return text


def _input_hint(source: str, lines: Sequence[int], names: Sequence[str], path: Optional[str]) -> str:
    """Which inputs the failing line reads: ``change x (the original fails at model.py:12, which reads it)``."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = None
    wanted = set(names)
    if tree is not None:
        for line in lines:
            used = []
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.lineno == line and node.id in wanted and node.id not in used:
                    used.append(node.id)
            if used:
                return (f"change {', '.join(used)}: the original fails at {path or '<source>'}:{line}, which "
                        f"reads {'it' if len(used) == 1 else 'them'}")
    if names:
        return (f"check the shapes, dtypes and values of the inputs ({', '.join(names)}) against what the function "
                "expects")
    return "the function fails without inputs: check --init and --setup"


def _judge(verification: Verification, runs: Dict[str, List[_Run]], rtol: float, atol: float,
           started: float, original_source: str = "", input_names: Sequence[str] = ()) -> Verification:
    orig = verification.original = _stats(runs["original"])
    rew = verification.rewritten = _stats(runs["rewritten"])
    # a version that failed in any of its processes has failed (a flaky crash is still a crash)
    orig_ok = bool(runs["original"]) and all(r.ok for r in runs["original"])
    rew_ok = bool(runs["rewritten"]) and all(r.ok for r in runs["rewritten"])
    verification.elapsed_s = time.perf_counter() - started

    if not orig_ok and not rew_ok:
        ok_kind = (orig.error or {}).get("kind")
        rw_kind = (rew.error or {}).get("kind")
        if ok_kind in SETUP_KINDS and ok_kind == rw_kind:
            verification.verdict = "error"
            verification.message = f"cannot run either version: {_error_text(orig)}"
        elif _normalized_error(orig) is not None and _normalized_error(orig) == _normalized_error(rew):
            failed = next(r for r in runs["original"] if not r.ok)
            hint = _input_hint(original_source, failed.result.get("error_lines") or [], input_names,
                               verification.path)
            verification.verdict = "inputs-invalid"
            verification.message = (f"inputs invalid for the original: both versions fail the same way "
                                    f"({_error_text(orig)}); {hint}")
        else:
            verification.verdict = "rewrite-failed"
            verification.message = (f"both versions fail. original: {_error_text(orig)} | rewrite: "
                                    f"{_error_text(rew)}")
        return verification
    if not orig_ok:
        verification.verdict = "original-failed"
        verification.message = (
            f"the original fails ({_error_text(orig)}); the rewrite compiles in {format_s(rew.compile_s)} and runs "
            f"in {format_ms(rew.run_ms)} per call: this rewrite fixes a real crash (outputs cannot be compared)"
        )
        return verification
    if not rew_ok:
        verification.verdict = "rewrite-failed"
        verification.message = f"the rewrite fails: {_error_text(rew)} (the original runs)"
        return verification

    first_orig = next(r for r in runs["original"] if r.ok)
    first_rew = next(r for r in runs["rewritten"] if r.ok)
    so = first_orig.result["structure"]
    sr = first_rew.result["structure"]
    outputs = compare_trees(so["outputs"], first_orig.leaves, sr["outputs"], first_rew.leaves, rtol=rtol, atol=atol)
    verification.outputs_match = outputs.match
    verification.differences = list(outputs.differences)
    grads_note = ""
    if verification.grad:
        if "grads" in so and "grads" in sr:
            grads = compare_trees(so["grads"], first_orig.leaves, sr["grads"], first_rew.leaves, rtol=rtol,
                                  atol=atol, path="grad")
            verification.grads_match = grads.match
            verification.differences.extend(grads.differences)
            wrt = first_orig.result.get("grad_wrt")
            grads_note = f" and gradients w.r.t. {', '.join(wrt)}" if wrt else ""
    draws_o = so.get("draws") or []
    draws_r = sr.get("draws") or []
    for index, (do, dr) in enumerate(zip(draws_o, draws_r), start=1):
        seed = verification.seeds[index] if index < len(verification.seeds) else index
        cmp = compare_trees(do["outputs"], first_orig.leaves, dr["outputs"], first_rew.leaves, rtol=rtol,
                            atol=atol, path=f"draw {index} (seed {seed}) output")
        if not cmp.match:
            outputs.match = False
            verification.outputs_match = False
            verification.differences.extend(cmp.differences)
        if verification.grad and "grads" in do and "grads" in dr:
            gcmp = compare_trees(do["grads"], first_orig.leaves, dr["grads"], first_rew.leaves, rtol=rtol,
                                 atol=atol, path=f"draw {index} (seed {seed}) grad")
            if not gcmp.match:
                verification.grads_match = False
                verification.differences.extend(gcmp.differences)
    if "params" in so and "params" in sr:
        pcmp = compare_trees(so["params"], first_orig.leaves, sr["params"], first_rew.leaves, rtol=rtol, atol=atol,
                             path="parameter after every call")
        verification.params_compared = True
        if not pcmp.match:
            outputs.match = False
            verification.outputs_match = False
            verification.differences.extend(pcmp.differences)
    nondeterministic = _nondeterministic(runs["original"], rtol, atol)

    if not outputs.match or verification.grads_match is False:
        what = "outputs differ" if not outputs.match else "outputs match but gradients differ"
        verification.verdict = "mismatch"
        verification.message = f"{what}: {'; '.join(verification.differences[:4])}"
        if nondeterministic:
            verification.message += " (note: the original itself gives different outputs in different processes)"
        return verification

    decision = decide(orig, rew)
    verification.verdict = decision["verdict"]
    verification.compile_speedup = decision["compile_speedup"]
    verification.run_ratio = decision["run_ratio"]
    verification.break_even_calls = decision["break_even_calls"]
    verification.tradeoff_kind = decision["tradeoff_kind"]
    message = decision["message"]
    if grads_note:
        message = message.replace("outputs match", "outputs" + grads_note + " match", 1)
    verification.message = message
    return verification


def _nondeterministic(runs: List[_Run], rtol: float, atol: float) -> bool:
    good = [r for r in runs if r.ok]
    if len(good) < 2:
        return False
    base = good[0]
    for other in good[1:]:
        cmp = compare_trees(base.result["structure"]["outputs"], base.leaves, other.result["structure"]["outputs"],
                            other.leaves, rtol=rtol, atol=atol)
        if not cmp.match:
            return True
    return False


__all__ = ["Verification", "VersionStats", "verify_pair", "verify_finding", "decide", "VERDICTS", "ACCEPTED",
           "VerifyError", "TensorSpec", "ScalarSpec", "ArraySpec"]
