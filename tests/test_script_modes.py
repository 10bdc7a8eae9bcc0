"""MSL301 on entry scripts as real projects write them: the mode from an ``if`` on an argparse string, from a
YAML or JSON config the script names, through a dict of modes, or set by a helper in another module; and a Cell
built and called in one expression. Each with the look-alike that must stay quiet."""
import json
import os
import textwrap

import pytest
from project_support import json_check, make

from ms_lint.analysis.config_files import UNKNOWN, read_yaml_mappings
from ms_lint.cli import main


def check(tmp_path, capsys, *paths):
    return [(f["path"].replace(os.sep, "/"), f["line"], f["code"], f["message"], f.get("fix"))
            for f in json_check(tmp_path, capsys, *paths)[1] if f["code"] == "MSL301"]


RUN_A_CELL = """\
    net = nn.Dense(2, 2)
    print(net(ms.Tensor([[1.0, 2.0]])))
"""


def script(set_context_line, prelude=""):
    return (textwrap.dedent(prelude) + "\n" + textwrap.dedent(f"""\
        if __name__ == "__main__":
            {set_context_line}
        """) + textwrap.indent(textwrap.dedent(RUN_A_CELL), "    "))


HEADER = """\
    import argparse
    import json

    import mindspore as ms
    import yaml
    from mindspore import context, nn
    """


# -- the mode read from argparse strings, dicts and config files ---------------------------------------------
GRAPH_SPELLINGS = {
    "ifexp_on_upper": (
        'parser = argparse.ArgumentParser()\nparser.add_argument("--mode", type=str, default="graph")\n'
        'args = parser.parse_args()\n',
        'context.set_context(mode=context.GRAPH_MODE if args.mode.upper() == "GRAPH" else context.PYNATIVE_MODE)'),
    "ifexp_on_startswith": (
        'parser = argparse.ArgumentParser()\nparser.add_argument("--mode", default="GRAPH")\n'
        'args = parser.parse_args()\n',
        'context.set_context(mode=context.GRAPH_MODE if args.mode.upper().startswith("GRAPH") '
        'else context.PYNATIVE_MODE)'),
    "dict_of_modes": (
        'MODES = {"GRAPH": context.GRAPH_MODE, "PYNATIVE": context.PYNATIVE_MODE}\n'
        'parser = argparse.ArgumentParser()\nparser.add_argument("--mode", default="GRAPH")\n'
        'args = parser.parse_args()\n',
        'ms.set_context(mode=MODES[args.mode])'),
    "yaml_key": (
        'config = yaml.safe_load(open("configs/train.yaml"))\n',
        'ms.set_context(mode=config["context"]["mode"])'),
    "yaml_loader_helper_and_ifexp": (
        'def load_yaml_config(path):\n    with open(path) as f:\n        return yaml.safe_load(f)\n\n'
        'cfg = load_yaml_config("./configs/train.yaml")\n',
        'ms.set_context(mode=ms.GRAPH_MODE if cfg["context"]["run"] == "GRAPH" else ms.PYNATIVE_MODE)'),
    "json_with_open": (
        'with open("configs/train.json") as f:\n    cfg = json.load(f)\n',
        'ms.set_context(mode=cfg.get("mode", 1))'),
}

PYNATIVE_OR_UNKNOWN = {
    "ifexp_pynative_default": (
        'parser = argparse.ArgumentParser()\nparser.add_argument("--mode", default="pynative")\n'
        'args = parser.parse_args()\n',
        'context.set_context(mode=context.GRAPH_MODE if args.mode.upper() == "GRAPH" else context.PYNATIVE_MODE)'),
    "yaml_pynative": (
        'config = yaml.safe_load(open("configs/pynative.yaml"))\n',
        'ms.set_context(mode=config["context"]["mode"])'),
    "yaml_missing_file": (
        'config = yaml.safe_load(open("configs/absent.yaml"))\n',
        'ms.set_context(mode=config["context"]["mode"])'),
    "yaml_key_holds_a_list": (
        'config = yaml.safe_load(open("configs/train.yaml"))\n',
        'ms.set_context(mode=config["modes"])'),
    "config_rebound": (
        'config = yaml.safe_load(open("configs/train.yaml"))\nconfig = yaml.safe_load(open("configs/pynative.yaml"))\n',
        'ms.set_context(mode=config["context"]["mode"])'),
    "config_path_from_the_environment": (
        'import os\nconfig = yaml.safe_load(open(os.environ["CFG"]))\n',
        'ms.set_context(mode=config["context"]["mode"])'),
    "json_get_default_pynative": (
        'with open("configs/train.json") as f:\n    cfg = json.load(f)\n',
        'ms.set_context(mode=cfg.get("other_mode", 1))'),
}

CONFIGS = {
    "configs/train.yaml": """\
        # training configuration
        context:
          mode: 0          # 0 = GRAPH_MODE
          run: "GRAPH"
          device_target: CPU
        modes:
          - 0
          - 1
        optimizer:
          lr: 1.0e-3
        """,
    "configs/pynative.yaml": """\
        context:
          mode: 1
          run: PYNATIVE
        """,
    "configs/train.json": '{"mode": 0, "epochs": 2}\n',
}


@pytest.mark.parametrize("name", sorted(GRAPH_SPELLINGS))
def test_a_default_graph_mode_read_through_the_script_is_reported_at_set_context(tmp_path, capsys, name):
    prelude, line = GRAPH_SPELLINGS[name]
    make(tmp_path, {**CONFIGS, "train.py": script(line, textwrap.dedent(HEADER) + prelude)})
    found = check(tmp_path, capsys, "train.py")
    lines = (tmp_path / "train.py").read_text().splitlines()
    assert [(path, code) for path, _, code, _, _ in found] == [("train.py", "MSL301")]
    assert "set_context" in lines[found[0][1] - 1]


@pytest.mark.parametrize("name", sorted(PYNATIVE_OR_UNKNOWN))
def test_a_pynative_or_unreadable_default_is_not_reported(tmp_path, capsys, name):
    prelude, line = PYNATIVE_OR_UNKNOWN[name]
    make(tmp_path, {**CONFIGS, "train.py": script(line, textwrap.dedent(HEADER) + prelude)})
    assert check(tmp_path, capsys, "train.py") == []


def test_the_config_is_found_next_to_the_script_not_in_the_working_folder(tmp_path, capsys):
    prelude, line = GRAPH_SPELLINGS["yaml_key"]
    make(tmp_path, {**{f"app/{k}": v for k, v in CONFIGS.items()},
                    "app/train.py": script(line, textwrap.dedent(HEADER) + prelude)})
    assert [(p, c) for p, _, c, _, _ in check(tmp_path, capsys, "app/train.py")] == [("app/train.py", "MSL301")]


# -- the YAML reader ----------------------------------------------------------------------------------------
def test_the_yaml_reader_reads_nested_scalars_and_leaves_the_rest_unknown():
    data = read_yaml_mappings(textwrap.dedent("""\
        model:
          name: 'fno2d'   # quoted
          depth: 4
          ratio: 0.5
          use_bias: true
          nothing: ~
          layers: [1, 2]
          items:
            - a
          text: |
            several lines
        url: http://example.org/#anchor
        """))
    model = data["model"]
    assert (model["name"], model["depth"], model["ratio"], model["use_bias"], model["nothing"]) == (
        "fno2d", 4, 0.5, True, None)
    assert model["layers"] is UNKNOWN and model["items"] is UNKNOWN and model["text"] is UNKNOWN
    assert data["url"] == "http://example.org/#anchor"


# -- a helper in another module sets the mode -------------------------------------------------------------------
HELPER = """\
    import mindspore as ms


    def init_env(device="CPU"):
        ms.set_context(mode=ms.GRAPH_MODE, device_target=device)
    """


def helper_project(script_text, helper=HELPER):
    return {"src/__init__.py": "", "src/env.py": helper, "train.py": script_text}


CALLS_THE_HELPER = """\
    import mindspore as ms
    from mindspore import nn

    from src.env import init_env


    def main():
        init_env()
        net = nn.Dense(2, 2)
        print(net(ms.Tensor([[1.0, 2.0]])))


    if __name__ == "__main__":
        main()
    """


def test_a_set_context_in_a_helper_is_reported_there_for_the_script_that_calls_it(tmp_path, capsys):
    make(tmp_path, helper_project(CALLS_THE_HELPER))
    found = check(tmp_path, capsys, "train.py", "src/env.py")
    assert [(path, line) for path, line, _, _, _ in found] == [("src/env.py", 5)]
    message, fix = found[0][3], found[0][4]
    assert "`train.py`" in message and "`init_env`" in message and fix is None


@pytest.mark.parametrize("change", ["cache_on", "pynative_script", "compiles_nothing", "test_module", "no_call",
                                    "script_sets_graph_itself"])
def test_helper_look_alikes_are_not_reported_in_the_helper(tmp_path, capsys, change):
    text = CALLS_THE_HELPER
    name = "train.py"
    if change == "cache_on":
        text = text.replace("def main():", 'os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")\n\n\ndef main():')
        text = "import os\n" + text
    elif change == "compiles_nothing":
        text = text.replace("        net = nn.Dense(2, 2)\n        print(net(ms.Tensor([[1.0, 2.0]])))\n",
                            "        print(len([1, 2]))\n")
    elif change == "test_module":
        name = "tests/test_train.py"
    elif change == "no_call":
        text = text.replace("        init_env()\n", "")
    elif change == "script_sets_graph_itself":
        text = text.replace("        init_env()\n", "        init_env()\n        ms.set_context(mode=ms.GRAPH_MODE)\n")
    files = {"src/__init__.py": "", "src/env.py": HELPER, name: text}
    if change == "pynative_script":
        files["src/env.py"] = HELPER.replace("ms.GRAPH_MODE", "ms.PYNATIVE_MODE")
    make(tmp_path, files)
    found = check(tmp_path, capsys, name, "src/env.py")
    assert [(p, c) for p, _, c, _, _ in found if p == "src/env.py"] == []
    if change == "script_sets_graph_itself":
        assert [p for p, _, _, _, _ in found] == [name]  # the script's own set_context carries the finding


def test_the_helper_finding_follows_a_change_of_the_script_through_the_cache(tmp_path, capsys):
    make(tmp_path, helper_project(CALLS_THE_HELPER))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        main(["check", "--output-format", "json", "train.py", "src/env.py"])
        first = [(f["path"], f["code"]) for f in json.loads(capsys.readouterr().out)]
        (tmp_path / "train.py").write_text(textwrap.dedent(CALLS_THE_HELPER).replace("    init_env()\n", ""))
        main(["check", "--output-format", "json", "train.py", "src/env.py"])
        second = [(f["path"], f["code"]) for f in json.loads(capsys.readouterr().out)]
    finally:
        os.chdir(cwd)
    assert first == [(os.path.join("src", "env.py"), "MSL301")] and second == []


# -- a Cell built and called in one expression -----------------------------------------------------------------
@pytest.mark.parametrize("call", ["nn.Dense(2, 2)(x)", "models.Net()(x)"])
def test_a_cell_built_and_called_in_one_expression_compiles(tmp_path, capsys, call):
    make(tmp_path, {
        "models.py": """\
            from mindspore import nn


            class Net(nn.Cell):
                def construct(self, x):
                    return x * 2
            """,
        "run.py": f"""\
            import mindspore as ms
            from mindspore import nn

            import models

            if __name__ == "__main__":
                ms.set_context(mode=ms.GRAPH_MODE)
                x = ms.Tensor([[1.0, 2.0]])
                print({call})
            """,
    })
    assert [(p, line) for p, line, _, _, _ in check(tmp_path, capsys, "run.py")] == [("run.py", 7)]


def test_a_script_that_builds_a_cell_without_calling_it_compiles_nothing(tmp_path, capsys):
    make(tmp_path, {"run.py": """\
        import mindspore as ms
        from mindspore import nn

        if __name__ == "__main__":
            ms.set_context(mode=ms.GRAPH_MODE)
            print(nn.Dense(2, 2).weight.shape)
        """})
    assert check(tmp_path, capsys, "run.py") == []
