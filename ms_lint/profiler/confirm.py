"""``--confirm N``: compile the target again with one finding's fix applied, for the top N fixable findings.

Each rewrite (the fixer's own, unsafe ones included, one at a time) is compiled once in a fresh process with the
same switches, inputs and constructor as the profile, and its ``TotalTime`` is compared with the profile's: the
measured saving goes next to the estimate. Only findings in the profiled file can be confirmed (the rewrite is
imported as a sibling copy of that module).
"""
from __future__ import annotations

import os
from typing import Callable, Optional

from ms_lint.profiler.runner import run_profile
from ms_lint.profiler.session import Profile
from ms_lint.profiler.target import TargetRequest, user_file_test
from ms_lint.verifier.errors import VerifyError


def confirm(profile: Profile, count: int, config, timeout: float, python: Optional[str] = None,
            progress: Callable[[str], None] = lambda _text: None) -> int:
    """Fill ``measured`` of up to ``count`` findings; the number measured."""
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
    baseline = profile.attribution.compile_s
    done = 0
    for item in candidates:
        finding = item.finding
        text = variants.get((finding.code, finding.line, finding.column))
        if text is None or text == source.text:
            item.measured = {"error": "the fixer refused this rewrite here"}
            continue
        progress(f"ms-lint: confirming {profile.display(finding.path)}:{finding.line} {finding.code} ...")
        target = TargetRequest(**{k: v for k, v in args.items() if k != "path"}, path=path)
        try:
            target.prepare(source.text)
            roots = [target.location.root] + [os.path.abspath(d) for d in target.pythonpath]
            run = run_profile(target.request(text, label="confirm"), timeout=timeout,
                              is_user_file=user_file_test(roots), python=python, label="rewritten")
        except VerifyError as exc:
            item.measured = {"error": str(exc)}
            continue
        finally:
            target.cleanup()
        if not run.ok:
            message = " ".join(str((run.error or {}).get("message", "failed")).split())
            item.measured = {"error": f"the rewrite does not compile: {message[:200]}"}
            continue
        saving = baseline - run.compile_s
        item.measured = {"compile_s": round(run.compile_s, 4), "saving_s": round(saving, 4),
                         "saving_share": round(saving / baseline, 4) if baseline > 0 else 0.0,
                         "estimate_s": round(item.seconds, 4), "fix": finding.fix}
        done += 1
    return done
