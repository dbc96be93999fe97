"""The receiver's parts on their own: limits on the wire forms, body inflation, admission."""

from __future__ import annotations

import gzip
import io
import json
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from serve_helpers import to_otlp_json

from tracereplay.otlp import Limits as DecodeLimits
from tracereplay.otlp import (
    apply_limits,
    decode_logs_json,
    decode_logs_pb,
    decode_traces_json,
    decode_traces_pb,
)
from tracereplay.serve.admission import Admission
from tracereplay.serve.bodies import STEP, inflate, read_body
from tracereplay.serve.config import Limits
from tracereplay.serve.limiting import limit_json, limit_logs_pb, limit_traces_pb
from tracereplay.serve.rejections import Busy, InvalidData, TooLarge, Unavailable

# ---------------------------------------------------------------------------------- limits
scalar = st.one_of(st.text(max_size=40), st.integers(-(2**40), 2**40), st.booleans())
value = st.one_of(scalar, st.lists(st.text(max_size=40), max_size=4))
attributes = st.dictionaries(st.text(min_size=1, max_size=8), value, max_size=12)


def any_value(v: object) -> AnyValue:
    if isinstance(v, bool):
        return AnyValue(bool_value=v)
    if isinstance(v, int):
        return AnyValue(int_value=v)
    if isinstance(v, list):
        out = AnyValue()
        out.array_value.values.extend(AnyValue(string_value=s) for s in v)
        return out
    return AnyValue(string_value=str(v))


def kvs(attrs: dict[str, object]) -> list[KeyValue]:
    return [KeyValue(key=k, value=any_value(v)) for k, v in attrs.items()]


def traces_request(
    span_attrs: list[dict[str, object]], resource: dict[str, object]
) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend(kvs(resource))
    ss = rs.scope_spans.add()
    for i, attrs in enumerate(span_attrs):
        span = ss.spans.add(trace_id=bytes([1] * 16), span_id=(i + 1).to_bytes(8, "big"), name="s")
        span.attributes.extend(kvs(attrs))
        event = span.events.add(name="e")
        event.attributes.extend(kvs(attrs))
    return req


def logs_request(records: list[tuple[dict[str, object], object]]) -> ExportLogsServiceRequest:
    req = ExportLogsServiceRequest()
    sl = req.resource_logs.add().scope_logs.add()
    for attrs, body in records:
        record = sl.log_records.add(time_unix_nano=1)
        record.attributes.extend(kvs(attrs))
        record.body.CopyFrom(any_value(body))
    return req


def span_view(decoded) -> list:  # noqa: ANN001
    return [(s.attributes, [e["attributes"] for e in s.events], s.resource) for s in decoded.spans]


@settings(max_examples=60, deadline=None)
@given(
    spans=st.lists(attributes, min_size=1, max_size=3),
    resource=attributes,
    max_attributes=st.integers(1, 8),
    max_len=st.integers(1, 30),
)
def test_request_limits_match_the_decoder_limits(
    spans: list[dict[str, object]], resource: dict[str, object], max_attributes: int, max_len: int
) -> None:
    """Limiting the wire form, then decoding == decoding, then limiting the spans."""
    limits = Limits(max_attributes=max_attributes, max_value_length=max_len)
    decode_limits = DecodeLimits(max_attributes=max_attributes, max_value_length=max_len)
    req = traces_request(spans, resource)
    expected = span_view(apply_limits(decode_traces_pb(req.SerializeToString()), decode_limits))

    pb = ExportTraceServiceRequest.FromString(req.SerializeToString())
    limit_traces_pb(pb, limits, body_size=10**9)
    assert span_view(decode_traces_pb(pb.SerializeToString())) == expected

    obj = json.loads(to_otlp_json(req))
    limit_json(obj, limits, body_size=10**9)
    assert span_view(decode_traces_json(obj)) == expected


@settings(max_examples=40, deadline=None)
@given(
    records=st.lists(st.tuples(attributes, value), min_size=1, max_size=3),
    max_attributes=st.integers(1, 8),
    max_len=st.integers(1, 30),
)
def test_log_limits_match_the_decoder_limits(
    records: list[tuple[dict[str, object], object]], max_attributes: int, max_len: int
) -> None:
    limits = Limits(max_attributes=max_attributes, max_value_length=max_len)
    decode_limits = DecodeLimits(max_attributes=max_attributes, max_value_length=max_len)
    req = logs_request(records)
    expected = [
        (r.attributes, r.body)
        for r in apply_limits(decode_logs_pb(req.SerializeToString()), decode_limits).logs
    ]
    pb = ExportLogsServiceRequest.FromString(req.SerializeToString())
    limit_logs_pb(pb, limits, body_size=10**9)
    assert [(r.attributes, r.body) for r in decode_logs_pb(pb.SerializeToString()).logs] == expected
    obj = json.loads(to_otlp_json(req))
    limit_json(obj, limits, body_size=10**9)
    assert [(r.attributes, r.body) for r in decode_logs_json(obj).logs] == expected


def test_nothing_changes_within_the_limits() -> None:
    req = traces_request([{"a": "short", "b": 1}], {"service.name": "x"})
    assert not limit_traces_pb(req, Limits(max_attributes=4, max_value_length=10), body_size=10**9)
    obj = json.loads(to_otlp_json(req))
    assert not limit_json(obj, Limits(max_attributes=4, max_value_length=10), body_size=10**9)


# ---------------------------------------------------------------------------------- bodies
def test_inflate_round_trips_gzip_deflate_and_several_members() -> None:
    data = b"otlp" * 1000
    reserved: list[int] = []
    assert inflate(gzip.compress(data), "gzip", 10**6, reserved.append) == data
    assert sum(reserved) == len(data)
    assert inflate(zlib.compress(data), "deflate", 10**6, lambda n: None) == data
    two = gzip.compress(data[:100]) + gzip.compress(data[100:])
    assert inflate(two, "gzip", 10**6, lambda n: None) == data
    assert inflate(data, "", 10**6, lambda n: None) == data


def test_a_gzip_bomb_stops_at_the_limit() -> None:
    bomb = gzip.compress(bytes(200 * 1024 * 1024))  # 200 MiB of zeros, ~200 KB on the wire
    reserved: list[int] = []
    with pytest.raises(TooLarge, match="inflates past"):
        inflate(bomb, "gzip", 3 * 1024 * 1024, reserved.append)
    assert sum(reserved) <= 3 * 1024 * 1024  # never held more than the limit


def test_damaged_streams_are_invalid_data() -> None:
    with pytest.raises(InvalidData, match="cut short"):
        inflate(gzip.compress(b"x" * 5000)[:-10], "gzip", 10**6, lambda n: None)
    with pytest.raises(InvalidData, match="not valid gzip"):
        inflate(b"plain text", "gzip", 10**6, lambda n: None)
    with pytest.raises(TooLarge):
        inflate(b"x" * 11, "", 10, lambda n: None)


def test_read_body_chunked_and_sized() -> None:
    assert read_body(io.BytesIO(b"abcdef"), "3", None, 10) == b"abc"
    chunked = io.BytesIO(b"3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nTrailer: x\r\n\r\n")
    assert read_body(chunked, None, "chunked", 10) == b"abcde"
    with pytest.raises(TooLarge):
        read_body(io.BytesIO(b"5\r\nabcde\r\n0\r\n\r\n"), None, "chunked", 4)
    with pytest.raises(EOFError):
        read_body(io.BytesIO(b"ab"), "3", None, 10)
    assert STEP > 0


# ---------------------------------------------------------------------------------- admission
def test_admission_bounds_requests_and_bytes() -> None:
    backlog = [0]
    admission = Admission(
        Limits(max_inflight_requests=2, max_inflight_bytes=100, max_request_bytes=100),
        lambda: backlog[0],
    )
    first = admission.admit(60)
    with pytest.raises(Busy):
        admission.admit(50)  # 110 bytes would be in flight
    second = admission.admit(40)
    with pytest.raises(Busy):
        admission.admit(0)  # two requests already
    with pytest.raises(Busy):
        first.grow(50)  # an inflating body is charged too
    second.close()
    first.grow(50)  # alone now: it may grow past the budget
    first.close()
    with admission.admit(500) as alone:  # a request alone always fits
        alone.grow(500)
    backlog[0] = 10**12
    with pytest.raises(Unavailable):
        admission.admit(1)
    backlog[0] = 0
    admission.stop()
    with pytest.raises(Unavailable, match="shutting down"):
        admission.admit(1)
    assert admission.wait_idle(0.1)
    assert admission.in_flight == 0
