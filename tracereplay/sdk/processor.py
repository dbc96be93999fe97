"""The span processor tracereplay adds to a ``TracerProvider``.

``CountingBatchSpanProcessor`` is the SDK's ``BatchSpanProcessor`` (bounded queue, background
export thread; ``OTEL_BSP_*`` variables apply) that also counts the spans it drops when its queue
is full, so a stalled exporter costs the agent nothing but lost spans, visibly counted.

``ProcessorSlot`` is what actually sits in the provider: calling ``configure()`` again swaps the
batch processor inside it instead of stacking a second one (which would export every span twice).
"""

from __future__ import annotations

import threading

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from tracereplay.sdk.health import health


class CountingBatchSpanProcessor(BatchSpanProcessor):
    """``BatchSpanProcessor`` that counts spans dropped on a full queue in ``stats()``."""

    def __init__(self, exporter: SpanExporter) -> None:
        super().__init__(exporter)
        inner = getattr(self, "_batch_processor", None)
        self._queue = getattr(inner, "_queue", None)
        self._capacity: int | None = getattr(inner, "_max_queue_size", None)

    @property
    def queued(self) -> int:
        """Spans waiting in the queue for the export thread."""
        return len(self._queue) if self._queue is not None else 0

    def on_end(self, span: ReadableSpan) -> None:
        queue = self._queue
        if (
            queue is not None
            and self._capacity is not None
            and len(queue) >= self._capacity
            and span.context is not None
            and span.context.trace_flags.sampled
        ):
            health.dropped(1)  # the SDK's deque then discards its oldest span
        super().on_end(span)


class ProcessorSlot(SpanProcessor):
    """Forwards to the current processor; ``replace`` swaps it (shutting the old one down)."""

    def __init__(self, processor: SpanProcessor) -> None:
        self._processor = processor
        self._lock = threading.Lock()

    @property
    def processor(self) -> SpanProcessor:
        return self._processor

    def replace(self, processor: SpanProcessor) -> None:
        with self._lock:
            old, self._processor = self._processor, processor
        old.shutdown()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self._processor.on_start(span, parent_context=parent_context)

    def _on_ending(self, span: Span) -> None:
        self._processor._on_ending(span)

    def on_end(self, span: ReadableSpan) -> None:
        self._processor.on_end(span)

    def shutdown(self) -> None:
        self._processor.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._processor.force_flush(timeout_millis)
