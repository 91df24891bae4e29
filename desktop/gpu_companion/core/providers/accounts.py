"""Provider accounts: which platform talks to vast.ai's or RunPod's API, with the API key in the
OS keyring (never in argv, a file of ours or a log). A platform without an account keeps its
command templates (`custom.py`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import HostRegistry, Platform
from gpu_companion.core.providers.model import Provider, ProviderError
from gpu_companion.core.storage.store import Store


@dataclass(frozen=True)
class Kind:
    key: str  # what the user types: vast.ai, runpod
    name: str  # the platform made for it when none is named
    console_url: str
    make: Callable[[str, str, float], Provider]  # (api key, api base, timeout) -> adapter


def _vast(api_key: str, api_base: str, timeout: float) -> Provider:
    from gpu_companion.core.providers.vast import VastProvider

    return VastProvider(api_key, api_base, timeout)


def _runpod(api_key: str, api_base: str, timeout: float) -> Provider:
    from gpu_companion.core.providers.runpod import RunPodProvider

    # its SDK's own setting names the API base: RUNPOD_API_BASE_URL
    return RunPodProvider(api_key, timeout)


KINDS: dict[str, Kind] = {
    "vast.ai": Kind("vast.ai", "vast.ai", "https://cloud.vast.ai/", _vast),
    "runpod": Kind("runpod", "RunPod", "https://www.runpod.io/console/pods", _runpod),
}


def kind_of(text: str) -> Kind:
    key = text.strip().lower()
    key = {"vast": "vast.ai", "vastai": "vast.ai"}.get(key, key)
    if key not in KINDS:
        raise ValidationError(
            "kind",
            _("Unknown provider {name}; GPU Companion talks to: {kinds}.").format(
                name=repr(text), kinds=", ".join(KINDS)
            ),
        )
    return KINDS[key]


class Secrets(Protocol):
    """The OS keyring (the key vault's entries)."""

    def secret(self, name: str) -> str | None: ...

    def set_secret(self, name: str, value: str) -> None: ...

    def delete_secret(self, name: str) -> None: ...


@dataclass(frozen=True)
class Account:
    id: int
    kind: str
    platform_id: int
    platform_name: str
    api_base: str = ""

    @property
    def provider_name(self) -> str:
        return "vast.ai" if self.kind == "vast.ai" else "RunPod"


_KEY_RE = re.compile(r"^[\x21-\x7e]{8,512}$")


def _secret_name(account_id: int) -> str:
    return f"provider-api-key:{account_id}"


class ProviderAccounts:
    def __init__(
        self,
        store: Store,
        registry: HostRegistry,
        secrets: Secrets,
        timeout_s: float = 20.0,
    ) -> None:
        self.store, self.registry, self.secrets = store, registry, secrets
        self.timeout_s = timeout_s  # per call to a provider's API

    def accounts(self) -> list[Account]:
        rows = self.store.db.execute(
            "SELECT a.id, a.kind, a.platform_id, p.name, a.api_base FROM provider_accounts a "
            "JOIN platforms p ON p.id = a.platform_id ORDER BY p.name"
        ).fetchall()
        return [Account(r[0], r[1], r[2], r[3], r[4] or "") for r in rows]

    def for_platform(self, platform_id: int | None) -> Account | None:
        return next((a for a in self.accounts() if a.platform_id == platform_id), None)

    def find(self, name: str) -> Account | None:
        """By platform name or provider kind (case-insensitive)."""
        text = name.strip().lower()
        for account in self.accounts():
            if text in (account.platform_name.lower(), account.kind):
                return account
        return None

    def add(
        self, kind: str, api_key: str, *, platform: str = "", api_base: str = ""
    ) -> Account:
        """Link a platform (made when missing) to the provider's API with `api_key`; the key is
        stored in the keyring and read back before the account exists."""
        k = kind_of(kind)
        key = api_key.strip()
        if not _KEY_RE.match(key):
            raise ValidationError(
                "api_key",
                _(
                    "The API key must be one line of 8 to 512 visible characters, as the "
                    "provider's console shows it."
                ),
            )
        base = api_base.strip().rstrip("/")
        if base and not base.startswith(("https://", "http://")):
            raise ValidationError("api_base", _("The API address must start with https://."))
        name = platform.strip() or k.name
        found = next((p for p in self.registry.platforms() if p.name.lower() == name.lower()), None)
        if found is None:
            # vast.ai and RunPod bill in US dollars, whatever language the app speaks
            found = self.registry.save_platform(
                Platform(name=name, console_url=k.console_url, currency="USD")
            )
        assert found.id is not None
        if self.for_platform(found.id) is not None:
            raise ValidationError(
                "platform",
                _("{platform} already has a provider account; remove it first.").format(
                    platform=found.name
                ),
            )
        with self.store.transaction() as db:
            row = {
                "kind": k.key,
                "platform_id": found.id,
                "api_base": base,
                "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }
            account_id = db.table("provider_accounts").insert(row).last_rowid
        assert account_id is not None
        try:
            self.secrets.set_secret(_secret_name(int(account_id)), key)
        except Exception:
            with self.store.transaction() as db:
                db.table("provider_accounts").delete(account_id)
            raise
        return Account(int(account_id), k.key, found.id, found.name, base)

    def remove(self, account: Account) -> None:
        self.secrets.delete_secret(_secret_name(account.id))
        with self.store.transaction() as db:
            db.table("provider_accounts").delete(account.id)

    def provider(self, account: Account) -> Provider:
        key = self.secrets.secret(_secret_name(account.id))
        if not key:
            raise ProviderError(
                _("No API key for {platform} is in the keyring.").format(
                    platform=account.platform_name
                ),
                hint=_("Add it again: {command}.").format(
                    command=f"gpu-companion providers add {account.kind} "
                    f"--platform {account.platform_name!r}"
                ),
            )
        return KINDS[account.kind].make(key, account.api_base, self.timeout_s)

    def provider_for(self, platform_id: int | None) -> Provider | None:
        account = self.for_platform(platform_id)
        return None if account is None else self.provider(account)


def require_account(accounts: ProviderAccounts, name: str) -> Account:
    account = accounts.find(name)
    if account is None:
        known = ", ".join(a.platform_name for a in accounts.accounts()) or _("none yet")
        raise UserError(
            _("No provider account named {name} (known: {known}).").format(
                name=repr(name), known=known
            ),
            hint=_(
                "Add one: gpu-companion providers add vast.ai|runpod (the key is read from stdin)."
            ),
        )
    return account
