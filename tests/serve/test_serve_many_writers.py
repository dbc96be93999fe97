"""Two ``tracereplay serve`` instances (two machines: each its own local spool) writing into one
PostgreSQL database: every trace split across them is converted whole wherever its late span
lands, and a span both receive (an exporter's retry) is stored once, a run never twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from serve_helpers import agent_trace_request, post

pytestmark = pytest.mark.slow

TRACES = 24


def _halves(trace_id: bytes) -> tuple[bytes, bytes]:
    """The agent root in one request, its chat child in another (the late span)."""
    whole = agent_trace_request(trace_id)
    root_only, child_only = ExportTraceServiceRequest(), ExportTraceServiceRequest()
    root_only.CopyFrom(whole)
    child_only.CopyFrom(whole)
    del root_only.resource_spans[0].scope_spans[0].spans[1]
    del child_only.resource_spans[0].scope_spans[0].spans[0]
    return root_only.SerializeToString(), child_only.SerializeToString()


def _runs(url: str, env: dict[str, str]) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--store", url, "runs", "--format", "json",
         "--limit", "1000"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_two_serve_instances_share_one_history(start_server, pg_url: str, tmp_path) -> None:
    servers = [
        start_server(db=pg_url, env={"TRACEREPLAY_LOCAL_DIR": str(tmp_path / f"machine{i}")})
        for i in (0, 1)
    ]
    ids = [os.urandom(16) for _ in range(TRACES)]

    def send(i: int, trace_id: bytes) -> None:
        first, late = _halves(trace_id)
        a, b = servers[i % 2], servers[(i + 1) % 2]
        assert post(a, "/v1/traces", first).status == 200
        assert post(b, "/v1/traces", late).status == 200  # lands on the other instance
        if i % 4 == 0:  # a retry of both halves, to both instances
            for server in servers:
                assert post(server, "/v1/traces", first + b"").status == 200
                assert post(server, "/v1/traces", late).status == 200

    threads = [threading.Thread(target=send, args=(i, t)) for i, t in enumerate(ids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    env = {**os.environ, "TRACEREPLAY_LOCAL_DIR": str(tmp_path / "reader")}
    deadline = time.monotonic() + 90
    while True:
        runs = _runs(pg_url, env)
        whole = [r for r in runs if r["total_llm_calls"] == 1]
        if len(whole) == TRACES or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert sorted(r["trace_id"] for r in runs) == sorted(t.hex() for t in ids)  # one run each
    assert len(whole) == TRACES, [r for r in runs if r["total_llm_calls"] != 1][:3]
    spans = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--store", pg_url, "sql",
         "SELECT count(*) AS n, count(DISTINCT trace_id || span_id) AS d FROM spans",
         "--format", "json"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert json.loads(spans.stdout) == [{"n": 2 * TRACES, "d": 2 * TRACES}]
