"""The store interface on both engines: the same calls, the same rows, on a DuckDB file and on
a real PostgreSQL server (``tests/postgres_server.py``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tracereplay.errors import AmbiguousIdError, NotFoundError, StoreError
from tracereplay.models import AgentResult, LlmCall, Run, ToolCallRecord
from tracereplay.spans import LogRecord, Span
from tracereplay.store import Store, schema
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
