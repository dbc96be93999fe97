"""`tracereplay sql` is read-only unless --write: every kind of write is refused, with a line
that says so, and the store (and the file system) stay as they were."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sql_pipeline import tracereplay

from tracereplay.models import AgentResult, Run, ToolCallRecord
from tracereplay.query import ReadOnlyError, SqlError, run_sql
from tracereplay.store import Store


def _fill(db: Path) -> None:
    run = Run(
        run_id=str(uuid.UUID(int=1)), trace_id="a" * 32, root_span_id="b" * 16,
        agent_name="agent", query="q",
        result=AgentResult(tool_calls=[ToolCallRecord(round=1, tool_name="t")]),
    )  # fmt: skip
    with Store.open(db) as store, store.transaction():
        store.replace_runs([run.trace_id], [run])


@pytest.fixture(scope="module")
def ro_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store for the tests that must not change it (a change would show in the next one)."""
    path = tmp_path_factory.mktemp("guard") / "g.duckdb"
    _fill(path)
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "g.duckdb"
    _fill(path)
    return path


def _rows(db: Path, sql: str) -> list[tuple]:
    with Store.open(db) as store, run_sql(store, sql) as rel:
        assert rel is not None
        return rel.fetchall()


REFUSED = [
    ("INSERT INTO runs (run_id, trace_id, root_span_id) VALUES ('x', 'y', 'z')", "INSERT"),
    ("UPDATE runs SET agent_name = 'other'", "UPDATE"),
    ("DELETE FROM runs", "DELETE"),
    ("CREATE TABLE notes (t VARCHAR)", "CREATE"),
    ("CREATE TEMP TABLE notes AS SELECT 1", "CREATE"),
    ("CREATE VIEW v AS SELECT 1", "CREATE"),
    ("DROP TABLE runs", "DROP"),
    ("DROP VIEW suite_trend", "DROP"),
    ("ALTER TABLE runs ADD COLUMN z INTEGER", "ALTER"),
    ("COPY runs TO '{out}/runs.csv'", "COPY"),
    ("COPY runs FROM '{out}/runs.csv'", "COPY"),
    ("EXPORT DATABASE '{out}/dump'", "EXPORT"),
    ("ATTACH '{out}/other.duckdb' AS other", "ATTACH"),
    ("DETACH other", "DETACH"),
    ("PRAGMA enable_profiling", "PRAGMA"),
    ("SET threads = 1", "SET"),
    ("RESET threads", "RESET"),
    ("SET VARIABLE x = 1", "SET"),
    ("USE memory", "USE"),
    ("CALL pragma_version()", "CALL"),
    ("INSTALL json", "INSTALL"),
    ("LOAD json", "LOAD"),
    ("CHECKPOINT", "CHECKPOINT"),
    ("VACUUM", "VACUUM"),
    ("BEGIN TRANSACTION", "BEGIN"),
    ("CREATE MACRO twice(x) AS x * 2", "CREATE"),
    ("EXPLAIN ANALYZE DELETE FROM runs", "EXPLAIN"),
    ("SELECT 1; DELETE FROM runs", "DELETE"),
    ("-- a comment first\nDELETE FROM runs", "DELETE"),
]


@pytest.mark.parametrize(("sql", "keyword"), REFUSED, ids=[k + ":" + s[:30] for s, k in REFUSED])
def test_writes_are_refused_without_write(
    ro_db: Path, tmp_path: Path, sql: str, keyword: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with Store.open(ro_db) as store:
        with pytest.raises(ReadOnlyError) as err, run_sql(store, sql.format(out=out)):
            pass
        assert str(err.value).startswith(f"refused: {keyword} is not a read-only statement")
        assert "--write" in str(err.value)
        assert store.count("runs") == 1
        assert store.query_dicts("SELECT agent_name FROM runs") == [{"agent_name": "agent"}]
        names = {
            r["table_name"] for r in store.query_dicts("SELECT table_name FROM duckdb_tables()")
        }
        assert "notes" not in names and "runs" in names
    assert list(out.iterdir()) == []  # nothing written to disk either


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM runs",
        "WITH r AS (SELECT * FROM runs) SELECT count(*) FROM r",
        "FROM runs SELECT count(*)",
        "VALUES (1)",
        "DESCRIBE runs",
        "SHOW TABLES",
        "SUMMARIZE runs",
        "EXPLAIN SELECT * FROM runs",
        "SELECT * FROM suite_trend",
        "SELECT count(*) FROM runs; -- trailing comment",
        "SELECT 1;\nSELECT count(*) FROM tool_calls;",
    ],
)
def test_queries_run_without_write(ro_db: Path, sql: str) -> None:
    assert _rows(ro_db, sql) is not None


def test_a_select_cannot_smuggle_a_write(ro_db: Path) -> None:
    with pytest.raises(SqlError):
        _rows(ro_db, "SELECT * FROM query('DELETE FROM runs')")
    assert _rows(ro_db, "SELECT count(*) FROM runs") == [(1,)]


def test_with_write_statements_run_and_persist(db: Path) -> None:
    with Store.open(db) as store:
        sql = "CREATE TABLE notes (t VARCHAR); INSERT INTO notes VALUES ('kept') RETURNING t"
        with run_sql(store, sql, write=True) as rel:
            assert rel is not None and rel.fetchall() == [("kept",)]
    assert _rows(db, "SELECT t FROM notes") == [("kept",)]


def test_cli_refusal_is_one_line_and_exit_2(ro_db: Path) -> None:
    proc = tracereplay(ro_db, "sql", "DELETE FROM runs", check=False)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "error: refused: DELETE is not a read-only statement "
        "(tracereplay sql only reads unless --write is given)"
    ]


@pytest.mark.parametrize(
    ("sql", "start"),
    [
        ("SELEC 1", 'error: Parser Error: syntax error at or near "SELEC"'),
        ("SELECT nope FROM runs", 'error: Binder Error: Referenced column "nope" not found'),
        ("SELECT * FROM no_such_table", "error: Catalog Error: Table with name no_such_table"),
        ("SELECT CAST('x' AS INTEGER)", "error: Conversion Error"),
    ],
)
def test_cli_sql_errors_are_duckdbs_message_on_one_line(ro_db: Path, sql: str, start: str) -> None:
    proc = tracereplay(ro_db, "sql", sql, check=False)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert line.startswith(start), line
    assert "Traceback" not in proc.stderr and "^" not in line


def test_cli_write_flag_changes_the_store(db: Path) -> None:
    proc = tracereplay(db, "sql", "--write", "UPDATE runs SET agent_name = 'renamed'")
    assert proc.returncode == 0, proc.stderr
    assert _rows(db, "SELECT agent_name FROM runs") == [("renamed",)]
