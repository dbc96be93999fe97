"""Open a span as the current one, close it recording any error: shared by runs, LLM calls, tools."""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from types import TracebackType
from typing import Generic, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from tracereplay.sdk import attributes as A
from tracereplay.sdk.config import get_tracer
from tracereplay.sdk.content import ContentPolicy
from tracereplay.sdk.health import health

H = TypeVar("H")


class SpanScope:
    """A started span made current; ``close(exc)`` ends it. Never raises."""

    __slots__ = ("span", "_token", "_closed")

    def __init__(self, name: str, kind: SpanKind, attributes: Mapping[str, AttributeValue]) -> None:
        self._token: object | None = None
        self._closed = False
        try:
            self.span: Span = get_tracer().start_span(name, kind=kind, attributes=attributes)
            self._token = otel_context.attach(trace.set_span_in_context(self.span))
        except Exception as exc:
            health.instrumentation_failed("start span", exc)
            self.span = INVALID_SPAN

    def close(self, exc: BaseException | None, policy: ContentPolicy) -> None:
        """End the span; with ``exc``, record it as the span's error first."""
        if self._closed:
            return
        self._closed = True
        # plain try/except rather than ``guard``: this runs for every span
        if exc is not None:
            try:
                record_error(self.span, exc, policy)
            except Exception as err:
                health.instrumentation_failed("record exception", err)
        if self._token is not None:
            try:
                otel_context.detach(self._token)  # type: ignore[arg-type]
            except Exception as err:
                health.instrumentation_failed("detach context", err)
        try:
            self.span.end()
        except Exception as err:
            health.instrumentation_failed("end span", err)


class SyncAsyncContext(Generic[H]):
    """A context manager for ``with`` and ``async with`` alike: ``async with`` does what ``with``
    does (recording a span never awaits)."""

    def __enter__(self) -> H:
        raise NotImplementedError

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> H:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)


def record_error(span: Span, exc: BaseException, policy: ContentPolicy) -> None:
    """Status ERROR, ``error.type`` and an ``exception`` event, messages redacted and capped."""
    if not span.is_recording():
        return
    exc_type = type(exc)
    qualname = exc_type.__qualname__
    module = exc_type.__module__
    full_name = qualname if module in ("builtins", "__main__") else f"{module}.{qualname}"
    message = policy.text(str(exc))
    span.set_attribute(A.ERROR_TYPE, qualname)
    span.add_event(
        "exception",
        {
            A.EXCEPTION_TYPE: full_name,
            A.EXCEPTION_MESSAGE: message,
            A.EXCEPTION_STACKTRACE: policy.text(
                "".join(traceback.format_exception(exc_type, exc, exc.__traceback__))
            ),
            A.EXCEPTION_ESCAPED: True,
        },
    )
    span.set_status(Status(StatusCode.ERROR, f"{qualname}: {message}" if message else qualname))


def mark_error(span: Span, error_type: str, message: str, policy: ContentPolicy) -> None:
    """An error without an exception (the agent reports a failure itself)."""
    if not span.is_recording():
        return
    text = policy.text(message)
    span.set_attribute(A.ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, f"{error_type}: {text}" if text else error_type))
