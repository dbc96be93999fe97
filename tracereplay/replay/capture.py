"""Seeing a replay's spans in-process, so the case is scored on the run they make.

The spans still go to the store the usual way (the SDK's exporter, the spool); ``TraceCapture``
is a second span processor on the same provider that keeps the ended spans of the traces it is
told to watch, and ``to_spans`` turns them into tracereplay ``Span``s exactly as the spool's
records decode (``sdk_spans.from_sdk``, which the spool exporter uses too, or the OTLP protobuf
round trip for a value only that path handles), so ``convert_trace`` sees what ingestion will.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping, Sequence

from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.util.types import AttributeValue

from tracereplay.otlp import decode_traces_pb
from tracereplay.sdk.sdk_spans import from_sdk
from tracereplay.spans import Span as TrSpan


class TraceCapture(SpanProcessor):
    """Keeps the ended spans of watched traces until they are taken, and stamps the replay's
    marks on every span started in a watched trace.

    The marks (``tracereplay.run.kind = replay``, ``tracereplay.eval_run_id``,
    ``tracereplay.case_id``) are what make a run a replay run; the SDK's ``agent_run`` carries
    them, but a framework opens its own agent and workflow spans, which know nothing of them.
    Stamping every span of the replay's trace as it starts (by trace id, so a framework that
    starts spans in threads of its own is covered too) marks whichever run the trace converts
    to, the stored one as the scored one.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: dict[int, list[ReadableSpan]] = {}
        self._marks: dict[int, Mapping[str, AttributeValue]] = {}

    def watch(self, trace_id: int, marks: Mapping[str, AttributeValue] | None = None) -> None:
        """Keep the spans of ``trace_id`` (and stamp ``marks`` on those that start from now)."""
        with self._lock:
            self._spans.setdefault(trace_id, [])
            if marks:
                self._marks[trace_id] = dict(marks)

    def watching(self, trace_id: int) -> bool:
        """Whether the spans of ``trace_id`` are kept (a replay's trace)."""
        return trace_id in self._spans

    def take(self, trace_id: int, *, keep_watching: bool = False) -> list[ReadableSpan]:
        """The spans of ``trace_id`` ended so far (and stop watching it unless told not to)."""
        with self._lock:
            spans = self._spans.get(trace_id, [])
            if keep_watching:
                self._spans[trace_id] = []
            else:
                self._spans.pop(trace_id, None)
                self._marks.pop(trace_id, None)
        return spans

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        ctx = span.context
        if ctx is None or not self._marks:
            return
        marks = self._marks.get(ctx.trace_id)
        if marks is not None:
            try:
                span.set_attributes(marks)
            except Exception:  # never break the agent's span
                pass

    def on_end(self, span: ReadableSpan) -> None:
        ctx = span.context
        if ctx is None:
            return
        with self._lock:
            bucket = self._spans.get(ctx.trace_id)
            if bucket is not None:
                bucket.append(span)

    def shutdown(self) -> None:
        with self._lock:
            self._spans.clear()
            self._marks.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


_captures: weakref.WeakKeyDictionary[TracerProvider, TraceCapture] = weakref.WeakKeyDictionary()
_captures_lock = threading.Lock()


def capture_for(provider: TracerProvider) -> TraceCapture:
    """The capture processor of ``provider`` (added on first use, once per provider)."""
    with _captures_lock:
        capture = _captures.get(provider)
        if capture is None:
            capture = TraceCapture()
            provider.add_span_processor(capture)
            _captures[provider] = capture
        return capture


def to_spans(spans: Sequence[ReadableSpan]) -> list[TrSpan]:
    """OpenTelemetry SDK spans as tracereplay ``Span``s: read directly, else (a value only the
    protobuf path knows what to do with) through OTLP protobuf."""
    if not spans:
        return []
    direct = from_sdk(spans)
    if direct is not None:
        return direct
    return list(decode_traces_pb(encode_spans(spans).SerializeToString()).spans)
