"""Monitors in the store (table ``monitors``): create or replace, read, list, remove."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from tracereplay.errors import BadParameterError, NotFoundError
from tracereplay.models import CheckSpec
from tracereplay.monitor.definition import Monitor
from tracereplay.store.db import Store
from tracereplay.store.suites import check_to_dict

_COLUMNS = "name, checks, agent_name, service_name, predicate, sample, created_at, updated_at"


def save_monitor(
    store: Store,
    monitor: Monitor,
    *,
    replace: bool = False,
    check: Callable[[Store, Monitor], None] | None = None,
) -> bool:
    """Store ``monitor``; True when it replaced one of the same name (only with ``replace``,
    else a monitor of that name is a ``MonitorExistsError``). Results already stored stay.
    ``check`` runs first (e.g. its ``--where`` tried on the store)."""
    if check is not None:
        check(store, monitor)
    checks = orjson.dumps([check_to_dict(c) for c in monitor.checks]).decode()
    values = [monitor.agent, monitor.service, monitor.where, monitor.sample]
    with store.transaction():
        exists = bool(
            store.con.execute("SELECT 1 FROM monitors WHERE name = ?", [monitor.name]).fetchall()
        )
        if exists and not replace:
            raise MonitorExistsError(
                f"a monitor named {monitor.name!r} exists (give --replace to change it)"
            )
        if exists:
            store.con.execute(
                "UPDATE monitors SET checks = ?, agent_name = ?, service_name = ?, predicate = ?,"
                " sample = ?, updated_at = current_timestamp WHERE name = ?",
                [checks, *values, monitor.name],
            )
        else:
            store.con.execute(
                "INSERT INTO monitors (name, checks, agent_name, service_name, predicate, sample)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [monitor.name, checks, *values],
            )
    return exists


class MonitorExistsError(BadParameterError):
    """A monitor of that name is stored already."""


def _monitor(row: dict[str, Any]) -> Monitor:
    return Monitor(
        name=row["name"],
        checks=[CheckSpec.model_validate(c) for c in orjson.loads(row["checks"])],
        agent=row["agent_name"],
        service=row["service_name"],
        where=row["predicate"],
        sample=row["sample"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        validate=False,
    )


def list_monitors(store: Store) -> list[Monitor]:
    """Every stored monitor, by name."""
    return [
        _monitor(r) for r in store.query_dicts(f"SELECT {_COLUMNS} FROM monitors ORDER BY name")
    ]


def get_monitor(store: Store, name: str) -> Monitor:
    rows = store.query_dicts(f"SELECT {_COLUMNS} FROM monitors WHERE name = ?", [name])
    if not rows:
        known = [m.name for m in list_monitors(store)]
        hint = f" (known: {', '.join(known)})" if known else " (`tracereplay monitor create`)"
        raise NotFoundError(f"no monitor named {name!r}{hint}")
    return _monitor(rows[0])


def remove_monitor(store: Store, name: str, *, keep_results: bool = False) -> int:
    """Remove monitor ``name`` and (unless ``keep_results``) its results; the results removed."""
    get_monitor(store, name)
    removed = 0
    with store.transaction():
        if not keep_results:
            rows = store.con.execute(
                "SELECT count(*) FROM monitor_results WHERE monitor = ?", [name]
            ).fetchall()
            removed = int(rows[0][0])
            for table in ("monitor_results", "monitor_judge_calls"):
                store.con.execute(f"DELETE FROM {table} WHERE monitor = ?", [name])
        store.con.execute("DELETE FROM monitors WHERE name = ?", [name])
    return removed
