"""Headless subcommands: each module exposes register(subparsers) for gpu_companion.cli."""
