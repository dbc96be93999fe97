"""Running ``tracereplay serve`` as a real subprocess, and talking to it as clients do."""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from base64 import b64decode, b64encode
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, Span

FIXTURES = Path(__file__).parent.parent / "fixtures" / "otlp"
START_TIMEOUT_S = 60.0


class ServeProcess:
    """``tracereplay --db DB serve --http-port 0 --grpc-port 0 ARGS`` in a subprocess."""

    def __init__(self, db: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.db = db
        self.args = args
        self.env = {k: v for k, v in os.environ.items() if k != "TRACEREPLAY_TOKEN"}
        self.env.update(env or {})
        self.http_port = 0
        self.grpc_port = 0
        self.scheme = "http"
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.proc: subprocess.Popen[str] | None = None

    # ------------------------------------------------------------------ running it
    def start(self) -> ServeProcess:
        cmd = [sys.executable, "-m", "tracereplay", "--db", str(self.db), "serve"]
        if "--no-http" not in self.args and "--http-port" not in self.args:
            cmd += ["--http-port", "0"]
        if "--no-grpc" not in self.args and "--grpc-port" not in self.args:
            cmd += ["--grpc-port", "0"]
        self.proc = subprocess.Popen(
            [*cmd, *self.args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(
            target=self._pump, args=(self.proc.stdout, self.stdout, lines), daemon=True
        ).start()
        threading.Thread(
            target=self._pump, args=(self.proc.stderr, self.stderr, None), daemon=True
        ).start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"serve did not start: {self.output()}") from None
            if line is None:
                self.proc.wait(timeout=10)
                raise RuntimeError(f"serve exited {self.proc.returncode}: {self.output()}")
            if m := re.search(r"OTLP/HTTP\s+(https?)://[^ ]+:(\d+)", line):
                self.scheme, self.http_port = m.group(1), int(m.group(2))
            if m := re.search(r"OTLP/gRPC\s+\S+:(\d+)", line):
                self.grpc_port = int(m.group(1))
            if line.strip() == "ready":
                return self

    @staticmethod
    def _pump(stream: Any, sink: list[str], lines: queue.Queue[str | None] | None) -> None:
        for line in stream:
            sink.append(line)
            if lines is not None:
                lines.put(line)
        if lines is not None:
            lines.put(None)

    def output(self) -> str:
        return "".join(self.stdout) + "".join(self.stderr)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        """Signal the server and wait for it; returns its exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout=timeout)
        time.sleep(0.05)  # let the pump threads read the last lines
        return code

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=30)

    # ------------------------------------------------------------------ addresses
    @property
    def http_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.http_port}"

    @property
    def grpc_target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"


class Reply:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


def post(
    server: ServeProcess,
    path: str,
    body: bytes,
    content_type: str | None = "application/x-protobuf",
    headers: dict[str, str] | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> Reply:
    """One request on a fresh connection, as a plain HTTP client sends it."""
    if server.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            "127.0.0.1", server.http_port, timeout=30, context=ssl_context
        )
    else:
        conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    all_headers = dict(headers or {})
    if content_type is not None:
        all_headers["Content-Type"] = content_type
    try:
        conn.request("POST", path, body=body, headers=all_headers)
        resp = conn.getresponse()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def get(server: ServeProcess, path: str, headers: dict[str, str] | None = None) -> Reply:
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def held_request(port: int) -> socket.socket:
    """A connection whose request holds a thread: headers whole, its body not sent yet."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        b"Content-Length: 100\r\n\r\n"
    )
    return sock


def cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``tracereplay`` command against ``db`` (another process, like a user's shell)."""
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def runs_json(db: Path) -> list[dict[str, Any]]:
    result = cli(db, "runs", "--format", "json", "--limit", "1000")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# ---------------------------------------------------------------------------------- payloads
def _kv(key: str, value: str | int) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def agent_trace_request(
    trace_id: bytes, service: str = "raw-client", attrs: dict[str, str | int] | None = None
) -> ExportTraceServiceRequest:
    """A two-span GenAI agent trace (agent root + chat child) for ``trace_id``."""
    req = ExportTraceServiceRequest()
    rs = ResourceSpans()
    rs.resource.attributes.append(_kv("service.name", service))
    ss = rs.scope_spans.add()
    ss.scope.name = "tests.serve"
    root_id, chat_id = trace_id[:8], trace_id[8:]
    t0 = 1_790_000_000_000_000_000
    root = Span(
        trace_id=trace_id, span_id=root_id, name="invoke_agent support", kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=t0, end_time_unix_nano=t0 + 5_000_000,
        attributes=[_kv("gen_ai.operation.name", "invoke_agent"), _kv("gen_ai.agent.name", "support")],
    )  # fmt: skip
    for key, value in (attrs or {}).items():
        root.attributes.append(_kv(key, value))
    chat = Span(
        trace_id=trace_id, span_id=chat_id, parent_span_id=root_id, name="chat gpt-4o",
        kind=Span.SPAN_KIND_CLIENT, start_time_unix_nano=t0 + 1_000, end_time_unix_nano=t0 + 4_000_000,
        attributes=[_kv("gen_ai.operation.name", "chat"), _kv("gen_ai.request.model", "gpt-4o")],
    )  # fmt: skip
    ss.spans.extend([root, chat])
    req.resource_spans.append(rs)
    return req


def to_otlp_json(req: ExportTraceServiceRequest | ExportLogsServiceRequest) -> bytes:
    """OTLP/JSON as the spec has it: lowerCamelCase keys, hex ids (not base64), int enums."""
    obj = json_format.MessageToDict(req, use_integers_for_enums=True)
    _convert_ids(obj, ("traceId", "spanId", "parentSpanId"), lambda v: b64decode(v).hex())
    return json.dumps(obj).encode()


def _convert_ids(node: Any, keys: tuple[str, ...], convert: Callable[[str], str]) -> None:
    """Rewrite, in place, every string value under one of ``keys`` in a JSON tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in keys and isinstance(value, str):
                node[key] = convert(value)
            else:
                _convert_ids(value, keys, convert)
    elif isinstance(node, list):
        for item in node:
            _convert_ids(item, keys, convert)


def logs_request_from_json(path: Path) -> ExportLogsServiceRequest:
    """An OTLP/JSON logs file as a protobuf request (hex ids turned into bytes first)."""
    obj = json.loads(path.read_text())
    _convert_ids(obj, ("traceId", "spanId"), lambda v: b64encode(bytes.fromhex(v)).decode())
    return json_format.ParseDict(obj, ExportLogsServiceRequest())
