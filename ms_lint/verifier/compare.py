"""Compare two output trees written by the child: structure, shapes, dtypes, values, NaN/inf placement.

A tree node is a dict from ``child.Child.encode``: ``{"type": "tuple"|"list", "items": [...]}``,
``{"type": "dict", "items": {...}}``, ``{"type": "tensor", "key", "dtype", "shape"}``, ``{"type": "scalar",
"value", "pytype"}``, ``{"type": "none"}`` or ``{"type": "other", "repr"}``; tensor values live in a dict
``key -> numpy array``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping

MAX_DIFFERENCES = 8


@dataclass
class Comparison:
    match: bool
    differences: List[str] = field(default_factory=list)
    leaves: int = 0  # tensors and scalars compared

    def summary(self) -> str:
        if self.match:
            return f"{self.leaves} value(s) match"
        shown = self.differences[:MAX_DIFFERENCES]
        more = len(self.differences) - len(shown)
        return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def compare_trees(
    a: Mapping[str, Any],
    a_leaves: Mapping[str, Any],
    b: Mapping[str, Any],
    b_leaves: Mapping[str, Any],
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    path: str = "output",
) -> Comparison:
    """Compare tree ``a`` (original) with tree ``b`` (rewritten)."""
    result = Comparison(match=True)
    _compare(a, a_leaves, b, b_leaves, rtol, atol, path, result)
    result.match = not result.differences
    return result


def _describe(node: Mapping[str, Any]) -> str:
    kind = node.get("type")
    if kind in ("tuple", "list"):
        return f"{kind} of {len(node['items'])}"
    if kind == "dict":
        return f"dict with keys {sorted(node['items'])}"
    if kind == "tensor":
        return f"tensor {node['dtype']}{list(node['shape'])}"
    if kind == "scalar":
        return f"{node['pytype']} {node['value']!r}"
    if kind == "other":
        return f"{node.get('pytype')} {node.get('repr')}"
    return str(kind)


def _compare(a, a_leaves, b, b_leaves, rtol, atol, path, result: Comparison) -> None:
    diffs = result.differences
    ta, tb = a.get("type"), b.get("type")
    if ta != tb:
        diffs.append(f"{path}: structure differs ({_describe(a)} vs {_describe(b)})")
        return
    if ta in ("tuple", "list"):
        ia, ib = a["items"], b["items"]
        if len(ia) != len(ib):
            diffs.append(f"{path}: {ta} length {len(ia)} vs {len(ib)}")
            return
        for index, (xa, xb) in enumerate(zip(ia, ib)):
            _compare(xa, a_leaves, xb, b_leaves, rtol, atol, f"{path}[{index}]", result)
        return
    if ta == "dict":
        ka, kb = set(a["items"]), set(b["items"])
        if ka != kb:
            diffs.append(f"{path}: dict keys {sorted(ka)} vs {sorted(kb)}")
            return
        for key in sorted(ka):
            _compare(a["items"][key], a_leaves, b["items"][key], b_leaves, rtol, atol, f"{path}[{key!r}]", result)
        return
    if ta == "none":
        return
    if ta == "other":
        if a.get("repr") != b.get("repr"):
            diffs.append(f"{path}: {_describe(a)} vs {_describe(b)}")
        return
    if ta == "scalar":
        result.leaves += 1
        va, vb = a["value"], b["value"]
        if a.get("pytype") != b.get("pytype"):
            diffs.append(f"{path}: {_describe(a)} vs {_describe(b)}")
        elif not _scalar_close(va, vb, rtol, atol):
            diffs.append(f"{path}: {va!r} vs {vb!r}")
        return
    if ta == "tensor":
        result.leaves += 1
        if a["dtype"] != b["dtype"]:
            diffs.append(f"{path}: dtype {a['dtype']} vs {b['dtype']}")
            return
        if list(a["shape"]) != list(b["shape"]):
            diffs.append(f"{path}: shape {list(a['shape'])} vs {list(b['shape'])}")
            return
        problem = compare_arrays(a_leaves[a["key"]], b_leaves[b["key"]], rtol=rtol, atol=atol)
        if problem:
            diffs.append(f"{path}: {problem}")
        return
    diffs.append(f"{path}: cannot compare node type {ta!r}")


def _scalar_close(va, vb, rtol, atol) -> bool:
    if isinstance(va, bool) or isinstance(vb, bool) or isinstance(va, int) and isinstance(vb, int):
        return va == vb
    try:
        fa, fb = float(va), float(vb)
    except (TypeError, ValueError):
        return va == vb
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    if math.isinf(fa) or math.isinf(fb):
        return fa == fb
    return abs(fa - fb) <= atol + rtol * abs(fb)


def compare_arrays(x, y, *, rtol: float = 1e-5, atol: float = 1e-6) -> str:
    """'' when x and y agree (same shape/dtype assumed checked), else a short description of the difference."""
    import numpy as np

    x = np.asarray(x)
    y = np.asarray(y)
    if x.shape != y.shape:
        return f"shape {list(x.shape)} vs {list(y.shape)}"
    if x.dtype != y.dtype:
        return f"dtype {x.dtype} vs {y.dtype}"
    if x.size == 0:
        return ""
    if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.complexfloating)):
        unequal = x != y
        count = int(np.count_nonzero(unequal))
        if count:
            first = tuple(int(i) for i in np.argwhere(unequal)[0])
            return f"{count} of {x.size} elements differ (first at {first}: {x[first]!r} vs {y[first]!r})"
        return ""
    xf = x.astype(np.float64) if np.issubdtype(x.dtype, np.floating) else x
    yf = y.astype(np.float64) if np.issubdtype(y.dtype, np.floating) else y
    nan_x, nan_y = np.isnan(xf), np.isnan(yf)
    if not np.array_equal(nan_x, nan_y):
        return (f"NaN in different places ({int(nan_x.sum())} NaN in the original, {int(nan_y.sum())} in the "
                "rewrite)")
    inf_x, inf_y = np.isinf(xf), np.isinf(yf)
    if not np.array_equal(inf_x, inf_y) or not np.array_equal(xf[inf_x], yf[inf_y]):
        return (f"inf in different places or signs ({int(inf_x.sum())} inf in the original, {int(inf_y.sum())} in "
                "the rewrite)")
    finite = ~(nan_x | inf_x)
    fx, fy = xf[finite], yf[finite]
    close = np.isclose(fy, fx, rtol=rtol, atol=atol) if fx.size else np.ones(0, bool)
    if not close.all():
        bad = int(np.count_nonzero(~close))
        diff = np.abs(fx - fy)
        # the element furthest outside its tolerance (not the largest absolute difference, which may be a large
        # value well within rtol)
        worst = int(np.argmax(diff / (atol + rtol * np.abs(fx))))
        rel = diff[worst] / max(abs(float(fx[worst])), 1e-30)
        return (f"{bad} of {x.size} elements differ beyond rtol={rtol:g} atol={atol:g} (worst: abs diff "
                f"{float(diff[worst]):.6g}, rel {float(rel):.3g}: {float(fx[worst]):.6g} vs {float(fy[worst]):.6g}; "
                f"largest abs diff {float(diff.max()):.6g})")
    return ""


def load_leaves(npz_path: str) -> Dict[str, Any]:
    import numpy as np

    with np.load(npz_path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}
