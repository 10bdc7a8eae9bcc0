"""Run one profiled compile in a fresh process and read what it left.

The child (``ms_lint.profiler.child``) runs in a private temporary working folder with the compile cache switched
off (the verifier's ``child_env``) and these switches on (MindSpore 2.10):

* ``MS_JIT=COMPILE_PROFILE:1``: the per-phase timing tree on stdout (``MS_DEV_COMPILE_PROFILE`` does nothing);
* ``MS_DEV_RUNTIME_CONF="compile_statistics:True"`` (added to the user's keys): the backend's ``[PROF]`` steps;
* ``MS_DEV_SAVE_GRAPHS=1``, ``MS_DEV_SAVE_GRAPHS_PATH=<folder>/dumps``,
  ``MS_DEV_DUMP_IR_PASSES=type_inference,validate``: two ``.ir`` dumps per graph (about 15-40% more compile
  time measured; every pass dumped: about 3x).

The folder (dumps, stdout, the request) is removed when the run ends, and the child's process group is killed, so a
script's own worker processes do not outlive it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from ms_lint.profiler.parse import CompileTimes, NodeCounts, count_nodes, pair_dumps, parse_profile
from ms_lint.verifier.runner import kill_group, child_env

WORKDIR_PREFIX = "ms-lint-profile-"
DUMP_PASSES = "type_inference,validate"


def profile_env(dump_dir: str, base: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = child_env(base)
    env["MS_JIT"] = "COMPILE_PROFILE:1"
    env["MS_DEV_RUNTIME_CONF"] = runtime_conf(env.get("MS_DEV_RUNTIME_CONF"))
    env["MS_DEV_SAVE_GRAPHS"] = "1"
    env["MS_DEV_SAVE_GRAPHS_PATH"] = dump_dir
    env["MS_DEV_DUMP_IR_PASSES"] = DUMP_PASSES
    env.pop("MS_DEV_PRECOMPILE_ONLY", None)  # the backend compile (task_emit) is part of the cost
    return env


def runtime_conf(value: Optional[str]) -> str:
    """The user's ``MS_DEV_RUNTIME_CONF`` keys with ``compile_statistics:True`` (``key:value,key:value``)."""
    keys = [k.strip() for k in (value or "").split(",") if k.strip()
            and k.split(":")[0].strip() != "compile_statistics"]
    return ",".join(keys + ["compile_statistics:True"])


@dataclass
class ProfileRun:
    ok: bool
    result: Dict[str, Any]
    error: Optional[Dict[str, Any]] = None
    compiles: List[CompileTimes] = field(default_factory=list)
    graphs: List[Dict[str, NodeCounts]] = field(default_factory=list)  # per graph: "type_inference", "validate"
    wall_s: float = 0.0

    @property
    def compile_s(self) -> float:
        return sum(c.total_s for c in self.compiles)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def run_profile(request: Dict[str, Any], *, timeout: float, is_user_file: Callable[[str], bool],
                python: Optional[str] = None, label: str = "profile", plain: bool = False) -> ProfileRun:
    """One fresh process: compile what ``request`` names (the verifier child's keys, plus ``script``/``argv``/
    ``compiles`` for script mode), then parse the timing trees and the dumps. ``plain``: the same process
    without the profiling switches (the baseline the overhead is measured against); nothing is parsed."""
    started = time.perf_counter()
    workdir = tempfile.mkdtemp(prefix=WORKDIR_PREFIX)
    try:
        dump_dir = os.path.join(workdir, "dumps")
        run_dir = os.path.join(workdir, "cwd")
        os.mkdir(dump_dir)
        os.mkdir(run_dir)
        request = dict(request, dump_dir=dump_dir)
        request_file = os.path.join(workdir, "request.json")
        with open(request_file, "w") as handle:
            json.dump(request, handle)
        stdout_path = os.path.join(workdir, "stdout.txt")
        stderr_path = os.path.join(workdir, "stderr.txt")
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            try:
                proc = subprocess.Popen([python or sys.executable, "-m", "ms_lint.profiler.child", request_file],
                                        cwd=run_dir, env=child_env() if plain else profile_env(dump_dir),
                                        stdin=subprocess.DEVNULL,
                                        stdout=out, stderr=err, start_new_session=True)
            except OSError as exc:
                error = {"kind": "internal", "message": f"cannot start {python or sys.executable}: {exc}"}
                return ProfileRun(False, {}, error=error)
            try:
                returncode = proc.wait(timeout=timeout)
            except BaseException as exc:  # timeout, Ctrl-C: never leave the child behind
                kill_group(proc)
                if not isinstance(exc, subprocess.TimeoutExpired):
                    raise
                stage = _read(os.path.join(workdir, "stage.txt")).strip() or "start"
                error = {"kind": "timeout", "message": f"the {label} run did not finish within {timeout:g} s "
                                                       f"(stuck at: {stage}); raise --timeout"}
                return ProfileRun(False, {}, error=error, wall_s=time.perf_counter() - started)
            kill_group(proc)  # whatever the script started in its session goes too
        result_text = _read(os.path.join(workdir, "result.json"))
        if not result_text:
            tail = _read(stderr_path).strip()[-600:]
            how = f"signal {-returncode}" if returncode < 0 else f"exit status {returncode}"
            error = {"kind": "crashed", "message": f"the {label} process died ({how})"
                                                   + (f"; its last output: {tail}" if tail else "")}
            return ProfileRun(False, {}, error=error, wall_s=time.perf_counter() - started)
        result = json.loads(result_text)
        run = ProfileRun(bool(result.get("ok")), result, error=result.get("error"),
                         wall_s=time.perf_counter() - started)
        if not run.ok or plain:
            return run
        run.compiles = parse_profile(_read(stdout_path))
        for graph in pair_dumps(dump_dir):
            run.graphs.append({kind: count_nodes(_read(path), is_user_file) for kind, path in graph.items()})
        if not run.compiles or not run.graphs:
            run.ok = False
            run.error = {"kind": "no-profile", "message": "MindSpore printed no compile profile or wrote no graph "
                                                          "dump (is this MindSpore 2.10 or later?)"}
        return run
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
