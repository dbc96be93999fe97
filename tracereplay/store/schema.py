"""Versioned schema: numbered SQL files in ``migrations/``, applied forward in order.

A file made by an older tracereplay opens and is upgraded in place; each migration runs in its
own transaction together with the version bump, so a crash leaves the file at a known version
(a new file takes them all in one).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

from tracereplay.store.errors import UnknownNameError

if TYPE_CHECKING:
    from tracereplay.store.engines.base import Connection


class Store(Protocol):
    """What migrating uses of the store, which passes itself (its transactions are the only
    ones); a protocol, so ``db`` and this module do not import each other."""

    engine: str
    con: Any

    def transaction(self) -> contextlib.AbstractContextManager[Any]: ...

    def lock(self, keys: Sequence[str]) -> None: ...


_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def migrations(engine: str = "duckdb") -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` for every migration shipped, in version order: DuckDB's in
    ``migrations/``, PostgreSQL's in ``migrations/postgres/`` (its first file, 0010, creates
    the schema of DuckDB's 0001-0010 at once; later numbers come in pairs)."""
    found = []
    folder = resources.files("tracereplay.store.migrations")
    if engine != "duckdb":
        folder = folder / engine
    for entry in folder.iterdir():
        m = _NAME.match(entry.name)
        if m:
            found.append((int(m.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    found.sort()
    return found


LATEST_VERSION = migrations()[-1][0]


def current_version(con: Connection) -> int:
    """The file's schema version (0 for a file tracereplay never migrated)."""
    try:
        rows = con.execute("SELECT max(version) FROM schema_migrations").fetchall()
    except UnknownNameError:  # no schema_migrations table yet
        return 0
    return int(rows[0][0] or 0)


def migrate(store: Store, target: int | None = None) -> int:
    """Apply every migration above the file's version (up to ``target``); return the new version."""
    engine = store.engine
    if engine != "duckdb":
        # many processes may open a new server store at once: one migrates, the others wait
        with store.transaction():
            store.lock(["tracereplay:migrate"])
            return _migrate(store, engine, target)
    return _migrate(store, engine, target)


def _migrate(store: Store, engine: str, target: int | None) -> int:
    con = store.con
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMPTZ DEFAULT current_timestamp)"
    )
    version = current_version(con)
    pending = [
        m for m in migrations(engine) if m[0] > version and (target is None or m[0] <= target)
    ]
    # a new file takes them all in one transaction (it is then at version 0 or the last one):
    # one commit instead of one each, a third of opening a new DuckDB store's CPU
    with store.transaction() if version == 0 else contextlib.nullcontext():
        for number, name, sql in pending:
            with store.transaction():
                con.execute_native(sql)  # the engine's own dialect, as written
                con.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [number, name]
                )
            version = number
    return version
