"""Token and TLS on both protocols, the warning for a public bind, and bad security options."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub
from opentelemetry.sdk.trace.export import SpanExportResult
from serve_helpers import ServeProcess, agent_trace_request, get, post
from test_serve_otlp import agent_spans

from tracereplay.store import Store

pytestmark = pytest.mark.slow

StartServer = Callable[..., ServeProcess]
TOKEN = "s3cret-token"


def test_token_is_required_on_both_protocols(start_server: StartServer) -> None:
    server = start_server(env={"TRACEREPLAY_TOKEN": TOKEN})
    body = agent_trace_request(os.urandom(16)).SerializeToString()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        reply = post(server, "/v1/traces", body, headers=headers)
        assert reply.status == 401
        assert reply.headers["www-authenticate"].startswith("Bearer")
    assert (
        post(server, "/v1/traces", body, headers={"Authorization": f"Bearer {TOKEN}"}).status == 200
    )
    assert "spans_received" not in get(server, "/healthz").json()  # no details without the token

    req = agent_trace_request(os.urandom(16))
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = TraceServiceStub(channel)
        for metadata in ((), (("authorization", "Bearer nope"),)):
            with pytest.raises(grpc.RpcError) as err:
                stub.Export(req, metadata=metadata, timeout=30)
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        stub.Export(req, metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=30)

    auth = {"authorization": f"Bearer {TOKEN}"}
    spans = agent_spans("token-http")
    http_exporter = HttpExporter(endpoint=f"{server.http_url}/v1/traces", headers=auth)
    assert http_exporter.export(spans) == SpanExportResult.SUCCESS
    grpc_spans = agent_spans("token-grpc")
    grpc_exporter = GrpcExporter(endpoint=server.grpc_target, insecure=True, headers=auth)
    assert grpc_exporter.export(grpc_spans) == SpanExportResult.SUCCESS
    assert (
        HttpExporter(endpoint=f"{server.http_url}/v1/traces").export(spans)
        == SpanExportResult.FAILURE
    )

    assert server.stop() == 0
    with Store.open(server.db) as store:
        assert store.count("spans") == 2 + 2 + 3 + 3


def test_tls_on_both_protocols(
    start_server: StartServer, tls_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # requests lets these variables override the exporter's own certificate_file
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    cert, key = tls_files
    server = start_server("--tls-cert", str(cert), "--tls-key", str(key), "--token", TOKEN)
    assert server.scheme == "https"
    auth = {"authorization": f"Bearer {TOKEN}"}
    spans = agent_spans("tls-http")
    exporter = HttpExporter(
        endpoint=f"{server.http_url}/v1/traces", certificate_file=str(cert), headers=auth
    )
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    grpc_spans = agent_spans("tls-grpc")
    credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
    grpc_exporter = GrpcExporter(endpoint=server.grpc_target, credentials=credentials, headers=auth)
    assert grpc_exporter.export(grpc_spans) == SpanExportResult.SUCCESS

    untrusted = ssl.create_default_context()  # does not trust the self-signed certificate
    with pytest.raises(ssl.SSLCertVerificationError):
        post(server, "/v1/traces", b"", ssl_context=untrusted)
    with grpc.insecure_channel(server.grpc_target) as plain, pytest.raises(grpc.RpcError):
        TraceServiceStub(plain).Export(agent_trace_request(os.urandom(16)), timeout=5)
    assert server.alive()
    assert server.stop() == 0
    with Store.open(server.db) as store:
        assert store.count("spans") == 6


def test_public_bind_without_token_warns(start_server: StartServer) -> None:
    server = start_server("--host", "0.0.0.0", "--no-grpc")
    assert server.stop() == 0
    assert "without a token" in server.output()
    quiet = start_server("--host", "0.0.0.0", "--no-grpc", "--token", TOKEN)
    assert quiet.stop() == 0
    assert "without a token" not in quiet.output()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--tls-cert", "cert.pem"], "both --tls-cert and --tls-key"),
        (["--tls-cert", "missing.pem", "--tls-key", "missing.pem"], "not found"),
        (["--no-http", "--no-grpc"], "nothing to serve"),
        (["--max-inflight-requests", "0"], "--max-inflight-requests"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path: Path, args: list[str], says: str) -> None:
    (tmp_path / "cert.pem").write_text("x")
    result = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(tmp_path / "t.duckdb"), "serve", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error:") and says in line


def test_port_in_use_is_a_one_line_error(start_server: StartServer, tmp_path: Path) -> None:
    first = start_server("--no-grpc")
    result = subprocess.run(
        [
            sys.executable, "-m", "tracereplay", "--db", str(tmp_path / "other.duckdb"), "serve",
            "--http-port", str(first.http_port), "--no-grpc",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert "cannot listen for OTLP/HTTP" in result.stderr
    assert "Traceback" not in result.stderr
