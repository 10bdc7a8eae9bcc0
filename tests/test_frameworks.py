"""Graph code a framework reaches through configuration (ms_lint/analysis/frameworks.py): MindSpore Reinforcement's
``self.msrl.agent_learn(...)`` in a ``@jit`` trainer method compiles the configured Learner's ``learn``.

The framework itself is a small stand-in installed outside the project (the index reads it, never imports it);
the algorithm package is written here, in the layout MindSpore Reinforcement's own algorithms use: a trainer module
and an agents module side by side."""
import os
import textwrap

import pytest
from project_support import json_check, make

from ms_lint.analysis.frameworks import MSRL_ACTOR, MSRL_LEARNER, msrl_target

FRAMEWORK = {
    "mindspore_rl/__init__.py": "",
    "mindspore_rl/agent/__init__.py": """\
        from mindspore_rl.agent.actor import Actor
        from mindspore_rl.agent.learner import Learner
        from mindspore_rl.agent.trainer import Trainer
        """,
    "mindspore_rl/agent/trainer.py": """\
        from mindspore import nn


        class Trainer(nn.Cell):
            def __init__(self, msrl):
                super().__init__(auto_prefix=False)
                self.msrl = msrl
        """,
    "mindspore_rl/agent/learner.py": """\
        from mindspore import nn


        class Learner(nn.Cell):
            def learn(self, experience):
                raise NotImplementedError
        """,
    "mindspore_rl/agent/actor.py": """\
        from mindspore import nn


        class Actor(nn.Cell):
            def act(self, phase, params):
                raise NotImplementedError
        """,
}

TRAINER = textwrap.dedent("""\
    import mindspore as ms
    from mindspore_rl.agent import trainer


    class PPOTrainer(trainer.Trainer):
        def __init__(self, msrl, params):
            super().__init__(msrl)
            self.num_steps = params["num_steps"]

        @ms.jit
        def train_one_episode(self):
            obs = self.msrl.collect_environment.reset()
            reward = self.msrl.agent_act(1, obs)
            loss = self.msrl.agent_learn(self.msrl.replay_buffer_sample())
            self.msrl.learner.sync_target()
            return loss, reward
    """)

AGENTS = textwrap.dedent("""\
    import mindspore as ms
    from mindspore import nn, ops
    from mindspore_rl.agent.actor import Actor
    from mindspore_rl.agent.learner import Learner


    class PPOActor(Actor):
        def __init__(self, policy):
            super().__init__()
            self.policy = policy
            self.explore = True

        def act(self, phase, params):
            action = self.policy(params)
            if self.explore:
                action = action + 0.1
            if action.max() > 1.0:
                action = ops.clip_by_value(action, -1.0, 1.0)
            return action


    class PPOLearner(Learner):
        def __init__(self, loss_net, optimizer):
            super().__init__()
            self.train_net = nn.TrainOneStepWithLossScaleCell(loss_net, optimizer, ms.Tensor(1024.0))
            self.updates = ms.Parameter(ms.Tensor(0, ms.int32), name="updates")

        def learn(self, experience):
            loss, overflow, _ = self.train_net(*experience)
            if overflow:
                loss = ops.zeros_like(loss)
            return loss

        def sync_target(self):
            if self.updates % 100 == 0:
                self.updates = self.updates + 1
            return self.updates
    """)


def check(root, capsys, *args):
    return sorted((f["path"].replace(os.sep, "/"), f["line"], f["code"]) for f in json_check(root, capsys, *args)[1])


@pytest.fixture
def installed(tmp_path, monkeypatch):
    site = make(tmp_path / "site", FRAMEWORK)
    monkeypatch.syspath_prepend(str(site))
    return tmp_path / "proj"


def test_a_jit_trainer_compiles_the_learner_and_actor_it_calls_through_msrl(installed, capsys):
    make(installed, {"algo/__init__.py": "", "algo/ppo_trainer.py": TRAINER, "algo/ppo.py": AGENTS})
    found = check(installed, capsys, "algo")
    assert found == [
        ("algo/ppo.py", 17, "MSL201"),  # act: `if action.max() > 1.0` (`if self.explore` is a Python flag)
        ("algo/ppo.py", 30, "MSL201"),  # learn: `if overflow`, the loss-scale cell's flag
        ("algo/ppo.py", 35, "MSL201"),  # sync_target, through `self.msrl.learner.sync_target()`
    ]


def test_a_trainer_method_without_jit_runs_the_agents_eagerly(installed, capsys):
    make(installed, {"algo/__init__.py": "", "algo/ppo_trainer.py": TRAINER.replace("    @ms.jit\n", ""),
                     "algo/ppo.py": AGENTS})
    assert check(installed, capsys, "algo") == []


def test_agents_of_another_package_are_not_taken_for_the_configured_ones(installed, capsys):
    make(installed, {"algo/__init__.py": "", "algo/ppo_trainer.py": TRAINER,
                     "other/__init__.py": "", "other/ppo.py": AGENTS})
    assert check(installed, capsys, "algo", "other") == []


def test_scripts_in_one_folder_pair_up_and_scripts_in_two_do_not(installed, capsys):
    """Folders without ``__init__.py``: the trainer and its agents side by side are paired; a learner in another
    script folder checked in the same run is not taken for the trainer's."""
    make(installed, {"flat/ppo_trainer.py": TRAINER, "flat/ppo.py": AGENTS})
    assert [line for _, line, _ in check(installed, capsys, "flat")] == [17, 30, 35]
    make(installed, {"runs/ppo_trainer.py": TRAINER, "agents/ppo.py": AGENTS})
    assert check(installed, capsys, "runs", "agents") == []


def test_a_trainer_in_a_package_init_pairs_with_the_package_modules(installed, capsys):
    make(installed, {"algo/__init__.py": TRAINER, "algo/ppo.py": AGENTS, "top.py": AGENTS})
    assert check(installed, capsys, "algo", "top.py") == [
        ("algo/ppo.py", 17, "MSL201"), ("algo/ppo.py", 30, "MSL201"), ("algo/ppo.py", 35, "MSL201")]


def test_self_msrl_of_a_class_that_is_not_a_trainer_resolves_nothing(installed, capsys):
    not_a_trainer = TRAINER.replace("from mindspore_rl.agent import trainer", "from mindspore import nn").replace(
        "trainer.Trainer", "nn.Cell").replace("super().__init__(msrl)", "super().__init__()\n        self.msrl = msrl")
    make(installed, {"algo/__init__.py": "", "algo/ppo_trainer.py": not_a_trainer, "algo/ppo.py": AGENTS})
    assert check(installed, capsys, "algo") == []


def test_the_framework_base_method_alone_is_not_graph_code_of_the_project(installed, capsys):
    # a Learner subclass that does not define ``learn`` inherits the framework's, which is not the project's code
    agents = AGENTS.replace("def learn(self, experience):", "def fit(self, experience):")
    make(installed, {"algo/__init__.py": "", "algo/ppo_trainer.py": TRAINER, "algo/ppo.py": agents})
    assert check(installed, capsys, "algo") == [("algo/ppo.py", 17, "MSL201"), ("algo/ppo.py", 35, "MSL201")]


@pytest.mark.parametrize("dotted, expected", [
    ("self.msrl.agent_learn", (MSRL_LEARNER, "learn")),
    ("self.msrl.agent_act", (MSRL_ACTOR, "act")),
    ("self.msrl.agent_get_action", (MSRL_ACTOR, "get_action")),
    ("self.msrl.learner.update", (MSRL_LEARNER, "update")),
    ("self.msrl.actors.get_action", (MSRL_ACTOR, "get_action")),
    ("self.msrl.actors[].act", (MSRL_ACTOR, "act")),  # ``self.msrl.actors[rank_id].act``, as summaries record it
    ("self.msrl.replay_buffer_sample", None),
    ("self.msrl.collect_environment.reset", None),
    ("msrl.agent_learn", None),
    ("self.other.agent_learn", None),
    ("self.msrl.learner.net.update", None),
])
def test_which_calls_msrl_dispatches(dotted, expected):
    assert msrl_target(dotted) == expected


def test_a_cached_check_sees_the_trainer_stop_compiling_the_agents(installed, capsys):
    make(installed, {"algo/__init__.py": "", "algo/ppo_trainer.py": TRAINER, "algo/ppo.py": AGENTS})
    cached = ("--cache-dir", str(installed / ".cache"))
    first = check(installed, capsys, *cached, "algo")
    assert [line for _, line, _ in first] == [17, 30, 35]
    (installed / "algo/ppo_trainer.py").write_text(TRAINER.replace("    @ms.jit\n", ""))
    assert check(installed, capsys, *cached, "algo") == []


COLLECTOR = textwrap.dedent("""\
    import mindspore as ms
    from mindspore_rl.agent.trainer import Trainer


    class Collector(Trainer):
        @ms.jit
        def collect(self, action):
            new_obs, reward, done = self.msrl.collect_environment.step(action)
            if done:
                new_obs = self.msrl.collect_environment.reset()
            if self.msrl.eval_environment.reset().sum() > 0:
                reward = reward * 2
            return new_obs, reward
    """)


def test_what_a_trainer_gets_from_msrl_environments_are_tensors(installed, capsys):
    make(installed, {"algo/__init__.py": "", "algo/collector.py": COLLECTOR})
    assert check(installed, capsys, "algo") == [("algo/collector.py", 9, "MSL201"), ("algo/collector.py", 11, "MSL201")]


@pytest.mark.parametrize("change", [
    # a Cell that is no trainer: its ``self.msrl`` is whatever it was given
    lambda text: text.replace("from mindspore_rl.agent.trainer import Trainer", "from mindspore import nn").replace(
        "(Trainer)", "(nn.Cell)"),
    # an environment the trainer holds itself, not MSRL's: its return kinds are unknown
    lambda text: text.replace("self.msrl.collect_environment", "self.env").replace(
        "self.msrl.eval_environment", "self.env"),
])
def test_environment_look_alikes_stay_unknown(installed, capsys, change):
    make(installed, {"algo/__init__.py": "", "algo/collector.py": change(COLLECTOR)})
    assert check(installed, capsys, "algo") == []


def test_one_of_several_actors_is_compiled_too(installed, capsys):
    """A3C's trainer picks its actor by rank: ``self.msrl.actors[rank_id].act(...)``."""
    trainer = TRAINER.replace("reward = self.msrl.agent_act(1, obs)",
                              "reward = self.msrl.actors[self.rank].act(1, obs)")
    make(installed, {"algo/__init__.py": "", "algo/ppo_trainer.py": trainer, "algo/ppo.py": AGENTS})
    assert check(installed, capsys, "algo") == [
        ("algo/ppo.py", 17, "MSL201"), ("algo/ppo.py", 30, "MSL201"), ("algo/ppo.py", 35, "MSL201")]
    without = trainer.replace("reward = self.msrl.actors[self.rank].act(1, obs)", "reward = obs")
    (installed / "algo/ppo_trainer.py").write_text(without)
    assert check(installed, capsys, "algo") == [("algo/ppo.py", 30, "MSL201"), ("algo/ppo.py", 35, "MSL201")]
