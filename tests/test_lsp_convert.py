"""Findings and fixed texts as LSP values: positions in the negotiated encoding, edits that rebuild the fixed text."""
import subprocess
import sys

from lsprotocol import types as lsp

from ms_lint.diagnostics import Finding
from ms_lint.lsp.convert import action_title, apply_edits, diagnostic, position, split_lines, text_edits

UTF8, UTF16, UTF32 = lsp.PositionEncodingKind.Utf8, lsp.PositionEncodingKind.Utf16, lsp.PositionEncodingKind.Utf32


def test_columns_count_code_units_of_the_negotiated_encoding():
    lines = split_lines('s = "\U0001F600é"; x = 1\n')
    column = lines[0].index("x") + 1  # ms-lint: 1-based code points
    assert position(lines, 1, column, UTF32).character == column - 1
    assert position(lines, 1, column, UTF16).character == column - 1 + 1  # the emoji is two UTF-16 units
    assert position(lines, 1, column, UTF8).character == column - 1 + 3 + 1  # four bytes and two bytes


def test_lines_end_where_lsp_ends_them():
    text = "a = 1\r\nb = '\x0c'\rc = 2\n"
    assert [line.rstrip("\r\n") for line in split_lines(text)] == ["a = 1", "b = '\x0c'", "c = 2"]
    assert position(split_lines(text), 3, 1, UTF16) == lsp.Position(line=2, character=0)


def test_edits_give_back_the_fixed_text():
    original = "import a\n\n\ndef f(x):\n    return [g(r) for r in x]\n\n\ny = 1"
    cases = [
        "import a\nfrom b import c\n\n\ndef f(x):\n    return c(x)\n\n\ny = 1",
        original + "\n",
        original.replace("y = 1", "y = 2"),
        "# header \U0001F600\n" + original,
        "",
    ]
    for fixed in cases:
        for encoding in (UTF8, UTF16, UTF32):
            assert apply_edits(original, text_edits(original, fixed, encoding), encoding) == fixed
    assert text_edits(original, original, UTF16) == []


def test_diagnostic_and_titles():
    safe = Finding("MSL101", "loop over rows: use vmap", "m.py", 2, 5, 3, 10,
                   fix={"applicability": "safe", "message": "rewrite with vmap"})
    unsafe = Finding("MSL201", "if on a Tensor: use select", "m.py", 1, 1, 1, 4,
                     fix={"applicability": "unsafe", "message": "use ops.select (NaN gradients)"})
    broken = Finding("MSL900", "cannot analyze file: syntax error", "m.py", 1, 3, 1, 3)
    lines = split_lines("x = 1\nfor i in range(3):\n    y = i\n")
    d = diagnostic(safe, lines, UTF16)
    assert (d.range.start, d.range.end) == (lsp.Position(line=1, character=4), lsp.Position(line=2, character=9))
    assert d.code == "MSL101" and d.source == "ms-lint" and d.severity == lsp.DiagnosticSeverity.Warning
    assert diagnostic(broken, lines, UTF16).severity == lsp.DiagnosticSeverity.Error
    assert action_title(safe) == "MSL101: rewrite with vmap"
    assert "unsafe" in action_title(unsafe) and action_title(unsafe).endswith("use ops.select (NaN gradients)")


def test_server_without_pygls_says_which_extra_it_needs():
    code = ("import sys; sys.modules['pygls'] = None\n"
            "from ms_lint.cli import main\nraise SystemExit(main(['server']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "pip install 'ms-lint[lsp]'" in done.stderr
