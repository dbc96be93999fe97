"""Span exporters: the embedded default (the store's spool) and a guard for any other exporter.

``SpoolSpanExporter`` is a plain OpenTelemetry ``SpanExporter``: add it to any ``TracerProvider``
(``BatchSpanProcessor(SpoolSpanExporter("app.duckdb"))``) and the spans land in that store the
next time any tracereplay command opens it. No server, no lock on the DuckDB file: each process
appends to its own spool segment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from tracereplay.otlp.json_encode import encode_traces_json
from tracereplay.sdk.health import health
from tracereplay.sdk.sdk_spans import from_sdk
from tracereplay.store.paths import resolve_db_path, spool_dir
from tracereplay.store.spool import KIND_LOGS_PB, KIND_TRACES_JSON, KIND_TRACES_PB, SpoolWriter


def spool_record(spans: Sequence[ReadableSpan]) -> tuple[int, bytes]:
    """The spool record of ``spans``: OTLP/JSON written from the spans read directly
    (``from_sdk``: a few times cheaper than the SDK's protobuf encoder, and the same spans once
    decoded), else OTLP protobuf by the SDK's encoder."""
    direct = from_sdk(spans)
    if direct is not None:
        return KIND_TRACES_JSON, encode_traces_json(direct)
    return KIND_TRACES_PB, encode_spans(spans).SerializeToString()


class SpoolSpanExporter(SpanExporter):
    """Writes each batch as one OTLP ``ExportTraceServiceRequest`` record (``spool_record``) to
    ``<db>.spool/``.

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
        if not self.write(lambda: spool_record(spans), len(spans)):
            return SpanExportResult.FAILURE
        health.exported(len(spans))
        return SpanExportResult.SUCCESS

    def write(
        self, record: Callable[[], tuple[int, bytes]], count: int = 0, what: str = ""
    ) -> bool:
        """Append the spool record ``record()`` makes (made inside the guard: a record that
        cannot be encoded counts as one that cannot be written); False when this exporter is
        shut down or the record was not written (counted, ``count`` items lost, logged once)."""
        if self._shutdown:
            return False
        try:
            self._writer.append(*record())
        except Exception as exc:
            health.export_failed(count, "spool", f"spool {self.spool_dir}{what}: {exc}")
            return False
        return True

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


class SpoolLogExporter:
    """Writes each batch of OpenTelemetry log records (the GenAI message events some
    instrumentations record the prompts and completions as) as one OTLP
    ``ExportLogsServiceRequest`` record to ``<db>.spool/``, beside the spans they belong to.

    A ``LogRecordExporter`` by its methods (the SDK's logs API is not stable: its base class
    and result enum changed names), for a ``BatchLogRecordProcessor``. ``target`` is the spool
    exporter the records go to; ``None`` (another destination configured) drops them.
    """

    def __init__(self, target: SpoolSpanExporter | None) -> None:
        self.target = target

    def export(self, batch: Sequence[Any]) -> Any:
        result = _log_export_result()
        if not batch or self.target is None:
            return result.SUCCESS

        def record() -> tuple[int, bytes]:
            from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

            return KIND_LOGS_PB, encode_logs(batch).SerializeToString()

        return result.SUCCESS if self.target.write(record, what=" (logs)") else result.FAILURE

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # every export is written (and fsync'd) before it returns

    def shutdown(self) -> None:
        pass  # the spool's segment is closed by its span exporter


def _log_export_result() -> Any:
    from opentelemetry.sdk._logs import export

    return getattr(export, "LogRecordExportResult", None) or export.LogExportResult


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
