"""OTLP/JSON traces and logs requests → spans and logs, by walking the parsed dicts directly.

Not ``json_format.ParseDict``: OTLP/JSON deviates from the protobuf JSON mapping (ids are hex,
which ParseDict would silently read as base64). Accepted, per the OTLP spec and real exporters:
lowerCamelCase or snake_case keys, hex ids in any case, enums as integers or names
(``SPAN_KIND_CLIENT``, ``STATUS_CODE_ERROR``), 64-bit integers as decimal strings or numbers,
omitted defaults; unknown fields are ignored.
"""

from __future__ import annotations

import binascii
from base64 import b64decode, b64encode
from typing import Any

import orjson

from tracereplay.errors import DecodeError
from tracereplay.otlp import text as json_text
from tracereplay.otlp.ids import (
    MAX_TIME_NS,
    TIME_PROBLEM,
    ZERO_SPAN_ID,
    ZERO_TRACE_ID,
    log_ids_problem,
    span_ids_problem,
)
from tracereplay.otlp.limits import apply_limits
from tracereplay.otlp.model import Decoded, Limits, service_name_of
from tracereplay.spans import KIND_BY_NAME, STATUS_BY_NAME, LogRecord, Span


class _BadJson(Exception):
    """A structural problem in an OTLP/JSON request (becomes a DecodeError)."""


class _BadId(Exception):
    """An id that is not a hex string: rejects the span or log record, not the request."""


class _BadTime(Exception):
    """A time the store cannot keep (negative, or past ``MAX_TIME_NS``): rejects the span or
    log record, not the request."""


#: the range of an OTLP integer (int64 attributes, uint64/fixed64 times)
_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


_STRING, _BOOL, _INT, _DOUBLE, _ARRAY, _KVLIST, _BYTES = range(7)
_ANY_KEYS = {
    "stringValue": _STRING,
    "string_value": _STRING,
    "boolValue": _BOOL,
    "bool_value": _BOOL,
    "intValue": _INT,
    "int_value": _INT,
    "doubleValue": _DOUBLE,
    "double_value": _DOUBLE,
    "arrayValue": _ARRAY,
    "array_value": _ARRAY,
    "kvlistValue": _KVLIST,
    "kvlist_value": _KVLIST,
    "bytesValue": _BYTES,
    "bytes_value": _BYTES,
}


def _int(value: Any, what: str) -> int:
    """An int64/uint64/fixed64 field: decimal string or JSON number."""
    number = _integer(value, what)
    if not _INT_MIN <= number <= _INT_MAX:
        raise _BadJson(f"{what} is out of the 64-bit range: {value!r:.40}")
    return number


def _integer(value: Any, what: str) -> int:
    """A decimal string or JSON number as an int (of any size: the caller checks the range)."""
    if value.__class__ is int:
        return value  # type: ignore[no-any-return]
    if value is None:
        return 0
    if isinstance(value, str) and len(value) <= 40:
        try:
            return int(value)
        except ValueError:
            pass
    elif isinstance(value, float) and value.is_integer():
        return int(value)
    raise _BadJson(f"{what} must be an integer, got {value!r:.40}")


def _enum(value: Any, names: dict[str, int], prefix: str, what: str) -> int:
    """An enum: integer, or its name with or without the ``SPAN_KIND_``-style prefix."""
    if value is None:
        return 0
    if value.__class__ is int:
        return value
    if isinstance(value, str):
        name = value.upper().removeprefix(prefix)
        if name in names:
            return names[name]
        if value.lstrip("-").isdigit():
            return int(value)
    raise _BadJson(f"{what}: unknown enum value {value!r:.40}")


def _bytes_value(value: Any) -> str:
    """``bytesValue`` (base64, standard or URL-safe, padded or not) as canonical base64."""
    if not isinstance(value, str):
        raise _BadJson("bytesValue must be a base64 string")
    try:
        raw = b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        standard = value.rstrip("=").replace("-", "+").replace("_", "/")
        try:
            raw = b64decode(standard + "=" * (-len(standard) % 4), validate=True)
        except (binascii.Error, ValueError):
            raise _BadJson(f"bytesValue is not base64: {value!r:.40}") from None
    return b64encode(raw).decode("ascii")


def _other_value(value: Any) -> Any:
    """An AnyValue object that is not ``{"stringValue": <str>}``, as a Python value."""
    if not value:
        return None
    if not isinstance(value, dict):
        raise _BadJson(f"an AnyValue must be an object, got {value!r:.40}")
    for key, x in value.items():
        kind = _ANY_KEYS.get(key)
        if kind is None:
            continue  # unknown field
        if kind == _STRING:
            if not isinstance(x, str):
                raise _BadJson(f"stringValue must be a string, got {x!r:.40}")
            return x
        if kind == _INT:
            return _int(x, "intValue")
        if kind == _BOOL:
            if not isinstance(x, bool):
                raise _BadJson(f"boolValue must be true or false, got {x!r:.40}")
            return x
        if kind == _DOUBLE:
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                return float(x)
            if isinstance(x, str):  # "NaN", "Infinity", "-Infinity" (protobuf JSON) or a number
                try:
                    return float(x)
                except ValueError:
                    pass
            raise _BadJson(f"doubleValue must be a number, got {x!r:.40}")
        if kind == _ARRAY:
            return [any_value(v) for v in _list(_field(x, "values"), "arrayValue.values")]
        if kind == _KVLIST:
            return key_values(_field(x, "values"))
        return _bytes_value(x)
    return None


def any_value(value: Any) -> Any:
    """An OTLP/JSON ``AnyValue`` object as a Python value (same result as the protobuf decoder)."""
    if value.__class__ is dict:
        s = value.get("stringValue")
        if s.__class__ is str:
            return s
    return _other_value(value)


def _list(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if value.__class__ is not list:
        raise _BadJson(f"{what} must be a list")
    return value


def _field(obj: Any, camel: str, snake: str | None = None) -> Any:
    """``obj[camel]``, else ``obj[snake]`` (protobuf JSON accepts both), else None."""
    if obj is None:
        return None
    if obj.__class__ is not dict:
        raise _BadJson(f"expected an object around {camel!r}, got {obj!r:.40}")
    value = obj.get(camel)
    if value is None and snake is not None:
        value = obj.get(snake)
    return value


def key_values(kvs: Any) -> dict[str, Any]:
    """A JSON list of ``{"key", "value"}`` → dict (a repeated key keeps its last value)."""
    out: dict[str, Any] = {}
    if not kvs:
        return out
    if kvs.__class__ is not list:
        raise _BadJson("attributes must be a list of {key, value}")
    other_value = _other_value
    for kv in kvs:
        v = kv.get("value")
        if v:
            x = v.get("stringValue")
            if x.__class__ is not str:
                x = other_value(v)
        else:
            x = None
        key = kv.get("key") or ""
        if key.__class__ is not str:
            raise _BadJson(f"an attribute key must be a string, got {key!r:.40}")
        out[key] = x
    return out


_ZERO_TRACE_HEX = ZERO_TRACE_ID.hex()
_ZERO_SPAN_HEX = ZERO_SPAN_ID.hex()


def _hex_id(value: Any, cache: dict[str, str]) -> str:
    """A hex id (any case) → lowercase hex; ``""`` when absent; _BadId when not hex."""
    if not value:
        return ""
    h = cache.get(value)
    if h is None:
        if value.__class__ is not str:
            raise _BadId
        try:
            h = bytes.fromhex(value).hex()
        except ValueError:
            raise _BadId from None
        cache[value] = h
    return h


def _time(obj: dict[str, Any], camel: str, snake: str) -> int:
    """A fixed64 time field (decimal string or number); 0 when absent; _BadTime when the store
    cannot keep it."""
    x = obj.get(camel)
    if x is None:
        x = obj.get(snake)
        if x is None:
            return 0
    t = _integer(x, camel)
    if not 0 <= t <= MAX_TIME_NS:
        raise _BadTime
    return t


def _events(events: Any) -> list[dict[str, Any]]:
    return [
        {
            "name": _field(e, "name") or "",
            "time_unix_nano": _time(e, "timeUnixNano", "time_unix_nano"),
            "attributes": key_values(e.get("attributes")),
        }
        for e in _list(events, "events")
    ]


def _links(links: Any, ids: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "trace_id": _hex_id(_field(link, "traceId", "trace_id"), ids),
            "span_id": _hex_id(_field(link, "spanId", "span_id"), ids),
            "attributes": key_values(link.get("attributes")),
        }
        for link in _list(links, "links")
    ]


def _traces_from_dict(req: dict[str, Any], out: Decoded) -> None:
    ids: dict[str, str] = {}
    append = out.spans.append
    hex_id = _hex_id
    for rs in _list(_field(req, "resourceSpans", "resource_spans"), "resourceSpans"):
        resource = key_values(_field(_field(rs, "resource"), "attributes"))
        service = service_name_of(resource)
        for ss in _list(_field(rs, "scopeSpans", "scope_spans"), "scopeSpans"):
            scope = _field(_field(ss, "scope"), "name") or ""
            for s in _list(ss.get("spans"), "spans"):
                try:
                    tid = hex_id(s.get("traceId") or s.get("trace_id"), ids)
                    sid = hex_id(s.get("spanId") or s.get("span_id"), ids)
                    pid = hex_id(s.get("parentSpanId") or s.get("parent_span_id"), ids)
                    links = s.get("links")
                    link_list = _links(links, ids) if links else []
                except _BadId:
                    out.reject_span("span and link ids must be hex strings")
                    continue
                if (
                    len(tid) != 32
                    or len(sid) != 16
                    or tid == _ZERO_TRACE_HEX
                    or sid == _ZERO_SPAN_HEX
                    or (pid and len(pid) != 16)
                ):
                    problem = span_ids_problem(
                        bytes.fromhex(tid), bytes.fromhex(sid), bytes.fromhex(pid)
                    )
                    out.reject_span(problem or "invalid span")
                    continue
                try:
                    start = _time(s, "startTimeUnixNano", "start_time_unix_nano")
                    end = _time(s, "endTimeUnixNano", "end_time_unix_nano")
                    events = s.get("events")
                    event_list = _events(events) if events else []
                except _BadTime:
                    out.reject_span(TIME_PROBLEM)
                    continue
                attributes = key_values(s.get("attributes"))
                kind = s.get("kind", 0)
                if kind.__class__ is not int:
                    kind = _enum(kind, KIND_BY_NAME, "SPAN_KIND_", "kind")
                status = s.get("status")
                if status:
                    code = status.get("code", 0)
                    if code.__class__ is not int:
                        code = _enum(code, STATUS_BY_NAME, "STATUS_CODE_", "status.code")
                    message = status.get("message") or ""
                else:
                    code, message = 0, ""
                name = s.get("name") or ""
                if name.__class__ is not str or message.__class__ is not str:
                    raise _BadJson("span name and status message must be strings")
                append(
                    Span(
                        tid,
                        sid,
                        "" if pid == _ZERO_SPAN_HEX else pid,
                        name,
                        kind,
                        start,
                        end,
                        code,
                        message,
                        attributes,
                        event_list,
                        link_list,
                        service,
                        scope,
                        resource,
                    )
                )


def _decode_log(
    r: Any, service: str, scope: str, ids: dict[str, str], out: Decoded
) -> LogRecord | None:
    try:
        tid = _hex_id(r.get("traceId") or r.get("trace_id"), ids)
        sid = _hex_id(r.get("spanId") or r.get("span_id"), ids)
    except _BadId:
        out.reject_log("log record ids must be hex strings")
        return None
    problem = log_ids_problem(bytes.fromhex(tid), bytes.fromhex(sid))
    if problem:
        out.reject_log(problem)
        return None
    try:
        time_ns = _time(r, "timeUnixNano", "time_unix_nano") or _time(
            r, "observedTimeUnixNano", "observed_time_unix_nano"
        )
    except _BadTime:
        out.reject_log(TIME_PROBLEM)
        return None
    attributes = key_values(r.get("attributes"))
    event_name = r.get("eventName") or r.get("event_name") or attributes.get("event.name") or ""
    severity = r.get("severityText") or r.get("severity_text") or ""
    if severity.__class__ is not str:
        raise _BadJson("severityText must be a string")
    return LogRecord(
        trace_id="" if tid == _ZERO_TRACE_HEX else tid,
        span_id="" if sid == _ZERO_SPAN_HEX else sid,
        time_ns=time_ns,
        event_name=event_name if isinstance(event_name, str) else str(event_name),
        body=any_value(r.get("body")),
        attributes=attributes,
        severity_text=severity,
        service_name=service,
        scope_name=scope,
    )


def _logs_from_dict(req: dict[str, Any], out: Decoded) -> None:
    ids: dict[str, str] = {}
    append = out.logs.append
    for rl in _list(_field(req, "resourceLogs", "resource_logs"), "resourceLogs"):
        service = service_name_of(key_values(_field(_field(rl, "resource"), "attributes")))
        for sl in _list(_field(rl, "scopeLogs", "scope_logs"), "scopeLogs"):
            scope = _field(_field(sl, "scope"), "name") or ""
            for r in _list(_field(sl, "logRecords", "log_records"), "logRecords"):
                record = _decode_log(r, service, scope, ids, out)
                if record is not None:
                    append(record)


def load_json(data: bytes | str | dict[str, Any]) -> dict[str, Any]:
    """Parse a JSON request body (empty = ``{}``); DecodeError if not a JSON object."""
    if isinstance(data, dict):
        return data
    if not data or not data.strip():
        return {}
    try:
        obj = json_text.loads(data)
    except orjson.JSONDecodeError as err:
        raise DecodeError(f"invalid JSON ({err})") from None
    if not isinstance(obj, dict):
        raise DecodeError(f"an OTLP/JSON request must be an object, not {type(obj).__name__}")
    return obj


def traces_from_dict(req: dict[str, Any], out: Decoded) -> None:
    """Append the spans of a parsed OTLP/JSON traces request to ``out``; DecodeError if malformed."""
    try:
        _traces_from_dict(req, out)
    except (_BadJson, AttributeError, TypeError, ValueError) as err:
        raise DecodeError(f"invalid OTLP/JSON traces request ({_reason(err)})") from None


def logs_from_dict(req: dict[str, Any], out: Decoded) -> None:
    """Append the log records of a parsed OTLP/JSON logs request to ``out``; DecodeError if malformed."""
    try:
        _logs_from_dict(req, out)
    except (_BadJson, AttributeError, TypeError, ValueError) as err:
        raise DecodeError(f"invalid OTLP/JSON logs request ({_reason(err)})") from None


def _reason(err: Exception) -> str:
    if isinstance(err, (_BadJson, ValueError)):
        return str(err)
    return "a field has the wrong JSON type"


def decode_traces_json(data: bytes | str | dict[str, Any], limits: Limits | None = None) -> Decoded:
    """Decode an OTLP/JSON ``ExportTraceServiceRequest`` (bytes, text, or an already parsed dict)."""
    out = Decoded()
    traces_from_dict(load_json(data), out)
    return apply_limits(out, limits)


def decode_logs_json(data: bytes | str | dict[str, Any], limits: Limits | None = None) -> Decoded:
    """Decode an OTLP/JSON ``ExportLogsServiceRequest`` (bytes, text, or an already parsed dict)."""
    out = Decoded()
    logs_from_dict(load_json(data), out)
    return apply_limits(out, limits)
