"""The store, opened for one request and closed before the response is sent.

Every request opens the store the way every command does (``open_store``: the file lock, the
migrations, the spool drained), does its reads or writes, and closes it, so ``tracereplay
serve``, ``ingest`` and live agents keep writing between requests. Requests of this process take
turns (one DuckDB connection to the file at a time).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tracereplay.store.db import Store
from tracereplay.ui.config import UiConfig

_TURN = threading.Lock()


@contextmanager
def store_for_request(config: UiConfig) -> Iterator[Store]:
    """The store for the length of a ``with`` block."""
    from tracereplay.store.open import open_store

    with _TURN, open_store(config.db, timeout=config.store_timeout) as store:
        yield store


@contextmanager
def reading(config: UiConfig) -> Iterator[Store]:
    """The store for a page that only reads: its queries run in a READ ONLY transaction that is
    rolled back, so a page can never change the store."""
    with store_for_request(config) as store, store.transaction(read_only=True):
        yield store
