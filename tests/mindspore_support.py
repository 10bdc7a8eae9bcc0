"""What the MindSpore equivalence tests share: importing a source text as a real module (graph mode reads the
source of what it compiles, and looks the function's module up by name in ``sys.modules``)."""
import importlib.util
import itertools
import sys

_names = itertools.count()


def import_source(tmp_path, text, prefix="msl_case"):
    """``text`` written to a file in ``tmp_path`` and imported under a name unique in this process."""
    name = f"{prefix}_{next(_names)}"
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
