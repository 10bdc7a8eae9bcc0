"""MSL301 missing-compile-cache: a script compiles graphs on every run and never turns the compile cache on.

A script is a module with an ``if __name__ == "__main__":`` block, or whose module-level code runs graph code or
parses the command line (``parser.parse_args()``, ``sys.argv``).
It compiles graphs when it sets ``mode=GRAPH_MODE`` (any spelling) or calls ``@jit`` functions. Libraries, and
modules that mention any compile-cache setting (including a deliberate ``MS_COMPILER_CACHE_ENABLE=0``), are left
alone; so is ``set_context(**cfg)``, whose mode and cache keys are not visible.

The fix (unsafe: it changes run-time behaviour) inserts ``os.environ.setdefault`` lines after the module's
imports. It is not offered when, with the cache on, a value from the command line, the environment or a config
file would become part of a compiled graph (what MSL303 reports): the cache would then serve a stale graph to a
run that changes it, a wrong result rather than a slow one. MindSpore 2.10 reads the variables at every compile,
so anywhere before the first graph call works; ``setdefault`` lets a user still switch the cache off from the shell
(``MS_COMPILER_CACHE_ENABLE=0``).
"""
from __future__ import annotations

import os
from typing import List, Optional

import libcst as cst

from ms_lint.cstutil import main_guard
from ms_lint.diagnostics import UNSAFE, Fix
from ms_lint.names import dotted
from ms_lint.analysis.layout import is_test_module
from ms_lint.rules._cache_common import (
    ENABLE_VAR, KEY_WARNING, PATH_VAR, SAFE_STEM, GraphRuns, environ_spelling, has_star,
    mentions_cache_settings, mode_of, parse_line, set_context_calls, string_literal,
)
from ms_lint.analysis.run_screen import may_run_jit
from ms_lint.prefilter import AnyOf, CalledWith, CalledWords, Text, satisfied
from ms_lint.rules.base import Invalid, Rule
from ms_lint.rules.msl303_stale_compile_cache_hazard import stale_cache_hazards

CACHE_DIR = "ms_compile_cache"


class MissingCompileCache(Rule):
    code = "MSL301"
    name = "missing-compile-cache"
    summary = "Script compiles graphs on every run: enable MindSpore's compile cache"
    fix_applicability = UNSAFE
    # Pre-filter (ms_lint/prefilter.py): a report needs a ``set_context(mode=...)`` call (GRAPH_MODE) or a run of
    # @jit code (a jit-decorated function or Cell, or a ``jit(f)`` call): names it resolves with qualify as callees.
    requires_text = AnyOf(CalledWords("jit", "ms_function"), CalledWith("set_context", "mode"))

    @staticmethod
    def may_fire_in(text: str, path: str) -> bool:
        """What ``check_module`` needs before it can report: no cache setting and no test module, then a
        ``set_context(mode=...)`` call in the code, or run-time code that may call ``@jit`` graph code
        (``ms_lint.analysis.run_screen``). A library module that only defines ``@jit`` functions is not parsed
        for this rule."""
        if mentions_cache_settings(text) or is_test_module(path):
            return False
        return satisfied(CalledWith("set_context", "mode"), Text(text)) or may_run_jit(text, path)

    VALID = [
        # Already enables the cache.
        """\
        import os

        import mindspore as ms

        os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")
        ms.set_context(mode=ms.GRAPH_MODE)

        if __name__ == "__main__":
            print(ms.get_context("mode"))
        """,
        # PyNative only, no @jit.
        """\
        import mindspore as ms

        ms.set_context(mode=ms.PYNATIVE_MODE)

        if __name__ == "__main__":
            print(ms.get_context("mode"))
        """,
        # A library: defines graph code, runs nothing.
        """\
        import mindspore as ms
        from mindspore import nn


        class Net(nn.Cell):
            def construct(self, x):
                return x * 2


        @ms.jit
        def step(x):
            return x + 1
        """,
        # The mode is not visible.
        """\
        import mindspore as ms

        CFG = {"mode": ms.GRAPH_MODE}

        if __name__ == "__main__":
            ms.set_context(**CFG)
        """,
        # Sets GRAPH_MODE but compiles nothing: it only reads a dataset.
        """\
        import numpy as np
        import mindspore as ms
        import mindspore.dataset as ds

        ms.set_context(mode=ms.GRAPH_MODE)

        if __name__ == "__main__":
            data = ds.NumpySlicesDataset(np.ones((4, 2), np.float32), shuffle=False)
            for row in data.create_tuple_iterator():
                print(row)
        """,
    ]
    INVALID = [
        Invalid(
            """\
            import mindspore as ms
            from mindspore import context

            context.set_context(mode=context.GRAPH_MODE)

            if __name__ == "__main__":
                net = ms.nn.Dense(2, 2)
                print(net(ms.Tensor([[1.0, 2.0]])))
            """,
            fixed="""\
            import os

            import mindspore as ms
            from mindspore import context

            # MindSpore compile cache (ms-lint MSL301): reused while this script and its local imports are unchanged;
            # it does not notice changed env vars, CLI args, config files, packages, or input shapes and dtypes.
            os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")
            os.environ.setdefault(
                "MS_COMPILER_CACHE_PATH", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ms_compile_cache", "example"))

            context.set_context(mode=context.GRAPH_MODE)

            if __name__ == "__main__":
                net = ms.nn.Dense(2, 2)
                print(net(ms.Tensor([[1.0, 2.0]])))
            """,
            unsafe=True,
        ),
        Invalid(
            """\
            import os

            import numpy as np
            import mindspore as ms


            @ms.jit
            def step(x):
                return x * 2 + 1


            if __name__ == "__main__":
                print(step(ms.Tensor(np.ones((2, 2), np.float32))))
            """,
            fixed="""\
            import os

            import numpy as np
            import mindspore as ms

            # MindSpore compile cache (ms-lint MSL301): reused while this script and its local imports are unchanged;
            # it does not notice changed env vars, CLI args, config files, packages, or input shapes and dtypes.
            os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")
            os.environ.setdefault(
                "MS_COMPILER_CACHE_PATH", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ms_compile_cache", "example"))


            @ms.jit
            def step(x):
                return x * 2 + 1


            if __name__ == "__main__":
                print(step(ms.Tensor(np.ones((2, 2), np.float32))))
""",
            unsafe=True,
        ),
    ]

    def check_module(self) -> None:
        context = self.context
        if mentions_cache_settings(context.text) or is_test_module(context.path):
            return  # test modules run under pytest, whose processes are not the user's training runs
        calls = set_context_calls(context)
        if any(has_star(info.call) for info in calls):
            return  # set_context(**cfg): the mode (and maybe the cache) is not visible
        graph_infos = [info for info in calls if mode_of(context, info.call, info.function) == "graph"]
        graph_calls = [info.call for info in graph_infos]
        guard = main_guard(context.module)
        runs = GraphRuns(context)
        if graph_calls:
            if guard is None and not runs.reads_command_line and runs.first_run(graph_mode=True) is None:
                # Not a script itself; a helper that a script calls to set the mode (``init_env(args)``)?
                for info in graph_infos:
                    script = _script_calling(context, info.function)
                    if script is not None:
                        self._report_helper(info.call, info.function.name.value, script)
                        return
                return  # a module that only sets the mode at import: not a script we can see run
            if not runs.may_compile():
                return  # sets GRAPH_MODE but compiles nothing (it only reads a dataset, converts files...)
            self._report(graph_calls[0], "sets GRAPH_MODE")
            return
        first = runs.first_run(graph_mode=False)
        if first is None:
            return
        self._report(guard if guard is not None else first, "calls @jit graph code")

    def _report(self, node: cst.CSTNode, why: str) -> None:
        message = (
            f"This script {why} and compiles every graph again on each run; MindSpore's compile cache "
            f"(MS_COMPILER_CACHE_ENABLE=1, MS_COMPILER_CACHE_PATH=dir) makes later runs of the unchanged script load "
            f"them instead (200-step example on 2.10 CPU: 0.77 s -> 0.045 s). Before enabling it, note that "
            f"{KEY_WARNING}: keep it off for runs that change those"
        )
        hazards = stale_cache_hazards(self.context)
        if hazards:
            # Turning the cache on here would create an MSL303 hazard: say so, and leave the decision to the user.
            more = f" (and {len(hazards) - 1} more)" if len(hazards) > 1 else ""
            message += (f". Here {hazards[0][1]}{more}, so the cache would silently reuse a stale graph for a run "
                        f"that changes it: no fix is offered; enable it only for runs that keep those values fixed")
            self.report(node, f"script {why} with the compile cache off; not fixed: its arguments or config shape "
                              "the graph", detail=message)
            return
        self.report(node, f"script {why} with the compile cache off: set MS_COMPILER_CACHE_ENABLE=1 to reuse graphs",
                    fix=self._fix(), detail=message)

    def _report_helper(self, node: cst.Call, helper: str, script: str) -> None:
        """A ``set_context(mode=GRAPH_MODE)`` in a helper of a script in another module: reported here, where the
        mode is set, with the cure for the script (no fix: the cache settings belong to each entry script, whose
        name keys its cache folder, not to a helper several scripts share)."""
        self.report(node, f"`{os.path.basename(script)}` sets GRAPH_MODE here via `{helper}`, compile cache off: set "
                          f"MS_COMPILER_CACHE_ENABLE=1 there to reuse graphs",
                    detail=f"`{script}` calls `{helper}`, which sets GRAPH_MODE here, and then compiles graphs on "
                           f"every run. MindSpore's compile cache (MS_COMPILER_CACHE_ENABLE=1, "
                           f"MS_COMPILER_CACHE_PATH=dir, set in `{script}` before its first compile) makes later runs "
                           f"load them instead. Before enabling it, note that {KEY_WARNING}.")

    def _fix(self) -> Optional[Fix]:
        context = self.context
        body = list(context.module.body)
        anchor = _last_leading_import(body)
        spelled = environ_spelling(context, module_level=True)
        os_module = context.imports.local_reference("os")
        os_path = f"{os_module}.path" if os_module else context.imports.local_reference("os.path")
        os_imports: tuple = ()
        if os_path is None and spelled is not None and spelled[0] == "os.environ" and spelled[1]:
            os_path = "os.path"  # the `import os` added for os.environ serves os.path too
        if os_path is None:
            found = context.spell("os.path")
            if found is None:
                return None
            os_path, os_imports = found
        if anchor is None or spelled is None:
            return None
        environ, imports = spelled
        imports = tuple(dict.fromkeys(os_imports + imports))
        # The cache folder sits next to the script and is named after it: unique per script, whatever folder
        # the script is run from (a path relative to the working directory made three train.py share one).
        stem = os.path.splitext(os.path.basename(context.path or ""))[0]
        parts = [CACHE_DIR, stem] if stem and SAFE_STEM.match(stem) else [CACHE_DIR]
        here = f"{os_path}.dirname({os_path}.abspath(__file__))"
        path_code = f"{os_path}.join({here}, {', '.join(string_literal(p) for p in parts)})"
        enable = parse_line(context, f'{environ}.setdefault("{ENABLE_VAR}", "1")')
        # a blank line first: isort (ruff's I001) wants one between the import block and the code after it
        enable = enable.with_changes(leading_lines=[
            cst.EmptyLine(),
            cst.EmptyLine(comment=cst.Comment(
                "# MindSpore compile cache (ms-lint MSL301): reused while this script and its local imports are "
                "unchanged;")),
            cst.EmptyLine(comment=cst.Comment(
                "# it does not notice changed env vars, CLI args, config files, packages, or input shapes and "
                "dtypes.")),
        ])
        set_path = parse_line(context, f"{environ}.setdefault(\n    \"{PATH_VAR}\", {path_code})")
        return Fix(
            UNSAFE,
            f"enable the compile cache with {environ}.setdefault(\"{ENABLE_VAR}\", \"1\") after the imports "
            f"(changes run-time behaviour: later runs load cached graphs)",
            edits=((anchor, [anchor, enable, set_path]),),
            imports=imports,
        )


def _script_calling(context, function: Optional[cst.FunctionDef]) -> Optional[str]:
    """The first project script (display path) that calls the module-level ``function`` of this module from its
    run-time code, compiles graphs, leaves the cache settings alone and does not set the mode itself."""
    project = context.project
    if function is None or project is None or project.module is None:
        return None
    if context.scope.module_functions.get(function.name.value) is not function:
        return None  # a method or a nested function: who calls it is not visible from the index
    wanted = (project.module, function.name.value)
    for module, path in project.importing_modules():
        if is_test_module(path):
            continue
        text = project.module_text(module, path)  # an editor's buffer of the script, not its file
        if text is None:
            continue
        if function.name.value not in text or mentions_cache_settings(text) or (
                "__main__" not in text and "parse_args" not in text and "argv" not in text):
            continue
        other = project.context_for(module)
        if other is None or other.project is None:
            continue
        runs = GraphRuns(other)
        if main_guard(other.module) is None and not runs.reads_command_line:
            continue
        if runs.graph_mode:
            continue  # the script sets GRAPH_MODE itself: reported there
        calls_helper = any(
            name is not None and other.project.project_target(name) == wanted
            for name in (dotted(call.func) for call in runs.calls))
        if calls_helper and runs.may_compile(ignoring=wanted):
            from ms_lint.runner import display_path

            return display_path(path)
    return None


def _last_leading_import(body: List[cst.BaseStatement]) -> Optional[cst.SimpleStatementLine]:
    """The last top-level import line before the first def/class: where ``add_imports`` puts new imports too,
    so an added ``import os`` lands just before the inserted lines."""
    last = None
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body
        ):
            last = stmt
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            break
    return last
