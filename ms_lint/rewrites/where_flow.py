"""Selects for whole branch structures: ``if``/``elif``/``else`` chains, branches that assign several names, and
early returns, by running the branches symbolically.

Each path through the branches is executed on expressions: ``percent = step / n; lr = base * percent`` gives
``lr = base * (step / n)`` in terms of the values the names held before the ``if``; where paths meet, every name
they disagree on becomes ``ops.where(cond, a, b)`` (an ``elif`` chain nests them). A return path reads the
statements that follow the ``if`` too (``if c: return a`` ... ``return lr``): the whole tail then becomes one
``return ops.where(...)``. Only plain ``name = expr`` / ``name += expr`` / ``return expr`` / ``pass`` statements and
Tensor ``if``s take part; anything else refuses.

The result is the same program when every expression a select now evaluates on every call is cheap and free of
side effects: the caller checks the expressions of :attr:`Plan.evaluated` (the right-hand sides the paths ran,
as written) and each select of :attr:`Plan.selects` (shapes of its two sides). A name assigned in the branches is
selected only when something outside the ``if`` reads it; temporaries (``percent``, ``progress``) vanish into the
expressions. With more than one select, a condition used by several is bound once to a fresh name first.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ms_lint.cstutil import code_of, short_code, suite_statements
from ms_lint.analysis.values import FunctionValues, Kind
from ms_lint.walk import code_children, find

MAX_SELECTS = 12  # nested selects in one rewrite: beyond that the code is no longer readable


class Refused(Exception):
    """Why the branches cannot become selects (one line, for the finding's message)."""


@dataclass
class Select:
    """One ``ops.where(cond, a, b)`` the rewrite builds: the original test, and the two sides (symbolic)."""

    test: cst.BaseExpression
    cond: cst.BaseExpression  # the bool-tensor condition, in terms of the values before the ``if``
    a: cst.BaseExpression
    b: cst.BaseExpression
    placeholder: str  # the Name the built call uses for its condition until it is spelled


@dataclass
class Plan:
    mode: str  # "assign": the ``if`` becomes assignments; "return": the ``if`` and the rest become a return
    statements: List[cst.BaseStatement]
    consumed: List[cst.CSTNode]  # statements after the ``if`` in its block that the return took in
    selects: List[Select]
    evaluated: List[cst.BaseExpression] = field(default_factory=list)  # right-hand sides as written
    targets: List[str] = field(default_factory=list)  # names the assignments bind (``assign`` mode)


_UNDEF = cst.Name("__ms_lint_unbound__")


class BranchFlow:
    """Runs the branches of one ``if`` of one graph function; see the module docstring."""

    def __init__(self, values: FunctionValues, parent, spell_where, convert_condition, bound_before,
                 clamp_tables=None, tests=None):
        """``parent(node)``: the parent map. ``spell_where(cond, a, b)`` -> call or None;
        ``convert_condition(test)`` -> (bool condition, why not); ``bound_before(name)``: a Tensor bound before
        the ``if`` on every path to it. ``tests``: id(if) -> the test to run it on instead of its own (the Tensor
        part of ``if <compile-time test> or <tensor test>:``, whose compile-time part the caller keeps)."""
        self.tests: Dict[int, cst.BaseExpression] = dict(tests or {})
        self.values = values
        self.parent = parent
        self.spell_where = spell_where
        self.convert_condition = convert_condition
        self.bound_before = bound_before
        self.clamp_tables = clamp_tables or (lambda expr: expr)  # table[idx] -> table[clamp(idx, 0, n - 1)]
        self.selects: List[Select] = []
        self.evaluated: List[cst.BaseExpression] = []
        self._built: Dict[int, Select] = {}
        self._placeholders = 0
        self.folded: Dict[int, Tuple[cst.BaseExpression, cst.BaseExpression]] = {}  # id(IfExp) -> its sides
        self.augmented: List[cst.AugAssign] = []  # ``x += v`` on a name that may hold a Tensor

    # -- planning -------------------------------------------------------------------------------------------
    def plan(self, node: cst.If, continuation: Sequence[cst.BaseStatement], own_rest: Sequence[cst.BaseStatement],
             live: Set[str], fresh) -> Plan:
        """``continuation``: what runs after the ``if`` (its block's rest, then the enclosing blocks' rests) when
        the ``if`` is not inside a loop; ``own_rest``: the part of it in the ``if``'s own block. ``live``: names
        read outside the ``if``. ``fresh(base)``: a new local name."""
        kind, result = self._run([node], {})
        if kind == "fall":
            return self._assignments(result, live, fresh)  # type: ignore[arg-type]
        self.selects.clear()
        self.evaluated.clear()
        self._built.clear()
        kind, result = self._run([node] + list(continuation), {})
        if kind != "ret" or _reads(result) & {_UNDEF.value}:  # type: ignore[arg-type]
            raise Refused("a path through the branches neither returns nor falls through to the same names")
        returned = cst.Return(value=result, whitespace_after_return=cst.SimpleWhitespace(" "))  # type: ignore
        statement = cst.SimpleStatementLine(body=[returned])
        statements = self._spell_conditions([statement], fresh)
        return Plan("return", statements, list(own_rest), list(self.selects), list(self.evaluated))

    def _assignments(self, env: Dict[str, cst.BaseExpression], live: Set[str], fresh) -> Plan:
        targets = [name for name, value in env.items()
                   if name in live and not (isinstance(value, cst.Name) and value.value == name)]
        for name in targets:
            if _reads(env[name]) & {_UNDEF.value}:
                raise Refused(f"`{name}` is assigned on some paths only and read after the `if`")
        if not targets:
            raise Refused("the branches assign nothing that is read after the `if`")
        order = _emission_order(targets, env)
        if order is None:
            raise Refused("the selects would read names the other selects rebind")
        statements = [cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))],
                                                               value=_bare(env[name]))])
                      for name in order]
        statements = self._spell_conditions(statements, fresh)
        return Plan("assign", statements, [], list(self.selects), list(self.evaluated), order)

    def _spell_conditions(self, statements: List[cst.BaseStatement], fresh) -> List[cst.BaseStatement]:
        """Put each condition in place of its placeholder; one used more than once is bound to a fresh name."""
        counts: Dict[str, int] = {}
        for stmt in statements:
            for name in _all_names(stmt):
                counts[name] = counts.get(name, 0) + 1
        used = set(counts)
        for select in reversed(self.selects):  # drop the selects of runs that were abandoned
            if select.placeholder in used:
                used |= set(_all_names(select.cond))
        self.selects = [select for select in self.selects if select.placeholder in used]
        bindings: List[cst.BaseStatement] = []
        mapping: Dict[str, cst.BaseExpression] = {}
        for select in self.selects:
            if select.placeholder in mapping:
                continue
            uses = counts.get(select.placeholder, 0)
            cond = _replace_names(select.cond, mapping)
            if uses > 1 and not isinstance(cond, cst.Name):
                name = fresh("cond")
                bindings.append(cst.SimpleStatementLine(body=[cst.Assign(
                    targets=[cst.AssignTarget(target=cst.Name(name))], value=_bare(cond))]))
                mapping[select.placeholder] = cst.Name(name)
            else:
                mapping[select.placeholder] = _bare(cond)
        spelled = [_replace_names(stmt, mapping) for stmt in statements]
        return bindings + [_wrap(stmt, self._built) for stmt in spelled]  # type: ignore[misc]

    # -- running the statements ------------------------------------------------------------------------------
    def _run(self, stmts: Sequence[cst.BaseStatement], env: Dict[str, cst.BaseExpression]):
        env = dict(env)
        for index, stmt in enumerate(stmts):
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    returned = self._small(small, env)
                    if returned is not None:
                        return "ret", returned
            elif isinstance(stmt, cst.If):
                rest = list(stmts[index + 1:])
                if self.values.kind(self._test(stmt)) is Kind.CONST:  # folded at compile time: a constant IfExp
                    cond, test = self._subst(self._test(stmt), env), None
                else:
                    cond, test = self._condition(stmt, env)
                body = list(suite_statements(stmt.body))
                orelse: List[cst.BaseStatement] = []
                if isinstance(stmt.orelse, cst.If):
                    orelse = [stmt.orelse]
                elif stmt.orelse is not None:
                    orelse = list(suite_statements(stmt.orelse.body))
                first, second = self._run(body, env), self._run(orelse, env)
                if first[0] == "fall" and second[0] == "fall":
                    env = self._merge(test, cond, first[1], second[1])
                    continue
                if first[0] == "ret" and second[0] == "ret":
                    return "ret", self._select(test, cond, first[1], second[1])
                if not rest:
                    return "fall-ret", None  # the caller adds the continuation and runs again
                first = first if first[0] == "ret" else self._run(body + rest, env)
                second = second if second[0] == "ret" else self._run(orelse + rest, env)
                if first[0] != "ret" or second[0] != "ret":
                    raise Refused("one path through the branches returns and another does not")
                return "ret", self._select(test, cond, first[1], second[1])
            else:
                raise Refused(f"a `{_keyword(stmt)}` statement in a branch or after it (only assignments, returns "
                              "and Tensor `if`s take part)")
        return "fall", env

    def _small(self, small: cst.BaseSmallStatement, env: Dict[str, cst.BaseExpression]
               ) -> Optional[cst.BaseExpression]:
        if isinstance(small, cst.Assign):
            if len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
                target = short_code(small.targets[0].target)
                raise Refused(f"`{target}` is assigned in a branch or after it (only plain names take part)")
            value = self.clamp_tables(small.value)
            self._evaluate(value)
            env[small.targets[0].target.value] = self._subst(value, env)
            return None
        if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            op = _BINARY.get(type(small.operator))
            if op is None:
                raise Refused(f"a branch uses `{short_code(small.operator)}`")
            whole = cst.BinaryOperation(left=small.target, operator=op(), right=_paren(small.value))
            if self.values.kind(small.target) is not Kind.CONST:
                self.augmented.append(small)
            self._evaluate(whole)
            env[small.target.value] = self._subst(whole, env)
            return None
        if isinstance(small, cst.Return):
            if small.value is None:
                raise Refused("a bare `return`")
            value = self.clamp_tables(small.value)
            self._evaluate(value)
            return self._subst(value, env)
        if isinstance(small, cst.Pass):
            return None
        if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
            return None
        raise Refused(f"`{short_code(small, 30)}` is neither an assignment nor a return (only those take part)")

    def _evaluate(self, expr: cst.BaseExpression) -> None:
        self.evaluated.append(expr)

    def _test(self, stmt: cst.If) -> cst.BaseExpression:
        return self.tests.get(id(stmt), stmt.test)

    def _condition(self, stmt: cst.If, env: Dict[str, cst.BaseExpression]):
        test = self._test(stmt)
        if self.values.kind(test) is not Kind.TENSOR:
            raise Refused(f"a branch tests a Python value (`{short_code(test, 30)}`) inside the Tensor `if`")
        cond, why = self.convert_condition(test)
        if cond is None:
            raise Refused(why)
        self._evaluate(test)  # a select evaluates every condition of the chain on every call
        return self._subst(cond, env), test

    def _merge(self, test, cond, first: Dict[str, cst.BaseExpression], second: Dict[str, cst.BaseExpression]
               ) -> Dict[str, cst.BaseExpression]:
        merged: Dict[str, cst.BaseExpression] = {}
        placeholder = self._placeholder() if test is not None else None
        for name in list(dict.fromkeys(list(first) + list(second))):
            a, b = first.get(name, self._before(name)), second.get(name, self._before(name))
            if _is_undef(a) or _is_undef(b):
                merged[name] = _UNDEF
            elif _same(a, b):
                merged[name] = a
            else:
                merged[name] = self._select(test, cond, a, b, placeholder)
        return merged

    def _placeholder(self) -> str:
        self._placeholders += 1
        return f"__ms_lint_cond_{self._placeholders}__"

    def _before(self, name: str) -> cst.BaseExpression:
        return cst.Name(name) if self.bound_before(name) else _UNDEF

    def _select(self, test, cond, a, b, placeholder: Optional[str] = None) -> cst.BaseExpression:
        if _is_undef(a) or _is_undef(b) or _reads(a) & {_UNDEF.value} or _reads(b) & {_UNDEF.value}:
            raise Refused("a name is read on a path that never assigned it")
        if test is None:  # a compile-time test inside the Tensor ``if``: ``a if k else b``, folded when compiled
            folded = cst.IfExp(test=_paren(cond), body=_paren(a), orelse=_paren(b),
                               lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            self.folded[id(folded)] = (a, b)
            return folded
        if len(self.selects) >= MAX_SELECTS:
            raise Refused(f"more than {MAX_SELECTS} selects")
        placeholder = placeholder or self._placeholder()
        call = self.spell_where(cst.Name(placeholder), _bare(a), _bare(b))
        if call is None:
            raise Refused("cannot spell ops.where in this module")
        select = Select(test, cond, a, b, placeholder)
        self.selects.append(select)
        self._built[id(call)] = select
        return call

    def _subst(self, expr: cst.BaseExpression, env: Dict[str, cst.BaseExpression]) -> cst.BaseExpression:
        if not env:
            return expr
        return _replace_names(expr, {name: _paren(value) for name, value in env.items()})  # type: ignore


# -- layout ------------------------------------------------------------------------------------------------------
LINE = 110


def _wrap(stmt: cst.SimpleStatementLine, built: Dict[int, Select]) -> cst.SimpleStatementLine:
    """A statement too long for one line gets one argument of each select per line (nested selects indented)."""
    code = code_of(stmt)
    if len(code.splitlines()[0]) + 8 <= LINE and "\n" not in code.strip():
        return stmt
    return stmt.visit(_Wrap())


class _Wrap(cst.CSTTransformer):
    def __init__(self):
        super().__init__()
        self.depth = 0

    def visit_Call(self, node: cst.Call) -> None:
        if _is_select_call(node):
            self.depth += 1

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not _is_select_call(original):
            return updated
        indent = "    " * self.depth
        self.depth -= 1

        def newline(spaces: str) -> cst.ParenthesizedWhitespace:
            return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[], indent=True,
                                               last_line=cst.SimpleWhitespace(spaces))

        args = list(updated.args)
        args = [arg.with_changes(comma=cst.Comma(whitespace_after=newline(indent))) for arg in args[:-1]] + [
            args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
        return updated.with_changes(whitespace_before_args=newline(indent), args=args,
                                    whitespace_after_func=cst.SimpleWhitespace(""))


def _is_select_call(node: cst.Call) -> bool:
    func = node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else (func.value if isinstance(func, cst.Name) else "")
    return name == "where" and len(node.args) == 3


# -- small helpers ---------------------------------------------------------------------------------------------
_BINARY = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
           cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
           cst.PowerAssign: cst.Power}
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString, cst.Tuple,
          cst.List)


def _is_undef(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == _UNDEF.value


def _same(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    return a is b or code_of(a) == code_of(b)


def _paren(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, _ATOMS) or getattr(expr, "lpar", None):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _bare(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.with_changes(lpar=[], rpar=[]) if getattr(expr, "lpar", None) else expr


def _keyword(stmt: cst.CSTNode) -> str:
    return {cst.For: "for", cst.While: "while", cst.With: "with", cst.Try: "try", cst.FunctionDef: "def",
            cst.ClassDef: "class"}.get(type(stmt), type(stmt).__name__)


class _Replace(cst.CSTTransformer):
    """Replace reads of names (not attribute names, keywords or lambda parameters)."""

    def __init__(self, mapping: Dict[str, cst.BaseExpression]):
        super().__init__()
        self.mapping = mapping

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return updated.with_changes(value=updated.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return False

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(value=updated.value.visit(self))

    def visit_Lambda(self, node) -> bool:
        raise Refused("a branch defines a lambda")

    def visit_ListComp(self, node) -> bool:
        raise Refused("a branch has a comprehension")

    visit_GeneratorExp = visit_SetComp = visit_DictComp = visit_ListComp

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.mapping.get(updated.value, updated)


def _replace_names(node: cst.CSTNode, mapping: Dict[str, cst.BaseExpression]) -> cst.CSTNode:
    if not mapping:
        return node
    return node.visit(_Replace(mapping))


def reads_outside(func: cst.FunctionDef, inside: cst.CSTNode) -> Set[str]:
    """Names read anywhere in ``func`` except inside ``inside`` (an augmented assignment reads its target)."""
    return _reads(func.body, inside)


def _reads(root: cst.CSTNode, inside: Optional[cst.CSTNode] = None) -> Set[str]:
    """Names an expression or statement reads: every ``Name`` under ``root`` but an attribute's name, a keyword and
    a plain assignment target (a tuple target's names count), none under ``inside``. A walk of its own, not a
    libcst visitor: one that prunes ``inside`` would be handed to libcst, whose walk rebuilds every node (a fast
    tree's do not validate)."""
    names: Set[str] = set()
    stack: List[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if node is inside:
            continue
        kind = type(node)
        if kind is cst.Name:
            names.add(node.value)  # type: ignore[attr-defined]
        elif kind is cst.Attribute or kind is cst.Arg:
            stack.append(node.value)  # type: ignore[attr-defined]  # not the attribute's name, nor the keyword
        elif kind is cst.AssignTarget:
            if type(node.target) is not cst.Name:  # type: ignore[attr-defined]
                stack.append(node.target)  # type: ignore[attr-defined]
        else:
            stack.extend(code_children(node))
    return names


def _all_names(node: cst.CSTNode) -> List[str]:
    """Every ``Name`` under ``node`` (``node`` included), in the order a visitor meets them."""
    return [name.value for name in find(node, cst.Name)]


def _emission_order(targets: List[str], env: Dict[str, cst.BaseExpression]) -> Optional[List[str]]:
    """An order of the assignments in which none reads a name an earlier one rebinds (each select reads the
    values before the ``if``); None when there is none."""
    remaining = list(targets)
    order: List[str] = []
    while remaining:
        for name in remaining:
            others = set(remaining) - {name}
            # ``name`` may go now when no select still to come reads it
            if not any(name in _reads(env[other]) for other in others):
                order.append(name)
                remaining.remove(name)
                break
        else:
            return None
    return order


# -- the fix -------------------------------------------------------------------------------------------------
def flow_fix(ctx, values: FunctionValues, node: cst.If, test: Optional[cst.BaseExpression] = None):
    """(Fix, None) or (None, why not) for the branch structure starting at ``node`` (an ``if``, not an ``elif``).
    The fix is unsafe, with the reasons in its message, when a select may see an inf/NaN or a shape it did not
    see before (see :mod:`ms_lint.rewrites.where`). ``test``: run ``node`` on this test instead of its own."""
    from ms_lint.diagnostics import SAFE, UNSAFE, Fix
    from ms_lint.rewrites.where import (
        boolean_condition,
        comments_inside,
        condition_may_be_shape_one,
        expression_problems,
        hazard_message,
        shapes_visibly_differ,
        where_call,
    )
    from ms_lint.rewrites.where_shapes import select_shape_problem

    func = values.func
    imports: List = []

    def spell(cond, a, b):
        built = where_call(ctx, cond, a, b)
        if built is None:
            return None
        imports.extend(built[1])
        return built[0]

    def convert(test):
        cond, needed, why = boolean_condition(ctx, values, test)
        imports.extend(needed)
        return cond, why

    used = set(_all_names(func))

    def fresh(base: str) -> str:
        name, number = base, 1
        while name in used:
            number += 1
            name = f"{base}{number}"
        used.add(name)
        return name

    clamps = _TableClamp(ctx, values, imports)
    flow = BranchFlow(values, ctx.parent, spell, convert, lambda name: _bound_before(ctx, values, node, name),
                      clamps.apply, {id(node): test} if test is not None else None)
    continuation, own_rest, in_loop = _continuation(ctx, node, func)
    live = reads_outside(func, node) | (_reads(node) if in_loop else set())
    try:
        plan = flow.plan(node, continuation, own_rest, live, fresh)
    except Refused as refused:
        return None, str(refused)
    hazards: List[str] = []
    for expr in plan.evaluated:
        blocker, hazard = expression_problems(ctx, values, expr)
        if blocker is not None:
            return None, blocker
        if hazard is not None and hazard_message(hazard) not in hazards:
            hazards.append(hazard_message(hazard))
    reasons = list(hazards) + clamps.reasons
    if flow.augmented:
        reasons.append(f"`{short_code(flow.augmented[0], 30)}` updates in place the Tensor its name holds "
                       "(MindSpore 2.10 graph mode, measured: the Tensor of an attribute changed inside a Tensor "
                       "`if`); the select only rebinds the name")
    conditions = {select.placeholder: select.cond for select in plan.selects}

    def resolve(expr: cst.BaseExpression) -> cst.BaseExpression:
        for _ in range(len(conditions) + 1):  # conditions may read earlier selects
            if not set(_all_names(expr)) & set(conditions):
                break
            expr = _replace_names(expr, conditions)  # type: ignore[assignment]
        return expr

    def tensor(side: cst.BaseExpression) -> bool:
        sides = flow.folded.get(id(side))
        if sides is not None:
            return all(tensor(s) for s in sides)
        return _is_where(side, flow) or values.kind(side) is Kind.TENSOR

    for select in plan.selects:
        for side in (select.a, select.b):
            if not tensor(side):
                if values.kind(side) is Kind.CONST:
                    return None, ("a branch is a Python value: the `if` keeps a Python scalar, a select would make a "
                                  "Tensor (and an `if` joining a Tensor with a number does not compile)")
                return None, "cannot see that both branches are Tensors"
        if shapes_visibly_differ(values, select.a, select.b):
            return None, "the two sides visibly differ in shape or dtype"
        problem = select_shape_problem(ctx, values, select.test, resolve(select.a), resolve(select.b))
        if problem is not None:
            what, why = problem
            shape_one = condition_may_be_shape_one(ctx, values, select.test) if what == "condition" else None
            if shape_one is not None:
                why = (f"`{shape_one}` may have shape (1,) (e.g. initializer(0, [1], ...)): ops.where would "
                       "broadcast 0-d branches to shape (1,)")
            if why not in reasons:
                reasons.append(why)
    shape = "`if`/`elif` chain" if isinstance(node.orelse, cst.If) else "branches"
    nested = "nested " if len(plan.selects) > 1 else ""
    if plan.mode == "return":
        summary = f"replace the {shape} and the statements after it with one `return` of {nested}ops.where"
    else:
        names = ", ".join(f"`{name}`" for name in plan.targets)
        summary = f"replace the {shape} with {nested}ops.where, one select for each name read after it ({names})"
    applicability = UNSAFE if reasons else SAFE
    if reasons:
        summary += " (unsafe: " + "; ".join(reasons) + ")"
    leading = list(node.leading_lines) + comments_inside(node, node.leading_lines)
    for extra in plan.consumed:
        leading += comments_inside(extra, ())  # its own leading comments included
    statements = list(plan.statements)
    statements[0] = statements[0].with_changes(leading_lines=leading)
    edits = ((node, statements),) + tuple((extra, None) for extra in plan.consumed)
    fix = Fix(applicability, summary, edits=edits, imports=tuple(dict.fromkeys(imports)))
    return fix, ("; ".join(reasons) if reasons else None)


def _is_where(expr: cst.BaseExpression, flow: BranchFlow) -> bool:
    return id(expr) in flow._built or id(_bare(expr)) in flow._built


def _continuation(ctx, node: cst.CSTNode, func: cst.FunctionDef):
    """(statements that run after ``node``, those of them in its own block, whether a loop encloses it). The
    continuation stops at a loop body's end (the next iteration is not a return path)."""
    continuation: List[cst.BaseStatement] = []
    own: Optional[List[cst.BaseStatement]] = None
    current: cst.CSTNode = node
    in_loop = False
    stopped = False
    while True:
        block = ctx.parent(current)
        if block is None:
            break
        if isinstance(block, cst.If) and block.orelse is current:  # an elif: its chain's head
            current = block
            continue
        if isinstance(block, cst.Else):
            current = ctx.parent(block)
            continue
        if isinstance(block, cst.IndentedBlock):
            body = list(block.body)
            index = next((i for i, stmt in enumerate(body) if stmt is current), None)
            rest = body[index + 1:] if index is not None else []
            if own is None:
                own = rest
            if not stopped:
                continuation += rest
            current = block
            continue
        if isinstance(block, cst.FunctionDef):
            break
        if isinstance(block, (cst.For, cst.While)):
            in_loop = True
            stopped = True
        elif not isinstance(block, cst.If):
            stopped = True  # with/try: what follows is not a plain continuation
        current = block
    return continuation, own or [], in_loop


def _bound_before(ctx, values: FunctionValues, node: cst.CSTNode, name: str) -> bool:
    """``name`` is a Tensor bound before ``node`` on every path to it: a parameter, or a plain binding in an
    enclosing block before the statement that holds ``node``."""
    if values.kind(cst.Name(name)) is not Kind.TENSOR:
        return False
    if name in values.parameters:
        return True
    current: cst.CSTNode = node
    while True:
        block = ctx.parent(current)
        if block is None or isinstance(block, cst.FunctionDef):
            return False
        if isinstance(block, cst.IndentedBlock):
            for stmt in block.body:
                if stmt is current:
                    break
                if isinstance(stmt, cst.SimpleStatementLine) and any(
                        isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and name in _target_names(small)
                        for small in stmt.body):
                    return True
        current = block


def _target_names(small: cst.BaseSmallStatement) -> Set[str]:
    if isinstance(small, cst.Assign):
        return {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}
    target = getattr(small, "target", None)
    return {target.value} if isinstance(target, cst.Name) else set()


class _TableClamp(cst.CSTTransformer):
    """``self.table[idx]`` with a Tensor ``idx`` and a table of known length ``n`` (a literal list in
    ``__init__``): a select reads it even when the guard keeps ``idx`` in range, so the index is clamped,
    ``self.table[ops.clamp(idx, 0, n - 1)]``. A table of unknown length is left alone (the scan refuses it)."""

    def __init__(self, ctx, values: FunctionValues, imports: List):
        super().__init__()
        self.ctx = ctx
        self.values = values
        self.imports = imports
        self.reasons: List[str] = []

    def apply(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        return expr.visit(self)  # type: ignore[return-value]

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        from ms_lint.rewrites.where import ops_call

        if len(updated.slice) != 1 or not isinstance(updated.slice[0].slice, cst.Index):
            return updated
        index = updated.slice[0].slice.value
        if self.values.is_constant(index) or self.values.kind(index) is not Kind.TENSOR:
            return updated
        size = table_length(self.ctx, self.values, updated.value)
        if size is None:
            return updated
        needed: List = []
        clamped = ops_call(self.ctx, "clamp", [index, cst.Integer("0"), cst.Integer(str(size - 1))], needed)
        if clamped is None:
            return updated
        self.imports.extend(needed)
        reason = (f"`{short_code(original, 30)}` is read with the index clamped to the table's {size} entries "
                  "(a select reads it whichever way the guard goes); where the guard let the index leave the table, "
                  "the `if` read out of range")
        if reason not in self.reasons:
            self.reasons.append(reason)
        element = updated.slice[0].with_changes(slice=cst.Index(value=clamped))
        return updated.with_changes(slice=[element])


def table_length(ctx, values: FunctionValues, table: cst.BaseExpression) -> Optional[int]:
    """Entries of ``self.<attr>`` set once in ``__init__`` to a Tensor (or Parameter) of a literal list/tuple,
    ``ms.Tensor([0.1, 0.05, 0.01], ms.float32)`` or ``Tensor(np.array([...]))``; None otherwise."""
    from ms_lint.analysis.shapes import init_value
    from ms_lint.analysis.values import is_literal, literal_value

    if not (isinstance(table, cst.Attribute) and isinstance(table.value, cst.Name) and table.value.value == "self"):
        return None
    value = init_value(ctx, values.owner, table.attr.value)
    for _ in range(3):  # Parameter(Tensor(np.array([...])))
        if not isinstance(value, cst.Call) or not value.args:
            return None
        qualified = ctx.imports.qualify(value.func) or ""
        if qualified.rsplit(".", 1)[-1] not in ("Tensor", "tensor", "Parameter", "array", "asarray"):
            return None
        first = value.args[0].value
        if isinstance(first, (cst.List, cst.Tuple)) and is_literal(first):
            items = literal_value(first)
            if items and all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in items):
                return len(items)
            return None
        value = first
    return None
