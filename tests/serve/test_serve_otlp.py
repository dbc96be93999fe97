"""One ``tracereplay serve`` for the module, fed by the real OTLP exporters and plain clients.

Every good request is remembered in ``SENT``; every bad one gets its status while the server stays
up; the last test stops the server with SIGTERM and checks the store holds exactly ``SENT``.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.logs.v1.logs_service_pb2_grpc import LogsServiceStub
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from serve_helpers import (
    FIXTURES,
    ServeProcess,
    agent_trace_request,
    cli,
    get,
    logs_request_from_json,
    post,
    runs_json,
    to_otlp_json,
)

from tracereplay.otlp import DROPPED_ATTRIBUTES_KEY
from tracereplay.store import Store

PB = "application/x-protobuf"
JSON = "application/json"
CHAT_SPANS = FIXTURES / "generated-otel-genai-v1.36-default__chat_spans.json"
CHAT_LOGS = FIXTURES / "generated-otel-genai-v1.36-default__events.logs.json"

#: (trace_id, span_id) of every span a test sent and got acknowledged
SENT: set[tuple[str, str]] = set()
#: trace id -> the text its root's ``cut`` attribute must be stored as
SURROGATE_TRACES: dict[str, str] = {}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    db = tmp_path_factory.mktemp("serve") / "otlp.duckdb"
    proc = ServeProcess(
        db,
        "--max-request-mib", "1",
        "--max-decompressed-mib", "2",
        "--max-attributes", "64",
        "--max-value-length", "4096",
    ).start()  # fmt: skip
    yield proc
    if proc.alive():
        proc.stop()


def agent_spans(service: str, agent: str = "triage") -> list[ReadableSpan]:
    """A small GenAI agent run recorded by the real OpenTelemetry SDK."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("tests.serve")
    with tracer.start_as_current_span(
        f"invoke_agent {agent}",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent},
    ):
        with tracer.start_as_current_span(
            "chat gpt-4o",
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"},
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool lookup",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
        ):
            pass
    provider.shutdown()
    return list(memory.get_finished_spans())


def remember(spans: list[ReadableSpan]) -> None:
    for s in spans:
        SENT.add((f"{s.context.trace_id:032x}", f"{s.context.span_id:016x}"))


def remember_request(body_json: dict) -> None:
    for rs in body_json["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                SENT.add((s["traceId"].lower(), s["spanId"].lower()))


def assert_up(server: ServeProcess) -> None:
    assert server.alive(), server.output()
    assert get(server, "/healthz").status == 200


# ---------------------------------------------------------------------------------- good input
@pytest.mark.parametrize("compression", [HttpCompression.NoCompression, HttpCompression.Gzip])
def test_http_exporter(server: ServeProcess, compression: HttpCompression) -> None:
    spans = agent_spans(f"http-{compression.value}")
    exporter = HttpExporter(endpoint=f"{server.http_url}/v1/traces", compression=compression)
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    exporter.shutdown()
    remember(spans)


@pytest.mark.parametrize("compression", [grpc.Compression.NoCompression, grpc.Compression.Gzip])
def test_grpc_exporter(server: ServeProcess, compression: grpc.Compression) -> None:
    spans = agent_spans(f"grpc-{compression.name}")
    exporter = GrpcExporter(endpoint=server.grpc_target, insecure=True, compression=compression)
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    exporter.shutdown()
    remember(spans)


def test_plain_json_client(server: ServeProcess) -> None:
    body = to_otlp_json(agent_trace_request(os.urandom(16), service="json-client"))
    reply = post(server, "/v1/traces", body, JSON + "; charset=utf-8")
    assert reply.status == 200
    assert reply.headers["content-type"] == JSON
    assert reply.json() == {}
    remember_request(json.loads(body))


def test_a_lone_surrogate_escape_is_stored_as_a_replacement_character(
    server: ServeProcess,
) -> None:
    """JavaScript's JSON.stringify writes half of a surrogate pair (a string cut inside an
    emoji) as an escape; the request is taken, that half stored as U+FFFD."""
    trace_id = os.urandom(16)
    body = to_otlp_json(agent_trace_request(trace_id, service="js-client", attrs={"cut": "@@"}))
    body = body.replace(b"@@", b"sunny \\ud83d")
    reply = post(server, "/v1/traces", body, JSON)
    assert reply.status == 200, reply.body
    remember_request(json.loads(body))
    SURROGATE_TRACES[trace_id.hex()] = "sunny \ufffd"


def test_protobuf_with_text_that_is_not_utf8_is_stored_with_a_replacement_character(
    server: ServeProcess,
) -> None:
    """protobuf.js (OpenTelemetry JS) writes half of a surrogate pair as three bytes that are
    not UTF-8; the protobuf parser alone would refuse the whole request."""
    trace_id = os.urandom(16)
    req = agent_trace_request(trace_id, service="js-protobuf", attrs={"cut": "@@@@"})
    body = req.SerializeToString().replace(
        b"@@@@", b"a" + "\ud83d".encode("utf-8", "surrogatepass")
    )
    reply = post(server, "/v1/traces", body, PB)
    assert reply.status == 200, reply.body
    SENT.update((trace_id.hex(), sid) for sid in (trace_id[:8].hex(), trace_id[8:].hex()))
    SURROGATE_TRACES[trace_id.hex()] = "a\ufffd"


def test_protobuf_reply_is_an_export_response(server: ServeProcess) -> None:
    req = agent_trace_request(os.urandom(16), service="pb-client")
    reply = post(server, "/v1/traces", req.SerializeToString())
    assert reply.status == 200
    assert reply.headers["content-type"] == PB
    assert not ExportTraceServiceResponse.FromString(reply.body).HasField("partial_success")
    remember_request(json.loads(to_otlp_json(req)))


def test_logs_join_their_spans(server: ServeProcess) -> None:
    spans_body = CHAT_SPANS.read_bytes()
    assert post(server, "/v1/traces", spans_body, JSON).status == 200
    remember_request(json.loads(spans_body))
    reply = post(server, "/v1/logs", CHAT_LOGS.read_bytes(), JSON)
    assert reply.status == 200 and reply.json() == {}
    # the same records over gRPC: stored once
    with grpc.insecure_channel(server.grpc_target) as channel:
        response = LogsServiceStub(channel).Export(logs_request_from_json(CHAT_LOGS), timeout=30)
    assert isinstance(response, ExportLogsServiceResponse)
    assert not response.HasField("partial_success")
    trace_id = json.loads(spans_body)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    [run] = [r for r in runs_json(server.db) if r["trace_id"] == trace_id.lower()]
    assert run["query"] == "What's the weather and population in San Francisco?"
    assert run["tool_calls_count"] == 2
    with Store.open(server.db) as store:
        assert store.count("logs") == 9


def test_logs_protobuf_over_http(server: ServeProcess) -> None:
    body = logs_request_from_json(CHAT_LOGS).SerializeToString()
    reply = post(server, "/v1/logs", gzip.compress(body), PB, {"Content-Encoding": "gzip"})
    assert reply.status == 200
    assert not ExportLogsServiceResponse.FromString(reply.body).HasField("partial_success")


def test_partial_success_counts_rejected_spans(server: ServeProcess) -> None:
    req = agent_trace_request(os.urandom(16), service="partial")
    bad = req.resource_spans[0].scope_spans[0].spans.add()
    bad.CopyFrom(req.resource_spans[0].scope_spans[0].spans[0])
    bad.trace_id = b"\x01\x02\x03"
    reply = post(server, "/v1/traces", req.SerializeToString())
    assert reply.status == 200
    partial = ExportTraceServiceResponse.FromString(reply.body).partial_success
    assert partial.rejected_spans == 1
    assert "traceId" in partial.error_message
    good = json.loads(to_otlp_json(req))
    good["resourceSpans"][0]["scopeSpans"][0]["spans"].pop()
    remember_request(good)

    body = json.loads(to_otlp_json(agent_trace_request(os.urandom(16), service="partial-json")))
    remember_request(body)
    body["resourceSpans"][0]["scopeSpans"][0]["spans"].append({"traceId": "zz", "spanId": "01"})
    reply = post(server, "/v1/traces", json.dumps(body).encode(), JSON)
    assert reply.status == 200
    assert reply.json()["partialSuccess"]["rejectedSpans"] == "1"


def test_limits_cut_attributes_and_values(server: ServeProcess) -> None:
    attrs: dict[str, str | int] = {f"extra.{i:02d}": i for i in range(80)}
    attrs["big"] = "x" * 10_000
    req = agent_trace_request(os.urandom(16), service="limits", attrs=attrs)
    req.resource_spans[0].scope_spans[0].spans[0].attributes.insert(
        0, req.resource_spans[0].scope_spans[0].spans[0].attributes.pop()
    )  # the long value first, so it is kept (and cut)
    assert post(server, "/v1/traces", req.SerializeToString()).status == 200
    remember_request(json.loads(to_otlp_json(req)))
    root_id = req.resource_spans[0].scope_spans[0].spans[0].span_id.hex()
    with Store.open(server.db) as store:
        from tracereplay.ingest.drain import drain_spool

        drain_spool(store)
        rows = store.con.execute(
            "SELECT attributes FROM spans WHERE span_id = ?", [root_id]
        ).fetchall()
    stored = json.loads(rows[0][0])
    assert len(stored) == 65
    assert stored[DROPPED_ATTRIBUTES_KEY] == 83 - 64
    assert stored["big"].startswith("x" * 4096) and stored["big"].endswith("[truncated 5904 chars]")


def test_other_commands_work_while_it_serves(server: ServeProcess) -> None:
    stop = threading.Event()
    sent: list[set[tuple[str, str]]] = []

    def keep_sending() -> None:
        while not stop.is_set():
            req = agent_trace_request(os.urandom(16), service="concurrent")
            if post(server, "/v1/traces", req.SerializeToString()).status == 200:
                body = json.loads(to_otlp_json(req))
                sent.append(
                    {
                        (s["traceId"], s["spanId"])
                        for s in body["resourceSpans"][0]["scopeSpans"][0]["spans"]
                    }
                )

    sender = threading.Thread(target=keep_sending)
    sender.start()
    try:
        for _ in range(3):
            result = cli(server.db, "runs", "--format", "json", "--limit", "5")
            assert result.returncode == 0, result.stderr
            assert json.loads(result.stdout)
    finally:
        stop.set()
        sender.join()
    for keys in sent:
        SENT.update(keys)
    assert sent


# ---------------------------------------------------------------------------------- bad input
def status_of(reply_body: bytes, content_type: str) -> tuple[int, str]:
    if content_type == PB:
        status = Status.FromString(reply_body)
        return status.code, status.message
    obj = json.loads(reply_body)
    return obj["code"], obj["message"]


@pytest.mark.parametrize(
    ("body", "content_type", "headers", "status", "says"),
    [
        (b"\xff\xff\xff\xff", PB, {}, 400, "invalid protobuf"),
        (b'{"resourceSpans": [', JSON, {}, 400, "invalid JSON"),
        (b"[1, 2]", JSON, {}, 400, "must be an object"),
        (b'{"resourceSpans": [{"scopeSpans": 7}]}', JSON, {}, 400, "scopeSpans"),
        (b"hello", "text/plain", {}, 415, "Content-Type"),
        (b"{}", None, {}, 415, "Content-Type"),
        (b"{}", JSON, {"Content-Encoding": "br"}, 415, "Content-Encoding"),
        (b"not gzip at all", JSON, {"Content-Encoding": "gzip"}, 400, "gzip"),
        (gzip.compress(b"{}")[:-6], JSON, {"Content-Encoding": "gzip"}, 400, "cut short"),
        (b"x" * (1024 * 1024 + 1), PB, {}, 413, "--max-request-mib"),
        (gzip.compress(bytes(50 * 1024 * 1024)), PB, {"Content-Encoding": "gzip"}, 413, "inflates"),
    ],
    ids=[
        "garbage-protobuf", "broken-json", "json-array", "json-wrong-shape", "text-plain",
        "no-content-type", "brotli", "bad-gzip", "truncated-gzip", "too-large", "gzip-bomb",
    ],
)  # fmt: skip
def test_bad_requests_get_their_status(
    server: ServeProcess,
    body: bytes,
    content_type: str | None,
    headers: dict[str, str],
    status: int,
    says: str,
) -> None:
    reply = post(server, "/v1/traces", body, content_type, headers)
    assert reply.status == status, reply.body
    code, message = status_of(reply.body, reply.headers["content-type"])
    assert says in message
    assert code == grpc.StatusCode.INVALID_ARGUMENT.value[0]  # not retryable
    assert "retry-after" not in reply.headers
    assert_up(server)


def test_a_bad_request_does_not_cost_the_connection(server: ServeProcess) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    try:
        statuses = []
        socks = []
        for body in (b"\xff\xff", b""):  # a 400, then a good (empty) request
            conn.request("POST", "/v1/traces", body=body, headers={"Content-Type": PB})
            socks.append(conn.sock)
            reply = conn.getresponse()
            reply.read()
            statuses.append(reply.status)
            assert reply.getheader("Connection") is None
        assert statuses == [400, 200]
        assert socks[0] is socks[1]  # the same connection all along
    finally:
        conn.close()


def test_unknown_path_is_404(server: ServeProcess) -> None:
    assert post(server, "/v1/metrics", b"", PB).status == 404
    assert get(server, "/nope").status == 404
    assert_up(server)


def test_a_body_without_length_is_411(server: ServeProcess) -> None:
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n"
        )
        assert sock.recv(4096).startswith(b"HTTP/1.1 411")
    assert_up(server)


def test_chunked_body_is_accepted(server: ServeProcess) -> None:
    req = agent_trace_request(os.urandom(16), service="chunked")
    body = req.SerializeToString()
    half = len(body) // 2
    chunks = (
        b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:half], body[half:])) + b"0\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + chunks
        )
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    remember_request(json.loads(to_otlp_json(req)))


def test_grpc_bad_data_is_invalid_argument(server: ServeProcess) -> None:
    with grpc.insecure_channel(server.grpc_target) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        with pytest.raises(grpc.RpcError) as err:
            export(b"\xff\xff\xff\xff", timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "invalid protobuf" in err.value.details()
    assert_up(server)


@pytest.mark.parametrize("compression", [grpc.Compression.NoCompression, grpc.Compression.Gzip])
def test_grpc_over_the_size_limit_is_refused(
    server: ServeProcess, compression: grpc.Compression
) -> None:
    req = agent_trace_request(os.urandom(16), attrs={"huge": "y" * (3 * 1024 * 1024)})
    channel = grpc.insecure_channel(server.grpc_target, compression=compression)
    with channel, pytest.raises(grpc.RpcError) as err:
        TraceServiceStub(channel).Export(req, timeout=30)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert_up(server)


def test_healthz(server: ServeProcess) -> None:
    reply = get(server, "/healthz")
    assert reply.status == 200
    health = reply.json()
    assert health["status"] == "ok"
    assert health["spans_received"] >= len(SENT) > 0


# ---------------------------------------------------------------------------------- the end
def test_sigterm_stores_everything_and_exits_0(server: ServeProcess) -> None:
    assert server.stop() == 0, server.output()
    assert "stopped:" in server.output() and "all stored" in server.output()
    assert "without a token" not in server.output()  # loopback: no warning
    with Store.open(server.db) as store:
        rows = store.con.execute("SELECT trace_id, span_id FROM spans").fetchall()
        cut = dict(
            store.con.execute(
                "SELECT trace_id, attributes->>'cut' FROM spans WHERE attributes->>'cut' IS NOT NULL"
            ).fetchall()
        )
    assert {(t, s) for t, s in rows} == SENT
    assert cut == SURROGATE_TRACES
    assert not list(Path(str(server.db) + ".spool").glob("*.seg"))
