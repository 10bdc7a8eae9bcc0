"""MSL302 deprecated-compile-cache-context: ``set_context(enable_compile_cache=..., compile_cache_path=...)``.

MindSpore 2.10 deprecates both keys (``enable_compile_cache`` logs a warning on every call) in favour of the
environment variables ``MS_COMPILER_CACHE_ENABLE`` and ``MS_COMPILER_CACHE_PATH``.

The safe fix writes ``os.environ[...] = ...`` statements just before the call, in the same block, and drops the
keys (the whole call when nothing else is left). Why assignments and not ``setdefault``: in 2.10 a value given
to ``set_context`` overrides the environment variable (measured: context ``False`` beats
``MS_COMPILER_CACHE_ENABLE=1``, a context path beats ``MS_COMPILER_CACHE_PATH``), and both are read at every
compile, so an assignment at the same point is the exact equivalent; ``enable_compile_cache=False`` becomes
``"0"`` for the same reason. Only literal ``True``/``False`` and paths that are visibly strings are rewritten;
anything else is reported without a fix.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import libcst as cst

from ms_lint import fasttree
from ms_lint.cstutil import code_of
from ms_lint.diagnostics import SAFE, Fix
from ms_lint.rules._cache_common import (
    CACHE_KEYS, ENABLE_VAR, PATH_VAR, CallInfo, environ_spelling, has_star, keyword, module_calls, parse_line,
    set_context_calls,
)
from ms_lint.prefilter import CalledWith
from ms_lint.rules.base import Invalid, Rule
from ms_lint.analysis.values import is_literal, literal_value
from ms_lint.walk import run_visitor

# Calls that return a str whatever string-like arguments they get.
STRING_FUNCTIONS = {"os.path.join", "os.path.abspath", "os.path.realpath", "os.path.expanduser", "os.path.normpath",
                    "os.path.dirname", "os.getcwd"}


class DeprecatedCompileCacheContext(Rule):
    code = "MSL302"
    name = "deprecated-compile-cache-context"
    summary = "set_context(enable_compile_cache=..., compile_cache_path=...) is deprecated: use environment variables"
    fix_applicability = SAFE
    # Pre-filter: a ``set_context(...)`` call with one of the keywords it reports.
    requires_text = CalledWith("set_context", "enable_compile_cache", "compile_cache_path")

    VALID = [
        """\
        import os

        import mindspore as ms

        os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"
        os.environ["MS_COMPILER_CACHE_PATH"] = "./cache"
        ms.set_context(mode=ms.GRAPH_MODE)
        """,
        # Not MindSpore's set_context.
        """\
        import mindspore
        from mylib import set_context

        set_context(enable_compile_cache=True)
        """,
    ]
    INVALID = [
        Invalid(
            """\
            import mindspore as ms

            ms.set_context(mode=ms.GRAPH_MODE, enable_compile_cache=True, compile_cache_path="./cache")
            """,
            fixed="""\
            import os

            import mindspore as ms

            os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"
            os.environ["MS_COMPILER_CACHE_PATH"] = "./cache"
            ms.set_context(mode=ms.GRAPH_MODE)
""",
        ),
        Invalid(
            """\
            import os

            from mindspore import context


            def main():
                # turn the cache on
                context.set_context(enable_compile_cache=True,
                                    compile_cache_path=os.path.join("out", "cache"))
                context.set_context(enable_compile_cache=False)
            """,
            fixed="""\
            import os

            from mindspore import context


            def main():
                # turn the cache on
                os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"
                os.environ["MS_COMPILER_CACHE_PATH"] = os.path.join("out", "cache")
                os.environ["MS_COMPILER_CACHE_ENABLE"] = "0"
            """,
        ),
        # The path's type is not visible: reported, not rewritten.
        Invalid(
            """\
            import mindspore

            def setup(args):
                mindspore.context.set_context(enable_compile_cache=True, compile_cache_path=args.cache_dir)
            """,
        ),
    ]

    def check_module(self) -> None:
        for info in set_context_calls(self.context):
            keys = [name for name in CACHE_KEYS if keyword(info.call, name) is not None]
            if not keys:
                continue
            spelled = " and ".join(f"`{key}`" for key in keys)
            verb = "are" if len(keys) > 1 else "is"
            message = (
                f"{spelled} in set_context {verb} deprecated in MindSpore 2.10 (a warning on every call); set the "
                f"environment variables {ENABLE_VAR} / {PATH_VAR} instead"
            )
            variables = ", ".join(var for key, var in (("enable_compile_cache", ENABLE_VAR),
                                                          ("compile_cache_path", PATH_VAR)) if key in keys)
            self.report(info.call, f"deprecated set_context {', '.join(f'`{key}`' for key in keys)}: set {variables}",
                        fix=self._fix(info), detail=message)

    def _fix(self, info: CallInfo) -> Optional[Fix]:
        context = self.context
        call, line = info.call, info.line
        if line is None or has_star(call):
            return None  # the call is part of a larger statement, or **kwargs may hold more keys
        if _reads_cache_context(context):
            return None  # get_context("enable_compile_cache") reads the context, not the environment variable
        spelled = environ_spelling(context)
        if spelled is None:
            return None
        environ, imports = spelled
        if imports and info.function is None and info.top_index < _import_index(context.module.body):
            return None  # module-level call above where the new `import os` would go
        if not imports and info.function is None and not _imported_before(context, environ, info.top_index):
            return None
        assignments: List[cst.SimpleStatementLine] = []
        for arg in call.args:
            if arg.keyword is None:
                continue
            if arg.keyword.value == "enable_compile_cache":
                value = literal_value(arg.value) if is_literal(arg.value) else None
                if value is not True and value is not False:
                    return None
                assignments.append(parse_line(context, f'{environ}["{ENABLE_VAR}"] = "{int(value)}"'))
            elif arg.keyword.value == "compile_cache_path":
                if not self._is_string(arg.value):
                    return None
                code = code_of(arg.value)
                assignments.append(parse_line(context, f'{environ}["{PATH_VAR}"] = {code}'))
        remaining = [arg for arg in call.args if arg.keyword is None or arg.keyword.value not in CACHE_KEYS]
        removed = [arg for arg in call.args if arg not in remaining]
        if "#" in code_of(call):  # a comment, or a string with a ``#``, in the call
            if fasttree.is_fast_module(context.module):
                raise fasttree.NeedsRealTree("comments in a call")  # a fast tree keeps none
            if any(_has_comment(arg) for arg in removed) or (remaining and _has_comment(remaining[-1].comma)):
                return None  # a comment would be lost with the removed arguments
        statements: List[cst.SimpleStatementLine] = list(assignments)
        if remaining:
            new_call = call.with_changes(args=_with_last_comma(remaining, call.args))
            statements.append(line.with_changes(body=[line.body[0].with_changes(value=new_call)],
                                                leading_lines=[]))
        else:
            # Keep the call's trailing comment on the last assignment.
            statements[-1] = statements[-1].with_changes(trailing_whitespace=line.trailing_whitespace)
        statements[0] = statements[0].with_changes(leading_lines=line.leading_lines)
        return Fix(SAFE, f"set {ENABLE_VAR} / {PATH_VAR} through {environ} instead (same behaviour)",
                   edits=((line, statements),), imports=imports)

    def _is_string(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            return not isinstance(expr, cst.SimpleString) or isinstance(expr.evaluated_value, str)
        if isinstance(expr, cst.Name):
            return isinstance(self.context.constants.values.get(expr.value), str)
        if isinstance(expr, cst.Subscript):  # sys.argv[1], os.environ["DIR"]: always str
            return self.context.imports.qualify(expr.value) in ("sys.argv", "os.environ")
        if isinstance(expr, cst.Call):
            builtin_str = (isinstance(expr.func, cst.Name) and expr.func.value == "str"
                           and "str" not in self.context.imports.aliases)
            return builtin_str or self.context.imports.qualify(expr.func) in STRING_FUNCTIONS
        return False


def _reads_cache_context(context) -> bool:
    """The module asks ``get_context`` for a cache key (or for a key it computes): after the rewrite the context no
    longer holds it (measured on 2.10: ``get_context("enable_compile_cache")`` is None with only the variable set)."""
    for info in module_calls(context):
        if context.imports.qualify(info.call.func) != "mindspore.get_context":
            continue
        args = [a for a in info.call.args if a.keyword is None]
        key = literal_value(args[0].value) if args and is_literal(args[0].value) else None
        if key is None or key in CACHE_KEYS:
            return True
    return False


def _has_comment(node) -> bool:
    class Find(cst.CSTVisitor):
        found = False

        def visit_Comment(self, comment: cst.Comment) -> None:
            self.found = True

    if not isinstance(node, cst.CSTNode):
        return False  # MaybeSentinel: no comma
    finder = Find()
    run_visitor(node, finder)
    return finder.found


def _with_last_comma(remaining: Sequence[cst.Arg], original: Sequence[cst.Arg]) -> List[cst.Arg]:
    """The kept arguments; the last one takes the original last argument's comma (none, or a trailing comma)."""
    kept = list(remaining)
    kept[-1] = kept[-1].with_changes(comma=original[-1].comma)
    return kept


def _import_index(body: Sequence[cst.BaseStatement]) -> int:
    """Where ``add_imports`` puts a new import: after the last top-level import before the first def/class."""
    last = -1
    for index, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body
        ):
            last = index
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            break
    return last + 1


def _imported_before(context, environ: str, top_index: int) -> bool:
    """A module-level call may only use ``os`` / ``environ`` if a top-level import above it binds the name."""
    head = environ.split(".")[0]
    for stmt in context.module.body[:top_index]:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        bound = alias.asname.name.value if alias.asname else code_of(
                            alias.name).split(".")[0]
                        if bound == head:
                            return True
    return False
