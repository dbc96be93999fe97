"""OTLP protobuf (``ExportTraceServiceRequest`` / ``ExportLogsServiceRequest``) → spans and logs.

Parsing is done by opentelemetry-proto's generated classes (upb, in C); the walk into ``Span`` /
``LogRecord`` is the hot path of ingest, so it avoids per-attribute overhead where it can: a
non-empty ``string_value`` (most attributes) is taken without asking which oneof member is set.
"""

from __future__ import annotations

from base64 import b64encode
from collections.abc import Iterable
from typing import Any

from google.protobuf.message import DecodeError as PbDecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from tracereplay.errors import DecodeError
from tracereplay.otlp import pb_text
from tracereplay.otlp.ids import (
    MAX_TIME_NS,
    TIME_PROBLEM,
    ZERO_SPAN_ID,
    ZERO_TRACE_ID,
    log_ids_problem,
    optional_hex,
    span_ids_problem,
)
from tracereplay.otlp.limits import apply_limits
from tracereplay.otlp.model import Decoded, Limits, service_name_of
from tracereplay.spans import LogRecord, Span


def _other_value(value: AnyValue) -> Any:
    """An AnyValue that is not a non-empty string, as a Python value."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "int_value":
        return value.int_value
    if which == "bool_value":
        return value.bool_value
    if which == "double_value":
        return value.double_value
    if which == "string_value":
        return value.string_value
    if which == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return key_values(value.kvlist_value.values)
    if which == "bytes_value":
        return b64encode(value.bytes_value).decode("ascii")
    return None  # a oneof member newer than this decoder


def any_value(value: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as a Python value (arrays → list, kvlists → dict, bytes → base64)."""
    s = value.string_value
    return s if s else _other_value(value)


def key_values(kvs: Iterable[KeyValue]) -> dict[str, Any]:
    """Repeated ``KeyValue`` → dict (a repeated key keeps its last value)."""
    out: dict[str, Any] = {}
    for kv in kvs:
        v = kv.value
        s = v.string_value
        out[kv.key] = s if s else _other_value(v)
    return out


def parse_traces_request(data: bytes) -> ExportTraceServiceRequest:
    """Parse a binary ``ExportTraceServiceRequest``; DecodeError if it is not one."""
    try:
        return pb_text.parse(ExportTraceServiceRequest, data)
    except PbDecodeError as err:
        raise DecodeError(f"invalid protobuf ExportTraceServiceRequest ({err})") from None


def parse_logs_request(data: bytes) -> ExportLogsServiceRequest:
    """Parse a binary ``ExportLogsServiceRequest``; DecodeError if it is not one."""
    try:
        return pb_text.parse(ExportLogsServiceRequest, data)
    except PbDecodeError as err:
        raise DecodeError(f"invalid protobuf ExportLogsServiceRequest ({err})") from None


def _events(events: Iterable[Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": e.name,
            "time_unix_nano": e.time_unix_nano,
            "attributes": key_values(e.attributes),
        }
        for e in events
    ]


def _links(links: Iterable[Any]) -> list[dict[str, Any]]:
    return [
        {
            "trace_id": link.trace_id.hex(),
            "span_id": link.span_id.hex(),
            "attributes": key_values(link.attributes),
        }
        for link in links
    ]


def _late_event(events: Iterable[Any]) -> bool:
    """Whether an event's time is past what the store can keep (``MAX_TIME_NS``)."""
    return any(e.time_unix_nano > MAX_TIME_NS for e in events)


def traces_from_request(req: ExportTraceServiceRequest, out: Decoded) -> None:
    """Append the spans of a parsed request to ``out`` (invalid ones counted as rejected)."""
    append = out.spans.append
    other_value = _other_value
    for rs in req.resource_spans:
        resource = key_values(rs.resource.attributes)
        service = service_name_of(resource)
        for ss in rs.scope_spans:
            scope = ss.scope.name
            for s in ss.spans:
                tid = s.trace_id
                sid = s.span_id
                pid = s.parent_span_id
                if (
                    len(tid) != 16
                    or len(sid) != 8
                    or tid == ZERO_TRACE_ID
                    or sid == ZERO_SPAN_ID
                    or (pid and len(pid) != 8)
                ):
                    out.reject_span(span_ids_problem(tid, sid, pid) or "invalid span")
                    continue
                start = s.start_time_unix_nano
                end = s.end_time_unix_nano
                events = s.events
                if start > MAX_TIME_NS or end > MAX_TIME_NS or (events and _late_event(events)):
                    out.reject_span(TIME_PROBLEM)
                    continue
                # the hot loop: key_values() inlined, with fast paths for strings and ints
                attributes: dict[str, Any] = {}
                for kv in s.attributes:
                    v = kv.value
                    x = v.string_value
                    if x:
                        attributes[kv.key] = x
                    else:
                        x = v.int_value
                        attributes[kv.key] = x if x else other_value(v)
                status = s.status
                links = s.links
                append(
                    Span(
                        tid.hex(),
                        sid.hex(),
                        pid.hex() if pid and pid != ZERO_SPAN_ID else "",
                        s.name,
                        s.kind,
                        start,
                        end,
                        status.code,
                        status.message,
                        attributes,
                        _events(events) if events else [],
                        _links(links) if links else [],
                        service,
                        scope,
                        resource,
                    )
                )


def logs_from_request(req: ExportLogsServiceRequest, out: Decoded) -> None:
    """Append the log records of a parsed request to ``out`` (invalid ones counted as rejected)."""
    append = out.logs.append
    for rl in req.resource_logs:
        service = service_name_of(key_values(rl.resource.attributes))
        for sl in rl.scope_logs:
            scope = sl.scope.name
            for r in sl.log_records:
                tid = r.trace_id
                sid = r.span_id
                problem = log_ids_problem(tid, sid)
                if problem:
                    out.reject_log(problem)
                    continue
                time_ns = r.time_unix_nano or r.observed_time_unix_nano
                if time_ns > MAX_TIME_NS:
                    out.reject_log(TIME_PROBLEM)
                    continue
                attributes = key_values(r.attributes)
                event_name = r.event_name or attributes.get("event.name") or ""
                append(
                    LogRecord(
                        trace_id=optional_hex(tid),
                        span_id=optional_hex(sid),
                        time_ns=time_ns,
                        event_name=event_name if isinstance(event_name, str) else str(event_name),
                        body=any_value(r.body) if r.HasField("body") else None,
                        attributes=attributes,
                        severity_text=r.severity_text,
                        service_name=service,
                        scope_name=scope,
                    )
                )


def decode_traces_pb(data: bytes, limits: Limits | None = None) -> Decoded:
    """Decode a binary OTLP ``ExportTraceServiceRequest`` (the body of ``POST /v1/traces``)."""
    out = Decoded()
    traces_from_request(parse_traces_request(data), out)
    return apply_limits(out, limits)


def decode_logs_pb(data: bytes, limits: Limits | None = None) -> Decoded:
    """Decode a binary OTLP ``ExportLogsServiceRequest`` (the body of ``POST /v1/logs``)."""
    out = Decoded()
    logs_from_request(parse_logs_request(data), out)
    return apply_limits(out, limits)
