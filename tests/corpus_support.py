"""The code the soundness tests of the pre-parse filters run on: every fixture file and every rule example."""
import pathlib
import shutil
import textwrap

from ms_lint.rules import all_rules

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def fixture_sources(root: pathlib.Path = FIXTURES):
    """Every Python file under ``root``, sorted, but for the copies the verifier writes next to a module while a
    test verifies it in place (``ms_lint.verifier.location.COPY_PREFIX``): tests that walk fixtures/ while the
    MindSpore tests run on another worker would find one, and lose it before reading it."""
    from ms_lint.verifier.location import COPY_PREFIX

    return sorted(p for p in root.rglob("*.py") if not p.name.startswith(COPY_PREFIX))


def corpus():
    """(name, text) for every fixture file and every rule example: real-looking code with graph code and without."""
    items = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in fixture_sources()]
    for rule in all_rules():
        for index, code in enumerate(rule.VALID):
            items.append((f"{rule.code}-valid-{index}", textwrap.dedent(code)))
        for index, example in enumerate(rule.INVALID):
            items.append((f"{rule.code}-invalid-{index}", textwrap.dedent(example.code)))
    return items


def corpus_project(base: pathlib.Path, items):
    """(name, path) for each corpus item laid out as a file of one project under ``base``: the fixtures copied
    with their packages (so a fixture's sibling modules are indexed), each rule example in a folder of its own,
    and an empty pyproject.toml (default settings)."""
    shutil.copytree(FIXTURES, base / "fixtures")
    (base / "pyproject.toml").write_text("")
    paths = []
    for name, text in items:
        if name.startswith("fixtures"):
            path = base / name
        else:
            folder = base / "examples" / name
            folder.mkdir(parents=True)
            path = folder / "example.py"
            path.write_text(text, encoding="utf-8")
        paths.append((name, path))
    return paths
