"""Late-span detection reads what the batch needs, not the whole store: the lookup of a batch's
traces among the stored spans skips every row group outside its time window (DuckDB's zone
maps), so a store of old traffic costs it nothing. Counted with DuckDB's own profiler (rows
scanned), never timed. A late span and a repeated span are still found."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from late_spans import prefill

from tracereplay.ingest.pipeline import ingest_batch
from tracereplay.spans import Span
from tracereplay.store import Store
from tracereplay.store.db import TimeWindow
from tracereplay.store.engines.duckdb import ROW_GROUP_SIZE

DAY_NS = 86_400 * 10**9
OLD_SPANS = 400_000


def _span(trace_id: str, span_id: str, parent: str | None, name: str, start_ns: int) -> Span:
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "late"}
    if parent:
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather"}
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent or "",
        name=name,
        kind=1,
        start_ns=start_ns,
        end_ns=start_ns + 10**9,
        attributes=attrs,
        service_name="late",
        resource={"service.name": "late"},
    )


def _rows_scanned(store: Store, sql_call) -> int:  # type: ignore[no-untyped-def]
    out = Path(store.path).with_name("profile.json")
    store.con.execute("PRAGMA enable_profiling = 'json'")
    store.con.execute(f"PRAGMA profiling_output = '{out}'")
    try:
        sql_call()
    finally:
        store.con.execute("PRAGMA disable_profiling")
    return int(json.loads(out.read_text())["query"]["total_rows_scanned"])


def test_the_lookup_of_a_batchs_traces_skips_old_row_groups(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    now = time.time_ns()
    prefill(db, OLD_SPANS, now - 10 * DAY_NS)  # 40 to 10 days ago
    trace = f"{random.getrandbits(128):032x}"
    with Store.open(db) as store:
        everywhere = _rows_scanned(store, lambda: store.stored_trace_ids([trace]))
        windowed = _rows_scanned(
            store, lambda: store.stored_trace_ids([trace], TimeWindow.around(now, now))
        )
    # without a window the lookup reads (about) the whole store: DuckDB's count of rows
    # scanned varies a little with how its threads split the scan (383,616 of 400,000 seen
    # under load), so half the store is the bar
    assert everywhere >= OLD_SPANS // 2
    assert windowed <= ROW_GROUP_SIZE  # at most the one row group that has new rows


def test_late_and_repeated_spans_are_still_found_in_a_big_store(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    now = time.time_ns()
    prefill(db, 50_000, now - 10 * DAY_NS)
    trace = f"{random.getrandbits(128):032x}"
    root = _span(trace, "a" * 16, None, "invoke_agent late", now)
    child = _span(trace, "b" * 16, "a" * 16, "execute_tool get_weather", now + 10**8)
    late = _span(trace, "c" * 16, "a" * 16, "execute_tool get_weather", now + 3600 * 10**9)
    with Store.open(db) as store:
        with store.transaction():
            ingest_batch(store, [root, child])
        with store.transaction():  # an hour later: the late child, and a retry of the first
            stats = ingest_batch(store, [late, child])
        assert stats.new_spans == 1
        [run] = store.query_dicts(
            "SELECT run_id FROM runs WHERE trace_id = ?", [trace]
        )  # converted again, once
        calls = store.query_dicts(
            "SELECT count(*) AS n FROM tool_calls WHERE run_id = ?", [run["run_id"]]
        )
        assert calls == [{"n": 2}]
