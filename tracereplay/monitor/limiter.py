"""Pacing judge calls: at most N a minute (``serve --max-judge-calls-per-minute``).

A sliding window of the last minute's call times: a call past the limit waits (on the monitor's
own worker thread, never on a receiver) until the oldest call is a minute old. ``stop`` ends a
wait at once, for a server shutting down.
"""

from __future__ import annotations

import threading
import time
from collections import deque

WINDOW_S = 60.0


class JudgeLimiter:
    """``acquire()`` returns when one more judge call fits in the last minute (None: no limit);
    False when ``stop()`` was called while it waited."""

    def __init__(self, per_minute: int | None) -> None:
        if per_minute is not None and per_minute < 1:
            raise ValueError("at least one judge call a minute")
        self.per_minute = per_minute
        self._calls: deque[float] = deque()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self.waited_s = 0.0

    def acquire(self) -> bool:
        if self.per_minute is None:
            return not self._stopped.is_set()
        while not self._stopped.is_set():
            with self._lock:
                now = time.monotonic()
                while self._calls and now - self._calls[0] >= WINDOW_S:
                    self._calls.popleft()
                if len(self._calls) < self.per_minute:
                    self._calls.append(now)
                    return True
                wait = WINDOW_S - (now - self._calls[0])
            self.waited_s += wait
            self._stopped.wait(wait)
        return False

    def stop(self) -> None:
        self._stopped.set()
