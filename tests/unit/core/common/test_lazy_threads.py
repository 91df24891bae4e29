"""A lazily imported module is executed exactly once, and every thread that touches it first waits
for that: `importlib.util.LazyLoader` on Python 3.11 let a `collector-<host>` thread read
`paramiko.Ed25519Key` while another thread was still executing paramiko (AttributeError).

Each run is a cold interpreter (a subprocess): the race is only there before the first import.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

RUNS = 15
THREADS = 32
# Names paramiko 3.x+ exports at its top level, from modules its __init__ imports one by one.
NAMES = (
    "Ed25519Key SSHClient RSAKey ECDSAKey Transport SFTPClient RejectPolicy SFTPServer "
    "SSHException AuthenticationException Agent AgentKey SSHConfig HostKeys Channel "
    "SFTPAttributes ServerInterface PKey Message BadHostKeyException ChannelException "
    "ProxyCommand SFTPFile SFTPHandle SubsystemHandler SecurityOptions PasswordRequiredException "
    "MissingHostKeyPolicy SFTP SFTPError SSHConfigDict ProxyCommandFailure"
).split()

PROBE = textwrap.dedent(
    """
    import sys, threading
    from gpu_companion.core.common.lazy import is_loaded, lazy_import

    names = sys.argv[1].split()
    paramiko = lazy_import("paramiko")
    assert not is_loaded("paramiko")
    barrier = threading.Barrier(len(names))
    got, errors = {}, []

    def touch(name):
        barrier.wait()
        try:
            got[name] = getattr(paramiko, name)
        except Exception as exc:
            errors.append(f"{name}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=touch, args=(n,), name=f"collector-{n}") for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    real = sys.modules["paramiko"]
    same = all(got[n] is getattr(real, n) for n in got)
    print(f"errors={len(errors)} got={len(got)} loaded={is_loaded('paramiko')} same={same}")
    for e in errors[:3]:
        print(e)
    """
)


def test_threads_racing_a_lazy_paramiko_all_get_their_attribute(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    names = " ".join(NAMES[i % len(NAMES)] for i in range(THREADS))
    failed = []
    for run in range(RUNS):
        out = subprocess.run(
            [sys.executable, str(probe), names],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        first = out.stdout.splitlines()[0] if out.stdout else ""
        if out.returncode != 0 or first != f"errors=0 got={THREADS} loaded=True same=True":
            failed.append(f"run {run}: {out.stdout.strip()} {out.stderr.strip()[-500:]}")
    assert not failed, f"{len(failed)} of {RUNS} cold runs failed:\n" + "\n".join(failed)


# A package of our own that takes its time, counts its executions and imports a submodule, so
# "exactly once" and "everyone waits" are checked deterministically, not by luck.
SLOW_INIT = """
import builtins, time
builtins.__dict__.setdefault("EXECUTED", []).append(__name__)
from gpu_companion.core.common.lazy import is_loaded
LOADED_WHILE_EXECUTING = is_loaded(__name__)
time.sleep(0.3)
from . import sub
for i in range(200):
    globals()[f"attr{i}"] = i
DONE = True
"""
SUB = """
import builtins
builtins.__dict__.setdefault("EXECUTED", []).append(__name__)
VALUE = 42
"""

SLOW_PROBE = """
import builtins, sys, threading
sys.path.insert(0, sys.argv[1])
from gpu_companion.core.common.lazy import is_loaded, lazy_import

mod = lazy_import("slowpkg")
assert not is_loaded("slowpkg") and "slowpkg" in sys.modules
barrier = threading.Barrier(16)
errors = []

def touch(i):
    barrier.wait()
    try:
        assert getattr(mod, f"attr{i * 12}") == i * 12 and mod.DONE
    except Exception as exc:
        errors.append(repr(exc))

threads = [threading.Thread(target=touch, args=(i,)) for i in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert errors == [], errors
assert builtins.EXECUTED == ["slowpkg", "slowpkg.sub"], builtins.EXECUTED
assert is_loaded("slowpkg") and not mod.LOADED_WHILE_EXECUTING
real = sys.modules["slowpkg"]
assert real is not mod and mod.sub is real.sub and mod.__spec__ is real.__spec__
mod.patched = 1  # the stand-in forwards writes too: code holding it sees what others see
assert real.patched == 1
del mod.patched
assert not hasattr(real, "patched") and "attr199" in dir(mod)
print("ok")
"""

SUBMODULE_FIRST_PROBE = """
import builtins, sys
sys.path.insert(0, sys.argv[1])
from gpu_companion.core.common.lazy import is_loaded, lazy_import

mod = lazy_import("slowpkg")
import slowpkg
assert slowpkg is mod and not is_loaded("slowpkg")
assert getattr(builtins, "EXECUTED", []) == []  # importing it elsewhere does not run it yet
from slowpkg.sub import VALUE  # the package is still a stand-in: it must run first, once
assert VALUE == 42 and is_loaded("slowpkg")
assert builtins.EXECUTED == ["slowpkg", "slowpkg.sub"], builtins.EXECUTED
assert sys.modules["slowpkg.sub"] is mod.sub
assert sys.modules["slowpkg.sub"].__spec__.name == "slowpkg.sub"
assert type(sys.modules["slowpkg.sub"].__spec__.loader).__name__ == "SourceFileLoader"
print("ok")
"""


def _slow_package(root: Path) -> Path:
    pkg = root / "slowpkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(SLOW_INIT)
    (pkg / "sub.py").write_text(SUB)
    return root


def _run(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    probe = tmp_path / "probe.py"
    probe.write_text(code)
    lib = _slow_package(tmp_path / "lib")
    return subprocess.run(
        [sys.executable, str(probe), str(lib)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_a_slow_lazy_module_runs_once_and_every_thread_waits_for_its_end(tmp_path: Path) -> None:
    out = _run(tmp_path, SLOW_PROBE)
    assert out.stdout.strip() == "ok", out.stderr


def test_a_submodule_imported_first_runs_its_lazy_package_first_and_once(tmp_path: Path) -> None:
    out = _run(tmp_path, SUBMODULE_FIRST_PROBE)
    assert out.stdout.strip() == "ok", out.stderr
