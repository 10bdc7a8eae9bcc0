"""Calls that a framework dispatches to project code the index cannot resolve by names alone.

MindSpore Reinforcement (``mindspore_rl``): a ``Trainer`` keeps the ``MSRL`` object it is built with in
``self.msrl``, and ``MSRL.__init__`` binds ``agent_act``/``agent_learn``/``agent_get_action`` to the ``act``,
``learn`` and ``get_action`` methods of the Actor and Learner that the algorithm's configuration names
(``config["learner"]["type"]``), and keeps them as ``self.actors`` (a ``CellList`` of them when there are several)
and ``self.learner``. A trainer's ``@jit`` method that calls ``self.msrl.agent_learn(batch)`` compiles the configured
Learner's ``learn`` into its graph. The configuration is a dict the index does not follow (and may live outside the
package: mindspore-rl's QMIX names its SMAC learner in no module of its own), so the candidates are the project's
Learner (Actor) subclasses that define the method in the trainer's own folder: an algorithm's trainer and its agents
live side by side (``algorithm/dqn/dqn_trainer.py`` and ``algorithm/dqn/dqn.py``); one elsewhere is left out, a miss
rather than a guess. Within the folder it is a guess: a folder with a ``@jit`` trainer and an eager one using
another Learner would have both Learners taken for graph code (in mindspore-rl 0.7.0 no folder does: the eager
methods only read ``trainable_variables``, or, in COMA, no method of the trainer compiles).

The same ``MSRL`` object holds the configured environments, ``self.msrl.collect_environment`` and
``self.msrl.eval_environment``: Cells whose ``step`` and ``reset`` give Tensors in graph code (a Python environment
is wrapped in ``PyFunc`` ops), so what a trainer's graph method unpacks from them are Tensors (``new_obs, reward,
done = self.msrl.collect_environment.step(action)``).

Every rule here needs the base classes to be readable: ``mindspore_rl`` installed (or checked with the project), its
source found without importing it. Without it no class is a ``Trainer`` and nothing is dispatched.
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Sequence, Tuple, TypeVar

ClassRef = Tuple[str, str]  # (module name, class qualname)
Method = TypeVar("Method")

MSRL_TRAINER: ClassRef = ("mindspore_rl.agent.trainer", "Trainer")
MSRL_LEARNER: ClassRef = ("mindspore_rl.agent.learner", "Learner")
MSRL_ACTOR: ClassRef = ("mindspore_rl.agent.actor", "Actor")

# ``self.msrl.<name>(...)`` -> (the base class, the method of its subclasses that runs)
MSRL_BOUND = {
    "agent_learn": (MSRL_LEARNER, "learn"),
    "agent_act": (MSRL_ACTOR, "act"),
    "agent_get_action": (MSRL_ACTOR, "get_action"),
}
# ``self.msrl.<attribute>.<method>(...)`` -> the base class of the object the attribute holds
MSRL_HELD = {"learner": MSRL_LEARNER, "actors": MSRL_ACTOR,
             "actors[]": MSRL_ACTOR}  # ``self.msrl.actors[rank_id].act(...)``: one of several actors (A3C)
# Calls a trainer's graph method makes on MSRL's environments: each gives Tensors
MSRL_ENVIRONMENT_CALLS = frozenset(f"self.msrl.{environment}.{method}"
                                   for environment in ("collect_environment", "eval_environment")
                                   for method in ("step", "reset"))
_PREFIX = "self.msrl."


def may_dispatch(dotted: str) -> bool:
    """A cheap first test: could a framework dispatch this call (as the summaries write it)?"""
    return dotted.startswith(_PREFIX)


def msrl_target(dotted: str) -> Optional[Tuple[ClassRef, str]]:
    """(base class, method) a call written ``self.msrl.agent_learn``, ``self.msrl.learner.update`` or
    ``self.msrl.actors[].act`` (as the summary records ``self.msrl.actors[i].act``) reaches, or None for any other
    call."""
    parts = dotted.split(".")
    if len(parts) == 3 and parts[:2] == ["self", "msrl"]:
        return MSRL_BOUND.get(parts[2])
    if len(parts) == 4 and parts[:2] == ["self", "msrl"] and parts[2] in MSRL_HELD:
        return MSRL_HELD[parts[2]], parts[3]
    return None


def dispatched_methods(dotted: str, caller_chain: Callable[[], Sequence[ClassRef]],
                       classes: Iterable[ClassRef], chain_of: Callable[[ClassRef], Sequence[ClassRef]],
                       method_of: Callable[[ClassRef, str], Optional[Tuple[ClassRef, Method]]]
                       ) -> List[Tuple[ClassRef, Method]]:
    """(owner class, method) of each method a framework call may run: ``dotted`` as written in a method of a class
    whose method-resolution chain ``caller_chain()`` gives; ``classes``: the candidate classes (the project's, in the
    caller's folder); ``chain_of``/``method_of``: the index's chain and method lookup. A method only the framework's
    base class defines is left out (it is not the project's code)."""
    target = msrl_target(dotted)
    if target is None or MSRL_TRAINER not in caller_chain():
        return []
    base, method = target
    found = {}
    for ref in classes:
        if ref == base or base not in chain_of(ref):
            continue
        resolved = method_of(ref, method)
        if resolved is not None and resolved[0] != base:
            found[resolved[0]] = resolved
    return list(found.values())


def gives_tensors(dotted: Optional[str], caller_chain: Callable[[], Sequence[ClassRef]]) -> bool:
    """Does a call written ``dotted``, in a method of a class whose chain ``caller_chain()`` gives, return Tensors
    (``self.msrl.collect_environment.step(...)`` in a Trainer)?"""
    return dotted in MSRL_ENVIRONMENT_CALLS and MSRL_TRAINER in caller_chain()
