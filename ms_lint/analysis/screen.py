"""Can a graph rule fire in this file? Asked from the project index's summary and the text, before libcst parses it.

Most files that mention MindSpore and define a ``construct`` end with no finding: on the eight model packages,
about 330 of the 400 files a cold check parsed with libcst, and parsing is about a third of a cold check. The
graph rules (MSL101, MSL102, MSL103, MSL201) only look at nodes of a few kinds (``for``, ``while``,
comprehensions, ``if`` and ``a if c else b``) inside the bodies of graph functions: ``engine.run_rules`` walks
the bodies of ``GraphScope``'s functions, and these rules' ``check_module`` only judges what their hooks
collected there. Each such node is written with its keyword: ``for`` (a loop, or the first clause of any
comprehension), ``while``, ``if``. A keyword is never a name, so where no graph function's text holds the
keyword in its code (outside strings and comments), the rules cannot fire and the file need not be parsed.

MSL201 reports an ``if`` only when the value model gives its test the kind TENSOR, and never an argument check
(``if <check>: raise ...`` without ``else``); for a rule that declares so (``Rule.skips_never_tensor_tests``), a
function whose text holds ``if`` is parsed with the stdlib ``ast`` (a tenth of libcst's cost) and kept only when
one of its tests, argument checks aside, is not cleared by ``screen_conditions.not_tensor``: what
``values.never_tensor`` clears (``if x is None``, ``if "a" in mode``), what the value model decides without the
function's own bindings (``if len(shape) == 4``, ``if x.ndim == 2``, ``if self.has_bias`` where every write of
``self.has_bias`` in the class's methods assigns a literal or a defaulted parameter), and names the function binds
only to such values (``rows = x.shape[0]`` then ``if rows > 4``); see ``ms_lint/analysis/screen_conditions.py``.

Why the screen is sound: a superset of ``GraphScope``'s functions
------------------------------------------------------------------
The screen reads the text of every function that *may* be graph code, a set built from the summary's definitions
(every module-level function and every method, of nested classes and of classes inside functions too, a name
defined twice counted twice: ``ModuleSummary.definitions``) and closed by names, never by resolution:

* roots: every ``construct``; the functions the project index makes graph code from other modules; every
  function with a decorator whose last name is ``jit``, ``ms_function`` or ``register`` (a ``MultitypeFuncGraph``
  overload), or that holds such a def in its body at any depth (``Definition.nested_decorators``: a ``@jit``
  closure is graph code, and its text lies within the definition's, with the sibling defs it may call), or,
  when the module renames ``jit`` or ``ms_function`` by an import (``... import jit as J``), any one-name
  decorator (``ImportTable.qualify`` only follows imports, and keeps the last name of a dotted one);
  and, when the code holds ``jit`` or ``ms_function`` where ``qualify`` can resolve it as a callee
  (``prefilter.CalledWords``), every function named by the first positional argument of a call of a name ending
  in ``jit`` or ``ms_function`` anywhere in the module (``ModuleSummary.jit_arguments``: ``ms.jit(f)``,
  ``jit(self.f)``), or, when the module renames them, every function whose name is written at least twice in its
  code (its ``def`` and the ``J(f)`` that makes it a root);
* closure: a function whose name the body of a function of the set calls or passes (``Definition.follows``: the
  callee of ``f(...)`` and ``self.f(...)``, and each argument written ``f``, ``self.f``, ``*f`` or ``**f``, in the
  body's nested functions, lambdas and classes too) joins it, whatever function or method of the module the name
  resolves to. ``GraphScope`` adds a callee for ``f(...)`` and ``self.f(...)`` (``resolve_callable``), for ``f``
  or ``self.f`` passed as an argument, or an overload of a ``MultitypeFuncGraph`` a ``HyperMap`` applies
  (overloads are roots already), reading every call of the caller's body. A name that is only written
  (``x.shape``, ``super().__init__()``, a word in a string) is not followed: ``GraphScope`` never resolves it.

``GraphScope`` only removes from these (a Cell test for ``construct``, ``@constexpr`` helpers, PyNative-only
modules, ``graph-mode = "jit-only"``). A function's text runs from its ``def`` line to its last line, so it holds
the bodies of the functions and lambdas nested in it, which the rules' walk enters too. Code inside an f-string's
replacement fields is code: its words count. Quotes that do not pair up in a function's text, a summary of other
bytes than the text checked, or a rule with a hook on any other node kind: no screen, the file is parsed.
"""
from __future__ import annotations

import ast
import functools
import re
import warnings
from collections import Counter
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

import libcst as cst

from ms_lint.analysis.screen_conditions import (LocalNames, SelfAttributes, any_attribute, const_calls_of,
                                                 not_tensor)
from ms_lint.analysis.summary import Definition, ModuleSummary
from ms_lint.chunks import line_starts
from ms_lint.prefilter import GRAPH_CODE, JIT_ALIAS, JIT_WORDS, Text, fstring_fields, requirement
from ms_lint.walk import node_hooks

# The keyword each node kind a graph rule may hook is written with.
KEYWORD_OF = {
    cst.For: "for", cst.While: "while", cst.If: "if", cst.IfExp: "if",
    cst.ListComp: "for", cst.SetComp: "for", cst.DictComp: "for", cst.GeneratorExp: "for",
    cst.CompFor: "for", cst.CompIf: "if",
}
# An ``if`` or ``a if c else b`` whose test may be a Tensor: for rules that pass over the others.
TENSOR_IF = "if (Tensor test)"
KEYWORDS = frozenset(KEYWORD_OF.values())
ROOT_DECORATORS = JIT_WORDS + ("register",)
_WORD = re.compile(r"\w+")
_SCREENED: Dict[type, Optional[FrozenSet[str]]] = {}


def rule_keywords(rule_classes: Iterable[type]) -> Optional[FrozenSet[str]]:
    """What a graph function's text must hold for any of ``rule_classes`` to fire: keywords, and TENSOR_IF; None
    when one of them cannot be screened (it needs more than graph code, or hooks a node kind KEYWORD_OF lacks)."""
    words: Set[str] = set()
    for rule_class in rule_classes:
        own = _keywords_of(rule_class)
        if own is None:
            return None
        words |= own
    if "if" in words:
        words.discard(TENSOR_IF)  # a rule that wants every ``if`` decides
    return frozenset(words)


def _keywords_of(rule_class: type) -> Optional[FrozenSet[str]]:
    if rule_class not in _SCREENED:
        found: Optional[Set[str]] = set() if requirement(rule_class) is GRAPH_CODE else None
        for _attr, node_type in node_hooks(rule_class):
            if found is None:
                break
            keyword = KEYWORD_OF.get(node_type)
            if keyword is None:
                found = None
            elif node_type in (cst.If, cst.IfExp) and getattr(rule_class, "skips_never_tensor_tests", False):
                found.add(TENSOR_IF)
            else:
                found.add(keyword)
        # no hook at all: its check_module judges something else than what hooks collect (the contract of a
        # declared GRAPH_CODE), and the screen cannot tell what
        _SCREENED[rule_class] = frozenset(found) if found else None
    return _SCREENED[rule_class]


class _Lines:
    """The text cut at Python's line ends, to take the text of a line range."""

    def __init__(self, text: str):
        self.text = text
        self.starts = line_starts(text)

    def span(self, first: int, last: int) -> str:
        """Lines ``first`` to ``last`` (1-based, inclusive)."""
        starts = self.starts
        begin = starts[min(first, len(starts)) - 1]
        end = starts[last] if last < len(starts) else len(self.text)
        return self.text[begin:end]


def code_words(raw: str, text: Optional[Text] = None) -> Optional[Counter]:
    """The words of ``raw``'s code (comments and strings blanked, f-string replacement fields kept), counted, with
    each keyword of KEYWORD_OF also counted where a number ends right before it (``[t*2for t in x]``,
    ``1if c else 2``, ``1jif``: Python 3.11 accepts them); None when its quotes do not pair up or its code
    is not ASCII (``ast`` reads identifiers NFKC-normalized, ``ｈelper`` is ``helper``, while libcst and this
    text keep them as written, and the word pattern misses some identifier characters). ``text``: ``raw``'s
    :class:`Text`, when the caller has one.
    """
    code = (text or Text(raw)).code()
    if code is None:
        return None
    parts = [code] + list(fstring_fields(raw))
    if not all(part.isascii() for part in parts):
        return None
    words: Counter = Counter()
    for part in parts:
        words.update(_WORD.findall(part))
    glued = [keyword for word in words if word[0].isdigit()  # a number's digits, then a keyword: ``1jif``
             for keyword in KEYWORDS if word.endswith(keyword)]
    words.update(glued)
    return words


def _uncleared_tests(source: str, const_calls: FrozenSet[str]
                     ) -> Optional[List[Tuple[ast.expr, Optional[LocalNames]]]]:
    """The tests of the ``if`` (argument checks aside) and ``a if c else b`` in a function's text (from its ``def``
    line) that are not cleared without the class's attributes: None when one is not cleared even with every
    ``self.<attr>`` cleared (or the text cannot be read), else those that need ``self.<attr>`` (usually none), each
    with the function's names (:class:`LocalNames`: a name no binding in the function can make a Tensor is cleared
    too)."""
    block = "if 1:\n" + source if source[:1] in " \t" else source
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(block)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = tree.body[0].body if block is not source else tree.body
    function = body[0] if len(body) == 1 and type(body[0]) in (ast.FunctionDef, ast.AsyncFunctionDef) else None
    names: Optional[LocalNames] = None  # read on the first test that needs them
    pending: List[Tuple[ast.expr, Optional[LocalNames]]] = []
    try:
        for stmt in body:
            for node in ast.walk(stmt):
                if type(node) not in (ast.If, ast.IfExp) or _validation_guard(node):
                    continue
                test = node.test  # type: ignore[attr-defined]
                if not_tensor(test, _no_attribute, const_calls):
                    continue
                if names is None and function is not None:
                    names = LocalNames(function, const_calls)
                if names is not None and not_tensor(test, _no_attribute, const_calls, names.cleared(_no_attribute)):
                    continue
                if not not_tensor(test, any_attribute, const_calls,
                                  names.cleared(any_attribute) if names is not None else None):
                    return None
                pending.append((test, names))
    except RecursionError:  # ``not not ... x`` a thousand deep: the libcst side decides
        return None
    return pending


def _validation_guard(node: ast.AST) -> bool:
    """``if <check>: raise ...`` with no ``else``: MSL201 never reports it, whatever the test is
    (``msl201_tensor_condition_branch._validation_guard``: every statement of the body a ``raise``)."""
    return type(node) is ast.If and not node.orelse and all(  # type: ignore[attr-defined]
        type(statement) is ast.Raise for statement in node.body)  # type: ignore[attr-defined]


def _no_attribute(attr: str) -> bool:
    """No ``self.<attr>`` cleared (``training`` is CONST in every class)."""
    return attr == "training"


def _renames_jit(text: Text) -> bool:
    """``jit`` or ``ms_function`` followed by ``as`` in the code (an import alias), or quotes that do not pair up."""
    code = text.code()
    return code is None or JIT_ALIAS.search(code) is not None


def _root_decorator(name: str, renamed: bool) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last in ROOT_DECORATORS or name == "<expr>" or (renamed and "." not in name)


def may_fire(text: str, summary: ModuleSummary, external: Iterable[str], needed: FrozenSet[str],
             compiled: Callable[[str], bool] = lambda _owner: True) -> bool:
    """Could a graph function of this module (``summary`` is of this very text) hold what ``needed`` names
    (``rule_keywords``)? ``external``: qualnames of the module's functions the project index makes graph code.
    ``compiled``: False for a class whose ``construct`` ``GraphScope`` never makes a root (``candidates``)."""
    if not needed:
        return False
    keywords = needed - {TENSOR_IF}
    tensor_if = TENSOR_IF in needed
    const_calls = const_calls_of(summary.imports, summary.star_imports)
    # (the method's class, a test only its attributes clear, the names of its function)
    asked: List[Tuple[Optional[str], ast.expr, Optional[LocalNames]]] = []
    found_all = list(candidates(text, summary, external, compiled))
    for found, _source, words in found_all:  # a loop anywhere keeps the file before any ``if`` is parsed
        if words is None or found is None or any(keyword in words for keyword in keywords):
            return True
    for found, source, words in found_all:
        if tensor_if and "if" in words:  # type: ignore[operator]
            pending = _uncleared_tests(source, const_calls)
            if pending is None:
                return True
            owner = found.qualname.rsplit(".", 1)[0] if "." in found.qualname else None  # type: ignore[union-attr]
            asked.extend((owner, test, names) for test, names in pending)
    if asked:  # read the module's classes only now: most files are kept by a test nothing clears
        attributes = SelfAttributes(text, const_calls, mindspore_outside=summary.name.split(".")[0] != "mindspore")
        for owner, test, names in asked:
            self_attribute = functools.partial(attributes.never_tensor, owner)
            if not not_tensor(test, self_attribute, const_calls,
                              names.cleared(self_attribute) if names is not None else None):
                return True
    return False


def candidates(text: str, summary: ModuleSummary, external: Iterable[str],
               compiled: Callable[[str], bool] = lambda _owner: True
               ) -> Iterator[Tuple[Optional[Definition], str, Optional[Counter]]]:
    """(definition, its text, the words of its code) for each function that may be graph code, each function
    before the ones it follows; a definition of None and words of None when the module's text cannot be
    read, words of None for a function whose text cannot (anything may hide there: the caller keeps the file).
    ``compiled(owner)``: may the ``construct`` of class ``owner`` (its qualname) be a root? The caller answers
    with ``GraphScope``'s own tests on the project (a PyNative package's eager Cell, a module that refuses graph
    mode, ``graph-mode = "jit-only"``); such a ``construct`` is still graph code when a reached function calls it,
    or when the project makes it graph code (``external``)."""
    definitions: List[Definition] = summary.definitions
    if not definitions:
        return
    lines = _Lines(text)
    external = set(external)
    module = Text(text)
    renamed = _renames_jit(module)
    by_name: Dict[str, List[int]] = {}
    for position, found in enumerate(definitions):
        by_name.setdefault(found.name, []).append(position)
    roots = [position for position, found in enumerate(definitions)
             if (found.name == "construct" and ("." not in found.qualname
                                                or compiled(found.qualname.rsplit(".", 1)[0])))
             or found.qualname in external
             or any(_root_decorator(name, renamed) for name in found.decorators + found.nested_decorators)]
    if module.has_called_words(JIT_WORDS):
        if renamed:  # ``J(f)`` after ``import jit as J``: any name written twice (its ``def``, then ``J(f)``)
            whole = code_words(text, module)
            if whole is None:
                yield None, text, None
                return
            roots += [position for position, found in enumerate(definitions) if whole[found.name] >= 2]
        else:
            handed = set(summary.jit_arguments)
            roots += [position for position, found in enumerate(definitions) if found.name in handed]
    reached: Set[int] = set()
    followed: Set[str] = set()  # names whose definitions are all pending or reached: each name is followed once
    pending = list(reversed(roots))
    while pending:
        position = pending.pop()
        if position in reached:
            continue
        reached.add(position)
        found = definitions[position]
        source = lines.span(found.line, found.end_line)
        words = code_words(source)
        yield found, source, words
        if words is None:
            continue
        for name in found.follows:  # a file of 3,000 Cells: every construct calls ``self.dense``...
            if name in followed or name not in by_name:
                continue
            followed.add(name)
            pending.extend(callee for callee in by_name[name] if callee not in reached)
