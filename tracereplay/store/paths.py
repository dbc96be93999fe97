"""Where the store lives: the DuckDB file and the files kept beside it."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DB = "tracereplay.duckdb"
DB_ENV = "TRACEREPLAY_DB"


def resolve_db_path(db: str | os.PathLike[str] | None = None) -> Path:
    """The DuckDB file to use: ``db`` if given, else ``$TRACEREPLAY_DB``, else ``./tracereplay.duckdb``."""
    chosen = db if db not in (None, "") else os.environ.get(DB_ENV) or DEFAULT_DB
    return Path(chosen).expanduser().absolute()


def spool_dir(db_path: Path) -> Path:
    """The append-only spool directory beside the DuckDB file (``<db>.spool/``)."""
    return db_path.with_name(db_path.name + ".spool")


def lock_path(db_path: Path) -> Path:
    """The lock file that serializes tracereplay processes opening the DuckDB file."""
    return db_path.with_name(db_path.name + ".lock")


def damage_path(db_path: Path) -> Path:
    """The note beside a store found damaged (``<db>.damaged``): what was found, and when."""
    return db_path.with_name(db_path.name + ".damaged")
