"""Import a heavy module on first use, so the first window paints without it.

paramiko costs ~0.13 s to import; the window needs it only once a connection is made. A stand-in
module is registered in sys.modules at once (one copy for everyone: `import paramiko` elsewhere
gets it too, still unloaded) and the real module is imported on the first attribute access.

Thread safety: `importlib.util.LazyLoader` is not safe on Python 3.11 (a thread can read the
attributes of a module that another thread is still executing: "module 'paramiko' has no
attribute 'Ed25519Key'"). The stand-in here takes itself out of sys.modules and imports the real
module with `importlib.import_module`, so the import system's per-module lock executes it exactly
once and every other thread waits until it has finished. Code keeps references to the stand-in,
so it forwards every attribute (and `setattr`, `delattr`, `dir`) to the real module forever.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

_REAL = "__lazy_real__"  # key in the stand-in's __dict__: the real module, once imported
# Held only to swap the stand-in out of sys.modules and to record the real module, never across
# the import itself (which has its own per-module lock and deadlock detection).
_swap = threading.Lock()


class _LazyModule(ModuleType):
    # Stands in for a module not imported yet. It holds `__spec__` (so `import x` elsewhere returns
    # it without loading) and `__path__` for a package (so `import x.sub` reaches `_ParentFirst`);
    # every other attribute, `__doc__` included, comes from the real module.

    def __init__(self, name: str, spec: importlib.machinery.ModuleSpec) -> None:
        super().__init__(name)
        d = self.__dict__
        for key in ("__doc__", "__package__", "__loader__"):  # ModuleType's Nones: forward them
            d.pop(key, None)
        d["__spec__"] = spec
        if spec.submodule_search_locations is not None:
            d["__path__"] = list(spec.submodule_search_locations)

    def _lazy_real(self) -> ModuleType:
        d = self.__dict__
        real: ModuleType | None = d.get(_REAL)
        if real is not None:
            return real
        name: str = d["__name__"]
        with _swap:
            if sys.modules.get(name) is self:
                del sys.modules[name]
        # Whoever takes the module's import lock first executes it; the others wait for it. If it
        # raises, nothing is recorded and the next access tries again, as `import` would.
        real = importlib.import_module(name)
        with _swap:
            if d.get(_REAL) is None:
                d.pop("__path__", None)
                d.pop("__spec__", None)
                d[_REAL] = real
            recorded: ModuleType = d[_REAL]
        return recorded

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]  # else the class's docstring
        doc: str | None = self._lazy_real().__doc__
        return doc

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._lazy_real(), attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self._lazy_real(), attr, value)

    def __delattr__(self, attr: str) -> None:
        delattr(self._lazy_real(), attr)

    def __dir__(self) -> list[str]:
        return dir(self._lazy_real())

    def __repr__(self) -> str:
        real = self.__dict__.get(_REAL)
        if real is not None:
            return repr(real)
        return f"<module {self.__dict__['__name__']!r} (lazy, not imported yet)>"


class _ParentFirst(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import pkg.sub` while `pkg` is still a stand-in: the import system would execute `sub`
    before `pkg`'s own `__init__` (which imports `sub` again, half-initialised). This finder comes
    first on sys.meta_path and hands such a submodule to a loader that imports the real package
    first and then gives back the submodule as the package left it: each runs once, in order."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        parent = fullname.rpartition(".")[0]
        if parent and isinstance(sys.modules.get(parent), _LazyModule):
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        stand_in = sys.modules.get(spec.name.rpartition(".")[0])
        if isinstance(stand_in, _LazyModule):
            stand_in._lazy_real()  # runs outside the global import lock
        module = importlib.import_module(spec.name)  # the parent may have imported it already
        spec.loader_state = module.__spec__  # the import system now sets __spec__ to `spec`
        return module

    def exec_module(self, module: ModuleType) -> None:
        spec = module.__spec__
        if spec is not None and spec.loader is self:
            module.__spec__ = spec.loader_state  # put the real one back; nothing to execute


_FINDER = _ParentFirst()


def lazy_import(name: str) -> ModuleType:
    """The module `name`, imported on first attribute access (at once if already imported)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    with _swap:
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)
        existing = sys.modules.get(name)
        if existing is not None:  # another thread got here first: one copy for everyone
            return existing
        module = _LazyModule(name, spec)
        sys.modules[name] = module
    return module


def is_loaded(name: str) -> bool:
    """Whether `name` was really executed to its end (a lazy stand-in, or a module that another
    thread is still executing, does not count)."""
    module = sys.modules.get(name)
    if module is None or isinstance(module, _LazyModule):
        return False
    return not getattr(getattr(module, "__spec__", None), "_initializing", False)
