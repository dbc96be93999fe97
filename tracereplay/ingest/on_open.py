"""The drain every command's ``open_store`` runs (``store/open.py``): the spool into the store.

``tracereplay.ingest`` registers ``drain_on_open`` with ``store.open.register_drain`` when it is
imported, so opening the store with ``drain=True`` reads what any agent process wrote before
(read-your-writes) while ``store/`` imports nothing of ingest or the converter.
"""

from __future__ import annotations

from collections.abc import Callable

from tracereplay.ingest.stats import IngestStats
from tracereplay.store import spool
from tracereplay.store.db import Store
from tracereplay.store.open import register_drain

#: called after a command's drain with the store and what it stored (``tracereplay.monitor``
#: starts its background round from here: ``monitor/embedded.py``); a hook must not block
AFTER_DRAIN: list[Callable[[Store, IngestStats], None]] = []


def drain_on_open(store: Store) -> None:
    """Drain the spool into ``store``, then tell the ``AFTER_DRAIN`` hooks what it stored."""
    stats = _drain(store)
    for hook in AFTER_DRAIN:
        hook(store, stats)


def install() -> None:
    """Register ``drain_on_open`` with ``store/open.py`` (idempotent)."""
    register_drain(drain_on_open)


def _drain(store: Store) -> IngestStats:
    """``drain_spool``, imported (with the pipeline, the decoders and the converter) only when
    the spool holds a segment: a command on a store nothing was spooled for does not pay for
    them."""
    if not spool.list_segments(store.spool_dir):
        return IngestStats()
    from tracereplay.ingest.drain import drain_spool

    return drain_spool(store)
