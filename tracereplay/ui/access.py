"""The store, opened for one request and closed before the response is sent.

Every request opens the store the way every command does (``open_store``: the file lock, the
migrations, eval runs of dead processes marked ``interrupted``) but never drains the spool: the
drain converts spans into runs, work a page must not wait for. ``tracereplay ui`` drains it off
the request path instead (``SpoolDrainer``, a thread of the UI's process, as ``serve`` does), so
runs agents spool show up within about a second. The store is closed after each request, so
``tracereplay serve``, ``ingest`` and live agents keep writing between requests. Requests and the
drainer of this process take turns (one DuckDB connection to the file at a time).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tracereplay.errors import TraceReplayError
from tracereplay.store import spool
from tracereplay.store.abandoned import mark_abandoned_eval_runs
from tracereplay.store.db import Store
from tracereplay.store.open import open_store
from tracereplay.store.paths import spool_dir
from tracereplay.ui.config import UiConfig

_TURN = threading.Lock()
log = logging.getLogger("tracereplay.ui")


@contextmanager
def store_for_request(config: UiConfig) -> Iterator[Store]:
    """The store for the length of a ``with`` block (the spool not drained)."""
    with _TURN, open_store(config.db, drain=False, timeout=config.store_timeout) as store:
        mark_abandoned_eval_runs(store)  # what open_store's drain=True would do after the drain
        yield store


@contextmanager
def reading(config: UiConfig) -> Iterator[Store]:
    """The store for a page that only reads: its queries run in a READ ONLY transaction that is
    rolled back, so a page can never change the store."""
    with store_for_request(config) as store, store.transaction(read_only=True):
        yield store


class SpoolDrainer:
    """Drains the store's spool on a daemon thread whenever it changed (every ``interval_s``
    at most): ``open_store`` with its drain, taking turns with requests. A failed round (the
    store busy, a bad record) is logged and tried again next time."""

    def __init__(self, db: Path, interval_s: float = 1.0, timeout: float = 5.0) -> None:
        self.db = db
        self.interval_s = interval_s
        self.timeout = timeout
        self._spool = spool_dir(db)
        self._seen: tuple[tuple[str, int], ...] = ()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tracereplay-ui-drain", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _signature(self) -> tuple[tuple[str, int], ...]:
        return tuple((s.key, spool.segment_size(s)) for s in spool.list_segments(self._spool))

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.drain_once()

    def drain_once(self) -> bool:
        """One round when the spool changed since the last good one; False if it failed."""
        try:
            seen = self._signature()
            if seen == self._seen:
                return True
            with _TURN, open_store(self.db, timeout=self.timeout):
                pass
            self._seen = self._signature()
        except TraceReplayError as exc:
            log.warning("could not drain the spool into %s: %s", self.db, exc)
            return False
        except Exception as exc:  # a bug or a DuckDB failure: keep serving pages, retry later
            log.warning(
                "could not drain the spool into %s: %s: %s", self.db, type(exc).__name__, exc
            )
            return False
        return True
