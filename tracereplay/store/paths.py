"""Where the store lives: the DuckDB file and the files kept beside it, or a server's URL."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from tracereplay.errors import hide_passwords
from tracereplay.store.engines import is_server_url

DEFAULT_DB = "tracereplay.duckdb"
DB_ENV = "TRACEREPLAY_DB"
STORE_ENV = "TRACEREPLAY_STORE"
#: where a server store's local files (the spool of agents on this machine, locks) live
LOCAL_ENV = "TRACEREPLAY_LOCAL_DIR"


class StoreUrl(str):
    """A server store's URL standing where a store path stands.

    ``str()`` is the URL itself (what is passed on to child processes and ``--store``); the
    path methods the commands use for the files kept beside a store (``with_name``, ``name``,
    ``parent``...) answer for its *local anchor*: ``$TRACEREPLAY_LOCAL_DIR`` (default
    ``~/.cache/tracereplay``) / ``<host>_<port>_<database>``, so the spool of agents on this
    machine and the locks of its processes stay local while the history is on the server.
    ``shown`` is the URL without its password (for messages)."""

    @property
    def anchor(self) -> Path:
        parts = urlsplit(str(self))
        base = Path(os.environ.get(LOCAL_ENV) or "~/.cache/tracereplay").expanduser()
        base.mkdir(parents=True, exist_ok=True)  # the locks and spool beside the anchor go here
        where = f"{parts.hostname or 'local'}_{parts.port or 5432}_{parts.path.strip('/') or 'db'}"
        where = re.sub(r"[^A-Za-z0-9_.-]", "_", where)
        digest = hashlib.sha1(str(self).encode()).hexdigest()[:8]
        return base.absolute() / f"{where}_{digest}"

    @property
    def shown(self) -> str:
        return hide_passwords(str(self))

    name = property(lambda self: self.anchor.name)
    stem = property(lambda self: self.anchor.stem)
    parent = property(lambda self: self.anchor.parent)

    def with_name(self, name: str) -> Path:
        return self.anchor.with_name(name)

    def expanduser(self) -> StoreUrl:
        return self

    def absolute(self) -> StoreUrl:
        return self

    def exists(self) -> bool:
        return True  # a server store is always there to connect to (or fails to connect)

    def is_file(self) -> bool:
        return True

    def is_dir(self) -> bool:
        return False


def resolve_db_path(db: str | os.PathLike[str] | None = None) -> Path:
    """The store to use: ``db`` if given, else ``$TRACEREPLAY_STORE``, else ``$TRACEREPLAY_DB``,
    else ``./tracereplay.duckdb``. A server URL comes back as a ``StoreUrl``."""
    chosen = (
        db
        if db not in (None, "")
        else os.environ.get(STORE_ENV) or os.environ.get(DB_ENV) or DEFAULT_DB
    )
    if isinstance(chosen, StoreUrl):
        return chosen  # type: ignore[return-value]
    if is_server_url(chosen):
        return StoreUrl(str(chosen).strip())  # type: ignore[return-value]
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
