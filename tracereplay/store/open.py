"""Opening the store for a command: what every command that reads or writes the store does.

``open_store`` locks the file, opens and migrates it, then (by default) runs the drain and marks
eval runs whose process died ``interrupted``. The drain moves the spool into the store, so what
any agent process wrote before is visible (read-your-writes); it converts spans into runs, which
is ``tracereplay.ingest``'s job, a layer above this one: ingest registers it here
(``register_drain``) when it is imported, and store imports nothing of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tracereplay.store.abandoned import mark_abandoned_eval_runs
from tracereplay.store.db import Store

#: the drains ``open_store(drain=True)`` runs, in order (``tracereplay.ingest`` registers the one
#: that empties the spool); each gets the open store, outside any transaction
_DRAINS: list[Callable[[Store], None]] = []


def register_drain(drain: Callable[[Store], None]) -> None:
    """Have every ``open_store(drain=True)`` run ``drain`` (once, however often registered)."""
    if drain not in _DRAINS:
        _DRAINS.append(drain)


@contextmanager
def open_store(
    db: str | Path | None = None, *, drain: bool = True, timeout: float = 60.0
) -> Iterator[Store]:
    """Open the store for a command: lock, open, migrate and (by default) drain the spool first,
    so what any agent process wrote before is visible (read-your-writes).

    ``drain=True`` with no drain registered is a wiring error (the spool would be left unread
    while the caller believes it read its writes), raised rather than ignored."""
    if drain and not _DRAINS:
        raise RuntimeError(
            "open_store(drain=True) with no drain registered: import tracereplay.ingest first"
        )
    with Store.open(db, timeout=timeout) as store:
        if drain:
            for run in _DRAINS:
                run(store)
            mark_abandoned_eval_runs(store)
        yield store
