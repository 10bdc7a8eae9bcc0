"""Build a synthetic MindSpore-like corpus, deterministically from a seed, without MindSpore installed.

The mix follows what MindSpore's own source and public model repos look like (see /work/shared notes): most files
are plain Python or MindSpore utilities (data pipelines, callbacks, config, checkpoint helpers) whose docstrings
show ``>>> @ms.jit`` and ``def construct`` examples; a few percent hold graph code (Cells with loops over
``nn.CellList`` and config, a few real per-row loops, optimizers looping over gradients, ``@ms.jit`` functions,
tensor-valued ``if``s in training wrappers); a couple are entry scripts that set ``GRAPH_MODE``.

    python benchmarks/corpus.py OUT_DIR [--files 600] [--seed 0]

The same seed and file count always give byte-identical files. Every generated file compiles.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import textwrap
from typing import Callable, Dict, List, Tuple

# Share of each kind of file (they add up to 1).
MIX: Tuple[Tuple[str, float], ...] = (
    ("plain", 0.38),
    ("ms_util", 0.54),
    ("cell", 0.045),
    ("optimizer", 0.01),
    ("jit", 0.01),
    ("script", 0.005),
)

WORDS = ("feature", "anchor", "score", "label", "mask", "token", "hidden", "logit", "weight", "bias", "scale",
         "offset", "window", "stride", "kernel", "batch", "sample", "image", "box", "level", "head", "stage")


class Writer:
    """Small helpers over a seeded random generator, so the templates read like the code they produce."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def name(self, prefix: str = "") -> str:
        a, b = self.rng.sample(WORDS, 2)
        return f"{prefix}{a}_{b}"

    def camel(self, suffix: str = "") -> str:
        a, b = self.rng.sample(WORDS, 2)
        return f"{a.capitalize()}{b.capitalize()}{suffix}"

    def docstring(self, indent: str, graph_example: bool) -> str:
        """A MindSpore-style docstring; ``graph_example`` adds a doctest that mentions jit/construct."""
        lines = [f'{indent}"""{self.rng.choice(["Compute", "Build", "Apply", "Return", "Update"])} the '
                 f"{self.name()} of the {self.name()}.", "", f"{indent}Args:"]
        for _ in range(self.rng.randint(1, 4)):
            lines.append(f"{indent}    {self.name()} (Tensor): the {self.name()} with shape (N, C).")
        lines += ["", f"{indent}Returns:", f"{indent}    Tensor, the {self.name()}."]
        if graph_example:
            lines += ["", f"{indent}Examples:", f"{indent}    >>> import mindspore as ms",
                      f"{indent}    >>> @ms.jit", f"{indent}    ... def run(x):", f"{indent}    ...     return x * 2",
                      f"{indent}    >>> class Net(nn.Cell):", f"{indent}    ...     def construct(self, x):",
                      f"{indent}    ...         return run(x)"]
        lines.append(f'{indent}"""')
        return "\n".join(line if line.strip() else "" for line in lines)


# -- file kinds ----------------------------------------------------------------------------------------------------
def plain_module(w: Writer) -> str:
    rng = w.rng
    parts = ['"""Utilities for the ' + w.name() + ' pipeline."""', "import argparse", "import json", "import logging",
             "import os", "from collections import defaultdict", "", "logger = logging.getLogger(__name__)", ""]
    for _ in range(rng.randint(3, 9)):
        if rng.random() < 0.3:
            cls = w.camel("Registry")
            parts.append(textwrap.dedent(f'''
                class {cls}:
                    """Keeps {w.name()} objects by name."""

                    def __init__(self):
                        self._items = {{}}
                        self._order = []

                    def register(self, name, item):
                        if name in self._items:
                            raise KeyError(f"{{name}} is already registered")
                        self._items[name] = item
                        self._order.append(name)
                        return item

                    def get(self, name, default=None):
                        return self._items.get(name, default)

                    def __iter__(self):
                        for name in self._order:
                            yield name, self._items[name]
                '''))
        else:
            fn = w.name("load_")
            parts.append(textwrap.dedent(f'''
                def {fn}(path, {w.name()}=None, limit={rng.randint(10, 1000)}):
                    """Read {w.name()} records from a JSON-lines file."""
                    counts = defaultdict(int)
                    records = []
                    if not os.path.exists(path):
                        logger.warning("missing file %s", path)
                        return records
                    with open(path, encoding="utf-8") as handle:
                        for number, line in enumerate(handle):
                            if number >= limit:
                                break
                            line = line.strip()
                            if not line or line.startswith("#"):
                                continue
                            record = json.loads(line)
                            counts[record.get("kind", "unknown")] += 1
                            records.append(record)
                    logger.info("read %d records (%s)", len(records), dict(counts))
                    return records
                '''))
    parts.append(textwrap.dedent('''
        def parse_args(argv=None):
            parser = argparse.ArgumentParser(description=__doc__)
            parser.add_argument("--input", required=True)
            parser.add_argument("--limit", type=int, default=100)
            return parser.parse_args(argv)
        '''))
    return "\n".join(parts)


def ms_util_module(w: Writer) -> str:
    """Mentions MindSpore (data, callbacks, checkpoints); no graph code, but docstrings that show some."""
    rng = w.rng
    parts = ['"""' + w.camel() + ' helpers for MindSpore training jobs."""', "import os", "import numpy as np",
             "import mindspore as ms", "from mindspore import Tensor, context", "from mindspore.train import Callback",
             "import mindspore.dataset as ds", ""]
    for index in range(rng.randint(3, 8)):
        kind = rng.random()
        if kind < 0.35:
            cls = w.camel("Monitor")
            parts.append(textwrap.dedent(f'''
                class {cls}(Callback):
                    @@DOC@@

                    def __init__(self, per_print_times={rng.randint(1, 100)}):
                        super().__init__()
                        self._per_print_times = per_print_times
                        self._losses = []

                    def on_train_step_end(self, run_context):
                        cb_params = run_context.original_args()
                        loss = cb_params.net_outputs
                        if isinstance(loss, (tuple, list)):
                            loss = loss[0]
                        if isinstance(loss, Tensor):
                            loss = float(np.mean(loss.asnumpy()))
                        self._losses.append(loss)
                        step = cb_params.cur_step_num
                        if step % self._per_print_times == 0:
                            print(f"step {{step}}: loss {{loss:.4f}}", flush=True)
                ''').replace("    @@DOC@@", w.docstring("    ", graph_example=index == 0)))
        elif kind < 0.7:
            fn = w.name("create_") + "_dataset"
            parts.append(textwrap.dedent(f'''
                def {fn}(data_dir, batch_size={rng.choice([16, 32, 64])}, training=True, num_workers=4):
                    @@DOC@@
                    files = sorted(os.path.join(data_dir, name) for name in os.listdir(data_dir))
                    dataset = ds.MindDataset(files, columns_list=["image", "label"], shuffle=training,
                                             num_parallel_workers=num_workers)
                    transforms = [ds.vision.Decode(), ds.vision.Resize(({rng.randint(64, 512)}, {rng.randint(64, 512)}))]
                    if training:
                        transforms.append(ds.vision.RandomHorizontalFlip())
                    transforms += [ds.vision.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
                                   ds.vision.HWC2CHW()]
                    dataset = dataset.map(operations=transforms, input_columns="image")
                    return dataset.batch(batch_size, drop_remainder=training)
                ''').replace("    @@DOC@@", w.docstring("    ", graph_example=index == 1)))
        else:
            fn = w.name("save_")
            parts.append(textwrap.dedent(f'''
                def {fn}(net, path, keep={rng.randint(1, 10)}):
                    """Save a checkpoint and keep the newest ``keep`` files. Works in graph mode
                    (``context.set_context(mode=context.GRAPH_MODE)``) and PyNative alike."""
                    folder = os.path.dirname(path) or "."
                    os.makedirs(folder, exist_ok=True)
                    ms.save_checkpoint(net, path)
                    existing = sorted(
                        (os.path.getmtime(os.path.join(folder, f)), f) for f in os.listdir(folder) if f.endswith(".ckpt")
                    )
                    for _, name in existing[:-keep]:
                        os.remove(os.path.join(folder, name))
                    return path
                '''))
    return "\n".join(parts)


def cell_module(w: Writer) -> str:
    """Cells: mostly loops over CellLists and ``if`` on config (never flagged); some per-row tensor loops."""
    rng = w.rng
    parts = ['"""' + w.camel() + ' network blocks."""', "import mindspore as ms", "from mindspore import nn, ops", ""]
    for _ in range(rng.randint(1, 4)):
        cls = w.camel("Block")
        depth = rng.randint(2, 6)
        body = [
            f"class {cls}(nn.Cell):",
            w.docstring("    ", graph_example=False),
            "",
            f"    def __init__(self, channels={rng.choice([64, 128, 256])}, depth={depth}, use_norm=True):",
            "        super().__init__()",
            "        self.use_norm = use_norm",
            "        self.layers = nn.CellList([nn.Dense(channels, channels) for _ in range(depth)])",
            "        self.norm = nn.LayerNorm((channels,))",
            "        self.act = nn.ReLU()",
            "        self.concat = ops.Concat(axis=1)",
            "",
            "    def construct(self, x):",
            "        for layer in self.layers:",
            "            x = self.act(layer(x))",
            "        if self.use_norm:",
            "            x = self.norm(x)",
            "        if x.shape[0] > 1:",
            "            x = x * 0.5",
        ]
        if rng.random() < 0.5:
            body += [
                "        rows = []",
                "        for i in range(x.shape[0]):",
                "            rows.append(ops.relu(x[i]) * 2)",
                "        x = ops.stack(rows)",
            ]
        if rng.random() < 0.3:
            body += [
                "        if x.sum() > 0:",
                "            x = x - 1",
            ]
        body += ["        return self.helper(x)", "",
                 "    def helper(self, x):",
                 "        outs = [x]",
                 f"        for scale in ({', '.join(str(rng.randint(1, 4)) for _ in range(3))}):",
                 "            outs.append(x * scale)",
                 "        return self.concat(outs)", ""]
        parts.append("\n".join(body))
    return "\n".join(parts)


def optimizer_module(w: Writer) -> str:
    rng = w.rng
    cls = w.camel("Optimizer")
    hypermap = rng.random() < 0.5
    update = ("        return self.hyper_map(ops.partial(_update, self.learning_rate), params, grads)"
              if hypermap else
              "        success = ()\n        for param, grad in zip(params, grads):\n"
              "            success += (ops.assign(param, param - self.learning_rate * grad),)\n        return success")
    return textwrap.dedent(f'''\
        """{cls}: plain gradient descent with clipping."""
        import mindspore as ms
        from mindspore import nn, ops


        def _update(lr, param, grad):
            return ops.assign(param, param - lr * grad)


        class {cls}(nn.Optimizer):
            def __init__(self, params, learning_rate={rng.choice(["0.1", "0.01", "1e-3"])}, clip={rng.randint(1, 10)}.0):
                super().__init__(learning_rate, params)
                self.clip = clip
                self.hyper_map = ops.HyperMap()

            def construct(self, grads):
                params = self.parameters
                grads = self.hyper_map(ops.partial(ops.clip_by_value, clip_value_min=-self.clip,
                                                   clip_value_max=self.clip), grads)
        ''') + update + "\n"


def jit_module(w: Writer) -> str:
    rng = w.rng
    fn = w.name("step_")
    steps = rng.choice([4, 8, 64, 128])
    return textwrap.dedent(f'''\
        """Graph-compiled helpers for {w.name()}."""
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def {fn}(x, y):
            total = ops.zeros_like(x)
            for _ in range({steps}):
                total = total + ops.tanh(x * y)
            return total


        @ms.jit
        def normalize(x):
            if x.ndim == 2:
                x = ops.expand_dims(x, 0)
            return x / (ops.norm(x) + 1e-6)


        def {w.name("eager_")}(x):
            return [float(v) for v in x.asnumpy().ravel()]
        ''')


def script_module(w: Writer) -> str:
    return textwrap.dedent(f'''\
        """Train the {w.name()} model."""
        import argparse

        import mindspore as ms
        from mindspore import nn
        from mindspore.train import Model, LossMonitor


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--epochs", type=int, default={w.rng.randint(1, 90)})
            args = parser.parse_args()
            ms.set_context(mode=ms.GRAPH_MODE)
            net = nn.Dense(16, 4)
            loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
            opt = nn.Momentum(net.trainable_params(), 0.01, 0.9)
            model = Model(net, loss_fn=loss, optimizer=opt)
            model.train(args.epochs, None, callbacks=[LossMonitor()])


        if __name__ == "__main__":
            main()
        ''')


KINDS: Dict[str, Callable[[Writer], str]] = {
    "plain": plain_module, "ms_util": ms_util_module, "cell": cell_module, "optimizer": optimizer_module,
    "jit": jit_module, "script": script_module,
}


def plan(files: int, seed: int) -> List[str]:
    """The kind of each file: the MIX shares of ``files``, at least one of each kind, shuffled by ``seed``."""
    kinds: List[str] = []
    for kind, share in MIX:
        kinds += [kind] * max(1, round(files * share))
    kinds = kinds[:files] if len(kinds) > files else kinds + ["plain"] * (files - len(kinds))
    random.Random(seed).shuffle(kinds)
    return kinds


def build(dest: str, files: int = 600, seed: int = 0) -> Dict[str, int]:
    """Write the corpus under ``dest`` (created; existing files of the same names are overwritten)."""
    rng = random.Random(seed)
    writer = Writer(rng)
    counts = {"files": 0, "lines": 0}
    for index, kind in enumerate(plan(files, seed)):
        package = os.path.join(dest, f"pkg{index // 50:02d}")
        if not os.path.exists(os.path.join(package, "__init__.py")):
            os.makedirs(package, exist_ok=True)
            with open(os.path.join(package, "__init__.py"), "w", encoding="utf-8") as handle:
                handle.write('"""Generated package."""\n')
            counts["files"] += 1
            counts["lines"] += 1
        text = KINDS[kind](writer).strip("\n") + "\n"
        compile(text, f"{kind}_{index}.py", "exec")  # a generator bug must not end up as a benchmark of MSL900
        with open(os.path.join(package, f"{kind}_{index:04d}.py"), "w", encoding="utf-8") as handle:
            handle.write(text)
        counts["files"] += 1
        counts["lines"] += text.count("\n")
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest")
    parser.add_argument("--files", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    counts = build(args.dest, args.files, args.seed)
    print(f"wrote {counts['files']} files, {counts['lines']} lines under {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
