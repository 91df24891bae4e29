"""`gpu-companion inspect [ALIAS ...|local] [--json]`: one reading of each host's GPUs."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.i18n import _

if TYPE_CHECKING:  # imported by the handler: `gpu-companion` parses its arguments first
    from gpu_companion.core.hosts.registry import Host, HostRegistry
    from gpu_companion.core.monitor.collector import ClientFactory
    from gpu_companion.core.monitor.faults import GpuFault
    from gpu_companion.core.monitor.nvsmi import GpuSample
    from gpu_companion.core.monitor.snapshot import Snapshot

_READING = ("connecting", "live")  # HostState values, without importing the monitor here


def register(sub: Any) -> None:
    p = sub.add_parser(
        "inspect",
        help=_("read every GPU of the named hosts once (in parallel)"),
        description=_(
            "Read every GPU of the named hosts once, in parallel, through the same "
            "collector as the live monitor. Without aliases: every active host and "
            "this computer."
        ),
    )
    p.add_argument("aliases", nargs="*", metavar="ALIAS", help=_("host aliases; 'local' is this "
                   "computer"))  # fmt: skip
    p.add_argument("--json", action="store_true", help=_("print JSON for scripts"))
    p.add_argument("--timeout", type=float, default=30.0, help=_("seconds to wait (default 30)"))
    p.set_defaults(handler=run)


def _resolve(registry: HostRegistry, aliases: list[str]) -> tuple[list[Host], list[str]]:
    from gpu_companion.core.hosts.registry import LOCAL_ALIAS, LOCAL_HOST

    if not aliases:
        return [LOCAL_HOST, *registry.hosts(include_released=False)], []
    hosts, unknown = [], []
    for alias in dict.fromkeys(aliases):
        host = LOCAL_HOST if alias == LOCAL_ALIAS else registry.host(alias)
        if host is None:
            unknown.append(alias)
        else:
            hosts.append(host)
    return hosts, unknown


def _n(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.0f}{unit}"


def _line(snap: Snapshot, gpu: GpuSample) -> str:
    from gpu_companion.core.common.plain import plain_line

    return plain_line(_raw_line(snap, gpu))  # names and messages are the host's text


def _raw_line(snap: Snapshot, gpu: GpuSample) -> str:
    procs = ", ".join(f"{a.process_name or 'hidden'}({a.pid if a.pid is not None else '?'})"
                      for a in snap.apps_on(gpu)) or "-"  # fmt: skip
    return (
        f"{snap.alias}\t{_n(gpu.index)}\t{gpu.name or '-'}\tutil {_n(gpu.utilization_gpu, '%')}\t"
        f"mem {_n(gpu.memory_used_mib)}/{_n(gpu.memory_total_mib)} MiB\t"
        f"{_n(gpu.temperature_c, ' C')}\t{_n(gpu.power_draw_w, ' W')}\tprocs {procs}"
    )


def _gpu_dict(snap: Snapshot, g: GpuSample) -> dict[str, Any]:
    return {
        "index": g.index,
        "name": g.name,
        "uuid": g.uuid,
        "state": "ok",
        "utilization_gpu": g.utilization_gpu,
        "memory_used_mib": g.memory_used_mib,
        "memory_total_mib": g.memory_total_mib,
        "temperature_c": g.temperature_c,
        "power_draw_w": g.power_draw_w,
        "power_limit_w": g.power_limit_w,
        "processes": [
            {"pid": a.pid, "name": a.process_name, "used_memory_mib": a.used_memory_mib}
            for a in snap.apps_on(g)
        ],
    }


def _fault_dict(f: GpuFault) -> dict[str, Any]:
    return {"index": f.index, "name": f.name, "bus_id": f.bus_id, "state": f.short,
            "message": f.message, "hint": f.hint}  # fmt: skip


def _as_dict(snap: Snapshot) -> dict[str, Any]:
    gpus = [_gpu_dict(snap, g) for g in snap.gpus] + [_fault_dict(f) for f in snap.faults]
    gpus.sort(key=lambda g: (g["index"] is None, g["index"] or 0))
    problem = snap.faults[0] if snap.faults else None
    return {
        "host": snap.alias,
        "ok": snap.ok,
        "state": snap.status.state.value,
        "message": None if snap.ok else (problem.message if problem else snap.status.message),
        "hint": None if snap.ok else (problem.hint if problem else snap.status.hint),
        "gpus": gpus,
    }


def json_text(value: Any) -> str:
    """Strict JSON (never Infinity or NaN, which most parsers refuse): such a value is null."""
    from gpu_companion.core.common.plain import json_text as strict_json

    return strict_json(value, indent=2)


def _fault_line(snap: Snapshot, f: GpuFault) -> str:
    from gpu_companion.core.common.plain import plain_line

    index = "-" if f.index is None else str(f.index)
    text = f"{snap.alias}\t{index}\t{f.name or '-'}\t{f.short}: {f.message} {f.hint}"
    return plain_line(text.rstrip())


def run(args: argparse.Namespace, factory: ClientFactory | None = None) -> int:
    """Exit 0 when every host answered, 1 when one failed, 2 for an unknown alias."""
    if args.json:  # for scripts: the messages and hints in it English, whatever the language
        from gpu_companion.commands.opening import english

        with english():
            return _run(args, factory)
    return _run(args, factory)


def _run(args: argparse.Namespace, factory: ClientFactory | None) -> int:
    from gpu_companion.commands.opening import open_services
    from gpu_companion.core.monitor.snapshot import take_snapshots

    services = open_services()  # the app's own connections: keys from the keyring, known_hosts
    if services is None:
        return 2
    try:
        hosts, unknown = _resolve(services.registry, list(args.aliases))
        for alias in unknown:
            print(_("{alias}: no such host. Add it on the Hosts page, or use 'local' for this "
                    "computer.").format(alias=alias), file=sys.stderr)  # fmt: skip
        if unknown:
            return 2
        snaps = take_snapshots(hosts, factory or services.sessions.connect, timeout=args.timeout)
    finally:
        services.close()
    if args.json:
        print(json_text([_as_dict(s) for s in snaps]))
    else:
        for snap in snaps:
            if snap.gpus and snap.status.state.value in _READING:
                rows = [(g.index, _line(snap, g)) for g in snap.gpus]
                rows += [(f.index, _fault_line(snap, f)) for f in snap.faults]
                for _index, text in sorted(rows, key=lambda r: (r[0] is None, r[0] or 0)):
                    print(text)
            else:
                from gpu_companion.core.common.plain import plain_line

                st = snap.status  # its message may quote the host
                print(
                    plain_line(f"{snap.alias}\t{st.state.value}: {st.message} {st.hint}".rstrip())
                )
    return 0 if all(s.ok for s in snaps) else 1
