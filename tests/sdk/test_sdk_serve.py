"""``configure(endpoint=...)`` against the real ``tracereplay serve``, over OTLP/HTTP and gRPC."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

import tracereplay

REPO = Path(__file__).resolve().parents[2]


@tracereplay.tool
def lookup(key: str) -> str:
    return key.upper()


def test_runs_exported_to_serve_over_http_and_grpc_are_listed(tmp_path: Path) -> None:
    db = tmp_path / "served.duckdb"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACEREPLAY_"))}
    env["PYTHONPATH"] = str(REPO)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tracereplay",
            "--db",
            str(db),
            "serve",
            "--http-port",
            "0",
            "--grpc-port",
            "0",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = []
        assert server.stdout is not None
        for line in server.stdout:
            banner.append(line)
            if line.strip() == "ready":
                break
        text = "".join(banner)
        http_url = re.search(r"OTLP/HTTP\s+(http://\S+)", text)
        grpc_addr = re.search(r"OTLP/gRPC\s+(\S+)", text)
        if not (http_url and grpc_addr):
            pytest.fail(
                f"unexpected serve banner: {text!r} {server.stderr.read() if server.poll() is not None else ''}"
            )
        ids = {}
        for protocol, endpoint in (
            ("http/protobuf", http_url.group(1)),
            ("grpc", f"http://{grpc_addr.group(1)}"),
        ):
            provider = TracerProvider(resource=Resource.create({"service.name": f"svc-{protocol}"}))
            tracereplay.configure(endpoint=endpoint, protocol=protocol, tracer_provider=provider)  # type: ignore[arg-type]
            with tracereplay.agent_run("served_agent", f"via {protocol}") as run:
                run.set_response(lookup(protocol))
                ids[run.run_id] = protocol
            assert tracereplay.flush()
            tracereplay.sdk.shutdown()
        listed = subprocess.run(
            [sys.executable, "-m", "tracereplay", "--db", str(db), "runs", "--format", "json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert listed.returncode == 0, listed.stderr
        runs = {r["run_id"]: r for r in json.loads(listed.stdout)}
        assert set(runs) == set(ids)
        for run_id, protocol in ids.items():
            assert runs[run_id]["service_name"] == f"svc-{protocol}"
            assert runs[run_id]["query"] == f"via {protocol}"
            assert runs[run_id]["tool_calls_count"] == 1
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
