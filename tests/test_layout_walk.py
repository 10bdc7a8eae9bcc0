"""The warm run's path bookkeeping (``ms_lint.analysis.layout``): the shared folder listings walk as ``os.walk``
does, and the fast path helpers answer as the ``os.path`` functions they replace."""
import os

import pytest

from ms_lint.analysis.layout import Listings, absolute_paths, joiner, project_files
from ms_lint.config import Config, ConfigSet
from ms_lint.discovery import discover_all


@pytest.fixture
def tree(tmp_path):
    """Packages, scripts, hidden and skipped folders, a symlinked folder and a symlinked file, a broken link."""
    for folder in ("pkg/sub/deep", "pkg/.hidden", "pkg/__pycache__", "pkg/build", "other", "empty"):
        (tmp_path / folder).mkdir(parents=True)
    for path in ("pkg/__init__.py", "pkg/a.py", "pkg/b.pyi", "pkg/notes.txt", "pkg/sub/__init__.py",
                 "pkg/sub/c.py", "pkg/sub/deep/d.py", "pkg/.hidden/h.py", "pkg/__pycache__/x.py",
                 "pkg/build/gen.py", "other/e.py", "train.py"):
        (tmp_path / path).write_text("x = 1\n")
    os.symlink(tmp_path / "other", tmp_path / "pkg" / "linked_dir")
    os.symlink(tmp_path / "other" / "e.py", tmp_path / "pkg" / "linked_file.py")
    os.symlink(tmp_path / "missing", tmp_path / "pkg" / "broken.py")
    return tmp_path


def _os_walk(top, prune=None):
    errors = []
    out = []
    for folder, dirs, names in os.walk(top, followlinks=False, onerror=errors.append):
        if prune is not None:
            dirs[:] = sorted(d for d in dirs if prune(d))
        out.append((folder, sorted(dirs), sorted(names)))
    return out, [(type(e), e.filename) for e in errors]


def _listings_walk(listings, top, prune=None):
    errors = []
    out = []
    for folder, dirs, names in listings.walk(top, onerror=errors.append):
        if prune is not None:
            dirs[:] = sorted(d for d in dirs if prune(d))
        out.append((folder, sorted(dirs), sorted(names)))
    return out, [(type(e), e.filename) for e in errors]


@pytest.mark.parametrize("prune", [None, lambda d: not d.startswith((".", "_")), lambda d: d != "sub"])
@pytest.mark.parametrize("top", ["{root}", "{root}/pkg", "{root}/pkg/", "{root}/missing", "{root}/train.py"])
def test_listings_walk_as_os_walk_does(tree, monkeypatch, top, prune):
    top = top.format(root=tree)
    listings = Listings()
    expected = _os_walk(top, prune)
    assert _listings_walk(listings, top, prune) == expected
    assert _listings_walk(listings, top, prune) == expected  # read from the listings kept the first time


def test_listings_walk_relative_tops_keep_the_spelling_given(tree, monkeypatch):
    monkeypatch.chdir(tree)
    for top in (".", "pkg", "./pkg/../pkg", "pkg/sub/"):
        assert _listings_walk(Listings(), top) == _os_walk(top)


def test_a_pruned_listing_is_not_pruned_for_the_next_walk(tree):
    listings = Listings()
    _listings_walk(listings, str(tree), prune=lambda d: False)
    assert _listings_walk(listings, str(tree)) == _os_walk(str(tree))


def test_absolute_paths_and_joiner_answer_as_os_path(tree, monkeypatch):
    monkeypatch.chdir(tree / "pkg")
    paths = ["a.py", "./a.py", "sub/../a.py", "../train.py", str(tree / "pkg" / "a.py"), "//x//y/", ".", "",
             "sub//c.py", str(tree) + "/pkg/./sub/"]
    assert absolute_paths(paths) == [os.path.abspath(p) for p in paths]
    for folder in ("", ".", "./", "a", "a/", "/", "/x/y", "a//"):
        for name in ("b", ".b", "c.py"):
            assert joiner(folder)(name) == os.path.join(folder, name)


def test_project_files_with_the_discovery_listings_equal_a_fresh_walk(tree, monkeypatch):
    monkeypatch.chdir(tree)
    found = discover_all(["."], ConfigSet(fixed=Config(root=str(tree))))
    # files of a folder first, then its sub-folders in name order (os.walk's order); symlinked folders not entered
    assert found.files == ["./train.py", "./other/e.py", "./pkg/__init__.py", "./pkg/a.py", "./pkg/b.pyi",
                           "./pkg/broken.py", "./pkg/linked_file.py", "./pkg/.hidden/h.py", "./pkg/sub/__init__.py",
                           "./pkg/sub/c.py", "./pkg/sub/deep/d.py"]
    shared = project_files(found.files, listings=found.listings)
    assert shared == project_files(found.files)
    paths, roots = shared
    # the checked files, then the packages' other modules: not those under build/ or __pycache__/, nor .pyi
    assert sorted(paths) == sorted(str(tree / p) for p in (
        "train.py", "other/e.py", "pkg/__init__.py", "pkg/a.py", "pkg/b.pyi", "pkg/broken.py", "pkg/linked_file.py",
        "pkg/.hidden/h.py", "pkg/sub/__init__.py", "pkg/sub/c.py", "pkg/sub/deep/d.py"))
    walked_alone = project_files([str(tree / "pkg" / "a.py")], listings=found.listings)
    assert walked_alone == project_files([str(tree / "pkg" / "a.py")])
    assert sorted(walked_alone[0]) == sorted(str(tree / p) for p in (
        "pkg/__init__.py", "pkg/a.py", "pkg/broken.py", "pkg/linked_file.py", "pkg/sub/__init__.py", "pkg/sub/c.py",
        "pkg/sub/deep/d.py", "train.py"))
    # where imports start: the folder above the package, and the folder of each file in no package, in file order
    assert roots == [str(tree), str(tree / "other"), str(tree / "pkg" / ".hidden"), str(tree / "pkg" / "sub" / "deep")]


@pytest.mark.parametrize("exclude", [[], ["sub", "*.pyi"], ["pkg/sub"], ["pkg/sub/*", "a.py"], ["*"]])
def test_excluded_in_answers_as_is_excluded(tree, exclude):
    config = Config(root=str(tree), exclude=exclude)
    for folder, dirs, names in os.walk(tree):
        excluded = config.excluded_in(folder)
        for name in dirs + names:
            assert excluded(name) == config.is_excluded(os.path.join(folder, name)), (folder, name)


def test_a_top_through_a_symlink_and_dotdot_is_listed_where_the_system_resolves_it(tmp_path, monkeypatch):
    """``link/..`` is the parent of the folder ``link`` points to, not the folder holding ``link``."""
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "r.py").write_text("x = 1\n")
    (tmp_path / "here.py").write_text("y = 2\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "real" / "other").mkdir()
    (tmp_path / "real" / "other" / "o.py").write_text("z = 3\n")
    os.symlink(tmp_path / "real" / "sub", tmp_path / "link")
    monkeypatch.chdir(tmp_path)
    listings = Listings()
    for top in ("link/..", "link/../other", str(tmp_path / "link" / "..")):
        assert _listings_walk(listings, top) == _os_walk(top)
    assert discover_all(["link/.."], ConfigSet()).files == ["link/../r.py", "link/../other/o.py"]
    assert discover_all(["link/../other"], ConfigSet()).files == ["link/../other/o.py"]
    # the folder holding ``link`` is listed under its own name in the same run, and stays itself
    found = discover_all(["link/..", "."], ConfigSet())
    assert found.files[:2] == ["link/../r.py", "link/../other/o.py"] and "./here.py" in found.files


def test_an_unreadable_folder_is_named_as_the_walk_spells_it_the_second_time_too(tree, monkeypatch):
    monkeypatch.chdir(tree)
    real_scandir = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "deep":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    listings = Listings()
    for _ in range(2):  # the second walk reads the error kept from the first
        walked = _listings_walk(listings, "pkg")
        assert walked == _os_walk("pkg")
        assert walked[1] == [(PermissionError, os.path.join("pkg", "sub", "deep"))]
    found = discover_all(["pkg"], ConfigSet())
    assert found.unreadable == [(os.path.join("pkg", "sub", "deep"), "cannot read folder: Permission denied")]


def test_absolute_paths_need_no_current_folder_when_every_path_is_absolute(tree, monkeypatch):
    gone = tree / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # an editor's server can outlive the folder it started in
    paths = [str(tree / "pkg" / "a.py"), tree / "pkg" / "sub" / ".." / "a.py"]  # a PathLike too, as abspath took
    assert absolute_paths(paths) == [str(tree / "pkg" / "a.py")] * 2
    assert project_files([str(tree / "pkg" / "a.py")])[1] == [str(tree)]


def test_a_namespace_folder_below_a_package_on_the_path_is_located_without_importing(tmp_path, monkeypatch):
    """``pkg/sub/model.py`` with ``pkg/__init__.py`` but no ``pkg/sub/__init__.py``, ``pkg`` importable from
    ``sys.path`` (``python -m ms_lint`` in that folder) and not imported: ``PathFinder`` looks the parent up in
    ``sys.modules`` for a namespace portion and raised ``KeyError`` out of ``ms-lint check``."""
    import sys

    from ms_lint.analysis.layout import ModuleLocator

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "sub" / "model.py").write_text("def per_row(x):\n    return x\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "pkg", raising=False)
    locator = ModuleLocator([str(tmp_path / "elsewhere")])
    assert locator.installed("pkg.sub.model") == str(tmp_path / "pkg" / "sub" / "model.py")
    assert locator.installed("pkg.sub.other") is None
    assert locator.installed("pkg.sub") is None  # a folder, no file
    assert "pkg" not in sys.modules
