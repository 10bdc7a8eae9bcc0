"""libcst trees built from the standard library's parser, for analysis only.

libcst's parser builds a Python object for every token and every run of whitespace and validates each node: about
11k lines a second here, against about 55k for ``ast.parse``. ``fast_module(text)`` parses with ``ast`` and builds
the libcst node classes the analysis reads (the same classes in the same shape: ``If.orelse`` an ``If`` for an
``elif``, ``SimpleStatementLine`` groups, ``ConcatenatedString`` chains, ``Integer`` values as written), leaving
out what the analysis never reads: whitespace, comments, parentheses and commas are libcst's defaults (shared
objects), so ``code_for_node`` of such a tree does not give the file's text. Fixes, and anything that prints
code, need ``cstutil.parse_module``.

Nodes are made without their dataclass ``__init__`` (which validates): each class gets a generated constructor
that sets its slots, the defaults made once. An f-string is parsed by libcst itself (its parts have no exact
positions in 3.11's ``ast``). A module ``ast`` and libcst would read differently is refused (``FastTreeRefused``),
and the caller parses it with libcst: text ``ast`` rejects, ``match`` and ``except*`` statements, identifiers that
NFKC normalisation changes (``ast`` keeps the normalised name, libcst the written one).
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import inspect
import itertools
import keyword
import re
import unicodedata
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import libcst as cst

__all__ = ["FastTreeRefused", "fast_module"]


class FastTreeRefused(Exception):
    """The module must be parsed by libcst (see the module's docstring)."""


class NeedsRealTree(Exception):
    """A question about a fast tree that only libcst's tree answers exactly (the code of a statement, of an
    expression over several lines; the position of a node ``ast`` has no node for): the analysis starts again
    on libcst's trees (``ms_lint.engine``)."""


# -- constructors --------------------------------------------------------------------------------------------

def _maker(node_class: type) -> Callable[..., cst.CSTNode]:
    """A function building ``node_class`` from keyword fields (the others take the dataclass defaults, each made
    once and shared), setting its slots directly."""
    params, lines, namespace = [], [], {"_new": object.__new__, "_cls": node_class}
    for field in dataclasses.fields(node_class):
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = field.default_factory()  # type: ignore[misc]
        else:
            default = _REQUIRED
        namespace[f"_d_{field.name}"] = default
        namespace[f"_s_{field.name}"] = inspect.getattr_static(node_class, field.name).__set__
        params.append(f"{field.name}=_d_{field.name}")
        lines.append(f"    _s_{field.name}(o, {field.name})")
    source = f"def make({', '.join(params)}):\n    o = _new(_cls)\n" + "\n".join(lines) + "\n    return o\n"
    exec(source, namespace)  # noqa: S102 - generated from the dataclass's own field names
    return namespace["make"]


_REQUIRED = object()

Name = _maker(cst.Name)
Attribute = _maker(cst.Attribute)
Call = _maker(cst.Call)
Arg = _maker(cst.Arg)
Integer, Float, Imaginary = _maker(cst.Integer), _maker(cst.Float), _maker(cst.Imaginary)
SimpleString, ConcatenatedString = _maker(cst.SimpleString), _maker(cst.ConcatenatedString)
Ellipsis_ = _maker(cst.Ellipsis)
BinaryOperation, UnaryOperation = _maker(cst.BinaryOperation), _maker(cst.UnaryOperation)
BooleanOperation = _maker(cst.BooleanOperation)
Comparison, ComparisonTarget = _maker(cst.Comparison), _maker(cst.ComparisonTarget)
Subscript, SubscriptElement = _maker(cst.Subscript), _maker(cst.SubscriptElement)
Index, Slice = _maker(cst.Index), _maker(cst.Slice)
Tuple_, List_, Set_, Dict_ = _maker(cst.Tuple), _maker(cst.List), _maker(cst.Set), _maker(cst.Dict)
Element, StarredElement = _maker(cst.Element), _maker(cst.StarredElement)
DictElement, StarredDictElement = _maker(cst.DictElement), _maker(cst.StarredDictElement)
ListComp, SetComp, DictComp = _maker(cst.ListComp), _maker(cst.SetComp), _maker(cst.DictComp)
GeneratorExp, CompFor, CompIf = _maker(cst.GeneratorExp), _maker(cst.CompFor), _maker(cst.CompIf)
IfExp, Lambda, NamedExpr = _maker(cst.IfExp), _maker(cst.Lambda), _maker(cst.NamedExpr)
Await, Yield, From = _maker(cst.Await), _maker(cst.Yield), _maker(cst.From)
Parameters, Param = _maker(cst.Parameters), _maker(cst.Param)
ParamStar, ParamSlash = _maker(cst.ParamStar), _maker(cst.ParamSlash)
Annotation = _maker(cst.Annotation)
Module = _maker(cst.Module)
SimpleStatementLine, SimpleStatementSuite = _maker(cst.SimpleStatementLine), _maker(cst.SimpleStatementSuite)
IndentedBlock = _maker(cst.IndentedBlock)
Expr, Assign, AssignTarget = _maker(cst.Expr), _maker(cst.Assign), _maker(cst.AssignTarget)
AnnAssign, AugAssign = _maker(cst.AnnAssign), _maker(cst.AugAssign)
Return, Pass, Break, Continue = _maker(cst.Return), _maker(cst.Pass), _maker(cst.Break), _maker(cst.Continue)
Raise, Assert, Del = _maker(cst.Raise), _maker(cst.Assert), _maker(cst.Del)
Global, Nonlocal, NameItem = _maker(cst.Global), _maker(cst.Nonlocal), _maker(cst.NameItem)
Import, ImportFrom, ImportAlias = _maker(cst.Import), _maker(cst.ImportFrom), _maker(cst.ImportAlias)
AsName, Dot = _maker(cst.AsName), _maker(cst.Dot)
FunctionDef, ClassDef, Decorator = _maker(cst.FunctionDef), _maker(cst.ClassDef), _maker(cst.Decorator)
If, Else, For, While = _maker(cst.If), _maker(cst.Else), _maker(cst.For), _maker(cst.While)
Try, ExceptHandler, Finally = _maker(cst.Try), _maker(cst.ExceptHandler), _maker(cst.Finally)
With, WithItem = _maker(cst.With), _maker(cst.WithItem)
Asynchronous = _maker(cst.Asynchronous)

_ASYNC = Asynchronous()
_IMPORT_STAR = cst.ImportStar()
_COLON = cst.Colon()

_BINARY = {
    ast.Add: cst.Add(), ast.Sub: cst.Subtract(), ast.Mult: cst.Multiply(), ast.Div: cst.Divide(),
    ast.FloorDiv: cst.FloorDivide(), ast.Mod: cst.Modulo(), ast.Pow: cst.Power(), ast.LShift: cst.LeftShift(),
    ast.RShift: cst.RightShift(), ast.BitOr: cst.BitOr(), ast.BitXor: cst.BitXor(), ast.BitAnd: cst.BitAnd(),
    ast.MatMult: cst.MatrixMultiply(),
}
_AUGMENTED = {
    ast.Add: cst.AddAssign(), ast.Sub: cst.SubtractAssign(), ast.Mult: cst.MultiplyAssign(),
    ast.Div: cst.DivideAssign(), ast.FloorDiv: cst.FloorDivideAssign(), ast.Mod: cst.ModuloAssign(),
    ast.Pow: cst.PowerAssign(), ast.LShift: cst.LeftShiftAssign(), ast.RShift: cst.RightShiftAssign(),
    ast.BitOr: cst.BitOrAssign(), ast.BitXor: cst.BitXorAssign(), ast.BitAnd: cst.BitAndAssign(),
    ast.MatMult: cst.MatrixMultiplyAssign(),
}
_UNARY = {ast.UAdd: cst.Plus(), ast.USub: cst.Minus(), ast.Not: cst.Not(), ast.Invert: cst.BitInvert()}
_BOOLEAN = {ast.And: cst.And(), ast.Or: cst.Or()}
_COMPARE = {
    ast.Eq: cst.Equal(), ast.NotEq: cst.NotEqual(), ast.Lt: cst.LessThan(), ast.LtE: cst.LessThanEqual(),
    ast.Gt: cst.GreaterThan(), ast.GtE: cst.GreaterThanEqual(), ast.Is: cst.Is(), ast.IsNot: cst.IsNot(),
    ast.In: cst.In(), ast.NotIn: cst.NotIn(),
}

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# Where a node came from, packed in one int: its module's number, then ``ast``'s line, column (UTF-8 bytes), end
# line and end column, from the low bits up.
_MODULE_BITS = _LINE_BITS = _COLUMN_BITS = 32
_MASKS = (1 << 32) - 1


def _pack(node: ast.AST) -> int:
    return (((node.lineno << _COLUMN_BITS | node.col_offset) << _LINE_BITS  # type: ignore[attr-defined]
             | node.end_lineno) << _COLUMN_BITS | node.end_col_offset) << _MODULE_BITS  # type: ignore[attr-defined]
_IDENTIFIER = re.compile(r"\w+")
# One whole string literal: prefix, quotes, body (a backslash escapes the next character, in raw strings too; a
# long string ends at the first three quotes).
_STRING = re.compile("[rRbBuUfF]{0,2}(?:" + "|".join([
    r"'''(?:[^\\']|\\.|'(?!''))*'''", r'"""(?:[^\\"]|\\.|"(?!""))*"""', r"'(?:[^'\\\n]|\\.)*'", r'"(?:[^"\\\n]|\\.)*"',
]) + ")", re.DOTALL)


class _Source:
    """Character offsets of ``ast``'s positions (lines split as the tokenizer splits them; columns in UTF-8
    bytes)."""

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        starts.extend(m.end() for m in _LINE_BREAK.finditer(text))
        self.starts = starts
        self.ascii = text.isascii()
        # the offsets where statements begin, sorted and as a set, worked out when first asked (``code_of``)
        self.statement_starts: Optional[List[int]] = None
        self.statement_start_set: set = set()

    def offset(self, line: int, column: int) -> int:
        start = self.starts[line - 1]
        if self.ascii:
            return start + column
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        raw = self.text[start:end]
        if raw.isascii():
            return start + column
        return start + len(raw.encode("utf-8")[:column].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> str:
        return self.text[self.offset(node.lineno, node.col_offset):  # type: ignore[attr-defined]
                         self.offset(node.end_lineno, node.end_col_offset)]  # type: ignore[attr-defined]


def _string_tokens(code: str) -> List[str]:
    """The string literals of an implicit concatenation's source, in order (what lies between them is
    whitespace, line continuations, comments and parentheses)."""
    whole = _STRING.fullmatch(code)
    if whole is not None:
        return [code]
    tokens, at, size = [], 0, len(code)
    while at < size:
        char = code[at]
        if char == "#":
            at = code.find("\n", at)
            if at < 0:
                break
            continue
        match = _STRING.match(code, at)
        if match is None:
            at += 1
            continue
        tokens.append(match.group())
        at = match.end()
    return tokens


class _Builder:
    def __init__(self, text: str, number: int) -> None:
        self.source = _Source(text)
        self.number = number
        self.places: Dict[cst.CSTNode, int] = {}

    # -- statements ----------------------------------------------------------------------------------------
    def module(self, tree: ast.Module) -> cst.Module:
        text = self.source.text
        return Module(body=self.statements(tree.body),
                      has_trailing_newline=text.endswith(("\n", "\r")))

    def statements(self, nodes: Sequence[ast.stmt]) -> List[cst.BaseStatement]:
        out: List[cst.BaseStatement] = []
        small: List[cst.BaseSmallStatement] = []
        last_line = -1
        for node in nodes:
            make = self.COMPOUND.get(type(node))
            if make is not None:
                if small:
                    out.append(SimpleStatementLine(body=tuple(small)))
                    small = []
                made = make(self, node)
                self.places[made] = self.number | _pack(node)
                out.append(made)
                continue
            if small and node.lineno != last_line:
                out.append(SimpleStatementLine(body=tuple(small)))
                small = []
            small.append(self.small(node))
            last_line = node.end_lineno  # type: ignore[assignment]
        if small:
            out.append(SimpleStatementLine(body=tuple(small)))
        return tuple(out)

    def suite(self, nodes: Sequence[ast.stmt]) -> cst.BaseSuite:
        """An indented block, or the statements after the colon on the header's line."""
        first = nodes[0]
        source = self.source
        start = source.starts[first.lineno - 1]
        if source.text[start:source.offset(first.lineno, first.col_offset)].strip(" \t\f"):
            return SimpleStatementSuite(body=tuple([self.small(node) for node in nodes]))
        return IndentedBlock(body=self.statements(nodes))

    def small(self, node: ast.stmt) -> cst.BaseSmallStatement:
        make = self.SMALL.get(type(node))
        if make is None:
            raise FastTreeRefused(type(node).__name__)
        made = make(self, node)
        self.places[made] = self.number | _pack(node)
        return made

    def _expr_stmt(self, node: ast.Expr):
        return Expr(value=self.expr(node.value))

    def _assign(self, node: ast.Assign):
        return Assign(targets=tuple([AssignTarget(target=self.expr(t)) for t in node.targets]),
                      value=self.expr(node.value))

    def _ann_assign(self, node: ast.AnnAssign):
        return AnnAssign(target=self.expr(node.target), annotation=Annotation(annotation=self.expr(node.annotation)),
                         value=None if node.value is None else self.expr(node.value))

    def _aug_assign(self, node: ast.AugAssign):
        return AugAssign(target=self.expr(node.target), operator=_AUGMENTED[type(node.op)],
                         value=self.expr(node.value))

    def _return(self, node: ast.Return):
        return Return(value=None if node.value is None else self.expr(node.value))

    def _raise(self, node: ast.Raise):
        return Raise(exc=None if node.exc is None else self.expr(node.exc),
                     cause=None if node.cause is None else From(item=self.expr(node.cause)))

    def _assert(self, node: ast.Assert):
        return Assert(test=self.expr(node.test), msg=None if node.msg is None else self.expr(node.msg))

    def _delete(self, node: ast.Delete):
        if len(node.targets) == 1:
            return Del(target=self.expr(node.targets[0]))
        return Del(target=Tuple_(elements=tuple([Element(value=self.expr(t)) for t in node.targets])))

    def _global(self, node):
        names = self._written_names(node, node.names)
        return (Global if isinstance(node, ast.Global) else Nonlocal)(
            names=tuple([NameItem(name=Name(value=n)) for n in names]))

    def _written_names(self, node: ast.stmt, names: Sequence[str]) -> Sequence[str]:
        """Names as written (``ast`` gives them NFKC-normalised)."""
        if self.source.ascii:
            return names
        words = _IDENTIFIER.findall(self.source.span(node))
        return words[1:1 + len(names)]

    def _import(self, node: ast.Import):
        return Import(names=tuple([self._alias(a) for a in node.names]))

    def _import_from(self, node: ast.ImportFrom):
        module = None if node.module is None else self._dotted(node.module)
        if len(node.names) == 1 and node.names[0].name == "*":
            names: Any = _IMPORT_STAR
        else:
            names = tuple([self._alias(a) for a in node.names])
        return ImportFrom(module=module, names=names, relative=tuple([Dot() for _ in range(node.level or 0)]))

    def _alias(self, alias: ast.alias):
        name, asname = alias.name, alias.asname
        if not self.source.ascii:
            words = _IDENTIFIER.findall(self.source.span(alias))
            name = ".".join(words[:name.count(".") + 1])
            if asname is not None:
                asname = words[-1]
        return ImportAlias(name=self._dotted(name),
                           asname=None if asname is None else AsName(name=Name(value=asname)))

    @staticmethod
    def _dotted(name: str):
        parts = name.split(".")
        node: Any = Name(value=parts[0])
        for part in parts[1:]:
            node = Attribute(value=node, attr=Name(value=part))
        return node

    def _pass(self, node):
        return Pass()

    def _break(self, node):
        return Break()

    def _continue(self, node):
        return Continue()

    def _function(self, node):
        return FunctionDef(
            name=Name(value=self._def_name(node)), params=self.parameters(node.args), body=self.suite(node.body),
            decorators=tuple([Decorator(decorator=self.expr(d)) for d in node.decorator_list]),
            returns=None if node.returns is None else Annotation(annotation=self.expr(node.returns)),
            asynchronous=_ASYNC if isinstance(node, ast.AsyncFunctionDef) else None)

    def _def_name(self, node) -> str:
        if self.source.ascii:
            return node.name
        at = self.source.offset(node.lineno, node.col_offset)
        words = _IDENTIFIER.findall(self.source.text, at, at + 200)
        return words[2] if words[0] == "async" else words[1]

    def _class(self, node: ast.ClassDef):
        return ClassDef(
            name=Name(value=self._def_name(node)), body=self.suite(node.body),
            bases=tuple([self._positional(b) for b in node.bases]),
            keywords=tuple([self._keyword(k) for k in node.keywords]),
            decorators=tuple([Decorator(decorator=self.expr(d)) for d in node.decorator_list]))

    def _if(self, node: ast.If):
        return If(test=self.expr(node.test), body=self.suite(node.body), orelse=self._orelse(node.orelse))

    def _orelse(self, nodes: Sequence[ast.stmt]):
        if not nodes:
            return None
        first = nodes[0]
        if len(nodes) == 1 and isinstance(first, ast.If):
            at = self.source.offset(first.lineno, first.col_offset)
            if self.source.text.startswith("elif", at):
                made = self._if(first)
                self.places[made] = self.number | _pack(first)
                return made
        return Else(body=self.suite(nodes))

    def _for(self, node):
        return For(target=self.expr(node.target), iter=self.expr(node.iter), body=self.suite(node.body),
                   orelse=self._orelse(node.orelse) if node.orelse else None,
                   asynchronous=_ASYNC if isinstance(node, ast.AsyncFor) else None)

    def _while(self, node: ast.While):
        return While(test=self.expr(node.test), body=self.suite(node.body),
                     orelse=self._orelse(node.orelse) if node.orelse else None)

    def _try(self, node: ast.Try):
        handlers = []
        for handler in node.handlers:
            made = ExceptHandler(
                body=self.suite(handler.body), type=None if handler.type is None else self.expr(handler.type),
                name=None if handler.name is None else AsName(name=Name(value=self._handler_name(handler))))
            self.places[made] = self.number | _pack(handler)  # a clause that starts a line (``_block_indent``)
            handlers.append(made)
        return Try(body=self.suite(node.body), handlers=tuple(handlers),
                   orelse=Else(body=self.suite(node.orelse)) if node.orelse else None,
                   finalbody=Finally(body=self.suite(node.finalbody)) if node.finalbody else None)

    def _handler_name(self, handler: ast.ExceptHandler) -> str:
        if self.source.ascii:
            return handler.name  # type: ignore[return-value]
        head = self.source.text[self.source.offset(handler.lineno, handler.col_offset):
                                self.source.offset(handler.body[0].lineno, handler.body[0].col_offset)]
        return _IDENTIFIER.findall(head.rsplit(" as ", 1)[1])[0]

    def _with(self, node):
        items = [WithItem(item=self.expr(i.context_expr),
                          asname=None if i.optional_vars is None else AsName(name=self.expr(i.optional_vars)))
                 for i in node.items]
        return With(items=tuple(items), body=self.suite(node.body),
                    asynchronous=_ASYNC if isinstance(node, ast.AsyncWith) else None)

    # -- expressions ---------------------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> cst.BaseExpression:
        made = self.EXPRESSIONS[type(node)](self, node)
        self.places[made] = self.number | (((node.lineno << _COLUMN_BITS | node.col_offset) << _LINE_BITS
                                            | node.end_lineno) << _COLUMN_BITS | node.end_col_offset) << _MODULE_BITS
        return made

    def _name(self, node: ast.Name):
        if self.source.ascii:
            return Name(value=node.id)
        return Name(value=self.source.span(node))

    def _constant(self, node: ast.Constant):
        value = node.value
        if isinstance(value, (str, bytes)):
            return self._string(node)
        if value is None or value is True or value is False:
            return Name(value=str(value))
        if value is Ellipsis:
            return Ellipsis_()
        text = self.source.span(node)
        if isinstance(value, int):
            return Integer(value=text)
        if isinstance(value, float):
            return Float(value=text)
        return Imaginary(value=text)

    def _string(self, node):
        parts: List[cst.BaseExpression] = []
        for token in _string_tokens(self.source.span(node)):
            if "f" in token[:token.find(token[-1])].lower():
                parts.append(_fstring(token))
            else:
                parts.append(SimpleString(value=token))
        if not parts:
            raise FastTreeRefused("a string without literals")
        joined = parts[-1]
        for part in reversed(parts[:-1]):
            joined = ConcatenatedString(left=part, right=joined)
        return joined

    def _attribute(self, node: ast.Attribute):
        attr = node.attr
        if not self.source.ascii:
            end = self.source.offset(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
            start = end
            text = self.source.text
            while start > 0 and (text[start - 1].isidentifier() or text[start - 1].isdigit()
                                 or ("_" + text[start - 1]).isidentifier()):
                start -= 1
            attr = text[start:end]
        return Attribute(value=self.expr(node.value), attr=Name(value=attr))

    def _subscript(self, node: ast.Subscript):
        index = node.slice
        if isinstance(index, ast.Tuple) and not self._parenthesized(index):
            elements = tuple([SubscriptElement(slice=self._slice_item(e)) for e in index.elts])
        else:
            elements = (SubscriptElement(slice=self._slice_item(index)),)
        return Subscript(value=self.expr(node.value), slice=elements)

    def _slice_item(self, node: ast.expr):
        if isinstance(node, ast.Slice):
            if node.step is not None or _top_level_colons(self.source.span(node)) > 1:
                second_colon: Any = _COLON
            else:
                second_colon = cst.MaybeSentinel.DEFAULT
            return Slice(lower=None if node.lower is None else self.expr(node.lower),
                         upper=None if node.upper is None else self.expr(node.upper),
                         step=None if node.step is None else self.expr(node.step), second_colon=second_colon)
        if isinstance(node, ast.Starred):
            return Index(value=self.expr(node.value), star="*")
        return Index(value=self.expr(node))

    def _parenthesized(self, node: ast.Tuple) -> bool:
        """A tuple written in its own parentheses (``ast`` starts a tuple at its ``(``, and at a parenthesized
        first element's ``(`` too)."""
        source = self.source
        start = source.offset(node.lineno, node.col_offset)
        if source.text[start] != "(":
            return False
        return _closing(source.text, start) == source.offset(node.end_lineno, node.end_col_offset) - 1  # type: ignore

    def _call(self, node: ast.Call):
        args = [(a.lineno, a.col_offset, a) for a in node.args]
        args.extend((k.lineno, k.col_offset, k) for k in node.keywords)
        if node.keywords and node.args:
            args.sort(key=lambda item: (item[0], item[1]))
        return Call(func=self.expr(node.func),
                    args=tuple([self._keyword(a) if isinstance(a, ast.keyword) else self._positional(a)
                                for _, _, a in args]))

    def _positional(self, node: ast.expr):
        if isinstance(node, ast.Starred):
            return Arg(value=self.expr(node.value), star="*")
        return Arg(value=self.expr(node))

    def _keyword(self, node: ast.keyword):
        if node.arg is None:
            return Arg(value=self.expr(node.value), star="**")
        name = node.arg
        if not self.source.ascii:
            name = _IDENTIFIER.match(self.source.text, self.source.offset(node.lineno, node.col_offset)).group()
        return Arg(value=self.expr(node.value), keyword=Name(value=name), equal=cst.AssignEqual())

    def _binary(self, node: ast.BinOp):
        return BinaryOperation(left=self.expr(node.left), operator=_BINARY[type(node.op)],
                               right=self.expr(node.right))

    def _unary(self, node: ast.UnaryOp):
        return UnaryOperation(operator=_UNARY[type(node.op)], expression=self.expr(node.operand))

    def _boolean(self, node: ast.BoolOp):
        operator = _BOOLEAN[type(node.op)]
        values = node.values
        joined = self.expr(values[0])
        for value in values[1:]:
            joined = BooleanOperation(left=joined, operator=operator, right=self.expr(value))
        return joined

    def _compare(self, node: ast.Compare):
        return Comparison(left=self.expr(node.left),
                          comparisons=tuple([ComparisonTarget(operator=_COMPARE[type(op)], comparator=self.expr(c))
                                             for op, c in zip(node.ops, node.comparators)]))

    def _if_exp(self, node: ast.IfExp):
        return IfExp(test=self.expr(node.test), body=self.expr(node.body), orelse=self.expr(node.orelse))

    def _lambda(self, node: ast.Lambda):
        return Lambda(params=self.parameters(node.args), body=self.expr(node.body))

    def _named(self, node: ast.NamedExpr):
        return NamedExpr(target=self.expr(node.target), value=self.expr(node.value))

    def _await(self, node: ast.Await):
        return Await(expression=self.expr(node.value))

    def _yield(self, node: ast.Yield):
        return Yield(value=None if node.value is None else self.expr(node.value))

    def _yield_from(self, node: ast.YieldFrom):
        return Yield(value=From(item=self.expr(node.value)))

    def _elements(self, nodes: Sequence[ast.expr]) -> tuple:
        return tuple([StarredElement(value=self.expr(e.value)) if isinstance(e, ast.Starred)
                      else Element(value=self.expr(e)) for e in nodes])

    def _tuple(self, node: ast.Tuple):
        return Tuple_(elements=self._elements(node.elts))

    def _list(self, node: ast.List):
        return List_(elements=self._elements(node.elts))

    def _set(self, node: ast.Set):
        return Set_(elements=self._elements(node.elts))

    def _dict(self, node: ast.Dict):
        return Dict_(elements=tuple([StarredDictElement(value=self.expr(v)) if k is None
                                     else DictElement(key=self.expr(k), value=self.expr(v))
                                     for k, v in zip(node.keys, node.values)]))

    def _comprehension(self, generators: Sequence[ast.comprehension]):
        inner = None
        for generator in reversed(generators):
            inner = CompFor(target=self.expr(generator.target), iter=self.expr(generator.iter),
                            ifs=tuple([CompIf(test=self.expr(i)) for i in generator.ifs]), inner_for_in=inner,
                            asynchronous=_ASYNC if generator.is_async else None)
        return inner

    def _list_comp(self, node: ast.ListComp):
        return ListComp(elt=self.expr(node.elt), for_in=self._comprehension(node.generators))

    def _set_comp(self, node: ast.SetComp):
        return SetComp(elt=self.expr(node.elt), for_in=self._comprehension(node.generators))

    def _generator(self, node: ast.GeneratorExp):
        return GeneratorExp(elt=self.expr(node.elt), for_in=self._comprehension(node.generators))

    def _dict_comp(self, node: ast.DictComp):
        return DictComp(key=self.expr(node.key), value=self.expr(node.value),
                        for_in=self._comprehension(node.generators))

    def _starred(self, node: ast.Starred):
        return StarredElement(value=self.expr(node.value))

    def _refuse(self, node):
        raise FastTreeRefused(type(node).__name__)

    # -- parameters ----------------------------------------------------------------------------------------
    def parameters(self, args: ast.arguments):
        positional = [*args.posonlyargs, *args.args]
        defaults: List[Optional[ast.expr]] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        made = [self._param(a, d) for a, d in zip(positional, defaults)]
        posonly = made[:len(args.posonlyargs)]
        if args.vararg is not None:
            star_arg: Any = self._param(args.vararg, None, "*")
        elif args.kwonlyargs:
            star_arg = ParamStar()
        else:
            star_arg = cst.MaybeSentinel.DEFAULT
        return Parameters(
            params=tuple(made[len(args.posonlyargs):]), star_arg=star_arg,
            kwonly_params=tuple([self._param(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]),
            star_kwarg=None if args.kwarg is None else self._param(args.kwarg, None, "**"),
            posonly_params=tuple(posonly), posonly_ind=ParamSlash() if posonly else cst.MaybeSentinel.DEFAULT)

    def _param(self, arg: ast.arg, default: Optional[ast.expr], star: str = ""):
        name = arg.arg
        if not self.source.ascii:
            name = _IDENTIFIER.match(self.source.text, self.source.offset(arg.lineno, arg.col_offset)).group()
        return Param(name=Name(value=name),
                     annotation=None if arg.annotation is None else Annotation(annotation=self.expr(arg.annotation)),
                     default=None if default is None else self.expr(default),
                     equal=cst.AssignEqual() if default is not None else cst.MaybeSentinel.DEFAULT, star=star)

    COMPOUND: Dict[type, Callable] = {
        ast.FunctionDef: _function, ast.AsyncFunctionDef: _function, ast.ClassDef: _class, ast.If: _if,
        ast.For: _for, ast.AsyncFor: _for, ast.While: _while, ast.Try: _try, ast.With: _with, ast.AsyncWith: _with,
    }
    SMALL: Dict[type, Callable] = {
        ast.Expr: _expr_stmt, ast.Assign: _assign, ast.AnnAssign: _ann_assign, ast.AugAssign: _aug_assign,
        ast.Return: _return, ast.Raise: _raise, ast.Assert: _assert, ast.Delete: _delete, ast.Global: _global,
        ast.Nonlocal: _global, ast.Import: _import, ast.ImportFrom: _import_from, ast.Pass: _pass,
        ast.Break: _break, ast.Continue: _continue,
    }
    EXPRESSIONS: Dict[type, Callable] = {
        ast.Name: _name, ast.Constant: _constant, ast.JoinedStr: _string, ast.Attribute: _attribute,
        ast.Subscript: _subscript, ast.Call: _call, ast.BinOp: _binary, ast.UnaryOp: _unary, ast.BoolOp: _boolean,
        ast.Compare: _compare, ast.IfExp: _if_exp, ast.Lambda: _lambda, ast.NamedExpr: _named, ast.Await: _await,
        ast.Yield: _yield, ast.YieldFrom: _yield_from, ast.Tuple: _tuple, ast.List: _list, ast.Set: _set,
        ast.Dict: _dict, ast.ListComp: _list_comp, ast.SetComp: _set_comp, ast.GeneratorExp: _generator,
        ast.DictComp: _dict_comp, ast.Starred: _starred, ast.Slice: _refuse, ast.FormattedValue: _refuse,
    }


def _top_level_colons(code: str) -> int:
    """The colons of a slice's source outside brackets, strings and comments."""
    if code.count(":") < 2:
        return code.count(":")
    count, at = 0, 0
    while at < len(code):
        char = code[at]
        if char in "([{":
            at = _closing(code, at)
        elif char == ":":
            count += 1
        elif char == "#":
            at = code.find("\n", at)
            if at < 0:
                break
        elif char in "'\"":
            at = _string_end(code, at) - 1
        at += 1
    return count


def _string_end(text: str, at: int) -> int:
    """The offset after the string literal whose quote is at ``at``."""
    match = _STRING.match(text, at)
    return len(text) if match is None else match.end()


def _closing(text: str, start: int) -> int:
    """The offset of the bracket closing the one at ``start`` (strings and comments skipped)."""
    depth, at, size = 0, start, len(text)
    while at < size:
        char = text[at]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return at
        elif char == "#":
            at = text.find("\n", at)
            if at < 0:
                break
        elif char in "'\"":
            at = _string_end(text, at) - 1
        at += 1
    return size


def _fstring(token: str) -> cst.BaseExpression:
    from ms_lint.cstutil import parse_expression_unvalidated

    try:
        return parse_expression_unvalidated(token)
    except cst.ParserSyntaxError as error:
        raise FastTreeRefused("an f-string libcst does not parse") from error


def _refused_identifiers(text: str, tree: ast.Module) -> bool:
    """Some code outside strings and comments holds text that NFKC normalisation changes: ``ast`` may give an
    identifier there in another spelling than the source's (libcst's)."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return False
    strings = None
    source = None
    for number, line in enumerate(_LINE_BREAK.split(text), 1):
        if line.isascii() or unicodedata.is_normalized("NFKC", line):
            continue
        if strings is None:
            source = _Source(text)
            strings = _string_columns(tree, source)
        code = list(line)
        for start, end in strings.get(number, ()):
            code[start:end] = " " * (end - start)
        code = "".join(code)
        hash_at = code.find("#")
        if not unicodedata.is_normalized("NFKC", code if hash_at < 0 else code[:hash_at]):
            return True
    return False


def _string_columns(tree: ast.Module, source: "_Source") -> Dict[int, List[Tuple[int, int]]]:
    """Line -> the character columns its string literals cover (f-strings are libcst's to read: see
    ``_fstring``)."""
    found: Dict[int, List[Tuple[int, int]]] = {}
    starts = source.starts
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
            start = source.offset(node.lineno, node.col_offset)
            end = source.offset(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
            for line in range(node.lineno, node.end_lineno + 1):  # type: ignore[operator]
                line_start = starts[line - 1]
                found.setdefault(line, []).append((max(start, line_start) - line_start, end - line_start))
    return found


# The places of the nodes of the fast trees still in use (see ``places_for``), and each tree's source.
_PLACES: Dict[cst.CSTNode, int] = {}
_SOURCES: Dict[int, Tuple[_Source, List[cst.CSTNode]]] = {}
_KEPT_TREES = 400  # more than the contexts ``ProjectView`` keeps (256): a forgotten place only costs a libcst parse
_numbers = itertools.count(1)


def fast_module(text: str) -> cst.Module:
    """The libcst-shaped tree of ``text`` for analysis (see the module's docstring); ``FastTreeRefused`` where
    only libcst's parser gives the right tree."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise FastTreeRefused("ast does not parse it") from error
    if _refused_identifiers(text, tree):
        raise FastTreeRefused("identifiers NFKC normalisation may change")
    number = next(_numbers) & _MASKS
    builder = _Builder(text, number)
    try:
        module = builder.module(tree)
    except KeyError as error:  # a node class the builder does not make (match, except*, type aliases)
        raise FastTreeRefused(str(error)) from error
    except RecursionError as error:
        raise FastTreeRefused("nested too deeply") from error
    if len(_SOURCES) >= _KEPT_TREES:
        for old in list(_SOURCES)[:len(_SOURCES) - _KEPT_TREES + 1]:
            for node in _SOURCES.pop(old)[1]:
                del _PLACES[node]
    _PLACES.update(builder.places)
    _SOURCES[number] = (builder.source, list(builder.places))
    return module


class Place(NamedTuple):
    """Where a node of a fast tree is in its text: 1-based lines, 0-based character columns, end exclusive
    (libcst's ``CodeRange``), and character offsets."""

    line: int
    column: int
    end_line: int
    end_column: int
    start: int
    end: int


def is_fast_module(module: cst.Module) -> bool:
    """``module`` was made by ``fast_module`` (and is still known here)."""
    if not module.body:
        return False
    first = module.body[0]
    if isinstance(first, cst.SimpleStatementLine):
        first = first.body[0]
    return first in _PLACES


def is_fast(node: cst.CSTNode) -> bool:
    """``node`` was made by ``fast_module`` from ``ast``'s node of its kind (an expression or a statement)."""
    return node in _PLACES


def _located(node: cst.CSTNode) -> Optional[Tuple[_Source, int, int]]:
    packed = _PLACES.get(node)
    if packed is None:
        return None
    kept = _SOURCES.get(packed & _MASKS)
    if kept is None:
        return None
    source = kept[0]
    packed >>= _MODULE_BITS
    end_column = packed & _MASKS
    packed >>= _COLUMN_BITS
    end_line = packed & _MASKS
    packed >>= _LINE_BITS
    return source, source.offset(packed >> _COLUMN_BITS, packed & _MASKS), source.offset(end_line, end_column)


def place_of(node: cst.CSTNode) -> Optional[Place]:
    """The node's range as libcst's ``PositionProvider`` gives it (parentheses left out), or None where the fast
    tree cannot tell (a node ``ast`` has no node for, a tuple whose parentheses hold a comment)."""
    found = _located(node)
    if found is None:
        return None
    source, start, end = found
    if isinstance(node, (cst.Tuple, cst.GeneratorExp)):  # ``ast`` counts their own parentheses in
        text = source.text
        if text[start] == "(" and _closing(text, start) == end - 1:
            inner = _inside_parentheses(text, start, end - 1)
            if inner is None:
                return None
            start, end = inner
    return _place(source, start, end)


def _place(source: _Source, start: int, end: int) -> Place:
    starts = source.starts
    line = bisect.bisect_right(starts, start)
    end_line = bisect.bisect_right(starts, end - 1) if end > start else line
    return Place(line, start - starts[line - 1], end_line, end - starts[end_line - 1], start, end)


def _inside_parentheses(text: str, opening: int, closing: int) -> Optional[Tuple[int, int]]:
    """The offsets of what a pair of parentheses holds, less the whitespace and comments next to them; None when
    a line with a ``#`` comes before the closing one (``_skip_back``)."""
    last = _skip_back(text, closing - 1)
    if last is None:
        return None
    return _skip_forward(text, opening + 1), last + 1


_KEYWORDS = frozenset(keyword.kwlist)
_BLANK = " \t\f\\"  # a backslash: a line continuation, the only place one can stand between tokens


def code_of(node: cst.CSTNode) -> Optional[str]:
    """The text libcst's ``code_for_node`` gives for an expression of a fast tree (its own parentheses
    included), read from the source; None when the fast tree cannot tell (not an expression ``ast`` has a node for;
    code over several lines; a parenthesis after a line that holds a ``#``)."""
    if not isinstance(node, cst.BaseExpression):
        return None
    found = _located(node)
    if found is None:
        return None
    source, start, end = found
    text = source.text
    if isinstance(node, cst.GeneratorExp) and text[start] == "(" and _closing(text, start) == end - 1:
        call = _call_parenthesis(text, start)
        if call is None:
            return None
        if call:  # the only argument of a call: the parentheses are the call's, libcst gives the generator none
            inner = _inside_parentheses(text, start, end - 1)
            if inner is None:
                return None
            start, end = inner
    statements = _statement_start_set(source)
    while True:  # the parentheses around the node that are its own
        before = -1 if start in statements else _skip_back(text, start - 1)
        if before is None:
            return None
        if before < 0 or text[before] != "(":
            return _as_libcst_writes(node, source, start, end)
        call = False if before in statements else _call_parenthesis(text, before)
        if call is None:
            return None
        closing = _closing(text, before)
        if call or _skip_forward(text, end) != closing:
            return _as_libcst_writes(node, source, start, end)
        start, end = before, closing + 1


def _as_libcst_writes(node: cst.CSTNode, source: _Source, start: int, end: int) -> Optional[str]:
    """The text from ``start`` to ``end`` as ``code_for_node`` writes it: a line inside brackets that starts with
    the indentation of the block the statement is in loses that indentation (libcst keeps it as "indent here",
    and a node's code is written outside any block); lines in strings and after a backslash stay as they are.
    None for text with a carriage return (libcst writes the module's line break)."""
    code = source.text[start:end]
    if "\n" not in code:
        return None if "\r" in code else code
    if "\r" in code:
        return None
    indent = _block_indent(node, source, start)
    if indent is None:
        return None
    if not indent:
        return code
    pieces, at, copied, size = [], 0, 0, len(code)
    while at < size:
        char = code[at]
        if char == "\n":
            if (at == 0 or code[at - 1] != "\\") and code.startswith(indent, at + 1):
                pieces.append(code[copied:at + 1])
                copied = at = at + 1 + len(indent)
                continue
        elif char == "#":
            at = code.find("\n", at)
            if at < 0:
                break
            continue
        elif char in "'\"":
            at = _string_end(code, at)
            continue
        at += 1
    pieces.append(code[copied:])
    return "".join(pieces)


def _statement_start_set(source: _Source) -> set:
    if source.statement_starts is None:
        source.statement_starts = _statement_starts(source)
        source.statement_start_set = set(source.statement_starts)
    return source.statement_start_set


def _block_indent(node: cst.CSTNode, source: _Source, start: int) -> Optional[str]:
    """The indentation of the line where the statement holding the node at ``start`` begins (its decorators
    included): the last statement of the module to begin there or before."""
    _statement_start_set(source)
    starts = source.statement_starts
    at = bisect.bisect_right(starts, start) - 1
    if at < 0:
        return None
    line_start = source.text.rfind("\n", 0, starts[at]) + 1
    line = source.text[line_start:starts[at]]
    return line if not line.strip(" \t\f") else None


def _statement_starts(source: _Source) -> List[int]:
    number = next(n for n, kept in _SOURCES.items() if kept[0] is source)
    found = []
    for made in _SOURCES[number][1]:
        if isinstance(made, (cst.BaseStatement, cst.BaseSmallStatement, cst.ExceptHandler)):
            located = _located(made)
            if located is not None:
                found.append(located[1])
            for decorator in getattr(made, "decorators", ()):
                located = _located(decorator.decorator)
                if located is not None:
                    found.append(source.text.rfind("@", 0, located[1]))
    return sorted(found)


def _skip_back(text: str, at: int) -> Optional[int]:
    """The offset of the last character at or before ``at`` that is not whitespace (-1: none); None when that
    means crossing a line with a ``#`` (a comment, or a ``#`` in a string: reading backwards cannot tell)."""
    while at >= 0:
        char = text[at]
        if char in _BLANK:
            at -= 1
        elif char == "\n" or char == "\r":
            line_start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
            if "#" in text[line_start:at]:
                return None
            at -= 1
        else:
            return at
    return -1


def _skip_forward(text: str, at: int) -> int:
    """The offset of the first character at or after ``at`` that is neither whitespace nor in a comment."""
    size = len(text)
    while at < size:
        char = text[at]
        if char in _BLANK or char == "\n" or char == "\r":
            at += 1
        elif char == "#":
            at = text.find("\n", at)
            if at < 0:
                return size
        else:
            return at
    return size


def _call_parenthesis(text: str, at: int) -> Optional[bool]:
    """Whether the ``(`` at ``at`` opens a call's arguments or a class's bases: what comes before it ends an
    expression (a name that is no keyword, a closing bracket, a string). None when that cannot be read."""
    before = _skip_back(text, at - 1)
    if before is None:
        return None
    if before < 0:
        return False
    char = text[before]
    if char in ")]}'\"":
        ends_expression = True
    elif not (char.isalnum() or char == "_"):
        return False
    else:
        word_start = before
        while word_start > 0 and (text[word_start - 1].isalnum() or text[word_start - 1] == "_"):
            word_start -= 1
        ends_expression = text[word_start:before + 1] not in _KEYWORDS
    if ends_expression and ("\n" in text[before:at] or "\r" in text[before:at]):
        return None  # a statement that starts with ``(``, or a call across lines in brackets: not told apart here
    return ends_expression


def surely_uncommented(node: cst.CSTNode) -> bool:
    """``node`` is a statement of a fast tree, and its text holds no ``#``: from the comment and blank lines just
    above it (libcst's leading lines) to the end of its last line and the comment and blank lines just below (an
    indented block's footer). Then libcst's tree of it holds no comment. False when that is not known."""
    if not isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement)):
        return False
    found = _located(node)
    if found is None:
        return False
    source, start, end = found
    text = source.text
    first = text.rfind("\n", 0, start) + 1
    while first > 0:  # the lines just above that are blank or comments
        above = text.rfind("\n", 0, first - 1) + 1
        line = text[above:first - 1].strip(" \t\f\r")
        if line and not line.startswith("#"):
            break
        first = above
    last = text.find("\n", end)
    while last >= 0:  # the lines just below that are blank or comments
        below = text.find("\n", last + 1)
        line = text[last + 1:below if below >= 0 else len(text)].strip(" \t\f\r")
        if line and not line.startswith("#"):
            break
        last = below
    return "#" not in text[first:last if last >= 0 else len(text)]


def parse_for_analysis(text: str) -> cst.Module:
    """A fast tree of ``text``, or libcst's where ``fast_module`` refuses it (libcst's errors are raised)."""
    from ms_lint.cstutil import parse_module

    try:
        return fast_module(text)
    except FastTreeRefused:
        return parse_module(text)


def trees_alive() -> bool:
    """Some fast tree is in use in this process (``code_for`` must look)."""
    return bool(_PLACES)


def code_for(node: cst.CSTNode) -> str:
    """``code_for_node``'s text for any node: read from the source for a node of a fast tree, generated by libcst
    for the others; ``NeedsRealTree`` for a node of a fast tree (or built around one) that the source does not give
    exactly."""
    if node in _PLACES:
        code = code_of(node)
        if code is None:
            raise NeedsRealTree(type(node).__name__)
        return code
    if _holds_fast_node(node):
        raise NeedsRealTree(type(node).__name__)
    return cst.Module(body=[]).code_for_node(node)


def _holds_fast_node(node: cst.CSTNode) -> bool:
    from ms_lint.walk import _children

    stack = [node]
    while stack:
        for child in _children(stack.pop()):
            if child in _PLACES:
                return True
            stack.append(child)
    return False


class FastPositions:
    """The ranges findings are reported at, for a fast tree (``ms_lint.engine``): ``PositionProvider``'s answers,
    from ``ast``'s; ``NeedsRealTree`` for a node the source does not place."""

    def get(self, node: cst.CSTNode, default=None):
        from libcst.metadata import CodePosition, CodeRange

        place = place_of(node)
        if place is None:
            raise NeedsRealTree(type(node).__name__)
        return CodeRange(CodePosition(place.line, place.column), CodePosition(place.end_line, place.end_column))

    def __contains__(self, node) -> bool:
        return place_of(node) is not None
