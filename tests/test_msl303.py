"""MSL303 stale-compile-cache-hazard: sources, flows and sinks; look-alikes that must stay silent."""
import textwrap

import pytest

from ms_lint.testing import fix, lint

SELECT = ["MSL303"]
CACHE = 'os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")'


def findings(code):
    return [(f.line, f.code) for f in lint(textwrap.dedent(code), select=SELECT)]


def messages(code):
    return [f.text for f in lint(textwrap.dedent(code), select=SELECT)]


def script(body, cache=CACHE, mode="ms.set_context(mode=ms.GRAPH_MODE)"):
    """A script skeleton: imports (lines 1-9), cache switch (10), mode (11), a jit function and a Cell."""
    head = textwrap.dedent("""\
        import argparse
        import json
        import os
        import sys

        import numpy as np
        import yaml
        import mindspore as ms
        from mindspore import nn, ops
        """)
    graph = textwrap.dedent("""\


        @ms.jit
        def step(x, n):
            return x * n


        class Net(nn.Cell):
            def __init__(self, depth, lr=0.1):
                super().__init__()
                self.depth = depth
                self.lr = lr

            def construct(self, x):
                for _ in range(self.depth):
                    x = x * 2
                return x

            def describe(self):
                return self.lr


        """)
    return head + cache + "\n" + mode + "\n" + graph + textwrap.dedent(body)


def line_of(code, text):
    return next(i for i, line in enumerate(code.splitlines(), 1) if text in line)


# -- sources ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("source, described", [
    ('int(os.environ["N"])', "the environment variable N"),
    ('int(os.environ.get("N", "2"))', "the environment variable N"),
    ('float(os.getenv("N"))', "the environment variable N"),
    ("int(sys.argv[1])", "sys.argv"),
    ("parser.parse_args().n", "the command-line argument `n`"),
    ("parser.parse_known_args()[0].n", "the command-line argument `n`"),
    ('json.load(open("c.json"))["n"]', "the config value `n` read by json.load"),
    ('yaml.safe_load(open("c.yaml")).get("n", 2)', "the config value `n` read by yaml.safe_load"),
])
def test_sources_into_a_jit_constant(source, described):
    code = script(f"""\
        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            n = {source}
            print(step(ms.Tensor(1.0), n))
        """)
    assert findings(code) == [(line_of(code, "print(step"), "MSL303")]
    (message,) = messages(code)
    assert described in message and "`n`" in message and "1.0 instead of 5.0" in message


def test_module_global_from_env_read_in_graph_code():
    code = script("""\
        STEPS = int(os.environ.get("STEPS", "5"))


        @ms.jit
        def run(x):
            for _ in range(STEPS):
                x = x + 1
            return x
        """)
    assert findings(code) == [(line_of(code, "range(STEPS)"), "MSL303")]


def test_graph_local_shadowing_a_tainted_global_is_not_reported():
    code = script("""\
        STEPS = int(os.environ.get("STEPS", "5"))


        @ms.jit
        def run(x):
            STEPS = 3
            for _ in range(STEPS):
                x = x + 1
            return x
        """)
    assert findings(code) == []


def test_argparse_through_local_helpers_and_main_parameter():
    code = script("""\
        def parse_args():
            parser = argparse.ArgumentParser()
            parser.add_argument("--depth", type=int, default=2)
            return parser.parse_args()


        def main(args):
            net = Net(args.depth)
            print(net(ms.Tensor(1.0)))


        if __name__ == "__main__":
            main(parse_args())
        """)
    assert findings(code) == [(line_of(code, "net = Net(args.depth)"), "MSL303")]
    assert "stored as `self.depth`" in messages(code)[0]


def test_several_sources_are_named_together():
    code = script("""\
        if __name__ == "__main__":
            args = argparse.ArgumentParser().parse_args()
            x = ms.Tensor(np.zeros((args.batch_size, args.seq_length), np.float32))
            print(step(x, 2))
        """)
    (message,) = messages(code)
    assert "the command-line arguments `batch_size` and `seq_length`, parsed by argparse" in message


def test_config_file_through_easydict_and_locals():
    code = script("""\
        from easydict import EasyDict


        def load(path):
            with open(path) as f:
                return EasyDict(yaml.safe_load(f))


        if __name__ == "__main__":
            cfg = load("c.yaml")
            depth = cfg.model.depth
            net = Net(depth=depth)
        """)
    assert findings(code) == [(line_of(code, "net = Net(depth=depth)"), "MSL303")]
    assert "the config value `model.depth` read by yaml.safe_load" in messages(code)[0]


# -- shapes ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    "ms.Tensor(np.zeros((args.batch_size, 4), np.float32))",
    "ms.Tensor(np.random.randn(args.batch_size, 4).astype(np.float32))",
    "ops.ones((args.batch_size, 4), ms.float32)",
    "ms.Tensor(shape=(args.batch_size, 4), dtype=ms.float32, init=ms.common.initializer.One())",
])
def test_input_shapes_from_arguments(make):
    code = script(f"""\
        if __name__ == "__main__":
            args = argparse.ArgumentParser().parse_args()
            x = {make}
            net = Net(2)
            out = net(x)
        """)
    assert findings(code) == [(line_of(code, "out = net(x)"), "MSL303")]
    (message,) = messages(code)
    assert "the shape of `x`" in message and "command-line argument `batch_size`" in message
    assert "8x8 and 3x3" in message


def test_dataset_batch_size_into_model_train_and_a_cell_loop():
    code = script("""\
        import mindspore.dataset as ds
        from mindspore.train import Model


        def create_dataset(path, batch_size):
            return ds.MnistDataset(path).batch(batch_size)


        if __name__ == "__main__":
            cfg = json.load(open("c.json"))
            data = create_dataset("mnist", batch_size=cfg["batch_size"])
            model = Model(Net(2))
            model.train(cfg["epochs"], data)
            net = Net(2)
            for batch in data.batch(cfg["batch_size"]).create_tuple_iterator():
                net(*batch)
        """)
    assert findings(code) == [(line_of(code, "model.train("), "MSL303"), (line_of(code, "net(*batch)"), "MSL303")]


# -- look-alikes -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("body", [
    # a Tensor built from the value is a traced input, not a constant
    """\
    if __name__ == "__main__":
        print(step(ms.Tensor(1.0), ms.Tensor(float(sys.argv[1]))))
    """,
    # hyper-parameters for the optimizer and the epoch count are not graph constants
    """\
    from mindspore.train import Model
    if __name__ == "__main__":
        args = argparse.ArgumentParser().parse_args()
        net = Net(2, lr=args.lr)
        opt = nn.Momentum(net.trainable_params(), args.lr, args.momentum)
        Model(net, None, opt).train(args.epochs, None)
    """,
    # a reassignment from a constant kills the flow
    """\
    if __name__ == "__main__":
        n = int(os.environ["N"])
        n = 4
        print(step(ms.Tensor(1.0), n))
    """,
    # the value is used in Python only
    """\
    if __name__ == "__main__":
        args = argparse.ArgumentParser().parse_args()
        print(args.depth * 2, os.environ.get("HOME"))
        print(step(ms.Tensor(1.0), 3))
    """,
    # paths from arguments
    """\
    if __name__ == "__main__":
        args = argparse.ArgumentParser().parse_args()
        net = Net(2)
        ms.load_checkpoint(args.ckpt, net)
    """,
])
def test_look_alikes_with_the_cache_on(body):
    assert findings(script(body)) == []


def test_nothing_without_the_cache():
    body = """\
        if __name__ == "__main__":
            print(step(ms.Tensor(1.0), int(sys.argv[1])))
        """
    assert findings(script(body)) != []
    for cache in ("", 'os.environ["MS_COMPILER_CACHE_ENABLE"] = "0"', "ms.set_context(enable_compile_cache=False)",
                  'os.environ.setdefault("MS_COMPILER_CACHE_PATH", "c")'):
        assert findings(script(body, cache=cache)) == [], cache


@pytest.mark.parametrize("cache", [
    'os.environ["MS_COMPILER_CACHE_ENABLE"] = "1"',
    'os.putenv("MS_COMPILER_CACHE_ENABLE", "1")',
    "ms.set_context(enable_compile_cache=True)",
])
def test_every_cache_switch_counts(cache):
    body = """\
        if __name__ == "__main__":
            print(step(ms.Tensor(1.0), int(sys.argv[1])))
        """
    assert len(findings(script(body, cache=cache))) == 1


def test_cell_sinks_need_graph_mode_but_jit_sinks_do_not():
    body = """\
        if __name__ == "__main__":
            args = argparse.ArgumentParser().parse_args()
            net = Net(args.depth)
            print(step(ms.Tensor(1.0), args.n))
        """
    pynative = script(body, mode="ms.set_context(mode=ms.PYNATIVE_MODE)")
    assert findings(pynative) == [(line_of(pynative, "print(step"), "MSL303")]
    assert len(findings(script(body))) == 2


def test_cell_attribute_not_read_by_graph_code_is_not_reported():
    body = """\
        if __name__ == "__main__":
            args = argparse.ArgumentParser().parse_args()
            net = Net(2, lr=args.lr)
        """
    assert findings(script(body)) == []


def test_init_reading_a_tainted_global_directly():
    code = script("""\
        DEPTH = int(os.environ["DEPTH"])


        class Deep(nn.Cell):
            def __init__(self):
                super().__init__()
                self.depth = DEPTH
                self.name_ = os.environ.get("NAME")

            def construct(self, x):
                return x * self.depth
        """)
    assert findings(code) == [(line_of(code, "self.depth = DEPTH"), "MSL303")]


def test_no_fix_is_offered():
    code = script("""\
        if __name__ == "__main__":
            print(step(ms.Tensor(1.0), int(sys.argv[1])))
        """)
    assert all(f.fix is None for f in lint(code, select=SELECT))
    assert not fix(code, unsafe=True, select=SELECT).changed


def test_environment_read_directly_inside_graph_code():
    code = script("""\
        @ms.jit
        def maybe_double(x):
            if os.environ.get("DOUBLE") == "1":
                x = x * 2
            return x
        """)
    assert findings(code) == [(line_of(code, 'os.environ.get("DOUBLE")'), "MSL303")]


def test_global_read_in_cell_code_counts_only_when_graph_mode_is_possible():
    body = """\
        WIDTH = int(os.environ["WIDTH"])


        def helper(x):
            return x * WIDTH


        class Wide(nn.Cell):
            def construct(self, x):
                return helper(x)


        @ms.jit
        def jitted(x):
            return helper(x) + WIDTH
        """
    graph = script(body)
    expected = [line_of(graph, "return x * WIDTH"), line_of(graph, "return helper(x) + WIDTH")]
    assert [line for line, _ in findings(graph)] == expected
    pynative = script(body.replace("@ms.jit\n        def jitted", "def jitted"),
                      mode="ms.set_context(mode=ms.PYNATIVE_MODE)")
    assert findings(pynative) == []
    mixed = script(body, mode="ms.set_context(mode=ms.PYNATIVE_MODE)")
    expected = [line_of(mixed, "return x * WIDTH"), line_of(mixed, "return helper(x) + WIDTH")]
    assert [line for line, _ in findings(mixed)] == expected


def test_enumerated_dataset_keeps_its_shape():
    code = script("""\
        import mindspore.dataset as ds


        if __name__ == "__main__":
            cfg = yaml.safe_load(open("c.yaml"))
            data = ds.MnistDataset("mnist").batch(cfg["batch_size"])
            net = Net(2)
            for i, (image, label) in enumerate(data.create_tuple_iterator()):
                net(image)
        """)
    assert findings(code) == [(line_of(code, "net(image)"), "MSL303")]
    assert "the config value `batch_size` read by yaml.safe_load" in messages(code)[0]


def test_constructor_argument_stored_by_a_sub_cell_the_network_builds():
    """``ConvTasNet(args.N, args.L)`` hands L to ``Encoder(L, N)``, whose graph reads ``self.L``."""
    code = script("""\
        class Encoder(nn.Cell):
            def __init__(self, L, N):
                super().__init__()
                self.L = L
                self.conv = nn.Conv1d(1, N, L)

            def construct(self, x):
                return self.conv(x.reshape((-1, 1, x.shape[-1] // self.L * self.L)))


        class TasNet(nn.Cell):
            def __init__(self, N, L):
                super().__init__()
                self.N = N
                self.encoder = Encoder(L, N)

            def construct(self, x):
                return self.encoder(x)


        if __name__ == "__main__":
            args = argparse.ArgumentParser().parse_args()
            net = TasNet(args.N, args.L)
        """)
    (message,) = messages(code)
    assert findings(code) == [(line_of(code, "net = TasNet"), "MSL303")]
    assert "`args.L`" in message and "`self.L`" in message and "`Encoder`" in message


def test_layer_sizes_from_the_command_line_are_graph_parameters():
    """``nn.Dense(8, classes)``: with the cache on, a run asking for other sizes gets the old graph (measured)."""
    code = script("""\
        class Head(nn.Cell):
            def __init__(self, width, classes):
                super().__init__()
                self.fc = nn.Dense(width, classes)

            def construct(self, x):
                return self.fc(x)


        class Model(nn.Cell):
            def __init__(self, classes):
                super().__init__()
                self.head = Head(8, classes)

            def construct(self, x):
                return self.head(x)


        if __name__ == "__main__":
            args = argparse.ArgumentParser().parse_args()
            net = Model(args.classes)
            probe = nn.Dense(4, args.hidden)
        """)
    found = messages(code)
    assert findings(code) == [(line_of(code, "net = Model"), "MSL303"), (line_of(code, "probe = nn.Dense"), "MSL303")]
    assert "`nn.Dense(...)` in `Head.__init__`" in found[0] and "3 columns" in found[0]
    assert "`args.hidden`" in found[1]


def test_values_that_reach_no_layer_and_no_graph_read_are_not_reported():
    """A learning rate kept for logging, an optimizer's learning rate (a Parameter, read at run time)."""
    code = script("""\
        if __name__ == "__main__":
            args = argparse.ArgumentParser().parse_args()
            net = Net(2, lr=args.lr)
            opt = nn.Momentum(net.trainable_params(), learning_rate=args.lr, momentum=args.momentum)
        """)
    assert findings(code) == []
