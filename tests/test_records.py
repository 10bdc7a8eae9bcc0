"""``ms_lint.records.record`` behaves as ``@dataclass`` for the records a warm run builds (it exists so that run
need not import ``dataclasses``): the same ``__init__``, ``repr``, ``==``, hashing, and ``asdict``/``replace``."""
import dataclasses
import pickle
from typing import Dict, List, Optional

import pytest

from ms_lint.records import FrozenRecordError, as_dict, field, record, replaced


@record
class Plain:
    name: str
    count: int = 3
    tags: List[str] = field(default_factory=list)
    table: Dict[str, List[int]] = field(default_factory=lambda: {"a": [1]})
    hidden: Optional[str] = field(default=None, repr=False, compare=False)


@dataclasses.dataclass
class PlainDC:
    name: str
    count: int = 3
    tags: List[str] = dataclasses.field(default_factory=list)
    table: Dict[str, List[int]] = dataclasses.field(default_factory=lambda: {"a": [1]})
    hidden: Optional[str] = dataclasses.field(default=None, repr=False, compare=False)


@record(frozen=True)
class Key:
    statement: str


def test_init_repr_and_equality_are_a_dataclasses():
    made, reference = Plain("x", tags=["t"], hidden="h"), PlainDC("x", tags=["t"], hidden="h")
    assert repr(made) == repr(reference).replace("PlainDC", "Plain")
    assert (made.name, made.count, made.tags, made.table, made.hidden) == ("x", 3, ["t"], {"a": [1]}, "h")
    assert made == Plain("x", tags=["t"], hidden="other")  # ``hidden`` takes no part in ==
    assert made != Plain("x", count=4, tags=["t"])
    assert made.__eq__(reference) is NotImplemented  # another class is never equal
    with pytest.raises(TypeError):
        Plain()  # a field without a default must be given
    with pytest.raises(TypeError):
        Plain("x", nonsense=1)
    with pytest.raises(TypeError):
        hash(made)  # mutable with ==, as a dataclass: unhashable


def test_each_record_gets_its_own_default_from_a_factory():
    first, second = Plain("a"), Plain("b")
    first.tags.append("t")
    first.table["a"].append(2)
    assert second.tags == [] and second.table == {"a": [1]}


def test_a_frozen_record_hashes_and_refuses_changes():
    assert Key("import os") == Key("import os") and len({Key("import os"), Key("import os")}) == 1
    with pytest.raises(FrozenRecordError):
        Key("a").statement = "b"
    with pytest.raises(AttributeError):  # what code written for a frozen dataclass catches
        del Key("a").statement
    assert pickle.loads(pickle.dumps(Key("import os"))) == Key("import os")


def test_as_dict_and_replaced_are_asdict_and_replace():
    made = Plain("x", tags=["t"])
    assert as_dict(made) == dataclasses.asdict(PlainDC("x", tags=["t"]))
    copied = as_dict(made)
    copied["tags"].append("u")
    copied["table"]["a"].append(9)
    assert made.tags == ["t"] and made.table == {"a": [1]}  # copies, as asdict makes
    changed = replaced(made, count=7)
    assert changed == Plain("x", count=7, tags=["t"]) and made.count == 3
    assert pickle.loads(pickle.dumps(changed)) == changed
