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


def _v2_gpu_minutes(db: sqlite_utils.Database) -> None:
    """Per-minute GPU aggregates for the monitor's 24 h view and the idle rule."""
    db.table("gpu_minutes").create(
        {
            "alias": str,
            "gpu": int,
            "minute": int,  # epoch seconds // 60
            "samples": int,
            "util": float,
            "mem_used": float,
            "mem_total": float,
            "temp": float,
            "power": float,
            "power_limit": float,
            "util_max": float,
        },
        pk=("alias", "gpu", "minute"),
        not_null={"alias", "gpu", "minute", "samples"},
    )
    db.table("gpu_minutes").create_index(["minute"])


MIGRATIONS: list[Migration] = [
    _v1_platforms_hosts,
    _v2_gpu_minutes,
]
