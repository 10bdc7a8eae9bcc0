"""The pre-commit hooks in .pre-commit-hooks.yaml, run by real pre-commit against a temporary git repository.

The hook repository is a snapshot of this checkout (its files as git sees them, committed into a temporary
repository), so the test runs the working tree's hooks and code, committed or not. pre-commit installs it into
its own virtualenv (``pip install .``), as it does for users; the first run of the module takes a while.
"""
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from ms_lint.rules import all_rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP_DIRS = ("fixtures/", "tests/", ".git/")
GIT = ["git", "-c", "user.name=ms-lint tests", "-c", "user.email=tests@ms-lint.invalid",
       "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]


def _git(*args, cwd):
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True)


def _checkout_files():
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: everything but the usual clutter
        out = []
        for folder, dirs, files in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", ".git", "build", "dist", ".ms_lint_cache")
                       and not d.endswith(".egg-info")]
            out += [os.path.relpath(os.path.join(folder, f), ROOT).replace(os.sep, "/") for f in files]
    return [p for p in out if not p.startswith(SKIP_DIRS) and os.path.isfile(os.path.join(ROOT, p))]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """(snapshot repository path, its commit, PRE_COMMIT_HOME shared by the tests of this module)."""
    base = tmp_path_factory.mktemp("precommit")
    repo = base / "ms-lint"
    for rel in _checkout_files():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), target)
    assert (repo / ".pre-commit-hooks.yaml").is_file()
    if not (repo / "README.md").exists():
        (repo / "README.md").write_text("ms-lint\n")
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-q", "-m", "snapshot", cwd=repo)
    rev = _git("rev-parse", "HEAD", cwd=repo).stdout.strip()
    return repo, rev, base / "pre-commit-home"


def _target(tmp_path, files):
    """A git repository holding ``files`` (name -> text), all staged."""
    project = tmp_path / "project"
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _git("init", "-q", cwd=project)
    _git("add", "-A", cwd=project)
    return project


def _pre_commit(*args, cwd, home):
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", NO_COLOR="1")
    env.pop("PRE_COMMIT", None)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", *args, "--color", "never"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    return proc.returncode, proc.stdout + proc.stderr


def _example(predicate):
    for rule in all_rules():
        for example in rule.INVALID:
            if predicate(example):
                return [pytest.param(rule, example, id=rule.code)]
    return []


PYPROJECT = '[tool.ms-lint]\nextend-exclude = ["generated"]\n'


def _safe_example():
    for rule in all_rules():
        for example in rule.INVALID:
            if example.fixed is not None and not example.unsafe:
                return example
    raise AssertionError("no registered rule has a safe fix example")


def test_try_repo_check_hook_names_findings_and_fix_hook_rewrites(tmp_path, hook_repo):
    """One ``try-repo`` run of both hooks (each try-repo installs the hook repository afresh, which is slow).

    The manifest lists ``ms-lint`` first, so it reports on the original files; ``ms-lint-fix`` then rewrites.
    """
    repo, rev, _ = hook_repo
    example = _safe_example()
    code = textwrap.dedent(example.code)
    files = {"pyproject.toml": PYPROJECT, "src/model.py": code, "generated/model.py": code}
    for rule in all_rules():
        files[f"src/{rule.code.lower()}_example.py"] = textwrap.dedent(rule.INVALID[0].code)
    project = _target(tmp_path, files)
    status, out = _pre_commit("try-repo", str(repo), "--ref", rev, "--all-files", cwd=project,
                              home=tmp_path / "unused-home")
    assert status == 1, out
    check, fix = out.split("- hook id: ms-lint-fix")[0], out.split("- hook id: ms-lint-fix")[1]
    assert re.search(r"^ms-lint\.+Failed$", check, re.MULTILINE), out
    for rule in all_rules():
        assert re.search(rf"^src/{rule.code.lower()}_example\.py:\d+:\d+: {rule.code} ", check, re.MULTILINE), out
    assert "src/model.py:" in check
    assert "generated/" not in out, out  # excluded by [tool.ms-lint] although pre-commit names the file
    assert re.search(r"^ms-lint \(apply safe fixes\)\.+Failed$", out, re.MULTILINE), out
    assert "files were modified by this hook" in fix, out
    assert (project / "src" / "model.py").read_text(encoding="utf-8") == textwrap.dedent(example.fixed)
    assert (project / "generated" / "model.py").read_text(encoding="utf-8") == code  # excluded: untouched


@pytest.mark.parametrize("rule, example", _example(lambda e: e.fixed is not None and e.unsafe))
def test_config_snippet_fix_with_unsafe_fixes_then_check_passes(tmp_path, hook_repo, rule, example):
    """The README's .pre-commit-config.yaml, with ``args: [--unsafe-fixes]`` on the fix hook."""
    repo, rev, home = hook_repo
    config = textwrap.dedent(f"""\
        repos:
          - repo: {repo}
            rev: {rev}
            hooks:
              - id: ms-lint-fix
                args: [--unsafe-fixes]
              - id: ms-lint
        """)
    code = textwrap.dedent(example.code)
    project = _target(tmp_path, {"pyproject.toml": PYPROJECT, ".pre-commit-config.yaml": config, "model.py": code})
    status, out = _pre_commit("run", "--all-files", cwd=project, home=home)
    assert status == 1, out  # the fix hook changed a file
    assert "files were modified by this hook" in out, out
    assert (project / "model.py").read_text(encoding="utf-8") == textwrap.dedent(example.fixed)
    _git("add", "-A", cwd=project)
    status, out = _pre_commit("run", "--all-files", cwd=project, home=home)
    assert status == 0, out  # fixed: nothing left for either hook
    assert re.search(r"^ms-lint\.+Passed$", out, re.MULTILINE), out


def test_manifest_is_valid():
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", ".pre-commit-hooks.yaml"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
