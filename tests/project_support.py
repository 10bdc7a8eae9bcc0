"""Small projects written into a temporary folder and checked with the CLI, as the project-wide tests need them."""
import json
import os
import textwrap


def make(root, files):
    """Write ``files`` (relative path -> dedented text) under ``root``; returns ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def json_check(root, capsys, *args):
    """``ms-lint check --output-format json *args`` run from ``root`` (``--no-cache`` unless ``args`` name a
    ``--cache-dir``): (exit status, the findings as JSON objects)."""
    cwd = os.getcwd()
    os.chdir(root)
    try:
        from ms_lint.cli import main

        cache = [] if "--cache-dir" in args else ["--no-cache"]
        code = main(["check", *cache, "--output-format", "json", *args])
    finally:
        os.chdir(cwd)
    return code, json.loads(capsys.readouterr().out)
