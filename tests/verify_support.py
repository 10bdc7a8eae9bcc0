"""What the verifier's package tests share: running ``ms-lint verify`` in-process, reading its one error line, and
listing a folder (the tests check that a run leaves nothing behind in the user's package)."""
from ms_lint.cli import main


def listing(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def verify(capsys, *argv):
    code = main(["verify", *map(str, argv)])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out


def one_error_line(out):
    lines = [line for line in out.err.splitlines() if line.startswith("ms-lint: error:")]
    assert len(lines) == 1, out.err
    return lines[0]
