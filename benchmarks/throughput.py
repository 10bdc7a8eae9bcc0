"""Throughput of ``ms-lint check`` (cold, warm, one file edited) against flake8 and ruff, on the same files.

    python benchmarks/throughput.py                      # the three corpus kinds: MindSpore's source (if installed),
                                                         # the eight model packages, the generated Cell-heavy corpus
    python benchmarks/throughput.py --corpus packages,cells   # a comma-separated choice of corpora
    python benchmarks/throughput.py --corpus synthetic   # the small mostly-framework synthetic corpus (corpus.py)
    python benchmarks/throughput.py --corpus PATH        # any folder of Python files

Corpora: ``mindspore`` (the installed package's source), ``packages`` (the eight packages of the real-code corpus,
mindformers 2.1.0 ... mindarmour 2.0.0, fetched with ``pip download --no-deps`` into ``benchmarks/.realcode/`` by
``benchmarks/realcode.py`` when missing), ``cells`` (``benchmarks/cell_corpus.py``: a 55k-line file of 3,000 Cells
and a package of 150 Cell modules), ``synthetic`` (``benchmarks/corpus.py``).

Each corpus is copied (``.py`` files only) into a temporary folder, so the edited-file runs never touch the
original. The commands run in rounds, one of each per round, so a noisy neighbour slows all of them alike:

* ``ms-lint check --no-cache``         cold: every file read, pre-filtered, the rest parsed and analyzed
* ``ms-lint check`` (empty cache)      first run: cold, and the results cache and fingerprints written
* ``ms-lint check``                    warm: results cache filled, nothing changed
* ``ms-lint check`` after ``touch``    one file gets a new mtime, same content (the cache compares digests)
* ``ms-lint check`` after an edit      one file (the largest that defines ``construct``) gets a new comment line
* ``ms-lint check`` after a new call   the same file gets a line with a call at the top of its first ``construct``
                                        (its summary changes: the cross-file fingerprints are worked out again)
* ``flake8 -j N``                      flake8's default plugins (pycodestyle, pyflakes, mccabe); ms-lint's own flake8
                                        plugin is left out, so this is flake8 as users know it
* ``ruff check --select ALL --no-cache``

Printed and written to ``benchmarks/results/throughput.md``: median wall time, its spread, lines/s, CPU time
(user+sys of the process and its workers), peak memory of the largest single process (``ru_maxrss`` from
``wait4``: a worker's peak, or the whole tool when it is one process), and ms-lint's time over flake8's and
ruff's. No psutil needed.
"""
from __future__ import annotations

import argparse
import ast
import compileall
import datetime
import importlib.metadata
import importlib.util
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import corpus as synthetic  # noqa: E402  (benchmarks/corpus.py)

# The eight model packages of the real-code corpus (benchmarks/realcode/), as ``name@version``.
PACKAGES = ("mindformers@2.1.0", "mindspore-rl@0.7.0", "mindpet@1.0.4", "mindspore-gs@1.4.1", "mindflow-gpu@0.2.0",
            "mindearth-gpu@0.2.0", "mindsponge-gpu@1.0.0rc1", "mindarmour@2.0.0")
CORPORA = ("mindspore", "packages", "cells")  # what ``auto`` runs

DEFAULT_OUTPUT = os.path.join(HERE, "results", "throughput.md")

# flake8 with the plugins it ships with: the ms-lint distribution registers a flake8 plugin, which would make
# "flake8" mean "flake8 + ms-lint" here. Filter it out before flake8 loads its plugins.
FLAKE8_DEFAULT = """\
import sys
from flake8.plugins import finder
_find = finder._find_importlib_plugins
finder._find_importlib_plugins = lambda: (
    p for p in _find() if finder.utils.normalize_pypi_name(p.package) != "ms-lint")
from flake8.main.cli import main
sys.exit(main())
"""


@dataclass
class Sample:
    wall: float
    cpu: float
    max_rss_mb: float
    code: int


@dataclass
class Series:
    name: str
    command: str
    samples: List[Sample] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(s.wall for s in self.samples)

    @property
    def cpu(self) -> float:
        return statistics.median(s.cpu for s in self.samples)

    @property
    def max_rss_mb(self) -> float:
        return max(s.max_rss_mb for s in self.samples)


def measure(argv: Sequence[str], cwd: str, env: Optional[Dict[str, str]] = None) -> Sample:
    """Wall time, CPU time and peak RSS of one command and the processes it waits for (``wait4``)."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr_chunks = []
    # read stderr while waiting, or a chatty tool blocks on a full pipe
    while True:
        chunk = proc.stderr.read(65536) if proc.stderr else b""
        if not chunk:
            break
        stderr_chunks.append(chunk)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    if proc.stderr:
        proc.stderr.close()
    rss = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    err = b"".join(stderr_chunks).decode(errors="replace")
    # 1: findings; 2 from ms-lint also means "some file is unanalyzable" (MSL900), a result, not a failure
    if code not in (0, 1, 2) or "Traceback" in err or "error:" in err:
        raise RuntimeError(f"{' '.join(argv[:4])}... exited {code}:\n{err[-2000:]}")
    return Sample(wall=wall, cpu=usage.ru_utime + usage.ru_stime, max_rss_mb=rss, code=code)


# -- corpora ------------------------------------------------------------------------------------------------------
def copy_python_files(source: str, dest: str) -> None:
    for folder, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        rel = os.path.relpath(folder, source)
        for name in filenames:
            if name.endswith(".py"):
                os.makedirs(os.path.join(dest, rel), exist_ok=True)
                shutil.copy2(os.path.join(folder, name), os.path.join(dest, rel, name))


def copy_folder(source: str, root: str) -> None:
    """A package folder's Python files under its own name, ``root/mindspore/...``, as in a checkout: ``mindspore.x``
    imports then resolve to the copied modules. (Copied straight to ``root``, the package took the root's folder
    name and those imports went unresolved: the MindSpore corpus lost 5 of its 58 findings and the cross-module
    work behind them before 2026-12-03.)"""
    copy_python_files(source, os.path.join(root, os.path.basename(source.rstrip(os.sep))))


def mindspore_source() -> Optional[str]:
    """The installed ``mindspore`` package folder, found without importing it."""
    spec = importlib.util.find_spec("mindspore")
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def copy_packages(dest: str) -> None:
    """The eight packages' Python files, each under ``dest/<name>-<version>/`` (downloaded when missing)."""
    import realcode  # benchmarks/realcode.py: pip download --no-deps + unzip, cached in benchmarks/.realcode/

    for package in PACKAGES:
        name, version = package.split("@")
        copy_python_files(realcode.package_root(package), os.path.join(dest, f"{name}-{version}"))


def python_files(root: str) -> List[str]:
    found = []
    for folder, dirnames, filenames in os.walk(root):
        dirnames.sort()
        found += [os.path.join(folder, n) for n in sorted(filenames) if n.endswith(".py")]
    return found


def count_lines(paths: Sequence[str]) -> int:
    total = 0
    for path in paths:
        with open(path, "rb") as handle:
            total += handle.read().count(b"\n")
    return total


CONSTRUCT = re.compile(rb"^[ \t]+def construct\(", re.MULTILINE)  # a method, not a docstring's ``... def``


def edit_target(paths: Sequence[str]) -> str:
    """The file a developer would edit: the largest one that defines ``construct`` (a model file)."""
    best, best_size = paths[0], -1
    for path in paths:
        with open(path, "rb") as handle:
            data = handle.read()
        if CONSTRUCT.search(data) and len(data) > best_size:
            best, best_size = path, len(data)
    return best


def add_call(path: str, number: int, helper: bool = False) -> None:
    """Insert ``_bench_<number> = abs(<number>)`` as the first statement of the file's first ``construct``: what
    typing a new line of code does (the lines below move, the module summary's calls change). ``abs`` names no
    function of the project (but in MindSpore's own source, where it is ``ops.abs``): the graph closure follows it
    nowhere, and the cross-file fingerprints are carried over (``ProjectIndex.only_inert_changes``). ``helper``:
    call a function of the project instead (the file's first module-level function, else a method of the
    ``construct``'s class), which makes it graph code: every fingerprint is worked out again.

    In a child process: parsing the 55k-line file would grow this one by 300 MB, and a command started after
    that reports this process's peak as its own (Linux carries it into ``ru_maxrss`` across fork and exec)."""
    subprocess.run([sys.executable, __file__, "--add-call", path, str(number)] + (["helper"] if helper else []),
                   check=True)


def first_construct(tree: ast.Module) -> ast.FunctionDef:
    """The module's first ``construct`` (where ``add_call`` writes)."""
    return next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "construct")


def helper_callee(tree: ast.Module, construct: ast.FunctionDef) -> str:
    """What ``add_call(helper=True)`` calls: the module's first function, else a method of the class that defines
    ``construct`` (``self.<method>``), else ``abs``."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            return node.name
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and construct in node.body:
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and method.name not in ("construct", "__init__"):
                    return f"self.{method.name}"
    return "abs"


def _add_call_here(path: str, number: int, helper: bool = False) -> None:
    with open(path, "rb") as handle:
        raw = handle.read()
    tree = ast.parse(raw)
    first = first_construct(tree)
    callee = helper_callee(tree, first) if helper else "abs"
    body = first.body[0]
    lines = raw.splitlines(keepends=True)
    indent = lines[body.lineno - 1][: body.col_offset]  # col_offset counts UTF-8 bytes
    lines.insert(body.lineno - 1, indent + f"_bench_{number} = {callee}({number})\n".encode())
    with open(path, "wb") as handle:
        handle.write(b"".join(lines))


# -- the tools ----------------------------------------------------------------------------------------------------
# ``ms-lint first run``'s cache folder (in the benchmark's working folder), emptied before each run: a check that
# writes its results cache and fingerprints from nothing, as a first run or a CI job without a kept cache does
# (``cold`` is ``--no-cache``, which writes nothing and works no fingerprint out).
FIRST_RUN_CACHE = "first-run-cache"


def tool_commands(target: str, jobs: int, tools: Sequence[str]) -> Dict[str, List[str]]:
    py = sys.executable
    commands = {
        "ms-lint cold": [py, "-m", "ms_lint", "check", "--no-cache", "--exit-zero", "--jobs", str(jobs), target],
        "ms-lint first run": [py, "-m", "ms_lint", "check", "--exit-zero", "--jobs", str(jobs), "--cache-dir",
                              FIRST_RUN_CACHE, target],
        "ms-lint warm": [py, "-m", "ms_lint", "check", "--exit-zero", "--jobs", str(jobs), target],
        "ms-lint 1 file touched": [py, "-m", "ms_lint", "check", "--exit-zero", "--jobs", str(jobs), target],
        "ms-lint 1 file edited": [py, "-m", "ms_lint", "check", "--exit-zero", "--jobs", str(jobs), target],
        "ms-lint 1 call added": [py, "-m", "ms_lint", "check", "--exit-zero", "--jobs", str(jobs), target],
        "ms-lint 1 helper call added": [py, "-m", "ms_lint", "check", "--exit-zero", "--jobs", str(jobs), target],
    }
    if "flake8" in tools:
        commands["flake8"] = [py, "-c", FLAKE8_DEFAULT, "--isolated", "--exit-zero", "-j", str(jobs), target]
    if "ruff" in tools:
        ruff = shutil.which("ruff", path=os.path.dirname(py)) or shutil.which("ruff")
        if ruff:
            commands["ruff"] = [ruff, "check", "--select", "ALL", "--no-cache", "--isolated", "--exit-zero", target]
        else:
            print("ruff not found: skipped", file=sys.stderr)
    return commands


def shown_command(name: str, argv: List[str], jobs: int) -> str:
    if name.startswith("ms-lint"):
        extra = "--no-cache " if name == "ms-lint cold" else ""
        if name == "ms-lint first run":
            return f"ms-lint check --jobs {jobs} (an empty cache folder: the cache written)"
        after = {"ms-lint 1 file touched": " (after touch of one file)",
                 "ms-lint 1 file edited": " (after editing one file)",
                 "ms-lint 1 call added": " (after adding a call of abs to one file)",
                 "ms-lint 1 helper call added": " (after adding a call of a project function)"}.get(name, "")
        return f"ms-lint check {extra}--jobs {jobs}{after}"
    if name == "flake8":
        return f"flake8 -j {jobs} (pycodestyle, pyflakes, mccabe)"
    return "ruff check --select ALL --no-cache"


def versions() -> Dict[str, str]:
    found = {}
    for dist in ("ms-lint", "libcst", "flake8", "pycodestyle", "pyflakes", "mccabe", "ruff", "mindspore"):
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            kb = int(handle.readline().split()[1])
            memory = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return (f"{cpu}, {cores} cores available{memory}; {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}")


# -- one corpus ------------------------------------------------------------------------------------------------------
def snapshot_ms_lint(workdir: str) -> Dict[str, str]:
    """Copy the ms_lint package being measured and return an environment that runs the copy.

    Every command then runs the same code, even if the source tree is edited during the benchmark (which would
    also change ms-lint's code fingerprint and so empty its results cache in the middle of the warm runs)."""
    import ms_lint

    dest = os.path.join(workdir, "ms_lint_code")
    shutil.copytree(os.path.dirname(os.path.abspath(ms_lint.__file__)), os.path.join(dest, "ms_lint"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    # Byte-compile the copy, as ``pip install`` does: without it (PYTHONDONTWRITEBYTECODE is common in containers)
    # every worker of every run would compile ms-lint's modules again, a cost no installed copy pays.
    compileall.compile_dir(os.path.join(dest, "ms_lint"), quiet=1)
    env = dict(os.environ)
    env["PYTHONPATH"] = dest + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_corpus(label: str, root: str, workdir: str, runs: int, jobs: int, tools: Sequence[str],
               ms_lint_env: Dict[str, str]) -> str:
    files = python_files(root)
    lines = count_lines(files)
    target = edit_target(files)
    rel_root = os.path.relpath(root, workdir)
    commands = tool_commands(rel_root, jobs, tools)
    series = {name: Series(name, shown_command(name, argv, jobs)) for name, argv in commands.items()}
    print(f"\n== {label}: {len(files)} files, {lines:,} lines; edited file: {os.path.relpath(target, root)}",
          flush=True)

    envs = {name: (ms_lint_env if name.startswith("ms-lint") else None) for name in commands}
    same = findings_agree(commands["ms-lint cold"], commands["ms-lint warm"], workdir, ms_lint_env)
    for name, argv in commands.items():  # warm-up: OS file cache, ruff/flake8 start-up, ms-lint results cache
        if name == "ms-lint first run":
            shutil.rmtree(os.path.join(workdir, FIRST_RUN_CACHE), ignore_errors=True)
        measure(argv, workdir, envs[name])
    original = open(target, "rb").read()
    helper = helper_of(target)
    loads = [os.getloadavg()[0]]
    try:
        for round_number in range(runs):
            for name, argv in commands.items():
                if name == "ms-lint first run":
                    shutil.rmtree(os.path.join(workdir, FIRST_RUN_CACHE), ignore_errors=True)
                if name == "ms-lint 1 file touched":  # new mtime, same bytes: the cache checks the digest
                    stat = os.stat(target)
                    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
                if name == "ms-lint 1 file edited":  # new bytes: this file is analyzed again
                    with open(target, "ab") as handle:
                        handle.write(f"# benchmark edit {round_number}\n".encode())
                if name == "ms-lint 1 call added":  # its summary changes, in calls no table follows
                    add_call(target, round_number)
                if name == "ms-lint 1 helper call added":  # a call that makes graph code: fingerprints worked out
                    add_call(target, 1000 + round_number, helper=True)
                sample = measure(argv, workdir, envs[name])
                series[name].samples.append(sample)
            loads.append(os.getloadavg()[0])
            summary = ", ".join(f"{name} {s.samples[-1].wall:.2f}s" for name, s in series.items())
            print(f"  round {round_number + 1}/{runs}: {summary}", flush=True)
    finally:
        with open(target, "wb") as handle:
            handle.write(original)
    return render(label, len(files), lines, os.path.relpath(target, root), series, runs, jobs, same, loads, helper)


def findings_agree(cold: List[str], warm: List[str], workdir: str, env: Dict[str, str]) -> bool:
    """Warm results (cache filled by the first run) equal cold ones: the cache is only worth timing if so."""
    def run(argv):
        argv = [a for a in argv if a != "--exit-zero"]
        index = argv.index("check") + 1
        argv = argv[:index] + ["--format", "json"] + argv[index:]
        return subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True).stdout

    first = run(cold)
    run(warm)  # fills the cache
    return first == run(warm)


def helper_of(path: str) -> str:
    """The callee ``add_call(helper=True)`` writes into the file, found in a child process (as ``add_call``: a
    parse here would grow this process, whose peak the commands started after it report as theirs)."""
    done = subprocess.run([sys.executable, __file__, "--helper-of", path], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _helper_here(path: str) -> str:
    with open(path, "rb") as handle:
        tree = ast.parse(handle.read())
    first = first_construct(tree)
    return helper_callee(tree, first)


def render(label: str, files: int, lines: int, edited: str, series: Dict[str, Series], runs: int, jobs: int,
           same: bool, loads: List[float], helper: str = "") -> str:
    rows = ["| command | wall (median) | min - max | lines/s | CPU user+sys | peak RSS (largest process) |",
            "|---|---:|---:|---:|---:|---:|"]
    for s in series.values():
        walls = [x.wall for x in s.samples]
        rows.append(f"| `{s.command}` | {s.wall:.2f} s | {min(walls):.2f} - {max(walls):.2f} s | "
                    f"{lines / s.wall:,.0f} | {s.cpu:.1f} s | {s.max_rss_mb:.0f} MB |")
    cold = series["ms-lint cold"].wall
    notes = []
    for other in ("flake8", "ruff"):
        if other in series:
            ratio = cold / series[other].wall
            word = "faster" if ratio < 1 else "slower"
            notes.append(f"ms-lint cold / {other} = **{ratio:.2f}** (ms-lint is {max(ratio, 1 / ratio):.1f}x {word})")
    warm = series["ms-lint warm"].wall
    notes.append(f"ms-lint first run (an empty cache: results and fingerprints written) / cold = "
                 f"{series['ms-lint first run'].wall / cold:.2f}")
    notes.append(f"ms-lint warm / cold = {warm / cold:.3f}; one file touched: "
                 f"{series['ms-lint 1 file touched'].wall:.2f} s; one file edited: "
                 f"{series['ms-lint 1 file edited'].wall:.2f} s (a comment), "
                 f"{series['ms-lint 1 call added'].wall:.2f} s (a call of `abs`), "
                 f"{series['ms-lint 1 helper call added'].wall:.2f} s (a call of a project function)")
    notes.append(f"warm findings identical to cold: {'yes' if same else '**NO**'}")
    notes.append(f"load average (1 min) during the runs: {min(loads):.1f} - {max(loads):.1f}")
    return "\n".join([
        f"### {label}: {files:,} files, {lines:,} lines",
        "",
        f"{runs} rounds, one of each command per round, medians shown; `--jobs {jobs}` / `-j {jobs}`. "
        f"Edited file: `{edited}` (one comment line appended per round; then one line with a call of `abs` inserted "
        f"at the top of its first `construct`, which changes its summary; then one with a call of a function of the "
        f"project, `{helper}`, which makes it graph code).",
        "",
        *rows,
        "",
        *[f"- {note}" for note in notes],
        "",
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="ms-lint throughput against flake8 and ruff")
    parser.add_argument("--corpus", default="auto",
                        help="auto (mindspore,packages,cells), or a comma-separated list of mindspore, packages, "
                             "cells, synthetic and folders")
    parser.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes for ms-lint and flake8 (default: all)")
    parser.add_argument("--files", type=int, default=600, help="synthetic corpus size in files (default 600)")
    parser.add_argument("--seed", type=int, default=0, help="synthetic corpus seed (default 0)")
    parser.add_argument("--tools", default="flake8,ruff", help="comparison tools (default: flake8,ruff)")
    parser.add_argument("--output", default=DEFAULT_OUTPUT, help="markdown file to write ('-': none)")
    parser.add_argument("--add-call", nargs="+", metavar="PATH N [helper]", help=argparse.SUPPRESS)  # ``add_call``'s
    parser.add_argument("--helper-of", metavar="PATH", help=argparse.SUPPRESS)  # ``helper_of``'s child
    args = parser.parse_args(argv)
    if args.helper_of:
        print(_helper_here(args.helper_of))
        return 0
    if args.add_call:
        _add_call_here(args.add_call[0], int(args.add_call[1]), helper=args.add_call[2:] == ["helper"])
        return 0
    jobs = args.jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]

    chosen = list(CORPORA) if args.corpus == "auto" else [c.strip() for c in args.corpus.split(",") if c.strip()]
    corpora: List[Tuple[str, str]] = []  # (label, kind or path)
    for kind in chosen:
        if kind == "mindspore":
            source = mindspore_source()
            if source is not None:
                corpora.append((f"MindSpore {versions().get('mindspore', '?')} source (installed `mindspore` package)",
                                source))
            elif args.corpus != "auto":
                parser.error("mindspore is not installed; use --corpus packages,cells")
        elif kind == "packages":
            corpora.append(("Eight model packages (" + ", ".join(p.replace("@", " ") for p in PACKAGES) + ")",
                            "<packages>"))
        elif kind == "cells":
            corpora.append(("Generated Cell-heavy corpus (`benchmarks/cell_corpus.py --modules 150 --big-cells 3000 "
                            f"--seed {args.seed}`)", "<cells>"))
        elif kind == "synthetic":
            corpora.append((f"Synthetic corpus (`benchmarks/corpus.py --files {args.files} --seed {args.seed}`)",
                            "<synthetic>"))
        elif os.path.isdir(kind):
            corpora.append((f"`{kind}`", os.path.abspath(kind)))
        else:
            parser.error(f"{kind}: not a corpus name (mindspore, packages, cells, synthetic) nor a folder")

    header = [
        "## Throughput",
        "",
        f"Measured {datetime.date.today().isoformat()} with "
        f"`{' '.join(['python benchmarks/throughput.py'] + list(argv if argv is not None else sys.argv[1:]))}`.",
        "",
        f"Machine: {machine()}.",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()) + ".",
        "",
    ]
    sections = []
    with tempfile.TemporaryDirectory(prefix="ms_lint_bench_") as workdir:
        # An empty pyproject.toml pins ms-lint's config root (and cache) to this folder: defaults, nothing inherited.
        with open(os.path.join(workdir, "pyproject.toml"), "w", encoding="utf-8") as handle:
            handle.write("# ms-lint throughput benchmark: default settings\n")
        ms_lint_env = snapshot_ms_lint(workdir)
        for index, (label, source) in enumerate(corpora):
            root = os.path.join(workdir, f"corpus{index}")
            if source == "<packages>":
                copy_packages(root)
            elif source == "<cells>":  # in a child: building it here would raise the RSS every command forks from
                subprocess.run([sys.executable, os.path.join(HERE, "cell_corpus.py"), root, "--modules", "150",
                                "--big-cells", "3000", "--seed", str(args.seed)], check=True, stdout=subprocess.DEVNULL)
            elif source == "<synthetic>":
                synthetic.build(root, args.files, args.seed)
            else:
                copy_folder(source, root)
            sections.append(run_corpus(label, root, workdir, args.runs, jobs, tools, ms_lint_env))
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(os.path.join(workdir, ".ms_lint_cache"), ignore_errors=True)
    report = "\n".join(header + sections)
    print("\n" + report)
    if args.output != "-":
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(report)
        print(f"written to {os.path.relpath(args.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
