"""The base class of every rule: its code, its examples, and how it reports.

A rule is one class in one module under ``ms_lint/rules/``. It declares ``code``, ``name``, ``summary``,
its ``VALID`` snippets (never flagged) and ``INVALID`` examples (flagged, with the code its fix produces),
and implements ``visit_<Node>`` hooks that the engine calls for nodes **inside graph code only**, or
``check_module`` for module-wide rules. The same examples are shown on the rule's page in ``rules/``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, List, Optional, Tuple, Union

import libcst as cst

from ms_lint.context import ModuleContext
from ms_lint.diagnostics import Fix
from ms_lint.analysis.values import FunctionValues


@dataclass
class Invalid:
    """An example the rule must flag. ``fixed`` is the whole module after the fix (None: no fix offered)."""

    code: str
    fixed: Optional[str] = None
    unsafe: bool = False  # the fix is offered as unsafe (applied only with --unsafe-fixes)


@dataclass
class RawReport:
    rule: "Rule"
    node: cst.CSTNode
    message: str
    fix: Optional[Fix]
    detail: Optional[str] = None  # the longer explanation for this case (``--output-format full``)


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    fix_applicability: ClassVar[Optional[str]] = None  # the best fix it can offer: "safe", "unsafe" or None
    VALID: ClassVar[List[str]] = []
    INVALID: ClassVar[List[Invalid]] = []
    # What a file must contain for this rule to fire; files that cannot make any enabled rule fire are not
    # parsed (see ms_lint/prefilter.py). Unset: graph code for a rule with only visit_/leave_ hooks; every file
    # that mentions mindspore for a rule that overrides check_module. ``GRAPH_CODE`` (from ms_lint.prefilter):
    # graph code, for a check_module that only reports what the hooks collected. ``CodeWords("set_context")``:
    # one of these identifiers must be written in the code (outside strings and comments). ``CalledWords(...)``:
    # written where ``qualify`` can resolve it as a callee or decorator; ``CalledWith("set_context", "mode")``:
    # called with that keyword argument. ``AnyOf``/``AllOf`` combine them. A tuple of strings: one of them must
    # appear in the raw text (strings and comments included), e.g. an environment variable's name.
    requires_text: ClassVar[Union[str, Tuple[str, ...], None]] = None
    # True for a rule whose ``visit_If``/``visit_IfExp`` findings only come from a test the value model gives the
    # kind TENSOR (never ``if x is None``), and never from an ``if`` without ``else`` whose body only raises (an
    # argument check): the screen before parsing (ms_lint/analysis/screen.py) may then pass over those ``if``s and
    # the tests ``screen_conditions.not_tensor`` clears.
    skips_never_tensor_tests: ClassVar[bool] = False
    # ``may_fire_in(text, path)``, a test cheaper than a parse for a rule with a ``check_module``: False only when
    # check_module cannot report anything in that module (the engine then leaves the rule out, and may not parse
    # the file at all). None: no such test.
    may_fire_in: ClassVar[Optional[Callable[[str, str], bool]]] = None

    def __init__(self, context: ModuleContext):
        self.context = context
        self.reports: List[RawReport] = []
        self.function: Optional[cst.FunctionDef] = None  # the graph function being walked

    @property
    def values(self) -> FunctionValues:
        """Value model of the graph function being walked."""
        assert self.function is not None, "values is only available inside graph functions"
        return self.context.values(self.function)

    def report(self, node: cst.CSTNode, message: str, fix: Optional[Fix] = None,
               detail: Optional[str] = None) -> None:
        """``message``: one line, what and the cure (about 120 characters at most); the why and the measured
        numbers are on the rule page. ``detail``: what this case adds (the reason a fix is withheld, the value
        that makes the cache stale...), shown by ``--output-format full``."""
        self.reports.append(RawReport(self, node, message, fix, detail))

    def check_module(self) -> None:
        """Module-wide analysis; override in rules that are not about graph-function bodies."""


class ComprehensionHooks:
    """Mixin for rules that treat every comprehension kind alike: one ``visit_comprehension`` instead of four
    hooks. MindSpore unrolls a comprehension in graph code exactly like the ``for`` loop it stands for."""

    def visit_comprehension(self, node: cst.BaseComp) -> None:
        raise NotImplementedError

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self.visit_comprehension(node)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self.visit_comprehension(node)

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self.visit_comprehension(node)

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self.visit_comprehension(node)
