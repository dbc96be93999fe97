"""The background drainer: moves the spool into DuckDB about every half second.

It never keeps the DuckDB file open: each round takes the store lock, opens the file, drains the
spool (this server's segments and any other writer's), closes it and lets the lock go, so every
other ``tracereplay`` command can use the same file meanwhile. Before a round the server's own
segment is closed, so a round has an end even while requests keep arriving.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tracereplay.errors import StoreBusyError, TraceReplayError
from tracereplay.ingest.drain import drain_spool, warm_up
from tracereplay.ingest.pipeline import IngestStats
from tracereplay.store import spool
from tracereplay.store.db import Store
from tracereplay.store.paths import spool_dir

log = logging.getLogger("tracereplay.serve")

#: never hold the store lock again sooner than this after releasing it (lets other commands in)
MIN_GAP_S = 0.1
#: how long one round waits for the store lock before trying again later
LOCK_TIMEOUT_S = 5.0
#: payload bytes a round commits at a time: a burst becomes queryable piece by piece (each
#: piece well under a second of work) instead of all at the end of a long round
COMMIT_BYTES = 4 * 1024 * 1024


class Drainer:
    """Drains the spool of ``db`` into it on a background thread."""

    def __init__(
        self,
        db: Path,
        writer: spool.SpoolWriter,
        interval_s: float = 0.5,
        *,
        memory_bytes: int | None = None,
        on_stored: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.db = db
        #: gets the traces with runs of each committed transaction (the monitors' queue:
        #: ``tracereplay.monitor.worker``); it must not block
        self.on_stored = on_stored
        #: DuckDB's memory limit during a round (None: DuckDB's default, most of the RAM)
        self.memory_bytes = memory_bytes
        self.spool_dir = spool_dir(db)
        self._writer = writer
        self.interval_s = interval_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one round at a time (the thread, or the final drain)
        self._counts = threading.Lock()
        self._appended = 0
        self._drained = 0
        self._claimed = 0  # spooled bytes a round holding the store is storing right now
        self._seen: tuple[tuple[str, int], ...] = ()
        self._thread = threading.Thread(target=self._run, name="tracereplay-drainer", daemon=True)
        self.totals = IngestStats()
        self.rounds = 0
        self.last_error: str | None = None

    # ------------------------------------------------------------------ bookkeeping
    def spooled(self, nbytes: int) -> None:
        """Called after each durable append: count it and wake the thread."""
        with self._counts:
            self._appended += nbytes
        self._wake.set()

    def backlog_bytes(self) -> int:
        """Bytes this server spooled that no drain round has taken on yet.

        What a running round (one that holds the store) is storing does not count: new
        requests keep flowing while it works instead of being refused until it ends."""
        return self._appended - max(self._drained, self._claimed)

    # ------------------------------------------------------------------ the thread
    def start(self) -> None:
        warm_up()  # worker processes started now, not when the first burst needs them
        self._thread.start()

    def _run(self) -> None:
        next_round = 0.0
        while not self._stop.is_set():
            self._wake.wait(self.interval_s)
            self._wake.clear()
            if self._stop.is_set():
                break
            delay = next_round - time.monotonic()
            if delay > 0 and self._stop.wait(delay):
                break
            if not self._has_work():
                continue
            started = time.monotonic()
            self.drain_once(timeout=LOCK_TIMEOUT_S)
            next_round = max(started + self.interval_s, time.monotonic() + MIN_GAP_S)

    def _has_work(self) -> bool:
        if self._appended > self._drained:
            return True
        # another writer (an agent using the SDK spool) may have appended since the last round
        return self._signature() != self._seen

    def _signature(self) -> tuple[tuple[str, int], ...]:
        return tuple((s.key, spool.segment_size(s)) for s in spool.list_segments(self.spool_dir))

    def drain_once(self, timeout: float = LOCK_TIMEOUT_S) -> bool:
        """One round: lock, open, drain everything spooled so far, close. False if it failed."""
        with self._lock:
            target = self._appended
            try:
                with Store.open(self.db, timeout=timeout) as store, self._memory(store):
                    # close our segment under the store lock: the round then has an end, and no
                    # other drainer is reading the segment while it is renamed
                    self._writer.close()
                    self._claimed = target
                    drain_spool(store, tx_bytes=COMMIT_BYTES, on_commit=self._committed)
            except StoreBusyError as exc:
                self._claimed = self._drained
                self._note_error(f"store busy, will retry: {exc}")
                return False
            except TraceReplayError as exc:
                self._claimed = self._drained
                self._note_error(str(exc))
                return False
            except Exception as exc:  # a bug or a DuckDB failure: keep serving, retry later
                self._claimed = self._drained
                self._note_error(f"{type(exc).__name__}: {exc}")
                log.debug("drain failed", exc_info=True)
                return False
            self._drained = target
            self._seen = self._signature()
            self.rounds += 1
            if self.last_error is not None:
                log.info("draining works again")
                self.last_error = None
            return True

    def _memory(self, store: Store) -> contextlib.AbstractContextManager[None]:
        """DuckDB's memory limit for the round, when one is set."""
        if self.memory_bytes is None:
            return contextlib.nullcontext()
        return store.settings(memory_limit=f"{self.memory_bytes}B")

    def _committed(self, stats: IngestStats) -> None:
        """What one drain transaction stored (counted as soon as it is queryable)."""
        if self.on_stored is not None:
            self.on_stored([trace for trace, runs in stats.run_counts.items() if runs])
        stats.run_counts.clear()  # per-trace counts would grow without end
        self.totals.add(stats)
        self.totals.run_counts.clear()

    def _note_error(self, message: str) -> None:
        if message != self.last_error:
            log.warning("could not drain the spool into %s: %s", self.db, message)
        self.last_error = message

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the thread, then drain whatever is left; True if everything got stored."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.drain_once(timeout=timeout)
