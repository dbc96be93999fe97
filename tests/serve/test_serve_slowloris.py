"""Slowloris: a thousand connections sending part of a request a byte at a time must not deny
service. A real ``serve`` on 127.0.0.1, the attack bounded in count and time, the real OTLP
exporters as the legitimate clients (their timeout short, so their retries cannot hide a 503)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from serve_helpers import ServeProcess, agent_trace_request, get, post
from slowloris import GRPC_PARTIAL, HTTP_PARTIAL, Slowloris

pytestmark = pytest.mark.slow

StartServer = Callable[..., ServeProcess]
ATTACKERS = 1000


def _spans() -> tuple[ReadableSpan, ...]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "slowloris-victim"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with provider.get_tracer("tests.serve").start_as_current_span(
        "invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        pass
    provider.shutdown()
    return memory.get_finished_spans()


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_slowloris_does_not_keep_exports_or_healthz_out(
    start_server: StartServer, protocol: str
) -> None:
    # fewer threads than attackers, as a thousand against the default 256 would be
    server = start_server("--read-timeout", "6", "--max-connections", "64")
    assert server.proc is not None
    rss_before = _rss_kib(server.proc.pid)
    port = server.http_port if protocol == "http" else server.grpc_port
    payload = HTTP_PARTIAL if protocol == "http" else GRPC_PARTIAL
    with Slowloris(port, ATTACKERS, payload, every_s=1.0, until_s=20, reconnect=False) as attack:
        time.sleep(1.0)  # every attacker has sent a few bytes
        # one plain request each, no retry: answered, not 503
        assert get(server, "/healthz").status == 200
        body = agent_trace_request(os.urandom(16)).SerializeToString()
        assert post(server, "/v1/traces", body).status == 200
        if protocol == "http":
            exporter = HttpExporter(endpoint=f"{server.http_url}/v1/traces", timeout=2)
        else:
            exporter = GrpcExporter(endpoint=server.grpc_target, insecure=True, timeout=2)
        for _ in range(3):
            assert exporter.export(_spans()) == SpanExportResult.SUCCESS
        exporter.shutdown()
        assert get(server, "/healthz").status == 200
        rss_during = _rss_kib(server.proc.pid)
        deadline = time.monotonic() + 30
        while attack.closed < ATTACKERS:  # the first thousand, at their header timeout
            assert time.monotonic() < deadline, f"{attack.closed} of {ATTACKERS} closed"
            time.sleep(0.2)
    assert all(a.startswith(b"HTTP/1.1 408") for a in attack.answers if a.startswith(b"HTTP"))
    # a connection and its few buffered bytes each: nowhere near a thread's or a body's cost
    assert rss_during - rss_before < 200 * 1024, (rss_before, rss_during)
    assert get(server, "/healthz").json()["spans_received"] == 3 + 2
    assert server.stop() == 0


def test_headers_over_the_limit_get_431(start_server: StartServer) -> None:
    server = start_server("--no-grpc")
    import socket

    with socket.create_connection(("127.0.0.1", server.http_port), timeout=30) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"a" * 40_000)
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 431"), answer
    assert get(server, "/healthz").status == 200
    assert os.path.exists(server.db)
