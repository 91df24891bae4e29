from gpu_companion.cli import main

raise SystemExit(main())
