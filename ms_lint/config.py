"""``[tool.ms-lint]`` in the nearest pyproject.toml, validated: unknown keys and bad values name the key."""
from __future__ import annotations

import fnmatch
import json
import os
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from ms_lint.blake import blake2b
from ms_lint.codes import CODES, is_valid_selector, matches
from ms_lint.records import as_dict, field, record

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - exercised on 3.9/3.10
    import tomli as tomllib  # type: ignore[no-redef]

# ``ms-lint verify`` writes each version it imports as a copy next to the module, and removes it when it ends
# (``ms_lint.verifier.location``): a run that lints the folder meanwhile must neither report nor read it
VERIFY_COPY_PREFIX = "_ms_lint_verify_"
DEFAULT_EXCLUDE = [
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__", "build", "dist",
    "node_modules", ".mypy_cache", ".pytest_cache", ".ms_lint_cache", "site-packages", VERIFY_COPY_PREFIX + "*.py",
]
GRAPH_MODES = ("auto", "jit-only")
UNRESOLVED_BASES = ("cell-if-construct", "not-cell")


class ConfigError(Exception):
    """A configuration problem the user must fix; the message names the file and key."""


@record
class Config:
    select: List[str] = field(default_factory=lambda: ["MSL"])
    ignore: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    exclude: List[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: List[str] = field(default_factory=list)
    unroll_threshold: int = 16
    graph_mode: str = "auto"
    cell_bases: List[str] = field(default_factory=list)  # qualified names of classes to treat as nn.Cell bases
    # A class whose base can be read nowhere (``class M(PreTrainedModel)``, package not installed): a Cell when it
    # defines ``construct`` ("cell-if-construct"), or never ("not-cell"). Measured in benchmarks/results/realcode.md.
    unresolved_bases: str = "cell-if-construct"
    # Packages named for PyNative mode: a module one of whose dotted name's parts is one of these names
    # (``mindformers.pynative.optimizer``) runs its Cells eagerly (``ProjectIndex.named_pynative``).
    pynative_packages: List[str] = field(default_factory=lambda: ["pynative"])
    verify: Dict[str, Any] = field(default_factory=dict)
    root: str = field(default_factory=os.getcwd)  # folder of the pyproject.toml (or cwd): paths are relative to it
    source: Optional[str] = None  # the pyproject.toml it came from

    # -- selection ---------------------------------------------------------------------------------
    def is_enabled(self, code: str, path: Optional[str] = None) -> bool:
        selected = "ALL" in self.select or matches(code, self.select)
        if not selected or matches(code, self.ignore):
            return False
        if path is not None and self.per_file_ignores:
            rel = self.relative(path)
            for pattern, codes in self.per_file_ignores.items():
                if _glob_match(rel, pattern) and ("ALL" in codes or matches(code, codes)):
                    return False
        return True

    def enabled_codes(self, path: Optional[str] = None) -> List[str]:
        return [code for code in CODES if self.is_enabled(code, path)]

    def is_excluded(self, path: str, check_parents: bool = False) -> bool:
        """Does an exclude pattern match this path?

        A pattern without ``/`` matches a file or folder name (``build``, ``*_pb2.py``); one with ``/`` matches
        the path relative to the config root (``src/generated/*``). ``check_parents`` also tests every folder
        above the path (for file names passed by pre-commit)."""
        name_regex, path_patterns = self._exclude_matchers()
        rel = self.relative(path) if check_parents or path_patterns else ""
        names = rel.split("/") if check_parents else [os.path.basename(os.path.normpath(path))]
        if name_regex is not None and any(name_regex.match(os.path.normcase(name)) for name in names):
            return True
        return any(_glob_match(rel, pattern) for pattern in path_patterns)

    def excluded_in(self, folder: str) -> Callable[[str], bool]:
        """``name`` -> is ``folder/name`` excluded (``is_excluded``)? One function per folder, for discovery: with
        name patterns only (the default), a name is matched as it is, without building and normalizing its
        path."""
        name_regex, path_patterns = self._exclude_matchers()
        if path_patterns:
            return lambda name: self.is_excluded(os.path.join(folder, name))
        if name_regex is None:
            return lambda name: False
        match, normcase = name_regex.match, os.path.normcase
        return lambda name: match(normcase(name)) is not None

    def _exclude_matchers(self) -> Tuple[Optional["re.Pattern[str]"], List[str]]:
        """The name patterns as one regex (what ``fnmatch.fnmatch`` does for each, in one match: discovery calls
        this for every file and folder), and the path patterns. Rebuilt when the exclude lists change."""
        lists = (tuple(self.exclude), tuple(self.extend_exclude))
        cached = self.__dict__.get("_exclude_cache")
        if cached is None or cached[0] != lists:
            patterns = [pattern.rstrip("/") for pattern in lists[0] + lists[1]]
            names = [p for p in patterns if "/" not in p]
            regex = re.compile("|".join(fnmatch.translate(os.path.normcase(p)) for p in names)) if names else None
            cached = (lists, regex, [p for p in patterns if "/" in p])
            self.__dict__["_exclude_cache"] = cached
        return cached[1], cached[2]

    def relative(self, path: str) -> str:
        try:
            rel = os.path.relpath(os.path.abspath(path), self.root)
        except ValueError:  # different drive on Windows
            rel = path
        return rel.replace(os.sep, "/")

    def index_options(self) -> Dict[str, Any]:
        """The project index options this configuration sets (``ProjectIndex(**options)``)."""
        return {"cell_bases": tuple(self.cell_bases),
                "unresolved_construct_is_cell": self.unresolved_bases == "cell-if-construct",
                "pynative_packages": tuple(self.pynative_packages)}

    def fingerprint(self) -> str:
        """Everything that changes analysis results, hashed (for the results cache)."""
        data = as_dict(self)
        for key in ("root", "source", "verify", "exclude", "extend_exclude"):
            data.pop(key)
        return blake2b(json.dumps(data, sort_keys=True).encode(), digest_size=8).hexdigest()

    def with_overrides(self, select: Optional[List[str]] = None, ignore: Optional[List[str]] = None,
                       extend_select: Optional[List[str]] = None,
                       extend_ignore: Optional[List[str]] = None) -> "Config":
        """``select`` replaces the configured selection, ``extend_select`` adds to it; ``ignore`` and
        ``extend_ignore`` both add to the configured ignores (ruff's ``--ignore`` does too)."""
        copy = Config(**as_dict(self))
        if select:
            for selector in select:
                _check_selector(selector, "--select")
            copy.select = list(select)
        if extend_select:
            for selector in extend_select:
                _check_selector(selector, "--extend-select")
            copy.select = copy.select + [s for s in extend_select if s not in copy.select]
        for option, extra in (("--ignore", ignore), ("--extend-ignore", extend_ignore)):
            if extra:
                for selector in extra:
                    _check_selector(selector, option)
                copy.ignore = copy.ignore + list(extra)
        return copy


def _glob_match(rel: str, pattern: str) -> bool:
    return fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, pattern.rstrip("/") + "/*")


def _check_selector(selector: str, where: str) -> None:
    if not is_valid_selector(selector):
        raise ConfigError(f"{where}: unknown rule code or prefix {selector!r} (known: {', '.join(CODES)})")


def find_pyproject(start: str, memo: Optional[Dict[str, Tuple[Optional[str], Optional[str]]]] = None
                   ) -> Optional[str]:
    """The pyproject.toml that configures files under ``start``, ruff's rule: the nearest one above it that has a
    ``[tool.ms-lint]`` table (or cannot be read as TOML: its error is then reported); failing that, the nearest
    pyproject.toml at all (it anchors relative paths: per-file-ignores, SARIF); None when there is none.
    ``memo`` (folder -> (configuring, nearest)) shares the walk up between the folders of one run."""
    folder = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    configuring, nearest = _pyprojects_above(folder, {} if memo is None else memo)
    return configuring or nearest


def _pyprojects_above(folder: str, memo: Dict[str, Tuple[Optional[str], Optional[str]]]
                      ) -> Tuple[Optional[str], Optional[str]]:
    """(nearest configuring pyproject.toml at or above ``folder``, nearest pyproject.toml at all)."""
    walked: List[Tuple[str, Optional[str]]] = []
    result: Tuple[Optional[str], Optional[str]] = (None, None)
    while True:
        if folder in memo:
            result = memo[folder]
            break
        candidate = os.path.join(folder, "pyproject.toml")
        walked.append((folder, candidate if os.path.isfile(candidate) else None))
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    configuring, nearest = result
    for folder, own in reversed(walked):  # from the top down: each folder's answer from its parent's
        if own is not None:
            nearest = own
            if _configures_ms_lint(own):
                configuring = own
        memo[folder] = (configuring, nearest)
    return configuring, nearest


_CONFIGURES: Dict[Tuple[str, int, int], bool] = {}  # (path, mtime, size) -> has a [tool.ms-lint] table


def _configures_ms_lint(pyproject: str) -> bool:
    """Read once per process and version of the file: every folder of a large tree asks about the same one (a
    warm check of MindSpore's 970 folders parsed one pyproject.toml 969 times: half of the run)."""
    try:
        st = os.stat(pyproject)
    except OSError:
        return True  # unreadable: load_config says so
    key = (pyproject, st.st_mtime_ns, st.st_size)
    if key not in _CONFIGURES:
        _CONFIGURES[key] = _read_configures(pyproject)
    return _CONFIGURES[key]


def _read_configures(pyproject: str) -> bool:
    try:
        with open(pyproject, "rb") as handle:
            raw = handle.read()
    except OSError:
        return True  # unreadable: load_config says so
    if b"ms-lint" not in raw:
        return False
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True
    tool = data.get("tool")
    return isinstance(tool, dict) and "ms-lint" in tool


class ConfigSet:
    """The Config of each file: that of the nearest configuring pyproject.toml above it (``find_pyproject``), or
    one Config for every file (``--config``). Command-line overrides (``--select``, ``--extend-ignore``...) apply
    to each. Loaded once per folder; a bad table raises ConfigError naming the file and key."""

    def __init__(self, fixed: Optional[Config] = None, overrides: Optional[Dict[str, Any]] = None,
                 default_start: Optional[str] = None):
        self.fixed = fixed.with_overrides(**(overrides or {})) if fixed is not None else None
        self.overrides = overrides or {}
        self.default_start = default_start or os.getcwd()
        self._by_folder: Dict[str, Config] = {}
        self._by_file: Dict[str, Config] = {}
        self._by_path: Dict[str, Config] = {}  # as given: a warm run asks once per file, several times
        self._above: Dict[str, Tuple[Optional[str], Optional[str]]] = {}  # find_pyproject's walk, per folder

    def for_path(self, path: str, is_folder: bool = False) -> Config:
        """The Config for a file or folder (a folder: the config its files get). ``is_folder``: the caller knows
        ``path`` is a folder (discovery's walk), which saves the stat that tells one from a file."""
        if self.fixed is not None:
            return self.fixed
        known = self._by_path.get(path)
        if known is not None:
            return known
        absolute = os.path.abspath(path)
        folder = absolute if is_folder or os.path.isdir(absolute) else os.path.dirname(absolute)
        found = self._by_folder.get(folder)
        if found is None:
            pyproject = find_pyproject(folder, self._above)
            found = self._by_file.get(pyproject or "")
            if found is None:
                found = load_config(path=pyproject) if pyproject else Config()
                found = found.with_overrides(**self.overrides)
                self._by_file[pyproject or ""] = found
            self._by_folder[folder] = found
        self._by_path[path] = found
        return found

    def remember(self, path: str, config: Config) -> None:
        """``config`` is ``path``'s: a file found in a folder whose Config discovery just asked for (saves the
        ``for_path`` of every file a stat to tell a file from a folder)."""
        if self.fixed is None:
            self._by_path.setdefault(path, config)

    def default(self) -> Config:
        """The Config of the current folder (for stdin without ``--stdin-filename``)."""
        return self.for_path(self.default_start)

    def all(self) -> List[Config]:
        return [self.fixed] if self.fixed is not None else list(self._by_file.values())


def load_config(start: Optional[str] = None, path: Optional[str] = None) -> Config:
    """Config from ``path`` or the nearest pyproject.toml above ``start``; defaults when there is none."""
    pyproject = path or find_pyproject(start or os.getcwd())
    if pyproject is None:
        return Config()
    try:
        with open(pyproject, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("ms-lint")
    config = Config(root=os.path.dirname(os.path.abspath(pyproject)), source=pyproject)
    if table is None:
        return config
    return _apply_table(config, table, pyproject)


def _apply_table(config: Config, table: Dict[str, Any], where: str) -> Config:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.ms-lint] must be a table")
    for key, value in table.items():
        name = f"{where}: [tool.ms-lint] {key}"
        if key in ("select", "ignore"):
            setattr(config, key, _codes_list(value, name))
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{name}: expected a table of glob = [codes]")
            config.per_file_ignores = {glob: _codes_list(codes, f"{name}.{glob}") for glob, codes in value.items()}
        elif key in ("exclude", "extend-exclude"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{name}: expected a list of glob strings")
            setattr(config, key.replace("-", "_"), list(value))
        elif key == "unroll-threshold":
            if not isinstance(value, int) or isinstance(value, bool) or value < 2:
                raise ConfigError(f"{name}: expected an integer >= 2, got {value!r}")
            config.unroll_threshold = value
        elif key == "graph-mode":
            if value not in GRAPH_MODES:
                raise ConfigError(f"{name}: expected one of {', '.join(GRAPH_MODES)}, got {value!r}")
            config.graph_mode = value
        elif key == "unresolved-bases":
            if value not in UNRESOLVED_BASES:
                raise ConfigError(f"{name}: expected one of {', '.join(UNRESOLVED_BASES)}, got {value!r}")
            config.unresolved_bases = value
        elif key == "cell-bases":
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise ConfigError(f"{name}: expected a list of qualified class names (\"pkg.module.Base\")")
            config.cell_bases = [v.strip() for v in value]
        elif key == "pynative-packages":
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip().isidentifier() for v in value):
                raise ConfigError(f"{name}: expected a list of package names ([\"pynative\"]; [] turns it off)")
            config.pynative_packages = [v.strip() for v in value]
        elif key == "verify":
            if not isinstance(value, dict):
                raise ConfigError(f"{name}: expected a table")
            config.verify = value
        else:
            known = ("select, ignore, per-file-ignores, exclude, extend-exclude, unroll-threshold, graph-mode, "
                     "cell-bases, unresolved-bases, pynative-packages, verify")
            raise ConfigError(f"{where}: unknown key {key!r} in [tool.ms-lint] (known keys: {known})")
    return config


def _codes_list(value: Any, name: str) -> List[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{name}: expected a list of rule codes")
    for selector in value:
        _check_selector(selector, name)
    return list(value)
