"""No work still running: GPU compute processes, training processes, tmux and screen sessions.

tmux sessions are found two ways, because a session on a socket the check does not know would be
missed: `tmux list-panes -a` on the login's default socket (tmux itself resolves $TMUX_TMPDIR and
/tmp/tmux-UID/default), and every other socket a running tmux server listens on, read from
/proc/PID/fd and /proc/net/unix (which covers `tmux -S path` and `tmux -L name`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.monitor.nvsmi import (
    DEFAULT_COMPUTE_APPS_FIELDS,
    build_query_compute_apps_argv,
    parse_compute_apps_csv,
)
from gpu_companion.core.release.context import ReleaseContext
from gpu_companion.core.release.model import ChecklistItem, Evidence, Label

WORK_NAMES = re.compile(r"^(python[0-9.]*|torchrun|deepspeed|accelerate|tmux.*|screen|SCREEN)$")

# "$@" is the nvidia-smi argv. Sections are separated by "## name" lines. tmux prints control
# characters as "_", hence the printable field separator "|#|" (the session name goes last).
_PROBE = r"""
echo '## gpu'
"$@" 2>&1; echo "## gpu-exit $?"
echo '## self'
echo $$
echo '## ps'
ps -eo pid=,ppid=,args= 2>/dev/null
echo '## comm'
ps -eo pid=,stat=,comm= 2>/dev/null
echo '## tmux'
fmt='#{socket_path}|#|#{pane_pid}|#|#{pane_current_command}|#|#{session_name}'
inodes=''
for d in /proc/[0-9]*; do
  read -r comm < "$d/comm" 2>/dev/null || continue
  [ "$comm" = "tmux: server" ] || continue
  for fd in "$d"/fd/*; do
    l=$(readlink "$fd" 2>/dev/null) || continue
    case $l in socket:*) i=${l#socket:[}; inodes="$inodes ${i%]}";; esac
  done
done
socks=''
[ -n "$inodes" ] && socks=$(awk -v want="$inodes" 'BEGIN { n = split(want, w, " ");
  for (k = 1; k <= n; k++) keep[w[k]] = 1 } ($7 in keep) && $8 != "" { print $8 }' /proc/net/unix)
{ tmux list-panes -a -F "$fmt" 2>/dev/null
  printf '%s\n' "$socks" | sort -u | while IFS= read -r s; do
    [ -n "$s" ] && tmux -S "$s" list-panes -a -F "$fmt" 2>/dev/null
  done
} | sort -u
echo '## screen'
screen -ls 2>/dev/null
true
"""


@dataclass(frozen=True)
class Findings:
    gpu: list[str]
    processes: list[str]
    sessions: list[str]
    gpu_problem: str = ""

    @property
    def all(self) -> list[str]:
        return [*self.gpu, *self.sessions, *self.processes]


def _sections(out: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = ""
    for line in out.splitlines():
        if line.startswith("## "):
            current = line[3:].split(" ", 1)[0]
            sections[current] = [line[3:]] if current == "gpu-exit" else []
        elif current:
            sections[current].append(line)
    return sections


def parse_probe(out: str, ignored: tuple[str, ...]) -> Findings:
    s = _sections(out)
    gpu: list[str] = []
    problem = ""
    exit_line = (s.get("gpu-exit") or ["gpu-exit 0"])[0]
    code = int(exit_line.split()[1]) if exit_line.split()[1:] else 0
    gpu_text = "\n".join(s.get("gpu", []))
    if code == 127:
        problem = _("nvidia-smi is not installed: no GPU process to check")
    else:
        parsed = parse_compute_apps_csv(gpu_text, DEFAULT_COMPUTE_APPS_FIELDS)
        if parsed.error is not None or code != 0:
            msg = parsed.error.message if parsed.error else gpu_text.strip()[:200]
            unknown = _("GPU processes unknown: {why}").format(why=msg)
            return Findings([unknown], [], [], gpu_problem=msg)
        for app in parsed.samples:
            mem = f", {app.used_memory_mib} MiB" if app.used_memory_mib is not None else ""
            gpu.append(
                _("GPU process {pid} {name}{memory}").format(
                    pid=app.pid, name=app.process_name or "?", memory=mem
                )
            )
    own = {line.strip() for line in s.get("self", [])}
    comms, zombies = {}, set()
    for line in s.get("comm", []):
        fields = line.split(None, 2)
        if len(fields) < 2:
            continue
        pid, stat, comm = fields[0], fields[1], fields[2] if len(fields) > 2 else ""
        if stat.startswith("Z"):  # exited, only waiting for its parent to read its status
            zombies.add(pid)
        comms[pid] = comm.strip()
    procs = []
    for line in s.get("ps", []):
        parts = line.split(None, 2)
        if len(parts) < 2 or parts[0] in own or parts[1] in own:
            continue
        pid, args = parts[0], parts[2] if len(parts) > 2 else ""
        if pid in zombies:  # a dead process is no work (`python3 <defunct>`)
            continue
        comm = comms.get(pid, "")
        first = args.split(" ", 1)[0].rsplit("/", 1)[-1]
        if not (WORK_NAMES.match(comm) or WORK_NAMES.match(first)):
            continue
        if any(pattern and pattern in args for pattern in ignored):
            continue
        procs.append(_("process {pid} {command}").format(pid=pid, command=args or comm))
    sessions = []
    for line in s.get("tmux", []):
        parts = line.split("|#|", 3)
        if len(parts) == 4:
            sock, pane_pid, command, name = parts
            sessions.append(
                _("tmux session {name} (socket {socket}): {command}, pid {pid}").format(
                    name=repr(name), socket=sock, command=command, pid=pane_pid
                )
            )
    for line in s.get("screen", []):
        m = re.match(r"^\s+(\d+)\.(\S+)\s", line)
        if m:
            sessions.append(
                _("screen session {name}, pid {pid}").format(name=repr(m.group(2)), pid=m.group(1))
            )
    return Findings(gpu, procs, sessions, gpu_problem=problem)


class NoWorkRunning(ChecklistItem):
    key = "processes"
    title = Label(N_("No work still running"))
    fix_label = Label(N_("Show processes"))

    def probe(self, ctx: ReleaseContext) -> Findings:
        res = ctx.run_script(_PROBE, *build_query_compute_apps_argv())
        return parse_probe(res.out, ctx.config.ignored_processes)

    def run(self, ctx: ReleaseContext) -> Evidence:
        t0 = ctx.remote_now()
        found = self.probe(ctx)
        ok = not found.all
        summary = _("nothing running") if ok else _("{n} still running").format(n=len(found.all))
        if found.gpu_problem and ok:
            summary = _("nothing running ({problem})").format(problem=found.gpu_problem)
        return Evidence(
            self.key,
            ok,
            summary,
            _(
                "nvidia-smi compute apps, python/torchrun/deepspeed/accelerate processes, tmux and "
                "screen sessions"
            ),
            ctx.clock(),
            figures={
                "gpu_processes": len(found.gpu),
                "processes": len(found.processes),
                "sessions": len(found.sessions),
            },
            details=tuple(found.all),
            remote_time=t0,
        )

    def changed_since(self, ctx: ReleaseContext, evidence: Evidence) -> str | None:
        found = self.probe(ctx).all
        if not found:
            return None
        return _("running now: {work}").format(work=", ".join(found[:5]))

    def fix(self, ctx: ReleaseContext) -> Iterator[str]:
        found = self.probe(ctx).all
        yield from found or [_("nothing running")]
