"""The slow poll beside the sample stream: compute processes, host counters and process owners.

Remotely it is one exec channel running one `sh -c` with four commands (nvidia-smi, cat, df, ps:
five process starts per poll, every 10 s by default, none per GPU sample); locally the same texts
are read directly.
"""

from __future__ import annotations

import getpass
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from gpu_companion.core.monitor.counters import RawCounters, parse_df, parse_proc_text, with_disk
from gpu_companion.core.monitor.nvsmi import (
    DEFAULT_COMPUTE_APPS_FIELDS,
    ComputeApp,
    GpuError,
    build_query_compute_apps_argv,
    parse_compute_apps_csv,
)
from gpu_companion.core.monitor.transport import Transport

MARK = "@@gpu-companion:"
SECTIONS = ("apps", "proc", "df", "ps")


@dataclass(frozen=True)
class PollResult:
    apps: list[ComputeApp]
    counters: RawCounters
    owners: dict[int, str] = field(default_factory=dict)  # pid -> user, processes we can see
    error: GpuError | None = None
    bad_lines: int = 0


def remote_poll_argv(proc_root: str = "/proc", df_path: str = "/") -> list[str]:
    """`sh -c SCRIPT`: the sections are separated by marker lines so one output holds all four."""
    apps = shlex.join(build_query_compute_apps_argv(DEFAULT_COMPUTE_APPS_FIELDS))
    files = " ".join(shlex.quote(f"{proc_root.rstrip('/')}/{n}") for n in
                     ("uptime", "loadavg", "stat", "diskstats"))  # fmt: skip
    script = "; ".join(
        [
            f"echo {MARK}apps",
            f"{apps} 2>&1",
            f"echo {MARK}proc",
            f"cat {files} 2>/dev/null",
            f"echo {MARK}df",
            f"df -Pk {shlex.quote(df_path)} 2>/dev/null",
            f"echo {MARK}ps",
            "ps -eo pid=,user= 2>/dev/null",
        ]
    )
    return ["sh", "-c", script]


def split_sections(text: str) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(MARK) and line[len(MARK) :] in SECTIONS:
            current = sections.setdefault(line[len(MARK) :], [])
        elif current is not None:
            current.append(line)
    return {k: "\n".join(v) for k, v in sections.items()}


def parse_owners(text: str) -> dict[int, str]:
    owners: dict[int, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            owners[int(parts[0])] = parts[1]
    return owners


def parse_poll(sections: dict[str, str], t: float) -> PollResult:
    apps = parse_compute_apps_csv(sections.get("apps", ""), DEFAULT_COMPUTE_APPS_FIELDS)
    raw = with_disk(parse_proc_text(sections.get("proc", ""), t), parse_df(sections.get("df", "")))
    return PollResult(apps.samples, raw, parse_owners(sections.get("ps", "")), apps.error,
                      apps.bad_lines)  # fmt: skip


def _local_owners(proc_root: Path) -> dict[int, str]:
    import pwd  # POSIX only; called on Linux

    owners: dict[int, str] = {}
    try:
        entries = list(proc_root.iterdir())
    except OSError:
        return owners
    for entry in entries:
        if entry.name.isdigit():
            try:
                uid = entry.stat().st_uid
                owners[int(entry.name)] = pwd.getpwuid(uid).pw_name
            except (OSError, KeyError):
                continue
    return owners


def _local_sections(transport: Transport, proc_root: str, df_path: str) -> dict[str, str]:
    code, apps = transport.run(build_query_compute_apps_argv(DEFAULT_COMPUTE_APPS_FIELDS), 20)
    root = Path(proc_root)
    proc = []
    for name in ("uptime", "loadavg", "stat", "diskstats"):
        try:
            proc.append((root / name).read_text())
        except OSError:
            continue
    df = ""
    try:
        usage = shutil.disk_usage(df_path)
        df = f"Filesystem 1024-blocks Used Available Capacity Mounted\nlocal {usage.total // 1024} "
        df += f"{usage.used // 1024} {usage.free // 1024} 0% {df_path}"
    except OSError:
        pass
    owners = _local_owners(root) if sys.platform.startswith("linux") else {}
    ps = "\n".join(f"{pid} {user}" for pid, user in owners.items())
    return {"apps": apps if code != 127 else "", "proc": "\n".join(proc), "df": df, "ps": ps}


def poll_host(
    transport: Transport, proc_root: str = "/proc", df_path: str = "/", timeout: float = 20
) -> PollResult:
    """One slow poll; raises ConnectionError (and paramiko's errors) when the link is gone."""
    t = time.time()
    if transport.is_local:
        sections = _local_sections(transport, proc_root, df_path)
    else:
        _code, text = transport.run(remote_poll_argv(proc_root, df_path), timeout)
        sections = split_sections(text)
    return parse_poll(sections, t)


def login_user() -> str:
    return getpass.getuser()
