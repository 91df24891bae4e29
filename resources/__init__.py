"""Shipped resources: icons, GPU catalogue, style sheets.

`DIR` is this folder on disk (a source checkout, an installed wheel and the PyInstaller bundle
all keep the files beside this module): the first window reads its icons from it without loading
importlib.resources."""

from pathlib import Path

DIR = Path(__file__).parent
