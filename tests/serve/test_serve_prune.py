"""``tracereplay prune`` while ``serve`` receives: both share the store through its lock, so the
server keeps acknowledging (retries on 503 as exporters do), its drains wait for the prune and
the compaction, and the store ends whole: no half-pruned trace, nothing acknowledged lost."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest
from serve_helpers import ServeProcess, agent_trace_request, cli, get, post

from tracereplay.store import Store

pytestmark = pytest.mark.slow

StartServer = Callable[..., ServeProcess]


def _post_until_200(server: ServeProcess, body: bytes) -> None:
    deadline = time.monotonic() + 120
    while (status := post(server, "/v1/traces", body).status) != 200:
        assert status in (429, 503) and time.monotonic() < deadline, status
        time.sleep(0.2)


def test_prune_while_serve_receives(start_server: StartServer) -> None:
    server = start_server("--no-grpc")
    for _ in range(200):  # traces of 2026-09-21: older than 30 days
        _post_until_200(server, agent_trace_request(os.urandom(16)).SerializeToString())
    deadline = time.monotonic() + 60
    while get(server, "/healthz").json()["spans_stored"] < 400:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    during: list[bytes] = []
    stop = threading.Event()

    def keep_posting() -> None:
        while not stop.is_set():
            trace = os.urandom(16)
            _post_until_200(server, agent_trace_request(trace).SerializeToString())
            during.append(trace)

    poster = threading.Thread(target=keep_posting)
    poster.start()
    try:
        result = cli(server.db, "prune", "--older-than", "30d")
    finally:
        stop.set()
        poster.join(timeout=180)
    assert result.returncode == 0, result.stderr
    assert during, "nothing was posted while prune ran"
    assert server.stop() == 0  # the last drain stores what is left
    with Store.open(server.db) as store:
        per_trace = store.query_dicts(
            "SELECT trace_id, count(*) AS n FROM spans GROUP BY trace_id HAVING n <> 2"
        )
        assert per_trace == []  # every trace whole: pruned whole or kept whole
        stored = {r["trace_id"] for r in store.query_dicts("SELECT trace_id FROM spans")}
    assert stored <= {t.hex() for t in during}  # what was there before prune is gone
    assert cli(server.db, "check").returncode == 0
