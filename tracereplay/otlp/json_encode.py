"""Spans → an OTLP/JSON ``ExportTraceServiceRequest``: what ``decode_traces_json`` reads back as
the same spans; log records → an ``ExportLogsServiceRequest`` that ``decode_logs_json`` reads
back as the same records.

Written with orjson from tracereplay ``Span``s, not through protobuf's JSON mapping (which
writes ids as base64, where OTLP/JSON wants hex). Consecutive spans of one resource and scope
share a ``resourceSpans`` entry, so decoding gives the spans back in the order given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import orjson

from tracereplay.spans import LogRecord, Span


def any_value(value: Any) -> dict[str, Any]:
    """A decoded attribute value (``any_value``'s output) as an OTLP/JSON ``AnyValue``."""
    t = value.__class__
    if t is str:
        return {"stringValue": value}
    if t is bool:
        return {"boolValue": value}
    if t is int:
        return {"intValue": value}
    if t is float:
        if math.isfinite(value):
            return {"doubleValue": value}
        # protobuf JSON's names for what JSON numbers cannot say
        return {
            "doubleValue": "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        }
    if t is list:
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if t is dict:
        return {"kvlistValue": {"values": key_values(value)}}
    if value is None:
        return {}
    raise TypeError(f"no OTLP value for {t.__name__}")


def key_values(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    """A decoded attribute dict as OTLP/JSON ``KeyValue``s."""
    out = []
    for key, value in attributes.items():
        if value.__class__ is str:  # most attributes: no call
            out.append({"key": key, "value": {"stringValue": value}})
        else:
            out.append({"key": key, "value": any_value(value)})
    return out


def _span(s: Span) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": s.trace_id,
        "spanId": s.span_id,
        "name": s.name,
        "kind": s.kind,
        "startTimeUnixNano": s.start_ns,
        "endTimeUnixNano": s.end_ns,
        "attributes": key_values(s.attributes),
    }
    if s.parent_span_id:
        out["parentSpanId"] = s.parent_span_id
    if s.status_code or s.status_message:
        out["status"] = {"code": s.status_code, "message": s.status_message}
    if s.events:
        out["events"] = [
            {
                "name": e["name"],
                "timeUnixNano": e["time_unix_nano"],
                "attributes": key_values(e["attributes"]),
            }
            for e in s.events
        ]
    if s.links:
        out["links"] = [
            {
                "traceId": link["trace_id"],
                "spanId": link["span_id"],
                "attributes": key_values(link["attributes"]),
            }
            for link in s.links
        ]
    return out


def encode_traces_json(spans: Sequence[Span]) -> bytes:
    """``spans`` as one OTLP/JSON ``ExportTraceServiceRequest`` (UTF-8 bytes).

    A span's ``resource`` dict is its resource (spans sharing one dict share the entry);
    ``service_name`` is not written apart: decoding reads it from the resource, as it was read
    when the span was decoded.
    """
    resource_spans: list[dict[str, Any]] = []
    resource: dict[str, Any] | None = None
    scope: str | None = None
    current: list[dict[str, Any]] = []
    for s in spans:
        if s.resource is not resource:
            resource, scope = s.resource, None
            entry = {"resource": {"attributes": key_values(resource)}, "scopeSpans": []}
            resource_spans.append(entry)
        if s.scope_name != scope:
            scope = s.scope_name
            current = []
            entry["scopeSpans"].append({"scope": {"name": scope}, "spans": current})
        current.append(_span(s))
    return orjson.dumps({"resourceSpans": resource_spans})


def _log(r: LogRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "timeUnixNano": r.time_ns,
        "attributes": key_values(r.attributes),
        "body": any_value(r.body),
    }
    if r.trace_id:
        out["traceId"] = r.trace_id
    if r.span_id:
        out["spanId"] = r.span_id
    if r.event_name:
        out["eventName"] = r.event_name
    if r.severity_text:
        out["severityText"] = r.severity_text
    return out


def encode_logs_json(logs: Sequence[LogRecord]) -> bytes:
    """``logs`` as one OTLP/JSON ``ExportLogsServiceRequest`` (UTF-8 bytes): consecutive records
    of one service and scope share an entry, whose resource is that ``service.name``."""
    resource_logs: list[dict[str, Any]] = []
    key: tuple[str, str] | None = None
    current: list[dict[str, Any]] = []
    for r in logs:
        if (r.service_name, r.scope_name) != key:
            key = (r.service_name, r.scope_name)
            current = []
            resource = {"service.name": r.service_name} if r.service_name else {}
            resource_logs.append(
                {
                    "resource": {"attributes": key_values(resource)},
                    "scopeLogs": [{"scope": {"name": r.scope_name}, "logRecords": current}],
                }
            )
        current.append(_log(r))
    return orjson.dumps({"resourceLogs": resource_logs})
