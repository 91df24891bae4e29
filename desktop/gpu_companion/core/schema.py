"""The schema as an ordered list of migrations; `PRAGMA user_version` is the index reached.

Append new migrations at the end; never edit one that has shipped.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils

Migration = Callable[[sqlite_utils.Database], None]


def _v1_platforms_hosts(db: sqlite_utils.Database) -> None:
    db.table("platforms").create(
        {
            "id": int,
            "name": str,
            "console_url": str,
            "billing_granularity": str,
            "currency": str,
            "created_at": str,
        },
        pk="id",
        not_null={"name", "billing_granularity", "currency"},
        defaults={"console_url": "", "billing_granularity": "second", "currency": "USD"},
    )
    db.table("platforms").create_index(["name"], unique=True)
    db.table("hosts").create(
        {
            "id": int,
            "alias": str,
            "hostname": str,
            "port": int,
            "user": str,
            "platform_id": int,
            "gpu_model": str,
            "gpu_count": int,
            "notes": str,
            "state": str,
            "created_at": str,
        },
        pk="id",
        not_null={"alias", "hostname", "port", "user", "state"},
        defaults={"port": 22, "gpu_model": "", "gpu_count": 0, "notes": "", "state": "active"},
        foreign_keys=[("platform_id", "platforms", "id")],
    )
    db.table("hosts").create_index(["alias"], unique=True)
    db.table("settings").create({"key": str, "value": str}, pk="key")


def _v2_ssh_keys(db: sqlite_utils.Database) -> None:
    """Key metadata per platform (the private key itself lives only in the OS keyring) and the
    per-host ssh options the generated config adds on request."""
    db.table("ssh_keys").create(
        {
            "platform": str,
            "kind": str,
            "bits": int,
            "fingerprint": str,
            "comment": str,
            "created_at": str,
            "public_file": str,
            "encrypted": int,
            "has_previous": int,
        },
        pk="platform",
        not_null={"kind", "fingerprint", "public_file"},
        defaults={"encrypted": 0, "has_previous": 0},
    )
    db.table("host_ssh_options").create(
        {"host_id": int, "proxy_jump": str, "forwards": str},
        pk="host_id",
        defaults={"proxy_jump": "", "forwards": ""},
    )


MIGRATIONS: list[Migration] = [
    _v1_platforms_hosts,
    _v2_ssh_keys,
]
