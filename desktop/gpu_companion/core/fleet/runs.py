"""Sharded runs on GNU parallel: a run is a folder (spec, inputs, joblog, per-shard output), so it
survives the app restarting; parallel itself keeps running in its own session and its joblog is
the record of what finished.

    <data dir>/runs/<run id>/spec.json   what was asked (hosts and slots, command, inputs)
                             inputs.txt  one shard argument per line
                             joblog      parallel's --joblog (Seq, Host, ..., Exitval, Signal)
                             out/<seq>/  parallel's --results: stdout, stderr, seq
                             pid         the parallel process while it runs
                             returns.json  each shard's returned files: verified here, then
                                         removed from the host (never before)

A shard with `returns` is done only when its files are here and match the checksums its host
took (`.gpu-companion-<run>-<seq>.sha256`, returned with them). GNU parallel's `--cleanup` is
not used for them: it deletes the remote files even when the copy back failed (`;`, not `&&`)
and keeps the job's exit status, so a failed return would read "done" with the output gone.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.listeners import Listeners
from gpu_companion.core.common.money import format_money, to_minor
from gpu_companion.core.spend.ledger import SpendLedger

log = logging.getLogger(__name__)
_log = log  # `log` is also a joblog's name in the methods below

INSTALL_HINT = N_("Install GNU parallel (Debian/Ubuntu: sudo apt-get install parallel).")
SHARD_TAIL_BYTES = 256 * 1024  # of each stream, for the Runs page (a shard may log gigabytes)


@dataclass(frozen=True)
class HostSlots:
    alias: str
    slots: int = 1  # jobs at once on this host (default: its GPU count)


@dataclass(frozen=True)
class RunSpec:
    """What a run does: `command` is a shell template run on the hosts, `{}` the shard's input
    (with `--range`, also `{1}` the first id and `{2}` one past the last)."""

    hosts: tuple[HostSlots, ...]
    command: str
    inputs: tuple[str, ...]
    by_range: bool = False
    retries: int = 1
    returns: tuple[str, ...] = ()  # files each shard leaves on its host, e.g. "{}.out"
    transfer_inputs: bool = False  # inputs are local files: parallel copies each one over first

    def validated(self) -> RunSpec:
        if not self.hosts:
            raise UserError(_("Pick at least one host for the run."))
        if not self.command.strip():
            raise UserError(_("The run needs a command, e.g. 'python work.py {}'."))
        if not self.inputs:
            raise UserError(_("The run has no inputs: give a list of files or an id range."))
        for h in self.hosts:
            if h.slots < 1:
                raise UserError(_("{alias}: at least one job at a time.").format(alias=h.alias))
        if self.retries < 1:
            raise UserError(_("Retries must be 1 (no retry) or more."))
        for pattern in self.returns:
            if pattern.startswith("/") or ".." in pattern.split("/") or "\n" in pattern:
                raise UserError(_("Return {pattern}: name a file under the host's home "
                                  "(a relative path, no '..'), e.g. {{}}.out.").format(
                                    pattern=repr(pattern)))  # fmt: skip
        return self


# GNU parallel's replacement strings: {} {.} {/} {//} {/.} {#} {%} and the positional {1} {1.} ...
_REPLACEMENT = re.compile(r"\{(?:\d+)?(?:\.|/\.|//|/)?\}|\{[#%]\}")


def command_from_words(words: Sequence[str]) -> str:
    """The shell template for a command given word by word (the CLI's `-- CMD ARGS`): each word
    is kept whole on the host (shlex.quote), while `{}`, `{1}`… stay replacement strings that
    parallel fills in (already quoted by parallel), also inside a word: `out-{1}.txt`."""
    quoted = []
    for word in words:
        parts, at = [], 0
        for m in _REPLACEMENT.finditer(word):
            if m.start() > at:
                parts.append(shlex.quote(word[at : m.start()]))
            parts.append(m.group(0))
            at = m.end()
        if at < len(word) or not parts:
            parts.append(shlex.quote(word[at:]))
        quoted.append("".join(parts))
    return " ".join(quoted)


def gpu_pinning(hosts: Sequence[HostSlots], run_id: str) -> str:
    """Shell run before each shard: on a host with more than one slot, the shard takes the
    lowest GPU index no other shard of this run holds there (a `flock` per index under the
    user's ~/.cache, held until the shard ends) and sees only that GPU (CUDA_VISIBLE_DEVICES).
    GNU parallel's `{%}` cannot do this: its slot numbers count across all hosts. A host with
    one slot, a command that sets CUDA_VISIBLE_DEVICES itself or a host without flock is left
    as it is (the shard sees every GPU)."""
    pinned = [h for h in hosts if h.slots > 1]
    if not pinned:
        return ""
    # one lock set per host of the run: two aliases of one machine, or hosts sharing an NFS home,
    # still hand out each host's own indices
    cases = " ".join(
        f"{shlex.quote(h.alias)}) _gpuc_n={h.slots}; _gpuc_h={n};;" for n, h in enumerate(pinned)
    )
    locks = '"$HOME/.cache/gpu-companion/run-' + run_id + '-h$_gpuc_h-gpu$_gpuc_i.lock"'
    return (
        f'_gpuc_n=0; case "$PARALLEL_SSHHOST" in {cases} esac; '
        'if [ "$_gpuc_n" -gt 1 ] && [ -z "${CUDA_VISIBLE_DEVICES+x}" ] '
        "&& command -v flock >/dev/null 2>&1 && mkdir -p \"$HOME/.cache/gpu-companion\"; then "
        "_gpuc_i=0; while [ $_gpuc_i -lt $_gpuc_n ]; do "
        f"if exec 9>{locks} && flock -n 9; then export CUDA_VISIBLE_DEVICES=$_gpuc_i; break; fi; "
        "_gpuc_i=$((_gpuc_i+1)); done; fi; "
    )


def split_range(start: int, stop: int, shards: int) -> tuple[str, ...]:
    """`start:stop` (stop excluded) cut into `shards` nearly equal `a:b` pieces, none empty."""
    if stop <= start:
        raise UserError(_("The range {start}:{stop} is empty; the second number is excluded.")
                        .format(start=start, stop=stop))  # fmt: skip
    if shards < 1:
        raise UserError(_("At least one shard."))
    shards = min(shards, stop - start)
    size, extra = divmod(stop - start, shards)
    out, a = [], start
    for i in range(shards):
        b = a + size + (1 if i < extra else 0)
        out.append(f"{a}:{b}")
        a = b
    return tuple(out)


def parse_range(text: str) -> tuple[int, int]:
    try:
        a, b = text.split(":")
        return int(a), int(b)
    except ValueError as exc:
        raise UserError(
            _("{text} is not a range: write START:STOP, e.g. 0:1000.").format(text=repr(text))
        ) from exc


@dataclass(frozen=True)
class Shard:
    seq: int
    input: str
    state: str  # pending | running | done | failed
    host: str = ""
    exit_code: int | None = None
    signal: int | None = None
    runtime_s: float | None = None
    started_at: float | None = None
    reason: str = ""  # why a shard that exited 0 still failed (its files did not come back)


# A run's shard counts as its summary says them, in this order
_COUNTS = {
    "done": N_("{n} done"),
    "failed": N_("{n} failed"),
    "running": N_("{n} running"),
    "pending": N_("{n} pending"),
}


@dataclass
class RunStatus:
    run_id: str
    shards: list[Shard] = field(default_factory=list)
    running: bool = False

    def count(self, state: str) -> int:
        return sum(1 for s in self.shards if s.state == state)

    @property
    def finished(self) -> bool:
        return not self.running and self.count("pending") == 0 and self.count("running") == 0

    def summary(self) -> str:
        parts = [_(_COUNTS[s]).format(n=self.count(s)) for s in _COUNTS if self.count(s)]
        return _("run {id}: {counts}").format(id=self.run_id, counts=", ".join(parts))

    def elapsed_s(self) -> float:
        spans = [
            (s.started_at, s.started_at + (s.runtime_s or 0))
            for s in self.shards
            if s.started_at is not None
        ]
        return max(e for _b, e in spans) - min(b for b, _e in spans) if spans else 0.0


def parse_joblog(text: str) -> dict[int, dict[str, str]]:
    """The last line per Seq (a rerun appends); malformed lines are skipped."""
    rows: dict[int, dict[str, str]] = {}
    lines = text.splitlines()
    if not lines:
        return rows
    header = lines[0].split("\t")
    for line in lines[1:]:
        cols = line.split("\t")
        if len(cols) < len(header) - 1:
            continue
        row = dict(zip(header, cols, strict=False))
        try:
            rows[int(row["Seq"])] = row
        except (KeyError, ValueError):
            continue
    return rows


class Runs:
    """The runs folder: start, read, cancel and resume runs of GNU parallel over `ssh_argv`."""

    def __init__(
        self,
        root: Path,
        ssh_argv: Sequence[str],
        parallel: str = "parallel",
        prepare: Callable[[list[str]], None] | None = None,
        lend_keys: Callable[[list[str], Path], list[str]] | None = None,
    ) -> None:
        self.root = root
        self.ssh_argv = list(ssh_argv)
        self.parallel = parallel
        self.prepare = prepare  # e.g. the hosts' keys into the app's agent
        # the hosts' keys into the run's own agent (at the given socket), their public lines
        # back: a run then outlives the window and the command that started it
        self.lend_keys = lend_keys
        # a run id whenever a run changes: started, resumed or cancelled here, or a shard ended
        # (GNU parallel writes the joblog from its own process: one follower thread reads it,
        # only while someone listens and a run is live)
        self.on_change: Listeners[str] = Listeners("runs")
        self._follow_lock = threading.Lock()
        self._listeners = 0
        self._follower: threading.Thread | None = None
        self._follow_stop = threading.Event()
        self.follow_every_s = 0.5
        self._touched: set[str] = set()  # started or cancelled here: looked at next round

    def _changed_here(self, run_id: str) -> None:
        with self._follow_lock:
            self._touched.add(run_id)
        self.on_change.emit(run_id)

    def subscribe(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """`listener(run_id)` on each change, on the follower's (or the acting) thread."""
        unsubscribe = self.on_change.subscribe(listener)
        with self._follow_lock:
            self._listeners += 1
            if self._follower is None:
                self._follow_stop.clear()
                self._follower = threading.Thread(target=self._follow, name="runs-follower",
                                                  daemon=True)  # fmt: skip
                self._follower.start()

        def done() -> None:
            unsubscribe()
            with self._follow_lock:
                self._listeners -= 1
                thread = self._follower if self._listeners == 0 else None
                if thread is not None:
                    self._follower = None
                    self._follow_stop.set()
            if thread is not None and thread is not threading.current_thread():
                thread.join(5)

        return done

    def close(self) -> None:
        """Stop following (the app exits); listeners stay subscribed but hear nothing more."""
        with self._follow_lock:
            thread, self._follower = self._follower, None
            self._follow_stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(5)

    def _signature(self, run_id: str) -> tuple[object, ...]:
        run = self.root / run_id
        try:
            log = (run / "joblog").stat()
            logged: tuple[int, int] = (log.st_mtime_ns, log.st_size)
        except OSError:
            logged = (0, 0)
        try:
            started = sum(1 for _f in (run / "out").iterdir())
        except OSError:
            started = 0
        return (*logged, started, self._alive(run) is not None)

    def _follow(self) -> None:
        seen: dict[str, tuple[object, ...]] = {}
        while not self._follow_stop.wait(self.follow_every_s):
            try:
                ids = self.ids()
                with self._follow_lock:
                    touched, self._touched = self._touched, set()
                live = touched | {i for i in ids if i in seen and seen[i][-1]} | {
                    i for i in ids if self._alive(self.root / i) is not None
                }
                for run_id in ids:
                    if run_id not in live and run_id in seen:
                        continue
                    signature = self._signature(run_id)
                    if seen.get(run_id) != signature:
                        if not signature[-1] and run_id in seen:
                            self.settle(run_id)  # it ended: what came back verified leaves
                        if run_id in seen or run_id in touched:
                            self.on_change.emit(run_id)
                        seen[run_id] = signature
            except Exception:  # a run folder removed while read: the next round sees it
                log.debug("following the runs failed", exc_info=True)

    def _dir(self, run_id: str) -> Path:
        path = self.root / run_id
        if not run_id or "/" in run_id or run_id.startswith(".") or not path.is_dir():
            raise UserError(_("No run {id} in {folder}.").format(id=repr(run_id), folder=self.root))
        return path

    def ids(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted((p.name for p in self.root.iterdir() if (p / "spec.json").is_file()),
                      reverse=True)  # fmt: skip

    def spec(self, run_id: str) -> RunSpec:
        data = json.loads((self._dir(run_id) / "spec.json").read_text())
        data["hosts"] = tuple(HostSlots(**h) for h in data["hosts"])
        for key in ("inputs", "returns"):
            data[key] = tuple(data[key])
        return RunSpec(**data)

    def argv(
        self, run_id: str, spec: RunSpec, resume_failed: bool = False, keys: Path | None = None
    ) -> list[str]:
        """The parallel command line, as data first (tests assert on it). With `keys`, the
        run's own agent there (its socket and public keys) in place of the app's."""
        run = self.root / run_id
        command = spec.command
        ssh = list(self.ssh_argv)
        if keys is not None:
            ssh += ["-o", f"IdentityAgent={keys / 'agent.sock'}"]
            # one public key per platform, at most one per host; ssh tries them in order (one
            # that is not there is never reached once a key is accepted)
            ssh += [a for n in range(len(spec.hosts))
                    for a in ("-o", f"IdentityFile={keys / f'key{n}.pub'}")]  # fmt: skip
        argv = [
            self.parallel,
            "--will-cite",
            "--ssh",
            shlex.join(ssh),
            "--sshloginfile",
            str(run / "sshlogins"),
            "--joblog",
            str(run / "joblog"),
            "--results",
            str(run / "out") + "/{#}/",
            "--retries",
            str(spec.retries),
            "--halt",
            "never",
        ]
        if spec.by_range:
            argv += ["--colsep", ":"]
        if spec.transfer_inputs:
            argv += ["--transferfile", "{}"]
        if spec.returns:
            # the host sums what it returns; the sums come back with the files and are checked
            # here before anything is removed there (see `settle`)
            sums = _sums_name(run_id, "{#}")
            command = (f"( {spec.command}\n); _gpuc_rc=$?; sha256sum -- "
                       f"{command_from_words(spec.returns)} > {sums} 2>/dev/null; "
                       "exit $_gpuc_rc")  # fmt: skip
            for pattern in (*spec.returns, sums):
                argv += ["--return", pattern]
        elif spec.transfer_inputs:
            argv.append("--cleanup")  # only the inputs: no output to lose
        if resume_failed:
            argv.append("--resume-failed")
        return [*argv, "-a", str(run / "inputs.txt"), gpu_pinning(spec.hosts, run_id) + command]

    def start(self, spec: RunSpec) -> str:
        if shutil.which(self.parallel) is None:
            raise UserError(
                _("GNU parallel is not installed on this computer."), hint=_(INSTALL_HINT)
            )
        spec = spec.validated()
        run_id = time.strftime("%Y%m%d-%H%M%S")
        n = 1
        while (self.root / run_id).exists():
            n += 1
            run_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{n}"
        run = self.root / run_id
        (run / "out").mkdir(parents=True, mode=0o700)
        if spec.transfer_inputs:  # local files: parallel sends each from the run's folder
            spec = replace(spec, inputs=_stage_inputs(spec.inputs, run / "out" / "in"))
        (run / "spec.json").write_text(json.dumps(asdict(spec), indent=1))
        (run / "inputs.txt").write_text("".join(f"{i}\n" for i in spec.inputs))
        self._launch(run_id, spec)
        return run_id

    def resume_failed(self, run_id: str) -> None:
        """Rerun only the shards whose last attempt failed (and any never started)."""
        status = self.status(run_id)
        if status.running:
            raise UserError(_("Run {id} is still running.").format(id=run_id))
        self._forget_failed_returns(run_id, {s.seq for s in status.shards if s.reason})
        self._launch(run_id, self.spec(run_id), resume_failed=True)

    def _forget_failed_returns(self, run_id: str, seqs: set[int]) -> None:
        """parallel's --resume-failed reruns what exited non-zero or never ran: a shard that
        exited 0 but whose files did not come back leaves the joblog, so it runs again."""
        if not seqs:
            return
        path = self.root / run_id / "joblog"
        lines = path.read_text(errors="replace").splitlines(keepends=True)
        kept = lines[:1] + [
            line for line in lines[1:] if _int(line.split("\t", 1)[0]) not in seqs
        ]
        tmp = path.with_name(".joblog.tmp")
        tmp.write_text("".join(kept))
        os.replace(tmp, path)

    def _launch(self, run_id: str, spec: RunSpec, resume_failed: bool = False) -> None:
        run = self.root / run_id
        aliases = [h.alias for h in spec.hosts]
        (run / "sshlogins").write_text("".join(f"{h.slots}/{h.alias}\n" for h in spec.hosts))
        env = {**os.environ, "LC_ALL": "C", "PARALLEL_HOME": str(run / ".parallel")}
        if self.lend_keys is None:
            if self.prepare is not None:
                self.prepare(aliases)
            with open(run / "parallel.log", "ab") as log:
                proc = subprocess.Popen(
                    self.argv(run_id, spec, resume_failed),
                    cwd=run / "out",
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,  # runs on if the app quits; cancel kills the group
                )
        else:
            proc = self._launch_with_own_agent(run_id, spec, resume_failed, aliases, env)
        (run / "pid").write_text(str(proc.pid))
        self._procs[proc.pid] = proc
        self._changed_here(run_id)

    def _launch_with_own_agent(
        self,
        run_id: str,
        spec: RunSpec,
        resume_failed: bool,
        aliases: list[str],
        env: dict[str, str],
    ) -> subprocess.Popen[bytes]:
        """parallel under a small shell that owns an ssh-agent for this run alone: the keys go
        in from the keyring (ssh-add on stdin, never a file), the shell starts parallel only
        then, and the agent and its folder go when parallel ends (or the run is cancelled)."""
        assert self.lend_keys is not None
        agent = shutil.which("ssh-agent")
        if agent is None:
            raise UserError(
                _("ssh-agent is not installed, so the run cannot hold its keys."),
                hint=_("Install the OpenSSH client (Debian: openssh-client)."),
            )
        keys = Path(tempfile.mkdtemp(prefix="gpuc-run-", dir=_runtime_base()))  # 0700
        sock = keys / "agent.sock"
        run = self.root / run_id
        with open(run / "parallel.log", "ab") as log:
            proc = subprocess.Popen(
                ["sh", "-c", _RUN_SHELL, "gpu-companion-run", agent, str(sock), str(keys),
                 *self.argv(run_id, spec, resume_failed, keys)],
                cwd=run / "out", env=env, stdin=subprocess.PIPE, stdout=log, stderr=log,
                start_new_session=True,  # runs on if the app quits; cancel kills the group
            )  # fmt: skip
        assert proc.stdin is not None
        try:
            deadline = time.monotonic() + 10
            while not sock.exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise UserError(_("The run's ssh-agent did not start (see parallel.log)."))
                time.sleep(0.01)
            for n, line in enumerate(self.lend_keys(aliases, sock)):
                (keys / f"key{n}.pub").write_text(line.strip() + "\n")
            # the argv named the .pub files before they existed: ssh reads them at each connect
            proc.stdin.write(b"go\n")
            proc.stdin.close()
        except BaseException:
            proc.stdin.close()  # end of input without the word: the shell ends the agent
            proc.wait(10)
            shutil.rmtree(keys, ignore_errors=True)
            raise
        return proc

    _procs: dict[int, subprocess.Popen[bytes]] = {}

    def _alive(self, run: Path) -> int | None:
        try:
            pid = int((run / "pid").read_text())
        except (OSError, ValueError):
            return None
        proc = self._procs.get(pid)
        if proc is not None:
            return pid if proc.poll() is None else None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return None
        return pid if str(run).encode() in cmdline else None  # not a recycled pid

    def status(self, run_id: str) -> RunStatus:
        run = self._dir(run_id)
        inputs = (run / "inputs.txt").read_text().splitlines()
        try:
            log = parse_joblog((run / "joblog").read_text(errors="replace"))
        except OSError:
            log = {}
        alive = self._alive(run) is not None
        returns = self._returns(run_id, log)
        shards = []
        for seq, arg in enumerate(inputs, start=1):
            row = log.get(seq)
            if row is not None:
                code, sig = _int(row.get("Exitval")), _int(row.get("Signal"))
                ok = code == 0 and sig == 0
                reason = ""
                if ok and seq in returns and not returns[seq]["ok"]:
                    ok, reason = False, str(returns[seq]["reason"])
                shards.append(Shard(seq, arg, "done" if ok else "failed", row.get("Host", ""),
                                    code, sig, _float(row.get("JobRuntime")),
                                    _float(row.get("Starttime")), reason))  # fmt: skip
            elif alive and (run / "out" / str(seq)).is_dir():
                shards.append(Shard(seq, arg, "running"))
            else:
                shards.append(Shard(seq, arg, "pending"))
        return RunStatus(run_id, shards, alive)

    def _returns(self, run_id: str, log: dict[int, dict[str, str]]) -> dict[int, dict[str, Any]]:
        """Each finished shard's returned files checked against its host's sums, once per
        attempt (kept in returns.json: a file is not hashed again on every look)."""
        run = self.root / run_id
        try:
            spec = self.spec(run_id)
        except (OSError, ValueError, TypeError):
            return {}
        if not spec.returns:
            return {}
        book = _read_json(run / "returns.json")
        changed = False
        for seq, row in log.items():
            if _int(row.get("Exitval")) != 0 or _int(row.get("Signal")) != 0:
                continue
            attempt = row.get("Starttime", "")
            known = book.get(str(seq))
            if known is not None and known.get("attempt") == attempt:
                continue
            names, reason = _verify_returns(run / "out", _sums_name(run_id, str(seq)),
                                            len(spec.returns), row.get("Host", "?"))  # fmt: skip
            book[str(seq)] = {"attempt": attempt, "ok": not reason, "reason": reason,
                              "names": names, "cleaned": False}  # fmt: skip
            changed = True
        if changed:
            _write_json(run / "returns.json", book)
        return {int(k): v for k, v in book.items() if k.isdigit()}

    def settle(self, run_id: str) -> int:
        """Remove from the hosts what came back verified (the files, their sums, a transferred
        input); a shard whose files did not come back keeps them there. The count removed."""
        run = self._dir(run_id)
        spec = self.spec(run_id)
        if not spec.returns:
            return 0
        try:
            log = parse_joblog((run / "joblog").read_text(errors="replace"))
        except OSError:
            return 0
        book = self._returns(run_id, log)
        inputs = (run / "inputs.txt").read_text().splitlines()
        cleaned = 0
        for seq, entry in sorted(book.items()):
            row = log.get(seq)
            if not entry["ok"] or entry.get("cleaned") or row is None:
                continue
            names = [*entry["names"], _sums_name(run_id, str(seq))]
            if spec.transfer_inputs and 0 < seq <= len(inputs):
                names.append(inputs[seq - 1])
            done = subprocess.run(
                [*self.ssh_argv, row.get("Host", ""),
                 "rm -f -- " + " ".join(shlex.quote(n) for n in names)],
                stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                log_text = done.stderr.decode(errors="replace").strip()
                _log.info("run %s shard %s: removing its returned files failed: %s",
                          run_id, seq, log_text)  # fmt: skip
                continue  # the next look tries again
            entry["cleaned"] = True
            cleaned += 1
        if cleaned:
            book_now = _read_json(run / "returns.json")
            for seq, entry in book.items():
                if entry.get("cleaned") and str(seq) in book_now:
                    book_now[str(seq)]["cleaned"] = True
            _write_json(run / "returns.json", book_now)
        return cleaned

    def output(self, run_id: str, seq: int, stream: str = "stdout", tail: int | None = None) -> str:
        """A shard's stdout or stderr; with `tail`, its last `tail` bytes only (a note says how
        much came before)."""
        if stream not in ("stdout", "stderr"):
            raise ValueError(stream)
        path = self._dir(run_id) / "out" / str(int(seq)) / stream
        try:
            with path.open("rb") as f:
                size = f.seek(0, os.SEEK_END)
                skipped = max(0, size - tail) if tail is not None else 0
                f.seek(max(0, skipped - 1))  # one byte more: is the cut at a line's start?
                data = f.read()
        except (FileNotFoundError, IsADirectoryError):
            return ""
        if skipped:  # from the first whole line on, when there is one
            newline = data.find(b"\n")
            cut = newline + 1 if newline >= 0 else 1
            skipped, data = skipped - 1 + cut, data[cut:]
        text = data.decode("utf-8", "replace")
        if not skipped:
            return text
        return _("[… the first {n} bytes are not shown]").format(n=f"{skipped:,}") + f"\n{text}"

    def shard_text(self, run_id: str, seq: int, tail: int = SHARD_TAIL_BYTES) -> str:
        """What the Runs page shows for a shard: the end of its stdout, then of its stderr."""
        out = self.output(run_id, seq, tail=tail)
        err = self.output(run_id, seq, "stderr", tail=tail)
        sep = "\n" if out and not out.endswith("\n") else ""
        return out + (f"{sep}--- stderr ---\n{err}" if err else "")

    def wait(self, run_id: str, timeout: float | None = None) -> RunStatus:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.status(run_id)
            if not status.running:
                self.settle(run_id)
                return status
            if deadline is not None and time.monotonic() > deadline:
                return status
            time.sleep(0.2)

    def cancel(self, run_id: str) -> bool:
        """TERM to parallel's process group: parallel stops its ssh jobs, which ends the remote
        processes. False when the run was not running."""
        pid = self._alive(self._dir(run_id))
        if pid is None:
            return False
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            return False
        proc = self._procs.get(pid)
        if proc is not None:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(pid, signal.SIGKILL)
                proc.wait(5)
        self._changed_here(run_id)
        return True


def run_cost(ledger: SpendLedger, status: RunStatus) -> str:
    """What the run's hosts cost while it ran: each host's metered rate × the run's time ("" when
    none of them is metered)."""
    hours = Decimal(str(round(status.elapsed_s(), 3))) / 3600
    totals: dict[str, Decimal] = {}
    for alias in sorted({s.host for s in status.shards if s.host}):
        rental = ledger.running_for_alias(alias)
        if rental is not None:
            rate = rental.hourly_rate() * hours
            totals[rental.currency] = totals.get(rental.currency, Decimal(0)) + rate
    return ", ".join(format_money(to_minor(v, c), c) for c, v in sorted(totals.items()))


def _stage_inputs(paths: Sequence[str], into: Path) -> tuple[str, ...]:
    """Copy local input files under the run's folder and name them relatively, so parallel's
    `--transferfile` puts them under the host's home (and `--cleanup` removes them there)."""
    into.mkdir(mode=0o700)
    staged = []
    for n, path in enumerate(paths, start=1):
        src = Path(path).expanduser()
        if not src.is_file():
            raise UserError(_("{path} is not a file on this computer.").format(path=path))
        dest = into / f"{n:05d}-{src.name}"
        shutil.copy2(src, dest)
        staged.append(str(dest.relative_to(into.parent)))
    return tuple(staged)


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


# The run's own shell: $1 ssh-agent, $2 its socket, $3 the run's key folder, then parallel's
# argv. The agent starts first; parallel only after the app has put the keys in and said "go"
# (end of input without it: nothing runs). The agent and the folder go when the shell ends;
# a cancel (TERM to the group) reaches parallel, its ssh jobs and the agent alike.
_RUN_SHELL = """
agent=$1 sock=$2 keys=$3; shift 3
"$agent" -D -a "$sock" </dev/null >/dev/null 2>&1 &
apid=$!
trap 'kill $apid 2>/dev/null; rm -rf "$keys"' EXIT
trap 'exit 143' TERM INT HUP
read -r word || exit 1
[ "$word" = go ] || exit 1
"$@" </dev/null
"""


def _runtime_base() -> str | None:
    """Where a run's key folder is made (mkdtemp, 0700): the private per-user runtime dir when
    there is one, else the system's temp dir; a short path either way (a socket's limit)."""
    from gpu_companion.core.ssh.runtime import private_dir_problem

    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg) and " " not in xdg and len(xdg) < 60:
        if private_dir_problem(Path(xdg)) is None:
            return xdg
    return None


def _sums_name(run_id: str, seq: str) -> str:
    """The file a shard's host writes its returned files' sha256 sums to (beside them)."""
    return f".gpu-companion-{run_id}-{seq}.sha256"


def _verify_returns(out: Path, sums_name: str, expected: int, host: str) -> tuple[list[str], str]:
    """The returned names and "" when every file is here with its host's checksum; else the
    reason, in words. Names come from the host: only plain relative paths are looked at."""
    kept = _("; its output is kept on {host}").format(host=host)
    try:
        lines = (out / sums_name).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        why = _("its result files did not come back from {host} (see parallel.log){kept}")
        return [], why.format(host=host, kept=kept)
    names: list[str] = []
    for line in lines:
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or line.startswith("\\"):
            return names, _("{host} sent an unreadable checksum line{kept}").format(
                host=host, kept=kept)
        parts = Path(name).parts
        if not name or name.startswith("/") or ".." in parts or "\0" in name:
            why = _("{host} named a result file outside the run: {name}{kept}")
            return names, why.format(host=host, name=repr(name), kept=kept)
        names.append(name)
        try:
            with (out / name).open("rb") as f:
                here = hashlib.file_digest(f, "sha256").hexdigest()
        except OSError:
            return names, _("{name} did not come back from {host}{kept}").format(
                name=name, host=host, kept=kept)
        if here != digest:
            why = _("{name} came back different from the file on {host}{kept}")
            return names, why.format(name=name, host=host, kept=kept)
    if len(names) < expected:
        why = _("the command left {n} of {expected} result files on {host}{kept}")
        return names, why.format(n=len(names), expected=expected, host=host, kept=kept)
    return names, ""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)
