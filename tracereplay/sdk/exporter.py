"""Span exporters: the embedded default (the store's spool) and a guard for any other exporter.

``SpoolSpanExporter`` is a plain OpenTelemetry ``SpanExporter``: add it to any ``TracerProvider``
(``BatchSpanProcessor(SpoolSpanExporter("app.duckdb"))``) and the spans land in that store the
next time any tracereplay command opens it. No server, no lock on the DuckDB file: each process
appends to its own spool segment.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from tracereplay.sdk.health import health
from tracereplay.store.paths import resolve_db_path, spool_dir
from tracereplay.store.spool import KIND_TRACES_PB, SpoolWriter

#: how many recent encodings ``encoded`` keeps for the exporter to find
_KEPT = 64
_recent: OrderedDict[int, tuple[tuple[ReadableSpan, ...], bytes]] = OrderedDict()
_recent_lock = threading.Lock()


def encoded(spans: Sequence[ReadableSpan]) -> bytes:
    """``spans`` as one serialized OTLP ``ExportTraceServiceRequest``, kept for a while so that
    the spool exporter, given the same spans (a replay's, which evaluation encodes first to
    see them as ingestion will), writes these bytes instead of encoding them again."""
    payload = encode_spans(spans).SerializeToString()
    if spans:
        with _recent_lock:
            _recent[id(spans[0])] = (tuple(spans), payload)
            while len(_recent) > _KEPT:
                _recent.popitem(last=False)
    return payload


def _reuse(spans: Sequence[ReadableSpan]) -> bytes | None:
    """The request of ``spans`` made of encodings ``encoded`` kept, when the batch is a run of
    them (requests concatenate: their ``resource_spans`` are a repeated field); else None."""
    parts: list[bytes] = []
    keys: list[int] = []
    i = 0
    with _recent_lock:
        while i < len(spans):
            kept = _recent.get(id(spans[i]))
            if kept is None:
                return None
            run, payload = kept
            if len(run) > len(spans) - i or any(a is not b for a, b in zip(run, spans[i:])):
                return None
            parts.append(payload)
            keys.append(id(spans[i]))
            i += len(run)
        for key in keys:
            del _recent[key]
    return b"".join(parts)


class SpoolSpanExporter(SpanExporter):
    """Writes each batch as one OTLP ``ExportTraceServiceRequest`` record to ``<db>.spool/``.

    ``db`` resolves like every CLI command (argument, ``$TRACEREPLAY_DB``, ``./tracereplay.duckdb``).
    Records are ``fsync``'d before ``export`` returns unless ``durable=False``. Errors (a spool
    directory that cannot be written, a full disk) are counted and logged once, never raised.
    """

    def __init__(self, db: str | os.PathLike[str] | None = None, *, durable: bool = True) -> None:
        self.db_path: Path = resolve_db_path(db)
        self.spool_dir: Path = spool_dir(self.db_path)
        self._writer = SpoolWriter(self.spool_dir, durable=durable)
        self._shutdown = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        if self._shutdown:
            return SpanExportResult.FAILURE
        try:
            payload = _reuse(spans) or encode_spans(spans).SerializeToString()
            self._writer.append(KIND_TRACES_PB, payload)
        except Exception as exc:
            health.export_failed(len(spans), "spool", f"spool {self.spool_dir}: {exc}")
            return SpanExportResult.FAILURE
        health.exported(len(spans))
        return SpanExportResult.SUCCESS

    @property
    def durable(self) -> bool:
        """Whether each export is ``fsync``'d before it returns (else at ``sync`` and close)."""
        return self._writer.durable

    @durable.setter
    def durable(self, value: bool) -> None:
        self._writer.durable = value

    def sync(self) -> None:
        """``fsync`` the records exported so far (what a non-durable exporter wrote)."""
        try:
            self._writer.sync()
        except Exception as exc:
            health.export_failed(0, "spool", f"spool {self.spool_dir}: {exc}")

    def shutdown(self) -> None:
        """Close this process's segment so the next drain can retire it."""
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._writer.close()
        except Exception as exc:
            health.export_failed(0, "spool", f"spool {self.spool_dir}: {exc}")

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # every export is written (and fsync'd) before it returns


class GuardedSpanExporter(SpanExporter):
    """Wraps another exporter (OTLP HTTP/gRPC): counts its failures, never lets one raise."""

    def __init__(self, inner: SpanExporter, kind: str) -> None:
        self.inner = inner
        self.kind = kind

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception as exc:
            health.export_failed(len(spans), self.kind, f"{type(exc).__name__}: {exc}")
            return SpanExportResult.FAILURE
        if result is SpanExportResult.SUCCESS:
            health.exported(len(spans))
        else:
            health.export_failed(len(spans), self.kind, f"{self.kind} exporter reported failure")
        return result

    def shutdown(self) -> None:
        try:
            self.inner.shutdown()
        except Exception as exc:
            health.export_failed(0, self.kind, f"shutdown: {type(exc).__name__}: {exc}")

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        try:
            return bool(self.inner.force_flush(timeout_millis))
        except Exception as exc:
            health.export_failed(0, self.kind, f"flush: {type(exc).__name__}: {exc}")
            return False
