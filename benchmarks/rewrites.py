"""Rewrite payoff: compile and run time of each ms-lint rewrite against the original, as N grows.

    python benchmarks/rewrites.py                 # N = 10, 50, 100, 200, 400; 3 fresh processes per version
    python benchmarks/rewrites.py --quick         # N = 10, 50; 1 process per version (a smoke run)
    python benchmarks/rewrites.py --device GPU    # the same on a GPU

Each case is a pair of template programs, the original and the rewrite ms-lint makes (or recommends), written for
a given N. Four go through the verifier (``ms_lint.verifier.verify_pair``): both versions run ``--repeat`` times,
each in a fresh process with the compile cache off; compile time is the first call minus the median steady call,
run time the median of 20 steady calls; outputs are compared, so every row also says whether the rewrite computes
the same thing. The compile-cache case can't use the verifier (it turns the cache off on purpose): a small harness
here runs the same script twice with ``MS_COMPILER_CACHE_ENABLE=1`` and a fresh cache folder, and times the second
process against a process with the cache off.

Writes ``benchmarks/results/rewrites.md`` (a table) and ``benchmarks/results/rewrites.png`` (compile time against
N, original against rewrite, one panel per case). Needs MindSpore; matplotlib for the plot.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

RESULTS = os.path.join(HERE, "results")
DEFAULT_N = (10, 50, 100, 200, 400)
QUICK_N = (10, 50)


# -- the programs -----------------------------------------------------------------------------------------------------
@dataclass
class Case:
    key: str
    title: str  # the pattern and its rewrite, for the table and the plot
    rule: str
    function: str
    inputs: Callable[[int], str]
    original: Callable[[int], str]
    rewritten: Callable[[int], str]
    harness: str = "verifier"  # or "cache"


def _vmap_original(n: int) -> str:
    return textwrap.dedent('''\
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def rows(x):
            out = []
            for i in range(x.shape[0]):
                out.append(ops.relu(x[i]) * 2.0 + 1.0)
            return ops.stack(out)
        ''')


def _vmap_rewritten(n: int) -> str:
    return textwrap.dedent('''\
        import mindspore as ms
        from mindspore import ops


        def _rows_row(row):
            return ops.relu(row) * 2.0 + 1.0


        @ms.jit
        def rows(x):
            return ms.vmap(_rows_row, in_axes=0)(x)
        ''')


def _hypermap_original(n: int) -> str:
    return textwrap.dedent('''\
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def clip_all(x):
            grads = ops.unstack(x)
            clipped = ()
            for grad in grads:
                clipped += (ops.clip_by_value(grad * 0.5, -1.0, 1.0),)
            return ops.stack(clipped)
        ''')


def _hypermap_rewritten(n: int) -> str:
    return textwrap.dedent('''\
        import mindspore as ms
        from mindspore import ops


        def _clip(grad):
            return ops.clip_by_value(grad * 0.5, -1.0, 1.0)


        @ms.jit
        def clip_all(x):
            grads = ops.unstack(x)
            clipped = ops.HyperMap()(_clip, grads)
            return ops.stack(clipped)
        ''')


def _where_original(n: int) -> str:
    return textwrap.dedent(f'''\
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def damp(x, y):
            out = x
            for _ in range({n}):
                if out > y:
                    out = out - y * 0.5
                else:
                    out = out + y * 0.25
            return out
        ''')


def _where_rewritten(n: int) -> str:
    return textwrap.dedent(f'''\
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def damp(x, y):
            out = x
            for _ in range({n}):
                out = ops.where(out > y, out - y * 0.5, out + y * 0.25)
            return out
        ''')


def _loop_original(n: int) -> str:
    return textwrap.dedent(f'''\
        import mindspore as ms


        @ms.jit
        def func(input_x, input_y):
            output = input_x
            for _ in range({n}):
                output = input_x + input_x * input_y + output
            return output
        ''')


def _fori_rewritten(n: int) -> str:
    return textwrap.dedent(f'''\
        import mindspore as ms
        from mindspore import ops


        def _func_body(_, state):
            input_x, input_y, output = state
            output = input_x + input_x * input_y + output
            return input_x, input_y, output


        @ms.jit
        def func(input_x, input_y):
            output = input_x
            _, _, output = ops.ForiLoop()(0, {n}, _func_body, (input_x, input_y, output), unroll=False)
            return output
        ''')


CASES = [
    Case("vmap", "per-row loop + ops.stack -> ms.vmap", "MSL101", "rows", lambda n: f"x=float32[{n},16]",
         _vmap_original, _vmap_rewritten),
    Case("hypermap", "loop over a tuple of N tensors -> ops.HyperMap", "MSL102", "clip_all",
         lambda n: f"x=float32[{n},16]", _hypermap_original, _hypermap_rewritten),
    Case("where", "`if` on a 0-d tensor in an N-step loop -> ops.where", "MSL201", "damp",
         lambda n: "x=float32[]; y=float32[]", _where_original, _where_rewritten),
    Case("foriloop", "N-step constant loop -> ops.ForiLoop(unroll=False)", "MSL103", "func",
         lambda n: "input_x=float32[2,2]; input_y=float32[2,2]", _loop_original, _fori_rewritten),
    Case("cache", "N-step loop, second run with MS_COMPILER_CACHE_ENABLE=1", "MSL301", "func",
         lambda n: "input_x=float32[2,2]; input_y=float32[2,2]", _loop_original, _loop_original, harness="cache"),
]


# -- results ----------------------------------------------------------------------------------------------------------
@dataclass
class Row:
    case: str
    n: int
    compile_original: Optional[float] = None
    compile_rewritten: Optional[float] = None
    run_original_ms: Optional[float] = None
    run_rewritten_ms: Optional[float] = None
    verdict: str = ""
    note: str = ""
    elapsed_s: float = 0.0
    samples: Dict[str, List[float]] = field(default_factory=dict)

    @property
    def compile_speedup(self) -> Optional[float]:
        if self.compile_original and self.compile_rewritten:
            return self.compile_original / self.compile_rewritten
        return None

    @property
    def run_ratio(self) -> Optional[float]:
        """Rewritten run time over original run time (above 1: the rewrite runs slower)."""
        if self.run_original_ms and self.run_rewritten_ms:
            return self.run_rewritten_ms / self.run_original_ms
        return None


def verify_case(case: Case, n: int, device: str, repeat: int, timeout: float) -> Row:
    from ms_lint.verifier import verify_pair

    row = Row(case.key, n)
    started = time.perf_counter()
    v = verify_pair(case.original(n), case.rewritten(n), function=case.function, inputs=case.inputs(n),
                    device=device, repeat=repeat, timeout=timeout)
    row.elapsed_s = time.perf_counter() - started
    row.compile_original, row.compile_rewritten = v.original.compile_s, v.rewritten.compile_s
    row.run_original_ms, row.run_rewritten_ms = v.original.run_ms, v.rewritten.run_ms
    row.verdict = v.verdict
    if v.verdict in ("original-failed", "rewrite-failed", "error", "mismatch"):
        row.note = v.message.split("\n")[0][:300]
    return row


# The compile-cache harness: one script, run as a file (the cache keys on the entry script), timing its first call.
CACHE_DRIVER = textwrap.dedent('''\

    if __name__ == "__main__":
        import json, sys, time
        import numpy as np
        rng = np.random.default_rng(0)
        args = [ms.Tensor(rng.standard_normal((2, 2)).astype(np.float32)) for _ in range(2)]
        start = time.perf_counter()
        func(*args).asnumpy()
        first = time.perf_counter() - start
        steady = []
        for _ in range(20):
            start = time.perf_counter()
            out = func(*args).asnumpy()
            steady.append(time.perf_counter() - start)
        steady.sort()
        print("RESULT " + json.dumps({"first": first, "steady": steady[len(steady) // 2], "sum": float(out.sum())}))
    ''')
CACHE_VARS = ("MS_COMPILER_CACHE_ENABLE", "MS_COMPILER_CACHE_PATH", "MS_DEV_FORCE_USE_COMPILE_CACHE")


def _run_script(path: str, env: Dict[str, str], timeout: float, device: str) -> Dict[str, float]:
    env = dict(env)
    env["MS_LINT_BENCH_DEVICE"] = device
    done = subprocess.run([sys.executable, path], cwd=os.path.dirname(path), env=env, capture_output=True,
                          text=True, timeout=timeout)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"{os.path.basename(path)} failed (exit {done.returncode}): {done.stderr[-800:]}")


def cache_case(case: Case, n: int, device: str, repeat: int, timeout: float) -> Row:
    row = Row(case.key, n)
    started = time.perf_counter()
    base = {k: v for k, v in os.environ.items() if k not in CACHE_VARS}
    source = case.original(n).replace("import mindspore as ms\n", "import mindspore as ms\nimport os\n"
                                      "ms.set_device(os.environ.get('MS_LINT_BENCH_DEVICE', 'CPU'))\n", 1)
    source += CACHE_DRIVER
    cold: List[Dict[str, float]] = []
    warm: List[Dict[str, float]] = []
    workdir = tempfile.mkdtemp(prefix="ms-lint-bench-cache-")
    try:
        script = os.path.join(workdir, "train.py")
        with open(script, "w", encoding="utf-8") as handle:
            handle.write(source)
        for index in range(repeat):  # interleaved, like the verifier
            cold.append(_run_script(script, base, timeout, device))
            cache_dir = os.path.join(workdir, f"cache{index}")
            cached_env = dict(base, MS_COMPILER_CACHE_ENABLE="1", MS_COMPILER_CACHE_PATH=cache_dir)
            _run_script(script, cached_env, timeout, device)  # first run with the cache on: fills it
            warm.append(_run_script(script, cached_env, timeout, device))  # the run that profits
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        row.verdict, row.note = "error", str(exc).splitlines()[0][:160]
        return row
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    row.elapsed_s = time.perf_counter() - started
    med = statistics.median
    row.compile_original = med(max(r["first"] - r["steady"], 1e-6) for r in cold)
    row.compile_rewritten = med(max(r["first"] - r["steady"], 1e-6) for r in warm)
    row.run_original_ms = med(r["steady"] for r in cold) * 1e3
    row.run_rewritten_ms = med(r["steady"] for r in warm) * 1e3
    same = all(abs(r["sum"] - cold[0]["sum"]) <= 1e-5 * max(1.0, abs(cold[0]["sum"])) for r in cold + warm)
    row.verdict = "same output" if same else "OUTPUT DIFFERS"
    row.samples = {"first_call_cold_s": [r["first"] for r in cold], "first_call_cached_s": [r["first"] for r in warm]}
    return row


# -- output -----------------------------------------------------------------------------------------------------------
def fmt_s(value: Optional[float]) -> str:
    if value is None:
        return "fails"
    return f"{value * 1e3:.0f} ms" if value < 1 else f"{value:.2f} s"


def fmt_ms(value: Optional[float]) -> str:
    if value is None:
        return "-"
    return f"{value * 1e3:.0f} us" if value < 1 else f"{value:.2f} ms"


def fmt_x(value: Optional[float]) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}x" if value >= 10 else f"{value:.1f}x" if value >= 1 else f"{value:.2g}x"


def short_note(note: str) -> str:
    """The first clause of a verifier message (``the original fails (...)``), without the numbers repeated."""
    return note.split("; ")[0].rstrip(" .")


def render(rows: List[Row], args, device: str, machine: str, elapsed: float, command: str) -> str:
    lines = [
        "## Rewrite payoff",
        "",
        f"Measured {datetime.date.today().isoformat()} with `{command}` on {device}: {machine}. "
        f"{args.repeat} fresh process(es) per version and N, medians; compile cache off except in the cache case. "
        f"Total {elapsed / 60:.0f} min.",
        "",
        "Compile = first call minus a steady call; run = median of 20 steady calls. Speed-up = original compile / "
        "rewritten compile; run ratio = rewritten run / original run (above 1: the rewrite runs slower per call).",
        "",
    ]
    for case in CASES:
        mine = [r for r in rows if r.case == case.key]
        if not mine:
            continue
        lines += [f"### {case.title} ({case.rule})", "",
                  "| N | compile original | compile rewritten | speed-up | run original | run rewritten | run ratio "
                  "| verdict |",
                  "|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in mine:
            verdict = r.verdict + (f": {short_note(r.note)}" if r.note else "")
            lines.append(f"| {r.n} | {fmt_s(r.compile_original)} | {fmt_s(r.compile_rewritten)} | "
                         f"{fmt_x(r.compile_speedup)} | {fmt_ms(r.run_original_ms)} | {fmt_ms(r.run_rewritten_ms)} | "
                         f"{fmt_x(r.run_ratio)} | {verdict} |")
        lines.append("")
    return "\n".join(lines)


def plot(rows: List[Row], path: str, device: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return False
    from matplotlib.ticker import FuncFormatter

    cases = [c for c in CASES if any(r.case == c.key for r in rows)]
    columns = min(3, len(cases) + 1)
    grid_rows = (len(cases) + 1 + columns - 1) // columns  # one panel per case, then the run-time ratios
    fig, axes = plt.subplots(grid_rows, columns, figsize=(5.2 * columns, 4.2 * grid_rows), squeeze=False)
    flat = [ax for line in axes for ax in line]
    for ax in flat[len(cases) + 1:]:
        ax.axis("off")
    def tick(value: float) -> str:
        return f"{value:g} s" if value >= 1 else f"{value * 1e3:g} ms"

    def minor_label(value: float) -> str:  # 2 and 5 between the decades, so a narrow range still has labels
        leading = f"{value:.0e}"[0]
        return tick(value) if leading in "25" else ""

    seconds = FuncFormatter(lambda v, _: tick(v))
    for ax, case in zip(flat, cases):
        mine = sorted((r for r in rows if r.case == case.key), key=lambda r: r.n)
        for attr, label, style in (("compile_original", "original", "o-"), ("compile_rewritten", "rewritten", "s-")):
            points = [(r.n, getattr(r, attr)) for r in mine if getattr(r, attr) is not None]
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], style, label=label)
            failed = [r.n for r in mine if getattr(r, attr) is None and r.verdict not in ("error",)]
            for n in failed:
                ax.axvline(n, color="red", linestyle=":", linewidth=1)
                ax.annotate(f"{label} fails\n(call depth)" if "depth" in next(
                                (r.note for r in mine if r.n == n), "") else f"{label} fails",
                            (n, 0.5), xycoords=("data", "axes fraction"), ha="right", va="center", fontsize=8,
                            color="red", rotation=90)
        ax.set_title(f"{case.rule}: {case.title}", fontsize=10)
        ax.set_xlabel("N (log scale)")
        ax.set_ylabel("compile time (log scale)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ns = sorted({r.n for r in mine})
        ax.set_xticks(ns)
        ax.set_xticklabels([str(n) for n in ns])
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.yaxis.set_major_formatter(seconds)
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: minor_label(v)))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=9)
    ax = flat[len(cases)]
    for case in cases:
        points = sorted((r.n, r.run_ratio) for r in rows if r.case == case.key and r.run_ratio is not None)
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], "o-", label=f"{case.rule} {case.key}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_title("run time per call: rewritten / original (below 1: faster)", fontsize=10)
    ax.set_xlabel("N (log scale)")
    ax.set_ylabel("ratio (log scale)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ns = sorted({r.n for r in rows})
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(f"Compile time against N, original vs rewritten (MindSpore, {device}, median of fresh processes)",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def machine() -> str:
    sys.path.insert(0, HERE)
    from throughput import machine as describe  # benchmarks/throughput.py

    return describe()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="compile/run time of ms-lint's rewrites against N")
    parser.add_argument("--quick", action="store_true", help="N = 10, 50 and one process per version")
    parser.add_argument("--n", default=None, help="comma-separated N values (default 10,50,100,200,400)")
    parser.add_argument("--repeat", type=int, default=None, help="fresh processes per version (default 3)")
    parser.add_argument("--cases", default=",".join(c.key for c in CASES), help="which cases (default: all)")
    parser.add_argument("--device", default="CPU", choices=("CPU", "GPU", "Ascend"))
    parser.add_argument("--timeout", type=float, default=600, help="seconds per process (default 600)")
    parser.add_argument("--output", default=None, help="folder for rewrites.md/.png/.json (default benchmarks/results)")
    parser.add_argument("--replot", action="store_true",
                        help="rewrite the .md and .png from the .json of an earlier run (no measuring)")
    args = parser.parse_args(argv)
    ns = [int(x) for x in args.n.split(",")] if args.n else list(QUICK_N if args.quick else DEFAULT_N)
    args.repeat = args.repeat or (1 if args.quick else 3)
    wanted = {k.strip() for k in args.cases.split(",")}
    out_dir = args.output or RESULTS
    os.makedirs(out_dir, exist_ok=True)
    suffix = "" if args.device == "CPU" else f"_{args.device.lower()}"

    rows: List[Row] = []
    started = time.perf_counter()
    if args.replot:
        with open(os.path.join(out_dir, f"rewrites{suffix}.json"), encoding="utf-8") as handle:
            saved = json.load(handle)
        rows = [Row(**{k: v for k, v in item.items()}) for item in saved["rows"]]
        args.repeat = saved.get("repeat", args.repeat)
        return _write(rows, args, out_dir, suffix, saved["elapsed_s"], saved["command"], saved["machine"])
    command = " ".join(["python benchmarks/rewrites.py"] + list(argv if argv is not None else sys.argv[1:]))
    described = machine()
    for case in CASES:
        if case.key not in wanted:
            continue
        for n in ns:
            run = cache_case if case.harness == "cache" else verify_case
            row = run(case, n, args.device, args.repeat, args.timeout)
            rows.append(row)
            print(f"{case.key:9} N={n:<4} compile {fmt_s(row.compile_original):>8} -> {fmt_s(row.compile_rewritten):>8}"
                  f" ({fmt_x(row.compile_speedup)}), run {fmt_ms(row.run_original_ms)} -> "
                  f"{fmt_ms(row.run_rewritten_ms)}  {row.verdict} {row.note}  [{row.elapsed_s:.0f} s]", flush=True)
            _save(rows, out_dir, suffix, time.perf_counter() - started, command, described, args.repeat)
    return _write(rows, args, out_dir, suffix, time.perf_counter() - started, command, described)


def _save(rows: List[Row], out_dir: str, suffix: str, elapsed: float, command: str, described: str,
          repeat: int) -> None:
    """The raw numbers, so ``--replot`` can redraw without measuring again."""
    with open(os.path.join(out_dir, f"rewrites{suffix}.json"), "w", encoding="utf-8") as handle:
        json.dump({"command": command, "machine": described, "elapsed_s": elapsed, "repeat": repeat,
                   "rows": [r.__dict__ for r in rows]}, handle, indent=1)


def _write(rows: List[Row], args, out_dir: str, suffix: str, elapsed: float, command: str, described: str) -> int:
    report = render(rows, args, args.device, described, elapsed, command)
    print("\n" + report)
    md = os.path.join(out_dir, f"rewrites{suffix}.md")
    with open(md, "w", encoding="utf-8") as handle:
        handle.write(report + f"\n![compile time against N](rewrites{suffix}.png)\n")
    if plot(rows, os.path.join(out_dir, f"rewrites{suffix}.png"), args.device):
        print(f"written: {os.path.relpath(md)}, {os.path.relpath(os.path.join(out_dir, f'rewrites{suffix}.png'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
