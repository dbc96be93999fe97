"""The parts that keep ``serve`` fast: the worker's queue never waits, the limiter paces and
stops."""

from __future__ import annotations

import threading
from pathlib import Path

from tracereplay.monitor import worker as worker_module
from tracereplay.monitor.limiter import JudgeLimiter
from tracereplay.monitor.worker import MonitorWorker


def test_a_full_queue_drops_the_batch_and_asks_for_a_scan(tmp_path: Path) -> None:
    monitors = MonitorWorker(tmp_path / "w.duckdb")  # not started: nothing takes from the queue
    for i in range(worker_module.QUEUE_BATCHES):
        monitors.offer([f"trace-{i}"])
    assert monitors.dropped == 0
    monitors.offer(["one more"])  # returns at once
    monitors.offer([])  # nothing stored: nothing queued, nothing dropped
    assert monitors.dropped == 1 and monitors._overflow.is_set()
    assert monitors.health()["monitor_batches_dropped"] == 1


def test_the_limiter_lets_n_calls_a_minute_through_and_stop_ends_a_wait() -> None:
    limiter = JudgeLimiter(2)
    assert limiter.acquire() and limiter.acquire()
    results: list[bool] = []
    waiting = threading.Thread(target=lambda: results.append(limiter.acquire()))
    waiting.start()
    limiter.stop()
    waiting.join(10)
    assert results == [False]
    assert JudgeLimiter(None).acquire()


def test_a_store_without_monitors_is_looked_at_again_later_and_nothing_is_missed(
    tmp_path: Path, monkeypatch
) -> None:
    """No monitor: the worker stops opening the store after each drain for a while; the round
    after that pause looks at every run since the server started (a monitor created meanwhile
    misses none)."""
    from opentelemetry.sdk.trace import TracerProvider
    from typer.testing import CliRunner

    import tracereplay
    from tracereplay import sdk
    from tracereplay.cli.app import app
    from tracereplay.monitor.embedded import CHILD_ENV
    from tracereplay.store import Store

    monkeypatch.setenv(CHILD_ENV, "1")
    db = tmp_path / "w.duckdb"
    with Store.open(db):
        pass
    monitors = MonitorWorker(db)
    tracereplay.configure(db=db, tracer_provider=TracerProvider())
    with tracereplay.agent_run("weather", "q") as run:
        run.set_response("a")
    assert tracereplay.flush()
    sdk.shutdown()
    checks = tmp_path / "m.yaml"
    checks.write_text("checks:\n  - kind: status\n")
    monitors._round(set())  # no monitor yet: the store is left alone for a while
    assert monitors._idle_until > 0
    made = CliRunner().invoke(app, ["--db", str(db), "monitor", "create", "m", "--checks",
                                    str(checks)])  # fmt: skip
    assert made.exit_code == 0, made.output  # (its drain stored the run)
    with Store.open(db) as store:
        [trace] = [r[0] for r in store.con.execute("SELECT trace_id FROM runs").fetchall()]
    monitors._round({trace})  # within the pause: passed over
    assert monitors.totals.runs == 0 and monitors._skipped
    monitors._idle_until = 0.0  # the pause is over
    monitors._round(set())  # looks at every run since the server started
    assert monitors.totals.runs == 1


def test_one_round_at_a_time_per_store(tmp_path: Path) -> None:
    import pytest

    from tracereplay.errors import StoreBusyError
    from tracereplay.monitor.rounds import round_lock

    db = tmp_path / "r.duckdb"
    with (
        round_lock(db, 1.0),
        pytest.raises(StoreBusyError, match="another monitor round on"),
        round_lock(db, 0.1),
    ):
        pass
    with round_lock(db, 0.1):  # free again
        pass
