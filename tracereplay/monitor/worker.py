"""``serve``'s monitor worker: the traces each drain stored, judged on a thread of their own.

The drainer hands over the trace ids of each committed transaction with ``offer``, which never
waits: the queue is bounded, and when it is full the batch is dropped and the next round looks
at every pending run since the server started instead (nothing is lost, the drainer and the
receivers are never slowed). The thread gathers what is queued, then runs one ``score_pending``
round over those traces: the store is held only to read the runs and to write the results,
judge calls are paced by the server's limiter. A round that finds the store busy is tried again.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from tracereplay.errors import StoreBusyError, TraceReplayError
from tracereplay.monitor.limiter import JudgeLimiter
from tracereplay.monitor.rounds import RoundStats, score_pending
from tracereplay.store.db import Store

log = logging.getLogger("tracereplay.monitor")

#: batches of trace ids waiting for the worker before ``offer`` drops one
QUEUE_BATCHES = 256
#: how long the worker waits for more batches before a round (coalesces a burst's drains)
GATHER_S = 0.2
#: how long a round waits for the store or the round lock before trying again later
LOCK_TIMEOUT_S = 5.0
#: after finding no monitor, how long the worker lets drains pass before it looks again
IDLE_RECHECK_S = 5.0


class MonitorWorker:
    """Judges the new live runs of ``db``'s monitors as the drainer stores them."""

    def __init__(self, db: Path, max_judge_calls_per_minute: int | None = None) -> None:
        self.db = db
        self.limiter = JudgeLimiter(max_judge_calls_per_minute)
        self._queue: queue.Queue[list[str]] = queue.Queue(QUEUE_BATCHES)
        self._overflow = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tracereplay-monitor", daemon=True)
        self.started_at = datetime.now(UTC)
        self.totals = RoundStats()
        self.dropped = 0
        self.last_error: str | None = None
        self._idle_until = 0.0  # monotonic time before which the store is known monitor-less
        self._skipped = False  # batches were passed over while it was

    def offer(self, trace_ids: list[str]) -> None:
        """Queue the traces a drain just committed; never blocks."""
        if not trace_ids:
            return
        try:
            self._queue.put_nowait(trace_ids)
        except queue.Full:
            self.dropped += 1
            self._overflow.set()

    def start(self) -> None:
        self._thread.start()

    def health(self) -> dict[str, object]:
        """What ``serve``'s health answer says of the monitors."""
        return {
            "monitor_runs_judged": self.totals.runs,
            "monitor_judge_calls": self.totals.judge_calls,
            "monitor_batches_dropped": self.dropped,
            "monitor_error": self.last_error,
        }

    def stop(self, timeout: float = 30.0) -> None:
        """Judge what is queued (the server's final drain), then stop the thread; past
        ``timeout`` the judge calls under way are cut short (their runs stay pending)."""
        self._stop.set()
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait([])  # wakes the thread
        self._thread.join(timeout)
        if self._thread.is_alive():
            self.limiter.stop()
            self._thread.join(5.0)

    def _run(self) -> None:
        traces: set[str] = set()
        while True:
            with contextlib.suppress(queue.Empty):
                traces.update(self._queue.get(timeout=1.0))
            self._gather(traces)
            overflow = self._overflow.is_set()
            recheck = self._skipped and time.monotonic() >= self._idle_until
            if traces or overflow or recheck:
                self._overflow.clear()
                if not self._round_or_retry(None if overflow else traces, overflow):
                    continue  # the store was busy: the traces stay for the next round
                traces = set()
            if self._stop.is_set() and self._queue.empty() and not self._overflow.is_set():
                return

    def _round_or_retry(self, traces: set[str] | None, overflow: bool) -> bool:
        """One round; False when the store was busy (to be tried again)."""
        try:
            self._round(traces)
        except StoreBusyError as exc:
            self._note(f"store busy, will retry: {exc}")
            if overflow:
                self._overflow.set()
            if self._stop.is_set():
                return True  # shutting down: the runs stay pending for `monitor run`
            self._stop.wait(1.0)
            return False
        except TraceReplayError as exc:
            self._note(str(exc))
        except Exception as exc:  # a bug: keep serving, the runs stay pending
            self._note(f"{type(exc).__name__}: {exc}")
            log.debug("monitor round failed", exc_info=True)
        return True

    def _gather(self, traces: set[str]) -> None:
        """What else arrives within ``GATHER_S``: one round for a burst of drains."""
        if not self._stop.is_set():
            self._stop.wait(GATHER_S)
        while True:
            try:
                traces.update(self._queue.get_nowait())
            except queue.Empty:
                return

    def _round(self, traces: set[str] | None) -> None:
        """A round over ``traces`` (None: every pending run since the server started). A store
        without monitors is looked at again only ``IDLE_RECHECK_S`` later (a server without
        monitors then opens the store for them once in a while, not after every drain); the
        round after such a pause looks at every run since the server started, so the runs
        stored between a monitor's creation and the recheck are judged too."""
        now = time.monotonic()
        if now < self._idle_until:
            self._skipped = True
            return
        if self._skipped:
            traces, self._skipped = None, False
        stats = score_pending(
            self.db,
            self.limiter,
            traces=traces,
            since=self.started_at if traces is None else None,
            opener=_open,
            lock_timeout=LOCK_TIMEOUT_S,
        )
        if not stats.monitors:
            self._idle_until = now + IDLE_RECHECK_S
        self.totals.runs += stats.runs
        self.totals.failing += stats.failing
        self.totals.checks += stats.checks
        self.totals.judge_calls += stats.judge_calls
        if self.last_error is not None:
            log.info("monitors judge runs again")
            self.last_error = None

    def _note(self, message: str) -> None:
        if message != self.last_error:
            log.warning("monitors could not judge new runs of %s: %s", self.db, message)
        self.last_error = message


def _open(db: Path):  # noqa: ANN202 (a context manager, as rounds.Opener)
    return Store.open(db, timeout=LOCK_TIMEOUT_S)
