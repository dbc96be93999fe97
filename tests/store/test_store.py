"""The DuckDB store: migrations, idempotent inserts, run replacement, id resolution, locking."""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

import duckdb
import pytest

from tracereplay.errors import AmbiguousIdError, NotFoundError, StoreBusyError, StoreError
from tracereplay.models import AgentResult, Document, LlmCall, Run, ToolCallRecord
from tracereplay.spans import LogRecord, Span
from tracereplay.store import Store, resolve_db_path, schema
from tracereplay.store.engines.duckdb import DuckDBConnection, DuckDBEngine
from tracereplay.store.lock import file_lock
from tracereplay.store.paths import lock_path


def _store_on(con: duckdb.DuckDBPyConnection, path: Path) -> Store:
    """A ``Store`` on a file opened with plain DuckDB (to migrate it to an old version)."""
    return Store(DuckDBEngine(DuckDBConnection(con), path))


def _span(trace: str, span: str, parent: str = "", **kw) -> Span:
    return Span(trace, span, parent, kw.pop("name", "s"), 1, 1_000_000_000, 2_000_000_000, **kw)


def _run(trace: str, root: str, run_id: str, **kw) -> Run:
    return Run(
        run_id=run_id,
        trace_id=trace,
        root_span_id=root,
        agent_name="agent",
        query="what?",
        context=[Document(name="doc", content="text")],
        parameters={"city": "Paris"},
        result=AgentResult(
            response="answer",
            tool_calls=[
                ToolCallRecord(round=1, tool_name="t", arguments={"a": 1}, result="r"),
                ToolCallRecord(round=1, tool_name="u", error="boom"),
            ],
            total_rounds=2,
            total_llm_calls=2,
        ),
        llm_calls=[LlmCall(round=1, model="m", input_tokens=3, output_tokens=4)],
        **kw,
    )


def test_db_path_resolution(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRACEREPLAY_DB", raising=False)
    assert resolve_db_path(None) == tmp_path / "tracereplay.duckdb"
    monkeypatch.setenv("TRACEREPLAY_DB", "env.duckdb")
    assert resolve_db_path(None) == tmp_path / "env.duckdb"
    assert resolve_db_path("arg.duckdb") == tmp_path / "arg.duckdb"


def test_spans_are_stored_once(tmp_path: Path) -> None:
    spans = [
        _span("a" * 32, "b" * 16, attributes={"k": [1, "x"]}),
        _span("a" * 32, "c" * 16, "b" * 16),
    ]
    with Store.open(tmp_path / "t.duckdb") as store:
        assert store.insert_spans(spans) == 2
        assert store.insert_spans(spans + spans) == 0
        assert store.count("spans") == 2
        row = store.query_dicts(
            "SELECT kind, status_code, attributes->>'$.k[1]' AS k FROM spans LIMIT 1"
        )[0]
        assert row == {"kind": "INTERNAL", "status_code": "UNSET", "k": "x"}
        assert {s.span_id for s in store.load_spans(["a" * 32])} == {"b" * 16, "c" * 16}


def test_logs_are_stored_once(tmp_path: Path) -> None:
    logs = [LogRecord("a" * 32, "b" * 16, 5, "gen_ai.user.message", {"content": "hi"})]
    with Store.open(tmp_path / "t.duckdb") as store:
        assert store.insert_logs(logs) == 1
        assert store.insert_logs(logs) == 0
        assert store.load_logs(["a" * 32])[0].body == {"content": "hi"}


def test_a_span_twice_in_one_insert_keeps_its_first_copy(tmp_path: Path) -> None:
    first, second = _span("a" * 32, "b" * 16, name="first"), _span("a" * 32, "b" * 16, name="x")
    other = _span("d" * 32, "e" * 16)
    with Store.open(tmp_path / "t.duckdb") as store:
        assert store.insert_spans([first, other, second]) == 2
        assert store.insert_spans([other, _span("d" * 32, "f" * 16)]) == 1
        assert store.query_dicts("SELECT name FROM spans WHERE span_id = ?", ["b" * 16]) == [
            {"name": "first"}
        ]


def test_logs_without_a_trace_are_stored_once_too(tmp_path: Path) -> None:
    loose = LogRecord("", "", 7, "app.started", {"version": 2})
    traced = LogRecord("a" * 32, "b" * 16, 5, "gen_ai.user.message", {"content": "hi"})
    with Store.open(tmp_path / "t.duckdb") as store:
        assert store.insert_logs([loose, traced, loose]) == 2
        assert store.insert_logs([traced, loose, LogRecord("", "", 8, "app.stopped")]) == 1
        assert store.count("logs") == 3


def test_replace_runs_round_trips_and_replaces(tmp_path: Path) -> None:
    run = _run("a" * 32, "b" * 16, "11111111-0000-0000-0000-000000000000")
    with Store.open(tmp_path / "t.duckdb") as store:
        store.replace_runs([run.trace_id], [run])
        assert store.get_run(run.run_id) == run
        assert store.count("tool_calls") == 2 and store.count("llm_calls") == 1
        store.replace_runs([run.trace_id], [])
        assert store.count("runs") == store.count("tool_calls") == store.count("llm_calls") == 0


def test_run_ids_resolve_by_prefix_and_trace(tmp_path: Path) -> None:
    r1 = _run("a" * 32, "b" * 16, "12345678-aaaa-0000-0000-000000000000")
    r2 = _run("a" * 32, "c" * 16, "12345678-bbbb-0000-0000-000000000000")
    r3 = _run("d" * 32, "e" * 16, "99999999-0000-0000-0000-000000000000")
    with Store.open(tmp_path / "t.duckdb") as store:
        store.replace_runs([], [r1, r2, r3])
        assert store.resolve_run_id("12345678-a") == r1.run_id
        assert store.resolve_run_id("9") == r3.run_id
        assert store.resolve_run_id("d" * 32) == r3.run_id
        with pytest.raises(AmbiguousIdError):
            store.resolve_run_id("1234")
        with pytest.raises(AmbiguousIdError, match="holds 2 runs"):
            store.resolve_run_id("a" * 32)
        with pytest.raises(NotFoundError):
            store.resolve_run_id("ffff")


def test_a_new_file_takes_every_migration_in_one_transaction(tmp_path: Path) -> None:
    with Store.open(tmp_path / "new.duckdb") as store:
        rows = store.con.execute(
            "SELECT version, applied_at FROM schema_migrations ORDER BY version"
        ).fetchall()
    assert [v for v, _ in rows] == [m[0] for m in schema.migrations()]
    assert len({at for _, at in rows}) == 1  # current_timestamp: the transaction's start


def test_old_file_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    assert schema.migrate(_store_on(con, path), target=1) == 1
    con.execute("INSERT INTO spans (trace_id, span_id, name) VALUES ('t', 's', 'kept')")
    con.close()
    with Store.open(path) as store:
        assert schema.current_version(store.con) == schema.LATEST_VERSION
        assert store.query_dicts("SELECT name FROM spans") == [{"name": "kept"}]


def test_versions_5_and_6_keep_rows_and_drop_keys_nothing_needs(tmp_path: Path) -> None:
    path = tmp_path / "v4.duckdb"
    con = duckdb.connect(str(path))
    assert schema.migrate(_store_on(con, path), target=4) == 4
    con.execute("INSERT INTO tool_calls (run_id, position, tool_name) VALUES ('r', 0, 'get')")
    con.execute("INSERT INTO llm_calls (run_id, round, model) VALUES ('r', 1, 'gpt')")
    con.execute(
        "INSERT INTO eval_runs (eval_run_id, suite_id, suite_name, mode, started_at, status)"
        " VALUES ('e', 's', 'suite', 'recorded', now(), 'completed')"
    )
    con.execute(
        "INSERT INTO case_results (eval_run_id, case_id, repetition, status, reason)"
        " VALUES ('e', 'c', 0, 'PASSED', 'all 1 checks passed')"
    )
    con.execute(
        "INSERT INTO check_results (eval_run_id, case_id, repetition, position, check_name,"
        " check_kind, status, passed) VALUES ('e', 'c', 0, 0, 'status', 'status', 'PASSED', true)"
    )
    con.close()
    with Store.open(path) as store:
        assert store.query_dicts("SELECT case_id, attempts, reason FROM case_results") == [
            {"case_id": "c", "attempts": 1, "reason": "all 1 checks passed"}
        ]
        assert store.query_dicts("SELECT check_name, passed FROM check_results") == [
            {"check_name": "status", "passed": True}
        ]
        keys = store.query_dicts(
            "SELECT table_name FROM duckdb_constraints()"
            " WHERE constraint_type = 'PRIMARY KEY'"
            " AND table_name IN ('case_results', 'check_results', 'tool_calls', 'llm_calls')"
        )
        assert keys == []
        assert store.query_dicts("SELECT tool_name FROM tool_calls") == [{"tool_name": "get"}]
        assert store.query_dicts("SELECT model FROM llm_calls") == [{"model": "gpt"}]
        # the views over them still bind
        assert store.query_dicts("SELECT count(*) AS n FROM case_history") == [{"n": 1}]


def test_version_7_keeps_spans_logs_and_runs_without_their_key_indexes(tmp_path: Path) -> None:
    """The keys' indexes made a write's memory grow with the store; duplicates are still
    skipped without them."""
    path = tmp_path / "v6.duckdb"
    con = duckdb.connect(str(path))
    assert schema.migrate(_store_on(con, path), target=6) == 6
    con.execute(
        "INSERT INTO spans (trace_id, span_id, name) VALUES (?, ?, 'kept')", ["a" * 32, "b" * 16]
    )
    con.execute("INSERT INTO logs (log_id, trace_id, event_name) VALUES ('l', ?, 'e')", ["a" * 32])
    con.execute(
        "INSERT INTO runs (run_id, trace_id, root_span_id, agent_name) VALUES ('r', ?, ?, 'bot')",
        ["a" * 32, "b" * 16],
    )
    con.close()
    with Store.open(path) as store:
        assert schema.current_version(store.con) == schema.LATEST_VERSION
        keys = store.query_dicts(
            "SELECT table_name FROM duckdb_constraints() WHERE constraint_type IN"
            " ('PRIMARY KEY', 'UNIQUE') AND table_name IN ('spans', 'logs', 'runs')"
        )
        assert keys == []
        assert store.query_dicts("SELECT name FROM spans") == [{"name": "kept"}]
        assert store.query_dicts("SELECT log_id, event_name FROM logs") == [
            {"log_id": "l", "event_name": "e"}
        ]
        assert store.resolve_run_id("r") == "r"
        assert store.insert_spans([_span("a" * 32, "b" * 16), _span("a" * 32, "c" * 16)]) == 1
        # the views over them still bind
        assert store.query_dicts("SELECT agent_name FROM run_summary") == [{"agent_name": "bot"}]


def test_a_file_with_default_row_groups_takes_new_rows(tmp_path: Path) -> None:
    """A store written with DuckDB's own row group size (an older tracereplay, or plain
    ``duckdb.connect``), its last row group bigger than ours, still takes inserts and deletes."""
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    schema.migrate(_store_on(con, path))
    con.execute(
        "INSERT INTO spans (trace_id, span_id, name)"
        " SELECT printf('%032x', i), printf('%016x', i + 1), 'old' FROM range(40000) t(i)"
    )
    con.close()
    with Store.open(path) as store, store.transaction():
        assert store.insert_spans([_span("f" * 32, f"{i + 1:016x}") for i in range(3)]) == 3
        store.con.execute("DELETE FROM spans WHERE name = 'old' AND span_id LIKE '%7'")
    with Store.open(path) as store:
        assert store.count("spans") == 40003 - 2500
        # the file keeps its usual catalog name (queries naming it still work)
        assert store.query_dicts("SELECT current_database() AS db") == [{"db": "old"}]


def test_not_a_duckdb_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.duckdb"
    path.write_text("this is not a database")
    with pytest.raises(StoreError, match="cannot open"), Store.open(path):
        pass


def _hold_lock(path: str, seconds: float, ready) -> None:
    with file_lock(Path(path)):
        ready.set()
        time.sleep(seconds)


def test_lock_waits_then_times_out_with_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(lock_path(db)), 3.0, ready))
    holder.start()
    try:
        assert ready.wait(20)
        with pytest.raises(StoreBusyError, match="busy"), Store.open(db, timeout=0.3):
            pass
        with Store.open(db, timeout=30) as store:  # waits for the holder to let go
            assert store.count("spans") == 0
    finally:
        holder.join()


def _insert_spans(db: str, worker: int, n: int) -> None:
    for i in range(n):
        with Store.open(db) as store:
            store.insert_spans([_span(f"{worker:032x}", f"{i + 1:016x}")])


@pytest.mark.slow
def test_many_processes_write_the_store_without_lock_failures(tmp_path: Path) -> None:
    db = str(tmp_path / "t.duckdb")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_insert_spans, args=(db, w, 15)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    with Store.open(db) as store:
        assert store.count("spans") == 60


def test_settings_apply_for_the_block_and_are_put_back(tmp_path: Path) -> None:
    with Store.open(tmp_path / "t.duckdb") as store:

        def current() -> list[tuple]:
            return store.con.execute(
                "SELECT current_setting('threads'), current_setting('checkpoint_threshold')"
            ).fetchall()

        before = current()
        with store.settings(threads=1, checkpoint_threshold="0KB"):
            assert current()[0][0] == 1
            assert current()[0][1] in ("0 bytes", "0B", "0.0 B", "0 B")
        assert current() == before
        with pytest.raises(RuntimeError), store.settings(threads=1):
            raise RuntimeError("the block failed")
        assert current() == before


def test_version_8_scores_error_cases_0_in_stored_scores_and_aggregates(tmp_path: Path) -> None:
    """Before version 8 an ERROR case had no score and was left out of the eval run's
    aggregate_score ("score 1.000" on a regressed eval); it now counts 0 everywhere."""
    path = tmp_path / "v7.duckdb"
    con = duckdb.connect(str(path))
    assert schema.migrate(_store_on(con, path), target=7) == 7
    con.execute(
        "INSERT INTO eval_runs (eval_run_id, suite_id, suite_name, mode, started_at, status,"
        " total_cases, passed, errored, pass_rate, aggregate_score)"
        " VALUES ('e', 's', 'suite', 'recorded', now(), 'completed', 2, 1, 1, 0.5, 1.0)"
    )
    con.execute(
        "INSERT INTO case_results (eval_run_id, case_id, repetition, status, score) VALUES"
        " ('e', 'ok', 0, 'PASSED', 1.0), ('e', 'bad', 0, 'ERROR', NULL),"
        " ('e', 'bad', 1, 'ERROR', 1.0)"
    )
    con.close()
    with Store.open(path) as store:
        assert schema.current_version(store.con) == schema.LATEST_VERSION
        scores = store.query_dicts("SELECT DISTINCT score FROM case_results WHERE case_id = 'bad'")
        assert scores == [{"score": 0.0}]
        [run] = store.query_dicts("SELECT aggregate_score FROM eval_runs")
        assert run["aggregate_score"] == 0.5
        [trend] = store.query_dicts("SELECT pass_rate, aggregate_score FROM suite_trend")
        assert trend == {"pass_rate": 0.5, "aggregate_score": 0.5}
