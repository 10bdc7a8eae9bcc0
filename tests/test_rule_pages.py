"""Rule pages (rules/<CODE>.md): one per rule, examples identical to the rule class's, shipped in the wheel.

Whether the examples behave as the page says (flagged / not flagged / fixed into the shown code) is tested by
tests/test_rule_examples.py on the class's VALID/INVALID; here the page's tagged blocks must be exactly those.
"""
import os
import re
import subprocess
import sys
import textwrap
import zipfile

import pytest

from ms_lint import pages
from ms_lint.codes import CODES, UNANALYZABLE
from ms_lint.rules import Invalid, Rule, all_rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES_DIR = os.path.join(ROOT, "rules")


def _rule_ids():
    return [pytest.param(rule, id=rule.code) for rule in all_rules()]


def test_pages_are_read_from_the_checkout():
    assert os.path.samefile(pages.pages_dir(), RULES_DIR)


@pytest.mark.parametrize("rule", _rule_ids())
def test_registered_rule_has_a_page_matching_its_class(rule):
    text = pages.load_page(rule.code)
    problems = pages.page_problems(text, rule.code, rule.name, rule.fix_applicability, rule.VALID, rule.INVALID)
    assert problems == [], f"rules/{rule.code}.md:\n" + "\n".join(problems)


def test_msl900_has_a_page_without_examples():
    text = pages.load_page(UNANALYZABLE)
    assert pages.page_problems(text, UNANALYZABLE, CODES[UNANALYZABLE], None, [], []) == []
    assert [b for b in pages.code_blocks(text) if b.tag] == []


def test_every_page_is_for_a_known_code():
    names = [n for n in os.listdir(RULES_DIR) if n.endswith(".md") and n != "README.md"]
    assert names, "no rule pages at all"
    for name in names:
        assert name[:-3] in CODES, f"rules/{name} is not a page for a known code ({', '.join(CODES)})"


def test_load_page_is_case_insensitive_and_rejects_unknown_codes():
    assert pages.load_page("msl900") == pages.load_page("MSL900")
    for bad in ("MSL999", "../README", "README", ""):
        with pytest.raises(pages.PageNotFound):
            pages.load_page(bad)


# -- the checker itself catches drift (so the parametrized test above can fail) --------------------------------
class _Demo(Rule):
    code = "MSL101"
    name = "loop-over-tensor-axis"
    fix_applicability = "safe"
    VALID = ["""
        import mindspore as ms
        x = 1
        """]
    INVALID = [
        Invalid("""
            import mindspore as ms
            y = 2
            """, fixed="""
            import mindspore as ms
            y = 3
            """),
        Invalid("z = 4\n"),
    ]


def _fence(tag, code):
    return f"```python {tag}\n{textwrap.dedent(code).strip()}\n```\n"


def _demo_page(invalid0="y = 2", fixed0="y = 3", valid0="x = 1", fix="safe", order=None):
    sections = {
        "What it does": "Flags things.\n",
        "Why is this bad?": "Slow: 61x at N=200 (MindSpore 2.10).\n",
        "Example": _fence("invalid", f"import mindspore as ms\n{invalid0}"),
        "Use instead": _fence("fixed", f"import mindspore as ms\n{fixed0}"),
        "Not flagged": _fence("valid", f"import mindspore as ms\n{valid0}"),
        "Fix safety": "Safe. Flagged without a fix:\n\n" + _fence("invalid", "z = 4"),
    }
    names = order or list(sections)
    body = "\n".join(f"## {name}\n{sections[name]}" for name in names)
    return f"# MSL101: loop-over-tensor-axis\n**Fix:** {fix} — always.\n\n{body}"


def _problems(text):
    return pages.page_problems(text, _Demo.code, _Demo.name, _Demo.fix_applicability, _Demo.VALID, _Demo.INVALID)


def test_checker_accepts_a_matching_page():
    assert _problems(_demo_page()) == []


@pytest.mark.parametrize("page, expected", [
    (_demo_page(invalid0="y = 22"), "invalid/fixed block #1 differs"),
    (_demo_page(fixed0="y = 33"), "invalid/fixed block #2 differs"),
    (_demo_page(valid0="x = 11"), "valid block #1 differs"),
    (_demo_page(fix="unsafe"), "fix applicability 'safe'"),
    (_demo_page().replace("# MSL101: loop-over-tensor-axis", "# MSL101: loop"), "first heading"),
    (_demo_page(order=["What it does", "Why is this bad?", "Not flagged", "Example", "Use instead", "Fix safety"]),
     "out of order"),
    (_demo_page().replace("```python valid", "```python vaild"), "unknown block tag"),
    (_demo_page().replace("## Use instead\n", "## Use instead\n" + _fence("fixed", "extra = 1")),
     "4 invalid/fixed blocks on the page, the class has 3"),
    (_demo_page(order=["What it does", "Why is this bad?", "Example", "Not flagged", "Fix safety"]),
     "missing section '## Use instead'"),
])
def test_checker_reports_drift(page, expected):
    problems = _problems(page)
    assert any(expected in p for p in problems), problems


# -- packaging: the pages are in the wheel, and an installed (non-editable) copy reads them --------------------
def _listed_packages():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        text = handle.read()
    block = re.search(r"^packages = \[(.*?)\]", text, re.MULTILINE | re.DOTALL)
    assert block, "pyproject.toml: [tool.setuptools] packages list not found"
    return set(re.findall(r'"([\w.]+)"', block.group(1)))


def test_every_subpackage_is_listed_in_pyproject():
    """Packages are listed explicitly (for the rule pages' package-dir); a new one left out would not install."""
    found = set()
    for folder, dirs, files in os.walk(os.path.join(ROOT, "ms_lint")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if any(f.endswith(".py") for f in files):
            found.add(os.path.relpath(folder, ROOT).replace(os.sep, "."))
    listed = _listed_packages()
    assert found - listed == set(), f"add to [tool.setuptools] packages in pyproject.toml: {sorted(found - listed)}"
    assert "ms_lint.rule_pages" in listed


def _builds_here() -> bool:
    """Does this environment have a setuptools that pyproject.toml's ``[build-system] requires`` accepts?"""
    try:
        import setuptools
    except ImportError:
        return False
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        wanted = re.search(r'requires = \["setuptools>=(\d+)"\]', handle.read())
    have = re.match(r"\d+", setuptools.__version__)
    return wanted is not None and have is not None and int(have.group()) >= int(wanted.group(1))


def test_build_requirement_is_read(monkeypatch):
    """``_builds_here`` reads the requirement: a setuptools older than it is not used without isolation."""
    import setuptools

    monkeypatch.setattr(setuptools, "__version__", "65.5.0")
    assert not _builds_here()
    monkeypatch.setattr(setuptools, "__version__", "999.0")
    assert _builds_here()


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A wheel built from a copy of the checkout, installed with --target (no editable finder involved)."""
    import shutil

    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "build", "dist", ".ms_lint_cache",
                                    "fixtures", "tests", "*.pyc", ".venv", ".realcode", "rank_0")
    shutil.copytree(ROOT, src, ignore=ignore)
    if not (src / "README.md").exists():
        (src / "README.md").write_text("ms-lint\n")
    # Offline and faster with the test environment's setuptools, when it is one pyproject.toml's build accepts
    # (pip does not check that under --no-build-isolation: a fresh venv's setuptools 65 rejects the SPDX license)
    no_isolation = ["--no-build-isolation"] if _builds_here() else []
    dist = base / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *no_isolation, "-w", str(dist),
                    str(src)], check=True, capture_output=True, text=True, timeout=300)
    wheel = next(dist.glob("ms_lint-*.whl"))
    target = base / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, text=True, timeout=300)
    return wheel, target


def test_wheel_carries_every_page(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"ms_lint/rule_pages/{name}" for name in os.listdir(RULES_DIR) if name.endswith(".md")}
    assert expected <= names, sorted(expected - names)
    assert "ms_lint/rule_pages/MSL900.md" in names


def test_installed_copy_prints_pages(installed, tmp_path):
    _, target = installed
    env = dict(os.environ, PYTHONPATH=str(target))
    codes = [rule.code for rule in all_rules()] + [UNANALYZABLE]
    script = ("import sys, ms_lint, ms_lint.pages as p; print(ms_lint.__file__); print(p.pages_dir()); "
              "from ms_lint.cli import main; sys.exit(max(main(['rule', c]) for c in sys.argv[1:]))")
    out = subprocess.run([sys.executable, "-c", script, *codes], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(str(target)), "the installed copy was not the one imported"
    assert lines[1] == os.path.join(str(target), "ms_lint", "rule_pages")
    for code in codes:
        assert f"# {code}: " in out.stdout
