"""Qualified MindSpore names as strings: the public spelling of re-exported names, and which name a Cell base has.

No parser here: the project index (``ms_lint.analysis.index``) runs on the warm path, which never imports libcst.
"""
from __future__ import annotations

from typing import Optional

from ms_lint.data import mindspore_api, mindspore_cells

CELL_NAME = "mindspore.nn.Cell"


# Internal module paths MindSpore re-exports; resolved names are rewritten to the public spelling.
CANONICAL_PREFIXES = (
    ("mindspore.common.api.", "mindspore."),
    ("mindspore.graph.api.", "mindspore."),
    ("mindspore.nn.cell.", "mindspore.nn."),
    ("mindspore.common.tensor.", "mindspore."),
    ("mindspore.common.parameter.", "mindspore."),
    ("mindspore.common.dtype.", "mindspore."),
    ("mindspore.common.", "mindspore."),
    ("mindspore.context.", "mindspore."),
    ("mindspore.ops.primitive.", "mindspore.ops."),
    ("mindspore.ops.functional.", "mindspore.ops."),
    ("mindspore.ops.function.", "mindspore.ops."),
    ("mindspore.ops.operations.", "mindspore.ops."),
    ("mindspore.ops.composite.", "mindspore.ops."),
    ("mindspore.ops.auto_generate.", "mindspore.ops."),
    ("mindspore.nn.layer.", "mindspore.nn."),
    ("mindspore.nn.loss.", "mindspore.nn."),
    ("mindspore.nn.optim.", "mindspore.nn."),
    ("mindspore.nn.wrap.", "mindspore.nn."),
)


def canonical(name: str) -> str:
    """``mindspore.common.api.jit`` -> ``mindspore.jit``; sub-module paths collapse to the public package."""
    changed = True
    while changed:
        changed = False
        for prefix, public in CANONICAL_PREFIXES:
            if name.startswith(prefix):
                rest = name[len(prefix):]
                # Drop one level of private/implementation sub-module (``ops.function.math_func.sum``).
                parts = rest.split(".")
                if len(parts) > 1 and parts[0].islower():
                    rest = ".".join(parts[1:])
                name = public + rest
                changed = True
                break
    return name


# Packages of MindSpore whose public classes are all Cells (the optimizers of ``experimental.optim`` and
# ``mint.optim`` derive from ``experimental.optim.Optimizer``, an ``nn.Cell``; their ``lr_scheduler`` is not).
CELL_PACKAGES = ("mindspore.nn.", "mindspore.experimental.optim.", "mindspore.mint.optim.")


def is_cell_base(qualified: Optional[str]) -> bool:
    """``mindspore.nn.Cell`` and the public classes built on it (``nn.Optimizer``, ``nn.LossBase``,
    ``experimental.optim.Optimizer``...), and the Cells of other MindSpore packages that
    tools/derive_mindspore_api.py found (``mindspore.boost.GradientAccumulation``)."""
    if not qualified:
        return False
    if qualified.startswith(CELL_PACKAGES) and ".lr_scheduler" not in qualified:
        return qualified.rsplit(".", 1)[-1][:1].isupper()
    return qualified.startswith("mindspore.") and qualified in mindspore_cells()


_KNOWN: Optional[frozenset] = None


def known_mindspore_name(name: str) -> bool:
    """A MindSpore class or function the derived data (``tools/derive_mindspore_api.py``) names: its Cells, the
    public functions and classes of ``ops``, ``nn`` and ``mint``, the classes whose ``__init__`` it read, the
    functions whose results it knows, the owners of the methods it knows."""
    global _KNOWN
    if _KNOWN is None:
        api = mindspore_api()
        known = set(mindspore_cells()) | set(api.get("functions", ())) | set(api.get("attributes", ()))
        known |= set(api.get("bases", ())) | {method.rsplit(".", 1)[0] for method in api.get("methods", ())}
        known |= set(api.get("public", ()))
        _KNOWN = frozenset(canonical(name) for name in known)
    return canonical(name) in _KNOWN
