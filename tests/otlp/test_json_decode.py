"""OTLP/JSON decoding: the spec's deviations from protobuf JSON, lenient forms, rejections."""

from __future__ import annotations

import base64
import json
from typing import Any

import orjson
import pytest

from tracereplay.errors import DecodeError
from tracereplay.otlp import decode_file_content, decode_logs_json, decode_traces_json

TID = "5B8EFFF798038103D269B633813FC60C"
SID = "EEE19B7EC3C1B174"


def _request(*spans: dict[str, Any], resource: list[Any] | None = None) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource or []},
                "scopeSpans": [{"scope": {"name": "lib"}, "spans": list(spans)}],
            }
        ]
    }


def _span(**fields: Any) -> dict[str, Any]:
    return {"traceId": TID, "spanId": SID, "name": "s", **fields}


def _attr(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def test_minimal_span_defaults() -> None:
    (span,) = decode_traces_json(_request(_span())).spans
    assert span.trace_id == TID.lower() and span.span_id == SID.lower()
    assert (span.parent_span_id, span.kind, span.status_code, span.status_message) == ("", 0, 0, "")
    assert (span.start_ns, span.end_ns, span.attributes, span.events, span.links) == (
        0,
        0,
        {},
        [],
        [],
    )
    assert (span.service_name, span.scope_name, span.resource) == ("", "lib", {})


def test_any_value_types() -> None:
    attrs = [
        _attr("s", {"stringValue": "x"}),
        _attr("empty", {"stringValue": ""}),
        _attr("b", {"boolValue": False}),
        _attr("i", {"intValue": "-9223372036854775808"}),
        _attr("n", {"intValue": 42}),
        _attr("d", {"doubleValue": 1.5}),
        _attr("d_int", {"doubleValue": 3}),
        _attr("inf", {"doubleValue": "-Infinity"}),
        _attr("arr", {"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "a"}, {}]}}),
        _attr("arr_empty", {"arrayValue": {}}),
        _attr("kv", {"kvlistValue": {"values": [_attr("x", {"boolValue": True}), {"key": "y"}]}}),
        _attr("bytes", {"bytesValue": base64.b64encode(b"\x00\xff").decode()}),
        _attr("bytes_urlsafe", {"bytesValue": "AP8"}),
        _attr("unset", {}),
        {"key": "no_value"},
        _attr("future", {"someNewValue": 1}),
    ]
    (span,) = decode_traces_json(_request(_span(attributes=attrs))).spans
    assert span.attributes == {
        "s": "x",
        "empty": "",
        "b": False,
        "i": -(2**63),
        "n": 42,
        "d": 1.5,
        "d_int": 3.0,
        "inf": float("-inf"),
        "arr": [1, "a", None],
        "arr_empty": [],
        "kv": {"x": True, "y": None},
        "bytes": "AP8=",
        "bytes_urlsafe": "AP8=",
        "unset": None,
        "no_value": None,
        "future": None,
    }
    assert isinstance(span.attributes["d_int"], float)


def test_snake_case_keys_enum_names_and_numbers() -> None:
    span = {
        "trace_id": TID.lower(),
        "span_id": SID,
        "parent_span_id": "0000000000000001",
        "name": "x",
        "kind": "SPAN_KIND_CLIENT",
        "start_time_unix_nano": 1544712660000000000,
        "end_time_unix_nano": "1544712661000000000",
        "status": {"code": "STATUS_CODE_ERROR", "message": "boom"},
        "attributes": [{"key": "a", "value": {"int_value": "7", "ignored": 1}}],
        "events": [{"time_unix_nano": "5", "name": "e", "attributes": []}],
        "links": [{"trace_id": TID, "span_id": SID, "attributes": []}],
        "unknownField": {"whatever": [1, 2]},
    }
    req = {"resource_spans": [{"scope_spans": [{"scope": {"name": "lib"}, "spans": [span]}]}]}
    (s,) = decode_traces_json(orjson.dumps(req)).spans
    assert (s.kind, s.status_code, s.status_message) == (3, 2, "boom")
    assert (s.start_ns, s.end_ns) == (1544712660000000000, 1544712661000000000)
    assert s.parent_span_id == "0000000000000001"
    assert s.attributes == {"a": 7}
    assert s.events == [{"name": "e", "time_unix_nano": 5, "attributes": {}}]
    assert s.links == [{"trace_id": TID.lower(), "span_id": SID.lower(), "attributes": {}}]


@pytest.mark.parametrize(
    ("kind", "expected"), [(2, 2), ("SPAN_KIND_SERVER", 2), ("server", 2), ("4", 4), (None, 0)]
)
def test_kind_forms(kind: Any, expected: int) -> None:
    (span,) = decode_traces_json(_request(_span(kind=kind))).spans
    assert span.kind == expected


def test_all_zero_parent_means_root() -> None:
    (span,) = decode_traces_json(_request(_span(parentSpanId="0" * 16))).spans
    assert span.parent_span_id == ""


def test_service_name_and_shared_resource() -> None:
    resource = [_attr("service.name", {"stringValue": "svc"}), _attr("k", {"intValue": "1"})]
    d = decode_traces_json(_request(_span(), _span(spanId="1" * 16), resource=resource))
    assert [s.service_name for s in d.spans] == ["svc", "svc"]
    assert d.spans[0].resource == {"service.name": "svc", "k": 1}


def test_invalid_spans_are_rejected_not_raised() -> None:
    d = decode_traces_json(
        _request(
            _span(),
            _span(traceId="abcd"),
            _span(traceId="0" * 32),
            _span(spanId="ab" * 9),
            _span(spanId=""),
            _span(parentSpanId="abc123"),
            _span(traceId="zz" * 16),
            _span(links=[{"traceId": "not hex", "spanId": SID}]),
            _span(traceId="ab" * 16),
        )
    )
    assert len(d.spans) == 2
    assert d.rejected_spans == 7
    assert d.errors == [
        "traceId must be 16 bytes",
        "traceId must not be all zeros",
        "spanId must be 8 bytes",
        "parentSpanId must be 8 bytes or empty",
        "span and link ids must be hex strings",
    ]


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        (b"{not json", r"^invalid JSON \("),
        (b"[]", r"must be an object"),
        (orjson.dumps({"resourceSpans": {"a": 1}}), r"resourceSpans must be a list"),
        (orjson.dumps(_request(_span(attributes=[{"key": 5, "value": {}}]))), r"key must be"),
        (orjson.dumps(_request(_span(attributes={"a": 1}))), r"attributes must be a list"),
        (orjson.dumps(_request(_span(startTimeUnixNano="soon"))), r"soon"),
        (orjson.dumps(_request(_span(kind="SPAN_KIND_NOPE"))), r"unknown enum value"),
        (orjson.dumps(_request(_span(attributes=[_attr("x", {"boolValue": "yes"})]))), r"bool"),
        (orjson.dumps(_request(_span(attributes=[_attr("x", {"bytesValue": "%%"})]))), r"base64"),
        (orjson.dumps(_request(_span(status=[1]))), r"wrong JSON type"),
        (orjson.dumps(_request("not a span")), r"wrong JSON type"),
    ],
)
def test_malformed_requests_raise_one_line_errors(payload: bytes, match: str) -> None:
    with pytest.raises(DecodeError, match=match) as info:
        decode_traces_json(payload)
    assert "\n" not in str(info.value)


def test_empty_body_is_an_empty_request() -> None:
    assert decode_traces_json(b"").spans == []
    assert decode_traces_json(b"{}").spans == []
    assert decode_logs_json(b"  ").logs == []


def test_logs_event_name_forms_and_ids() -> None:
    records = [
        {"eventName": "gen_ai.choice", "timeUnixNano": "5", "body": {"stringValue": "hi"}},
        {
            "observedTimeUnixNano": 9,
            "attributes": [_attr("event.name", {"stringValue": "gen_ai.user.message"})],
            "traceId": TID,
            "spanId": SID,
            "severityText": "INFO",
        },
        {"traceId": "00" * 16, "spanId": "00" * 8},
        {"traceId": "abcd"},
        {"spanId": "zz"},
    ]
    req = {
        "resourceLogs": [
            {
                "resource": {"attributes": [_attr("service.name", {"stringValue": "svc"})]},
                "scopeLogs": [{"scope": {"name": "lib"}, "logRecords": records}],
            }
        ]
    }
    d = decode_logs_json(req)
    assert [r.event_name for r in d.logs] == ["gen_ai.choice", "gen_ai.user.message", ""]
    assert [r.time_ns for r in d.logs] == [5, 9, 0]
    assert d.logs[0].body == "hi" and d.logs[0].trace_id == ""
    assert (d.logs[1].trace_id, d.logs[1].span_id) == (TID.lower(), SID.lower())
    assert d.logs[1].severity_text == "INFO" and d.logs[1].service_name == "svc"
    assert (d.logs[2].trace_id, d.logs[2].span_id) == ("", "")
    assert d.rejected_logs == 2
    assert d.errors == [
        "log record traceId must be 16 bytes or empty",
        "log record ids must be hex strings",
    ]


def test_a_lone_surrogate_escape_becomes_a_replacement_character() -> None:
    """As JavaScript's JSON.stringify writes half of a surrogate pair (a string cut inside an
    emoji): the span is kept, that half read as U+FFFD, in a request and in file lines."""
    request = _request(
        _span(name="cut \ud83d", attributes=[_attr("k\udc00", {"stringValue": "sunny \ud83d"})])
    )
    body = json.dumps(request).encode()  # escapes each lone surrogate, as JSON.stringify does
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(body)
    for decoded in (decode_traces_json(body), decode_file_content(body + b"\n" + body)):
        span = decoded.spans[0]
        assert span.name == "cut \ufffd" and span.attributes == {"k\ufffd": "sunny \ufffd"}
