"""Durability: what was acknowledged survives ``kill -9``, and becomes queryable on restart."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub
from serve_helpers import ServeProcess, agent_trace_request, post, runs_json

from tracereplay.store import Store, spool
from tracereplay.store.lock import file_lock
from tracereplay.store.paths import lock_path, spool_dir

pytestmark = pytest.mark.slow

StartServer = Callable[..., ServeProcess]


def test_kill_9_right_after_acknowledgements_loses_nothing(
    start_server: StartServer, tmp_path: Path
) -> None:
    db = tmp_path / "durable.duckdb"
    server = start_server(db=db)
    requests = [agent_trace_request(os.urandom(16), service="durable") for _ in range(20)]
    # Keep the drainer out of the store, so every acknowledged span exists only in the spool
    # when the server dies.
    with file_lock(lock_path(db)):
        for req in requests[:10]:
            assert post(server, "/v1/traces", req.SerializeToString()).status == 200
        with grpc.insecure_channel(server.grpc_target) as channel:
            stub = TraceServiceStub(channel)
            for req in requests[10:]:
                stub.Export(req, timeout=30)
        server.kill9()
    assert not server.alive()
    segments = spool.list_segments(spool_dir(db))
    assert segments and all(not s.done for s in segments)  # cut off mid-segment, never closed
    with Store.open(db) as store:
        assert store.count("spans") == 0

    restarted = start_server(db=db)  # its drainer finds the dead server's segment
    deadline = time.monotonic() + 30
    while True:
        with Store.open(db) as store:  # no draining here: only the server's drainer stores
            if store.count("spans") == 2 * len(requests):
                break
        assert time.monotonic() < deadline, "the restarted server did not store the spool"
        time.sleep(0.2)
    trace_ids = {r.resource_spans[0].scope_spans[0].spans[0].trace_id.hex() for r in requests}
    runs = [r for r in runs_json(db) if r["service_name"] == "durable"]
    assert {r["trace_id"] for r in runs} == trace_ids
    assert restarted.stop() == 0
    with Store.open(db) as store:
        assert store.count("spans") == 2 * len(requests)
    assert not spool.list_segments(spool_dir(db))  # drained and retired
