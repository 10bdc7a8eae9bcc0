from ms_lint.cli import entry

raise SystemExit(entry())
