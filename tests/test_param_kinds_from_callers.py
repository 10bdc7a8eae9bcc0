"""A helper's parameter kinds come from what every graph call site passes (``ModuleContext._param_kinds_from_calls``).
Callers in other modules are read one at a time, and no further once every parameter is UNKNOWN whatever the rest
pass (``_UnknownParams``): the answer is the one reading them all gives."""
import textwrap

import libcst as cst

from ms_lint.analysis import project as project_module
from ms_lint.analysis.index import ProjectIndex
from ms_lint.analysis.project import ProjectView
from ms_lint.analysis.values import Kind
from ms_lint.config import Config
from ms_lint.context import ModuleContext, _UnknownParams

HELPER = """\
    def scale(x, factor):
        return x * factor
    """
CELL = """\
    from mindspore import nn

    from pkg.helper import scale


    class {name}(nn.Cell):
        def construct(self, x):
            return {body}
    """


def _write(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def helper_values(tmp_path, monkeypatch, first_body, last_body):
    """The value model of ``pkg/helper.py``'s ``scale`` and the modules its analysis read. Its callers are the
    Cells of ``pkg/one.py`` and ``pkg/two.py``; the one read first calls it as ``first_body``, the other as
    ``last_body``."""
    paths = [str(tmp_path / "pkg" / name) for name in ("helper.py", "one.py", "two.py")]
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/helper.py": HELPER,
                      "pkg/one.py": CELL.format(name="One", body="scale(x, 2)"),
                      "pkg/two.py": CELL.format(name="Two", body="scale(x, 2)")})
    first, last = [module for module, _ in ProjectIndex.for_files(paths).callers_of(("pkg.helper", "scale"))]
    _write(tmp_path, {f"pkg/{first[4:]}.py": CELL.format(name="First", body=first_body),
                      f"pkg/{last[4:]}.py": CELL.format(name="Last", body=last_body)})
    index = ProjectIndex.for_files(paths)
    assert [module for module, _ in index.callers_of(("pkg.helper", "scale"))] == [first, last]
    read = []
    original = ProjectView.context_for

    def recorded(self, module):
        read.append(module)
        return original(self, module)

    monkeypatch.setattr(ProjectView, "context_for", recorded)
    helper = paths[0]
    text = textwrap.dedent(HELPER)
    module = cst.parse_module(text)
    context = ModuleContext(module, text, helper, Config(), project=ProjectView(index, helper, Config()))
    values = context.values(module.body[0])
    for name in (first, last):
        project_module.forget((id(index), name))
    return {name: values.env[name] for name in ("x", "factor")}, [name == last for name in read]


def test_callers_after_the_answer_is_settled_are_not_read(tmp_path, monkeypatch):
    # the first module's two calls already pass two kinds for each parameter: both are UNKNOWN, whatever follows
    kinds, read = helper_values(tmp_path, monkeypatch, "scale(x, x) + scale(1.0, 2)", "scale(x, 3)")
    assert kinds == {"x": Kind.UNKNOWN, "factor": Kind.UNKNOWN}
    assert True not in read  # the last caller was never read


def test_callers_are_read_until_the_answer_is_settled(tmp_path, monkeypatch):
    # every call passes a Tensor and a number: each caller may still change that, so all are read
    kinds, read = helper_values(tmp_path, monkeypatch, "scale(x, 2)", "scale(x, 3)")
    assert kinds == {"x": Kind.TENSOR, "factor": Kind.CONST}
    assert True in read
    kinds, read = helper_values(tmp_path, monkeypatch, "scale(x, 2)", "scale(2, x)")
    assert kinds == {"x": Kind.UNKNOWN, "factor": Kind.UNKNOWN}  # the last caller unsettles both
    assert True in read


def _def(code):
    return cst.parse_module(textwrap.dedent(code)).body[0]


def test_a_parameter_with_a_literal_default_is_open_until_some_site_passes_it():
    params = _UnknownParams(_def("def h(x, y, n=4):\n    pass\n"), bound=False)
    assert not params.all_after({"x": Kind.TENSOR, "y": Kind.UNKNOWN})  # x: one kind so far; n: its default yet
    assert not params.all_after({"x": Kind.CONST, "y": Kind.TENSOR})  # x and y settled; n passed by no site
    assert params.all_after({"n": Kind.CONST})  # n: left out by two sites, passed by one


def test_parameters_without_a_literal_default_are_settled_while_no_site_passes_them():
    params = _UnknownParams(_def("def g(x, *args, scale=None, **kw):\n    pass\n"), bound=False)
    assert params.all_after({"x": Kind.UNKNOWN})  # whatever later sites pass, nothing but UNKNOWN can come of it
    bound = _UnknownParams(_def("def m(self, x, k=2):\n    pass\n"), bound=True)
    assert not bound.all_after({"x": Kind.UNKNOWN})  # k keeps its literal default while no site passes it
    assert bound.all_after({"x": Kind.UNKNOWN, "k": Kind.TENSOR})  # k: left out once, passed once


def test_no_site_settles_a_parameter_passed_the_same_known_kind_everywhere():
    params = _UnknownParams(_def("def f(x):\n    pass\n"), bound=False)
    for _ in range(3):
        assert not params.all_after({"x": Kind.TENSOR})
