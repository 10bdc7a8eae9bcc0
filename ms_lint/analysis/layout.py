"""Where a project's modules live, read from the file system alone: the package holding a file and the folder its
imports start from, every Python file of the checked packages, and their (mtime, size) stamps.

Apart from the project index (``ms_lint.analysis.index``) so that a warm run, which only stats the project's files
to see that nothing changed, imports neither ``ast`` nor the summaries.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from ms_lint.blake import blake2b
from ms_lint.config import VERIFY_COPY_PREFIX

# The standard library's top-level module names (Python 3.9 has no list: the most used ones)
STDLIB_NAMES = frozenset(getattr(sys, "stdlib_module_names", (
    "os", "sys", "re", "math", "json", "time", "typing", "functools", "itertools", "collections", "argparse",
    "pathlib", "logging")))

SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".venv", "venv", ".tox", "build", "dist", "node_modules",
             ".ms_lint_cache", "site-packages"}
# folders of installed packages: their top-level modules are other projects, not a package's entry scripts
INSTALLED_FOLDERS = ("site-packages", "dist-packages")


class Listings:
    """Each folder's entries, read once per run: discovery walks the checked paths and ``project_files`` walks
    their packages, the same tree twice on ``ms-lint check .``; each walk cost a warm run of MindSpore's source
    about 10 ms. ``walk`` is ``os.walk(top, followlinks=False)`` (top-down, the caller may prune the folders
    it yields) over the listings; keys are absolute folders. One object per run: the file system may change
    between runs (the language server lives long), never inside one as far as a check is concerned."""

    def __init__(self) -> None:
        # absolute folder (as spelled under a top with a ``..`` part) -> (sub-folders, other names, the
        # sub-folders that are symbolic links), or the error
        self._known: Dict[str, object] = {}

    def walk(self, top: str, onerror=None, absolute_top: Optional[str] = None
             ) -> Iterator[Tuple[str, List[str], List[str]]]:
        """(folder as joined to ``top``, its sub-folders, its other names) like ``os.walk``; ``absolute_top``:
        ``top`` made absolute, when the caller has it.

        A ``top`` with a ``..`` part is listed as spelled and kept under that spelling: ``link/..`` is the parent
        of the folder ``link`` points to, which the absolute path (``..`` taken away as text) does not name."""
        spelled = ".." in top.replace(os.sep, "/").split("/")
        stack = [(top, top if spelled else (absolute_top or absolute_paths([top])[0]))]
        while stack:
            folder, absolute = stack.pop()
            listing = self._listing(absolute)
            if isinstance(listing, OSError):
                if onerror is not None:  # named as this walk names the folder, as os.walk's error would
                    onerror(OSError(listing.errno, listing.strerror, folder))
                continue
            dirs, names, links = listing  # type: ignore[misc]
            dirs = list(dirs)
            yield folder, dirs, list(names)
            # os.walk goes into the sub-folders in order, depth first: push them reversed
            inside, absolute_inside = joiner(folder), joiner(absolute)
            stack.extend((inside(name), absolute_inside(name)) for name in reversed(dirs) if name not in links)

    def _listing(self, absolute: str) -> object:
        known = self._known.get(absolute)
        if known is None:
            dirs: List[str] = []
            names: List[str] = []
            links: Set[str] = set()
            try:
                with os.scandir(absolute) as entries:
                    for entry in entries:
                        try:
                            is_dir = entry.is_dir()
                        except OSError:
                            is_dir = False
                        if is_dir:
                            dirs.append(entry.name)
                            try:
                                if entry.is_symlink():
                                    links.add(entry.name)
                            except OSError:
                                pass
                        else:
                            names.append(entry.name)
                known = (dirs, names, links)
            except OSError as error:
                known = error
            self._known[absolute] = known
        return known


def joiner(folder: str) -> Callable[[str], str]:
    """``name`` -> ``os.path.join(folder, name)`` for a bare entry name of the folder (no separator, not
    absolute): a string concatenation on POSIX, where ``join`` itself cost a warm run 2 us a call."""
    if os.name != "posix":
        return lambda name: os.path.join(folder, name)
    prefix = folder if not folder or folder.endswith("/") else folder + "/"
    return prefix.__add__


def _walked_into(folder_name: str) -> bool:
    """Does the project walk (``project_files``) descend into a sub-folder of this name?"""
    return folder_name not in SKIP_DIRS and not folder_name.startswith(".")


def is_test_module(path: str) -> bool:
    name = os.path.basename(path)
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or "tests" in parts[:-1] or "test" in parts[:-1])


def package_of(path: str, memo: Optional[Dict[str, Tuple[Optional[str], str]]] = None
               ) -> Tuple[Optional[str], str]:
    """(dotted package holding ``path``, the folder above its top package: where imports start). ``memo``
    (folder -> answer) shares the walk up between the files of one run."""
    return _package_of_folder(os.path.dirname(os.path.abspath(path)), {} if memo is None else memo)


def _package_of_folder(folder: str, memo: Dict[str, Tuple[Optional[str], str]]) -> Tuple[Optional[str], str]:
    walked: List[str] = []
    while folder not in memo and os.path.isfile(os.path.join(folder, "__init__.py")):
        walked.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    package, root = memo.get(folder, (None, folder))
    if folder not in memo and (not walked or walked[-1] != folder):
        memo[folder] = (None, folder)  # the first folder without an __init__.py: a source root
    for inner in reversed(walked):  # from the top package down
        name = os.path.basename(inner)
        package = f"{package}.{name}" if package else name
        memo[inner] = (package, root)
    return memo[walked[0]] if walked else (package, root)


def module_name_of(path: str) -> Tuple[str, Optional[str], str]:
    """(module name, its package, source root) for a file."""
    package, root = package_of(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "__init__":
        return package or stem, package, root
    return (f"{package}.{stem}" if package else stem), package, root


class ModuleLocator:
    """Finds the file of a module by dotted name without importing anything: under a source root of the project
    first, then among the installed packages (``importlib.machinery.PathFinder``, which only lists folders).

    Most names looked up are no module (a class or function tried as one: ``pkg.models.llama.LlamaModel``): the
    folders' listings and the packages' specs are kept, so that siblings cost a set lookup each."""

    def __init__(self, roots: List[str]):
        self.roots = roots
        self._specs: Dict[str, object] = {}  # dotted package prefix -> its spec (None: no such package)
        self._top_roots: Dict[str, List[str]] = {}
        self._listings: Dict[Tuple[str, Tuple[str, ...]], Set[str]] = {}

    def locate(self, name: str) -> Optional[str]:
        found = self.in_roots(name)
        return found if found is not None else self.installed(name)

    def in_roots(self, name: str) -> Optional[str]:
        parts = name.split(".")
        top = parts[0]
        if top not in self._top_roots:  # most names start with a package no root holds
            self._top_roots[top] = [root for root in self.roots
                                    if top in self._listing(root, ()) or top + ".py" in self._listing(root, ())]
        last = parts[-1]
        for root in self._top_roots[top]:
            listing = self._listing(root, tuple(parts[:-1]))
            if not listing:
                continue
            folder = os.path.join(root, *parts[:-1])
            if last + ".py" in listing and os.path.isfile(os.path.join(folder, last + ".py")):
                return os.path.join(folder, last + ".py")
            if last in listing and os.path.isfile(os.path.join(folder, last, "__init__.py")):
                return os.path.join(folder, last, "__init__.py")
        return None

    def under_roots(self, top: str) -> bool:
        """Does a source root hold ``top``, as a folder (a package or not) or as ``top.py``?"""
        return any(top in self._listing(root, ()) or top + ".py" in self._listing(root, ()) for root in self.roots)

    def _listing(self, root: str, folders: Tuple[str, ...]) -> Set[str]:
        """The names in the folder ``root/folders...`` (empty when it is no folder), read once per locator; a
        folder whose parent's listing lacks it is not asked for."""
        key = (root, folders)
        found = self._listings.get(key)
        if found is None:
            found = set()
            if not folders or folders[-1] in self._listing(root, folders[:-1]):
                try:
                    found = set(os.listdir(os.path.join(root, *folders)))
                except (OSError, ValueError):
                    pass
            self._listings[key] = found
        return found

    def installed(self, name: str) -> Optional[str]:
        from importlib.machinery import PathFinder

        parts = name.split(".")
        specs = self._specs
        try:
            if parts[0] not in specs:
                specs[parts[0]] = PathFinder.find_spec(parts[0])
            spec = specs[parts[0]]
            for depth in range(1, len(parts)):
                if spec is None or not spec.submodule_search_locations:  # type: ignore[attr-defined]
                    return None
                dotted = ".".join(parts[: depth + 1])
                if dotted not in specs:
                    within = list(spec.submodule_search_locations)  # type: ignore[attr-defined]
                    try:
                        specs[dotted] = PathFinder.find_spec(dotted, within)
                    except KeyError:  # a namespace package below a package not imported: PathFinder asks
                        specs[dotted] = _namespace_portion(parts[depth], within)  # sys.modules for the parent
                spec = specs[dotted]
        except (ImportError, ValueError, OSError):
            return None
        origin = getattr(spec, "origin", None)
        if spec is None or not origin or not origin.endswith(".py"):
            return None
        return origin


def _namespace_portion(name: str, within: List[str]):
    """The spec ``PathFinder`` would give the namespace package ``name`` (a folder without ``__init__.py``, and no
    module of that name) found in the folders ``within``: its folders of that name, no file. (``PathFinder``
    itself reads the parent package's ``__path__`` from ``sys.modules``, and the parent is never imported here.)"""
    from importlib.machinery import ModuleSpec

    folders = [os.path.join(folder, name) for folder in within if os.path.isdir(os.path.join(folder, name))]
    if not folders:
        return None
    spec = ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = folders
    return spec


def same_locations(located: Dict[str, Optional[str]], roots: List[str]) -> bool:
    """Does every module name of ``located`` (name -> the file found for it then, or None) still locate to the
    same file (``ModuleLocator.locate``, the index's own lookup)? A new file that provides a module an import could
    not find, or shadows an installed one, makes other fingerprints. Every name is looked up again, those below a
    module found nowhere or below a plain module too: an installed namespace package needs no parent module, and
    ``locate`` looks below the source roots' ``foo.py`` among the installed packages all the same. The top
    packages' specs are shared between the names, so a name below a missing top costs one dictionary lookup."""
    locator = ModuleLocator(roots)
    return all(locator.locate(name) == was for name, was in located.items())


def module_names(paths: Iterable[str]) -> Dict[str, str]:
    """``module_name_of``'s name for each path (absolute paths as given), the walks up shared."""
    memo: Dict[str, Tuple[Optional[str], str]] = {}
    names: Dict[str, str] = {}
    for path in paths:
        package, _ = _package_of_folder(os.path.dirname(os.path.abspath(path)), memo)
        stem = os.path.splitext(os.path.basename(path))[0]
        names[path] = (package or stem) if stem == "__init__" else (f"{package}.{stem}" if package else stem)
    return names


def digest_of(raw: bytes) -> str:
    return blake2b(raw, digest_size=16).hexdigest()


def absolute_paths(paths: Iterable[str]) -> List[str]:
    """``os.path.abspath`` of each path, with the current folder asked for once: ``abspath`` asks the system for
    it on every call, which was a third of a warm run's path bookkeeping on 2,142 files."""
    if os.name != "posix":
        return [os.path.abspath(path) for path in paths]
    cwd: Optional[str] = None  # asked for only when a relative path comes (the folder may be gone: an editor's)
    out: List[str] = []
    join, normpath = os.path.join, os.path.normpath
    for path in map(os.fspath, paths):
        if not path.startswith("/"):
            if cwd is None:
                cwd = os.getcwd()
            path = join(cwd, path)
        out.append(normpath(path))
    return out


def checked_tops(files: Iterable[str]) -> Set[str]:
    """The top package folders ``project_files`` walks for ``files`` (absolute): the top package of each file
    that is in one."""
    return _tops_of(absolute_paths(files), {})


def _tops_of(absolute: Iterable[str], memo: Dict[str, Tuple[Optional[str], str]]) -> Set[str]:
    tops: Set[str] = set()
    folders: Set[str] = set()
    for path in absolute:
        folder = os.path.dirname(path)
        if folder in folders:
            continue
        folders.add(folder)
        package, root = _package_of_folder(folder, memo)
        if package:
            tops.add(os.path.join(root, package.split(".")[0]))
    return tops


def walked(path: str, tops: Set[str]) -> bool:
    """Would ``project_files`` list ``path`` (absolute) when it walks ``tops`` (``checked_tops``): a file under
    one of them in no folder the walk skips (``SKIP_DIRS``, hidden, a symlink it does not follow), or a script
    beside one (not in an installed-packages folder)?"""
    folder = os.path.dirname(path)
    for top in tops:
        if folder == os.path.dirname(top) and os.path.basename(folder) not in INSTALLED_FOLDERS:
            return True
        if folder == top or folder.startswith(top + os.sep):
            inner = os.path.relpath(folder, top)
            parts = [] if inner == "." else inner.split(os.sep)
            return all(_walked_into(part) and not os.path.islink(os.path.join(top, *parts[:depth + 1]))
                       for depth, part in enumerate(parts))
    return False


def project_files(files: Iterable[str], absolute: Optional[List[str]] = None,
                  listings: Optional[Listings] = None) -> Tuple[List[str], List[str]]:
    """(every Python file of the packages that hold ``files``, and the files themselves, as absolute paths, each
    once; the source roots where imports start: the folder above each top package, and the folder of each file
    outside packages). ``absolute``: ``absolute_paths(files)``, when the caller has it; ``listings``: the run's
    folder listings, when discovery read some."""
    files = absolute if absolute is not None else absolute_paths(files)
    memo: Dict[str, Tuple[Optional[str], str]] = {}
    tops = _tops_of(files, memo)
    roots: List[str] = []
    paths: List[str] = []
    seen: Set[str] = set()
    folders: Set[str] = set()
    dirname = os.path.dirname
    for path in files:
        if path in seen:
            continue
        seen.add(path)
        paths.append(path)
        folder = dirname(path)
        if folder in folders:
            continue  # its roots are in already
        folders.add(folder)
        package, root = _package_of_folder(folder, memo)
        if root not in roots:
            roots.append(root)
        if package is None and folder not in roots:
            roots.append(folder)
    listings = listings if listings is not None else Listings()
    for top in sorted(tops):  # absolute and normal: so are the paths joined to it
        for folder, dirs, names in listings.walk(top, absolute_top=top):
            dirs[:] = sorted(d for d in dirs if _walked_into(d))
            join = joiner(folder)
            for name in names:
                if name.endswith(".py") and not name.startswith(VERIFY_COPY_PREFIX):
                    path = join(name)
                    if path not in seen:
                        seen.add(path)
                        paths.append(path)
    for root in sorted({os.path.dirname(top) for top in tops}):
        # The entry scripts next to the package (``train.py`` beside ``src/``): what they construct and call is
        # part of the project. Not in an installed-packages folder, whose top-level modules are other projects.
        if os.path.basename(root) in INSTALLED_FOLDERS:
            continue
        try:
            names = sorted(os.listdir(root))
        except OSError:
            continue
        for name in names:
            path = os.path.join(root, name)
            if name.endswith(".py") and not name.startswith(VERIFY_COPY_PREFIX) and path not in seen \
                    and os.path.isfile(path):
                seen.add(path)
                paths.append(path)
    return paths, roots


def project_stamps(paths: Iterable[str]) -> Dict[str, Tuple[int, int]]:
    """(mtime_ns, size) of each file of the project that can be stat'ed, by absolute path."""
    stamps: Dict[str, Tuple[int, int]] = {}
    for path in sorted({p if os.path.isabs(p) else os.path.abspath(p) for p in paths}):  # ``project_files``'s are
        try:
            st = os.stat(path)
        except OSError:
            continue
        stamps[path] = (st.st_mtime_ns, st.st_size)
    return stamps


def project_state(stamps: Dict[str, Tuple[int, int]], salt: str) -> str:
    """Changes when any file of the project changes (mtime, size), appears or goes (``stamps``: its
    ``project_stamps``), or the ``salt`` does (the runner's: the configuration's fingerprint and the source roots
    in order, which decide where module names resolve): while it holds, every file's cross-file fingerprint
    (``ProjectIndex.fingerprint_for``) is what it was, and the index need not be built to look results up (a warm
    run stats the files and reads two cache files)."""
    stamp = blake2b(salt.encode(), digest_size=16)
    for path, (mtime_ns, size) in sorted(stamps.items()):
        stamp.update(f"{path}\0{mtime_ns}\0{size}\n".encode())
    return stamp.hexdigest()
