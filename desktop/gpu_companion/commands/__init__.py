"""Headless subcommands; each module exposes register(subparsers) (see cli.COMMAND_MODULES)."""
