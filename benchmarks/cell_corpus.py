"""Build a Cell-heavy corpus: model code where nearly every file holds ``nn.Cell`` classes and must be parsed.

MindSpore's own source is mostly framework code that the text pre-filter skips; model repositories are the
opposite. This writes, deterministically from a seed:

* ``cells_big/network.py``: one generated file of about 55,000 lines holding 3,000 Cells (the shape of a
  generated or concatenated model zoo file: blocks, heads, wrappers, with ``construct`` methods that loop over
  ``nn.CellList``, branch on shapes and config flags, and a few real findings: per-row loops, tensor ``if``s,
  large constant loops);
* ``models/``: a package of many Cell modules that import a base block from a sibling module, a config module
  with argparse defaults and a training wrapper whose parent class holds the loss-scale logic, the project-wide
  questions the index answers.

    python benchmarks/cell_corpus.py OUT_DIR [--modules 150] [--big-cells 3000] [--seed 0]

Every generated file compiles; the same arguments give byte-identical files.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
from typing import Dict, List

HEADER = '''"""Generated model code (ms-lint benchmark corpus)."""
import mindspore as ms
from mindspore import nn, ops
import mindspore.numpy as mnp
'''


def _block(rng: random.Random, name: str, base: str, index: int) -> List[str]:
    """One Cell: ``__init__`` with sub-cells and constants, ``construct`` with a mix of look-alikes and findings."""
    layers = rng.randint(2, 6)
    hidden = rng.choice((64, 128, 256, 512))
    kind = index % 10
    lines = [
        f"class {name}({base}):",
        f'    """Block {index}: {layers} layers of width {hidden}."""',
        f"    def __init__(self, hidden={hidden}, layers={layers}, dropout=0.1, use_norm=True):",
        "        super().__init__()",
        "        self.hidden = hidden",
        "        self.layers = nn.CellList([nn.Dense(hidden, hidden) for _ in range(layers)])",
        "        self.drop = nn.Dropout(p=dropout)",
        "        self.act = nn.GELU()",
        f"        self.steps = {rng.choice((4, 8, 32, 64))}",
        "",
        "    def construct(self, x):",
        "        for layer in self.layers:",
        "            x = self.act(layer(x))",
        "        if x.shape[-1] != self.hidden:",
        "            x = x[..., :self.hidden]",
    ]
    if kind == 0:  # a per-row loop collected and stacked: MSL101
        lines += [
            "        rows = []",
            "        for i in range(x.shape[0]):",
            "            rows.append(self.act(x[i]) * 2)",
            "        x = ops.stack(rows)",
        ]
    elif kind == 1:  # a tensor-valued if: MSL201
        lines += [
            "        if x.sum() > 0:",
            "            x = x * 0.5",
            "        else:",
            "            x = x * 2.0",
        ]
    elif kind == 2:  # a large constant loop: MSL103 when steps >= 16
        lines += [
            "        for _ in range(self.steps):",
            "            x = self.drop(x) + x",
        ]
    elif kind == 3:  # a helper on the Python side, called from construct
        lines += [
            "        x = self._project(x)",
            "",
            "    def _project(self, x):",
            "        return ops.mean(x, -1, keep_dims=True) + x",
        ]
        return lines
    lines += ["        return self.drop(x)"]
    return lines


def big_file(rng: random.Random, cells: int) -> str:
    lines = HEADER.splitlines() + ["", ""]
    lines += [
        "class Base(nn.Cell):",
        '    """Shared base of every block in this file."""',
        "",
        "    def __init__(self):",
        "        super().__init__()",
        "        self.cast = ops.Cast()",
        "",
        "    def construct(self, x):",
        "        return x",
        "",
        "",
    ]
    for index in range(cells):
        base = "Base" if index % 3 else "nn.Cell"
        lines += _block(rng, f"Block{index:04d}", base, index) + [""]
    lines += [
        "def build(config):",
        '    """Plain Python: no graph code."""',
        "    names = [name for name in globals() if name.startswith('Block')]",
        "    return [globals()[name](hidden=config.get('hidden', 64)) for name in sorted(names)[:4]]",
        "",
    ]
    return "\n".join(lines)


BASE_MODULE = HEADER + '''

class BaseBlock(nn.Cell):
    """Base of every model block: a decoder step and its helpers."""

    def __init__(self, hidden=128, max_len=25):
        super().__init__()
        self.hidden = hidden
        self.num_steps = max_len + 1
        self.dense = nn.Dense(hidden, hidden)

    def step(self, x):
        return self.dense(x)

    def decode(self, x):
        for _ in range(self.num_steps):
            x = self.step(x)
        return x
'''

CONFIG_MODULE = '''"""Training configuration (argparse defaults)."""
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--mode", type=int, default=0)
parser.add_argument("--hidden", type=int, default=128)
parser.add_argument("--device_target", default="CPU")
args, _ = parser.parse_known_args()
'''

WRAPPER_MODULE = HEADER + '''

class LossScaleBase(nn.TrainOneStepWithLossScaleCell):
    """Parent class that holds the loss-scale logic."""

    def check_overflow(self, status, grads):
        return self.get_overflow_status(status, grads)


class TrainStep(LossScaleBase):
    def construct(self, *inputs):
        weights = self.weights
        loss = self.network(*inputs)
        status, scaling_sens = self.start_overflow_check(loss, self.scale_sense)
        grads = self.grad(self.network, weights)(*inputs, scaling_sens)
        overflow = self.check_overflow(status, grads)
        if not overflow:
            loss = ops.depend(loss, self.optimizer(grads))
        return loss
'''


def model_module(rng: random.Random, number: int) -> str:
    lines = HEADER.splitlines() + ["from .base import BaseBlock", "", ""]
    for index in range(rng.randint(6, 14)):
        lines += _block(rng, f"Model{number:03d}Block{index:02d}", "BaseBlock", number * 20 + index) + [""]
    lines += [
        f"class Model{number:03d}(nn.Cell):",
        "    def __init__(self, hidden=128):",
        "        super().__init__()",
        f"        self.blocks = nn.CellList([Model{number:03d}Block00(hidden) for _ in range(4)])",
        "",
        "    def construct(self, x):",
        "        for block in self.blocks:",
        "            x = block(x)",
        "        return x",
        "",
    ]
    return "\n".join(lines)


TRAIN_SCRIPT = '''"""Entry script: GRAPH mode from the config default."""
import mindspore as ms
from models.config import args
from models.model_000 import Model000

ms.set_context(mode=args.mode)
net = Model000(args.hidden)
print(net(ms.ops.ones((2, args.hidden), ms.float32)))
'''


def _write(path: str, text: str, counts: Dict[str, int]) -> None:
    text = text.strip("\n") + "\n"
    compile(text, path, "exec")  # a generator bug must not end up as a benchmark of MSL900
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    counts["files"] += 1
    counts["lines"] += text.count("\n")


def build(dest: str, modules: int = 150, big_cells: int = 3000, seed: int = 0) -> Dict[str, int]:
    """Write the corpus under ``dest``; returns the file and line counts."""
    rng = random.Random(seed)
    counts = {"files": 0, "lines": 0}
    if big_cells:
        _write(os.path.join(dest, "cells_big", "network.py"), big_file(rng, big_cells), counts)
    models = os.path.join(dest, "models")
    _write(os.path.join(models, "__init__.py"), '"""Generated model package."""', counts)
    _write(os.path.join(models, "base.py"), BASE_MODULE, counts)
    _write(os.path.join(models, "config.py"), CONFIG_MODULE, counts)
    _write(os.path.join(models, "wrapper.py"), WRAPPER_MODULE, counts)
    for number in range(modules):
        _write(os.path.join(models, f"model_{number:03d}.py"), model_module(rng, number), counts)
    _write(os.path.join(dest, "train.py"), TRAIN_SCRIPT, counts)
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest")
    parser.add_argument("--modules", type=int, default=150)
    parser.add_argument("--big-cells", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    counts = build(args.dest, args.modules, args.big_cells, args.seed)
    print(f"{counts['files']} files, {counts['lines']:,} lines under {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
