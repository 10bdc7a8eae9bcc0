"""Small libcst helpers shared by the engine and the rules."""
from __future__ import annotations

import os
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint import fasttree
from ms_lint.chunks import chunk_bounds, runs
from ms_lint.treememo import tree_memo


def _not_validated(self) -> None:
    return None


def parse_module(text: str) -> cst.Module:
    """``cst.parse_module`` without the per-node validation libcst runs as its parser builds each node (every
    ``CSTNode.__post_init__`` calls ``_validate``): the parser only builds valid nodes, and the check costs about
    13% of a parse (2.1 of 15.7 s CPU on the 481 model modules of the eight-package corpus). Nodes the rewrites
    build afterwards are validated as usual. Not
    reentrant across threads: ms-lint parses on one thread (the language server runs its checks on one worker).

    A module of more than ``ms_lint.chunks.CHUNK_LINES`` lines is parsed a run of top-level statements at a time
    and joined (the same tree, a fraction of the parser's peak memory); whatever does not join exactly is parsed
    whole."""
    bounds = chunk_bounds(text)
    if len(bounds) > 1:
        joined = _parse_runs(text, bounds)
        if joined is not None:
            return joined
    return _parse_whole(text)


def _parse_runs(text: str, bounds) -> Optional[cst.Module]:
    """The module joined from its runs (``ms_lint.chunks``), or None when a run does not parse or does not
    join as the whole module would parse: other indentation or line ends detected, comments before or after a
    cut."""
    parsed = []
    for run, _line in runs(text, bounds):
        try:
            parsed.append(_parse_whole(run))
        except (cst.ParserSyntaxError, RecursionError, MemoryError):
            return None  # a cut inside a string or a bracket, or a real error: the whole module decides
    first = parsed[0]
    body = list(first.body)
    for run in parsed[1:]:
        if (run.default_indent != first.default_indent or run.default_newline != first.default_newline
                or run.encoding != first.encoding or not run.body
                or any(line.comment is not None for line in run.header)):
            return None
        statements = list(run.body)
        if run.header:
            statements[0] = statements[0].with_changes(leading_lines=(*run.header, *statements[0].leading_lines))
        body.extend(statements)
    if any(run.footer for run in parsed[:-1]) or not first.body:
        return None
    last = parsed[-1]
    return first.with_changes(body=body, footer=last.footer, has_trailing_newline=last.has_trailing_newline)


def _parse_whole(text: str) -> cst.Module:
    return _unvalidated(cst.parse_module, text)


def _unvalidated(parse, text: str):
    """``parse(text)`` with libcst's per-node validation switched off for its duration (not with libcst's old
    pure-Python parser, which may lean on it)."""
    if os.environ.get("LIBCST_PARSER_TYPE") == "pure":
        return parse(text)
    base = cst.CSTNode
    validated = base.__dict__["__post_init__"]
    base.__post_init__ = _not_validated  # type: ignore[method-assign]
    try:
        return parse(text)
    finally:
        base.__post_init__ = validated  # type: ignore[method-assign]


def top_statements(module: cst.Module) -> Dict[cst.CSTNode, cst.BaseStatement]:
    """Each module-level statement, and each member of a top-level class, -> the module-level statement holding
    it: where a node is placed by climbing the engine's parent map of graph code (which stops at a method)."""
    top: Dict[cst.CSTNode, cst.BaseStatement] = {}
    for statement in module.body:
        top[statement] = statement
        if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for member in statement.body.body:
                top[member] = statement
    return top


def suite_statements(suite: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    """Statements of a block; a one-line suite (``if x: y = 1``) counts as one simple statement."""
    kind = type(suite)  # libcst's node classes are final: exact tests, without the ABC machinery of isinstance
    if kind is cst.IndentedBlock:
        return suite.body
    return [cst.SimpleStatementLine(body=suite.body)] if kind is cst.SimpleStatementSuite else []


class _IsCompound(dict):
    """``_IS_COMPOUND[type(stmt)]``: is it a compound statement? One ``issubclass`` per class, then a dict lookup
    (``isinstance`` against libcst's abstract bases runs the ABC machinery on every call)."""

    def __missing__(self, node_class: type) -> bool:
        answer = self[node_class] = issubclass(node_class, cst.BaseCompoundStatement)
        return answer


_IS_COMPOUND = _IsCompound()
_DEFS = (cst.FunctionDef, cst.ClassDef)


def child_blocks(stmt: cst.BaseStatement) -> List[cst.BaseSuite]:
    """The suites directly inside a compound statement: body, else, except (``except*``), finally and ``case``
    blocks. Every compound statement of Python 3.9-3.13 has a ``body`` except ``match``, whose blocks are its
    cases; one libcst may add later without a ``body`` is not entered rather than crashing the file."""
    blocks: List[cst.BaseSuite] = []
    if not _IS_COMPOUND[type(stmt)]:
        return blocks
    body = getattr(stmt, "body", None)
    if type(body) is cst.IndentedBlock or type(body) is cst.SimpleStatementSuite:  # libcst's two ``BaseSuite``s
        blocks.append(body)
    orelse = getattr(stmt, "orelse", None)
    while orelse is not None:
        blocks.append(orelse.body)
        orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None
    for handler in getattr(stmt, "handlers", ()) or ():
        blocks.append(handler.body)
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        blocks.append(final.body)
    for case in getattr(stmt, "cases", ()) or ():
        blocks.append(case.body)
    return blocks


def walk_statements(body: Sequence[cst.BaseStatement], into_defs: bool = True) -> Iterator[cst.BaseStatement]:
    """Every statement in ``body`` and the blocks nested in it, in source order (expressions are not entered)."""
    for stmt in body:
        yield stmt
        if not into_defs and type(stmt) in _DEFS:
            continue
        for block in child_blocks(stmt):
            yield from walk_statements(suite_statements(block), into_defs)


def positional_params(func: cst.FunctionDef, bound: bool = False) -> List[cst.Param]:
    """Parameters a call can fill by position; ``bound`` (``self.f(...)``) leaves out the first, ``self``."""
    params = list(func.params.posonly_params) + list(func.params.params)
    return params[1:] if bound and params else params


def all_params(func: cst.FunctionDef, with_stars: bool = True) -> List[cst.Param]:
    """Every parameter: positional, keyword-only and (``with_stars``) ``*args`` / ``**kwargs``."""
    params = func.params
    found = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if with_stars:
        found += [star for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param)]
    return found


def param_names(func: cst.FunctionDef) -> Set[str]:
    return {param.name.value for param in all_params(func)}


def bind_arguments(func: cst.FunctionDef, bound: bool, call: cst.Call
                   ) -> Optional[Tuple[List[Tuple[str, cst.BaseExpression]], bool]]:
    """Which argument each parameter of ``func`` receives at ``call``: (name, argument) pairs, positional ones
    first, and whether some argument matched no named parameter (it goes to ``*args`` / ``**kwargs``). None when
    the call unpacks ``*seq`` or ``**mapping``: then nothing is known, except for ``f(a, b, *rest)`` passed on
    to ``def f(self, a, b, *rest)``: the named parameters are filled before the unpacked tail reaches ``*rest``."""
    params = positional_params(func, bound)
    if any(arg.star for arg in call.args):
        first = next(i for i, arg in enumerate(call.args) if arg.star)
        head, tail = call.args[:first], call.args[first:]
        if (isinstance(func.params.star_arg, cst.Param) and len(head) == len(params)
                and all(arg.keyword is None for arg in head) and all(arg.star == "*" for arg in tail)):
            return [(param.name.value, arg.value) for param, arg in zip(params, head)], False
        return None
    positional = [arg for arg in call.args if arg.keyword is None]
    pairs = [(param.name.value, arg.value) for param, arg in zip(params, positional)]
    named = {param.name.value for param in params + list(func.params.kwonly_params)}
    unmatched = len(positional) > len(params)
    for arg in call.args:
        if arg.keyword is not None:
            pairs.append((arg.keyword.value, arg.value))
            unmatched = unmatched or arg.keyword.value not in named
    return pairs, unmatched


def small_statements(stmt: cst.BaseStatement) -> Sequence[cst.BaseSmallStatement]:
    return stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()


def is_self_attr(expr: cst.BaseExpression, attr: Optional[str] = None) -> bool:
    """``self.<attr>`` (any attribute of ``self`` when ``attr`` is None)."""
    return (type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self"
            and (attr is None or expr.attr.value == attr))


def is_staticmethod(func: cst.FunctionDef) -> bool:
    """Decorated ``@staticmethod``: called through ``self.f(...)`` or ``obj.f(...)``, it takes no ``self``."""
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in func.decorators)


def call_name_args(call: cst.Call) -> List[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and not arg.star]


def keyword_arg(call: cst.Call, name: str):
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


@tree_memo  # messages and rewrites quote the same nodes, at every edit in the editor
def code_of(node: cst.CSTNode) -> str:
    """Source text of a node (normalised by libcst's code generator; read from the source for the nodes of a
    ``fasttree``, which raises ``NeedsRealTree`` where it cannot give libcst's text)."""
    if fasttree.trees_alive():
        return fasttree.code_for(node)
    return cst.Module(body=[]).code_for_node(node)


def short_code(node: cst.CSTNode, limit: int = 40) -> str:
    """A node's code on one line, cut to ``limit`` characters, for messages."""
    text = " ".join(code_of(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def cut(text: str, limit: int = 40) -> str:
    """``text`` on one line, cut to ``limit`` characters (for one-line messages)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def target_names(target: cst.BaseExpression, include_starred: bool = False) -> List[str]:
    """Names bound by an assignment or loop target (``a``, ``a, (b, c)``; ``*rest`` with include_starred)."""
    kind = type(target)  # libcst's node classes are final: ``type(x) is`` spares ``isinstance``'s ABC machinery
    if kind is cst.Name:
        return [target.value]
    if kind is cst.Tuple or kind is cst.List:
        names: List[str] = []
        for element in target.elements:
            names.extend(target_names(element.value, include_starred))
        return names
    if include_starred and kind is cst.StarredElement:
        return target_names(target.value, include_starred)
    return []


def literal_value(expr: cst.BaseExpression):
    """Python value of a literal (ints, floats, strings, bools, None, tuples/lists of those); raises ValueError."""
    if isinstance(expr, cst.Integer):
        return int(expr.value.replace("_", ""), 0) if not expr.value.startswith("0") or expr.value == "0" else int(expr.value, 0)
    if isinstance(expr, cst.Float):
        return float(expr.value.replace("_", ""))
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return -literal_value(expr.expression)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return tuple(literal_value(el.value) for el in expr.elements)
    raise ValueError("not a literal")


def is_literal(expr: cst.BaseExpression) -> bool:
    try:
        literal_value(expr)
    except (ValueError, AttributeError, TypeError):
        return False
    return True


def main_guard(module: cst.Module) -> Optional[cst.If]:
    """The top-level ``if __name__ == "__main__":`` statement, if any (either operand order)."""
    for stmt in module.body:
        if isinstance(stmt, cst.If) and _is_main_test(stmt.test):
            return stmt
    return None


def _is_main_test(test: cst.BaseExpression) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = [test.left, target.comparator]
    names = [s for s in sides if isinstance(s, cst.Name) and s.value == "__name__"]
    strings = [s for s in sides if isinstance(s, cst.SimpleString) and s.evaluated_value == "__main__"]
    return len(names) == 1 and len(strings) == 1


def parse_expression_unvalidated(text: str) -> cst.BaseExpression:
    """``cst.parse_expression`` without libcst's per-node validation (see ``parse_module``)."""
    return _unvalidated(cst.parse_expression, text)
