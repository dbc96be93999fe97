"""Helpers shared by the SDK tests."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tracereplay


class Recorded:
    """Spans exported through the real BatchSpanProcessor into an in-memory exporter."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.exporter = exporter

    def spans(self) -> list[ReadableSpan]:
        assert tracereplay.flush()
        return list(self.exporter.get_finished_spans())

    def one(self, name: str) -> ReadableSpan:
        [span] = [s for s in self.spans() if s.name == name]
        return span

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name.startswith(prefix)]
