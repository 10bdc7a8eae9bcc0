"""Which files can hold a finding, decided from their text alone, before any parsing.

Parsing with libcst is the cost of a run (about 15k lines/s per core, plus building the scope), and most files
that mention ``mindspore`` cannot hold graph code: on MindSpore's own source, 1,300 files mention it and 112 pass
this filter. This module answers "could any enabled rule fire here?" without parsing.

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
  ``jit`` or ``ms_function``, and at one of these places (``CalledWords``):

  - called: the next character after the word (blanks, line breaks and continuations skipped) is ``(``:
    ``ms.jit(f)``, ``@jit(jit_level="O1")``; ``def jit(`` and ``class jit(`` name a definition and do not count;
  - the last name of a decorator: a line break follows the word (a comment is blanked, so only blanks come
    first) and its line, read backwards over names, dots, blanks and line continuations, starts with ``@``;
  - renamed by an import: the next word is ``as`` (``from mindspore import jit as J``);
  - followed by ``)``: a parenthesized decorator ``@(ms.jit)`` (and, harmlessly, ``partial(ms.jit)``).

  Anywhere else (``from mindspore import jit``, ``jit.__doc__``, ``jit=False``, ``x = ms.jit``) the word is
  never the callee or decorator ``qualify`` resolves: a file whose only ``jit`` words sit there has no jit root
  (MindSpore's own ``graph/api.py``, which defines ``jit``, is one; ``nn/cell.py`` another).

The same argument holds for any name a rule resolves with ``qualify`` where it is called (``set_context``): such
rules declare ``requires_text = CalledWords(...)``, or ``CalledWith(name, keyword)`` when the rule only looks at
calls with that keyword argument (``set_context(mode=...)``); ``CodeWords(...)`` is the looser "written anywhere
in the code". ``AnyOf`` and ``AllOf`` combine them, following the rule's own conditions.

"The code" means the text outside comments and string literals: the words usually sit in docstring examples
(``>>> @ms.jit``). Comments and strings are removed with one regular expression that follows Python's string
grammar (prefixes, triple quotes, backslash escapes, backslash-newline). An f-string's replacement fields are
code, so the raw text is also searched for the words inside the replacement fields of every f-string (a forward
scan that knows ``{{`` escapes and skips strings nested in a field; a field that never closes runs to the end of
the file, so it keeps the file). When the scan leaves a quote character
behind, the quotes could not be paired (an unterminated string, or a Python 3.12 f-string that nests its own
quote character): the file is kept and the parser decides. Every doubt keeps the file, so the test only ever
errs by parsing a file that turns out to hold nothing.

Rules that override ``check_module`` can look at any code, so they are run on every file that mentions
``mindspore`` unless they declare ``requires_text`` (see :class:`ms_lint.rules.base.Rule`).
"""
from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

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
# An f-string opening: the ``f`` of a prefix (``f``, ``fr``, ``rf``, any case) before its quote. The ``f`` is
# matched first and the letter before it checked by hand (``_valid_prefix``): a pattern that starts with an
# optional letter or a look-behind is tried at every position, about 8x slower on a 12,000-line file.
_FSTRING_OPEN = re.compile(r"[fF][rR]?(?=['\"])")
_TRIPLE_QUOTE = re.compile(r"'''|\"\"\"")
# The words a graph root cannot be written without (see the module docstring).
JIT_WORDS = ("jit", "ms_function")
# ``jit`` or ``ms_function`` followed by ``as``: an import that renames them (over the code, or the raw text)
JIT_ALIAS = re.compile(r"\b(?:jit|ms_function)[\s\\]+as\b")
_BLANKS = " \t\f\r\n\\"


class CodeWords(tuple):
    """``requires_text = CodeWords("set_context", "jit")``: the rule can only fire where one of these identifiers
    is written in the code (outside strings and comments)."""

    def __new__(cls, *words: str) -> "CodeWords":
        return super().__new__(cls, words)


class CalledWords(tuple):
    """``requires_text = CalledWords("set_context")``: the rule can only fire where one of these names is written
    in the code at a place ``qualify`` can resolve as a callee or decorator (called, ending a decorator, or renamed
    by an import; see the module docstring)."""

    def __new__(cls, *words: str) -> "CalledWords":
        return super().__new__(cls, words)


class CalledWith(tuple):
    """``requires_text = CalledWith("set_context", "mode")``: the code calls the name (``CalledWords``) with one of
    the keywords written as ``keyword=`` between its parentheses. A use that is not a direct call (an import
    alias, a decorator) keeps the file: the name may be called elsewhere under another name."""

    def __new__(cls, name: str, *keywords: str) -> "CalledWith":
        return super().__new__(cls, (name, *keywords))


class AnyOf(tuple):
    """One of these requirements holds."""

    def __new__(cls, *requirements: object) -> "AnyOf":
        return super().__new__(cls, requirements)


class AllOf(tuple):
    """Every one of these requirements holds."""

    def __new__(cls, *requirements: object) -> "AllOf":
        return super().__new__(cls, requirements)


class Text:
    """One file's text, with the comment- and string-free code computed once for all the rules that ask."""

    def __init__(self, text: str):
        self.raw = text
        self._code: Optional[str] = None
        self._unpaired = False
        self.graph: Optional[bool] = None  # the graph-code answer, once asked

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
        return self._search(words, def_construct, _has_word)

    def has_called_words(self, words: Sequence[str], def_construct: bool = False) -> bool:
        """One of ``words`` is in the code where it can be a callee or decorator (``CalledWords``), or might be."""
        return self._search(words, def_construct, _has_called_word)

    def has_call_with(self, name: str, keywords: Sequence[str]) -> bool:
        """``name(...)`` with one of ``keywords`` as a keyword argument is in the code, or might be."""
        if not _has_word(self.raw, name):
            return False
        code = self.code()
        if code is None:
            return True
        for start in _word_starts(code, name):
            use = _callee_use(code, start, start + len(name))
            if use is None:
                continue
            if use == _NOT_A_CALL:
                return True  # an alias or a decorator: it may be called anywhere under another name
            arguments = code[use + 1:_field_end(code, use + 1)]
            if any(_is_keyword_argument(arguments, keyword) for keyword in keywords):
                return True
        return _fstring_with_word(self.raw, [name])

    def _search(self, words: Sequence[str], def_construct: bool, found_in_code) -> bool:
        raw = self.raw
        if not _mentions(raw, words, def_construct, _has_word):
            return False
        code = self.code()
        if code is None or _mentions(code, words, def_construct, found_in_code):
            return True
        return _fstring_with_word(raw, words)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"  # what ``\w`` matches in a str pattern


def _word_at(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is a whole word (a word boundary on both sides, as ``\\b`` in a regex)."""
    return not (start > 0 and _is_word_char(text[start - 1])) and not (end < len(text) and _is_word_char(text[end]))


def _word_starts(text: str, word: str) -> Iterator[int]:
    index = text.find(word)
    while index >= 0:
        if _word_at(text, index, index + len(word)):
            yield index
        index = text.find(word, index + 1)


def _has_word(text: str, word: str) -> bool:
    return next(_word_starts(text, word), None) is not None


def _has_called_word(code: str, word: str) -> bool:
    return any(_callee_use(code, start, start + len(word)) is not None for start in _word_starts(code, word))


_NOT_A_CALL = -1


def _callee_use(code: str, start: int, end: int) -> Optional[int]:
    """Where the word at ``code[start:end]`` (comments and strings blanked) can be a callee (see the module
    docstring): the index of its call's ``(``; ``_NOT_A_CALL`` when it ends a decorator, is renamed by an import
    or is followed by ``)``; None anywhere else."""
    after = end
    crossed_line = False
    while after < len(code) and code[after] in _BLANKS:
        crossed_line = crossed_line or code[after] in "\r\n"
        after += 1
    following = code[after] if after < len(code) else ""
    if following == "(":
        return None if _after_keyword(code, start, ("def", "class")) else after
    if following == ")" or (code.startswith("as", after) and _word_at(code, after, after + 2)):
        return _NOT_A_CALL
    if (crossed_line or not following) and _starts_decorator(code, start):
        return _NOT_A_CALL
    return None


def _is_keyword_argument(arguments: str, keyword: str) -> bool:
    """``keyword=`` (not ``keyword ==``) is written in the text between a call's parentheses."""
    for start in _word_starts(arguments, keyword):
        after = start + len(keyword)
        while after < len(arguments) and arguments[after] in _BLANKS:
            after += 1
        if arguments.startswith("=", after) and not arguments.startswith("==", after):
            return True
    return False


def _after_keyword(code: str, start: int, keywords: Tuple[str, ...]) -> bool:
    before = start
    while before > 0 and code[before - 1] in _BLANKS:
        before -= 1
    if before == start:
        return False
    return any(before >= len(keyword) and code.startswith(keyword, before - len(keyword))
               and _word_at(code, before - len(keyword), before) for keyword in keywords)


def _starts_decorator(code: str, start: int) -> bool:
    """Read backwards from ``start`` over names, dots, blanks and backslash-newlines: an ``@`` comes first."""
    index = start - 1
    while index >= 0:
        char = code[index]
        if char == "@":
            return True
        if char in "\r\n":
            previous = index - 1 if not (char == "\n" and index > 0 and code[index - 1] == "\r") else index - 2
            if previous >= 0 and code[previous] == "\\":  # a continued line: keep reading the one before
                index = previous - 1
                continue
            return False
        if not (_is_word_char(char) or char in ". \t\f"):
            return False
        index -= 1
    return False


def _has_def_construct(text: str) -> bool:
    r"""``def``, whitespace or line continuations, then ``construct`` (the regex ``\bdef[\s\\]+construct\b``)."""
    return any(_after_keyword(text, start, ("def",)) for start in _word_starts(text, "construct"))


def _mentions(text: str, words: Sequence[str], def_construct: bool, found=_has_word) -> bool:
    return any(found(text, word) for word in words) or (def_construct and _has_def_construct(text))


def _valid_prefix(raw: str, f_index: int) -> bool:
    """The ``f`` at ``f_index`` begins a string prefix (``f"``, ``rf"``), not the last letter of a name."""
    before = f_index - 1
    if before >= 0 and raw[before] in "rR":
        before -= 1
    return before < 0 or not _is_word_char(raw[before])


def _fstring_with_word(raw: str, words: Sequence[str]) -> bool:
    """One of ``words`` sits in a replacement field of an f-string, the only code inside a string literal."""
    return any(any(_has_word(field, word) for word in words) for field in fstring_fields(raw))


def fstring_fields(raw: str) -> Iterator[str]:
    """The text of every replacement field of every f-string in ``raw`` (see ``_field_spans``)."""
    for match in _FSTRING_OPEN.finditer(raw):
        if _valid_prefix(raw, match.start()):
            for start, end in _field_spans(raw, match.end()):
                yield raw[start:end]


def _field_spans(raw: str, quote_at: int) -> Iterator[Tuple[int, int]]:
    """(start, end) of each replacement field of the f-string whose quote is at ``quote_at``, up to its closing
    quote. ``{{`` is a literal brace; inside a field, nested strings are skipped whole, so braces in them do not
    end it. A field that never closes runs to the end of the text: a doubt keeps the file."""
    triple = _TRIPLE_QUOTE.match(raw, quote_at)
    closing = triple.group() if triple else raw[quote_at]
    index = quote_at + len(closing)
    size = len(raw)
    while index < size:
        char = raw[index]
        if char == "\\":
            # A backslash keeps the next quote or line break from ending the string (raw or not), but a brace
            # after it still opens or closes a field (``f"\\{x}"``).
            index += 1 if raw.startswith(("{", "}"), index + 1) else 2
        elif raw.startswith(closing, index) or (not triple and char in "\r\n"):
            return
        elif raw.startswith("{{", index):
            index += 2
        elif char == "{":
            end = _field_end(raw, index + 1)
            yield index, end
            index = end + 1
        else:
            index += 1


def _field_end(raw: str, index: int) -> int:
    """Index of the ``}`` that closes the field whose text starts at ``index`` (len(raw) if none)."""
    depth = 1
    size = len(raw)
    while index < size:
        char = raw[index]
        if char in "'\"":
            index = _string_end(raw, index)
            continue
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return size


def _string_end(raw: str, quote_at: int) -> int:
    """Index just after the string literal whose quote is at ``quote_at`` (backslashes escape)."""
    triple = _TRIPLE_QUOTE.match(raw, quote_at)
    closing = triple.group() if triple else raw[quote_at]
    index = quote_at + len(closing)
    while index < len(raw):
        if raw[index] == "\\":
            index += 2
        elif raw.startswith(closing, index):
            return index + len(closing)
        else:
            index += 1
    return len(raw)


def can_hold_graph_code(text: str) -> bool:
    """False only when no function in ``text`` can be a graph root (so no graph-function rule can fire)."""
    return _holds_graph_code(Text(text))


def _holds_graph_code(source: Text) -> bool:
    if source.graph is None:
        source.graph = source.has_called_words(JIT_WORDS, def_construct=True)
    return source.graph


# What a file must contain for a rule to fire (``Rule.requires_text``): GRAPH_CODE (graph code, tested with
# ``can_hold_graph_code``), CodeWords (identifiers in the code), CalledWords (names called or decorating in the
# code), CalledWith (a call with a keyword argument), a tuple of strings (any one of them in the raw text, strings
# and comments included), AnyOf / AllOf of those, or ANY (no test: parse the file).
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
        elif isinstance(declared, (CodeWords, CalledWords, CalledWith, AnyOf, AllOf)) and declared:
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


def satisfied(needed: Requirement, source: Text) -> bool:
    """Does the file's text meet the requirement (see ``requirement``)?"""
    if needed is ANY:
        return True
    if needed is GRAPH_CODE:
        return _holds_graph_code(source)
    if isinstance(needed, CodeWords):
        return source.has_code_words(needed)
    if isinstance(needed, CalledWords):
        return source.has_called_words(needed)
    if isinstance(needed, CalledWith):
        return source.has_call_with(needed[0], needed[1:])
    if isinstance(needed, AnyOf):
        return any(satisfied(part, source) for part in needed)
    if isinstance(needed, AllOf):
        return all(satisfied(part, source) for part in needed)
    return any(token in source.raw for token in needed)  # type: ignore[union-attr]


def rules_that_may_fire(text: str, rule_classes: Sequence[type], graph_from_project: bool = False) -> List[type]:
    """The rules of ``rule_classes`` that could report something in a file with this text, in their order.

    The engine skips parsing when none can, and runs only these on a parsed file: the soundness argument above
    is per rule, so a rule left out here cannot have fired (a file with graph code but no compile-cache keyword
    never runs MSL303's module-wide scan). The ``mindspore`` test is the caller's. ``graph_from_project``: the
    project index found graph code in this file that its text alone does not show (a base-class method a
    subclass's ``construct`` in another module calls)."""
    source = Text(text)
    if graph_from_project:
        source.graph = True
    return [rule_class for rule_class in rule_classes if satisfied(requirement(rule_class), source)]


def may_fire(text: str, rule_classes: Sequence[type]) -> bool:
    """Could any of ``rule_classes`` report something in a file with this text? (False means: skip parsing.)"""
    return bool(rules_that_may_fire(text, rule_classes))
