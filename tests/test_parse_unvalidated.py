"""``cstutil.parse_module``: libcst's parse without per-node validation gives the same trees, raises the same
errors, and leaves validation on for the nodes built afterwards (the rewrites' nodes)."""
from pathlib import Path

import libcst as cst
import pytest

from ms_lint.cstutil import parse_module
from corpus_support import fixture_sources

ROOT = Path(__file__).resolve().parent.parent
SOURCES = fixture_sources()


def test_same_trees_as_libcsts_parse_on_every_fixture():
    assert len(SOURCES) > 50
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        try:
            expected = cst.parse_module(text)
        except cst.ParserSyntaxError:
            with pytest.raises(cst.ParserSyntaxError):
                parse_module(text)
            continue
        tree = parse_module(text)
        assert tree.deep_equals(expected), path
        assert tree.code == text


def test_syntax_errors_still_raise():
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n    pass\n")


def test_validation_is_back_after_the_parse_and_after_a_failed_one():
    parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("(\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
