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


def _v2_release_records(db: sqlite_utils.Database) -> None:
    """The release gate: per-host checklist settings, per-platform release commands, the record
    of every release and override with its evidence, and the meter ends it stands in for."""
    db.table("release_configs").create({"host_alias": str, "config": str}, pk="host_alias")
    db.table("release_commands").create({"platform_id": int, "command": str}, pk="platform_id")
    db.table("release_records").create(
        {
            "id": int,
            "host_alias": str,
            "kind": str,
            "at": str,
            "reason": str,
            "failing_items": str,
            "evidence": str,
            "release_command": str,
            "command_output": str,
        },
        pk="id",
        not_null={"host_alias", "kind", "at"},
    )
    db.table("release_records").create_index(["host_alias"])
    db.table("release_meter_ends").create(
        {"id": int, "host_alias": str, "ended_at": str}, pk="id", not_null={"host_alias"}
    )


MIGRATIONS: list[Migration] = [
    _v1_platforms_hosts,
    _v2_release_records,
]
