from ms_lint.cli import main

raise SystemExit(main())
