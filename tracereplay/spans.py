"""The normalized span and log record that every decoder produces and the converter reads.

One in-memory shape for spans whatever their wire format (OTLP protobuf, OTLP JSON, the
Collector's file exporter) and whatever their convention (GenAI, OpenInference, OpenLLMetry).
Ids are lowercase hex strings; times are integer nanoseconds since the Unix epoch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SPAN_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS_CODES = ("UNSET", "OK", "ERROR")

KIND_BY_NAME = {name: i for i, name in enumerate(SPAN_KINDS)}
STATUS_BY_NAME = {name: i for i, name in enumerate(STATUS_CODES)}

STATUS_OK = 1
STATUS_ERROR = 2


@dataclass(slots=True)
class Span:
    """One OpenTelemetry span, decoded.

    ``kind`` and ``status_code`` keep the OTLP enum integers (see ``SPAN_KINDS`` and
    ``STATUS_CODES``); ``parent_span_id`` is ``""`` for a root span. ``events`` are dicts
    ``{"name", "time_unix_nano", "attributes"}``; ``links`` are dicts
    ``{"trace_id", "span_id", "attributes"}``.
    """

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int = 0
    status_message: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    service_name: str = ""
    scope_name: str = ""
    resource: dict[str, Any] = field(default_factory=dict)

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e6

    @property
    def kind_name(self) -> str:
        return SPAN_KINDS[self.kind] if 0 <= self.kind < len(SPAN_KINDS) else "UNSPECIFIED"

    @property
    def status_name(self) -> str:
        return STATUS_CODES[self.status_code] if 0 <= self.status_code < 3 else "UNSET"


@dataclass(slots=True)
class LogRecord:
    """One OTLP log record; GenAI message events (``gen_ai.user.message``, ``gen_ai.choice``...)
    arrive this way from older instrumentations and are joined to their span by trace and span id.
    ``body`` is the decoded AnyValue (str, dict, list...)."""

    trace_id: str
    span_id: str
    time_ns: int
    event_name: str
    body: Any = None
    attributes: dict[str, Any] = field(default_factory=dict)
    severity_text: str = ""
    service_name: str = ""
    scope_name: str = ""
