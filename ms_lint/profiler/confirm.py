"""``--confirm N``: compile the target again with one finding's fix applied, for the top N fixable findings.

Each rewrite (the fixer's own, unsafe ones included, one at a time) is compiled in fresh processes with the same
switches, inputs, constructor or script arguments as the profile, interleaved with compiles of the original, and
the medians of their ``TotalTime`` are compared: the measured saving goes next to the estimate. The finding may be
in any of the user's files the compile reached: the profiled module itself is imported as a sibling copy (as
``ms-lint verify`` does); any other file (a helper module, a sub-cell's module, the script of script mode) is
written as a sibling copy that the child loads under the file's own module name (``overrides``). Copies are
removed afterwards.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, Optional

from ms_lint.profiler.runner import run_profile
from ms_lint.profiler.session import Profile
from ms_lint.profiler.target import TargetRequest, user_file_test
from ms_lint.verifier.errors import VerifyError
from ms_lint.verifier.location import VersionCopies, disk_text, locate


def _median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


class _Versions:
    """The profile's original request, and requests with one of the user's files rewritten."""

    def __init__(self, profile: Profile):
        args = profile.request_args
        self.copies = VersionCopies()
        self.target: Optional[TargetRequest] = None
        self.own: Optional[str] = None
        if profile.mode == "script":
            self.base: Dict[str, Any] = dict(args["request"])
            roots = list(args["roots"])
        else:
            self.target = TargetRequest(**args)
            self.target.prepare(disk_text(args["path"]) or "")
            self.base = self.target.request()
            self.own = os.path.realpath(args["path"])
            roots = [self.target.location.root] + [os.path.abspath(d) for d in self.target.pythonpath]
        self.is_user_file = user_file_test(roots)

    def rewritten(self, path: str, text: str) -> Dict[str, Any]:
        if path == self.own:
            return self.target.request(text, label="confirm")
        copy = self.copies.place(locate(path), "confirm", text)["module_file"]
        return dict(self.base, overrides={path: copy})

    def cleanup(self) -> None:
        self.copies.cleanup()
        if self.target is not None:
            self.target.cleanup()


def confirm(profile: Profile, count: int, config_for: Callable[[str], Any], timeout: float, repeat: int = 3,
            python: Optional[str] = None, progress: Callable[[str], None] = lambda _text: None) -> int:
    """Fill ``measured`` of up to ``count`` findings (``config_for(path)``: the config of a finding's file); the
    number measured.

    Each rewrite is compiled in ``repeat`` fresh processes, interleaved with as many of the original (the profile's
    own compile is the first): compile times on a loaded machine drift by tens of percent between processes, so
    the saving is the difference of the medians."""
    candidates = [item for item in profile.attribution.findings if item.finding.fix and item.seconds > 0][:count]
    if not candidates:
        return 0
    try:
        versions = _Versions(profile)
    except VerifyError as exc:
        for item in candidates:
            item.measured = {"error": str(exc)}
        return 0
    try:
        return _measure(profile, candidates, versions, config_for, timeout, repeat, python, progress)
    finally:
        versions.cleanup()


def _variants(path: str, config_for) -> Optional[Dict]:
    from ms_lint import fixer
    from ms_lint.source import UnreadableSource, read_source

    try:
        source = read_source(path)
    except UnreadableSource:
        return None
    found = fixer.single_fix_variants(source, config_for(path), path)
    return {(f.code, f.line, f.column): text for f, text in found if text != source.text}


def _measure(profile, candidates, versions, config_for, timeout, repeat, python, progress) -> int:
    originals = [profile.attribution.compile_s]
    variants: Dict[str, Optional[Dict]] = {}
    done = 0
    for item in candidates:
        finding = item.finding
        if finding.path not in variants:
            variants[finding.path] = _variants(finding.path, config_for)
        text = (variants[finding.path] or {}).get((finding.code, finding.line, finding.column))
        if text is None:
            item.measured = {"error": "the fixer refused this rewrite here"}
            continue
        progress(f"ms-lint: confirming {profile.display(finding.path)}:{finding.line} {finding.code} "
                 f"({repeat} process(es) per version) ...")
        rewrites = []
        request = versions.rewritten(finding.path, text)
        for index in range(repeat):
            if len(originals) <= index:
                run = run_profile(versions.base, timeout=timeout, is_user_file=versions.is_user_file, python=python)
                if run.ok:
                    originals.append(run.compile_s)
            run = run_profile(request, timeout=timeout, is_user_file=versions.is_user_file, python=python,
                              label="rewritten")
            if not run.ok:
                message = " ".join(str((run.error or {}).get("message", "failed")).split())
                item.measured = {"error": f"the rewrite does not compile: {message[:200]}"}
                break
            rewrites.append(run.compile_s)
        versions.copies.cleanup()
        if item.measured or not rewrites:
            continue
        baseline, compiled = _median(originals), _median(rewrites)
        saving = baseline - compiled
        item.measured = {"compile_s": round(compiled, 4), "original_s": round(baseline, 4),
                         "saving_s": round(saving, 4), "saving_share": round(saving / baseline, 4) if baseline else 0.0,
                         "estimate_s": round(item.seconds, 4), "processes": len(rewrites), "fix": finding.fix,
                         "file": profile.display(finding.path)}
        done += 1
    return done
