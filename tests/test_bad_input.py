"""Bad input never produces a traceback: each unanalyzable file gives MSL900 and the run goes on."""
import json
import os

import pytest

from conftest import CLEAN


def findings(run_cli, *args):
    code, out, err = run_cli("check", "--no-cache", "--format", "json", *args)
    assert "Traceback" not in err
    return code, json.loads(out)


@pytest.mark.parametrize("name, content, cause", [
    ("undecodable.py", b"import mindspore\nx = '\xff\xfe\xfa'\n", "cannot decode"),
    ("syntax.py", "import mindspore\ndef f(:\n    pass\n", "syntax error"),
    ("binary.py", b"\x7fELF\x02\x01\x01\x00\x00\x00mindspore", "binary file"),
    ("badcookie.py", b"# -*- coding: no-such-codec -*-\nimport mindspore\n", "encoding"),
])
def test_unanalyzable_files_give_msl900_and_exit_2(run_cli, write, name, content, cause):
    write(name, content)
    write("good.py", CLEAN)
    code, result = findings(run_cli, ".")
    assert code == 2
    assert [(f["code"], f["path"]) for f in result] == [("MSL900", name)]
    assert cause in result[0]["message"]


def test_syntax_error_names_the_line(run_cli, write):
    write("syntax.py", "import mindspore\n\nx = (1,\ndef f(:\n")
    _, result = findings(run_cli, "syntax.py")
    assert result[0]["code"] == "MSL900"
    assert result[0]["line"] in (3, 4)


@pytest.mark.parametrize("content", [
    b"",
    b"\xef\xbb\xbf" + CLEAN.encode(),
    CLEAN.replace("\n", "\r\n").encode(),
    b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + CLEAN.encode(),
])
def test_valid_but_unusual_files_are_clean(run_cli, write, content):
    write("odd.py", content)
    code, result = findings(run_cli, "odd.py")
    assert (code, result) == (0, [])


def test_dangling_symlink_and_symlink_loop(run_cli, write, tmp_path):
    write("good.py", CLEAN)
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    os.symlink(tmp_path / "loop_b.py", tmp_path / "loop_a.py")
    os.symlink(tmp_path / "loop_a.py", tmp_path / "loop_b.py")
    os.mkdir(tmp_path / "pkg")
    os.symlink(tmp_path, tmp_path / "pkg" / "back_to_root")  # a directory loop: never followed
    code, result = findings(run_cli, ".")
    assert code == 2
    assert sorted(f["path"] for f in result) == ["dangling.py", "loop_a.py", "loop_b.py"]
    assert all(f["code"] == "MSL900" and "cannot read" in f["message"] for f in result)


def test_directory_named_like_a_python_file_is_walked_not_read(run_cli, write):
    write("weird.py/inner.py", CLEAN)
    code, result = findings(run_cli, ".")
    assert (code, result) == (0, [])


def test_missing_path_is_a_usage_error(run_cli):
    code, out, err = run_cli("check", "no/such/dir")
    assert code == 2
    assert "no such file or directory" in err
    assert "Traceback" not in err


# ``return`` outside a function: the stdlib parser accepts it, only Python's compiler rejects it.
_COMPILER_ONLY_ERROR = "import mindspore\n\nreturn 1\n"
_GRAPH_LOOP = ("import mindspore as ms\n\n\n@ms.jit\ndef f(x):\n    for i in range(x.shape[0]):\n"
               "        x = x + x[i]\n    return x\n\n\nreturn 1\n")


def test_what_only_the_compiler_rejects_is_reported_where_the_file_is_read_further(run_cli, write):
    write("graph.py", _GRAPH_LOOP)  # a rule reads its graph function: libcst must not see what Python rejects
    code, result = findings(run_cli, "graph.py")
    assert code == 2
    assert [(f["code"], f["line"]) for f in result] == [("MSL900", 11)]
    assert "'return' outside function" in result[0]["message"]


def test_what_only_the_compiler_rejects_hides_nothing_in_a_file_no_rule_reads(run_cli, write):
    write("plain.py", _COMPILER_ONLY_ERROR)  # names MindSpore, holds no graph code: nothing of it is read further
    write("broken.py", "import mindspore\n\nx = (1,\n")  # what the parser rejects is reported everywhere
    code, result = findings(run_cli, ".")
    assert code == 2
    assert [(f["code"], f["path"]) for f in result] == [("MSL900", "broken.py")]
