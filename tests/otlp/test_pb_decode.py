"""Protobuf decoding: value mapping, rejected spans and log records, undecodable payloads."""

from __future__ import annotations

import pytest
from google.protobuf.message import DecodeError as PbDecodeError
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from otlp_helpers import FIXTURES

from tracereplay.errors import DecodeError
from tracereplay.otlp import decode_logs_pb, decode_traces_pb
from tracereplay.otlp.text import valid_text

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


# ------------------------------------------------------------- text that is not UTF-8
def _as_protobufjs_writes(text: str) -> bytes:
    """``text`` as protobuf.js (OpenTelemetry JS's protobuf exporters) writes a string: UTF-8,
    but half of a surrogate pair on its own as its three bytes (not UTF-8)."""
    return text.encode("utf-8", "surrogatepass")


def _with_text(placeholders: dict[bytes, bytes]) -> bytes:
    """A request whose span name, attribute key and values, event name and resource attribute
    are placeholders, replaced in the wire bytes (lengths kept) by ``placeholders``."""
    req = _request({"name": "N" * 4})
    rs = req.resource_spans[0]
    rs.resource.attributes.add(key="host", value=AnyValue(string_value="H" * 4))
    span = rs.scope_spans[0].spans[0]
    span.attributes.add(key="K" * 4, value=AnyValue(string_value="V" * 8))
    arr = AnyValue()
    arr.array_value.values.add(string_value="A" * 2)
    span.attributes.add(key="arr", value=arr)
    span.events.add(name="E" * 4, time_unix_nano=5)
    data = req.SerializeToString()
    for placeholder, raw in placeholders.items():
        assert len(placeholder) == len(raw) and data.count(placeholder) == 1
        data = data.replace(placeholder, raw)
    return data


def test_text_that_is_not_utf8_is_read_with_replacement_characters() -> None:
    """The protobuf parser refuses a whole request for one such string; read with U+FFFD,
    every span is kept, and a surrogate pair written as two halves (CESU-8) is joined."""
    data = _with_text(
        {
            b"NNNN": b"a" + _as_protobufjs_writes("\ud83d"),  # a lone half
            b"HHHH": b"h\xff\xfeh",  # bytes that are UTF-8 of nothing
            b"KKKK": b"k" + _as_protobufjs_writes("\udfff"),
            b"VVVVVVVV": b"xy" + _as_protobufjs_writes("\ud83d\ude00"),  # CESU-8 of an emoji
            b"AA": b"\xc3!",
            b"EEEE": b"e\xed\xa0\x80",
        }
    )
    # the parser alone (its pure-Python form raises UnicodeDecodeError)
    with pytest.raises((PbDecodeError, UnicodeDecodeError), match="(?i)utf-8"):
        ExportTraceServiceRequest.FromString(data)
    [span] = decode_traces_pb(data).spans
    assert (span.trace_id, span.span_id) == (TID.hex(), SID.hex())  # bytes fields untouched
    assert span.name == "a\ufffd" and span.events[0]["name"] == "e\ufffd"
    assert span.attributes == {"k\ufffd": "xy\U0001f600", "arr": ["\ufffd!"]}
    assert span.resource["host"] == "h\ufffd\ufffdh" and span.service_name == "svc"


def test_a_log_body_that_is_not_utf8_is_read_too() -> None:
    req = ExportLogsServiceRequest()
    record = req.resource_logs.add().scope_logs.add().log_records.add()
    record.time_unix_nano = 1
    record.trace_id, record.span_id = TID, SID
    record.body.string_value = "BBBB"
    data = req.SerializeToString().replace(b"BBBB", b"ok" + _as_protobufjs_writes("\udbff")[:2])
    [log] = decode_logs_pb(data).logs
    assert log.body == "ok\ufffd\ufffd"


@given(st.text(st.characters(blacklist_categories=("Cs",)) | st.sampled_from("\ud800\udbff")))
def test_any_string_protobufjs_writes_is_read_with_its_lone_halves_replaced(text: str) -> None:
    """Only high halves here, so no two of them make a pair: each is a lone one."""
    raw = b"pre:" + _as_protobufjs_writes(text)
    # a byte no tag can be (wire types 6 and 7 do not exist), unlike the name's length before it
    fill = next(b for b in (0x1E, 0x1F) if b not in (len(raw) & 0x7F, len(raw) >> 7))
    placeholder = bytes([fill]) * len(raw)
    data = _request({"name": placeholder.decode()}).SerializeToString()
    [decoded] = decode_traces_pb(data.replace(placeholder, raw)).spans
    assert decoded.name == "pre:" + valid_text(text)


def test_a_message_that_is_not_protobuf_is_still_refused() -> None:
    with pytest.raises(DecodeError, match="invalid protobuf"):
        decode_traces_pb(b"\x0a\xff\xff\xff\xff\x0f" + bytes(10))
