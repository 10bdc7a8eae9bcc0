"""The pre-filter on real code: on MindSpore 2.10's own source, every file it skips although it writes a word a
rule resolves (``jit``, ``ms_function``, ``set_context``) in its code has no finding when every rule is run on it.

These are the files where the filter's finer tests (``CalledWords``, ``CalledWith``, f-string fields) decide, so
they are where a wrong argument would hide a finding: 68 files (177 if ``CalledWords`` never matched, which would
put files with real findings among them). (During development the same was checked on all 1,300
files that mention ``mindspore``: 0 differences.)"""
import importlib.util
import os

import pytest

import ms_lint.engine as engine
from ms_lint.analysis.index import index_for
from ms_lint.analysis.project import ProjectView
from ms_lint.config import Config
from ms_lint.prefilter import Text, rules_that_may_fire
from ms_lint.rules import all_rules
from ms_lint.source import read_source

pytestmark = pytest.mark.mindspore

WORDS = ("jit", "ms_function", "set_context")


def skipped_files_with_rule_words():
    package = os.path.dirname(importlib.util.find_spec("mindspore").origin)
    found = []
    for folder, _, names in sorted(os.walk(package)):
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            source = read_source(path)
            text = source.text
            if "mindspore" not in text:
                continue
            # as the engine decides: graph code the project index finds in the file counts too
            graph_here = bool(ProjectView(index_for(source, Config()), path, Config()).graph_functions())
            if rules_that_may_fire(text, all_rules(), graph_here):
                continue
            if Text(text).has_code_words(WORDS, def_construct=True) or "{" in text and any(
                    word in text for word in WORDS):  # in code, or maybe in an f-string field
                found.append(source)
    return found


def test_files_skipped_on_the_finer_tests_have_no_findings(monkeypatch):
    sources = skipped_files_with_rule_words()
    assert len(sources) >= 50, "MindSpore's source should hold files that only import, define or quote jit"
    monkeypatch.setattr(engine, "rules_that_may_fire", lambda text, rules, *_: list(rules))
    config = Config()
    with_findings = {}
    for source in sources:
        findings = engine.analyze_source(source, config, source.path).findings
        if findings:
            with_findings[source.path] = [f"{f.line}: {f.code} {f.message[:60]}" for f in findings]
    assert with_findings == {}
