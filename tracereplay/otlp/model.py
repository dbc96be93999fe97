"""What the OTLP decoders return (``Decoded``) and the per-span limits they can apply (``Limits``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracereplay.spans import LogRecord, Span


@dataclass
class Limits:
    """Optional per-span limits (``tracereplay serve``); ``None`` means unlimited.

    ``max_attributes``: attributes past this many per span (event, link, log record) are dropped
    and their number is recorded under ``DROPPED_ATTRIBUTES_KEY``. ``max_value_length``: longer
    string values are cut and end with ``…[truncated N chars]``.
    """

    max_attributes: int | None = None
    max_value_length: int | None = None


@dataclass
class Decoded:
    """Spans and log records decoded from one payload or file.

    Invalid spans/log records (bad id lengths...) are not errors: they are counted in
    ``rejected_spans``/``rejected_logs`` and ``errors`` holds one short reason per kind of
    rejection, so a server can answer OTLP ``partial_success``. The spans of one
    ``ResourceSpans`` share one ``resource`` dict: treat it as read-only.
    """

    spans: list[Span] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    rejected_spans: int = 0
    rejected_logs: int = 0
    errors: list[str] = field(default_factory=list)
    #: signals the payload held that are not stored ("metrics", "profiles"), to say so
    other_signals: list[str] = field(default_factory=list)

    def extend(self, other: Decoded) -> None:
        """Append ``other``'s spans, logs, rejection counts and (new) reasons to this one."""
        self.spans.extend(other.spans)
        self.logs.extend(other.logs)
        self.other_signals.extend(s for s in other.other_signals if s not in self.other_signals)
        self.rejected_spans += other.rejected_spans
        self.rejected_logs += other.rejected_logs
        for reason in other.errors:
            self.reject_reason(reason)

    def reject_reason(self, reason: str) -> None:
        """Record ``reason`` once."""
        if reason not in self.errors:
            self.errors.append(reason)

    def reject_span(self, reason: str) -> None:
        self.rejected_spans += 1
        self.reject_reason(reason)

    def reject_log(self, reason: str) -> None:
        self.rejected_logs += 1
        self.reject_reason(reason)


def service_name_of(resource: dict[str, Any]) -> str:
    """The ``service.name`` resource attribute as a string (``""`` when absent)."""
    name = resource.get("service.name")
    if name is None:
        return ""
    return name if isinstance(name, str) else str(name)
