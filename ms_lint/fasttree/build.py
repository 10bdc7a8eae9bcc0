"""The builder of fast trees: libcst's node classes, in libcst's shapes, made from ``ast``'s nodes (see
``ms_lint.fasttree``)."""
from __future__ import annotations

import ast
import dataclasses
import inspect
import unicodedata
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from ms_lint.chunks import LINE_END, ast_runs, chunk_bounds
from ms_lint.fasttree.text import IDENTIFIER, Source, closing_bracket, string_tokens, top_level_colons


class FastTreeRefused(Exception):
    """The module must be parsed by libcst (see the module's docstring)."""


class _Marker(tuple):
    """An empty sequence that is not libcst's ``()``: ``places.is_fast_made`` looks for it."""

    __slots__ = ()


# What a fast tree's nodes hold for ``lpar``/``rpar``, and for ``leading_lines`` (a module's ``header``).
MARK_PARENS = _Marker()
MARK_LINES = _Marker()


def _holds_sequence(field: dataclasses.Field) -> bool:
    if field.default is not dataclasses.MISSING:
        return isinstance(field.default, (tuple, list))
    factory = field.default_factory  # type: ignore[misc]
    return factory is not dataclasses.MISSING and isinstance(factory(), (tuple, list))


def _maker(node_class: type) -> Callable[..., cst.CSTNode]:
    """A function building ``node_class`` from keyword fields (the others take the dataclass defaults, each made
    once and shared, and the markers), setting its slots directly."""
    params, lines, namespace = [], [], {"_new": object.__new__, "_cls": node_class}
    for field in dataclasses.fields(node_class):
        if field.name in ("lpar", "rpar") and _holds_sequence(field):  # an expression's (a ``With``'s is one node)
            default: Any = MARK_PARENS
        elif field.name == "leading_lines" or (node_class is cst.Module and field.name == "header"):
            default = MARK_LINES
        elif field.default is not dataclasses.MISSING:
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


# Where a node came from, packed in one int: its module's number, then ``ast``'s line, column (UTF-8 bytes), end
# line and end column, from the low bits up.
MODULE_BITS = LINE_BITS = COLUMN_BITS = 32


MASK = (1 << 32) - 1


def _pack(node: ast.AST) -> int:
    return (((node.lineno << COLUMN_BITS | node.col_offset) << LINE_BITS  # type: ignore[attr-defined]
             | node.end_lineno) << COLUMN_BITS | node.end_col_offset) << MODULE_BITS  # type: ignore[attr-defined]


class _Builder:
    def __init__(self, text: str, number: int) -> None:
        self.source = Source(text)
        self.number = number
        self.places: Dict[cst.CSTNode, int] = {}

    # -- statements ----------------------------------------------------------------------------------------
    def finish(self, body: Sequence[cst.BaseStatement]) -> cst.Module:
        return Module(body=body, has_trailing_newline=self.source.text.endswith("\n"))

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
            if small and node.lineno != last_line and not self._continued(last_line, node.lineno):
                out.append(SimpleStatementLine(body=tuple(small)))
                small = []
            small.append(self.small(node))
            last_line = node.end_lineno  # type: ignore[assignment]
        if small:
            out.append(SimpleStatementLine(body=tuple(small)))
        return tuple(out)

    def suite(self, nodes: Sequence[ast.stmt]) -> cst.BaseSuite:
        """An indented block, or the statements after the colon on the header's (logical) line."""
        first = nodes[0]
        source = self.source
        start = source.starts[first.lineno - 1]
        if (source.text[start:source.offset(first.lineno, first.col_offset)].strip(" \t\f")
                or self._continued(first.lineno - 1, first.lineno)):
            return SimpleStatementSuite(body=tuple([self.small(node) for node in nodes]))
        return IndentedBlock(body=self.statements(nodes))

    def _continued(self, line: int, later: int) -> bool:
        """Lines ``line`` to ``later`` are one logical line: each before ``later`` ends in a backslash (``ast`` gives
        no sign of it). A line that ends in a backslash and holds a ``#`` is refused: a comment's backslash continues
        nothing, and which one it is is not read here."""
        if line < 1:
            return False
        source = self.source
        for number in range(line, later):
            end = source.starts[number] if number < len(source.starts) else len(source.text)
            content = source.text[source.starts[number - 1]:end].rstrip("\r\n")
            if not content.endswith("\\"):
                return False
            if "#" in content:
                raise FastTreeRefused("a line continuation after a '#'")
        return True

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
        words = IDENTIFIER.findall(self.source.span(node))
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
            words = IDENTIFIER.findall(self.source.span(alias))
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
        words = IDENTIFIER.findall(self.source.text, at, at + 200)
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
        return IDENTIFIER.findall(head.rsplit(" as ", 1)[1])[0]

    def _with(self, node):
        items = [WithItem(item=self.expr(i.context_expr),
                          asname=None if i.optional_vars is None else AsName(name=self.expr(i.optional_vars)))
                 for i in node.items]
        return With(items=tuple(items), body=self.suite(node.body),
                    asynchronous=_ASYNC if isinstance(node, ast.AsyncWith) else None)

    # -- expressions ---------------------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> cst.BaseExpression:
        made = self.EXPRESSIONS[type(node)](self, node)
        self.places[made] = self.number | (((node.lineno << COLUMN_BITS | node.col_offset) << LINE_BITS
                                            | node.end_lineno) << COLUMN_BITS | node.end_col_offset) << MODULE_BITS
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
        for token in string_tokens(self.source.span(node)):
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
            code = self.source.span(node)
            if "lambda" in code:
                raise FastTreeRefused("a lambda in a slice")  # its colon is not the slice's
            if node.step is not None or top_level_colons(code) > 1:
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
        return closing_bracket(source.text, start) == source.offset(node.end_lineno, node.end_col_offset) - 1  # type: ignore

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
            name = IDENTIFIER.match(self.source.text, self.source.offset(node.lineno, node.col_offset)).group()
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
            name = IDENTIFIER.match(self.source.text, self.source.offset(arg.lineno, arg.col_offset)).group()
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


def _fstring(token: str) -> cst.BaseExpression:
    from ms_lint.cstutil import parse_expression_unvalidated

    try:
        return parse_expression_unvalidated(token)
    except cst.ParserSyntaxError as error:
        raise FastTreeRefused("an f-string libcst does not parse") from error


def _suspect_lines(text: str) -> Dict[int, str]:
    """Line number -> line, for the lines that NFKC normalisation changes: ``ast`` may give an identifier on them
    in another spelling than the source's (libcst's). Mostly comments and strings (full-width punctuation)."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return {}
    return {number: line for number, line in enumerate(LINE_END.split(text), 1)
            if not line.isascii() and not unicodedata.is_normalized("NFKC", line)}


def _refused_identifiers(suspects: Dict[int, str], tree: ast.Module, source: Source) -> bool:
    """Some suspect line of ``tree`` (``_suspect_lines``) changes under NFKC outside its strings and comment."""
    if not suspects or not tree.body:
        return False
    first, last = tree.body[0].lineno, tree.body[-1].end_lineno
    mine = {number: line for number, line in suspects.items() if first <= number <= last}  # type: ignore[operator]
    if not mine:
        return False
    strings = _string_columns(tree, source)
    for number, line in mine.items():
        code = list(line)
        for start, end in strings.get(number, ()):
            code[start:end] = " " * (end - start)
        code_text = "".join(code)
        hash_at = code_text.find("#")
        if not unicodedata.is_normalized("NFKC", code_text if hash_at < 0 else code_text[:hash_at]):
            return True
    return False


def _string_columns(tree: ast.Module, source: "Source") -> Dict[int, List[Tuple[int, int]]]:
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


def build_tree(text: str, number: int) -> Tuple[cst.Module, Dict[cst.CSTNode, int], Source]:
    """The fast tree of ``text``, the positions of its nodes (packed with ``number``) and its source;
    ``FastTreeRefused`` where only libcst's parser gives the right tree. A long module is parsed a run of
    top-level statements at a time (``ms_lint.chunks``: ``ast.parse`` holds about 5 KB a line while it parses)."""
    suspects = _suspect_lines(text)
    bounds = chunk_bounds(text)
    if len(bounds) > 1:
        builder = _Builder(text, number)
        body: List[cst.BaseStatement] = []
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escape sequences and the like: not ours to report
                for tree in ast_runs(text, bounds):
                    body.extend(_build_body(builder, tree, suspects))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # a cut inside a string or a bracket, or a real error: the whole module decides
        else:
            return builder.finish(tuple(body)), builder.places, builder.source
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise FastTreeRefused("ast does not parse it") from error
    builder = _Builder(text, number)
    return builder.finish(_build_body(builder, tree, suspects)), builder.places, builder.source


def _build_body(builder: "_Builder", tree: ast.Module, suspects: Dict[int, str]) -> Sequence[cst.BaseStatement]:
    if _refused_identifiers(suspects, tree, builder.source):
        raise FastTreeRefused("identifiers NFKC normalisation may change")
    try:
        return builder.statements(tree.body)
    except KeyError as error:  # a node class the builder does not make (match, except*, type aliases)
        raise FastTreeRefused(str(error)) from error
    except RecursionError as error:
        raise FastTreeRefused("nested too deeply") from error
