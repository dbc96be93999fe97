"""Protobuf decoding: value mapping, rejected spans and log records, undecodable payloads."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from otlp_helpers import FIXTURES

from tracereplay.errors import DecodeError
from tracereplay.otlp import decode_logs_pb, decode_traces_pb

TID = bytes(range(1, 17))
SID = bytes(range(1, 9))


def _request(*spans: dict) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.add(key="service.name", value=AnyValue(string_value="svc"))
    ss = rs.scope_spans.add()
    ss.scope.name = "lib"
    for fields in spans:
        ss.spans.add(**{"trace_id": TID, "span_id": SID, "name": "s", **fields})
    return req


def test_span_fields() -> None:
    req = _request({"parent_span_id": bytes(8), "kind": 3, "start_time_unix_nano": 2**63 - 1})
    span_pb = req.resource_spans[0].scope_spans[0].spans[0]
    span_pb.status.code = 2
    span_pb.status.message = "boom"
    arr = AnyValue()
    arr.array_value.values.extend([AnyValue(int_value=-1), AnyValue(double_value=0.5)])
    kvl = AnyValue()
    kvl.kvlist_value.values.add(key="inner", value=arr)
    span_pb.attributes.extend(
        [
            KeyValue(key="s", value=AnyValue(string_value="x")),
            KeyValue(key="e", value=AnyValue(string_value="")),
            KeyValue(key="i0", value=AnyValue(int_value=0)),
            KeyValue(key="b", value=AnyValue(bool_value=True)),
            KeyValue(key="bytes", value=AnyValue(bytes_value=b"\x00\xff")),
            KeyValue(key="arr", value=arr),
            KeyValue(key="kv", value=kvl),
            KeyValue(key="none", value=AnyValue()),
            KeyValue(key="s", value=AnyValue(string_value="last wins")),
        ]
    )
    event = span_pb.events.add(name="exception", time_unix_nano=7)
    event.attributes.add(key="exception.type", value=AnyValue(string_value="E"))
    span_pb.links.add(trace_id=TID, span_id=SID)
    (span,) = decode_traces_pb(req.SerializeToString()).spans
    assert (span.trace_id, span.span_id, span.parent_span_id) == (TID.hex(), SID.hex(), "")
    assert (span.kind, span.start_ns, span.status_code, span.status_message) == (
        3,
        2**63 - 1,
        2,
        "boom",
    )
    assert span.attributes == {
        "s": "last wins",
        "e": "",
        "i0": 0,
        "b": True,
        "bytes": "AP8=",
        "arr": [-1, 0.5],
        "kv": {"inner": [-1, 0.5]},
        "none": None,
    }
    assert span.events == [
        {"name": "exception", "time_unix_nano": 7, "attributes": {"exception.type": "E"}}
    ]
    assert span.links == [{"trace_id": TID.hex(), "span_id": SID.hex(), "attributes": {}}]
    assert (span.service_name, span.scope_name) == ("svc", "lib")


def test_invalid_spans_are_counted_with_one_reason_per_kind() -> None:
    req = _request(
        {},
        {"trace_id": b"\x01" * 15},
        {"trace_id": b"\x02" * 17},
        {"trace_id": bytes(16)},
        {"span_id": b""},
        {"span_id": bytes(8)},
        {"parent_span_id": b"\x01\x02"},
    )
    d = decode_traces_pb(req.SerializeToString())
    assert len(d.spans) == 1
    assert d.rejected_spans == 6
    assert d.errors == [
        "traceId must be 16 bytes",
        "traceId must not be all zeros",
        "spanId must be 8 bytes",
        "spanId must not be all zeros",
        "parentSpanId must be 8 bytes or empty",
    ]


@pytest.mark.parametrize(
    "payload",
    [
        b"\x0a\xff\xff\xff\xff\x0f",  # a length far past the end
        b"\xff\xff\xff",  # an invalid tag
        (FIXTURES / "generated-openinference__agent_tool_calls.pb").read_bytes()[:-7],
    ],
)
def test_undecodable_payloads_raise(payload: bytes) -> None:
    with pytest.raises(DecodeError, match=r"^invalid protobuf ExportTraceServiceRequest"):
        decode_traces_pb(payload)
    with pytest.raises(DecodeError, match=r"^invalid protobuf ExportLogsServiceRequest"):
        decode_logs_pb(payload)


def test_empty_body_is_an_empty_request() -> None:
    assert decode_traces_pb(b"").spans == []
    assert decode_logs_pb(b"").logs == []


def test_logs_fields_and_rejections() -> None:
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.add(key="service.name", value=AnyValue(string_value="svc"))
    sl = rl.scope_logs.add()
    sl.scope.name = "lib"
    body = AnyValue()
    body.kvlist_value.values.add(key="content", value=AnyValue(string_value="hi"))
    sl.log_records.add(
        event_name="gen_ai.user.message", time_unix_nano=5, trace_id=TID, span_id=SID, body=body
    )
    old = sl.log_records.add(observed_time_unix_nano=9, severity_text="INFO")
    old.attributes.add(key="event.name", value=AnyValue(string_value="gen_ai.choice"))
    sl.log_records.add(trace_id=b"\x01\x02")
    sl.log_records.add(span_id=b"\x01")
    d = decode_logs_pb(req.SerializeToString())
    first, second = d.logs
    assert (first.event_name, first.time_ns, first.body) == (
        "gen_ai.user.message",
        5,
        {"content": "hi"},
    )
    assert (first.trace_id, first.span_id) == (TID.hex(), SID.hex())
    assert (second.event_name, second.time_ns, second.body, second.severity_text) == (
        "gen_ai.choice",
        9,
        None,
        "INFO",
    )
    assert (second.trace_id, second.span_id) == ("", "")
    assert {r.service_name for r in d.logs} == {"svc"}
    assert d.rejected_logs == 2
    assert d.errors == [
        "log record traceId must be 16 bytes or empty",
        "log record spanId must be 8 bytes or empty",
    ]
