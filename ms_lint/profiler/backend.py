"""The backend's own breakdown of ``task_emit``: the ``[PROF]`` steps of ``compile_statistics:True``.

MindSpore 2.10 prints each step when it ends, children before their parent, without saying which is which; the
nesting below was read from the times (a parent's time covers its children's) on CPU. ``CompileSubGraph`` runs
its steps once per kernel graph: a graph with control flow is cut into several (``fixtures/profile/cells.py``
``Net``, one tensor ``if``: 4), so ``ConstructKernelGraph`` counts them. The steps are part of ``task_emit`` and
are reported, not attributed again (``task_emit`` is already split over the lines by node share).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ms_lint.profiler.parse import CompileTimes

ROOT = "compile_backend_graph"
PARENTS: Dict[str, str] = {
    "WaitAllCommInit": ROOT, "CompileSubGraph": ROOT, "GraphScheduler": ROOT,
    "ConstructKernelGraph": "CompileSubGraph", "OptimizeGraph": "CompileSubGraph", "CreateKernel": "CompileSubGraph",
    "PreprocessBeforeRun": "CompileSubGraph", "CreateDeviceAddress": "CompileSubGraph",
    "EliminateIllegalDataTypePass": "OptimizeGraph", "CommonUnifyMindIR": "OptimizeGraph",
    "BackendCommonOptimization": "OptimizeGraph", "OptimizationWithoutBackend": "OptimizeGraph",
    "CustomOptimization": "OptimizeGraph",
    "GraphSchedulerLink": "GraphScheduler", "GraphSchedulerLinkNoSinkMode": "GraphSchedulerLink",
    ROOT: "compile_graph", "ParallelPostProcess": "compile_graph", "CleanCompileRes": "compile_graph",
}
# disjoint parts of compile_backend_graph, the ones the text shows
SHOWN = ("OptimizeGraph", "CreateKernel", "ConstructKernelGraph", "CreateDeviceAddress", "GraphScheduler")


@dataclass
class BackendStep:
    name: str
    seconds: float = 0.0
    count: int = 0

    @property
    def parent(self) -> Optional[str]:
        return PARENTS.get(self.name)


@dataclass
class Backend:
    steps: List[BackendStep] = field(default_factory=list)  # summed over graphs, in the order first printed

    def seconds(self, name: str) -> float:
        return sum(s.seconds for s in self.steps if s.name == name)

    def count(self, name: str) -> int:
        return sum(s.count for s in self.steps if s.name == name)

    @property
    def total_s(self) -> float:
        return self.seconds(ROOT)

    @property
    def kernel_graphs(self) -> int:
        return self.count("ConstructKernelGraph")

    def parts(self) -> List[Tuple[str, float]]:
        """The shown parts, most seconds first, then ``other`` (the rest of ``compile_backend_graph``)."""
        parts = sorted(((n, self.seconds(n)) for n in SHOWN if self.count(n)), key=lambda p: -p[1])
        rest = self.total_s - sum(t for _, t in parts)
        if rest > 0.0005:
            parts.append(("other", rest))
        return parts


def backend_of(compiles: Sequence[CompileTimes]) -> Backend:
    backend = Backend()
    index: Dict[str, BackendStep] = {}
    for times in compiles:
        for name, seconds in times.backend:
            step = index.get(name)
            if step is None:
                step = index[name] = BackendStep(name)
                backend.steps.append(step)
            step.seconds += seconds
            step.count += 1
    return backend
