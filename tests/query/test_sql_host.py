"""`tracereplay sql` sees the store and nothing else of the machine unless --host-access, and
takes its SQL whatever its first characters are: an argument, a file, stdin. The commands run
in this process (the sandbox is the store's DuckDB connection, not the process)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from sql_pipeline import tracereplay_here as tracereplay

from tracereplay.models import AgentResult, Run
from tracereplay.store import Store

SECRET = "the host's secret line"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("host") / "h.duckdb"
    run = Run(
        run_id=str(uuid.UUID(int=7)), trace_id="c" * 32, root_span_id="d" * 16,
        agent_name="agent", query="q", result=AgentResult(status="failed"),
    )  # fmt: skip
    with Store.open(path) as store, store.transaction():
        store.replace_runs([run.trace_id], [run])
    return path


@pytest.fixture(scope="module")
def secret(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("secret") / "secret.csv"
    path.write_text(f"line\n{SECRET}\n")
    return path


@pytest.mark.parametrize(
    "reader",
    [
        "SELECT * FROM read_csv('{f}')",
        "SELECT * FROM read_text('{f}')",
        "SELECT * FROM read_blob('{f}')",
        "SELECT * FROM glob('{d}/*')",
        "SELECT * FROM '{f}'",
        "SELECT * FROM sqlite_scan('{d}/x.db', 't')",
        "SELECT * FROM read_csv('https://example.com/x.csv')",
    ],
)
@pytest.mark.parametrize("write", [False, True])
def test_no_query_reaches_the_host_by_default(
    db: Path, secret: Path, reader: str, write: bool
) -> None:
    sql = reader.format(f=secret, d=secret.parent)
    proc = tracereplay(db, "sql", *(["--write"] if write else []), sql, check=False)
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert line.startswith("error: ") and "--host-access" in line
    assert SECRET not in proc.stdout + proc.stderr


def test_settings_cannot_be_turned_back_on(db: Path, secret: Path) -> None:
    sql = f"SET enable_external_access = true; SELECT * FROM read_text('{secret}')"
    proc = tracereplay(db, "sql", "--write", sql, check=False)
    assert proc.returncode == 2 and SECRET not in proc.stdout


def test_host_access_is_an_explicit_option(db: Path, secret: Path) -> None:
    proc = tracereplay(
        db, "sql", "--host-access", f"SELECT * FROM read_csv('{secret}')", "--format", "json"
    )
    assert json.loads(proc.stdout) == [{"line": SECRET}]


def test_parquet_output_still_works_without_host_access(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs.parquet"
    tracereplay(db, "sql", "SELECT run_id, status FROM runs", "--format", "parquet", "-o", str(out))
    proc = tracereplay(db, "sql", "--host-access", f"SELECT status FROM '{out}'", "--format", "csv")
    assert proc.stdout.splitlines() == ["status", "failed"]


def test_promote_where_cannot_read_the_host(db: Path, secret: Path) -> None:
    proc = tracereplay(db, "promote", "--where", f"exists(SELECT 1 FROM read_text('{secret}'))", "--suite", "s", check=False)  # fmt: skip
    assert proc.returncode == 2
    assert "disabled by configuration" in proc.stderr and SECRET not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "query",
    [
        "-- failed runs\nSELECT count(*) AS n FROM runs WHERE status = 'failed'",
        "--\nSELECT count(*) AS n FROM runs WHERE status = 'failed'",
        "-- one line comment then\n/* a block */ SELECT count(*) AS n FROM runs",
    ],
)
def test_a_query_may_start_with_a_comment(db: Path, query: str) -> None:
    proc = tracereplay(db, "sql", query, "--format", "csv")
    assert proc.stdout.splitlines() == ["n", "1"]
    proc = tracereplay(db, "sql", "--format", "csv", query)  # options before it, too
    assert proc.stdout.splitlines() == ["n", "1"]


def test_sql_from_a_file_and_from_stdin(db: Path, tmp_path: Path) -> None:
    script = tmp_path / "failed.sql"
    script.write_text("-- failed runs\nSELECT count(*) AS n\nFROM runs\nWHERE status = 'failed';\n")
    assert tracereplay(db, "sql", "-f", str(script), "--format", "csv").stdout == "n\n1\n"
    assert tracereplay(db, "sql", "--file", str(script), "--format", "csv").stdout == "n\n1\n"
    piped = tracereplay(db, "sql", "-f", "-", "--format", "csv", input=script.read_text())
    assert piped.stdout == "n\n1\n"
    prompt = tracereplay(db, "sql", "--format", "csv", input=script.read_text())  # < failed.sql
    assert prompt.stdout.endswith("n\n1\n")


def test_a_missing_sql_file_is_one_line(db: Path, tmp_path: Path) -> None:
    proc = tracereplay(db, "sql", "-f", "csv", check=False)
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: no such SQL file: csv (-f reads SQL from a file; for the output format use "
        "--format csv)\n"
    )
    proc = tracereplay(db, "sql", "-f", str(tmp_path / "x.sql"), "SELECT 1", check=False)
    assert proc.returncode == 2 and "not both" in proc.stderr
