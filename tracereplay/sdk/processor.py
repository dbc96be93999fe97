"""The span processor tracereplay adds to a ``TracerProvider``.

``CountingBatchSpanProcessor`` is the SDK's ``BatchSpanProcessor`` (bounded queue, background
export thread; ``OTEL_BSP_*`` variables apply) that also counts the spans it drops when its queue
is full, so a stalled exporter costs the agent nothing but lost spans, visibly counted.

``ProcessorSlot`` is what actually sits in the provider: calling ``configure()`` again swaps the
batch processor inside it instead of stacking a second one (which would export every span twice).
"""

from __future__ import annotations

import threading
from collections.abc import Sized

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from tracereplay.sdk.health import health


def batch_queue(processor: BatchSpanProcessor) -> tuple[Sized, int] | None:
    """The queue of ``processor`` and its capacity, or ``None`` when they cannot be found.

    The one place that reads the OTel SDK's internals (``BatchSpanProcessor._batch_processor``,
    its ``_queue`` deque and ``_max_queue_size``): the SDK has no public queue length nor drop
    count. ``tests/test_library_internals.py`` fails when an SDK release moves them; until then
    nothing breaks, drops are only no longer counted.
    """
    inner = getattr(processor, "_batch_processor", None)
    queue = getattr(inner, "_queue", None)
    capacity = getattr(inner, "_max_queue_size", None)
    if not isinstance(queue, Sized) or not isinstance(capacity, int):
        return None
    return queue, capacity


class CountingBatchSpanProcessor(BatchSpanProcessor):
    """``BatchSpanProcessor`` that counts spans dropped on a full queue in ``stats()``."""

    def __init__(self, exporter: SpanExporter) -> None:
        super().__init__(exporter)
        found = batch_queue(self)
        self._queue, self._capacity = found if found is not None else (None, None)

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
        # the SDK's (underscored) on-ending hook: TracerProvider calls it on its processors, so
        # the slot forwards it (tests/test_library_internals.py checks it still arrives)
        self._processor._on_ending(span)

    def on_end(self, span: ReadableSpan) -> None:
        self._processor.on_end(span)

    def shutdown(self) -> None:
        self._processor.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._processor.force_flush(timeout_millis)
