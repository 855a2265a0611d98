from iolab.cli import main

raise SystemExit(main())
