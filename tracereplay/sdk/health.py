"""Never break the agent: count export and instrumentation errors, log each kind once.

Everything the SDK does on the agent's behalf (building attributes, exporting, writing the spool)
reports its failures here instead of raising into agent code. ``stats()`` tells what happened.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType

from pydantic import BaseModel

log = logging.getLogger("tracereplay.sdk")


class SdkStats(BaseModel):
    """What the SDK did since the process started (or since ``reset_stats()``)."""

    spans_exported: int = 0
    spans_failed: int = 0
    export_errors: int = 0
    spans_dropped: int = 0
    instrumentation_errors: int = 0
    last_error: str | None = None


class _Health:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stats = SdkStats()
        self._logged: set[str] = set()

    def exported(self, count: int) -> None:
        with self._lock:
            self._stats.spans_exported += count

    def export_failed(self, count: int, kind: str, message: str) -> None:
        with self._lock:
            self._stats.spans_failed += count
            self._stats.export_errors += 1
            self._stats.last_error = message
        self._log_once(
            f"export:{kind}", "tracereplay could not export %d span(s): %s", count, message
        )

    def dropped(self, count: int = 1) -> None:
        with self._lock:
            self._stats.spans_dropped += count
        self._log_once(
            "dropped",
            "tracereplay's span buffer is full: dropping spans rather than blocking the agent",
        )

    def instrumentation_failed(self, where: str, exc: BaseException) -> None:
        message = f"{where}: {type(exc).__name__}: {exc}"
        with self._lock:
            self._stats.instrumentation_errors += 1
            self._stats.last_error = message
        self._log_once(
            f"instr:{where}", "tracereplay instrumentation error (ignored) in %s", message
        )

    def _log_once(self, key: str, msg: str, *args: object) -> None:
        with self._lock:
            first = key not in self._logged
            self._logged.add(key)
        if first:
            log.warning(msg + " (logged once; see tracereplay.sdk.stats())", *args)
        else:
            log.debug(msg, *args)

    def snapshot(self) -> SdkStats:
        with self._lock:
            return self._stats.model_copy()

    def reset(self) -> None:
        with self._lock:
            self._stats = SdkStats()
            self._logged.clear()


health = _Health()


def stats() -> SdkStats:
    """A snapshot of the SDK's counters: spans exported, failed, dropped, errors ignored."""
    return health.snapshot()


def reset_stats() -> None:
    """Zero the counters and forget which errors were already logged (for tests)."""
    health.reset()


class guard:
    """``with guard("where"):`` swallows and counts any exception of the SDK's own code.

    Only wrap tracereplay's bookkeeping with it, never the agent's code.
    """

    __slots__ = ("where",)

    def __init__(self, where: str) -> None:
        self.where = where

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if exc is not None and isinstance(exc, Exception):
            health.instrumentation_failed(self.where, exc)
            return True
        return False
