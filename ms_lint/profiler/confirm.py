"""``--confirm N``: compile the target again with one finding's fix applied, for the top N fixable findings.

Each rewrite (the fixer's own, unsafe ones included, one at a time) is compiled in fresh processes with the same
switches, inputs and constructor as the profile, interleaved with compiles of the original, and the medians of
their ``TotalTime`` are compared: the measured saving goes next to the estimate. Only findings in the profiled
file can be confirmed (the rewrite is imported as a sibling copy of that module).
"""
from __future__ import annotations

import os
from typing import Callable, Optional

from ms_lint.profiler.runner import run_profile
from ms_lint.profiler.session import Profile
from ms_lint.profiler.target import TargetRequest, user_file_test
from ms_lint.verifier.errors import VerifyError


def _median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def confirm(profile: Profile, count: int, config, timeout: float, repeat: int = 3, python: Optional[str] = None,
            progress: Callable[[str], None] = lambda _text: None) -> int:
    """Fill ``measured`` of up to ``count`` findings; the number measured.

    Each rewrite is compiled in ``repeat`` fresh processes, interleaved with as many of the original (the profile's
    own compile is the first): compile times on a loaded machine drift by tens of percent between processes, so
    the saving is the difference of the medians."""
    from ms_lint import fixer
    from ms_lint.source import UnreadableSource, read_source

    args = profile.request_args
    path = args["path"]
    real = os.path.realpath(path)
    try:
        source = read_source(path)
    except UnreadableSource:
        return 0
    candidates = [item for item in profile.attribution.findings
                  if item.finding.path == real and item.finding.fix and item.seconds > 0][:count]
    if not candidates:
        return 0
    variants = {(f.code, f.line, f.column): text for f, text in fixer.single_fix_variants(source, config, path)}
    originals = [profile.attribution.compile_s]
    done = 0
    for item in candidates:
        finding = item.finding
        text = variants.get((finding.code, finding.line, finding.column))
        if text is None or text == source.text:
            item.measured = {"error": "the fixer refused this rewrite here"}
            continue
        progress(f"ms-lint: confirming {profile.display(finding.path)}:{finding.line} {finding.code} "
                 f"({repeat} process(es) per version) ...")
        target = TargetRequest(**{k: v for k, v in args.items() if k != "path"}, path=path)
        rewrites = []
        try:
            target.prepare(source.text)
            roots = [target.location.root] + [os.path.abspath(d) for d in target.pythonpath]
            test = user_file_test(roots)
            for index in range(repeat):
                if len(originals) <= index:
                    run = run_profile(target.request(), timeout=timeout, is_user_file=test, python=python)
                    if run.ok:
                        originals.append(run.compile_s)
                run = run_profile(target.request(text, label="confirm"), timeout=timeout, is_user_file=test,
                                  python=python, label="rewritten")
                if not run.ok:
                    message = " ".join(str((run.error or {}).get("message", "failed")).split())
                    item.measured = {"error": f"the rewrite does not compile: {message[:200]}"}
                    break
                rewrites.append(run.compile_s)
        except VerifyError as exc:
            item.measured = {"error": str(exc)}
        finally:
            target.cleanup()
        if item.measured or not rewrites:
            continue
        baseline, compiled = _median(originals), _median(rewrites)
        saving = baseline - compiled
        item.measured = {"compile_s": round(compiled, 4), "original_s": round(baseline, 4),
                         "saving_s": round(saving, 4), "saving_share": round(saving / baseline, 4) if baseline else 0.0,
                         "estimate_s": round(item.seconds, 4), "processes": len(rewrites), "fix": finding.fix}
        done += 1
    return done
