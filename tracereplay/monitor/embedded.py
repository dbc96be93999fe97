"""The embedded default: the command that drains the spool starts the monitors' round.

With no server, runs reach the store when the next ``tracereplay`` command drains the spool
(``open_store``; the drain is ``ingest/on_open.py``). That command must not wait for judges, so
when its drain stored runs and the store has monitors, it starts ``tracereplay monitor run
--background`` as a detached process and goes on. The background round takes the store only to
read and to write (``rounds``); at most one such process waits for the round lock at a time
(``<db>.monitor.wait.lock``), so a burst of commands starts at most one more round, and none is
lost: the waiting one sees every run drained before it got the round lock.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from filelock import FileLock, Timeout

from tracereplay.ingest import on_open
from tracereplay.ingest.stats import IngestStats
from tracereplay.store.db import Store
from tracereplay.store.monitors import has_monitors

#: set in the background process: its own drain starts nothing more
CHILD_ENV = "TRACEREPLAY_MONITOR_CHILD"
T = TypeVar("T")


def install() -> None:
    """Have every command's drain start a background round when it stored runs."""
    if after_drain not in on_open.AFTER_DRAIN:
        on_open.AFTER_DRAIN.append(after_drain)


def after_drain(store: Store, stats: IngestStats) -> None:
    """Start a detached ``monitor run --background`` when the drain stored runs and monitors
    exist (never from that process itself)."""
    if not stats.runs or os.environ.get(CHILD_ENV):
        return
    if not has_monitors(store):
        return
    log = store.path.with_name(store.path.name + ".monitor.log")
    with open(log, "ab") as err:
        subprocess.Popen(
            [sys.executable, "-m", "tracereplay", "--db", str(store.path), "monitor", "run",
             "--background", "--quiet"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            env={**os.environ, CHILD_ENV: "1"},
        )  # fmt: skip


def background_round(db: Path, run: Callable[[Callable[[], None]], T]) -> T | None:
    """``run(on_locked)`` unless another background round waits already (None then): this
    process is the one waiting until ``run`` calls ``on_locked`` (it holds the round lock),
    and from then the next command may start another."""
    lock = FileLock(db.with_name(db.name + ".monitor.wait.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return None
    try:
        return run(lock.release)
    finally:
        if lock.is_locked:
            lock.release()
