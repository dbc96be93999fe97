"""Backpressure: a bounded number of requests and body bytes in flight, and a bounded spool backlog.

Nothing queues in memory: a request that does not fit is refused at once with a retry hint
(429 / RESOURCE_EXHAUSTED when too much is in flight, 503 / UNAVAILABLE when the store is behind
or the server is stopping), so memory stays bounded under any load.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

from tracereplay.serve.config import Limits
from tracereplay.serve.rejections import Busy, Unavailable


class Ticket:
    """One admitted request's share of the in-flight budget; release it with ``with`` or ``close``."""

    def __init__(self, admission: Admission, nbytes: int) -> None:
        self._admission = admission
        self.nbytes = nbytes
        self._closed = False

    def grow(self, nbytes: int) -> None:
        """Reserve ``nbytes`` more (an inflating body); raises ``Busy`` when the budget is spent."""
        self._admission._reserve(nbytes)
        self.nbytes += nbytes

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._admission._release(self)

    def __enter__(self) -> Ticket:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Admission:
    """Admits requests while the in-flight and backlog limits allow; thread-safe."""

    def __init__(self, limits: Limits, backlog_bytes: Callable[[], int]) -> None:
        self.limits = limits
        self._backlog_bytes = backlog_bytes
        self._cond = threading.Condition()
        self._requests = 0
        self._bytes = 0
        self._stopping = False
        self.refused_busy = 0
        self.refused_unavailable = 0

    @property
    def in_flight(self) -> int:
        return self._requests

    @property
    def stopping(self) -> bool:
        return self._stopping

    def admit(self, nbytes: int) -> Ticket:
        """Admit a request whose body holds ``nbytes`` so far, or raise ``Busy``/``Unavailable``."""
        retry = self.limits.retry_after_s
        with self._cond:
            if self._stopping:
                self.refused_unavailable += 1
                raise Unavailable("the server is shutting down", retry)
            backlog = self._backlog_bytes()
            if backlog > self.limits.max_backlog_bytes:
                self.refused_unavailable += 1
                raise Unavailable(
                    f"the store is behind ({backlog} spooled bytes not yet stored)", retry
                )
            if self._requests >= self.limits.max_inflight_requests:
                self.refused_busy += 1
                raise Busy(f"{self._requests} requests in flight, the limit", retry)
            self._take(nbytes, alone=self._requests == 0)
            self._requests += 1
        return Ticket(self, nbytes)

    def _take(self, nbytes: int, *, alone: bool) -> None:
        # A request alone in flight always fits, so no single valid request waits forever.
        if self._bytes + nbytes > self.limits.max_inflight_bytes and not alone:
            self.refused_busy += 1
            raise Busy(
                f"{self._bytes} body bytes in flight; {nbytes} more would pass the limit",
                self.limits.retry_after_s,
            )
        self._bytes += nbytes

    def _reserve(self, nbytes: int) -> None:
        with self._cond:
            self._take(nbytes, alone=self._requests == 1)

    def _release(self, ticket: Ticket) -> None:
        with self._cond:
            self._bytes -= ticket.nbytes
            self._requests -= 1
            self._cond.notify_all()

    def stop(self) -> None:
        """Refuse every new request from now on (503 / UNAVAILABLE)."""
        with self._cond:
            self._stopping = True

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no admitted request is still being handled; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._requests:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True
