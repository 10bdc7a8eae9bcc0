"""MSL303 stale-compile-cache-hazard: the script enables the compile cache, and graph code depends on values the
cache does not key on (environment variables, command-line arguments, config files) or on input shapes set by
them. A later run with other values silently reuses the graph compiled for the old ones.

Only the script's own cache switch counts (``os.environ[...] = "1"``, ``setdefault``, ``putenv``,
``set_context(enable_compile_cache=True)``). Flows are followed within the module (see ``_cache_flow``) into:

* arguments of ``@jit`` calls and Cell calls (a Python value is a compile-time constant; a shaped array fixes the
  input shape), and datasets given to ``Model.train/eval/predict``;
* ``Net(args.x)`` where ``Net.__init__`` stores the value on ``self`` and graph code reads it, or gives it to an nn
  layer (``nn.Dense(w, args.x)``: parameter shapes, measured stale too), also through local cells it builds;
  an nn layer built in the script itself from such a value;
* module-level names from those sources read directly in graph code (``range(STEPS)``), including names a
  function rebinds under ``global``.

``stale_cache_hazards(context)`` runs the same analysis as if the cache were on: MSL301 uses it to withhold its
fix where turning the cache on would create one of these hazards.

No fix: the remedy (a Tensor input, or no cache for such runs) is a design decision.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from ms_lint.cstutil import code_of, param_names, suite_statements, target_names, walk_statements
from ms_lint.rules._cache_common import ENABLING_TEXT, GraphRuns, enables_cache
from ms_lint.rules._cache_flow import SHAPE, VALUE, Env, Flow, Taint, union
from ms_lint.rules.base import Invalid, Rule
from ms_lint.scope import JIT_NAMES
from ms_lint.walk import find, run_visitor

MEASURED = ("reproduced on MindSpore 2.10: a loop count read from an environment variable made the cached graph "
            "return 1.0 instead of 5.0")
SHAPE_MEASURED = "measured on 2.10: 8x8 and 3x3 inputs both came back as 4x4 outputs from a cached graph"
LAYER_MEASURED = ("measured on 2.10: with the cache on, a script building `nn.Dense(4, N)` from an environment "
                  "variable kept returning 3 columns after N was changed from 3 to 5")
# nn layers whose constructor arguments become parameter shapes or graph constants (kernel sizes, keep_prob...).
# Optimizers, loss-scale and LR cells are not here: their learning rate and the like are Parameters, read at run time.
LAYER_CLASSES = re.compile(
    r"^(Dense|BiDense|Conv\w*|Embedding\w*|\w*Norm\w*|LSTM\w*|GRU\w*|RNN\w*|Dropout\w*|\w*Pool\w*|"
    r"MultiheadAttention|Transformer\w*|PReLU|PixelShuffle|PixelUnshuffle|Upsample|Unfold|Flatten|Softmax|"
    r"LogSoftmax|CentralCrop|ResizeBilinear)$")
ROUNDS = 3


class StaleCompileCacheHazard(Rule):
    code = "MSL303"
    name = "stale-compile-cache-hazard"
    summary = "Compile cache on, but graph code depends on env vars, CLI arguments or config files"
    fix_applicability = None
    requires_text = ENABLING_TEXT  # = enables_cache's first test: a file that cannot turn the cache on is skipped

    VALID = [
        # The cache is not enabled by the script.
        """\
        import os

        import mindspore as ms

        STEPS = int(os.environ.get("STEPS", "5"))


        @ms.jit
        def run(x):
            for _ in range(STEPS):
                x = x + 1
            return x
        """,
        # The value reaches graph code as a Tensor: a traced input, not a constant.
        """\
        import os
        import sys

        import numpy as np
        import mindspore as ms

        os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")


        @ms.jit
        def scale(x, factor):
            return x * factor


        if __name__ == "__main__":
            factor = ms.Tensor(float(sys.argv[1]), ms.float32)
            print(scale(ms.Tensor(np.ones((4, 4), np.float32)), factor))
        """,
    ]
    INVALID = [
        Invalid(
            """\
            import os

            import mindspore as ms

            os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"
            STEPS = int(os.environ.get("STEPS", "5"))


            @ms.jit
            def run(x):
                for _ in range(STEPS):
                    x = x + 1
                return x
            """,
        ),
        Invalid(
            """\
            import argparse
            import os

            import numpy as np
            import mindspore as ms
            from mindspore import nn

            os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")
            ms.set_context(mode=ms.GRAPH_MODE)


            class Net(nn.Cell):
                def __init__(self, depth):
                    super().__init__()
                    self.depth = depth

                def construct(self, x):
                    for _ in range(self.depth):
                        x = x * 2
                    return x


            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--depth", type=int, default=2)
                parser.add_argument("--batch_size", type=int, default=8)
                args = parser.parse_args()
                net = Net(args.depth)
                x = ms.Tensor(np.ones((args.batch_size, 4), np.float32))
                print(net(x))
            """,
        ),
    ]

    # -- driver -----------------------------------------------------------------------------------------------
    def check_module(self) -> None:
        if enables_cache(self.context):
            self.analyze()

    def analyze(self) -> None:
        """Find the hazards as if the cache were on (``check_module`` runs this only when the script turns it
        on; MSL301 runs it to decide whether turning the cache on is a safe suggestion)."""
        context = self.context
        self.hazards: List[Tuple[cst.CSTNode, str]] = []
        self.runs = GraphRuns(context)
        self.flow = Flow(context)
        self.reporting = False
        self.param_taints: Dict[str, Dict[str, Taint]] = {}
        self.reported: Set[cst.CSTNode] = set()
        functions = [f for f in context.scope.module_functions.values() if not context.scope.is_graph_function(f)]
        for _ in range(ROUNDS):  # what local functions return (``args = parse_args()``)
            for func in functions:
                returns: List[Optional[Taint]] = []
                self.flow.walk(func.body.body if isinstance(func.body, cst.IndentedBlock) else [],
                               self._function_env(func, {}), self._on_call, returns)
                self.flow.summaries[func.name.value] = union(returns)
        globals_env: Env = {}
        self.global_stores: Env = {}  # module names a function rebinds under ``global`` (``STEPS = args.steps``)
        for _ in range(ROUNDS):  # what local functions receive (``main(args)``)
            globals_env = self._module_env()
            for func in functions:
                self._walk_function(func, globals_env)
        self.reporting = True
        globals_env = self._module_env()
        for func in functions:
            self._walk_function(func, globals_env)
        self._graph_reads(_merged(globals_env, self.global_stores))

    def _module_env(self) -> Env:
        return _merged(self.flow.walk(self.context.module.body, {}, self._on_call), self.global_stores)

    def _walk_function(self, func: cst.FunctionDef, globals_env: Env) -> None:
        env = self._function_env(func, globals_env)
        env.update(self.param_taints.get(func.name.value, {}))
        body = func.body.body if isinstance(func.body, cst.IndentedBlock) else []
        final = self.flow.walk(body, env, self._on_call)
        for name in _global_names(func):
            if name in final:
                found = union([self.global_stores.get(name), final[name]])
                if found is not None:
                    self.global_stores[name] = found

    @staticmethod
    def _function_env(func: cst.FunctionDef, globals_env: Env) -> Env:
        params = param_names(func)
        return {name: taint for name, taint in globals_env.items() if name not in params}

    # -- sinks at calls ---------------------------------------------------------------------------------------
    def _on_call(self, call: cst.Call, env: Env) -> None:
        func = call.func
        scope = self.context.scope
        if isinstance(func, cst.Name) and func.value in scope.module_functions:
            self._record_params(scope.module_functions[func.value], call, env)
        if not self.reporting or call in self.reported:
            return
        kind = self.runs.call_kind(call)
        graph_ok = self.runs.graph_mode_possible
        if kind == "jit" or (kind == "cell" and graph_ok):
            self._report_arguments(call, env, shapes_only=False)
        elif kind == "model" and graph_ok:
            self._report_arguments(call, env, shapes_only=True)
        elif isinstance(func, cst.Name) and scope.is_cell_class(func.value) and (
                graph_ok or func.value in self.runs.jit_cells):
            self._report_constructor(call, func.value, env)
        elif graph_ok and self._layer_class(call) is not None:
            self._report_layer(call, env)

    def _record_params(self, callee: cst.FunctionDef, call: cst.Call, env: Env) -> None:
        if self.context.scope.is_graph_function(callee) or any(a.star for a in call.args):
            return
        params = [p.name.value for p in list(callee.params.posonly_params) + list(callee.params.params)]
        taints = self.param_taints.setdefault(callee.name.value, {})
        pairs = list(zip(params, [a.value for a in call.args if a.keyword is None]))
        pairs += [(a.keyword.value, a.value) for a in call.args if a.keyword is not None]
        for name, value in pairs:
            found = union([taints.get(name), self.flow.taint(value, env)])
            if found is not None:
                taints[name] = found

    def _report_arguments(self, call: cst.Call, env: Env, shapes_only: bool) -> None:
        constants: List[Tuple[str, Taint]] = []
        shapes: List[Tuple[str, Taint]] = []
        for arg in call.args:
            taint = self.flow.taint(arg.value, env)
            if taint is None:
                continue
            if taint.role == SHAPE:
                shapes.append((code_of(arg.value), taint))
            elif not shapes_only and not arg.star:
                constants.append((code_of(arg.value), taint))
        target = code_of(call.func)
        if constants:
            self._hazard(call, f"{_list(constants)} {'become' if len(constants) > 1 else 'becomes'} "
                               f"a compile-time constant of the graph `{target}` compiles", _constant)
        elif shapes:
            code, taint = shapes[0]
            self._hazard(call, f"the shape of `{code}`, an input of `{target}`, is set by {taint.describe()}", _shape)

    def _layer_class(self, call: cst.Call) -> Optional[str]:
        """``nn.Dense`` for a call building one of MindSpore's nn layers (see ``LAYER_CLASSES``)."""
        qualified = self.context.imports.qualify(call.func)
        if not qualified or not qualified.startswith("mindspore.nn."):
            return None
        last = qualified.rsplit(".", 1)[-1]
        return f"nn.{last}" if LAYER_CLASSES.match(last) else None

    def _report_layer(self, call: cst.Call, env: Env) -> None:
        tainted = [(code_of(arg.value), self.flow.taint(arg.value, env)) for arg in call.args if not arg.star]
        found = [(code, taint) for code, taint in tainted if taint is not None and taint.role == VALUE]
        if found:
            code, taint = found[0]
            self._hazard(call, f"`{code}` (from {taint.describe()}) sets `{self._layer_class(call)}(...)`, whose "
                               f"parameter shapes and constants are part of the graph it runs in", _layer)

    def _report_constructor(self, call: cst.Call, class_name: str, env: Env) -> None:
        init = self.context.scope.find_method(class_name, "__init__")
        if init is None:
            return
        tainted = {name: (code_of(value), taint) for name, (value, taint) in _tainted_params(
            self.flow, init, call, env).items()}
        if not tainted:
            return
        hits = self._constructor_hits(class_name, tainted, 0, frozenset())
        if not hits:
            return
        owner, attr, (code, taint) = hits[0]
        more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
        where = f"`{owner}`'s graph" if owner == class_name else f"the graph of `{owner}`, a cell `{class_name}` builds"
        if attr.startswith("nn."):
            self._hazard(call, f"`{code}` (from {taint.describe()}) sets `{attr}(...)` in `{owner}.__init__`{more}: "
                               f"its parameter shapes and constants are part of {where}", _layer)
            return
        self._hazard(call, f"`{code}` (from {taint.describe()}) is stored as `self.{attr}`{more}, a "
                           f"compile-time constant of {where}", _constant)

    def _constructor_hits(self, class_name: str, tainted: Dict[str, Tuple[str, Taint]], depth: int,
                          seen: FrozenSet[str]) -> List[Tuple[str, str, Tuple[str, Taint]]]:
        """(class, attr, (argument code, taint)) for each ``self.<attr>`` that ``class_name.__init__`` stores from a
        tainted parameter and the class's graph code reads; followed into the local cells ``__init__`` builds from
        such parameters (``self.encoder = Encoder(L, N)``), a few levels deep."""
        init = self.context.scope.find_method(class_name, "__init__")
        if init is None or class_name in seen:
            return []
        seen = seen | {class_name}
        env = {name: taint for name, (_, taint) in tainted.items()}
        stored = self._stored_attributes(init, env)
        used = self._graph_attributes(class_name)
        hits = [(class_name, attr, tainted[param]) for attr, (_, names) in stored.items() if attr in used
                for param in sorted(names) if param in tainted]
        constructions = self._cell_constructions(init, env)
        for layer_call, layer_env in constructions:
            layer = self._layer_class(layer_call)
            if layer is None:
                continue
            for arg in layer_call.args:
                taint = self.flow.taint(arg.value, layer_env)
                if taint is not None and taint.role == VALUE:
                    sources = [tainted[n] for n in sorted(_names_in(arg.value)) if n in tainted]
                    sources += [found for found in tainted.values() if found[1].origins & taint.origins]
                    if sources:
                        hits.append((class_name, layer, sources[0]))
                        break
        if hits or depth >= 3:
            return hits
        for sub_call, sub_env in constructions:
            if not (isinstance(sub_call.func, cst.Name) and self.context.scope.is_cell_class(sub_call.func.value)):
                continue
            sub_name = sub_call.func.value
            sub_init = self.context.scope.find_method(sub_name, "__init__")
            if sub_init is None:
                continue
            sub_tainted: Dict[str, Tuple[str, Taint]] = {}
            for name, (value, taint) in _tainted_params(self.flow, sub_init, sub_call, sub_env).items():
                sources = [tainted[n] for n in sorted(_names_in(value)) if n in tainted]
                sources += [found for found in tainted.values() if found[1].origins & taint.origins]
                if sources:
                    sub_tainted[name] = sources[0]
            if sub_tainted:
                found = self._constructor_hits(sub_name, sub_tainted, depth + 1, seen)
                if found:
                    return found
        return []

    def _cell_constructions(self, init: cst.FunctionDef, env: Env) -> List[Tuple[cst.Call, Env]]:
        """Calls in ``__init__`` that build a cell class of this module or an nn layer, with the taints in scope."""
        found: List[Tuple[cst.Call, Env]] = []

        def on_call(call: cst.Call, call_env: Env) -> None:
            local = isinstance(call.func, cst.Name) and self.context.scope.is_cell_class(call.func.value)
            if local or self._layer_class(call) is not None:
                found.append((call, dict(call_env)))

        body = init.body.body if isinstance(init.body, cst.IndentedBlock) else []
        self.flow.walk(body, dict(env), on_call)
        return found

    def _stored_attributes(self, init: cst.FunctionDef, env: Env) -> Dict[str, Tuple[Taint, Set[str]]]:
        """``self.<attr> = <value>`` stores in ``__init__`` whose value is tainted, with the params it reads."""
        stored: Dict[str, Tuple[Taint, Set[str]]] = {}

        def on_store(target: cst.Attribute, taint: Optional[Taint], source: cst.BaseExpression) -> None:
            if taint is None or taint.role != VALUE:
                return
            if isinstance(target.value, cst.Name) and target.value.value == "self":
                stored[target.attr.value] = (taint, _names_in(source) & set(env) | _origin_params(taint, env))

        self._walk_with_store(init, env, on_store)
        return stored

    def _walk_with_store(self, func: cst.FunctionDef, env: Env, on_store) -> None:
        previous, self.flow.on_store = self.flow.on_store, on_store
        saved_reporting, self.reporting = self.reporting, False
        try:
            body = func.body.body if isinstance(func.body, cst.IndentedBlock) else []
            self.flow.walk(body, dict(env), self._on_call)
        finally:
            self.flow.on_store = previous
            self.reporting = saved_reporting

    def _graph_attributes(self, class_name: str) -> Set[str]:
        """``self.<attr>`` names read by the class's graph functions (its own and inherited in-module ones)."""
        chain = _class_chain(self.context, class_name)
        used: Set[str] = set()
        for info in self.context.scope.graph_functions():
            if info.owner in chain:
                used |= _self_attributes(info.node)
        return used

    # -- graph code reading tainted module-level names ---------------------------------------------------------------
    def _graph_reads(self, globals_env: Env) -> None:
        scope = self.context.scope
        compiled = None if self.runs.graph_mode_possible else _under_jit(self.context)
        for info in scope.graph_functions():
            if compiled is not None and info.node not in compiled:
                continue  # a Cell's graph code runs in PyNative here
            env = {k: v for k, v in globals_env.items() if k not in _local_names(info.node)}
            finder = _TaintedReads(self.flow, env)
            run_visitor(info.node.body, finder)
            for node, taint in finder.found:
                self._hazard(node, f"`{code_of(node)}` (from {taint.describe()}) is a compile-time "
                                   f"constant of the graph function `{info.node.name.value}`", _constant)
        # Cell.__init__ storing such a value on self, read by graph code.
        for class_name, cls in scope.classes.items():
            if not cls.is_cell or not (self.runs.graph_mode_possible or class_name in self.runs.jit_cells):
                continue
            init = cls.methods.get("__init__")
            if init is None:
                continue
            used = self._graph_attributes(class_name)
            env = {k: v for k, v in globals_env.items() if k not in _local_names(init)}
            if not used:
                continue

            def on_store(target, taint, source, used=used, class_name=class_name):
                if (taint is not None and taint.role == VALUE and isinstance(target.value, cst.Name)
                        and target.value.value == "self" and target.attr.value in used):
                    self._hazard(source, f"`{code_of(source)}` (from {taint.describe()}) is stored as "
                                         f"`self.{target.attr.value}`, a compile-time constant of "
                                         f"`{class_name}`'s graph", _constant)

            self._walk_with_store(init, env, on_store)

    # -- reporting ------------------------------------------------------------------------------------------------
    def _hazard(self, node: cst.CSTNode, what: str, message: Callable[[str], str]) -> None:
        if node not in self.reported:
            self.reported.add(node)
            self.hazards.append((node, what))
            self.report(node, _SHORT[message], detail=message(what))


def stale_cache_hazards(context) -> List[Tuple[cst.CSTNode, str]]:
    """(node, what) for each value that would go stale if this script turned the compile cache on."""
    rule = StaleCompileCacheHazard(context)
    rule.analyze()
    return rule.hazards


def _tainted_params(flow: Flow, init: cst.FunctionDef, call: cst.Call, env: Env
                    ) -> Dict[str, Tuple[cst.BaseExpression, Taint]]:
    """``__init__`` parameter -> (argument, VALUE taint) for the arguments of ``call`` that carry one."""
    if any(a.star for a in call.args):
        return {}
    params = [p.name.value for p in list(init.params.posonly_params) + list(init.params.params)][1:]
    pairs = list(zip(params, [a.value for a in call.args if a.keyword is None]))
    pairs += [(a.keyword.value, a.value) for a in call.args if a.keyword is not None]
    found: Dict[str, Tuple[cst.BaseExpression, Taint]] = {}
    for name, value in pairs:
        taint = flow.taint(value, env)
        if taint is not None and taint.role == VALUE:
            found[name] = (value, taint)
    return found


def _global_names(func: cst.FunctionDef) -> Set[str]:
    """Names a function declares ``global`` (its own body, nested defs excluded)."""
    names: Set[str] = set()
    for stmt in walk_statements(suite_statements(func.body), into_defs=False):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Global):
                    names.update(item.name.value for item in small.names)
    return names


def _merged(env: Env, extra: Env) -> Env:
    out = dict(env)
    for name, taint in extra.items():
        found = union([out.get(name), taint])
        if found is not None:
            out[name] = found
    return out


def _constant(what: str) -> str:
    return (f"This script enables the compile cache, but {what}. The cache keys only on the script and its local "
            f"imports, so a run with another value silently reuses the graph compiled for the old one ({MEASURED}); "
            f"make it a Tensor input where it can be one, or keep the cache off for runs that change it")


def _layer(what: str) -> str:
    return (f"This script enables the compile cache, but {what}. The cache does not notice a change of them, so a run "
            f"with another value silently reuses the graph compiled for the old one ({LAYER_MEASURED}); keep the "
            f"cache off for runs that change it")


def _shape(what: str) -> str:
    return (f"This script enables the compile cache, but {what}. The cache does not key on input shapes, so a run "
            f"with another shape silently reuses the graph compiled for the old one ({SHAPE_MEASURED}); keep the "
            f"cache off for runs that change it")


_SHORT = {
    _constant: "compile cache on, but this value is a graph constant: keep the cache off for runs that change it",
    _layer: "compile cache on, but this value sets a layer's shapes: keep the cache off for runs that change it",
    _shape: "compile cache on, but this sets an input's shape: keep the cache off for runs that change it",
}


def _under_jit(context) -> Set[cst.FunctionDef]:
    """Graph functions compiled even in PyNative mode: ``@jit`` / ``ms.jit(f)`` roots and what they call."""
    scope = context.scope
    found = {info.node for info in scope.graph_functions()
             if info.is_root and not (info.owner is not None and scope.is_cell_class(info.owner)
                                      and info.node.name.value == "construct"
                                      and not any(d in JIT_NAMES for d in scope.decorator_names(info.node)))}
    changed = True
    while changed:
        changed = False
        for callee, sites in scope.call_sites.items():
            if callee not in found and any(site.caller in found for site in sites):
                found.add(callee)
                changed = True
    return found


def _list(items: List[Tuple[str, Taint]]) -> str:
    seen: Dict[str, Taint] = {}
    for code, taint in items:
        seen.setdefault(code, taint)
    texts = [f"`{code}` (from {taint.describe()})" for code, taint in list(seen.items())[:3]]
    return ", ".join(texts) + (" ..." if len(seen) > 3 else "")


def _names_in(node: cst.CSTNode) -> Set[str]:
    return {name.value for name in find(node, cst.Name)}


def _origin_params(taint: Taint, env: Env) -> Set[str]:
    """Params whose taint shares an origin with ``taint`` (values that went through local variables)."""
    return {name for name, other in env.items() if other.origins & taint.origins}


def _local_names(func: cst.FunctionDef) -> Set[str]:
    """Parameters and every name the function binds (assignments, loop targets, with-as, imports)."""
    names = param_names(func)

    class Bound(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            pass

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            names.update(target_names(node.target, include_starred=True))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            names.update(target_names(node.target, include_starred=True))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            names.update(target_names(node.target, include_starred=True))

        def visit_For(self, node: cst.For) -> None:
            names.update(target_names(node.target, include_starred=True))

        def visit_CompFor(self, node: cst.CompFor) -> None:
            names.update(target_names(node.target, include_starred=True))

        def visit_AsName(self, node: cst.AsName) -> None:
            names.update(target_names(node.name, include_starred=True))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            names.update(target_names(node.target, include_starred=True))

        def visit_Global(self, node: cst.Global) -> None:
            for item in node.names:
                names.discard(item.name.value)

    run_visitor(func.body, Bound())
    return names


def _self_attributes(func: cst.FunctionDef) -> Set[str]:
    return {node.attr.value for node in find(func.body, cst.Attribute)
            if isinstance(node.value, cst.Name) and node.value.value == "self"}


def _class_chain(context, class_name: str) -> Set[str]:
    chain: Set[str] = set()
    pending = [class_name]
    while pending:
        name = pending.pop()
        if name in chain or name not in context.scope.classes:
            continue
        chain.add(name)
        pending.extend(context.scope.classes[name].base_names)
    return chain


class _TaintedReads(cst.CSTVisitor):
    """The outermost tainted reads in a graph function body (names, attributes, subscripts, source calls)."""

    def __init__(self, flow: Flow, env: Env):
        super().__init__()
        self.flow = flow
        self.env = env
        self.found: List[Tuple[cst.CSTNode, Taint]] = []

    def _check(self, node: cst.BaseExpression) -> bool:
        taint = self.flow.taint(node, self.env)
        if taint is not None:
            self.found.append((node, taint))
            return False
        return True

    def visit_Name(self, node: cst.Name) -> bool:
        return self._check(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if not self._check(node):
            return False
        run_visitor(node.value, self)  # never the ``.attr`` name
        return False

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        return self._check(node)

    def visit_Call(self, node: cst.Call) -> bool:
        return self._check(node)

    def visit_Arg(self, node: cst.Arg) -> bool:
        run_visitor(node.value, self)  # never the keyword name
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False
