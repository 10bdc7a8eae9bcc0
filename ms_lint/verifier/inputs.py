"""Input specs for the verifier: parse them, find them, generate them.

A spec is a ``;``-separated list of ``name=type`` entries::

    xs=float32[100,2]; mask=bool[100]; n=int:4

Types:

* ``<dtype>[d0,d1,...]`` -- a tensor of that dtype and shape (``float32[]`` is 0-d). dtypes: float16, float32,
  float64, int8, int16, int32, int64, uint8, bool. An optional value range follows the shape:
  ``int32[8](0,5)`` draws integers in [0, 5); ``float32[4](-1,1)`` draws uniformly in [-1, 1).
  Defaults: floats standard normal, integers in [0, 10), bools fair coin.
* ``<dtype>:<value>`` -- a 0-d tensor holding that value, e.g. ``float32:0.5``.
* ``int:4``, ``float:0.5``, ``bool:true`` -- a plain Python scalar (a compile-time constant in graph mode); a bare
  literal works too: ``4``, ``0.5``, ``true``/``True``.
* ``None`` -- the Python ``None`` (an optional argument left out: ``mask=None``).
* ``tuple(ITEM, ITEM, ...)`` / ``list(...)`` -- a tuple or list; an item is any of the types above (nested tuples
  too), and ``N*ITEM`` repeats it: ``grads=tuple(60*float32[8,4])`` is 60 tensors of shape (8, 4), each drawn
  from its own stream; ``tuple(float32[4], int:3, None)`` mixes kinds.

Values are generated with numpy from a fixed seed; each input has its own stream derived from the seed and its name,
so both versions of a program (and every process) get identical inputs.

Where a spec comes from, first match wins: the explicit argument (``--inputs``), a ``# ms-lint: inputs=...`` comment
directly above the function (or its decorators; for ``Class.method`` above the method, then above the class), then a
``[tool.ms-lint.verify]`` table in the nearest pyproject.toml::

    [tool.ms-lint.verify]
    func = "input_x=float32[2,2]; input_y=float32[2,2]"

    [tool.ms-lint.verify.Net]          # a table when a Cell needs a constructor call
    inputs = "x=float32[4,8]"
    init = "Net(8, act='relu')"

A constructor call can also be given as ``# ms-lint: init=Net(8)`` above the class, or ``--init``.
This module needs no MindSpore; numpy is imported only to generate values.
"""

from __future__ import annotations

import ast
import os
import re
import zlib
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ms_lint.verifier.errors import VerifyError

EXAMPLE = '"xs=float32[100,2]; mask=bool[100]; n=int:4; grads=tuple(3*float32[8,4]); bias=None"'

TENSOR_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8")
SCALAR_KINDS = ("int", "float", "bool")
_DTYPE_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "long": "int64", "bool_": "bool"}
MAX_ELEMENTS = 200_000_000

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TENSOR_RE = re.compile(
    r"^(?P<dtype>[A-Za-z_][A-Za-z0-9_]*)\s*\[(?P<shape>[^\]]*)\]\s*(?:\((?P<range>[^)]*)\))?$"
)
_VALUE_RE = re.compile(r"^(?P<kind>[A-Za-z_][A-Za-z0-9_]*)\s*:\s*(?P<value>.+)$")


@dataclass(frozen=True)
class TensorSpec:
    """A tensor input drawn at random (or, with ``value`` set, a 0-d tensor with that value)."""

    name: str
    dtype: str
    shape: Tuple[int, ...]
    low: Optional[float] = None
    high: Optional[float] = None
    value: Optional[Union[int, float, bool]] = None

    def type_text(self) -> str:
        if self.value is not None:
            return f"{self.dtype}:{_scalar_text(self.value)}"
        text = f"{self.dtype}[{','.join(str(d) for d in self.shape)}]"
        if self.low is not None:
            text += f"({_scalar_text(self.low)},{_scalar_text(self.high)})"
        return text

    def to_text(self) -> str:
        return f"{self.name}={self.type_text()}"


@dataclass(frozen=True)
class ScalarSpec:
    """A plain Python scalar argument."""

    name: str
    kind: str  # "int" | "float" | "bool" | "str"
    value: Union[int, float, bool]

    def type_text(self) -> str:
        return f"{self.kind}:{_scalar_text(self.value)}"

    def to_text(self) -> str:
        return f"{self.name}={self.type_text()}"


@dataclass(frozen=True)
class ArraySpec:
    """An explicit numpy array given through the Python API (``inputs={"x": np.array(...)}``)."""

    name: str
    array: Any

    def type_text(self) -> str:
        return f"{self.array.dtype}[{','.join(str(d) for d in self.array.shape)}](given)"

    def to_text(self) -> str:
        return f"{self.name}={self.type_text()}"


@dataclass(frozen=True)
class NoneSpec:
    """The Python ``None``."""

    name: str

    def type_text(self) -> str:
        return "None"

    def to_text(self) -> str:
        return f"{self.name}=None"


@dataclass(frozen=True)
class SeqSpec:
    """A tuple or list of inputs; item ``i`` is named ``name.i`` (its own random stream)."""

    name: str
    kind: str  # "tuple" | "list"
    items: Tuple[Any, ...]

    def type_text(self) -> str:
        parts: List[str] = []
        texts = [item.type_text() for item in self.items]
        index = 0
        while index < len(texts):
            run = 1
            while index + run < len(texts) and texts[index + run] == texts[index]:
                run += 1
            parts.append(f"{run}*{texts[index]}" if run > 1 else texts[index])
            index += run
        return f"{self.kind}({', '.join(parts)})"

    def to_text(self) -> str:
        return f"{self.name}={self.type_text()}"


InputSpec = Union[TensorSpec, ScalarSpec, ArraySpec, NoneSpec, SeqSpec]
MAX_ITEMS = 100_000
_SEQ_RE = re.compile(r"^(?P<kind>tuple|list)\s*\((?P<body>.*)\)$", re.S)
_REPEAT_RE = re.compile(r"^(?P<count>\d+)\s*\*\s*(?P<item>.+)$", re.S)


def _scalar_text(value: Union[int, float, bool, str]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return repr(value)


def _bad(entry: str, why: str) -> VerifyError:
    return VerifyError(f"bad input spec entry {entry!r}: {why}. Example of a valid spec: {EXAMPLE}")


def _parse_number(text: str, entry: str, what: str) -> Union[int, float]:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise _bad(entry, f"{what} {text!r} is not a number") from None


def _parse_bool(text: str, entry: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    raise _bad(entry, f"bool value {text.strip()!r} must be true or false")


def _canonical_dtype(name: str, entry: str) -> str:
    low = name.lower()
    if low in TENSOR_DTYPES:
        return low
    if low in _DTYPE_ALIASES and low not in SCALAR_KINDS:
        return _DTYPE_ALIASES[low]
    if low in SCALAR_KINDS:
        # float[3] / int[3]: a scalar kind used with a shape
        suggestion = {"int": "int32", "float": "float32", "bool": "bool"}[low]
        raise _bad(entry, f"'{name}' is a Python scalar kind; for a tensor write a dtype such as {suggestion}[...]")
    raise _bad(entry, f"unknown dtype {name!r} (expected one of {', '.join(TENSOR_DTYPES)})")


def _parse_value_for_dtype(dtype: str, text: str, entry: str) -> Union[int, float, bool]:
    if dtype == "bool":
        return _parse_bool(text, entry)
    number = _parse_number(text, entry, "value")
    if dtype in INT_DTYPES:
        if isinstance(number, float):
            if not number.is_integer():
                raise _bad(entry, f"value {text.strip()!r} is not an integer")
            number = int(number)
        return number
    return float(number)


def _parse_entry(entry: str) -> InputSpec:
    if "=" not in entry:
        raise _bad(entry, "expected name=type")
    name, _, typ = entry.partition("=")
    name, typ = name.strip(), typ.strip()
    if not _NAME_RE.match(name):
        raise _bad(entry, f"{name!r} is not a valid parameter name")
    if not typ:
        raise _bad(entry, "missing type after '='")
    return _parse_type(name, typ, entry)


def _split_items(body: str, entry: str) -> List[str]:
    """Split a tuple body at the commas outside brackets."""
    items, depth, current = [], 0, []
    for char in body:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
            if depth < 0:
                raise _bad(entry, "unbalanced brackets")
        if char == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise _bad(entry, "unbalanced brackets")
    last = "".join(current).strip()
    if last or items:
        items.append(last)
    return items


def _parse_seq(name: str, kind: str, body: str, entry: str) -> SeqSpec:
    items: List[Any] = []
    for text in _split_items(body, entry):
        if not text:
            raise _bad(entry, f"empty item in {kind}(...)")
        count = 1
        repeat = _REPEAT_RE.match(text)
        if repeat:
            count = int(repeat.group("count"))
            text = repeat.group("item").strip()
        if len(items) + count > MAX_ITEMS:
            raise _bad(entry, f"more than {MAX_ITEMS} items")
        for _ in range(count):
            items.append(_parse_type(f"{name}.{len(items)}", text, entry))
    return SeqSpec(name, kind, tuple(items))


def _parse_type(name: str, typ: str, entry: str) -> InputSpec:
    seq = _SEQ_RE.match(typ)
    if seq:
        return _parse_seq(name, seq.group("kind"), seq.group("body"), entry)
    if typ == "None":
        return NoneSpec(name)
    literal = typ.lower()
    if literal in ("true", "false"):
        return ScalarSpec(name, "bool", literal == "true")
    if re.match(r"^[-+]?\d+$", typ):
        return ScalarSpec(name, "int", int(typ))
    if re.match(r"^[-+]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)$", typ):
        return ScalarSpec(name, "float", float(typ))

    if typ.lower().startswith("str:"):  # a Python string: reduction="mean", mode flags
        return ScalarSpec(name, "str", typ[4:].strip())
    if len(typ) >= 2 and typ[0] == typ[-1] and typ[0] in "'\"":
        return ScalarSpec(name, "str", typ[1:-1])

    match = _TENSOR_RE.match(typ)
    if match:
        dtype = _canonical_dtype(match.group("dtype"), entry)
        shape_text = match.group("shape").strip()
        shape: Tuple[int, ...] = ()
        if shape_text:
            dims = []
            for part in shape_text.split(","):
                part = part.strip()
                if not part:
                    raise _bad(entry, "empty dimension in shape")
                try:
                    dim = int(part)
                except ValueError:
                    raise _bad(entry, f"dimension {part!r} is not a non-negative integer") from None
                if dim < 0:
                    raise _bad(entry, f"dimension {dim} is negative")
                dims.append(dim)
            shape = tuple(dims)
        count = 1
        for dim in shape:
            count *= dim
        if count > MAX_ELEMENTS:
            raise _bad(entry, f"{count} elements is more than the {MAX_ELEMENTS} the verifier will generate")
        low = high = None
        if match.group("range") is not None:
            parts = match.group("range").split(",")
            if len(parts) != 2:
                raise _bad(entry, "a value range is written (low,high)")
            if dtype == "bool":
                raise _bad(entry, "a bool tensor takes no value range")
            low = _parse_number(parts[0], entry, "range bound")
            high = _parse_number(parts[1], entry, "range bound")
            if not low < high:
                raise _bad(entry, f"range ({low},{high}) is empty: low must be below high")
            if dtype in INT_DTYPES and (not float(low).is_integer() or not float(high).is_integer()):
                raise _bad(entry, "an integer tensor's range bounds must be integers")
        return TensorSpec(name, dtype, shape, low, high)

    match = _VALUE_RE.match(typ)
    if match:
        kind, value_text = match.group("kind"), match.group("value")
        if kind.lower() in SCALAR_KINDS:
            kind = kind.lower()
            if kind == "bool":
                return ScalarSpec(name, kind, _parse_bool(value_text, entry))
            number = _parse_number(value_text, entry, "value")
            if kind == "int":
                if isinstance(number, float):
                    raise _bad(entry, f"int value {value_text.strip()!r} is not an integer")
                return ScalarSpec(name, kind, number)
            return ScalarSpec(name, kind, float(number))
        dtype = _canonical_dtype(kind, entry)
        return TensorSpec(name, dtype, (), value=_parse_value_for_dtype(dtype, value_text, entry))

    if typ.lower() in SCALAR_KINDS:
        raise _bad(entry, f"a {typ.lower()} scalar needs a value, e.g. {name}={typ.lower()}:"
                          + {"int": "4", "float": "0.5", "bool": "true"}[typ.lower()])
    if typ.lower() in TENSOR_DTYPES or typ.lower() in _DTYPE_ALIASES:
        raise _bad(entry, f"a tensor needs a shape, e.g. {name}={typ.lower()}[4,3] (or {typ.lower()}[] for 0-d)")
    raise _bad(entry, "type must be dtype[shape] (e.g. float32[100,2]), dtype:value (e.g. float32:0.5), "
                      "int:/float:/bool: with a value (or a bare 4, 0.5, true), None, or tuple(...)/list(...) "
                      "of those (e.g. tuple(60*float32[8,4]))")


def parse_spec(text: str) -> List[InputSpec]:
    """Parse ``"xs=float32[100,2]; mask=bool[100]; n=int:4"`` into specs, in order. Raises VerifyError."""
    if not isinstance(text, str):
        raise VerifyError(f"an input spec must be a string, got {type(text).__name__}")
    specs: List[InputSpec] = []
    seen = set()
    for raw in re.split(r"[;\n]", text):
        entry = raw.strip()
        if not entry:
            continue
        spec = _parse_entry(entry)
        if spec.name in seen:
            raise _bad(entry, f"input {spec.name!r} is given twice")
        seen.add(spec.name)
        specs.append(spec)
    return specs


def specs_from_mapping(mapping: Mapping[str, Any]) -> List[InputSpec]:
    """Specs from a dict: values are type strings (``"float32[3]"``), Python scalars, or numpy arrays."""
    specs: List[InputSpec] = []
    for name, value in mapping.items():
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise VerifyError(f"input name {name!r} is not a valid parameter name")
        if isinstance(value, str):
            specs.extend(parse_spec(f"{name}={value}"))
        elif isinstance(value, bool):
            specs.append(ScalarSpec(name, "bool", value))
        elif isinstance(value, int):
            specs.append(ScalarSpec(name, "int", value))
        elif isinstance(value, float):
            specs.append(ScalarSpec(name, "float", value))
        elif value is None:
            specs.append(NoneSpec(name))
        elif hasattr(value, "dtype") and hasattr(value, "shape"):
            import numpy as np

            specs.append(ArraySpec(name, np.asarray(value)))
        else:
            raise VerifyError(
                f"input {name!r}: unsupported value {value!r}; give a type string such as 'float32[4]', "
                "a Python int/float/bool, or a numpy array"
            )
    return specs


def to_specs(inputs: Union[None, str, Mapping[str, Any], List[InputSpec]]) -> List[InputSpec]:
    """Normalise whatever the API was given into a list of specs."""
    if inputs is None:
        return []
    if isinstance(inputs, str):
        return parse_spec(inputs)
    if isinstance(inputs, Mapping):
        return specs_from_mapping(inputs)
    if isinstance(inputs, (list, tuple)) and all(
            isinstance(s, (TensorSpec, ScalarSpec, ArraySpec, NoneSpec, SeqSpec)) for s in inputs):
        return list(inputs)
    raise VerifyError(f"inputs must be a spec string such as {EXAMPLE} or a dict, got {type(inputs).__name__}")


def spec_to_string(specs: List[InputSpec]) -> str:
    return "; ".join(spec.to_text() for spec in specs)


def has_random(specs: List[InputSpec]) -> bool:
    """Does any input get drawn (a tensor without a fixed value)? Without one, every draw is the same."""
    for spec in specs:
        if isinstance(spec, SeqSpec):
            if has_random(list(spec.items)):
                return True
        elif isinstance(spec, TensorSpec) and spec.value is None:
            return True
    return False


def generate(specs: List[InputSpec], seed: int = 0) -> Dict[str, Any]:
    """Deterministic values for the specs: numpy arrays for tensors, Python scalars for scalars, None, and tuples /
    lists of those. Each tensor (each tuple item too) has its own stream, from the seed and its name."""
    return {spec.name: _value(spec, seed) for spec in specs}


def _value(spec: InputSpec, seed: int) -> Any:
    import numpy as np

    if isinstance(spec, ScalarSpec):
        return spec.value
    if isinstance(spec, NoneSpec):
        return None
    if isinstance(spec, SeqSpec):
        items = [_value(item, seed) for item in spec.items]
        return tuple(items) if spec.kind == "tuple" else items
    if isinstance(spec, ArraySpec):
        return np.array(spec.array, copy=True)
    if spec.value is not None:
        return np.array(spec.value, dtype=spec.dtype)
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(spec.name.encode("utf-8"))])
    if spec.dtype == "bool":
        arr = rng.random(spec.shape) < 0.5
    elif spec.dtype in INT_DTYPES:
        low = 0 if spec.low is None else int(spec.low)
        high = 10 if spec.high is None else int(spec.high)
        arr = rng.integers(low, high, size=spec.shape, dtype=np.int64)
    elif spec.low is not None:
        arr = rng.uniform(float(spec.low), float(spec.high), size=spec.shape)
    else:
        arr = rng.standard_normal(spec.shape)
    return np.asarray(arr).astype(spec.dtype)


def encode_values(values: Mapping[str, Any], arrays: Optional[Dict[str, Any]] = None,
                  prefix: str = "a") -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(tree, arrays): a JSON description of each input for the child (``{"t": "array", "key": k}``,
    ``{"t": "value", "value": v}``, ``{"t": "none"}``, ``{"t": "tuple"|"list", "items": [...]}``) and the arrays
    it names, for an npz file (``arrays``, when given, is extended: one file for several draws)."""
    import numpy as np

    arrays = {} if arrays is None else arrays

    def encode(value: Any) -> Dict[str, Any]:
        if value is None:
            return {"t": "none"}
        if isinstance(value, (tuple, list)):
            return {"t": "tuple" if isinstance(value, tuple) else "list", "items": [encode(v) for v in value]}
        if isinstance(value, np.ndarray):
            key = f"{prefix}{len(arrays)}"
            arrays[key] = value
            return {"t": "array", "key": key}
        return {"t": "value", "value": value}

    return {name: encode(value) for name, value in values.items()}, arrays


# ----------------------------------------------------------------------------------------------------------------
# Finding specs in source comments and pyproject.toml

_COMMENT_RE = re.compile(r"^\s*#\s*ms-lint\s*:\s*(?P<key>inputs|init)\s*=\s*(?P<value>.*?)\s*$")


def find_def(tree: ast.Module, target: str) -> List[ast.AST]:
    """The def/class nodes for ``func`` / ``Class`` / ``Class.method``: the target first, then what encloses it
    (for a bare ``Class``: the class, then its ``construct``)."""
    parts = target.split(".")
    body = tree.body
    chain: List[ast.AST] = []
    for part in parts:
        found = None
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == part:
                found = node  # last definition wins, as at run time
        if found is None:
            return []
        chain.append(found)
        body = getattr(found, "body", [])
    if len(chain) == 1 and isinstance(chain[0], ast.ClassDef):
        # a Cell class: the comment may sit above the class or above construct
        for node in chain[0].body:
            if isinstance(node, ast.FunctionDef) and node.name == "construct":
                chain.insert(0, node)
                return [chain[1], chain[0]]
    return list(reversed(chain))


def _comment_block_above(lines: List[str], node: ast.AST) -> List[str]:
    first = node.lineno
    for deco in getattr(node, "decorator_list", []):
        first = min(first, deco.lineno)
    block = []
    index = first - 2  # 0-based index of the line above
    while index >= 0 and lines[index].strip().startswith("#"):
        block.append(lines[index])
        index -= 1
    return list(reversed(block))


def directives_from_source(source: str, function: str) -> Dict[str, str]:
    """``{"inputs": ..., "init": ...}`` from ``# ms-lint: inputs=...`` / ``init=...`` comments above the target."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    lines = source.splitlines()
    found: Dict[str, str] = {}
    for node in find_def(tree, function):
        inputs_parts: List[str] = []
        for line in _comment_block_above(lines, node):
            match = _COMMENT_RE.match(line)
            if not match:
                continue
            if match.group("key") == "inputs":
                inputs_parts.append(match.group("value"))
            elif "init" not in found:
                found["init"] = match.group("value")
        if inputs_parts and "inputs" not in found:
            found["inputs"] = "; ".join(p.strip().rstrip(";") for p in inputs_parts)
    return found


def find_pyproject(path: Optional[str]) -> Optional[str]:
    """The nearest pyproject.toml at or above ``path`` (a file or directory)."""
    if not path:
        return None
    current = os.path.abspath(path)
    if not os.path.isdir(current):
        current = os.path.dirname(current)
    while True:
        candidate = os.path.join(current, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _load_toml(path: str) -> Dict[str, Any]:
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - depends on the interpreter
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            return _mini_toml_verify_table(data.decode("utf-8"))
    try:
        return tomllib.loads(data.decode("utf-8"))
    except Exception as exc:  # tomllib.TOMLDecodeError
        raise VerifyError(f"{path}: cannot parse TOML: {exc}") from None


def _mini_toml_verify_table(text: str) -> Dict[str, Any]:
    """Enough TOML for ``[tool.ms-lint.verify]`` (string values) where neither tomllib nor tomli exists."""
    root: Dict[str, Any] = {}
    section: Optional[Dict[str, Any]] = None
    key_re = r'(?:"([^"]+)"|\'([^\']+)\'|([A-Za-z0-9_.\-]+))'
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        header = re.match(r"^\[\s*tool\.ms-lint\.verify(?:\.\s*" + key_re + r")?\s*\]$", line)
        if header:
            verify = root.setdefault("tool", {}).setdefault("ms-lint", {}).setdefault("verify", {})
            sub = header.group(1) or header.group(2) or header.group(3)
            section = verify.setdefault(sub, {}) if sub else verify
            continue
        if line.startswith("["):
            section = None
            continue
        if section is None:
            continue
        item = re.match(r"^" + key_re + r"\s*=\s*(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)')\s*(?:#.*)?$", line)
        if item:
            key = item.group(1) or item.group(2) or item.group(3)
            value = item.group(4) if item.group(4) is not None else item.group(5)
            section[key] = value
    return root


def verify_table(pyproject_path: Optional[str]) -> Dict[str, Dict[str, str]]:
    """``{function: {"inputs": ..., "init": ...}}`` from ``[tool.ms-lint.verify]`` of a pyproject.toml."""
    if not pyproject_path or not os.path.isfile(pyproject_path):
        return {}
    data = _load_toml(pyproject_path)
    table = data.get("tool", {}).get("ms-lint", {}).get("verify", {})
    return normalize_verify_table(table, pyproject_path)


def normalize_verify_table(table: Any, where: str = "pyproject.toml") -> Dict[str, Dict[str, str]]:
    """Validate a raw ``[tool.ms-lint.verify]`` table (as in ``Config.verify``) into ``{function: {...}}``."""
    if not table:
        return {}
    if not isinstance(table, dict):
        raise VerifyError(f"{where}: [tool.ms-lint.verify] must be a table")
    result: Dict[str, Dict[str, str]] = {}
    for name, value in table.items():
        if isinstance(value, str):
            result[name] = {"inputs": value}
        elif isinstance(value, dict):
            entry = {}
            for key in ("inputs", "init"):
                if key in value:
                    if not isinstance(value[key], str):
                        raise VerifyError(f"{where}: tool.ms-lint.verify.{name}.{key} must be a string")
                    entry[key] = value[key]
            unknown = sorted(set(value) - {"inputs", "init"})
            if unknown:
                raise VerifyError(
                    f"{where}: tool.ms-lint.verify.{name}: unknown key(s) {', '.join(unknown)} "
                    "(expected inputs, init)"
                )
            result[name] = entry
        else:
            raise VerifyError(
                f"{where}: tool.ms-lint.verify.{name} must be a spec string or a table with inputs/init"
            )
    return result


@dataclass
class ResolvedInputs:
    specs: List[InputSpec]
    init: Optional[str]
    origin: str  # "argument" | "comment" | "pyproject:<path>" | "none"

    @property
    def text(self) -> str:
        return spec_to_string(self.specs)


def resolve_inputs(
    source: str,
    function: str,
    *,
    path: Optional[str] = None,
    inputs: Union[None, str, Mapping[str, Any]] = None,
    init: Optional[str] = None,
    pyproject: Optional[str] = None,
    verify_config: Optional[Mapping[str, Any]] = None,
) -> ResolvedInputs:
    """Pick the input spec and constructor call for ``function``: argument, then comment, then pyproject.

    ``verify_config`` is an already-loaded ``[tool.ms-lint.verify]`` table (``Config.verify``); without it the
    table is read from ``pyproject`` or the pyproject.toml nearest ``path``.
    """
    comment = directives_from_source(source, function)
    if verify_config is not None:
        where = "[tool.ms-lint.verify]"
        tables = normalize_verify_table(dict(verify_config), where)
    else:
        where = pyproject or find_pyproject(path) or ""
        tables = verify_table(where) if where else {}
    table = tables.get(function) or {}
    if not table and "." in function:
        table = tables.get(function.split(".")[0]) or {}

    if inputs is not None:
        specs, origin = to_specs(inputs), "argument"
    elif "inputs" in comment:
        try:
            specs, origin = parse_spec(comment["inputs"]), "comment"
        except VerifyError as exc:
            raise VerifyError(f"in the '# ms-lint: inputs=' comment above {function}: {exc}") from None
    elif "inputs" in table:
        try:
            specs, origin = parse_spec(table["inputs"]), f"pyproject:{where}"
        except VerifyError as exc:
            raise VerifyError(f"in {where} [tool.ms-lint.verify] {function}: {exc}") from None
    else:
        specs, origin = [], "none"

    if init is None:
        init = comment.get("init") or table.get("init")
    return ResolvedInputs(specs, init, origin)


def required_parameters(source: str, function: str) -> Optional[List[str]]:
    """Parameters of the target that need an input (no default), found statically; None if unknown.

    ``self`` is dropped for methods; a class target means its ``construct`` (a Cell).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    chain = find_def(tree, function)
    if not chain:
        return None
    node = chain[0]
    if isinstance(node, ast.ClassDef):
        node = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "construct"), None)
        if node is None:
            return None
        is_method = True
    else:
        is_method = "." in function
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    args = node.args
    if args.vararg is not None:
        return None
    positional = list(args.posonlyargs) + list(args.args)
    if is_method and positional and not any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
    ):
        positional = positional[1:]
    without_default = len(positional) - len(args.defaults)
    return [a.arg for a in positional[:without_default]]


def suggest_types(source: str, function: str, params: List[str]) -> Dict[str, str]:
    """A starting spec for each parameter, from its annotation and its use in the body: ``int:4`` for a count
    (``range(n)``, an ``int`` annotation), ``float:0.5`` / ``bool:true`` for those annotations, a tuple of tensors
    for a parameter that is iterated, ``zip``-ped or measured with ``len`` (gradients, parameters), a tensor else."""
    suggestions = {name: "float32[4]" for name in params}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return suggestions
    chain = find_def(tree, function)
    if not chain:
        return suggestions
    node = chain[0]
    if isinstance(node, ast.ClassDef):
        node = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "construct"), None)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return suggestions
    wanted = set(params)
    scalar_of = {"int": "int:4", "float": "float:0.5", "bool": "bool:true"}
    for arg in list(node.args.posonlyargs) + list(node.args.args) + list(node.args.kwonlyargs):
        if arg.arg in wanted and isinstance(arg.annotation, ast.Name) and arg.annotation.id in scalar_of:
            suggestions[arg.arg] = scalar_of[arg.annotation.id]
    sequence = "tuple(4*float32[4])"

    for sub in ast.walk(node):
        if isinstance(sub, (ast.For, ast.comprehension)) and isinstance(sub.iter, ast.Name) \
                and sub.iter.id in wanted:
            suggestions[sub.iter.id] = sequence
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
            if sub.func.id in ("zip", "enumerate", "len"):
                for arg in sub.args:
                    if isinstance(arg, ast.Name) and arg.id in wanted:
                        suggestions[arg.id] = sequence
            elif sub.func.id == "range":
                for arg in sub.args:
                    if isinstance(arg, ast.Name) and arg.id in wanted:
                        suggestions[arg.id] = "int:4"
        if isinstance(sub, ast.Subscript):
            # a parameter used as an index: a 0-d integer tensor in a range valid for any size >= 2
            index = sub.slice
            if isinstance(index, ast.Name) and index.id in wanted and suggestions[index.id] == "float32[4]":
                suggestions[index.id] = "int32[](0,2)"
    return suggestions
