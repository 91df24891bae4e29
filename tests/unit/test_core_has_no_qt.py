"""core never imports Qt: checked in a fresh interpreter, beside the import-linter contract."""

import pkgutil
import subprocess
import sys

import gpu_companion.core


def test_importing_every_core_module_loads_no_qt():
    names = [
        m.name for m in pkgutil.walk_packages(gpu_companion.core.__path__, "gpu_companion.core.")
    ]
    assert len(names) >= 5
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}: importlib.import_module(n)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', "
        "'pyqtgraph') or m.startswith('gpu_companion.ui'))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
