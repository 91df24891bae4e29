"""Import a heavy module on first use, so the first window paints without it.

paramiko costs ~0.13 s to import; the window needs it only once a connection is made. The module is
registered in sys.modules at once (one copy for everyone) and executed on first attribute access.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_import(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def is_loaded(name: str) -> bool:
    """Whether `name` was really executed (a lazy placeholder does not count)."""
    module = sys.modules.get(name)
    lazy_type = getattr(importlib.util, "_LazyModule", ())
    return module is not None and not isinstance(module, lazy_type)
