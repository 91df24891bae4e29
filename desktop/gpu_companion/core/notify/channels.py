"""The channels as rows of `notify_channels`, their secrets in the keyring.

A channel is added with every value checked first (`validate`), its row written, then its secrets
stored and read back; a keyring that refuses removes the row again, so no channel exists whose
secret is missing. Removing one deletes its secrets, its outbox and its de-duplication memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gpu_companion.core.common.clock import Clock, SystemClock, to_iso
from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.notify import validate as v
from gpu_companion.core.notify.kinds import DEFAULT_KINDS, QuietHours, format_kinds
from gpu_companion.core.notify.model import (
    CHANNEL_TYPES,
    DEFAULT_REMIND_MINUTES,
    SECURITY,
    WEBHOOK_FORMATS,
    Channel,
    Config,
    DesktopConfig,
    EmailConfig,
    NtfyConfig,
    Secrets,
    WebhookConfig,
    config_from_json,
    config_to_json,
    secret_name,
)
from gpu_companion.core.storage.store import Store

_COLUMNS = "id, type, name, config, secrets, kinds, quiet, remind_minutes, enabled"
_UNSET: Any = object()


def _row(r: Any) -> Channel:
    kinds = frozenset(k for k in str(r[5]).split(",") if k)
    return Channel(
        id=int(r[0]),
        type=str(r[1]),
        name=str(r[2]),
        config=config_from_json(str(r[1]), json.loads(r[3] or "{}")),
        kinds=kinds,
        quiet=QuietHours.parse(r[6]) if r[6] else None,
        remind_minutes=int(r[7]),
        enabled=bool(r[8]),
        secrets=frozenset(s for s in str(r[4]).split(",") if s),
    )


def validate_remind(minutes: int) -> int:
    if not 1 <= int(minutes) <= 7 * 24 * 60:
        raise ValidationError(
            "remind_minutes", _("The reminder interval is 1 to 10080 minutes (a week).")
        )
    return int(minutes)


class ChannelStore:
    def __init__(self, store: Store, secrets: Secrets, clock: Clock | None = None) -> None:
        self.store, self.secrets = store, secrets
        self.clock = clock or SystemClock()

    # --- reading --------------------------------------------------------------------------------

    def all(self) -> list[Channel]:
        rows = self.store.db.execute(f"SELECT {_COLUMNS} FROM notify_channels ORDER BY id")
        return [_row(r) for r in rows.fetchall()]

    def enabled(self) -> list[Channel]:
        rows = self.store.db.execute(
            f"SELECT {_COLUMNS} FROM notify_channels WHERE enabled ORDER BY id"
        )
        return [_row(r) for r in rows.fetchall()]

    def get(self, channel_id: int) -> Channel | None:
        row = self.store.db.execute(
            f"SELECT {_COLUMNS} FROM notify_channels WHERE id = ?", [int(channel_id)]
        ).fetchone()
        return _row(row) if row else None

    def require(self, channel_id: int | str) -> Channel:
        try:
            found = self.get(int(channel_id))
        except ValueError:
            found = None
        if found is None:
            known = ", ".join(str(c.id) for c in self.all()) or _("none yet")
            raise UserError(
                _("No notification channel #{id} (channels: {known}).").format(
                    id=channel_id, known=known
                ),
                hint=_("List them with: gpu-companion notify list"),
            )
        return found

    # --- adding -------------------------------------------------------------------------------

    def add_ntfy(self, server: str, topic: str, *, token: str = "", ca_file: str = "",
                 allow_http: bool = False, **common: Any) -> Channel:  # fmt: skip
        config = NtfyConfig(
            v.validate_server(server, allow_http=allow_http), v.validate_topic(topic),
            v.validate_ca_file(ca_file), allow_http,
        )  # fmt: skip
        secrets = (
            {"token": v.validate_secret("token", token, N_("The access token"))} if token else {}
        )
        return self.add(config, secrets, **common)

    def add_webhook(self, url: str, format: str = "json", *, secret: str = "",
                    secret_header: str = "", ca_file: str = "", allow_http: bool = False,
                    **common: Any) -> Channel:  # fmt: skip
        fmt = format.strip().lower()
        if fmt not in WEBHOOK_FORMATS:
            raise ValidationError(
                "format",
                _("Unknown webhook format {format}; one of: {formats}.").format(
                    format=repr(format), formats=", ".join(WEBHOOK_FORMATS)
                ),
            )
        clean = v.validate_url("url", url, allow_http=allow_http, what=N_("The webhook URL"))
        header = v.validate_header(secret_header) if secret_header else ""
        if header and fmt in ("feishu", "dingtalk"):
            raise ValidationError(
                "secret_header",
                _("A {format} secret signs the message; it needs no header name.").format(
                    format=fmt
                ),
            )
        config = WebhookConfig(fmt, v.display_url(clean), header, v.validate_ca_file(ca_file),
                               allow_http)  # fmt: skip
        secrets = {"url": clean}
        if secret:
            secrets["secret"] = v.validate_secret("secret", secret, N_("The secret"))
        return self.add(config, secrets, **common)

    def add_email(self, host: str, port: int, security: str, sender: str,
                  recipients: list[str] | tuple[str, ...], *, user: str = "", password: str = "",
                  ca_file: str = "", **common: Any) -> Channel:  # fmt: skip
        sec = security.strip().lower()
        if sec not in SECURITY:
            raise ValidationError(
                "security", _("Security is one of: {choices}.").format(choices=", ".join(SECURITY))
            )
        clean_host = v.validate_host(host)
        if sec == "none" and not v.is_loopback(clean_host):
            raise ValidationError(
                "security",
                _(
                    "Plain SMTP (--security none) is only allowed to this computer (a local "
                    "relay): the password and the alerts would cross the network unencrypted. "
                    "Use starttls (port 587) or tls (port 465)."
                ),
            )
        from gpu_companion.core.common.validation import validate_port

        to = tuple(v.validate_address("to", a) for a in recipients if a.strip())
        if not to:
            raise ValidationError("to", _("Name at least one recipient (--to)."))
        if user and not password:
            raise ValidationError(
                "password",
                _("A login needs its password: pass --password-stdin and type or pipe it in."),
            )
        if user and any(c.isspace() or ord(c) < 32 for c in user):
            raise ValidationError("user", _("The SMTP user must not contain spaces."))
        config = EmailConfig(clean_host, validate_port(port), sec,
                             v.validate_address("from", sender), to, user.strip(),
                             v.validate_ca_file(ca_file))  # fmt: skip
        secrets = {"password": password} if user else {}
        return self.add(config, secrets, **common)

    def add_desktop(self, **common: Any) -> Channel:
        return self.add(DesktopConfig(), {}, **common)

    def add(
        self,
        config: Config,
        secrets: Mapping[str, str],
        *,
        name: str = "",
        kinds: frozenset[str] | None = None,
        quiet: QuietHours | None = None,
        remind_minutes: int = DEFAULT_REMIND_MINUTES,
        enabled: bool = True,
    ) -> Channel:
        channel_type = _type_of(config)
        row = {
            "type": channel_type,
            "name": _name(name),
            "config": json.dumps(config_to_json(config), sort_keys=True),
            "secrets": ",".join(sorted(secrets)),
            "kinds": format_kinds(DEFAULT_KINDS if kinds is None else kinds),
            "quiet": str(quiet) if quiet else "",
            "remind_minutes": validate_remind(remind_minutes),
            "enabled": int(enabled),
            "created_at": to_iso(self.clock.now()),
        }
        with self.store.transaction() as db:
            cols = ", ".join(row)
            marks = ", ".join("?" for _col in row)
            cursor = db.execute(f"INSERT INTO notify_channels ({cols}) VALUES ({marks})",
                                list(row.values()))  # fmt: skip
            channel_id = int(cursor.lastrowid or 0)
        stored: list[str] = []
        try:
            for slot, value in secrets.items():
                self.secrets.set_secret(secret_name(channel_id, slot), value)
                stored.append(slot)
        except Exception:
            for slot in stored:
                self._forget(channel_id, slot)
            with self.store.transaction() as db:
                db.execute("DELETE FROM notify_channels WHERE id = ?", [channel_id])
            raise
        return self.require(channel_id)

    # --- changing -----------------------------------------------------------------------------

    def update(
        self,
        channel_id: int,
        *,
        name: str | None = None,
        kinds: frozenset[str] | None = None,
        quiet: QuietHours | None = _UNSET,
        remind_minutes: int | None = None,
        enabled: bool | None = None,
    ) -> Channel:
        """Change the filters; disabling a channel drops what it still had to send (an alert
        from before must not arrive days later when it is enabled again)."""
        channel = self.require(channel_id)
        changes: dict[str, Any] = {}
        if name is not None:
            changes["name"] = _name(name)
        if kinds is not None:
            changes["kinds"] = format_kinds(kinds)
        if quiet is not _UNSET:
            changes["quiet"] = str(quiet) if quiet else ""
        if remind_minutes is not None:
            changes["remind_minutes"] = validate_remind(remind_minutes)
        if enabled is not None:
            changes["enabled"] = int(enabled)
        if changes:
            with self.store.transaction() as db:
                sets = ", ".join(f"{k} = ?" for k in changes)
                db.execute(f"UPDATE notify_channels SET {sets} WHERE id = ?",
                           [*changes.values(), channel.id])  # fmt: skip
                if enabled is False:
                    db.execute(
                        "UPDATE notify_outbox SET state = 'dropped', error = 'channel disabled', "
                        "done_at = ? WHERE channel_id = ? AND state = 'pending'",
                        [to_iso(self.clock.now()), channel.id],
                    )
        return self.require(channel.id)

    def remove(self, channel_id: int) -> Channel:
        channel = self.require(channel_id)
        for slot in channel.secrets:
            self.secrets.delete_secret(secret_name(channel.id, slot))
        with self.store.transaction() as db:  # its outbox and memory go with it (ON DELETE CASCADE)
            db.execute("DELETE FROM notify_channels WHERE id = ?", [channel.id])
        return channel

    def _forget(self, channel_id: int, slot: str) -> None:
        try:
            self.secrets.delete_secret(secret_name(channel_id, slot))
        except Exception:  # the keyring that just failed may fail again: the row goes anyway
            pass


def _type_of(config: Config) -> str:
    kinds = {NtfyConfig: "ntfy", WebhookConfig: "webhook", EmailConfig: "email",
             DesktopConfig: "desktop"}  # fmt: skip
    found = kinds[type(config)]
    assert found in CHANNEL_TYPES
    return found


def _name(name: str) -> str:
    from gpu_companion.core.common.validation import validate_name

    return validate_name("name", name, N_("The channel name")) if name.strip() else ""
