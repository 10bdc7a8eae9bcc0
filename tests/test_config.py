"""[tool.ms-lint] in pyproject.toml: every key works, and bad ones are named in a clear error."""
import pytest

from ms_lint.config import Config, ConfigError, load_config


def config_from(tmp_path, body):
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\n" + body, encoding="utf-8")
    return load_config(start=str(tmp_path))


def test_defaults_without_pyproject(tmp_path):
    config = load_config(start=str(tmp_path / "nowhere"))
    assert config.unroll_threshold == 16 and config.graph_mode == "auto"
    assert config.pynative_packages == ["pynative"]
    assert config.is_enabled("MSL101")


def test_all_keys(tmp_path):
    config = config_from(tmp_path, (
        'select = ["MSL1", "MSL201"]\nignore = ["MSL103"]\nunroll-threshold = 32\ngraph-mode = "jit-only"\n'
        'exclude = ["gen"]\nextend-exclude = ["*_pb2.py"]\n'
        '[tool.ms-lint.per-file-ignores]\n"tests/*" = ["MSL1"]\n'
    ))
    assert config.unroll_threshold == 32 and config.graph_mode == "jit-only"
    assert config.is_enabled("MSL101") and config.is_enabled("MSL201")
    assert not config.is_enabled("MSL103") and not config.is_enabled("MSL301")
    assert not config.is_enabled("MSL101", str(tmp_path / "tests" / "test_x.py"))
    assert config.is_enabled("MSL201", str(tmp_path / "tests" / "test_x.py"))
    assert config.is_excluded(str(tmp_path / "gen"))
    assert config.is_excluded(str(tmp_path / "a_pb2.py"))
    assert not config.is_excluded(str(tmp_path / "model.py"))


@pytest.mark.parametrize("body, named", [
    ("unrol-threshold = 3\n", "unrol-threshold"),
    ("unroll-threshold = 'many'\n", "unroll-threshold"),
    ("unroll-threshold = 1\n", "unroll-threshold"),
    ("graph-mode = 'always'\n", "graph-mode"),
    ("select = ['XYZ1']\n", "select"),
    ("exclude = 'build'\n", "exclude"),
    ("pynative-packages = 'pynative'\n", "pynative-packages"),
    ("pynative-packages = ['my.pkg']\n", "pynative-packages"),
])
def test_bad_values_name_the_key(tmp_path, body, named):
    with pytest.raises(ConfigError) as error:
        config_from(tmp_path, body)
    assert named in str(error.value)


def test_invalid_toml_is_a_config_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(start=str(tmp_path))


def test_cli_reports_config_errors_with_exit_2(run_cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\nbogus = 1\n", encoding="utf-8")
    code, out, err = run_cli("check", ".")
    assert code == 2
    assert "bogus" in err and "Traceback" not in err


def test_unknown_code_on_the_command_line(run_cli):
    code, _, err = run_cli("check", "--select", "E501", ".")
    assert code == 2 and "E501" in err


def test_fingerprint_changes_with_settings():
    assert Config().fingerprint() != Config(unroll_threshold=8).fingerprint()
    assert Config().fingerprint() == Config().fingerprint()


def test_find_pyproject_gives_the_same_answer_with_a_shared_walk_in_any_order(tmp_path):
    from ms_lint.config import find_pyproject

    (tmp_path / "pyproject.toml").write_text("[tool.ms-lint]\nselect = ['MSL1']\n")
    for folder in ("a/b/c", "a/b/d/e", "x/y"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text("[project]\nname = 'a'\n")  # no [tool.ms-lint]
    (tmp_path / "a" / "b" / "d" / "pyproject.toml").write_text("[tool.ms-lint]\nselect = ['MSL2']\n")
    (tmp_path / "x" / "pyproject.toml").write_text("[tool.black]\n")
    folders = [tmp_path / f for f in ("a/b/c", "a/b/d/e", "a/b/d", "a", "x/y", "x", "a/b", ".")]
    alone = [find_pyproject(str(f)) for f in folders]
    assert alone[:4] == [str(tmp_path / "pyproject.toml"), str(tmp_path / "a/b/d/pyproject.toml"),
                         str(tmp_path / "a/b/d/pyproject.toml"), str(tmp_path / "pyproject.toml")]
    for order in (folders, list(reversed(folders))):
        memo = {}
        shared = {f: find_pyproject(str(f), memo) for f in order}
        assert [shared[f] for f in folders] == alone
