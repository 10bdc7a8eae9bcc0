"""``ms-lint profile`` as a function: compile the target once with the profiling switches on, attribute the time.

``profile_function(path, function, ...)`` and ``profile_script(script, argv, ...)`` return a ``Profile``;
a problem the user must act on (no MindSpore, a target that does not compile, a timeout, an unknown function) is
a ``ProfileError`` with a one-line message.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ms_lint.profiler.attribution import Attribution, FindingCost, attribute
from ms_lint.profiler.runner import ProfileRun, run_profile
from ms_lint.profiler.target import TargetRequest, user_file_test
from ms_lint.verifier.errors import VerifyError

CALL_DEPTH_ITERATIONS = 500  # MindSpore 2.10 CPU: 480 iterations of a one-line body compile, 520 exceed depth 1000
_TRIP = re.compile(r"runs (\d+) iterations")


class ProfileError(Exception):
    """A one-line message for the user (exit 2)."""


@dataclass
class Profile:
    target: str
    mode: str  # "function" | "script"
    run: ProfileRun
    attribution: Attribution
    display: Callable[[str], str]
    inputs: str = ""
    device: str = "CPU"
    stopped: Optional[str] = None
    notes: List[str] = field(default_factory=list)
    request_args: Dict[str, Any] = field(default_factory=dict)  # what --confirm needs to compile a rewrite

    @property
    def explained(self) -> List[FindingCost]:
        return [f for f in self.attribution.findings if f.seconds > 0]

    def summary(self) -> str:
        total = self.attribution.compile_s
        explained = self.explained
        seconds = sum(f.seconds for f in explained)
        blind = self.attribution.blind()
        many = len(explained) != 1
        text = (f"{len(explained)} finding{'s' if many else ''} explain{'' if many else 's'} {_s(seconds)}"
                f" of {_s(total)} compile time ({_pct(self.attribution.share(seconds))})")
        if blind:
            text += (f"; {len(blind)} costly line{'s' if len(blind) != 1 else ''} without a finding "
                     f"({_s(sum(c.seconds for c in blind))})")
        return text


def _s(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def _pct(share: float) -> str:
    return f"{share * 100:.0f}%"


def display_path(path: str) -> str:
    real = os.path.realpath(path)
    cwd = os.path.realpath(os.getcwd())
    if real.startswith(cwd + os.sep):
        return os.path.relpath(real, cwd)
    return real


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def default_findings(path: str) -> list:
    from ms_lint.config import ConfigSet
    from ms_lint.engine import analyze_source
    from ms_lint.source import UnreadableSource, read_source

    try:
        source = read_source(path)
    except UnreadableSource:
        return []
    return analyze_source(source, ConfigSet().for_path(path), path).findings


def predicted_failures(findings: Sequence[Any], inside: Callable[[Any], bool]) -> List[str]:
    """Failures known before compiling: an unrolled constant loop of ``CALL_DEPTH_ITERATIONS`` or more."""
    out = []
    for finding in findings:
        if finding.code != "MSL103" or not inside(finding):
            continue
        match = _TRIP.search(finding.message)
        if match and int(match.group(1)) >= CALL_DEPTH_ITERATIONS:
            out.append(f"{display_path(finding.path)}:{finding.line}: the loop runs {match.group(1)} iterations "
                       f"unrolled, which exceeds MindSpore's call-depth limit of 1000 (about 2 calls per iteration; "
                       f"{CALL_DEPTH_ITERATIONS} already fail): it will not compile; fix it "
                       "(ms-lint fix --unsafe-fixes) or pass --force to try anyway")
    return out


def _run_error(run: ProfileRun, what: str) -> ProfileError:
    error = run.error or {}
    kind = error.get("kind")
    message = " ".join(str(error.get("message", "unknown error")).split())
    if kind in ("mindspore-missing", "mindspore-broken", "numpy-missing", "device-unavailable", "timeout",
                "no-profile", "no-compile"):
        return ProfileError(f"cannot profile {what}: {message}")
    if kind in ("call-failed", "crashed"):
        return ProfileError(f"{what} does not compile: {message}")
    return ProfileError(f"cannot profile {what}: {message}")


def _findings_for(paths: Sequence[str], findings_for: Callable[[str], list]) -> list:
    out = []
    seen = set()
    for path in paths:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        for finding in findings_for(path):
            if finding.code != "MSL900":
                out.append(_Located(finding, real))
    return out


class _Located:
    """A finding whose ``path`` is the real path (the IR's), the original kept for output."""

    def __init__(self, finding, real):
        self.original = finding
        self.path = real
        self.line, self.end_line = finding.line, finding.end_line
        self.code, self.message, self.fix = finding.code, finding.message, finding.fix
        self.column = finding.column


def _attribute(run: ProfileRun, extra_files: Sequence[str], findings_for) -> Attribution:
    touched = set(extra_files)
    for graph in run.graphs:
        for counts in graph.values():
            touched.update(path for path, _ in counts.lines)
    findings = _findings_for(sorted(touched), findings_for)
    real = {}

    def real_path(path):
        if path not in real:
            real[path] = os.path.realpath(path)
        return real[path]

    for graph in run.graphs:  # the IR's paths are as Python imported them: compare real paths
        for counts in graph.values():
            counts.lines = _rekey(counts.lines, real_path)
            counts.texts = _rekey(counts.texts, real_path)
            counts.functions = {(real_path(p), line, name): n for (p, line, name), n in counts.functions.items()}
    return attribute(run.compiles, run.graphs, findings, _read)


def _rekey(mapping: Dict, real_path) -> Dict:
    out: Dict = {}
    for (path, line), value in mapping.items():
        key = (real_path(path), line)
        out[key] = out[key] + value if key in out and isinstance(value, int) else out.get(key, value)
    return out


def profile_function(path: str, function: str, *, inputs: Optional[str] = None, init: Optional[str] = None,
                     setup: Optional[str] = None, setup_name: Optional[str] = None, pythonpath: Sequence[str] = (),
                     device: str = "CPU", timeout: float = 300.0, verify_config: Optional[Mapping] = None,
                     findings_for: Callable[[str], list] = default_findings, force: bool = False,
                     python: Optional[str] = None) -> Profile:
    from ms_lint.verifier.targets import target_contains

    source = _read(path)
    if source is None:
        raise ProfileError(f"{path}: cannot read it")
    target = TargetRequest(path, function, device=device, inputs=inputs, init=init, setup=setup,
                           setup_name=setup_name, pythonpath=pythonpath, verify_config=verify_config)
    if not force:
        own = findings_for(path)
        predicted = predicted_failures(own, lambda f: target_contains(source, function, f.line))
        if predicted:
            raise ProfileError(f"not compiled: {predicted[0]}")
    try:
        target.prepare(source)
    except VerifyError as exc:
        raise ProfileError(f"{path}: {exc}") from None
    try:
        roots = [target.location.root] + [os.path.abspath(d) for d in pythonpath]
        run = run_profile(target.request(), timeout=timeout, is_user_file=user_file_test(roots), python=python)
    finally:
        target.cleanup()
    what = f"{display_path(path)} {function}"
    if not run.ok:
        raise _run_error(run, what)
    attribution = _attribute(run, [path], findings_for)
    profile = Profile(target=what, mode="function", run=run, attribution=attribution, display=display_path,
                      inputs=target.inputs_text, device=device)
    profile.request_args = dict(path=path, function=function, device=device, inputs=inputs, init=init, setup=setup,
                                setup_name=setup_name, pythonpath=list(pythonpath), verify_config=verify_config)
    return profile


def profile_script(script: str, argv: Sequence[str] = (), *, compiles: int = 1, pythonpath: Sequence[str] = (),
                   device: str = "CPU", timeout: float = 300.0, findings_for: Callable[[str], list] = default_findings,
                   python: Optional[str] = None) -> Profile:
    from ms_lint.verifier.location import locate

    if _read(script) is None:
        raise ProfileError(f"{script}: cannot read it")
    script = os.path.abspath(script)
    roots = [os.path.dirname(script), locate(script).root] + [os.path.abspath(d) for d in pythonpath]
    request = {"script": script, "argv": list(argv), "compiles": compiles, "device": device,
               "pythonpath": [os.path.abspath(d) for d in pythonpath], "display_path": script}
    run = run_profile(request, timeout=timeout, is_user_file=user_file_test(roots), python=python, label="script")
    what = display_path(script)
    if not run.ok:
        raise _run_error(run, what)
    attribution = _attribute(run, [script], findings_for)
    profile = Profile(target=what, mode="script", run=run, attribution=attribution, display=display_path,
                      device=device, stopped=run.result.get("stopped"))
    profile.request_args = {"request": request, "roots": roots}
    if run.result.get("script_error"):
        profile.notes.append(f"the script failed after {run.result.get('compiles')} compile(s): "
                             f"{run.result['script_error']}")
    return profile
