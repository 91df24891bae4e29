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


def _v2_transfer_jobs(db: sqlite_utils.Database) -> None:
    db.table("transfer_jobs").create(
        {
            "id": int,
            "host_alias": str,
            "direction": str,
            "local_path": str,
            "remote_path": str,
            "options": str,  # JSON
            "label": str,
            "state": str,
            "bytes_done": int,
            "bytes_total": int,
            "current_file": str,
            "engine": str,
            "message": str,
            "verified": int,
            "attempts": int,
            "bytes_sent": int,
            "active_s": float,
            "created_at": float,
            "first_started_at": float,
            "finished_at": float,
        },
        pk="id",
        not_null={"host_alias", "direction", "local_path", "remote_path", "state"},
        defaults={
            "options": "{}",
            "label": "",
            "bytes_done": 0,
            "message": "",
            "verified": 0,
            "attempts": 0,
            "bytes_sent": 0,
            "active_s": 0.0,
        },
    )
    db.table("transfer_jobs").create_index(["host_alias", "state"])


MIGRATIONS: list[Migration] = [
    _v1_platforms_hosts,
    _v2_transfer_jobs,
]
