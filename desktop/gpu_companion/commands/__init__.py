"""Headless subcommands: each module exposes `register(subparsers)` (listed in cli.py)."""
