"""Property tests against a real ``serve``: any request (garbage, odd OTLP/JSON, protobuf with
any ids, times and values; over OTLP/HTTP and OTLP/gRPC) is either stored or answered 4xx, never
5xx, and the store stays queryable after each."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, Span
from serve_helpers import ServeProcess, get, post

from tracereplay.store import Store

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
PB, JSON = "application/x-protobuf", "application/json"
FOUR_XX = {400, 413, 415}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    db = tmp_path_factory.mktemp("fuzz") / "fuzz.duckdb"
    proc = ServeProcess(db, "--drain-interval", "0.05", "--max-value-length", "64").start()
    yield proc
    assert proc.stop() == 0
    with Store.open(db) as store:
        store.query_dicts("SELECT * FROM runs")


def _settled(server: ServeProcess) -> None:
    """The drainer has taken everything in and reports no error; the store answers queries."""
    deadline = time.monotonic() + 60
    while True:
        health = get(server, "/healthz").json()
        if health["backlog_bytes"] == 0 and health["in_flight"] == 0:
            break
        assert time.monotonic() < deadline, health
        time.sleep(0.05)
    assert health["drain_error"] is None, health["drain_error"]
    with Store.open(server.db, timeout=60) as store:
        store.con.execute("SELECT count(*), max(start_time), max(end_time) FROM spans").fetchall()


small_ints = st.one_of(
    st.integers(0, 2**64 - 1), st.sampled_from([0, 1, 2**63 - 1, 2**63, 2**64 - 1])
)
ids = st.one_of(st.binary(min_size=16, max_size=16), st.binary(max_size=17))
short_ids = st.one_of(st.binary(min_size=8, max_size=8), st.binary(max_size=9))
any_values = st.one_of(
    st.text(max_size=80).map(lambda v: AnyValue(string_value=v)),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: AnyValue(int_value=v)),
    st.floats().map(lambda v: AnyValue(double_value=v)),
    st.binary(max_size=8).map(lambda v: AnyValue(bytes_value=v)),
    st.just(AnyValue()),
)


@st.composite
def pb_requests(draw: st.DrawFn) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = ResourceSpans()
    ss = rs.scope_spans.add()
    for _ in range(draw(st.integers(0, 4))):
        span = Span(
            trace_id=draw(ids),
            span_id=draw(short_ids),
            parent_span_id=draw(st.one_of(st.just(b""), short_ids)),
            name=draw(st.sampled_from(["invoke_agent a", "chat m", "execute_tool t", ""])),
            kind=draw(st.integers(0, 5)),
            start_time_unix_nano=draw(small_ints),
            end_time_unix_nano=draw(small_ints),
        )
        for key in draw(st.lists(st.sampled_from(["gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.tool.name", "gen_ai.usage.input_tokens", "input.value"]), max_size=3)):  # fmt: skip
            span.attributes.append(KeyValue(key=key, value=draw(any_values)))
        for _ in range(draw(st.integers(0, 1))):
            span.events.add(name="exception", time_unix_nano=draw(small_ints))
        ss.spans.append(span)
    req.resource_spans.append(rs)
    return req


json_values = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=20)
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=12), inner, max_size=3)),
    max_leaves=8,
)  # fmt: skip
SPAN_FIELDS = ["traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano", "attributes", "events", "links", "status"]  # fmt: skip


@st.composite
def json_bodies(draw: st.DrawFn) -> bytes:
    span: dict[str, object] = {"traceId": "e" * 32, "spanId": "f" * 16, "name": "invoke_agent a"}
    for key in draw(st.lists(st.sampled_from(SPAN_FIELDS), max_size=3)):
        span[key] = draw(json_values)
    doc: object = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [span]}]}]}
    if draw(st.integers(0, 5)) == 0:
        doc = draw(json_values)  # anything at all
    return json.dumps(doc).encode()


def _check_http(server: ServeProcess, body: bytes, content_type: str, zipped: bool) -> None:
    headers = {"Content-Encoding": "gzip"} if zipped else {}
    reply = post(
        server, "/v1/traces", gzip.compress(body) if zipped else body, content_type, headers
    )
    assert reply.status == 200 or reply.status in FOUR_XX, (reply.status, reply.body[:200])


@SETTINGS
@given(pb_requests(), st.booleans())
def test_any_protobuf_request_over_http_and_grpc(
    server: ServeProcess, req: ExportTraceServiceRequest, zipped: bool
) -> None:
    _check_http(server, req.SerializeToString(), PB, zipped)
    with grpc.insecure_channel(server.grpc_target) as channel:
        try:
            TraceServiceStub(channel).Export(req, timeout=30)
        except grpc.RpcError as err:
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err
    _settled(server)


@SETTINGS
@given(json_bodies(), st.booleans())
def test_any_json_request(server: ServeProcess, body: bytes, zipped: bool) -> None:
    _check_http(server, body, JSON, zipped)
    _settled(server)


@SETTINGS
@given(st.binary(max_size=300), st.sampled_from([PB, JSON]), st.booleans())
def test_any_bytes(server: ServeProcess, body: bytes, content_type: str, zipped: bool) -> None:
    _check_http(server, body, content_type, zipped)
    _settled(server)


def test_the_server_kept_everything_it_acknowledged(server: ServeProcess, tmp_path: Path) -> None:
    _settled(server)
    assert server.alive()
