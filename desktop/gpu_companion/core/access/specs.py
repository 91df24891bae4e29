"""Named tunnels per host (Jupyter, TensorBoard, an inference API, custom ones), saved by host id,
and the `-L` forwards of a pasted ssh command read as tunnels instead of being dropped."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.validation import validate_hostname, validate_port
from gpu_companion.core.storage.store import Store

_NAME_RE = re.compile(r"^[\w .()/+-]{1,40}$")


@dataclass(frozen=True)
class TunnelSpec:
    """A local port forwarded to `remote_host:remote_port` as the host sees it; `local_port` 0
    means the same number as the remote port (or the next free one)."""

    name: str
    remote_port: int
    local_port: int = 0
    remote_host: str = "localhost"

    @property
    def wanted_local(self) -> int:
        return self.local_port or self.remote_port

    def validated(self) -> TunnelSpec:
        name = self.name.strip()
        if not _NAME_RE.match(name):
            raise ValidationError(
                "name", _("A tunnel name is 1-40 letters, digits, spaces or . ( ) / + - _.")
            )
        local = validate_port(self.local_port) if self.local_port else 0
        return replace(
            self,
            name=name,
            remote_port=validate_port(self.remote_port),
            local_port=local,
            remote_host=validate_hostname(self.remote_host.strip() or "localhost"),
        )

    def describe(self) -> str:
        where = "" if self.remote_host == "localhost" else f"{self.remote_host}:"
        return f"{self.name} ({where}{self.remote_port})"


PRESETS: tuple[TunnelSpec, ...] = (
    TunnelSpec("Jupyter", 8888),
    TunnelSpec("TensorBoard", 6006),
    TunnelSpec("vLLM / OpenAI API", 8000),
)


class TunnelBook:
    """The tunnels a user saved for each host, kept in the settings table under the host's id
    (identity by id: renaming the alias keeps them)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @staticmethod
    def _key(host_id: int) -> str:
        return f"access.tunnels.{host_id}"

    def saved(self, host_id: int) -> list[TunnelSpec]:
        raw = self.store.get_setting(self._key(host_id), "[]") or "[]"
        out: list[TunnelSpec] = []
        try:
            items = json.loads(raw)
        except ValueError:
            return out
        for item in items if isinstance(items, list) else []:
            try:
                out.append(TunnelSpec(**item).validated())
            except (TypeError, ValidationError):
                continue  # a damaged row is skipped, never fatal
        return out

    def specs(self, host_id: int) -> list[TunnelSpec]:
        """The presets, then the saved ones that are not a preset's port."""
        saved = self.saved(host_id)
        ports = {s.remote_port for s in saved}
        names = {s.name.lower() for s in saved}
        kept = [p for p in PRESETS if p.remote_port not in ports and p.name.lower() not in names]
        return kept + saved

    def save(self, host_id: int, spec: TunnelSpec) -> TunnelSpec:
        """Validate, then keep (a tunnel with the same name or remote port is replaced)."""
        spec = spec.validated()
        kept = [
            s
            for s in self.saved(host_id)
            if s.name.lower() != spec.name.lower()
            and (s.remote_port, s.remote_host) != (spec.remote_port, spec.remote_host)
        ]
        self._write(host_id, [*kept, spec])
        return spec

    def remove(self, host_id: int, name: str) -> None:
        kept = [s for s in self.saved(host_id) if s.name.lower() != name.lower()]
        self._write(host_id, kept)

    def _write(self, host_id: int, specs: list[TunnelSpec]) -> None:
        self.store.set_setting(self._key(host_id), json.dumps([asdict(s) for s in specs]))


def _split_forward(value: str) -> list[str]:
    """`[bind:]port:host:hostport` split on colons outside [] (an IPv6 host)."""
    parts, word, depth = [], "", 0
    for ch in value:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == ":" and depth == 0:
            parts.append(word)
            word = ""
            continue
        word += ch
    parts.append(word)
    return [p[1:-1] if p.startswith("[") and p.endswith("]") else p for p in parts]


def specs_from_forwards(forwards: Iterable[str]) -> tuple[list[TunnelSpec], list[str]]:
    """Tunnels from a pasted command's forwards (`-L 8080:localhost:8080`), and a note for each
    one that cannot be a tunnel (remote or dynamic forwards, socket paths, bad values)."""
    specs: list[TunnelSpec] = []
    notes: list[str] = []
    for forward in forwards:
        flag, _sep, value = forward.strip().partition(" ")
        if flag != "-L":
            notes.append(
                _("{forward} is not a local forward: not made a tunnel").format(forward=forward)
            )
            continue
        parts = _split_forward(value.strip())
        if len(parts) == 4:
            parts = parts[1:]  # the bind address: tunnels always listen on 127.0.0.1
        try:
            if len(parts) != 3:
                raise ValidationError("forward", "expected port:host:hostport")
            local, host, remote = parts
            name = _("Port {port}").format(port=remote)
            spec = TunnelSpec(name, int(remote), int(local), host).validated()
        except (ValueError, ValidationError):
            notes.append(
                _("{forward} cannot be read as port:host:hostport: not made a tunnel").format(
                    forward=forward
                )
            )
            continue
        if spec.local_port == spec.remote_port:
            spec = replace(spec, local_port=0)
        specs.append(spec)
    return specs, notes
