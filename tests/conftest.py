import os
import shutil
import textwrap

import pytest

from ms_lint.cli import main

# A module MSL101 flags: a per-row loop over a tensor axis, stacked afterwards.
FLAGGED = textwrap.dedent("""\
    import mindspore as ms
    from mindspore import ops


    @ms.jit
    def per_row(x):
        out = []
        for i in range(x.shape[0]):
            out.append(ops.relu(x[i]) * 2)
        return ops.stack(out)
    """)

CLEAN = textwrap.dedent("""\
    import mindspore as ms
    from mindspore import nn


    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = nn.CellList([nn.Dense(4, 4) for _ in range(3)])

        def construct(self, x):
            for layer in self.layers:
                x = layer(x)
            if x.shape[0] > 1:
                x = x * 2
            return x
    """)


@pytest.fixture
def run_cli(capsys, monkeypatch, tmp_path):
    """Run ``ms-lint`` in-process from ``tmp_path``; returns (exit code, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)

    def run(*args):
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def write(tmp_path):
    def write(name, content, mode="w"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return write


@pytest.fixture
def mindspore():
    """The installed MindSpore (the verify extra); tests that take it carry ``@pytest.mark.mindspore``."""
    return pytest.importorskip("mindspore")


@pytest.fixture(scope="module")
def graph_mode():
    """GRAPH_MODE on CPU for a module's MindSpore equivalence tests (Cells compile construct only in graph mode,
    as in the training scripts ms-lint targets); the previous mode is restored afterwards."""
    import mindspore as ms

    previous = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    yield
    ms.set_context(mode=previous)


@pytest.fixture
def profile_copy(tmp_path_factory, monkeypatch, request):
    """A test module that profiles fixtures/profile works on a copy: confirming a fix writes the verifier's
    rewritten copy next to the module it rewrites, and other tests walk fixtures/ meanwhile. The module's
    ``FIXTURES`` and the paths it names in ``PROFILE_PATHS`` are pointed into the copy, made outside ``tmp_path``
    (the folder ``run_cli`` runs in) so that paths are shown as they are for files outside the current folder."""
    module = request.module
    original, copy = module.FIXTURES, tmp_path_factory.mktemp("profile_copy") / "profile"
    shutil.copytree(original, copy)
    for name in module.PROFILE_PATHS:
        monkeypatch.setattr(module, name, os.path.normpath(os.path.join(copy, os.path.relpath(getattr(module, name),
                                                                                               original))))
    return copy
