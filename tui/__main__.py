from tui.launch import main

raise SystemExit(main())
