"""The store interface on both engines: the same calls, the same rows, on a DuckDB file and on
a real PostgreSQL server (``tests/postgres_server.py``)."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from tracereplay.errors import AmbiguousIdError, NotFoundError, StoreError
from tracereplay.models import AgentResult, LlmCall, Run, ToolCallRecord
from tracereplay.spans import LogRecord, Span
from tracereplay.store import Store, schema
from tracereplay.store import runs as run_store
from tracereplay.store.errors import ReadOnlyTransactionError
from tracereplay.store.paths import StoreUrl, resolve_db_path


def _span(trace: str, span: str, parent: str = "", **kw) -> Span:
    return Span(trace, span, parent, kw.pop("name", "s"), 1, 1_000_000_000, 2_000_000_000, **kw)


def _run(trace: str, run_id: str) -> Run:
    return Run(
        run_id=run_id,
        trace_id=trace,
        root_span_id="b" * 16,
        agent_name="agent",
        query="what?",
        parameters={"city": "Paris"},
        result=AgentResult(
            response="answer",
            tool_calls=[ToolCallRecord(round=1, tool_name="t", arguments={"a": 1}, result="r")],
            total_rounds=1,
            total_llm_calls=1,
        ),
        llm_calls=[LlmCall(round=1, model="m", input_tokens=3, output_tokens=4)],
    )


def test_migrations_reach_the_same_version_with_the_same_tables(store_target: str) -> None:
    with Store.open(store_target) as store:
        assert schema.current_version(store.con) == schema.LATEST_VERSION
        for view in ("score_history", "case_history", "suite_trend", "tool_usage", "run_summary"):
            assert store.query_dicts(f"SELECT * FROM {view} LIMIT 1") == []
    with Store.open(store_target) as store:  # opening again migrates nothing
        assert schema.current_version(store.con) == schema.LATEST_VERSION


def test_spans_and_logs_are_stored_once(store_target: str) -> None:
    spans = [_span("a" * 32, "b" * 16, attributes={"k": [1, "x"]}), _span("a" * 32, "c" * 16)]
    log = LogRecord(trace_id="a" * 32, span_id="b" * 16, time_ns=5, event_name="e", body={"x": 1})
    with Store.open(store_target) as store:
        with store.transaction():
            assert store.insert_spans(spans) == 2
            assert store.insert_spans(spans + spans) == 0
            assert store.insert_logs([log, log]) == 1
            assert store.insert_logs([log]) == 0
        assert store.count("spans") == 2 and store.count("logs") == 1
        [loaded, _] = store.load_spans(["a" * 32])
        assert loaded.attributes == {"k": [1, "x"]}
        assert store.load_logs(["a" * 32])[0].body == {"x": 1}


def test_runs_are_replaced_and_resolved(store_target: str) -> None:
    trace = "d" * 32
    with Store.open(store_target) as store:
        with store.transaction():
            store.insert_spans([_span(trace, "b" * 16)])
            store.replace_runs([trace], [_run(trace, "run-1")])
            store.replace_runs([trace], [_run(trace, "run-1"), _run(trace, "run-2")])
        assert store.count("runs") == 2 and store.count("tool_calls") == 2
        run = store.get_run("run-1")
        assert run.parameters == {"city": "Paris"} and run.llm_calls[0].input_tokens == 3
        assert run.result.tool_calls[0].arguments == {"a": 1}
        with pytest.raises(AmbiguousIdError):
            store.resolve_run_id("run")
        with pytest.raises(NotFoundError):
            store.resolve_run_id("nothing")


def test_shared_prefixes_are_the_same_on_both_engines(store_target: str) -> None:
    """The prefix lookups of ``runs`` and ``diff`` (``short_ids``): ids that share 8, 12 or no
    characters; PostgreSQL looks each prefix up in its bytewise index, whatever the database's
    collation (a hyphen is where a collation ordering by letters first would split a range)."""
    ids = ["3f2a9c1e-aaaa-1", "3f2a9c1e-aaab-2", "3f2a9c1f-0000-3", "3f2a9c1e-aaaa-4", "77777777"]
    runs = [_run(f"{i:032x}", run_id) for i, run_id in enumerate(ids, 1)]
    with Store.open(store_target) as store:
        with store.transaction():
            store.replace_runs([r.trace_id for r in runs], runs)
        assert store.shared_prefixes("runs", "run_id", ["3f2a9c1e", "3f2a9c1f", "77777777"]) == {
            "3f2a9c1e"
        }
        assert store.shared_prefixes("runs", "run_id", ["3f2a9c1e-aaa", "3f2a9c1e-aab"]) == {
            "3f2a9c1e-aaa"
        }
        assert store.shared_prefixes("runs", "run_id", ["3f2a9c1e-aaaa-"]) == {"3f2a9c1e-aaaa-"}
        assert store.shared_prefixes("runs", "run_id", ["zzzzzzzz"]) == set()
        assert store.shared_prefixes("runs", "run_id", []) == set()


def test_a_failed_transaction_leaves_nothing(store_target: str) -> None:
    with Store.open(store_target) as store:
        with pytest.raises(RuntimeError), store.transaction():
            store.insert_spans([_span("e" * 32, "b" * 16)])
            raise RuntimeError("boom")
        assert store.count("spans") == 0
        with store.transaction() as tx:
            store.insert_spans([_span("e" * 32, "b" * 16)])
            tx.commit()
            store.insert_spans([_span("e" * 32, "c" * 16)])
            tx.rollback()
        assert store.count("spans") == 1
        with store.transaction(read_only=True), pytest.raises(ReadOnlyTransactionError):
            store.insert_spans([_span("f" * 32, "b" * 16)])


def test_a_server_url_resolves_to_a_store_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACEREPLAY_STORE", "postgresql://u:secret@db.example:6543/hist")
    target = resolve_db_path(None)
    assert isinstance(target, StoreUrl) and str(target).endswith("/hist")
    assert "secret" not in target.shown
    assert target.with_name(target.name + ".spool").parent == target.anchor.parent


def test_an_unreachable_server_is_one_line(tmp_path) -> None:
    with (
        pytest.raises(StoreError, match="cannot connect to postgresql://u:\\*\\*\\*@"),
        Store.open("postgresql://u:pw@127.0.0.1:1/nothing"),
    ):
        pass


def test_without_the_extra_a_server_store_names_it(tmp_path) -> None:
    """psycopg not importable (as without ``tracereplay[postgres]``): one line naming the extra."""
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from tracereplay.cli.app import main\n"
        "sys.argv = ['tracereplay', '--store', 'postgresql://u@127.0.0.1:1/d', 'runs']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: a PostgreSQL store needs the 'postgres' extra: pip install 'tracereplay[postgres]'"
        " (missing: psycopg)"
    ]


def test_without_sqlglot_a_server_store_names_the_extra(tmp_path) -> None:
    """sqlglot (the dialect, part of ``tracereplay[postgres]``) missing: the same one line."""
    code = (
        "import sys; sys.modules['sqlglot'] = None\n"
        "from tracereplay.cli.app import main\n"
        "sys.argv = ['tracereplay', '--store', 'postgresql://u@127.0.0.1:1/d', 'runs']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: a PostgreSQL store needs the 'postgres' extra: pip install 'tracereplay[postgres]'"
        " (missing: sqlglot)"
    ]


def test_a_write_touching_many_traces_fits_the_servers_lock_table(pg_url: str) -> None:
    """A big file ingested whole touches tens of thousands of traces: one lock, not one each
    (PostgreSQL's lock table ran out: "out of shared memory")."""
    with Store.open(pg_url) as store:
        with store.transaction():
            store.lock([f"trace:{i:032x}" for i in range(20_000)])
            store.lock([f"trace:{i:032x}" for i in range(5)])
        with store.transaction():
            store.lock([f"suite:{i}" for i in range(200)])


def _dashboard_runs() -> list[Run]:
    """Two agents' live runs over two days, a replay run and a live run before the window."""
    day1, day2 = datetime(2026, 3, 1, 9, tzinfo=UTC), datetime(2026, 3, 2, 23, tzinfo=UTC)

    def run(n: int, agent: str, at: datetime, ms: float, calls: list[str | None], **kw) -> Run:
        tools = [ToolCallRecord(round=1, tool_name="t", error=e) for e in calls]
        return Run(
            run_id=f"run-{n}", trace_id=f"{n:032x}", root_span_id="b" * 16, agent_name=agent,
            started_at=at, duration_ms=ms, input_tokens=n, output_tokens=10,
            result=AgentResult(tool_calls=tools, status=kw.pop("status", "success")), **kw,
        )  # fmt: skip

    return [
        run(1, "a", day1, 100.0, [None, "boom"]),
        run(2, "a", day1, 200.0, [None], status="failed"),
        run(3, "a", day1, 300.0, []),
        run(4, "b", day2, 50.0, ["bad", "worse", None]),
        run(5, "b", day2, 70.0, ["replayed"], kind="replay"),
        run(6, "a", day1 - timedelta(days=3), 10.0, ["too old"]),
    ]


def test_the_dashboard_reads_are_the_same_on_both_engines(store_target: str) -> None:
    """The dashboard's per day and per agent rows (failed tool calls among them, from each
    run's ``tool_errors_count``) and agent picker, whose reads PostgreSQL serves from the
    indexes of migrations 0018 and 0021."""
    runs = _dashboard_runs()
    since, until = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC)
    with Store.open(store_target) as store:
        with store.transaction():
            store.replace_runs([r.trace_id for r in runs], runs)
        with store.transaction(read_only=True):
            days, agents = run_store.live_window(store, since, until)
            of_b, agents_again = run_store.live_window(store, since, until, "b")
            picker = run_store.live_agents(store)
    assert days == [
        {"day": date(2026, 3, 1), "runs": 3, "failures": 1, "p50_ms": 200.0, "p95_ms": 290.0,
         "tokens": 36, "tool_calls": 3, "tool_errors": 1},
        {"day": date(2026, 3, 2), "runs": 1, "failures": 0, "p50_ms": 50.0, "p95_ms": 50.0,
         "tokens": 14, "tool_calls": 3, "tool_errors": 2},
    ]  # fmt: skip
    assert agents == [
        {"agent_name": "a", "runs": 3, "failure_rate": 1 / 3, "p50_ms": 200.0, "p95_ms": 290.0,
         "tokens_per_run": 12.0, "tool_calls": 3, "tool_errors": 1},
        {"agent_name": "b", "runs": 1, "failure_rate": 0.0, "p50_ms": 50.0, "p95_ms": 50.0,
         "tokens_per_run": 14.0, "tool_calls": 3, "tool_errors": 2},
    ]  # fmt: skip
    assert of_b == days[1:] and agents_again == agents  # the agents' table: every agent
    assert picker == ["a", "b"]


def test_settings_are_each_engines_own_and_put_back(store_target: str) -> None:
    """``store.settings`` changes the settings the engine has for the block (PostgreSQL's
    ``work_mem``, in the transaction it is in; DuckDB's ``threads``) and puts them back; a
    name the engine has not is left alone, so one call serves both engines."""
    server = "://" in store_target
    name = "work_mem" if server else "threads"
    with Store.open(store_target) as store:
        [(before,)] = store.con.execute(f"SELECT current_setting('{name}')").fetchall()
        wanted = "64MB" if server else str(int(before) + 1)  # not the value it has
        with store.transaction(read_only=True):
            with store.settings(work_mem="64MB", threads=3 if server else int(wanted)):
                [(during,)] = store.con.execute(f"SELECT current_setting('{name}')").fetchall()
            [(after,)] = store.con.execute(f"SELECT current_setting('{name}')").fetchall()
        [(outside,)] = store.con.execute(f"SELECT current_setting('{name}')").fetchall()
    assert str(during) == wanted != str(before)
    assert str(after) == str(outside) == str(before)


def test_runs_stored_before_version_21_get_their_failed_tool_calls_counted(
    store_target: str,
) -> None:
    """Migration 0021 counts the failed tool calls of the runs already stored
    (``tool_errors_count``), on both engines: a run without any gets 0, as runs written
    since do (``tool_calls`` rows with an error, counted when the run is built)."""
    with Store.open(store_target, damaged_ok=True) as store:  # damaged_ok: no migration
        assert schema.migrate(store, target=20) == 20
        with store.transaction():
            store.con.execute(
                "INSERT INTO runs (run_id, trace_id, root_span_id, kind, tool_calls_count)"
                " VALUES ('r1', 't1', 's', 'live', 3), ('r2', 't2', 's', 'live', 1),"
                " ('r3', 't3', 's', 'live', 0)"
            )
            store.con.execute(
                "INSERT INTO tool_calls (run_id, position, trace_id, round, tool_name, error)"
                " VALUES ('r1', 0, 't1', 1, 'a', 'boom'), ('r1', 1, 't1', 1, 'a', NULL),"
                " ('r1', 2, 't1', 2, 'b', 'bad'), ('r2', 0, 't2', 1, 'a', NULL)"
            )
    with Store.open(store_target) as store:
        assert schema.current_version(store.con) == schema.LATEST_VERSION
        counted = store.con.execute(
            "SELECT run_id, tool_errors_count FROM runs ORDER BY run_id"
        ).fetchall()
        assert [tuple(r) for r in counted] == [("r1", 2), ("r2", 0), ("r3", 0)]
        runs = _dashboard_runs()
        with store.transaction():
            store.replace_runs([r.trace_id for r in runs], runs)
        built = store.con.execute(
            "SELECT r.run_id, r.tool_errors_count, count(t.error) FROM runs AS r"
            " LEFT JOIN tool_calls AS t ON t.run_id = r.run_id WHERE r.run_id LIKE 'run-%'"
            " GROUP BY 1, 2 ORDER BY 1"
        ).fetchall()
        assert [r[1] for r in built] == [r[2] for r in built] == [1, 0, 0, 2, 1, 1]


def test_the_dashboard_reads_postgres_indexes_only(pg_url: str) -> None:
    """On a store of runs as wide as real ones (a query, a response), the dashboard's reads are
    index-only scans of 0021's index of live runs (the agent picker: ``run_counts``, 0020),
    never of the
    table's rows, which made the page grow with
    the store: a column added to a read and not to its index, or a filter its partial index
    does not imply, fails here."""
    since, until = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC)
    with Store.open(pg_url) as store:
        # committed durably: a VACUUM marks the pages all-visible (as autovacuum leaves them)
        # only once the commit's WAL is flushed, which the tests' server does not wait for
        store.con.execute_native("SET synchronous_commit = on")
        with store.transaction():
            store.con.execute(
                "INSERT INTO runs (run_id, trace_id, root_span_id, agent_name, kind, status,"
                " query, response, started_at, duration_ms, input_tokens, output_tokens,"
                " tool_calls_count, tool_errors_count)"
                " SELECT 'run-' || i, lpad(CAST(i AS VARCHAR), 32, '0'), 'b', 'agent-' || i % 3,"
                " 'live', 'success', repeat('q', 500), repeat('r', 500),"
                " CAST(? AS TIMESTAMPTZ) + i * INTERVAL 30 SECOND, i, 1, 2, 2, 1"
                " FROM range(5000) AS g(i)",
                [since],
            )
            store.con.execute(
                "INSERT INTO tool_calls (run_id, position, trace_id, round, tool_name, error,"
                " run_started_at)"
                " SELECT run_id, p, trace_id, 1, 't', CASE WHEN p = 1 THEN 'boom' END, started_at"
                " FROM runs, range(2) AS g(p)"
            )
        sent = _statements(
            store,
            lambda: run_store.live_window(store, since, until),
            lambda: run_store.live_agents(store),
            every=True,
        )
        reads = [(sql, params) for sql, params in sent if "pg_settings" not in sql]
        runs, picker = _plans(store, reads, "runs", "tool_calls")
    assert "Seq Scan" not in runs and "Index Scan" not in runs, runs  # only index-only
    assert "Index Only Scan using runs_live_started" in runs, runs
    assert "tool_calls" not in runs, runs  # failed calls counted per run (0021)
    assert "on run_counts" in picker and " on runs" not in picker, picker  # 0020


def _statements(store: Store, *reads: Any, every: bool = False) -> list[tuple[str, Any]]:
    """The statement (SQL and parameters) each read sends, not run; ``every``: each of its
    statements, as if each found no rows."""
    sent: list[tuple[str, Any]] = []
    execute = store.con.execute_native

    class _NoRows:
        description, rowcount = [], 0

        def fetchall(self) -> list[Any]:
            return []

    def record(sql: str, params: Any = None) -> Any:
        sent.append((sql, params))
        if every:
            return _NoRows()
        raise LookupError  # the statement is all that is wanted of the read

    store.con.execute_native = record  # type: ignore[method-assign]
    try:
        for read in reads:
            if every:
                read()
                continue
            with pytest.raises(LookupError):
                read()
    finally:
        store.con.execute_native = execute  # type: ignore[method-assign]
    return sent


def _plans(store: Store, sent: list[tuple[str, Any]], *tables: str) -> list[str]:
    """PostgreSQL's plan of each statement, once ``tables`` are analyzed and their pages
    marked all-visible (as autovacuum leaves a store that grew over time)."""
    execute = store.con.execute_native
    execute(f"ANALYZE {', '.join(tables)}")
    names = ", ".join(f"'{t}'" for t in tables)
    for _ in range(10):  # an older snapshot (an autovacuum's ANALYZE) can hold a pass back
        execute(f"VACUUM {', '.join(tables)}")
        [(behind,)] = execute(
            f"SELECT count(*) FROM pg_class WHERE relname IN ({names}) AND relpages > relallvisible"
        ).fetchall()
        if not behind:
            break
        time.sleep(0.5)
    with store.transaction(read_only=True):
        return [
            "\n".join(r[0] for r in execute(f"EXPLAIN {sql}", params).fetchall())
            for sql, params in sent
        ]


def test_the_run_pages_and_status_list_reads_are_postgres_index_lookups(pg_url: str) -> None:
    """On a store of many runs, the run page's reads by run or case id (sub-runs, its cases'
    replays, monitor results, the cases promoted from it) and ``runs --status`` are index
    scans (0019), and so is ``ingest``'s lookup of the runs it converted without content
    (0022): never a sequential scan of a table, which made them grow with the store."""
    from tracereplay.store import monitors, suites

    since = datetime(2026, 3, 1, tzinfo=UTC)
    with Store.open(pg_url) as store:
        store.con.execute_native("SET synchronous_commit = on")  # see the dashboard's test
        with store.transaction():
            store.con.execute(
                "INSERT INTO runs (run_id, trace_id, root_span_id, parent_run_id, case_id,"
                " agent_name, kind, status, query, response, started_at)"
                " SELECT 'run-' || i, lpad(CAST(i AS VARCHAR), 32, '0'), 'b',"
                " CASE WHEN i % 50 = 1 THEN 'run-' || (i - 1) END,"
                " CASE WHEN i % 100 = 2 THEN 'case-' || i END,"
                " 'agent', CASE WHEN i % 100 = 2 THEN 'replay' ELSE 'live' END,"
                " CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'success' END,"
                " repeat('q', 500), repeat('r', 500), CAST(? AS TIMESTAMPTZ) + i * INTERVAL 30 SECOND"
                " FROM range(5000) AS g(i)",
                [since],
            )
            store.con.execute(
                "INSERT INTO monitor_results (monitor, run_id, check_name, status, reason)"
                " SELECT 'm' || i % 3, run_id, 'c', 'PASSED', repeat('x', 200) FROM runs, range(3) AS g(i)"
            )
            store.con.execute(
                "INSERT INTO eval_cases (case_id, suite_id, seq, query, context,"
                " expected_tool_calls, source_run_id, tags, metadata)"
                " SELECT 'c-' || run_id, 's', row_number() OVER (ORDER BY run_id), query,"
                " CAST('[]' AS JSON), CAST('[]' AS JSON), run_id, CAST('[]' AS JSON),"
                " CAST('{}' AS JSON) FROM runs"
            )
        sent = _statements(
            store,
            lambda: run_store.sub_run_links(store, "run-100"),
            lambda: run_store.replay_links(store, ["case-102"]),
            lambda: monitors.run_monitor_results(store, "run-100"),
            lambda: suites.cases_from_run(store, "run-100"),
            lambda: run_store.list_runs(store, status="failed", limit=50),
            lambda: run_store.live_runs_without_text(store, since, 200),
        )
        plans = _plans(store, sent, "runs", "monitor_results", "eval_cases")
    for plan in plans:
        assert "Seq Scan" not in plan, plan
    parent, case, monitor, source, failed, empty = plans
    assert "runs_live_without_text" in empty, empty
    assert "runs_parent" in parent and "runs_case" in case, (parent, case)
    assert "monitor_results_by_run" in monitor and "eval_cases_source" in source
    assert "runs_status_newest" in failed and "Sort" not in failed, failed  # in its order


#: ``run_counts`` summed per combination, and the same aggregate of ``runs`` itself
_COUNTED = (
    "SELECT kind, status, agent_name, service_name, CAST(models AS VARCHAR) AS models, sum(n)"
    " FROM run_counts GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5"
)
_AGGREGATED = (
    "SELECT kind, status, agent_name, service_name, CAST(models AS VARCHAR) AS models, count(*)"
    " FROM runs GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"
)


def _counts_agree(store: Store) -> list[tuple[Any, ...]]:
    counted = [(*r[:-1], int(r[-1])) for r in store.con.execute(_COUNTED).fetchall()]
    assert counted == store.con.execute(_AGGREGATED).fetchall()
    return counted


def test_run_counts_follow_every_write(store_target: str) -> None:
    """``run_counts`` (0020: a view on DuckDB, a table kept by triggers on PostgreSQL) is the
    runs counted per kind, status, agent, service and models after every kind of write:
    runs replaced, updated, deleted, emptied."""
    runs = _dashboard_runs()
    with Store.open(store_target) as store:
        with store.transaction():
            store.replace_runs([r.trace_id for r in runs], runs)
        assert sum(r[-1] for r in _counts_agree(store)) == 6
        with store.transaction():  # replaced by fewer runs of another agent
            again = [r.model_copy(update={"agent_name": "c"}) for r in runs[:2]]
            store.replace_runs([r.trace_id for r in runs[:3]], again)
        _counts_agree(store)
        with store.transaction():
            store.con.execute("UPDATE runs SET status = 'failed' WHERE agent_name = 'c'")
            store.con.execute("UPDATE runs SET converted_at = converted_at")  # changes no count
        assert ("live", "failed", "c", "", "[]", 2) in _counts_agree(store)
        with store.transaction():
            store.con.execute("DELETE FROM runs WHERE kind = 'replay'")
        _counts_agree(store)
        with store.transaction():
            store.con.execute("DELETE FROM runs")
        assert _counts_agree(store) == []


def test_postgres_run_counts_fold_and_never_block_writers(pg_url: str) -> None:
    """PostgreSQL's ``run_counts`` grows by a row per combination a statement changes, folded
    into one row per combination past 4096 rows; writers only ever append, so two writers of
    runs of the same agent do not wait on each other (the second would fail on its lock
    timeout)."""
    insert = (
        "INSERT INTO runs (run_id, trace_id, root_span_id, agent_name, kind, status)"
        " SELECT ? || i, ? || i, 'b', 'agent-' || (i % ?), 'live', 'success' FROM range(?) AS g(i)"
    )
    with Store.open(pg_url) as store, Store.open(pg_url) as other:
        with store.transaction():
            store.con.execute(insert, ["a-", "ta-", 3000, 3000])  # 3000 rows
            store.con.execute(insert, ["b-", "tb-", 3000, 3000])  # 6000 > 4096: folded
        assert store.count("run_counts") == 3000
        assert _counts_agree(store)[0][-1] == 2
        with store.transaction():
            store.con.execute("DELETE FROM runs WHERE run_id LIKE 'a-%' AND agent_name < 'agent-2'")
        _counts_agree(store)
        other.con.execute_native("SET lock_timeout = '2s'")
        with store.transaction():
            store.con.execute(insert, ["c-", "tc-", 1, 10])  # uncommitted while the other writes
            with other.transaction():
                other.con.execute(insert, ["d-", "td-", 1, 10])  # agent-0: 1 + 10 + 10
        _counts_agree(store)
        assert ("live", "success", "agent-0", None, None, 21) in _counts_agree(store)


def test_postgres_runs_list_counts_never_read_the_runs(pg_url: str) -> None:
    """The runs list's counts under a filter of facet columns read ``run_counts`` (0020), not
    the rows of ``runs``, which made the list grow with the store (1.9 s at 1.5M runs)."""
    from tracereplay.ui.queries.runs import RunFilter

    with Store.open(pg_url) as store:
        with store.transaction():
            store.con.execute(
                "INSERT INTO runs (run_id, trace_id, root_span_id, agent_name, kind, status)"
                " SELECT 'r' || i, 't' || i, 'b', 'agent', 'live', 'success' FROM range(2000) AS g(i)"
            )
        flt = RunFilter.from_query({"status": ["failed"], "agent": ["agent"]})
        where, params = flt.where()
        own, own_params = flt.where(skip="status")
        facets = ["kind", "service", "model"]
        sent = _statements(
            store,
            lambda: run_store.shared_facet_counts(store, where, params, facets),
            lambda: run_store.facet_value_counts(store, "status", own, own_params),
        )
        plans = _plans(store, sent, "runs", "run_counts")
    for plan in plans:
        assert "on run_counts" in plan and " on runs" not in plan, plan
