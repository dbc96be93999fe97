"""The DuckDB store and the spool beside it."""

from tracereplay.store.db import Store
from tracereplay.store.paths import resolve_db_path, spool_dir
from tracereplay.store.spool import SpoolWriter

__all__ = ["SpoolWriter", "Store", "resolve_db_path", "spool_dir"]
