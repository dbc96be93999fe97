"""Faults a bad day brings to ``serve``: times past what the store keeps, slow and stuck clients,
bodies cut short, a crowd past the connection limit. Real servers on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub
from serve_helpers import (
    ServeProcess,
    agent_trace_request,
    cli,
    get,
    held_request,
    post,
    to_otlp_json,
)
from typer.testing import CliRunner

from tracereplay.cli.app import app
from tracereplay.store import Store

StartServer = Callable[..., ServeProcess]
PB = "application/x-protobuf"
U64_MAX = 2**64 - 1
YEAR_9999_NS = 253_402_300_799 * 10**9


def _with_time(req: ExportTraceServiceRequest, start_ns: int) -> ExportTraceServiceRequest:
    """``req`` with its first span (the agent root) starting at ``start_ns``."""
    bad = ExportTraceServiceRequest()
    bad.CopyFrom(req)
    bad.resource_spans[0].scope_spans[0].spans[0].start_time_unix_nano = start_ns
    return bad


def _wait_stored(server: ServeProcess, spans: int) -> None:
    deadline = time.monotonic() + 60
    while get(server, "/healthz").json()["spans_stored"] < spans:
        assert time.monotonic() < deadline, get(server, "/healthz").json()
        time.sleep(0.1)


def test_far_future_times_are_rejected_per_span_and_the_store_keeps_working(
    start_server: StartServer,
) -> None:
    server = start_server()
    # protobuf over HTTP: u64 max
    reply = post(
        server,
        "/v1/traces",
        _with_time(agent_trace_request(os.urandom(16)), U64_MAX).SerializeToString(),
    )
    assert reply.status == 200
    partial = ExportTraceServiceResponse.FromString(reply.body).partial_success
    assert partial.rejected_spans == 1 and "2262" in partial.error_message
    # OTLP/JSON: year 9999, as a decimal string and as a number; and a negative time
    for value in (str(YEAR_9999_NS), YEAR_9999_NS, "-5"):
        obj = json.loads(to_otlp_json(agent_trace_request(os.urandom(16))))
        obj["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = value
        reply = post(server, "/v1/traces", json.dumps(obj).encode(), "application/json")
        assert reply.status == 200 and int(reply.json()["partialSuccess"]["rejectedSpans"]) == 1
    # gRPC: just past the int64 range
    with grpc.insecure_channel(server.grpc_target) as channel:
        answer = TraceServiceStub(channel).Export(
            _with_time(agent_trace_request(os.urandom(16)), 2**63), timeout=30
        )
    assert answer.partial_success.rejected_spans == 1
    # a request with nothing wrong after them all
    assert (
        post(server, "/v1/traces", agent_trace_request(os.urandom(16)).SerializeToString()).status
        == 200
    )
    _wait_stored(server, 5 + 2)  # the good span of each bad request, and the good request
    result = cli(
        server.db, "sql", "SELECT count(*) AS n, max(start_time) < now() AS sane FROM spans"
    )
    assert result.returncode == 0, result.stderr
    assert server.stop() == 0
    with Store.open(server.db) as store:
        assert store.count("spans") == 7


def _dribble(sock: socket.socket, data: bytes, every_s: float, until_s: float) -> bytes:
    """Send ``data`` a byte at a time; returns what the server answered ("" if it closed)."""
    deadline = time.monotonic() + until_s
    sock.setblocking(False)
    for byte in data:
        assert time.monotonic() < deadline, "the server let a slow client hold the connection"
        try:
            sock.send(bytes([byte]))
        except OSError:  # closed on us: fine
            break
        time.sleep(every_s)
        try:
            answer = sock.recv(4096)
        except BlockingIOError:
            continue
        except OSError:
            return b""
        return answer
    sock.settimeout(until_s)
    try:
        return sock.recv(4096)
    except OSError:
        return b""


def test_slow_headers_and_bodies_meet_a_deadline(start_server: StartServer) -> None:
    server = start_server("--read-timeout", "1", "--no-grpc")
    addr = ("127.0.0.1", server.http_port)
    headers = (
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        + b"X-Padding: " + b"a" * 400 + b"\r\n\r\n"
    )  # fmt: skip
    # a header byte every 0.2 s: each byte would restart a per-read timeout, the deadline not
    with socket.create_connection(addr) as sock:
        answer = _dribble(sock, headers, 0.2, 30)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 408")
    # a body shorter than its Content-Length, then silence: 408 and closed
    body = agent_trace_request(os.urandom(16)).SerializeToString()
    with socket.create_connection(addr, timeout=30) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body[:5]
        )
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert b"Connection: close" in answer
    # the body dribbled a byte at a time: the body deadline holds too
    with socket.create_connection(addr) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Content-Length: %d\r\n\r\n" % (len(body) * 20)
        )
        answer = _dribble(sock, body * 20, 0.2, 30)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 408")
    # half-close after a short body: an answer, not silence
    with socket.create_connection(addr, timeout=30) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body[:5]
        )
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(4096):  # answered, then closed
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 400"), answer
        assert b"incomplete" in answer
    # and a normal client is served all along
    assert post(server, "/v1/traces", body).status == 200
    assert get(server, "/healthz").status == 200


def _post_raw(port: int, body: bytes) -> bytes:
    """One POST on a raw socket; what came back (raises on a reset)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
            if answer.startswith(b"HTTP/1.1 200"):
                break
        return answer


def test_past_the_connection_limit_every_client_gets_503_never_a_reset(
    start_server: StartServer,
) -> None:
    server = start_server("--max-connections", "2", "--retry-after", "4", "--no-grpc")
    idle = [held_request(server.http_port) for _ in range(2)]  # both threads busy
    body = agent_trace_request(os.urandom(16)).SerializeToString() * 2000  # not read
    try:
        time.sleep(0.2)
        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda _: _post_raw(server.http_port, body), range(64)))
    finally:
        for sock in idle:
            sock.close()
    for answer in answers:  # a ConnectionResetError would have failed the map above
        assert answer.startswith(b"HTTP/1.1 503"), answer[:80]
        assert b"Retry-After: 4" in answer


def test_drains_within_the_smallest_memory_limit_store_everything_once(
    start_server: StartServer, tmp_path: Path
) -> None:
    """``--drain-memory-mib 32``: DuckDB drops what it cached and spills what does not fit, and
    a burst (a request of 6,000 spans, then all of it again) is stored whole, each span once."""
    db = tmp_path / "small.duckdb"
    server = start_server("--drain-memory-mib", "32", "--no-grpc", db=db)
    burst = ExportTraceServiceRequest()
    for _ in range(3000):
        burst.resource_spans.extend(agent_trace_request(os.urandom(16)).resource_spans)
    body = burst.SerializeToString()
    assert post(server, "/v1/traces", body).status == 200
    assert post(server, "/v1/traces", body).status == 200
    assert server.stop() == 0
    with Store.open(db) as store:
        assert (store.count("spans"), store.count("runs")) == (6000, 3000)


@pytest.mark.parametrize(
    ("option", "value", "why"),
    [
        ("--drain-memory-mib", "8", "it must be 32 or more"),
        ("--drain-memory-mib", "inf", "it must be a number of MiB"),
        ("--max-request-mib", "nan", "it must be a number of MiB"),
        ("--max-request-mib", "-1", "it must be more than 0"),
        ("--max-decompressed-mib", "4096", "it must be 2,047 or less"),
        ("--max-backlog-mib", "1e300", "it must be 1,048,576 or less"),
        ("--read-timeout", "inf", "Input should be a finite number"),
        ("--drain-interval", "1e300", "Input should be less than or equal to 86400"),
        ("--shutdown-grace", "nan", "Input should be a finite number"),
        (
            "--max-connections",
            "99999999999999999999999",
            "Input should be less than or equal to 10000",
        ),
        ("--grpc-workers", "1000000", "Input should be less than or equal to 10000"),
    ],
)
def test_a_limit_out_of_range_is_one_line_and_exit_2(
    tmp_path: Path, option: str, value: str, why: str
) -> None:
    """Not a traceback in the drainer's thread (inf seconds), nor a size silently clamped."""
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "t.duckdb"), "serve", option, value])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: bad value for {option}: {why}"
    assert not (tmp_path / "t.duckdb").exists()


def test_the_user_sees_a_bad_limit_as_one_line(tmp_path: Path) -> None:
    result = cli(tmp_path / "t.duckdb", "serve", "--drain-memory-mib", "8")
    assert result.returncode == 2
    assert result.stderr == "error: bad value for --drain-memory-mib: it must be 32 or more\n"
