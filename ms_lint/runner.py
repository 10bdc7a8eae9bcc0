"""Run the analysis over many files: cache lookups first, then the rest on worker processes."""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import List, Optional, Tuple

from ms_lint.cache import ResultsCache
from ms_lint.config import Config
from ms_lint.diagnostics import Finding

# Below this many files to analyze, worker start-up costs more than it saves.
PARALLEL_THRESHOLD = 24


def display_path(path: str) -> str:
    """Paths as the user gave them, relative to the current folder where possible."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") and not path.startswith("..") else rel


def _analyze_one(args: Tuple[str, Config]) -> Tuple[str, List[Finding]]:
    from ms_lint.engine import analyze_path, unanalyzable  # parser imports only in workers that analyze

    path, config = args
    try:
        result = analyze_path(path, config, display_path(path))
        findings = result.findings
    except Exception as exc:  # an ms-lint bug must not end the run: report it on the file
        findings = [unanalyzable(display_path(path), f"internal error ({type(exc).__name__}: {exc})")]
    for finding in findings:
        finding.fix_object = None  # not picklable across processes, not needed by check
    return path, findings


def check_files(files: List[str], config: Config, jobs: Optional[int] = None,
                use_cache: bool = True) -> List[Finding]:
    cache = ResultsCache(config.root, config.fingerprint()) if use_cache else None
    findings: List[Finding] = []
    pending: List[str] = []
    for path in files:
        cached = cache.lookup(path) if cache else None
        if cached is None:
            pending.append(path)
        else:
            shown = display_path(path)
            for finding in cached:
                finding.path = shown
            findings.extend(cached)
    workers = jobs or os.cpu_count() or 1
    if workers > 1 and len(pending) >= PARALLEL_THRESHOLD:
        chunk = max(1, len(pending) // (workers * 8))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_analyze_one, [(p, config) for p in pending], chunksize=chunk))
    else:
        results = [_analyze_one((p, config)) for p in pending]
    for path, file_findings in results:
        findings.extend(file_findings)
        if cache is not None and not any(f.code == "MSL900" and "internal error" in f.message for f in file_findings):
            cache.store(path, file_findings)
    if cache is not None:
        cache.save()
    findings.sort(key=Finding.sort_key)
    return findings
