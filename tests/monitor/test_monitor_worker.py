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
