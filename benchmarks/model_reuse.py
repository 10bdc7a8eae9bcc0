"""How much of the language server's value-model work an edit could keep: an upper bound, for issue 19's 50 ms.

The same edits as ``server_latency.py`` (``Checker.check`` in this process, the edited file of each target). After
each edit, every root value model the check built (``ModuleContext.values``) for a function of the edited file
whose node the edit left alone (the incremental parser keeps the nodes of untouched statements) is compared with
the previous check's model of that node: the same when every expression of the body has the same kind. Prints how
many models and how much of the model-building CPU time (nested models included) such models take per edit.

    python benchmarks/model_reuse.py [--edits 30]

Nothing is reused here: the engine builds every model at every edit. The count says what an exact reuse could
save at most (benchmarks/README.md, "Editor latency").
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def measure(path: Path, edits: int) -> Tuple[int, int, float, float]:
    """(models of untouched functions that stayed the same, models, their build time, all build time) per edit."""
    import libcst as cst

    import ms_lint.context as context_module
    import server_latency
    from ms_lint.lsp.documents import Checker
    from ms_lint.walk import iter_nodes

    target = os.path.abspath(path)
    kinds_now: Dict[cst.FunctionDef, tuple] = {}
    built: List[Tuple[cst.FunctionDef, float]] = []
    real_values, real_model = context_module.ModuleContext.values, context_module.ModuleContext._model

    def model(self, func, param_kinds):
        start = time.process_time()
        found = real_model(self, func, param_kinds)
        built.append((func, time.process_time() - start))
        return found

    def values(self, func):
        fresh = func not in self._values
        found = real_values(self, func)
        if fresh and os.path.abspath(self.path) == target:
            kinds_now[func] = tuple(found.kind(node) for node in iter_nodes(func.body, cst.BaseExpression))
        return found

    context_module.ModuleContext.values, context_module.ModuleContext._model = values, model
    try:
        checker = Checker()
        text = path.read_text(encoding="utf-8")
        checker.check(str(path), text)
        before = dict(kinds_now)
        same = total = 0
        same_time = all_time = 0.0
        for _, _, after in server_latency.edits(text, edits):
            kinds_now.clear()
            built.clear()
            checker.check(str(path), after)
            spent: Dict[cst.FunctionDef, float] = {}
            for func, seconds in built:
                spent[func] = spent.get(func, 0.0) + seconds
            all_time += sum(spent.get(func, 0.0) for func in kinds_now)
            for func, kinds in kinds_now.items():
                total += 1
                if before.get(func) == kinds:
                    same += 1
                    same_time += spent.get(func, 0.0)
            before = dict(kinds_now)
    finally:
        context_module.ModuleContext.values, context_module.ModuleContext._model = real_values, real_model
    return same, total, same_time / edits, all_time / edits


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=30)
    args = parser.parse_args(argv)
    import server_latency

    with tempfile.TemporaryDirectory() as work:
        for label, path in server_latency.prepare(Path(work)):
            same, total, same_time, all_time = measure(path, args.edits)
            print(f"{label}: {same} of {total} root models the same after the edit, "
                  f"{same_time * 1000:.1f} of {all_time * 1000:.1f} ms of model building per edit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
