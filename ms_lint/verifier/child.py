"""Run one version of a program once, in this fresh process, and record what happened.

Invoked by the runner as ``python -m ms_lint.verifier.child REQUEST.json`` with the working directory set to a
private temporary directory. It never lets an exception escape: every outcome, including MindSpore being missing, the
device being unavailable, an import error or a compile error such as ``Exceed function call depth limit``, is written
to ``result.json`` in the working directory as a structured record. Outputs (and gradients) go to ``outputs.npz``,
their structure to ``result.json``.

Request keys: ``module_file`` (path of the module source), ``module_name`` (the dotted name to import it as, e.g.
``pkg.sub.model`` or a sibling copy ``pkg.sub._ms_lint_verify_rewritten_1a2b``), ``in_place`` (the file on disk:
imported by name), ``package`` (imported first, so relative imports resolve), ``sys_root`` and ``pythonpath``
(folders put first on sys.path, in that order), ``setup`` / ``setup_name`` (statements run in the module's namespace
before ``init``), ``module_dir`` (legacy: a folder appended to sys.path), ``function`` (``func``, ``Class`` or ``Class.method``), ``init``
(constructor expression or null), ``device``, ``inputs_file`` (npz of tensor inputs), ``input_order`` (names in
order), ``scalars`` (name -> Python scalar), ``steady_calls``, ``grad`` (bool), ``jit`` ("auto" | "always" |
"never"), ``display_path`` (the original path, used in place of the temporary one in messages).

Failure kinds: ``numpy-missing``, ``mindspore-missing``, ``mindspore-broken``, ``device-unavailable``,
``import-error``, ``setup-failed``, ``target-not-found``, ``init-failed``, ``bad-inputs``, ``call-failed``, ``grad-failed``,
``output-unsupported``, ``internal``. The first six say nothing about the program and make the verdict ``error``.

This module imports only the standard library at top level (numpy and MindSpore are imported inside, guarded).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

ENV_KINDS = ("numpy-missing", "mindspore-missing", "mindspore-broken", "device-unavailable", "internal")
CACHE_ENV_PREFIXES = ("MS_COMPILER_CACHE",)
CACHE_ENV_VARS = ("MS_DEV_FORCE_USE_COMPILE_CACHE",)
TARGET_MODULE_NAME = "__ms_lint_verify_target__"


class ChildFailure(Exception):
    def __init__(self, kind, message, exc=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.exc = exc


def scrub_cache_env(environ=None):
    """Remove the compile-cache switches so every process compiles from scratch."""
    environ = os.environ if environ is None else environ
    for key in list(environ):
        if key.startswith(CACHE_ENV_PREFIXES) or key in CACHE_ENV_VARS:
            del environ[key]
    return environ


def summarize_exception(exc, display=None):
    """(type, one-paragraph summary, longer detail) of an exception, without MindSpore's C++ stack dump."""
    text = str(exc).strip()
    if display:
        for old, new in display.items():
            text = text.replace(old, new)
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("----") or stripped.startswith("- "):
            if lines:
                break
            continue
        if stripped:
            lines.append(stripped)
        # one sentence is enough when it is long enough to say what happened
        if sum(len(x) for x in lines) >= 40 and stripped.endswith((".", ")", ":")):
            break
        if len(lines) >= 4:
            break
    summary = " ".join(lines) if lines else type(exc).__name__
    if len(summary) > 400:
        summary = summary[:397] + "..."
    detail = text[:4000]
    return type(exc).__name__, summary, detail


def _user_traceback(exc, module_file, display):
    """The traceback frames that are in the user's module (empty if none)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == module_file]
    if not frames:
        return ""
    text = "".join(traceback.format_list(frames))
    for old, new in display.items():
        text = text.replace(old, new)
    return text


class Child:
    def __init__(self, request, workdir):
        self.req = request
        self.workdir = workdir
        self.result = {"ok": False, "stage": "start", "notes": []}
        self.display = {}
        module_file = request.get("module_file") or ""
        display_path = request.get("display_path")
        if module_file and display_path:
            self.display[module_file] = display_path
        self.leaves = {}

    def stage(self, name):
        self.result["stage"] = name
        try:
            with open(os.path.join(self.workdir, "stage.txt"), "w") as handle:
                handle.write(name)
        except OSError:
            pass

    # -- environment ---------------------------------------------------------------------------------------------
    def import_mindspore(self):
        self.stage("import-mindspore")
        start = time.perf_counter()
        try:
            import mindspore
        except ImportError as exc:
            missing = getattr(exc, "name", None) or ""
            if missing.split(".")[0] in ("mindspore", ""):
                raise ChildFailure(
                    "mindspore-missing",
                    f"MindSpore is not installed for {sys.executable} ({exc}); install it with "
                    "`pip install 'ms-lint[verify]'` (mindspore==2.10.0) to run the verifier",
                    exc,
                )
            raise ChildFailure("mindspore-broken", f"importing MindSpore failed: {exc}", exc)
        except Exception as exc:
            _, summary, _ = summarize_exception(exc)
            raise ChildFailure("mindspore-broken", f"importing MindSpore failed: {type(exc).__name__}: {summary}", exc)
        self.result["import_s"] = time.perf_counter() - start
        self.result["mindspore_version"] = getattr(mindspore, "__version__", "?")
        self.stage("import-numpy")
        try:
            import numpy  # noqa: F401
        except Exception as exc:
            raise ChildFailure("numpy-missing", f"numpy cannot be imported in {sys.executable}: {exc}", exc)
        return mindspore

    def device_available(self, ms, device):
        """(available, reason)."""
        ctx = None
        try:
            from mindspore._c_expression import MSContext

            ctx = MSContext.get_instance()
        except Exception:
            ctx = None
        supported = None
        plugin_error = ""
        if ctx is not None and hasattr(ctx, "is_pkg_support_device"):
            try:
                supported = bool(ctx.is_pkg_support_device(device))
                plugin_error = ctx.load_plugin_error() if hasattr(ctx, "load_plugin_error") else ""
            except Exception:
                supported = None
        if supported is None:
            try:
                supported = bool(ms.hal.is_available(device))
            except Exception:
                supported = True  # cannot tell: let set_device / the first call decide
        if not supported:
            reason = f"MindSpore {ms.__version__} found no usable {device} backend on this machine"
            relevant = [line.strip() for line in (plugin_error or "").splitlines()
                        if device.lower() in line.lower() or (device == "GPU" and "cuda" in line.lower())]
            if relevant:
                reason += f" ({' '.join(relevant)[:300]})"
            reason += "; use --device CPU or run on a machine with that device"
            return False, reason
        if device in ("GPU", "Ascend"):
            try:
                module = getattr(getattr(ms, "device_context"), device.lower())
                count = module.device_count()
                if not count:
                    return False, f"no {device} device found (device_count() is 0)"
            except Exception as exc:
                return False, f"no usable {device} device: {str(exc).strip()[:300]}"
        return True, ""

    def set_device(self, ms, device):
        self.stage("set-device")
        if device not in ("CPU", "GPU", "Ascend"):
            raise ChildFailure("device-unavailable", f"unknown device {device!r}: expected CPU, GPU or Ascend")
        available, reason = self.device_available(ms, device)
        if not available:
            raise ChildFailure("device-unavailable", f"device {device} is not available: {reason}")
        try:
            if hasattr(ms, "set_device"):
                ms.set_device(device)
            else:  # older MindSpore
                ms.set_context(device_target=device)
            ms.set_context(mode=ms.GRAPH_MODE)
        except Exception as exc:
            _, summary, _ = summarize_exception(exc)
            raise ChildFailure("device-unavailable", f"cannot select device {device}: {summary}", exc)

    # -- the program ---------------------------------------------------------------------------------------------
    def import_module(self, ms):
        import importlib
        import importlib.util

        self.stage("import-module")
        module_file = self.req["module_file"]
        module_name = self.req.get("module_name") or TARGET_MODULE_NAME
        package = self.req.get("package") or ""
        # the package root first (imports work as for the user), then --pythonpath folders, in order
        front = [d for d in [self.req.get("sys_root")] + list(self.req.get("pythonpath") or []) if d]
        for directory in reversed(front):
            while directory in sys.path:
                sys.path.remove(directory)
            sys.path.insert(0, directory)
        legacy_dir = self.req.get("module_dir")
        if legacy_dir and legacy_dir not in sys.path:
            sys.path.append(legacy_dir)
        try:
            if self.req.get("in_place") and all(p.isidentifier() for p in module_name.split(".")):
                module = importlib.import_module(module_name)
            else:
                if package:
                    importlib.import_module(package)  # its __init__ runs first, as in a real import
                spec = importlib.util.spec_from_file_location(module_name, module_file)
                module = importlib.util.module_from_spec(spec)
                sys.modules[module_name] = module
                spec.loader.exec_module(module)
        except BaseException as exc:  # SystemExit from a script's top level too
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise self.import_failure(exc, module_name)
        # the module may have switched modes or devices at import; graph mode is what we verify
        try:
            ms.set_context(mode=ms.GRAPH_MODE)
        except Exception:
            pass
        return module

    def import_failure(self, exc, module_name):
        """One line: which module is missing, where it was imported, and what to do."""
        shown = self.req.get("display_module") or module_name
        if isinstance(exc, ModuleNotFoundError) and getattr(exc, "name", None):
            missing = exc.name
            where = ""
            for frame in reversed(traceback.extract_tb(exc.__traceback__)):
                if not frame.filename.startswith("<") and "importlib" not in frame.filename:
                    where = f" (imported at {self.display.get(frame.filename, frame.filename)}:{frame.lineno})"
                    break
            top = missing.split(".")[0]
            own = (self.req.get("package") or module_name).split(".")[0]
            root = self.req.get("sys_root") or "?"
            if top == own or os.path.isdir(os.path.join(root, top)):
                hint = (f"it is not found under {root}: check the name, or pass --pythonpath DIR with the folder "
                        f"that holds {top}/")
            else:
                hint = (f"install it (pip install {top}), or, if it is part of your project, run from the project "
                        f"root or pass --pythonpath DIR with the folder that holds it")
            message = f"cannot import {shown}: no module named {missing!r}{where}; {hint}"
            return ChildFailure("import-error", message, exc)
        name, summary, _ = summarize_exception(exc, self.display)
        where = ""
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")
                  and "importlib" not in f.filename]
        if frames:
            last = frames[-1]
            where = f" at {self.display.get(last.filename, last.filename)}:{last.lineno}"
        return ChildFailure("import-error", f"importing {shown} failed{where}: {name}: {summary}", exc)

    def run_setup(self, module):
        """``--setup`` / ``--setup-file``: statements run in the module's namespace before ``--init``."""
        setup = self.req.get("setup")
        if not setup:
            return
        self.stage("setup")
        label = self.req.get("setup_name") or "--setup"
        try:
            code = compile(setup, label, "exec")
            exec(code, module.__dict__)  # noqa: S102 - the user's own set-up statements
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            name, summary, _ = summarize_exception(exc, self.display)
            line = ""
            for frame in reversed(traceback.extract_tb(exc.__traceback__)):
                if frame.filename == label:
                    line = f" (line {frame.lineno})"
                    break
            raise ChildFailure("setup-failed", f"{label} failed{line}: {name}: {summary}", exc)

    def resolve_target(self, ms, module):
        """(callable, signature_callable, description)."""
        self.stage("resolve-target")
        function = self.req["function"]
        parts = function.split(".")
        try:
            obj = module
            for part in parts:
                obj = getattr(obj, part)
        except AttributeError:
            raise ChildFailure("target-not-found", f"{function!r} is not defined at the top level of the module")

        import inspect

        nn = ms.nn
        init = self.req.get("init")
        if inspect.isclass(obj):
            instance = self.instantiate(obj, module, init)
            if isinstance(instance, nn.Cell):
                return instance, instance.construct, f"{function} (Cell instance, graph mode)"
            if callable(instance):
                return self.maybe_jit(ms, instance.__call__), instance.__call__, f"{function}.__call__"
            raise ChildFailure("target-not-found", f"{function!r} is a class whose instances are not callable")
        if len(parts) >= 2:
            owner = module
            for part in parts[:-1]:
                owner = getattr(owner, part)
            if inspect.isclass(owner):
                instance = self.instantiate(owner, module, init)
                bound = getattr(instance, parts[-1])
                if isinstance(instance, nn.Cell) and parts[-1] == "construct":
                    return instance, instance.construct, f"{parts[0]} (Cell instance, graph mode)"
                return self.maybe_jit(ms, bound), bound, function
        if not callable(obj):
            raise ChildFailure("target-not-found", f"{function!r} is not callable")
        return self.maybe_jit(ms, obj), obj, function

    def instantiate(self, cls, module, init):
        self.stage("init")
        if not init:
            self.check_constructor(cls)
        seed_weights()
        try:
            if init:
                instance = eval(init, vars(module))  # noqa: S307 - the user's own constructor expression
            else:
                instance = cls()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            name, summary, _ = summarize_exception(exc, self.display)
            how = f"`{init}`" if init else f"`{cls.__name__}()` (no --init given)"
            raise ChildFailure("init-failed", f"constructing the target with {how} failed: {name}: {summary}", exc)
        if init and not isinstance(instance, cls):
            self.result["notes"].append(f"--init built a {type(instance).__name__}, not a {cls.__name__}")
        self.instance = instance
        return instance

    def check_constructor(self, cls):
        """Without --init, a constructor with required parameters is a clear error naming them, with a template."""
        import inspect

        try:
            params = list(inspect.signature(cls).parameters.values())
        except (TypeError, ValueError):
            return
        required = [p.name for p in params if p.default is p.empty
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        if required:
            raise ChildFailure("init-failed", constructor_message(cls.__name__, required))

    def maybe_jit(self, ms, fn):
        mode = self.req.get("jit", "auto")
        target = getattr(fn, "__func__", fn)
        wrapped = bool(getattr(target, "__wrapped_by_jit__", False))
        if mode == "never" or wrapped:
            return fn
        if mode == "auto" or mode == "always":
            self.result["notes"].append("the target is not decorated with ms.jit: it was wrapped in ms.jit to run it "
                                        "as graph code")
            return ms.jit(fn)
        return fn

    def load_arrays(self):
        import numpy as np

        if getattr(self, "_arrays", None) is None:
            self._arrays = {}
            inputs_file = self.req.get("inputs_file")
            if inputs_file:
                with np.load(inputs_file, allow_pickle=False) as data:
                    self._arrays = {key: data[key] for key in data.files}
        return self._arrays

    def draw_trees(self):
        """The input tree of each draw: the first one is ``inputs_tree``, the others ``extra_draws``."""
        return [self.req.get("inputs_tree") or {}] + [d or {} for d in (self.req.get("extra_draws") or [])]

    def build_args(self, ms, sig_callable, tree=None):
        import inspect

        self.stage("inputs")
        order = self.req.get("input_order", [])
        scalars = self.req.get("scalars", {})
        arrays = self.load_arrays()
        values = {}
        tree = (self.req.get("inputs_tree") or {}) if tree is None else tree

        def build(node):
            kind = node.get("t")
            if kind == "array":
                return ms.Tensor(arrays[node["key"]])
            if kind == "none":
                return None
            if kind in ("tuple", "list"):
                items = [build(item) for item in node["items"]]
                return tuple(items) if kind == "tuple" else items
            return node.get("value")

        for name in order:
            if name in tree:
                values[name] = build(tree[name])
            elif name in scalars:
                values[name] = scalars[name]
            elif name in arrays:
                values[name] = ms.Tensor(arrays[name])
            else:
                raise ChildFailure("internal", f"input {name!r} missing from the request")

        try:
            params = list(inspect.signature(sig_callable).parameters.values())
        except (TypeError, ValueError):
            return [values[name] for name in order], values
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        has_varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
        param_names = [p.name for p in positional]
        self.result["parameters"] = param_names
        unknown = [name for name in order if name not in param_names]
        if unknown and not has_varargs:
            raise ChildFailure(
                "bad-inputs",
                f"the inputs name {', '.join(unknown)} but the target's parameters are "
                f"({', '.join(param_names) or 'none'}); name the inputs after the parameters",
            )
        if unknown:  # *args: pass in spec order
            return [values[name] for name in order], values
        args = []
        for param in positional:
            if param.name in values:
                args.append(values[param.name])
            elif param.default is not param.empty:
                break
            else:
                raise ChildFailure(
                    "bad-inputs",
                    f"no input given for parameter {param.name!r} of ({', '.join(param_names)}); "
                    f"add it to the spec, e.g. \"{param.name}=float32[4]\"",
                )
        used = set(param_names[: len(args)])
        leftover = [name for name in order if name not in used]
        if leftover:
            raise ChildFailure(
                "bad-inputs",
                f"inputs {', '.join(leftover)} come after a parameter with a default that has no input; "
                "give inputs for every parameter up to the last one you set",
            )
        return args, values

    # -- running -------------------------------------------------------------------------------------------------
    def sync(self, obj):
        """Block until obj's tensors are computed (by fetching them to the host)."""
        if isinstance(obj, (tuple, list)):
            for item in obj:
                self.sync(item)
        elif isinstance(obj, dict):
            for item in obj.values():
                self.sync(item)
        elif hasattr(obj, "asnumpy"):
            obj.asnumpy()

    def call(self, ms, fn, args, what):
        try:
            start = time.perf_counter()
            out = fn(*args)
            self.sync(out)
            return out, time.perf_counter() - start
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            name, summary, detail = summarize_exception(exc, self.display)
            kind = "grad-failed" if what == "grad" else "call-failed"
            failure = ChildFailure(kind, f"{name}: {summary}", exc)
            self.result["error_detail"] = detail
            self.result["error_lines"] = error_lines(exc, self.req["module_file"])
            user_tb = _user_traceback(exc, self.req["module_file"], self.display)
            if user_tb:
                self.result["error_traceback"] = user_tb
            raise failure

    def encode(self, obj, prefix):
        """A JSON description of obj's structure; tensor leaves go to self.leaves."""
        import numpy as np

        if isinstance(obj, tuple):
            return {"type": "tuple", "items": [self.encode(x, f"{prefix}.{i}") for i, x in enumerate(obj)]}
        if isinstance(obj, list):
            return {"type": "list", "items": [self.encode(x, f"{prefix}.{i}") for i, x in enumerate(obj)]}
        if isinstance(obj, dict):
            return {"type": "dict", "items": {str(k): self.encode(v, f"{prefix}.{k}") for k, v in obj.items()}}
        if obj is None:
            return {"type": "none"}
        if isinstance(obj, (bool, int, float)):
            return {"type": "scalar", "pytype": type(obj).__name__, "value": obj}
        if hasattr(obj, "asnumpy") or isinstance(obj, np.ndarray):
            try:
                arr = obj.asnumpy() if hasattr(obj, "asnumpy") else obj
            except Exception:  # e.g. bfloat16 without a numpy type
                arr = obj.float().asnumpy()
            arr = np.asarray(arr)
            key = f"leaf{len(self.leaves)}"
            self.leaves[key] = arr
            return {
                "type": "tensor",
                "key": key,
                "dtype": str(getattr(obj, "dtype", arr.dtype)),
                "np_dtype": str(arr.dtype),
                "shape": list(arr.shape),
            }
        return {"type": "other", "pytype": type(obj).__name__, "repr": repr(obj)[:200]}

    def run(self):
        import resource

        ms = self.import_mindspore()
        self.set_device(ms, self.req.get("device", "CPU"))
        warm_up(ms)
        if self.req.get("probe"):
            return self.run_probe(ms)
        module = self.import_module(ms)
        self.run_setup(module)
        fn, sig_callable, description = self.resolve_target(ms, module)
        self.result["target"] = description
        args, values = self.build_args(ms, sig_callable)
        self.result["rss_before_call_mb"] = maxrss_mb(resource)

        self.stage("first-call")
        out, first = self.call(ms, fn, args, "first")
        self.result["first_call_s"] = first

        self.stage("steady")
        times = []
        for _ in range(int(self.req.get("steady_calls", 20))):
            out, elapsed = self.call(ms, fn, args, "steady")
            times.append(elapsed)
        times.sort()
        self.result["steady_times_s"] = times
        self.result["run_s"] = _median(times) if times else first

        structure = {"outputs": self.encode(out, "out")}
        if self.req.get("grad"):
            self.stage("grad")
            positions = [
                i for i, arg in enumerate(args)
                if hasattr(arg, "dtype") and hasattr(arg, "asnumpy") and arg.dtype in (
                    ms.float16, ms.float32, ms.float64, getattr(ms, "bfloat16", ms.float16))
            ]
            if not positions:
                self.result["notes"].append("--grad: no float tensor inputs, nothing to differentiate")
                structure["grads"] = {"type": "none"}
            else:
                names = [n for n in self.result.get("parameters", [])]
                self.result["grad_wrt"] = [names[i] if i < len(names) else str(i) for i in positions]
                grad_fn = ms.grad(fn, grad_position=tuple(positions))
                grads, grad_s = self.call(ms, grad_fn, args, "grad")
                self.result["grad_first_call_s"] = grad_s
                structure["grads"] = self.encode(grads, "grad")
        # the other draws: same shapes, so the compiled graph is reused; each one's outputs are compared too
        extra = []
        for index, tree in enumerate(self.draw_trees()[1:], start=1):
            self.stage(f"draw-{index}")
            draw_args, _ = self.build_args(ms, sig_callable, tree)
            out, _ = self.call(ms, fn, draw_args, "draw")
            entry = {"outputs": self.encode(out, f"d{index}.out")}
            if "grads" in structure and structure["grads"].get("type") != "none":
                grads, _ = self.call(ms, grad_fn, draw_args, "grad")
                entry["grads"] = self.encode(grads, f"d{index}.grad")
            extra.append(entry)
        structure["draws"] = extra
        params = self.parameters_after()
        if params is not None:
            structure["params"] = params
        self.result["structure"] = structure

        self.stage("write")
        import numpy as np

        np.savez(os.path.join(self.workdir, "outputs.npz"), **self.leaves)
        self.result["peak_mb"] = maxrss_mb(resource)
        self.result["ok"] = True
        self.stage("done")

    def parameters_after(self):
        """A Cell target's Parameters after every call (first, steady, draws): what an optimizer or a stateful
        Cell changes. Both versions make the same calls on the same inputs, so these must match too."""
        instance = getattr(self, "instance", None)
        if instance is None or not hasattr(instance, "parameters_and_names"):
            return None
        try:
            named = {name: param for name, param in instance.parameters_and_names()}
        except Exception:
            return None
        if not named:
            return None
        return self.encode(named, "param")

    def run_probe(self, ms):
        """The probed original, in PyNative mode with ``MS_JIT=0`` (set by the runner): for each draw, how often
        each probed condition was true and false (``ms_lint.verifier.branches``)."""
        import builtins

        counts = {}

        def probe(probe_id, value):
            hit = counts.setdefault(str(probe_id), [0, 0])
            hit[0 if bool(value) else 1] += 1
            return value

        builtins.__ms_lint_probe__ = probe
        module = self.import_module(ms)
        try:
            ms.set_context(mode=ms.PYNATIVE_MODE)
        except Exception as exc:
            raise ChildFailure("call-failed", f"cannot switch to PyNative mode: {exc}", exc)
        self.run_setup(module)
        self.req["jit"] = "never"
        fn, sig_callable, description = self.resolve_target(ms, module)
        self.result["target"] = description
        per_draw = []
        for index, tree in enumerate(self.draw_trees()):
            self.stage(f"probe-{index}")
            counts.clear()
            try:
                args, _ = self.build_args(ms, sig_callable, tree)
                self.call(ms, fn, args, "probe")
            except ChildFailure as failure:
                per_draw.append(None)
                self.result.setdefault("probe_errors", []).append(f"draw {index}: {failure.message}")
                continue
            per_draw.append({key: list(value) for key, value in counts.items()})
        self.result["branch_counts"] = per_draw
        self.result["structure"] = {"outputs": {"type": "none"}}
        self.result["first_call_s"] = 0.0
        self.result["run_s"] = 0.0
        self.stage("write")
        import numpy as np

        np.savez(os.path.join(self.workdir, "outputs.npz"))
        self.result["ok"] = True
        self.stage("done")


def warm_up(ms):
    """MindSpore 2.10 with NumPy 2: the first eager op of a process fails once ("numpy.core.multiarray failed to
    import", then a SystemError from the op); pay that here, not in a constructor, ``--setup`` or the first draw."""
    try:
        bool(ms.Tensor(1.0) > 0)
    except Exception:
        pass


def error_lines(exc, module_file):
    """Line numbers in ``module_file`` where a failure happened: the Python traceback's frames in that file and
    the ``In file FILE:LINE`` lines of MindSpore's graph-compile report, innermost first, without repeats."""
    import re

    lines = []
    real = os.path.realpath(module_file) if module_file else ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == module_file and frame.lineno not in lines:
            lines.append(frame.lineno)
    for match in re.finditer(r"In file (.+?):(\d+)", str(exc)):
        name, number = match.group(1).strip(), int(match.group(2))
        if (name == module_file or os.path.realpath(name) == real) and number not in lines:
            lines.append(number)
    return lines


def constructor_message(class_name, required, config_hints=None):
    """The error for a class whose ``__init__`` needs arguments and no --init was given (shared with the runner)."""
    config_hints = config_hints or {}
    args = ", ".join(f"{name}={name}" if name in config_hints else f"{name}=..." for name in required)
    text = (f"{class_name}.__init__ needs {', '.join(required)} (no defaults) and no --init was given; pass "
            f"--init \"{class_name}({args})\"")
    if config_hints:
        setup = "; ".join(config_hints.values())
        text += f" with --setup \"{setup}\" (your values)"
    else:
        text += (" (your values); build objects it needs with --setup \"from .config import Config; "
                 "cfg = Config(...)\"")
    return text


def seed_weights(seed=0):
    """Seed MindSpore's and NumPy's global generators before a Cell is built, so the original and the rewritten
    module (each in its own process) get the same initial weights: a rewrite is compared on equal terms."""
    import mindspore
    import numpy

    mindspore.set_seed(seed)
    numpy.random.seed(seed)


def _median(values):
    values = sorted(values)
    n = len(values)
    mid = n // 2
    return values[mid] if n % 2 else (values[mid - 1] + values[mid]) / 2


def maxrss_mb(resource):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":
        return rss / (1024 * 1024)
    return rss / 1024


def serve_request(argv, make_child, module: str, what: str, annotate=None, before_exit=None):
    """The body of a child process (``python -m MODULE REQUEST.json``): read the request, run ``make_child(request,
    workdir).run()``, record any failure in its result, write ``result.json`` next to the request atomically and
    leave at once. ``annotate(result)`` adds to the result before it is written; ``before_exit()`` runs last."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(f"usage: python -m {module} REQUEST.json", file=sys.stderr)
        return 2
    request_path = os.path.abspath(argv[0])
    workdir = os.path.dirname(request_path)
    scrub_cache_env()
    with open(request_path) as handle:
        request = json.load(handle)
    child = make_child(request, workdir)
    try:
        child.run()
    except ChildFailure as failure:
        child.result["ok"] = False
        child.result["error"] = {"kind": failure.kind, "message": failure.message,
                                 "type": type(failure.exc).__name__ if failure.exc else None}
    except BaseException as exc:  # noqa: BLE001 - the harness must always report
        child.result["ok"] = False
        child.result["error"] = {"kind": "internal", "message": f"{what} child crashed: {type(exc).__name__}: {exc}",
                                 "type": type(exc).__name__}
        child.result["error_detail"] = traceback.format_exc()[-4000:]
    if annotate is not None:
        annotate(child.result)
    tmp = os.path.join(workdir, "result.json.tmp")
    with open(tmp, "w") as handle:
        json.dump(child.result, handle, default=repr)
    os.replace(tmp, os.path.join(workdir, "result.json"))
    sys.stdout.flush()
    sys.stderr.flush()
    if before_exit is not None:
        before_exit()
    # MindSpore's atexit handlers can hang or abort on teardown; the result is on disk, so leave at once.
    os._exit(0)


def _peak_memory(result) -> None:
    try:
        import resource

        result.setdefault("peak_mb", maxrss_mb(resource))
    except Exception:
        pass


def main(argv=None):
    return serve_request(argv, Child, "ms_lint.verifier.child", "verifier", annotate=_peak_memory)


if __name__ == "__main__":
    main()
