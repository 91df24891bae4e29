"""Entry script of the bundle: the same `gpu-companion` command as the installed package."""

from gpu_companion.cli import main

raise SystemExit(main())
