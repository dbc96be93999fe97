"""The replay hook: answer tool calls from a recording instead of running the tools.

Every ``@tracereplay.tool`` call asks the active interceptor first. Evaluation (replay) installs
one around a run of the agent::

    def answer(tool_name: str, arguments: dict) -> object:
        recorded = recording.next(tool_name, arguments)
        if recorded is None:
            return RUN_LIVE              # not in the recording: run the real tool
        if recorded.error:
            raise RecordedToolError(recorded.error)   # the tool fails as it did
        return recorded.result           # used as the tool's return value

    with tool_interceptor(answer), run_attributes({"tracereplay.run.kind": "replay"}):
        my_agent("What's the weather in Paris?")

Both are ``contextvars``-scoped: they apply to the current thread or task and what it starts,
and nest (the innermost wins). The ``execute_tool`` span of an answered call is still recorded,
with ``tracereplay.tool.replayed = true``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final, Protocol

from opentelemetry.util.types import AttributeValue


class _RunLive:
    __slots__ = ()

    def __repr__(self) -> str:
        return "RUN_LIVE"

    def __reduce__(self) -> str:
        return "RUN_LIVE"


#: returned by an interceptor to let the real tool run
RUN_LIVE: Final = _RunLive()


class ToolInterceptor(Protocol):
    """``fn(tool_name, arguments)``: a value to use as the tool's result, ``RUN_LIVE``, or raise.

    ``arguments`` are the call's arguments bound by the tool's signature (what the span records,
    before redaction). In an ``async`` tool the value may also be an awaitable.
    """

    def __call__(self, tool_name: str, arguments: dict[str, Any], /) -> Any: ...


_interceptor: ContextVar[ToolInterceptor | None] = ContextVar(
    "tracereplay_tool_interceptor", default=None
)
_run_attributes: ContextVar[Mapping[str, AttributeValue] | None] = ContextVar(
    "tracereplay_run_attributes", default=None
)


@contextmanager
def tool_interceptor(fn: ToolInterceptor | None) -> Iterator[None]:
    """Route every ``@tracereplay.tool`` call in this context through ``fn`` (``None``: none)."""
    token = _interceptor.set(fn)
    try:
        yield
    finally:
        _interceptor.reset(token)


def current_interceptor() -> ToolInterceptor | None:
    """The interceptor tool calls consult right now, if any."""
    return _interceptor.get()


@contextmanager
def run_attributes(attributes: Mapping[str, AttributeValue]) -> Iterator[None]:
    """Add ``attributes`` to every ``invoke_agent`` span started in this context.

    Replay uses it to mark the runs it causes (``tracereplay.run.kind``,
    ``tracereplay.eval_run_id``, ``tracereplay.case_id``) without changing the agent's code.
    Nested uses merge, the inner values winning.
    """
    outer = _run_attributes.get()
    merged = {**outer, **attributes} if outer else dict(attributes)
    token = _run_attributes.set(merged)
    try:
        yield
    finally:
        _run_attributes.reset(token)


def current_run_attributes() -> Mapping[str, AttributeValue] | None:
    return _run_attributes.get()
