"""A scoring round: every monitor's pending runs judged, the store held only to read and write.

Judges may take seconds a call, and every other ``tracereplay`` process (``serve``'s drainer
first) needs the store meanwhile, so a round opens the store to find the pending runs and load a
chunk of them, closes it, judges the chunk, and opens it again to write the chunk's results (one
transaction: the run's old results of this monitor are replaced). A run re-converted while it
was judged keeps its new ``converted_at``, so it is still pending and is judged again. One round
at a time per store (the ``<db>.monitor.lock`` file lock): two processes never pay a judge twice
for the same run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from tracereplay.errors import StoreBusyError
from tracereplay.monitor.definition import Monitor
from tracereplay.monitor.judging import Judged, judge_run
from tracereplay.monitor.limiter import JudgeLimiter
from tracereplay.monitor.records import get_monitor, list_monitors
from tracereplay.monitor.selection import selected_run_ids
from tracereplay.store.db import Store
from tracereplay.store.lock import file_lock
from tracereplay.store.monitors import replace_results
from tracereplay.store.paths import resolve_db_path
from tracereplay.store.runs import converted_at

#: runs loaded, judged and written at a time
CHUNK = 32
Opener = Callable[[Path], contextlib.AbstractContextManager[Store]]


@dataclass
class RoundStats:
    """What a round did: monitors looked at, runs judged (and failing), checks run, judge calls
    made, per monitor."""

    monitors: int = 0
    runs: int = 0
    failing: int = 0
    checks: int = 0
    judge_calls: int = 0
    per_monitor: dict[str, int] = field(default_factory=dict)
    stopped: bool = False


def monitor_lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".monitor.lock")


@contextlib.contextmanager
def round_lock(db: Path, timeout: float) -> Iterator[None]:
    """One scoring round at a time on ``db`` (``StoreBusyError`` after ``timeout`` s)."""
    try:
        held = file_lock(monitor_lock_path(db), timeout=timeout)
        held.__enter__()
    except StoreBusyError:
        raise StoreBusyError(
            f"another monitor round on {db} kept going for more than {timeout:.0f}s"
        ) from None
    try:
        yield
    finally:
        held.__exit__(None, None, None)


def _open(db: Path) -> contextlib.AbstractContextManager[Store]:
    return Store.open(db, timeout=30.0)


def score_pending(
    db: str | Path | None,
    limiter: JudgeLimiter,
    *,
    names: Sequence[str] | None = None,
    since: datetime | None = None,
    traces: Collection[str] | None = None,
    opener: Opener = _open,
    lock_timeout: float = 60.0,
    on_chunk: Callable[[RoundStats], None] | None = None,
    on_locked: Callable[[], None] | None = None,
) -> RoundStats:
    """Judge what the monitors (``names``, default all) have not judged among the live runs
    (started ``since``; of ``traces`` only), chunk by chunk; ``opener`` opens the store the
    first time (a command's ``open_store`` drains the spool first); ``on_locked`` is called
    once the round lock is held."""
    path = resolve_db_path(db)
    stats = RoundStats()
    with round_lock(path, lock_timeout):
        if on_locked is not None:
            on_locked()
        with opener(path) as store:
            monitors = _monitors(store, names)
            stats.monitors = len(monitors)
            work = [
                (m, run_id)
                for m in monitors
                for run_id in selected_run_ids(store, m, since=since, traces=traces)
            ]
        for start in range(0, len(work), CHUNK):
            chunk = work[start : start + CHUNK]
            with _open(path) as store:
                loaded = _load(store, chunk)
            judged: list[Judged] = []
            for monitor, run, converted_at in loaded:
                one = judge_run(monitor, run, converted_at, limiter)
                if one is None:
                    stats.stopped = True
                    break
                judged.append(one)
            if judged:
                with _open(path) as store:
                    write_judged(store, judged)
                for one in judged:
                    stats.runs += 1
                    stats.failing += one.failed
                    stats.checks += len(one.results)
                    stats.judge_calls += len(one.judge_calls)
                    stats.per_monitor[one.monitor] = stats.per_monitor.get(one.monitor, 0) + 1
                if on_chunk is not None:
                    on_chunk(stats)
            if stats.stopped:
                break
    return stats


def _monitors(store: Store, names: Sequence[str] | None) -> list[Monitor]:
    if names:
        return [get_monitor(store, n) for n in names]
    return list_monitors(store)


def _load(store: Store, chunk: Sequence[tuple[Monitor, str]]) -> list[tuple[Monitor, Any, Any]]:
    """The runs of a chunk with their current ``converted_at`` (runs gone since are skipped)."""
    ids = sorted({run_id for _, run_id in chunk})
    converted = converted_at(store, ids)
    runs = {run_id: store.get_run(run_id) for run_id in converted}
    return [(m, runs[i], converted[i]) for m, i in chunk if i in runs]


def write_judged(store: Store, judged: Sequence[Judged]) -> None:
    """The results of ``judged`` replace those the same monitors had of the same runs; judge
    calls are added (a call made is a cost, whatever came of it)."""
    results = [
        {**r, "details": orjson.dumps(r["details"], default=str).decode()}
        for j in judged
        for r in j.results
    ]
    calls = [c for j in judged for c in j.judge_calls]
    replace_results(store, [(j.monitor, j.run_id) for j in judged], results, calls)
