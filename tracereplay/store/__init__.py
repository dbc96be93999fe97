"""The DuckDB store and the spool beside it.

``Store`` is imported lazily: agent processes that only append to the spool (the SDK) never
load DuckDB or pyarrow.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracereplay.lazy import lazy_getattr
from tracereplay.store.paths import resolve_db_path, spool_dir
from tracereplay.store.spool import SpoolWriter

if TYPE_CHECKING:
    from tracereplay.store.db import Store

__all__ = ["SpoolWriter", "Store", "resolve_db_path", "spool_dir"]


__getattr__ = lazy_getattr(__name__, {"Store": "tracereplay.store.db"})
