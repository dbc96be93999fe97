"""The prompt's Tab completion of table, view and column names, and ``.schema``: at a real
terminal (a pty, as a person types), through a pipe, and the completion rules one by one."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from sql_pipeline import tracereplay
from test_sql_prompt import _drain, _read_until

from tracereplay.query.prompt import Completer, Relation, format_schema, load_catalog
from tracereplay.store import Store


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("complete") / "c.duckdb"
    with Store.open(path):
        pass
    return path


CATALOG = [
    Relation("runs", "base table", [("run_id", "VARCHAR"), ("agent_name", "VARCHAR"),
                                    ("status", "VARCHAR")]),
    Relation("run_summary", "view", [("run_id", "VARCHAR"), ("tool_errors", "BIGINT")]),
    Relation("tool_calls", "base table", [("run_id", "VARCHAR"), ("tool_name", "VARCHAR")]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("before", "text", "statement", "expected"),
    [
        ("", ".sc", ".sc", [".schema "]),
        ("", ".sc", "SELECT 1 AS x\n.sc", []),  # a line of a statement: not a dot command
        (".schema ", "run", "", ["runs", "run_summary"]),
        ("SELECT * FROM ", "ru", "SELECT * FROM ", ["run_id", "run_summary", "runs"]),
        # the columns of the relations the statement reads, not every column
        ("SELECT ", "t", "SELECT t FROM tool_calls", ["tool_calls", "tool_name", "then"]),
        ("select ", "st", "select st from runs", ["status"]),
        # alias.column and table.column
        ("SELECT ", "r.a", "SELECT r.a FROM runs AS r JOIN tool_calls t ON", ["r.agent_name"]),
        ("SELECT ", "t.tool", "SELECT t.tool FROM runs r JOIN tool_calls t", ["t.tool_name"]),
        ("SELECT ", "run_summary.t", "SELECT run_summary.t", ["run_summary.tool_errors"]),
        # an alias typed before its FROM: the columns of every relation
        ("SELECT ", "r.tool_", "SELECT r.tool_", ["r.tool_errors", "r.tool_name"]),
        ("SELECT ", "c.x", "WITH c AS (SELECT 1 AS x) SELECT c.x FROM c", []),
        # keywords in the case typed
        ("SELECT * FROM runs ", "WH", "SELECT * FROM runs WH", ["WHERE", "WHEN"]),
        ("select * from runs ", "wh", "select * from runs wh", ["where", "when"]),
    ],
)
def test_candidates(before: str, text: str, statement: str, expected: list[str]) -> None:
    assert Completer(lambda: CATALOG).candidates(before, text, statement) == expected


def test_the_catalog_is_read_once_until_a_statement_ran() -> None:
    reads: list[int] = []
    completer = Completer(lambda: reads.append(1) or CATALOG)
    completer.candidates("SELECT ", "r", "SELECT r")
    completer.candidates("SELECT ", "s", "SELECT s")
    assert len(reads) == 1
    completer.invalidate()
    completer.candidates("SELECT ", "s", "SELECT s")
    assert len(reads) == 2


def test_a_broken_catalog_completes_nothing() -> None:
    def boom() -> list[Relation]:
        raise RuntimeError("store locked")

    assert Completer(boom).candidates("SELECT ", "r", "SELECT r") == []


def test_schema_text() -> None:
    assert format_schema(CATALOG, "RUNS") == (
        "runs (table, 3 columns)\n  run_id      VARCHAR\n  agent_name  VARCHAR\n"
        "  status      VARCHAR"
    )
    wide = format_schema(CATALOG, None, width=36)
    assert wide.splitlines() == [
        "runs (table): run_id, agent_name,", "    status",
        "run_summary (view): run_id,", "    tool_errors", "tool_calls (table): run_id,",
        "    tool_name",
    ]  # fmt: skip


def test_schema_through_a_pipe(db: Path) -> None:
    proc = tracereplay(db, "sql", input=".schema suite_trend\n.schema\n.schema suite_trnd\n",
                       check=False)  # fmt: skip
    assert proc.returncode == 2  # a failed dot command fails piped input, as a statement does
    out = proc.stdout.splitlines()
    assert out[0] == "suite_trend (view, 22 columns)"
    assert "  pass_rate         DOUBLE" in out
    catalog = load_catalog(db)
    assert sum(1 for line in out if not line.startswith(" ")) == 1 + len(catalog)
    assert any(line.startswith("runs (table): run_id, trace_id,") for line in out)
    assert all(len(line) <= 80 for line in out)
    assert proc.stderr == (
        "error: no table or view named suite_trnd (did you mean suite_trend? see .tables)\n"
    )


def test_tab_completes_names_at_a_terminal(db: Path, tmp_path: Path) -> None:
    parent, child = pty.openpty()
    env = {**os.environ, "TRACEREPLAY_HISTORY": str(tmp_path / "h"), "COLUMNS": "100",
           "TERM": "dumb"}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "sql"],
        stdin=child, stdout=child, stderr=child, env=env, close_fds=True,
    )  # fmt: skip
    os.close(child)
    seen = bytearray()
    try:
        _read_until(parent, b"tracereplay> ", seen)
        # a view's name, then (on the next line of the statement) one of its columns
        os.write(parent, b"SELECT count(*) AS n FROM suite_tr\t")
        _read_until(parent, b"suite_trend", seen)
        os.write(parent, b"\rWHERE aggreg\t")
        _read_until(parent, b"aggregate_score", seen)
        os.write(parent, b" IS NULL;\r")
        _read_until(parent, b"1 row", seen)
        _read_until(parent, b"tracereplay> ", seen, times=2)
        # a dot command, then a table name after it
        os.write(parent, b".sch\teval_ca\t\r")
        _read_until(parent, b"eval_cases (table, ", seen)
        _read_until(parent, b"tracereplay> ", seen, times=3)
        os.write(parent, b"\x04")
        _drain(parent, seen)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(parent)
    text = seen.decode(errors="replace")
    assert "FROM suite_trend" in text and "WHERE aggregate_score IS NULL;" in text
    assert ".schema eval_cases" in text and "  expected_output" in text
