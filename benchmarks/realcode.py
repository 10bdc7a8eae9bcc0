"""Score ms-lint against the labelled real-code corpus in benchmarks/realcode/.

    python benchmarks/realcode.py                 # download, check, print and write benchmarks/results/realcode.md
    python benchmarks/realcode.py --check         # also fail (exit 1) when recall or precision fell below the
                                                  # figures last recorded in benchmarks/results/realcode.md
    python benchmarks/realcode.py --no-write      # print only

The wheels are fetched with ``pip download --no-deps`` into ``benchmarks/.realcode/`` (ignored by git) and
unzipped; rows labelled ``mindspore@2.10.0`` are scored on the installed MindSpore. Files named by a row are
labelled whole (see benchmarks/realcode/README.md): a finding at a line of such a file without a row is a false
positive. Findings in files nobody labelled are counted, not scored.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
LABELS = os.path.join(HERE, "realcode")
WORK = os.path.join(HERE, ".realcode")
RESULTS = os.path.join(HERE, "results", "realcode.md")
SCORED = ("MSL101", "MSL102", "MSL103", "MSL201", "MSL301")
FIXABLE = ("MSL101", "MSL102", "MSL201")
RATCHET = re.compile(r"<!-- ratchet: recall=([0-9.]+) precision=([0-9.]+) -->")
# The fix ratchet: how many labelled MSL101/102/201 findings got a safe fix, and a fix at all. A fix may move from
# safe to unsafe (or go) when a rewrite is found unsound; then the recorded figures are lowered by hand, on purpose.
FIX_RATCHET = re.compile(r"<!-- fixes: safe=([0-9]+) fixed=([0-9]+) -->")
# The audit ratchet: how many findings the precision audit (realcode/audit.tsv) judged false positives are still
# reported. It may only go down.
UNJUDGED_LISTED = 40  # the report lists the findings not audited yet when there are this few
AUDIT_RATCHET = re.compile(r"<!-- audit: false-positives=([0-9]+) -->")


@dataclass
class Row:
    package: str
    path: str
    line: int
    expected: str
    reason: str
    changed: str


def read_rows() -> List[Row]:
    rows: List[Row] = []
    for name in sorted(os.listdir(LABELS)):
        if not name.endswith(".tsv") or name in ("causes.tsv", "audit.tsv"):
            continue
        with open(os.path.join(LABELS, name), encoding="utf-8") as handle:
            lines = [line for line in handle if line.strip() and not line.startswith("#")]
        for record in csv.DictReader(lines, delimiter="\t"):
            expected = record["expected"].strip()
            if expected not in SCORED + ("none",):
                raise SystemExit(f"{name}: bad expected code {expected!r} in {record}")
            rows.append(Row(record["package"].strip(), record["path"].strip(), int(record["line"]), expected,
                            record["reason"].strip(), (record.get("changed") or "").strip()))
    return rows


def read_audit() -> Dict[Tuple[str, str, int, str], Tuple[str, str]]:
    """The precision audit of findings in unlabelled files (benchmarks/realcode/audit.tsv):
    (package, path, line, code) -> (TP or FP, reason)."""
    path = os.path.join(LABELS, "audit.tsv")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle if line.strip() and not line.startswith("#")]
    return {(r["package"], r["path"], int(r["line"]), r["code"]): (r["verdict"], r["reason"])
            for r in csv.DictReader(lines, delimiter="\t")}


def read_causes() -> Dict[Tuple[str, str, int], str]:
    """Why each known miss is missed (benchmarks/realcode/causes.tsv), keyed by (package, path, line)."""
    path = os.path.join(LABELS, "causes.tsv")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle if line.strip() and not line.startswith("#")]
    return {(r["package"], r["path"], int(r["line"])): r["cause"] for r in csv.DictReader(lines, delimiter="\t")}


def package_root(package: str) -> str:
    """Folder whose files the rows' paths are relative to (downloaded and unzipped on first use)."""
    name, version = package.split("@")
    if name == "mindspore":
        import mindspore  # the installed one: the verify extra pins 2.10.0

        if mindspore.__version__ != version:
            raise SystemExit(f"rows label mindspore {version}, installed is {mindspore.__version__}")
        return os.path.dirname(os.path.dirname(mindspore.__file__))
    target = os.path.join(WORK, f"{name}-{version}")
    if os.path.isdir(target):
        return target
    wheels = os.path.join(WORK, "wheels")
    os.makedirs(wheels, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", wheels,
                    f"{name}=={version}"], check=True)
    normalized = name.replace("-", "_").lower()
    wheel = next(os.path.join(wheels, w) for w in sorted(os.listdir(wheels))
                 if w.lower().startswith(f"{normalized}-{version}-") and w.endswith(".whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target + ".tmp")
    os.replace(target + ".tmp", target)
    return target


CONFIG: List[str] = []  # extra ``check`` options (``--config`` of a generated pyproject.toml)


def run_ms_lint(root: str, paths: List[str]) -> List[dict]:
    command = [sys.executable, "-m", "ms_lint", "check", "--no-cache", "--exit-zero", "--format", "json", *CONFIG,
               *paths]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    if done.returncode not in (0, 2):
        raise SystemExit(f"ms-lint failed in {root}: {done.stderr[-2000:]}")
    return [f for f in json.loads(done.stdout) if f["code"] in SCORED]


def top_folders(root: str, rows: List[Row]) -> List[str]:
    """What to check in a package: the top-level folders the labelled files live in (the whole package, so
    the project index sees every module)."""
    return sorted({row.path.split("/")[0] for row in rows})


@dataclass
class Score:
    tp: Counter
    fn: Counter
    fp: Counter
    misses: List[Tuple[Row, str]]
    false_positives: List[Tuple[str, dict, str]]
    unscored: Counter
    fixes: Dict[str, Counter]
    no_fix: List[Tuple[str, dict]]
    unlabelled: List[Tuple[str, dict]]  # (package, finding) in files no row labels
    unsafe: List[Tuple[str, dict]] = field(default_factory=list)  # (package, finding) whose fix is unsafe
    packages: Dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))  # package -> tp, fn, fp


def score(rows: List[Row]) -> Score:
    by_package: Dict[str, List[Row]] = defaultdict(list)
    for row in rows:
        by_package[row.package].append(row)
    result = Score(Counter(), Counter(), Counter(), [], [], Counter(), defaultdict(Counter), [], [])
    for package, package_rows in sorted(by_package.items()):
        root = package_root(package)
        findings = run_ms_lint(root, top_folders(root, package_rows))
        labelled_files = {row.path for row in package_rows}
        at: Dict[Tuple[str, int], List[dict]] = defaultdict(list)
        per_file: Dict[str, List[dict]] = defaultdict(list)
        for finding in findings:
            path = finding["path"].replace(os.sep, "/")
            at[(path, finding["line"])].append(finding)
            per_file[path].append(finding)
        rows_at: Dict[Tuple[str, int], Row] = {(row.path, row.line): row for row in package_rows}
        matched: Set[int] = set()
        for row in package_rows:
            if row.expected == "none":
                continue
            if row.expected == "MSL301":
                hits = [f for f in per_file[row.path] if f["code"] == "MSL301"]
            else:
                hits = [f for f in at[(row.path, row.line)] if f["code"] == row.expected]
            if hits:
                result.tp[row.expected] += 1
                result.packages[package]["tp"] += 1
                matched.update(id(f) for f in hits[:1])
            else:
                result.fn[row.expected] += 1
                result.packages[package]["fn"] += 1
                others = [f["code"] for f in per_file[row.path] if f["line"] == row.line]
                result.misses.append((row, f"reported as {', '.join(others)}" if others else "not reported"))
        for finding in findings:
            path = finding["path"].replace(os.sep, "/")
            if path not in labelled_files:
                result.unscored[finding["code"]] += 1
                result.unlabelled.append((package, finding))
                continue
            if finding["code"] in FIXABLE:
                safety = finding["fix"]["applicability"] if finding.get("fix") else "none"
                result.fixes[finding["code"]][safety] += 1
                if safety == "none":
                    result.no_fix.append((package, finding))
                elif safety == "unsafe":
                    result.unsafe.append((package, finding))
            if id(finding) in matched:
                continue
            row = rows_at.get((path, finding["line"]))
            why = f"labelled none: {row.reason}" if row is not None and row.expected == "none" else (
                f"labelled {row.expected}" if row is not None else "no row at this line of a labelled file")
            result.fp[finding["code"]] += 1
            result.packages[package]["fp"] += 1
            result.false_positives.append((package, finding, why))
    return result


def _trimmed(reason: str) -> str:
    """``reason`` without a trailing full stop or the closing parentheses of the text around it (those of its
    own parentheses stay)."""
    reason = reason.rstrip(" .")
    while reason.endswith(")") and reason.count(")") > reason.count("("):
        reason = reason[:-1].rstrip(" .")
    return reason


def no_fix_reason(finding: dict) -> str:
    """The one-line reason a finding comes without a fix, read from its ``detail``: what follows "no automatic
    rewrite:" (or "select:"), or for MSL101 whether the loop is loop-carried or its body is not a shape the
    vmap rewrite builds."""
    text = " ".join((finding.get("detail") or finding["message"]).split())
    match = re.search(r"no automatic (?:rewrite|select)(?::| \()\s*(.*)", text)
    if match:
        reason = _trimmed(match.group(1))
    elif "from the previous one" in text or "does not apply" in text:
        reason = "loop-carried: each iteration reads the previous one's result (ForiLoop/while only as advice)"
    elif "only sums per-slice terms" in text:
        reason = "a sum of per-slice terms: `ms.vmap` + `.sum(axis=0)` only as advice (no rewrite builds it yet)"
    elif "if the iterations are independent" in text or "if the elements are independent" in text:
        reason = "the vmap rewrite does not build this body (it names no refusal)"
    else:
        reason = "no reason given"
    return reason if len(reason) <= 150 else reason[:150].rsplit(" ", 1)[0] + " …"


def unsafe_reason(finding: dict) -> str:
    """The first reason a fix is marked unsafe, read from its message: the text of "(unsafe: ...)", or of the
    message's last parentheses (a trade-off the fix names), up to its first ";" (a fix may give several) and
    before the first ": " outside backquotes (what follows it explains the reason)."""
    text = " ".join(finding["fix"]["message"].split())
    match = re.search(r"\(unsafe: (.*)", text) or re.search(r"\(([^()]*)\)\s*$", text)
    reason = _trimmed(match.group(1).split("; ")[0]) if match else text
    parts = reason.split("`")
    for index in range(0, len(parts), 2):  # outside backquotes
        if ": " in parts[index]:
            parts[index] = parts[index].split(": ")[0]
            reason = "`".join(parts[:index + 1])
            break
    return reason if len(reason) <= 150 else reason[:150].rsplit(" ", 1)[0] + " …"


def grouped_reasons(findings: List[Tuple[str, dict]], reason) -> Dict[Tuple[str, str], List[str]]:
    """(rule, ``reason(finding)`` with quoted code elided) -> the sites that give it."""
    grouped: Dict[Tuple[str, str], List[str]] = defaultdict(list)
    for _package, finding in findings:
        why = re.sub(r"`[^`]*`", "`…`", reason(finding))  # one reason for `square_sum` and `m` alike
        grouped[(finding["code"], why[:160])].append(f"`{finding['path'].rsplit('/', 1)[-1]}:{finding['line']}`")
    return grouped


def reason_lines(grouped: Dict[Tuple[str, str], List[str]]) -> List[str]:
    """One line per reason, the most frequent first within each rule, with up to four sites."""
    ordered = sorted(grouped.items(), key=lambda item: (item[0][0], -len(item[1]), item[0][1]))
    return [f"- {code} ({len(sites)}): {why}; at {', '.join(sites[:4])}{' and more' if len(sites) > 4 else ''}"
            for (code, why), sites in ordered]


def ratio(num: int, den: int) -> Optional[float]:
    return num / den if den else None


def shown(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.2f}"


def report(rows: List[Row], result: Score) -> Tuple[str, float, float]:
    lines = ["# Real-code corpus: recall and precision", "",
             "Written by `python benchmarks/realcode.py` (labels: `benchmarks/realcode/`, policy in its README). "
             "Files named by a row are labelled whole: a finding at a line without a row is a false positive.", "",
             f"{len(rows)} labelled sites in {len({(r.package, r.path) for r in rows})} files of "
             f"{len({r.package for r in rows})} packages: "
             f"{sum(r.expected != 'none' for r in rows)} to flag, "
             f"{sum(r.expected == 'none' for r in rows)} look-alikes.",
             "", "| rule | sites to flag | found | missed | false positives | recall | precision |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for code in SCORED:
        positives = result.tp[code] + result.fn[code]
        lines.append(f"| {code} | {positives} | {result.tp[code]} | {result.fn[code]} | {result.fp[code]} | "
                     f"{shown(ratio(result.tp[code], positives))} | "
                     f"{shown(ratio(result.tp[code], result.tp[code] + result.fp[code]))} |")
    tp, fn, fp = sum(result.tp.values()), sum(result.fn.values()), sum(result.fp.values())
    recall, precision = ratio(tp, tp + fn) or 0.0, ratio(tp, tp + fp) or 0.0
    lines.append(f"| **all** | {tp + fn} | {tp} | {fn} | {fp} | **{recall:.2f}** | **{precision:.2f}** |")
    # the ratchet records the figures rounded down, so that the same result always passes it
    floor = lambda value: math.floor(value * 100 + 1e-9) / 100  # noqa: E731
    lines += ["", f"<!-- ratchet: recall={floor(recall):.2f} precision={floor(precision):.2f} -->", ""]
    lines += package_lines(rows, result)
    lines += ["## Fixes offered on the labelled files (MSL101/102/201 findings)", "",
              "| rule | safe | unsafe | none |", "|---|---:|---:|---:|"]
    for code in FIXABLE:
        counts = result.fixes.get(code, Counter())
        lines.append(f"| {code} | {counts['safe']} | {counts['unsafe']} | {counts['none']} |")
    safe, fixed = fix_counts(result)
    lines += ["", f"<!-- fixes: safe={safe} fixed={fixed} -->"]
    lines += ["", "Real functions with a fix verified in place, inside their unpacked packages, with `ms-lint verify` "
              "(command lines and verdicts): [`verify_realcode.md`](verify_realcode.md).", "",
              "Why the others get none, one line per reason (from each finding's `detail`):", ""]
    lines += reason_lines(grouped_reasons(result.no_fix, no_fix_reason))
    lines += ["", "Why the unsafe ones are unsafe, one line per first reason (from each fix's message):", ""]
    lines += reason_lines(grouped_reasons(result.unsafe, unsafe_reason)) or ["none"]
    causes = read_causes()
    lines += ["", "## Misses", "", "Each with the label's reason and, after `cause:`, why ms-lint misses it "
              "(`benchmarks/realcode/causes.tsv`).", ""]
    lines += [f"- {row.package} `{row.path}:{row.line}` {row.expected} ({why}): {row.reason}; cause: "
              f"{causes.get((row.package, row.path, row.line), 'not yet read')}"
              for row, why in result.misses] or ["none"]
    lines += ["", "## False positives", ""]
    lines += [f"- {package} `{f['path']}:{f['line']}` {f['code']} ({why}): {f['message'][:140]}"
              for package, f, why in result.false_positives] or ["none"]
    lines += ["", "## Findings in files nobody labelled (not scored)", "",
              ", ".join(f"{code}: {n}" for code, n in sorted(result.unscored.items())) or "none", ""]
    lines += audit_report(result)
    return "\n".join(lines), recall, precision


def package_lines(rows: List[Row], result: Score) -> List[str]:
    """Recall and precision per package: the packages labelled after the engine was tuned on the others show
    what a user's code meets (their labels' first comment line says when and how they were labelled)."""
    lines = ["Per package (the labelled files of each):", "",
             "| package | labelled files | sites to flag | found | missed | false positives | recall | precision |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for package in sorted({row.package for row in rows}):
        counts = result.packages.get(package, Counter())
        tp, fn, fp = counts["tp"], counts["fn"], counts["fp"]
        files = len({row.path for row in rows if row.package == package})
        lines.append(f"| {package} | {files} | {tp + fn} | {tp} | {fn} | {fp} | {shown(ratio(tp, tp + fn))} | "
                     f"{shown(ratio(tp, tp + fp))} |")
    return lines + [""]


def audit_counts(result: Score) -> Tuple[Counter, List[Tuple[str, dict, str]], List[Tuple[str, dict]]]:
    """(verdicts of the audited findings still reported, the false positives among them with the audit's reason,
    the findings in unlabelled files the audit has not judged)."""
    audit = read_audit()
    verdicts: Counter = Counter()
    false_positives = []
    unjudged = []
    for package, finding in result.unlabelled:
        found = audit.get((package, finding["path"].replace(os.sep, "/"), finding["line"], finding["code"]))
        if found is None:
            unjudged.append((package, finding))
            continue
        verdicts[found[0]] += 1
        if found[0] == "FP":
            false_positives.append((package, finding, found[1]))
    return verdicts, false_positives, unjudged


def cut_reason(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def audit_report(result: Score) -> List[str]:
    audit = read_audit()
    if not audit:
        return []
    judged = Counter(verdict for verdict, _ in audit.values())
    verdicts, false_positives, unjudged = audit_counts(result)
    still = verdicts["TP"] + verdicts["FP"]
    lines = ["## Precision audit of the findings in unlabelled files", "",
             f"`realcode/audit.tsv` judges {len(audit)} findings ms-lint reported in files no row labels "
             f"({judged['TP']} TP, {judged['FP']} FP when audited: precision "
             f"{shown(ratio(judged['TP'], len(audit)))}). Chosen by the tool's output, they measure precision only.",
             "", f"Still reported now: {still} of them, {verdicts['TP']} TP and {verdicts['FP']} FP (precision "
             f"{shown(ratio(verdicts['TP'], still))}); findings in unlabelled files not audited yet: {len(unjudged)}.",
             "", f"<!-- audit: false-positives={verdicts['FP']} -->", "", "False positives still reported:", ""]
    lines += [f"- {package} `{f['path']}:{f['line']}` {f['code']}: {cut_reason(why)}"
              for package, f, why in false_positives] \
        or ["none"]
    if len(unjudged) <= UNJUDGED_LISTED:
        lines += ["", "Not audited yet:", ""]
        lines += [f"- {package} `{f['path']}:{f['line']}` {f['code']}: {cut_reason(f['message'])}"
                  for package, f in unjudged] or ["none"]
    return lines + [""]


def fix_counts(result: Score) -> Tuple[int, int]:
    """(findings with a safe fix, findings with any fix) among the labelled MSL101/102/201 findings."""
    safe = sum(result.fixes.get(code, Counter())["safe"] for code in FIXABLE)
    return safe, safe + sum(result.fixes.get(code, Counter())["unsafe"] for code in FIXABLE)


def recorded_fixes() -> Optional[Tuple[int, int]]:
    try:
        with open(RESULTS, encoding="utf-8") as handle:
            match = FIX_RATCHET.search(handle.read())
    except OSError:
        return None
    return (int(match.group(1)), int(match.group(2))) if match else None


def recorded_audit() -> Optional[int]:
    try:
        with open(RESULTS, encoding="utf-8") as handle:
            match = AUDIT_RATCHET.search(handle.read())
    except OSError:
        return None
    return int(match.group(1)) if match else None


def recorded() -> Optional[Tuple[float, float]]:
    try:
        with open(RESULTS, encoding="utf-8") as handle:
            match = RATCHET.search(handle.read())
    except OSError:
        return None
    return (float(match.group(1)), float(match.group(2))) if match else None


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when below the recorded recall/precision")
    parser.add_argument("--no-write", action="store_true", help="do not rewrite benchmarks/results/realcode.md")
    parser.add_argument("--unresolved-bases", choices=("cell-if-construct", "not-cell"), default=None,
                        help="score with this [tool.ms-lint] unresolved-bases (implies --no-write)")
    args = parser.parse_args(argv)
    if args.unresolved_bases:
        import tempfile

        folder = tempfile.mkdtemp()
        with open(os.path.join(folder, "pyproject.toml"), "w", encoding="utf-8") as handle:
            handle.write(f'[tool.ms-lint]\nunresolved-bases = "{args.unresolved_bases}"\n')
        CONFIG.extend(["--config", os.path.join(folder, "pyproject.toml")])
        args.no_write = True
    rows = read_rows()
    before, fixes_before, audit_before = recorded(), recorded_fixes(), recorded_audit()
    result = score(rows)
    text, recall, precision = report(rows, result)
    print(text)
    if args.check and before is not None:
        if recall + 1e-9 < before[0] or precision + 1e-9 < before[1]:
            print(f"realcode: recall {recall:.2f} / precision {precision:.2f} fell below the recorded "
                  f"{before[0]:.2f} / {before[1]:.2f}", file=sys.stderr)
            return 1
        print(f"realcode: recall {recall:.2f} >= {before[0]:.2f}, precision {precision:.2f} >= {before[1]:.2f}")
    if args.check and fixes_before is not None:
        safe, fixed = fix_counts(result)
        if safe < fixes_before[0] or fixed < fixes_before[1]:
            print(f"realcode: fixes fell below the recorded figures: {safe} safe (recorded {fixes_before[0]}), "
                  f"{fixed} with a fix (recorded {fixes_before[1]})", file=sys.stderr)
            return 1
        print(f"realcode: fixes {safe} safe >= {fixes_before[0]}, {fixed} with a fix >= {fixes_before[1]}")
    if args.check and audit_before is not None:
        remaining = audit_counts(result)[0]["FP"]
        if remaining > audit_before:
            print(f"realcode: {remaining} audited false positives are reported again (recorded {audit_before})",
                  file=sys.stderr)
            return 1
        print(f"realcode: audited false positives still reported {remaining} <= {audit_before}")
    if not args.no_write and not args.check:
        with open(RESULTS, "w", encoding="utf-8") as handle:
            handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
