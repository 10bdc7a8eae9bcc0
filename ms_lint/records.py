"""Record classes for the modules a cached run imports, without ``dataclasses``.

``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``, ``linecache``): about 11 ms of
the 110 to 150 ms a warm ``ms-lint check`` of MindSpore's source takes, for the six records that run builds (a
config, findings, the discovered files). ``record`` writes the same ``__init__``, ``__repr__`` and ``__eq__`` as
``@dataclass`` (and ``__hash__`` with ``frozen=True``) for a class whose fields are its own annotations, in order.
The other modules keep ``dataclasses``."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

_MISSING: Any = object()


class FrozenRecordError(AttributeError):
    """An attribute of a frozen record was set or deleted."""


class _Field:
    __slots__ = ("default", "factory", "compare", "repr")

    def __init__(self, default: Any, factory: Optional[Callable[[], Any]], compare: bool, repr: bool):
        self.default, self.factory, self.compare, self.repr = default, factory, compare, repr


def field(*, default: Any = _MISSING, default_factory: Optional[Callable[[], Any]] = None, compare: bool = True,
          repr: bool = True) -> Any:
    """As ``dataclasses.field``: a default, or a function making one per record; ``compare``/``repr``: whether
    the field takes part in ``==`` and in the ``repr``."""
    return _Field(default, default_factory, compare, repr)


def record(cls: Optional[type] = None, *, frozen: bool = False):
    """``@dataclass`` (``@dataclass(frozen=True)``) for the fields annotated on the class itself."""
    def wrap(klass: type) -> type:
        fields: Dict[str, _Field] = {}
        # the class's own annotations (``from __future__ import annotations``: strings, only the names are read);
        # on Pythons that make them lazily, the attribute computes them
        for name in klass.__dict__.get("__annotations__") or getattr(klass, "__annotations__", {}):
            value = klass.__dict__.get(name, _MISSING)
            spec = value if isinstance(value, _Field) else _Field(value, None, True, True)
            fields[name] = spec
            if isinstance(value, _Field):
                if spec.default is _MISSING:
                    delattr(klass, name)
                else:
                    setattr(klass, name, spec.default)
        klass.__init__ = _init(klass, fields, frozen)  # type: ignore[misc]
        shown = [name for name, spec in fields.items() if spec.repr]
        compared = tuple(name for name, spec in fields.items() if spec.compare)

        def __repr__(self) -> str:
            return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in shown)})"

        def __eq__(self, other: object) -> bool:
            if other.__class__ is not self.__class__:
                return NotImplemented
            return all(getattr(self, n) == getattr(other, n) for n in compared)

        klass.__repr__ = __repr__  # type: ignore[assignment]
        klass.__eq__ = __eq__  # type: ignore[assignment]
        if frozen:
            def __hash__(self) -> int:
                return hash(tuple(getattr(self, n) for n in compared))

            def __setattr__(self, name: str, value: Any) -> None:
                raise FrozenRecordError(f"cannot assign to field {name!r}")

            def __delattr__(self, name: str) -> None:
                raise FrozenRecordError(f"cannot delete field {name!r}")

            klass.__hash__ = __hash__  # type: ignore[assignment]
            klass.__setattr__ = __setattr__  # type: ignore[assignment]
            klass.__delattr__ = __delattr__  # type: ignore[assignment]
        else:
            klass.__hash__ = None  # type: ignore[assignment]  # as a dataclass with eq and not frozen
        klass.__record_fields__ = tuple(fields)  # type: ignore[attr-defined]
        return klass

    return wrap if cls is None else wrap(cls)


def _init(klass: type, fields: Dict[str, _Field], frozen: bool) -> Callable[..., None]:
    """The ``__init__`` a dataclass would have: the fields in order as parameters, defaults as given, a factory's
    default made per call."""
    params, lines = [], []
    scope: Dict[str, Any] = {"_MISSING": _MISSING, "_setattr": object.__setattr__}
    for name, spec in fields.items():
        if spec.factory is not None:
            scope[f"_factory_{name}"] = spec.factory
            params.append(f"{name}=_MISSING")
            value = f"_factory_{name}() if {name} is _MISSING else {name}"
        elif spec.default is not _MISSING:
            scope[f"_default_{name}"] = spec.default
            params.append(f"{name}=_default_{name}")
            value = name
        else:
            params.append(name)
            value = name
        lines.append(f"    _setattr(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(lines) or "    pass") + "\n"
    exec(source, scope)  # noqa: S102 - the source is built from the class's own field names
    init = scope["__init__"]
    init.__qualname__ = f"{klass.__qualname__}.__init__"
    return init


def fields_of(obj: Any) -> Tuple[str, ...]:
    return type(obj).__record_fields__


def as_dict(obj: Any) -> Dict[str, Any]:
    """As ``dataclasses.asdict``: the fields by name, lists, tuples and dicts in them copied."""
    return {name: _copied(getattr(obj, name)) for name in fields_of(obj)}


def replaced(obj: Any, **changes: Any) -> Any:
    """As ``dataclasses.replace``: a new record with the same fields but ``changes``."""
    return type(obj)(**{**{name: getattr(obj, name) for name in fields_of(obj)}, **changes})


def _copied(value: Any) -> Any:
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_copied(item) for item in value)
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    return value
