"""Imports added by fixes keep an isort-clean file clean: ruff's ``I`` rules (isort) are run on model files before
and after ``ms-lint fix``, in the layouts real packages use (``from mindspore import nn`` joined, straight
``import mindspore.nn as nn``, only relative project imports, a first-party package beside the file)."""
import os
import subprocess
import sys
import textwrap

import pytest

from ms_lint.cli import main

GATE_BODY = """

class Gate({base}):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def construct(self, x):
        if x.sum() > 0:
            y = x * 2.0
        else:
            y = x - 1.0
        return self.block(y)
"""

LAYOUTS = {
    "from_import_joined": ("""\
        \"\"\"A gate on the sign of the input's sum.\"\"\"
        import numpy as np
        from mindspore import nn

        from models.layers import Block

        BIAS = np.float32(0.5)
        """, "nn.Cell", "from mindspore import nn, ops"),
    "straight_imports_only": ("""\
        import math

        import mindspore.nn as nn
        import numpy as np

        from models.layers import Block

        BIAS = np.float32(math.pi)
        """, "nn.Cell", "from mindspore import ops"),
    "relative_project_imports": ("""\
        import math

        from mindspore.nn import Cell

        from .layers import Block

        BIAS = math.pi
        """, "Cell", "from mindspore import ops"),
    "no_third_party_yet": ("""\
        import math

        from models.base import Cell
        from models.layers import Block

        BIAS = math.pi
        """, "Cell", "from mindspore import ops"),
}


def ruff_isort(root, path):
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "I", "--no-cache",
                           "--output-format", "concise", path], cwd=root, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.strip() if done.returncode else ""


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_fix_that_adds_an_import_keeps_the_file_isort_clean(tmp_path, layout):
    header, base, added = LAYOUTS[layout]
    models = tmp_path / "models"
    models.mkdir()
    (models / "__init__.py").write_text("")
    (models / "layers.py").write_text("from mindspore import nn\n\n\nclass Block(nn.Cell):\n"
                                      "    def construct(self, x):\n        return x\n")
    (models / "base.py").write_text("from mindspore.nn import Cell\n\n__all__ = [\"Cell\"]\n")
    gate = models / "gate.py"
    gate.write_text(textwrap.dedent(header) + GATE_BODY.format(base=base))
    assert ruff_isort(tmp_path, "models/gate.py") == ""  # clean before
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        main(["fix", "--apply", "--unsafe-fixes", "models/gate.py"])
    finally:
        os.chdir(cwd)
    fixed = gate.read_text()
    assert "ops.where(" in fixed and added in fixed.splitlines()
    assert ruff_isort(tmp_path, "models/gate.py") == "", fixed


SCRIPT_LAYOUTS = {
    "project_imports_last": """\
        import math

        import mindspore as ms
        from mindspore import nn

        from models.layers import Block

        SCALE = math.pi
        """,
    "third_party_last_then_a_def": """\
        import math

        import mindspore as ms
        from mindspore import nn


        def build():
            return Block()
        """,
}

SCRIPT_BODY = """

class Net(nn.Cell):
    def construct(self, x):
        return x


if __name__ == "__main__":
    ms.set_context(mode=ms.GRAPH_MODE)
    print(Net()(ms.Tensor([1.0])))
"""


@pytest.mark.parametrize("layout", sorted(SCRIPT_LAYOUTS))
def test_the_compile_cache_fix_keeps_the_script_isort_clean(tmp_path, layout):
    """MSL301's fix puts ``import os`` among the imports and its setup lines after the import block, one blank line
    below it (ruff's I001 flagged the setup lines written straight under the last import)."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "__init__.py").write_text("")
    (models / "layers.py").write_text("from mindspore import nn\n\n\nclass Block(nn.Cell):\n"
                                      "    def construct(self, x):\n        return x\n")
    script = models / "train.py"
    script.write_text(textwrap.dedent(SCRIPT_LAYOUTS[layout]) + SCRIPT_BODY)
    assert ruff_isort(tmp_path, "models/train.py") == ""  # clean before
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        main(["fix", "--apply", "--unsafe-fixes", "--select", "MSL301", "models/train.py"])
    finally:
        os.chdir(cwd)
    fixed = script.read_text()
    assert 'os.environ.setdefault("MS_COMPILER_CACHE_ENABLE", "1")' in fixed and "import os" in fixed.splitlines()
    assert ruff_isort(tmp_path, "models/train.py") == "", fixed
