"""Platforms (provider accounts) and hosts (rented machines), validated before they are stored."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.listeners import Listeners
from gpu_companion.core.common.money import CURRENCIES as CURRENCIES  # re-exported
from gpu_companion.core.common.money import default_currency
from gpu_companion.core.common.owner import owner_alive, this_machine
from gpu_companion.core.common.validation import (
    validate_alias,
    validate_hostname,
    validate_name,
    validate_port,
    validate_user,
)
from gpu_companion.core.storage.schema import ALIAS_COLUMNS
from gpu_companion.core.storage.store import Store

if TYPE_CHECKING:
    import sqlite_utils

GRANULARITIES = ("second", "minute", "hour")
# stopped: the provider keeps the instance (and bills its disk) but it does not run; gone: the
# provider no longer has it, though the app never released it
HOST_STATES = ("active", "released", "stopped", "gone")
LOCAL_ALIAS = "local"


@dataclass(frozen=True)
class Platform:
    name: str
    console_url: str = ""
    billing_granularity: str = "second"
    currency: str = field(default_factory=default_currency)  # ¥ for a Chinese-speaking renter
    id: int | None = None

    def validated(self) -> Platform:
        name = validate_name("name", self.name, N_("The platform name"))
        url = self.console_url.strip()
        if url and not url.startswith(("https://", "http://")):
            raise ValidationError(
                "console_url", _("The console address must start with https://.")
            )
        if self.billing_granularity not in GRANULARITIES:
            raise ValidationError(
                "billing_granularity",
                _("Billing granularity must be one of: {choices}.").format(
                    choices=", ".join(GRANULARITIES)
                ),
            )
        if self.currency not in CURRENCIES:
            raise ValidationError(
                "currency",
                _("Unknown currency {currency}; use an ISO code such as USD.").format(
                    currency=repr(self.currency)
                ),
            )
        return replace(self, name=name, console_url=url)


@dataclass(frozen=True)
class Host:
    alias: str
    hostname: str
    port: int = 22
    user: str = "root"
    platform_id: int | None = None
    gpu_model: str = ""
    gpu_count: int = 0
    notes: str = ""
    state: str = "active"
    id: int | None = None
    is_local: bool = field(default=False, compare=False)
    instance_id: str = ""  # the platform's id of the instance, e.g. vast.ai's "12345678"

    def validated(self) -> Host:
        alias = validate_alias(self.alias.strip())
        if alias == LOCAL_ALIAS:
            raise ValidationError(
                "alias", _("'local' is reserved for this computer; pick another.")
            )
        count = int(self.gpu_count)
        if not 0 <= count <= 64:
            raise ValidationError("gpu_count", _("The GPU count must be between 0 and 64."))
        if self.state not in HOST_STATES:
            raise ValidationError(
                "state", _("Unknown host state {state}.").format(state=repr(self.state))
            )
        instance_id = self.instance_id.strip()
        if len(instance_id) > 128 or any(ord(c) < 32 or ord(c) == 127 for c in instance_id):
            raise ValidationError(
                "instance_id",
                _(
                    "The instance id must be one line of at most 128 characters, as the platform "
                    "shows it."
                ),
            )
        return replace(
            self,
            instance_id=instance_id,
            alias=alias,
            hostname=validate_hostname(self.hostname.strip()),
            port=validate_port(self.port),
            user=validate_user(self.user.strip()),
            gpu_model=self.gpu_model.strip(),
            gpu_count=count,
        )


LOCAL_HOST = Host(alias=LOCAL_ALIAS, hostname="localhost", port=0, user="", is_local=True)


def _table_exists(db: Any, table: str) -> bool:
    sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    return db.execute(sql, [table]).fetchone() is not None


def _transfer_running(db: Any, alias: str) -> bool:
    """A transfer lane holds the host's alias while it runs a job (it is keyed by it); a job
    left "running" by a process that died (kill -9) holds nothing."""
    if not _table_exists(db, "transfer_jobs"):
        return False
    columns = {r[1] for r in db.execute("PRAGMA table_info(transfer_jobs)").fetchall()}
    if "owner" not in columns:
        return db.execute(
            "SELECT 1 FROM transfer_jobs WHERE host_alias = ? AND state = 'running'", [alias]
        ).fetchone() is not None
    rows = db.execute(
        "SELECT owner, owner_machine FROM transfer_jobs WHERE host_alias = ? AND state = 'running'",
        [alias],
    ).fetchall()
    here = this_machine()
    return any(not owner or machine not in ("", here) or owner_alive(owner)
               for owner, machine in rows)  # fmt: skip


def _rename_alias_rows(db: Any, old: str, new: str) -> None:
    """A renamed host keeps the rows that name it by alias (transfers, graph minutes)."""
    for table, column in ALIAS_COLUMNS:
        if _table_exists(db, table):
            # OR REPLACE: minutes a deleted host of the new name left behind give way
            db.execute(f"UPDATE OR REPLACE {table} SET {column} = ? WHERE {column} = ?", [new, old])  # noqa: S608


def _insert(db: sqlite_utils.Database, table: str, row: dict[str, Any]) -> int:
    rowid = db.table(table).insert(row).last_rowid
    assert rowid is not None
    return int(rowid)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class HostRegistry:
    """CRUD for platforms and hosts; every write validates first and is one transaction."""

    def __init__(self, store: Store) -> None:
        self.store = store
        # e.g. re-render the ssh config, tell the watcher; the value is always None
        self.on_hosts_changed: Listeners[None] = Listeners("hosts changed")

    def _hosts_changed(self) -> None:
        self.on_hosts_changed.emit(None)

    # platforms
    def platforms(self) -> list[Platform]:
        rows = self.store.db.execute(
            "SELECT id, name, console_url, billing_granularity, currency FROM platforms "
            "ORDER BY name"
        ).fetchall()
        return [
            Platform(
                id=r[0], name=r[1], console_url=r[2] or "", billing_granularity=r[3], currency=r[4]
            )
            for r in rows
        ]

    def platform(self, platform_id: int) -> Platform | None:
        return next((p for p in self.platforms() if p.id == platform_id), None)

    def save_platform(self, platform: Platform) -> Platform:
        p = platform.validated()
        clash = self.store.db.execute(
            "SELECT id FROM platforms WHERE lower(name) = lower(?) AND id IS NOT ?", [p.name, p.id]
        ).fetchone()
        if clash:
            raise ValidationError(
                "name", _("A platform named {name} already exists.").format(name=repr(p.name))
            )
        row: dict[str, Any] = {k: v for k, v in asdict(p).items() if k != "id"}
        with self.store.transaction() as db:
            if p.id is None:
                row["created_at"] = _now()
                return replace(p, id=_insert(db, "platforms", row))
            db.table("platforms").update(p.id, row)
            return p

    def delete_platform(self, platform_id: int) -> None:
        used = self.store.db.execute(
            "SELECT alias FROM hosts WHERE platform_id = ?", [platform_id]
        ).fetchall()
        if used:
            names = ", ".join(r[0] for r in used)
            raise ValidationError(
                "platform",
                _(
                    "Hosts still belong to this platform: {names}. Move or remove them first."
                ).format(names=names),
            )
        # a key or an account left behind would pass to the next platform given this id
        for table, refusal in (
            ("ssh_keys", N_("This platform has an SSH key: delete the key first (Keys page, or "
                            "gpu-companion keys delete).")),
            ("provider_accounts", N_("This platform has a provider account: remove it first "
                                     "(gpu-companion providers remove).")),
        ):
            if _table_exists(self.store.db, table) and self.store.db.execute(
                f"SELECT 1 FROM {table} WHERE platform_id = ?", [platform_id]  # noqa: S608
            ).fetchone():
                raise ValidationError("platform", _(refusal))
        try:
            with self.store.transaction() as db:
                db.table("platforms").delete(platform_id)
        except sqlite3.IntegrityError:  # the spend ledger's rentals, charges or budgets
            raise ValidationError(
                "platform",
                _(
                    "The spend ledger has rentals, charges or budgets on this platform; it stays "
                    "so their history keeps its name."
                ),
            ) from None

    # hosts
    _HOST_COLUMNS = (
        "SELECT id, alias, hostname, port, user, platform_id, gpu_model, gpu_count, notes, "
        "state, instance_id FROM hosts"
    )

    @staticmethod
    def _host(r: tuple[Any, ...]) -> Host:
        return Host(
            id=r[0],
            alias=r[1],
            hostname=r[2],
            port=r[3],
            user=r[4],
            platform_id=r[5],
            gpu_model=r[6] or "",
            gpu_count=r[7] or 0,
            notes=r[8] or "",
            state=r[9],
            instance_id=r[10] or "",
        )

    def hosts(self, include_released: bool = True) -> list[Host]:
        sql = self._HOST_COLUMNS
        if not include_released:
            sql += " WHERE state = 'active'"
        return [self._host(r) for r in self.store.db.execute(sql + " ORDER BY alias")]

    def host(self, alias: str) -> Host | None:
        """One host by its alias: a look-up in the alias index (callers ask per host, per
        tick; reading every host for each made a 100-host tray refresh quadratic)."""
        if alias == LOCAL_ALIAS:
            return LOCAL_HOST
        row = self.store.db.execute(self._HOST_COLUMNS + " WHERE alias = ?", [alias]).fetchone()
        return None if row is None else self._host(row)

    def save_host(self, host: Host) -> Host:
        h = host.validated()
        clash = self.store.db.execute(
            "SELECT id FROM hosts WHERE lower(alias) = lower(?) AND id IS NOT ?", [h.alias, h.id]
        ).fetchone()
        if clash:
            raise ValidationError(
                "alias",
                _("A host with the alias {alias} already exists.").format(alias=repr(h.alias)),
            )
        if h.platform_id is not None and self.platform(h.platform_id) is None:
            raise ValidationError("platform", _("The chosen platform no longer exists."))
        row: dict[str, Any] = {k: v for k, v in asdict(h).items() if k not in ("id", "is_local")}
        try:
            with self.store.transaction() as db:
                if h.id is None:
                    row["created_at"] = _now()
                    h = replace(h, id=_insert(db, "hosts", row))
                else:
                    was = db.execute("SELECT alias FROM hosts WHERE id = ?", [h.id]).fetchone()
                    renamed = was is not None and was[0] != h.alias
                    if renamed and _transfer_running(db, was[0]):
                        raise ValidationError(
                            "alias",
                            _(
                                "A transfer to {alias} is running: pause it or let it finish, "
                                "then rename the host."
                            ).format(alias=was[0]),
                        )
                    db.table("hosts").update(h.id, row)
                    if renamed:
                        _rename_alias_rows(db, was[0], h.alias)
        except sqlite3.IntegrityError as exc:  # a race with another writer
            raise ValidationError(
                "alias",
                _("Could not save {alias}: {error}.").format(alias=repr(h.alias), error=exc),
            ) from exc
        self._hosts_changed()
        return h

    def delete_host(self, host_id: int) -> None:
        with self.store.transaction() as db:
            db.table("hosts").delete(host_id)
        self._hosts_changed()
