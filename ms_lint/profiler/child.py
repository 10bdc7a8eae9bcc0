"""Compile one target (or run one script up to its first compiles) in this fresh process, for ``ms-lint profile``.

Invoked as ``python -m ms_lint.profiler.child REQUEST.json`` by ``ms_lint.profiler.runner`` with the profiling
switches already in the environment (``MS_JIT=COMPILE_PROFILE:1``, ``MS_DEV_SAVE_GRAPHS``...). It reuses the
verifier's child for everything up to the call (MindSpore and device checks, importing the module inside its package,
``--setup``, ``--init``, the inputs) and then makes one call: the first call of a graph is its compile (plus one run,
which the profile does not time). Script mode runs ``SCRIPT.py ARGS`` as ``__main__`` and stops it right after its
``compiles``-th new graph compile, before that graph runs (graphs compiled earlier run as usual).

``overrides`` (``{file: copy}``, for ``--confirm``) loads a rewritten copy in place of one of the user's files, under
the file's own module name: a helper module the target imports, a sub-cell's module, or the script itself.

The result goes to ``result.json`` in the working folder, as the verifier's does; the timing tree MindSpore prints
goes to stdout, which the runner reads.
"""
from __future__ import annotations

import os
import sys
import time

from ms_lint.verifier.child import Child, ChildFailure, maxrss_mb, serve_request, summarize_exception


class StopAfterCompiles(BaseException):
    """Raised from inside the script once it has compiled enough graphs (a BaseException: ``except Exception``
    in the script does not swallow it)."""


def _dumped_graphs(folder):
    count = 0
    for _root, _dirs, names in os.walk(folder):
        count += sum(1 for n in names if "_type_inference_" in n and n.endswith(".ir"))
    return count


class _Overrides:
    """A ``sys.meta_path`` finder: a module whose file is one of ``mapping``'s keys is loaded from its copy, under
    its own name (so ``from cells import Net`` gets the rewrite; the copy is a sibling, so ``__file__``-relative
    paths and MindSpore's reading of the source work as for the original)."""

    def __init__(self, mapping):
        self.mapping = {os.path.realpath(k): v for k, v in mapping.items()}

    def find_spec(self, fullname, path, target=None):
        import importlib.machinery
        import importlib.util

        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or not spec.has_location:
            return None
        copy = self.mapping.get(os.path.realpath(spec.origin))
        if copy is None:
            return None
        return importlib.util.spec_from_file_location(fullname, copy,
                                                      submodule_search_locations=spec.submodule_search_locations)


class ProfileChild(Child):
    def run(self):
        overrides = self.req.get("overrides") or {}
        if overrides:
            sys.meta_path.insert(0, _Overrides(overrides))
        ms = self.import_mindspore()
        self.set_device(ms, self.req.get("device", "CPU"))
        if self.req.get("script"):
            return self.run_script(ms)
        module = self.import_module(ms)
        self.run_setup(module)
        fn, sig_callable, description = self.resolve_target(ms, module)
        self.result["target"] = description
        args, _values = self.build_args(ms, sig_callable)
        self.stage("first-call")
        _out, first = self.call(ms, fn, args, "first")
        self.result["first_call_s"] = first
        self.result["compiles"] = _dumped_graphs(self.req["dump_dir"])
        self.finish()

    def run_script(self, ms):
        import runpy

        script = self.req["script"]
        limit = int(self.req.get("compiles") or 1)
        dump_dir = self.req["dump_dir"]
        self.result["compiles"] = 0
        self.result["compile_calls"] = []
        self._patch_compiles(ms, dump_dir, limit)
        sys.argv = [script] + list(self.req.get("argv") or [])
        script_dir = os.path.dirname(os.path.abspath(script))
        sys.path.insert(0, script_dir)
        for directory in reversed(list(self.req.get("pythonpath") or [])):
            sys.path.insert(1, directory)
        self.stage("script")
        started = time.perf_counter()
        self.result["stopped"] = "script-ended"
        overrides = {os.path.realpath(k): v for k, v in (self.req.get("overrides") or {}).items()}
        try:
            runpy.run_path(overrides.get(os.path.realpath(script), script), run_name="__main__")
        except StopAfterCompiles:
            self.result["stopped"] = "compile-limit"
        except SystemExit as exc:
            self.result["stopped"] = f"script-exited ({exc.code})"
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            name, summary, detail = summarize_exception(exc)
            self.result["script_error"] = f"{name}: {summary}"
            self.result["error_detail"] = detail
            self.result["stopped"] = "script-failed"
        self.result["first_call_s"] = time.perf_counter() - started
        self.result["compiles"] = _dumped_graphs(dump_dir)
        if not self.result["compiles"]:
            if self.result.get("script_error"):
                raise ChildFailure("call-failed", self.result["script_error"])
            raise ChildFailure("no-compile", "the script ended without compiling a graph (no Cell call in "
                                             "GRAPH_MODE, no @jit call)")
        self.finish()

    def _patch_compiles(self, ms, dump_dir, limit):
        """Count new graphs after each compile call (a new type_inference dump is a new graph); stop the script
        at the limit."""
        from mindspore.graph import api

        result = self.result

        def wrap(original):
            def compile(*args, **kwargs):
                started = time.perf_counter()
                out = original(*args, **kwargs)
                count = _dumped_graphs(dump_dir)
                if count > result["compiles"]:
                    result["compiles"] = count
                    result["compile_calls"].append(round(time.perf_counter() - started, 6))
                    if count >= limit:
                        raise StopAfterCompiles()
                return out

            return compile

        for cls_name in ("_CellGraphExecutor", "_JitExecutor"):
            cls = getattr(api, cls_name, None)
            if cls is not None:
                cls.compile = wrap(cls.compile)

    def finish(self):
        import resource

        self.result["peak_mb"] = maxrss_mb(resource)
        self.result["ok"] = True
        self.stage("done")


def _flush_c_stdio():
    """MindSpore's timing tree is written by C++ through C stdio: flush it before ``os._exit``."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except Exception:
        pass


def main(argv=None):
    return serve_request(argv, ProfileChild, "ms_lint.profiler.child", "profiler", before_exit=_flush_c_stdio)


if __name__ == "__main__":
    main()
