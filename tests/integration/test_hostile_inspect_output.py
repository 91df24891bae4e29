"""A hostile host's process name (terminal escapes: OSC 52 clipboard write, OSC 0 title,
clear-screen) reaches `gpu-companion inspect` as text, never as a command to the terminal."""

from __future__ import annotations

import json

from gpu_companion.cli import build_parser
from gpu_companion.commands import inspect
from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.storage.store import Store

HOSTILE = "py\x1b]52;c;cm0gLXJmIH4=\x07thon\x1b]0;owned\x07\x1b[2J\x1b[H<h1>x</h1>\x9b31m"


def test_inspect_prints_a_hostile_process_name_without_its_escapes(
    app_paths, sshd, standin, harness_client_factory, capsys
):
    process = {"gpu": 0, "pid": 7, "name": HOSTILE, "used_mib": 10}
    standin.configure(gpu_count=1, util=5, mem_used=10, temperature=40, processes=[process])
    store = Store(app_paths.database)
    HostRegistry(store).save_host(Host("gpu1", "127.0.0.1", sshd.port, sshd.user))
    store.close()

    args = build_parser().parse_args(["inspect", "gpu1"])
    assert inspect.run(args, factory=harness_client_factory) == 0
    out = capsys.readouterr().out
    assert "procs python<h1>x</h1>(7)" in out
    assert not any(c in out for c in "\x1b\x07\x9b\r")

    args = build_parser().parse_args(["inspect", "gpu1", "--json"])
    assert inspect.run(args, factory=harness_client_factory) == 0
    data = json.loads(capsys.readouterr().out)  # data keeps the host's exact text
    assert data[0]["gpus"][0]["processes"][0]["name"] == HOSTILE
