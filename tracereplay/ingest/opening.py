"""Opening the store for a command: what every command that reads or writes the store does.

``open_store`` locks the DuckDB file, opens and migrates it, then (by default) drains the spool
into it, so what any agent process wrote before is visible (read-your-writes), and marks eval
runs whose process died ``interrupted``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tracereplay.ingest.stats import IngestStats
from tracereplay.store import spool
from tracereplay.store.abandoned import mark_abandoned_eval_runs
from tracereplay.store.db import Store

#: called after a command's drain with the store and what it stored (``tracereplay.monitor``
#: starts its background round from here: ``monitor/embedded.py``); a hook must not block
AFTER_DRAIN: list[Callable[[Store, IngestStats], None]] = []


@contextmanager
def open_store(
    db: str | Path | None = None, *, drain: bool = True, timeout: float = 60.0
) -> Iterator[Store]:
    """Open the store for a command: lock, open, migrate and (by default) drain the spool first,
    so what any agent process wrote before is visible (read-your-writes)."""
    with Store.open(db, timeout=timeout) as store:
        if drain:
            stats = _drain(store)
            mark_abandoned_eval_runs(store)
            for hook in AFTER_DRAIN:
                hook(store, stats)
        yield store


def _drain(store: Store) -> IngestStats:
    """``drain_spool``, imported (with the pipeline, the decoders and the converter) only when
    the spool holds a segment: a command on a store nothing was spooled for does not pay for
    them."""
    if not spool.list_segments(store.spool_dir):
        return IngestStats()
    from tracereplay.ingest.drain import drain_spool

    return drain_spool(store)
