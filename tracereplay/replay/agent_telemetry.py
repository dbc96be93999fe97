"""Telemetry the agent sets up itself: its replay's spans read where they go.

An agent may make its own OpenTelemetry tracer provider: Logfire's ``logfire.configure()``,
OpenLIT's ``openlit.init()``, an OpenInference set-up, a team's ``configure_tracing()``. Its
framework's spans then go to that provider, not to the one tracereplay records replays with
(and Logfire refuses to let another become the global one: "Overriding of current
TracerProvider is not allowed"). So the replay's spans would never reach the capture that
scores the case, nor the store.

``watch_providers()`` (called before the agent's module is imported) notes every SDK tracer
provider the process makes from then on (and those it made before, found once through the
garbage collector); ``forward_replays(ours, capture)`` gives each of them, once, a span
processor that hands tracereplay's provider the spans of the traces a replay watches (their
start, to stamp the replay's marks, and their end, to capture and store them). Spans of other
traces stay the agent's own. The user's provider keeps its exporters: a replay's spans reach
the agent's own backend too, as the agent's spans always do.
"""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from tracereplay.replay.capture import TraceCapture

__all__ = ["forward_replays", "watch_providers"]

_providers: weakref.WeakSet[TracerProvider] = weakref.WeakSet()
_forwarded: weakref.WeakSet[TracerProvider] = weakref.WeakSet()
_lock = threading.Lock()
_watching = False


def watch_providers() -> None:
    """Note every ``TracerProvider`` of the process (once per process)."""
    global _watching
    with _lock:
        if _watching:
            return
        _watching = True
        init = TracerProvider.__init__

        def noted_init(self: TracerProvider, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **kwargs)
            _providers.add(self)

        noted_init.__wrapped__ = init  # type: ignore[attr-defined]
        TracerProvider.__init__ = noted_init  # type: ignore[method-assign]
    for obj in gc.get_objects():
        if isinstance(obj, TracerProvider):
            _providers.add(obj)


#: (tracereplay's provider, its capture) of the replays running now
_target: tuple[TracerProvider, TraceCapture] | None = None


class _Forward(SpanProcessor):
    """Hands tracereplay's provider the spans of the traces its capture watches."""

    def __init__(self, provider: TracerProvider) -> None:
        self._provider = weakref.ref(provider)

    def _to(self, span: ReadableSpan) -> Any:
        target, ctx = _target, span.context
        if target is None or ctx is None or target[0] is self._provider():
            return None
        if not target[1].watching(ctx.trace_id):
            return None
        return target[0]._active_span_processor

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        processor = self._to(span)
        if processor is not None:
            processor.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        processor = self._to(span)
        if processor is not None:
            processor.on_end(span)

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def forward_replays(ours: TracerProvider, capture: TraceCapture) -> int:
    """Give every other provider of the process the forwarding processor (once each); how
    many providers forward to ``ours`` now."""
    global _target
    with _lock:
        _target = (ours, capture)
        for provider in list(_providers):
            if provider is ours or provider in _forwarded:
                continue
            provider.add_span_processor(_Forward(provider))
            _forwarded.add(provider)
        return sum(1 for p in _forwarded if p is not ours)
