"""Errors of spans and the status of a run."""

from __future__ import annotations

from typing import Any

from tracereplay.convert.logfire import sdk_error
from tracereplay.convert.values import as_name, as_text, is_true
from tracereplay.errors import one_line
from tracereplay.semconv import (
    ERROR_TYPE,
    EXCEPTION_MESSAGE,
    EXCEPTION_TYPE,
    GEN_AI_AGENT_MAX_ROUNDS_EXCEEDED,
    RUN_STATUS,
    STATUS_MAX_ROUNDS_EXCEEDED,
)
from tracereplay.spans import STATUS_ERROR, STATUS_OK, Span


def _exception_message(attrs: Any) -> str:
    if not isinstance(attrs, dict):
        return ""
    kind = as_name(attrs.get(EXCEPTION_TYPE))
    message = as_text(attrs.get(EXCEPTION_MESSAGE))
    if kind and message:
        return one_line(f"{kind}: {message}")
    return one_line(message or kind)


#: exceptions frameworks raise to pass control, not because something failed (LangGraph's
#: handoff to a parent graph, interrupts for human input)
CONTROL_FLOW_EXCEPTIONS = frozenset(
    {"ParentCommand", "GraphBubbleUp", "GraphInterrupt", "NodeInterrupt"}
)


def span_error(span: Span) -> str | None:
    """Why ``span`` failed, on one line, or ``None`` when it did not.

    A span failed when its status is ERROR, it has an ``exception`` event, or it has
    ``error.type`` (an explicit OK status wins; so does an exception a framework raises for
    control flow, ``CONTROL_FLOW_EXCEPTIONS``). The message is the status message, else the
    exception's ``type: message``, else ``error.type``, else ``"error"``; a status message
    that spans lines (a traceback), or that is the exception's bare message, gives way to the
    exception's ``type: message`` (so a replay can raise the recorded class); a bare message
    with an ``error.type`` naming a class (OpenLIT's) gets that class the same way. An ERROR status
    without a message takes the OpenAI Agents SDK's error a Logfire span records (``error``).
    """
    if span.status_code == STATUS_OK:
        return None
    exception = ""
    exception_text = ""
    control_flow = False
    for event in span.events:
        if event.get("name") == "exception":
            attrs = event.get("attributes")
            exception = _exception_message(attrs) or "exception"
            if isinstance(attrs, dict):
                kind = as_name(attrs.get(EXCEPTION_TYPE)).rpartition(".")[2]
                control_flow = kind in CONTROL_FLOW_EXCEPTIONS
                exception_text = as_text(attrs.get(EXCEPTION_MESSAGE))
    if control_flow:
        return None
    error_type = as_name(span.attributes.get(ERROR_TYPE))
    message = span.status_message
    if message and (
        "\n" in message
        or "Traceback (most recent call last)" in message
        or (exception and message == exception_text)  # the bare message: keep its class
    ):
        message = exception or one_line(message)
    if message and not exception and _is_class_name(error_type):
        kind = error_type.rpartition(".")[2]
        if not message.startswith(kind):  # the bare message: its class is error.type's
            message = one_line(f"{kind}: {message}")
    if span.status_code == STATUS_ERROR:
        return message or exception or error_type or sdk_error(span) or "error"
    return exception or error_type or None


def _is_class_name(value: str) -> bool:
    """Whether an ``error.type`` names an exception class (``ValueError``,
    ``openai.APIError``), not a code (``500``, ``timeout``, ``_OTHER``)."""
    last = value.rpartition(".")[2]
    return bool(last) and last[0].isupper() and last.isidentifier()


def tool_error(span: Span, reported: str | None) -> str | None:
    """A tool span's error: the span's own, unless it only names a code (``TOOL_ERROR``) or
    says nothing while the tool's output reports the failure (``reported``)."""
    error = span_error(span)
    if reported and (error is None or error in ("error", as_name(span.attributes.get(ERROR_TYPE)))):
        return one_line(reported)
    return error


def run_status(root: Span, error: str | None) -> str:
    """``max_rounds_exceeded`` when the root says so (``tracereplay.run.status`` or
    ``gen_ai.agent.max_rounds_exceeded``), else ``failed`` on an error, else ``success``."""
    marker = root.attributes.get(RUN_STATUS)
    if marker == STATUS_MAX_ROUNDS_EXCEEDED or is_true(
        root.attributes.get(GEN_AI_AGENT_MAX_ROUNDS_EXCEEDED)
    ):
        return "max_rounds_exceeded"
    if error is not None or marker == "failed":
        return "failed"
    return "success"
