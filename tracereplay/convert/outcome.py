"""Errors of spans and the status of a run."""

from __future__ import annotations

from typing import Any

from tracereplay.convert.values import as_name, as_text, is_true
from tracereplay.spans import Span

STATUS_OK = 1
STATUS_ERROR = 2
RUN_STATUS_KEY = "tracereplay.run.status"
MAX_ROUNDS_KEY = "gen_ai.agent.max_rounds_exceeded"


def _exception_message(attrs: Any) -> str:
    if not isinstance(attrs, dict):
        return ""
    kind = as_name(attrs.get("exception.type"))
    message = as_text(attrs.get("exception.message"))
    if kind and message:
        return f"{kind}: {message}"
    return message or kind


def span_error(span: Span) -> str | None:
    """Why ``span`` failed, or ``None`` when it did not.

    A span failed when its status is ERROR, it has an ``exception`` event, or it has
    ``error.type`` (an explicit OK status wins). The message is the status message, else the
    exception's ``type: message``, else ``error.type``, else ``"error"``.
    """
    if span.status_code == STATUS_OK:
        return None
    exception = ""
    for event in span.events:
        if event.get("name") == "exception":
            exception = _exception_message(event.get("attributes")) or "exception"
    error_type = as_name(span.attributes.get("error.type"))
    if span.status_code == STATUS_ERROR:
        return span.status_message or exception or error_type or "error"
    return exception or error_type or None


def run_status(root: Span, error: str | None) -> str:
    """``max_rounds_exceeded`` when the root says so (``tracereplay.run.status`` or
    ``gen_ai.agent.max_rounds_exceeded``), else ``failed`` on an error, else ``success``."""
    marker = root.attributes.get(RUN_STATUS_KEY)
    if marker == "max_rounds_exceeded" or is_true(root.attributes.get(MAX_ROUNDS_KEY)):
        return "max_rounds_exceeded"
    if error is not None or marker == "failed":
        return "failed"
    return "success"
