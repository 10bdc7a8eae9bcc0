from ms_lint.noqa import is_suppressed, noqa_codes, skips_file


def test_noqa_forms():
    assert noqa_codes("for i in x:") is None
    assert noqa_codes("for i in x:  # noqa") == []
    assert noqa_codes("for i in x:  # noqa: MSL101") == ["MSL101"]
    assert noqa_codes("for i in x:  # NOQA:MSL101,MSL102") == ["MSL101", "MSL102"]
    assert noqa_codes("for i in x:  #noqa:msl101") is None  # flake8: not a noqa comment (no space)
    assert noqa_codes("for i in x:  # noqa: MSL101 MSL201  # why") == ["MSL101", "MSL201"]


def test_is_suppressed_by_code_or_blanket():
    lines = ["for a in b:  # noqa: MSL101", "for c in d:  # noqa", "for e in f:"]
    assert is_suppressed(lines, 1, "MSL101")
    assert not is_suppressed(lines, 1, "MSL102")
    assert is_suppressed(lines, 2, "MSL201")
    assert not is_suppressed(lines, 3, "MSL101")


def test_skip_file():
    assert skips_file("import x\n# ms-lint: skip-file\n")
    assert not skips_file("x = '# ms-lint: skip-file'\n")
