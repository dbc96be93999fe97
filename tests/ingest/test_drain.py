"""Spool -> DuckDB: read-your-writes, exactly-once draining, many writers and readers at once."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path

import synth  # noqa: E402

from tracereplay.ingest import drain_spool
from tracereplay.store import SpoolWriter, Store, spool_dir
from tracereplay.store.open import open_store
from tracereplay.store.spool import KIND_LOGS_JSON, KIND_TRACES_JSON, KIND_TRACES_PB, list_segments

FIXTURES = Path(__file__).parent.parent / "fixtures" / "otlp"


def _payloads(n_traces: int, per_request: int, seed: int) -> list[bytes]:
    return [r.SerializeToString() for r in synth.requests(n_traces, per_request, seed=seed)]


def test_drain_stores_everything_once_and_retires_segments(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    writer = SpoolWriter(spool_dir(db))
    for payload in _payloads(6, 2, seed=1):
        writer.append(KIND_TRACES_PB, payload)
    with open_store(db) as store:  # opening drains
        assert store.count("runs") == 6
        assert store.count("spans") == 6 * synth.SPANS_PER_TRACE
        again = drain_spool(store)
        assert again.spans == 0  # offsets remembered: nothing read twice
    writer.close()
    with open_store(db) as store:
        assert store.count("runs") == 6
    assert list_segments(spool_dir(db)) == []  # finished and drained: gone


def test_json_traces_and_logs_records_drain(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    writer = SpoolWriter(spool_dir(db))
    writer.append(
        KIND_TRACES_JSON,
        (FIXTURES / "generated-otel-genai-v1.36-default__chat_spans.json").read_bytes(),
    )
    writer.append(
        KIND_LOGS_JSON,
        (FIXTURES / "generated-otel-genai-v1.36-default__events.logs.json").read_bytes(),
    )
    writer.close()
    with open_store(db) as store:
        run = store.get_run(store.query_dicts("SELECT run_id FROM runs")[0]["run_id"])
        assert run.query.startswith("What's the weather")
        assert store.count("logs") > 0


def test_a_trace_split_across_writes_converts_whole(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    [request] = list(synth.requests(1, 1, seed=3))
    spans = list(request.resource_spans[0].scope_spans[0].spans)
    writer = SpoolWriter(spool_dir(db))
    children, root = spans[1:], spans[0]
    del request.resource_spans[0].scope_spans[0].spans[:]
    request.resource_spans[0].scope_spans[0].spans.extend(children)
    writer.append(KIND_TRACES_PB, request.SerializeToString())
    with open_store(db) as store:
        assert store.count("runs") == 1  # rooted at its top span for now
        assert store.query_dicts("SELECT agent_name FROM runs")[0]["agent_name"] != "weather_agent"
    del request.resource_spans[0].scope_spans[0].spans[:]
    request.resource_spans[0].scope_spans[0].spans.append(root)  # the root ends last
    writer.append(KIND_TRACES_PB, request.SerializeToString())
    with open_store(db) as store:
        [row] = store.query_dicts("SELECT agent_name, tool_calls_count, total_llm_calls FROM runs")
        assert row == {"agent_name": "weather_agent", "tool_calls_count": 5, "total_llm_calls": 4}


def _agent_process(db: str, seed: int, n_requests: int) -> None:
    writer = SpoolWriter(spool_dir(Path(db)))
    for payload in _payloads(n_requests * 2, 2, seed=seed):
        writer.append(KIND_TRACES_PB, payload)
        time.sleep(0.01)
    writer.close()


def _reader_process(db: str, seconds: float, out) -> None:
    deadline = time.monotonic() + seconds
    seen = 0
    while time.monotonic() < deadline:
        with open_store(db) as store:
            seen = max(seen, store.count("runs"))
    out.put(seen)


def test_writers_and_readers_at_once_lose_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "t.duckdb")
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    writers = [ctx.Process(target=_agent_process, args=(db, seed, 15)) for seed in (11, 12, 13)]
    readers = [ctx.Process(target=_reader_process, args=(db, 2.0, out)) for _ in range(2)]
    for p in writers + readers:
        p.start()
    for p in writers + readers:
        p.join(60)
        assert p.exitcode == 0
    assert all(out.get(timeout=5) >= 0 for _ in readers)
    with open_store(db) as store:
        assert store.count("runs") == 3 * 15 * 2
        assert store.count("spans") == 3 * 15 * 2 * synth.SPANS_PER_TRACE
    assert list_segments(spool_dir(Path(db))) == []


def test_a_killed_writer_leaves_nothing_behind(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    pid = os.fork()
    if pid == 0:  # child: write, never close, die hard
        writer = SpoolWriter(spool_dir(db))
        for payload in _payloads(4, 2, seed=5):
            writer.append(KIND_TRACES_PB, payload)
        os._exit(0)
    os.waitpid(pid, 0)
    with Store.open(db) as store:
        drain_spool(store)
        assert store.count("runs") == 4
    assert list_segments(spool_dir(db)) == []
