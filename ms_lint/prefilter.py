"""Which files can hold a finding, decided from their text alone, before any parsing.

Parsing with libcst is the cost of a run (about 15k lines/s per core, plus building the scope), and most files
that mention ``mindspore`` cannot hold graph code: on MindSpore's own source, 1,300 files mention it and about
120 can hold graph code. This module answers "could any enabled rule fire here?" without parsing.

Why the graph-code test is sound (no file that can hold graph code is ever skipped)
-----------------------------------------------------------------------------------
A rule that only has ``visit_*`` hooks sees nodes inside graph functions, and ``GraphScope`` finds graph functions
only from roots; the callees it adds are reached from roots, so no root means no graph code. A root is

* a ``def construct`` method of a class (``construct`` of an ``nn.Cell`` subclass); the name is part of the
  ``def`` statement, so the code contains ``def`` then whitespace (or a line continuation) then ``construct``;
* a function decorated with, or passed to, something ``ImportTable.qualify`` resolves to ``mindspore.jit`` or
  ``mindspore.ms_function``. ``qualify`` keeps the last component of the dotted name (``canonical`` only rewrites
  the package path), and that component is written in the code, either in the expression (``ms.jit``, ``jit``)
  or in the import that made the alias (``from mindspore import jit as J``). So the code contains the word
  ``jit`` or ``ms_function``.

The same argument holds for any name a rule resolves with ``qualify`` (``set_context``): such rules declare
``requires_text = CodeWords(...)``.

"The code" means the text outside comments and string literals: the words usually sit in docstring examples
(``>>> @ms.jit``). Comments and strings are removed with one regular expression that follows Python's string
grammar (prefixes, triple quotes, backslash escapes, backslash-newline). An f-string's replacement fields are
code, so the raw text is also searched for an f-string opening followed on its logical line by one of the words,
and any triple-quoted f-string keeps the file. When the scan leaves a quote character behind, the quotes could
not be paired (an unterminated string, or a Python 3.12 f-string that nests its own quote character): the file
is kept and the parser decides. Every doubt keeps the file, so the test only ever errs by parsing a file that
turns out to hold nothing.

Rules that override ``check_module`` can look at any code, so they are run on every file that mentions
``mindspore`` unless they declare ``requires_text`` (see :class:`ms_lint.rules.base.Rule`).
"""
from __future__ import annotations

import re
from typing import Dict, Optional, Pattern, Sequence, Tuple

MINDSPORE = "mindspore"

# Comments and string literals, in Python's tokenizer order: the scan goes left to right, so a quote inside a
# comment and a ``#`` inside a string are consumed with the token that holds them. A string's prefix letters
# (``rb``, ``f``) stay in the code, which is harmless: the words searched for are longer identifiers.
_STRINGS_AND_COMMENTS = re.compile(
    r"\#[^\r\n]*"
    r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'[^'\\\r\n]*(?:(?:\\\r\n|\\.)[^'\\\r\n]*)*'"
    r'|"[^"\\\r\n]*(?:(?:\\\r\n|\\.)[^"\\\r\n]*)*"',
    re.DOTALL,
)
_FSTRING_PREFIX = r"(?<![\w])(?:[rR]?[fF]|[fF][rR])"
_TRIPLE_FSTRING = re.compile(_FSTRING_PREFIX + r"""(?:'''|\"\"\")""")
# The words a graph root cannot be written without (see the module docstring).
_JIT_WORDS = ("jit", "ms_function")


class CodeWords(tuple):
    """``requires_text = CodeWords("set_context", "jit")``: the rule can only fire where one of these identifiers
    is written in the code (outside strings and comments), e.g. because it resolves them with ``qualify``."""

    def __new__(cls, *words: str) -> "CodeWords":
        return super().__new__(cls, words)


class Text:
    """One file's text, with the comment- and string-free code computed once for all the rules that ask."""

    def __init__(self, text: str):
        self.raw = text
        self._code: Optional[str] = None
        self._unpaired = False

    def code(self) -> Optional[str]:
        """The text with comments and strings blanked, or None when its quotes do not pair up."""
        if self._code is None and not self._unpaired:
            code = _STRINGS_AND_COMMENTS.sub(" ", self.raw)
            if "'" in code or '"' in code:
                self._unpaired = True
            else:
                self._code = code
        return self._code

    def has_code_words(self, words: Sequence[str], def_construct: bool = False) -> bool:
        """One of ``words`` (or, with ``def_construct``, a ``def construct``) is in the code, or might be (see the
        module docstring). Plain ``str.find`` and a look at the neighbouring characters: several times faster
        than a word-boundary regex, and most files have none of the words at all."""
        raw = self.raw
        if not _mentions(raw, words, def_construct):
            return False
        code = self.code()
        if code is None or _mentions(code, words, def_construct):
            return True
        return _fstring_with_word(raw, words) or _TRIPLE_FSTRING.search(raw) is not None


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"  # what ``\w`` matches in a str pattern


def _word_at(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is a whole word (a word boundary on both sides, as ``\\b`` in a regex)."""
    return not (start > 0 and _is_word_char(text[start - 1])) and not (end < len(text) and _is_word_char(text[end]))


def _has_word(text: str, word: str) -> bool:
    index = text.find(word)
    while index >= 0:
        if _word_at(text, index, index + len(word)):
            return True
        index = text.find(word, index + 1)
    return False


def _has_def_construct(text: str) -> bool:
    r"""``def``, whitespace or line continuations, then ``construct`` (the regex ``\bdef[\s\\]+construct\b``)."""
    index = text.find("construct")
    while index >= 0:
        if _word_at(text, index, index + len("construct")):
            before = index - 1
            while before >= 0 and (text[before].isspace() or text[before] == "\\"):
                before -= 1
            if before < index - 1 and before >= 2 and text[before - 2:before + 1] == "def" and (
                    before < 3 or not _is_word_char(text[before - 3])):
                return True
        index = text.find("construct", index + 1)
    return False


def _mentions(text: str, words: Sequence[str], def_construct: bool) -> bool:
    return any(_has_word(text, word) for word in words) or (def_construct and _has_def_construct(text))


_FSTRING_PATTERNS: Dict[Tuple[str, ...], Pattern[str]] = {}


def _fstring_with_word(raw: str, words: Sequence[str]) -> bool:
    """An f-string opening followed on its logical line by one of ``words`` (backslash-newline continues it)."""
    key = tuple(words)
    pattern = _FSTRING_PATTERNS.get(key)
    if pattern is None:
        alternatives = r"\b(?:" + "|".join(re.escape(w) for w in key) + r")\b"
        pattern = _FSTRING_PATTERNS[key] = re.compile(
            _FSTRING_PREFIX + r"""['"](?:[^\r\n\\]|\\(?:\r\n|.))*?""" + alternatives, re.DOTALL)
    return pattern.search(raw) is not None


def can_hold_graph_code(text: str) -> bool:
    """False only when no function in ``text`` can be a graph root (so no graph-function rule can fire)."""
    return Text(text).has_code_words(_JIT_WORDS, def_construct=True)


# What a file must contain for a rule to fire (``Rule.requires_text``): GRAPH_CODE (graph code, tested with
# ``can_hold_graph_code``), CodeWords (identifiers in the code), a tuple of strings (any one of them in the raw
# text, strings and comments included), or ANY (no test: parse the file).
GRAPH_CODE = "graph code"
ANY = "any file"
Requirement = object
_REQUIREMENTS: Dict[type, Requirement] = {}


def requirement(rule_class: type) -> Requirement:
    """What a file must contain for ``rule_class`` to possibly fire (cached per class).

    Undeclared: GRAPH_CODE for a rule with only ``visit_``/``leave_`` hooks (the engine calls them inside graph
    functions only), ANY for a rule that overrides ``check_module`` (it may look at any code)."""
    found = _REQUIREMENTS.get(rule_class)
    if found is None:
        declared = getattr(rule_class, "requires_text", None)
        if declared == GRAPH_CODE:
            found = GRAPH_CODE
        elif isinstance(declared, str):
            found = (declared,)
        elif isinstance(declared, CodeWords) and declared:
            found = declared
        elif declared:
            found = tuple(declared)
        elif _overrides_check_module(rule_class):
            found = ANY
        else:
            found = GRAPH_CODE
        _REQUIREMENTS[rule_class] = found
    return found


def _overrides_check_module(rule_class: type) -> bool:
    for klass in rule_class.__mro__:
        if "check_module" in vars(klass):
            # the base class's no-op is the one defined in ms_lint.rules.base
            return klass.__module__ != "ms_lint.rules.base"
    return False


def may_fire(text: str, rule_classes: Sequence[type]) -> bool:
    """Could any of ``rule_classes`` report something in a file with this text? (False means: skip parsing.)

    The ``mindspore`` test (files that never mention MindSpore are never analyzed) is the caller's."""
    source = Text(text)
    graph: Optional[bool] = None
    for rule_class in rule_classes:
        needed = requirement(rule_class)
        if needed is ANY:
            return True
        if needed is GRAPH_CODE:
            if graph is None:
                graph = source.has_code_words(_JIT_WORDS, def_construct=True)
            if graph:
                return True
        elif isinstance(needed, CodeWords):
            if source.has_code_words(needed):
                return True
        elif any(token in text for token in needed):  # type: ignore[union-attr]
            return True
    return False
