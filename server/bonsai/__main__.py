from bonsai.cli.main import main

raise SystemExit(main())
