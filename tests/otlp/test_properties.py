"""Property tests: for random requests, the OTLP/JSON encoding decodes exactly like the protobuf.

Requests are random protos (ids of valid and invalid lengths, attributes of every AnyValue type
including nested arrays/kvlists, events, links); their OTLP/JSON is ``MessageToDict`` with hex ids.
"""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status
from otlp_helpers import int64_as_numbers, length_delimited, to_otlp_json

from tracereplay.otlp import (
    decode_file_content,
    decode_logs_json,
    decode_logs_pb,
    decode_traces_json,
    decode_traces_pb,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

keys = st.text(max_size=8)
int64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
uint64 = st.integers(min_value=0, max_value=2**64 - 1)
doubles = st.floats(allow_nan=False)

scalars = st.one_of(
    st.text(max_size=12).map(lambda v: AnyValue(string_value=v)),
    st.booleans().map(lambda v: AnyValue(bool_value=v)),
    int64.map(lambda v: AnyValue(int_value=v)),
    doubles.map(lambda v: AnyValue(double_value=v)),
    st.binary(max_size=8).map(lambda v: AnyValue(bytes_value=v)),
    st.just(AnyValue()),
)


def _array(values: list[AnyValue]) -> AnyValue:
    v = AnyValue()
    v.array_value.values.extend(values)
    return v


def _kvlist(items: list[tuple[str, AnyValue]]) -> AnyValue:
    v = AnyValue()
    v.kvlist_value.values.extend(KeyValue(key=k, value=x) for k, x in items)
    return v


any_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3).map(_array),
        st.lists(st.tuples(keys, children), max_size=3).map(_kvlist),
    ),
    max_leaves=6,
)
key_values = st.lists(
    st.one_of(
        st.tuples(keys, any_values).map(lambda kv: KeyValue(key=kv[0], value=kv[1])),
        keys.map(lambda k: KeyValue(key=k)),  # value not set
    ),
    max_size=5,
)


def _mostly(
    valid: st.SearchStrategy[bytes], invalid: st.SearchStrategy[bytes]
) -> st.SearchStrategy[bytes]:
    """``valid`` nine times in ten, so most spans are kept and some are rejected."""
    return st.integers(0, 9).flatmap(lambda n: invalid if n == 0 else valid)


trace_ids = _mostly(st.binary(min_size=16, max_size=16), st.binary(max_size=20))
span_ids = _mostly(st.binary(min_size=8, max_size=8), st.binary(max_size=10))
parent_ids = _mostly(
    st.one_of(st.just(b""), st.binary(min_size=8, max_size=8)), st.binary(max_size=10)
)


@st.composite
def spans(draw: st.DrawFn) -> Span:
    span = Span(
        trace_id=draw(trace_ids),
        span_id=draw(span_ids),
        parent_span_id=draw(parent_ids),
        name=draw(st.text(max_size=10)),
        kind=draw(st.integers(min_value=0, max_value=6)),
        start_time_unix_nano=draw(uint64),
        end_time_unix_nano=draw(uint64),
        attributes=draw(key_values),
        trace_state=draw(st.text(max_size=5)),
        flags=draw(st.integers(min_value=0, max_value=2**32 - 1)),
        dropped_attributes_count=draw(st.integers(min_value=0, max_value=5)),
    )
    if draw(st.booleans()):
        span.status.CopyFrom(
            Status(code=draw(st.integers(0, 2)), message=draw(st.text(max_size=10)))
        )
    for _ in range(draw(st.integers(0, 2))):
        span.events.add(
            name=draw(st.text(max_size=6)),
            time_unix_nano=draw(uint64),
            attributes=draw(key_values),
        )
    for _ in range(draw(st.integers(0, 2))):
        span.links.add(
            trace_id=draw(trace_ids), span_id=draw(span_ids), attributes=draw(key_values)
        )
    return span


@st.composite
def trace_requests(draw: st.DrawFn) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    for _ in range(draw(st.integers(0, 2))):
        rs = ResourceSpans()
        rs.resource.attributes.extend(draw(key_values))
        if draw(st.booleans()):
            rs.resource.attributes.add(key="service.name", value=draw(any_values))
        for _ in range(draw(st.integers(0, 2))):
            ss = ScopeSpans(spans=draw(st.lists(spans(), max_size=3)))
            ss.scope.name = draw(st.text(max_size=6))
            rs.scope_spans.append(ss)
        req.resource_spans.append(rs)
    return req


@st.composite
def logs_requests(draw: st.DrawFn) -> ExportLogsServiceRequest:
    req = ExportLogsServiceRequest()
    for _ in range(draw(st.integers(0, 2))):
        rl = ResourceLogs()
        rl.resource.attributes.extend(draw(key_values))
        sl = ScopeLogs()
        sl.scope.name = draw(st.text(max_size=6))
        for _ in range(draw(st.integers(0, 3))):
            record = LogRecord(
                time_unix_nano=draw(uint64),
                observed_time_unix_nano=draw(uint64),
                severity_number=draw(st.integers(0, 24)),
                severity_text=draw(st.text(max_size=5)),
                attributes=draw(key_values),
                trace_id=draw(st.one_of(st.just(b""), trace_ids)),
                span_id=draw(st.one_of(st.just(b""), span_ids)),
                event_name=draw(st.text(max_size=8)),
            )
            if draw(st.booleans()):
                record.body.CopyFrom(draw(any_values))
            sl.log_records.append(record)
        rl.scope_logs.append(sl)
        req.resource_logs.append(rl)
    return req


@SETTINGS
@given(trace_requests())
def test_traces_json_decodes_like_protobuf(req: ExportTraceServiceRequest) -> None:
    expected = decode_traces_pb(req.SerializeToString())
    as_json = to_otlp_json(req)
    assert decode_traces_json(orjson.dumps(as_json)) == expected
    assert decode_traces_json(int64_as_numbers(as_json)) == expected  # JS exporters
    assert decode_traces_json(to_otlp_json(req, snake_case=True)) == expected
    assert expected.rejected_spans + len(expected.spans) == sum(
        len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans
    )


@SETTINGS
@given(logs_requests())
def test_logs_json_decodes_like_protobuf(req: ExportLogsServiceRequest) -> None:
    expected = decode_logs_pb(req.SerializeToString())
    as_json = to_otlp_json(req)
    assert decode_logs_json(orjson.dumps(as_json)) == expected
    assert decode_logs_json(int64_as_numbers(as_json)) == expected


@settings(max_examples=30, deadline=None)
@given(st.lists(trace_requests(), min_size=1, max_size=3))
def test_files_of_random_requests(reqs: list[ExportTraceServiceRequest]) -> None:
    expected = [s for r in reqs for s in decode_traces_pb(r.SerializeToString()).spans]
    lines = b"\n".join(orjson.dumps(to_otlp_json(r)) for r in reqs)
    assert decode_file_content(lines).spans == expected
    framed = length_delimited(*(r.SerializeToString() for r in reqs))
    assert decode_file_content(framed).spans == expected
