from fabricgen.cli import main

raise SystemExit(main())
