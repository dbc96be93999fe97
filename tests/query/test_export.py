"""`tracereplay export --format parquet`: every public table, partitioned by day, readable back."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from sql_pipeline import tracereplay

from tracereplay.store import Store

pytestmark = pytest.mark.slow

TABLES = {
    "spans", "logs", "runs", "tool_calls", "llm_calls", "eval_suites", "eval_cases",
    "eval_runs", "case_results", "check_results",
}  # fmt: skip
UNPARTITIONED = {"tool_calls", "check_results"}


@pytest.fixture(scope="module")
def exported(pipeline_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "warehouse"
    proc = tracereplay(pipeline_db, "export", "--format", "parquet", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"to {out}" in proc.stdout
    return out


_con = duckdb.connect()
_con.execute("SET TimeZone = 'UTC'")


def _read(directory: Path, table: str) -> duckdb.DuckDBPyRelation:
    return _con.sql(
        f"SELECT * FROM read_parquet('{directory / table}/**/*.parquet', hive_partitioning = true)"
    )


def test_every_public_table_is_written_and_reads_back_whole(
    pipeline_db: Path, exported: Path
) -> None:
    written = {p.name for p in exported.iterdir()}
    assert written >= TABLES
    assert not {"schema_migrations", "spool_offsets"} & written
    with Store.open(pipeline_db) as store:
        for table in written:
            rel = _read(exported, table)
            assert rel.aggregate("count(*)").fetchall()[0][0] == store.count(table), table
            stored = [r["column_name"] for r in store.query_dicts(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ?"
                " ORDER BY ordinal_position", [table])]  # fmt: skip
            assert [c for c in rel.columns if c != "day"] == stored, table


def test_tables_with_a_time_are_partitioned_by_utc_day(pipeline_db: Path, exported: Path) -> None:
    with Store.open(pipeline_db) as store:
        days = {
            str(r["d"])
            for r in store.query_dicts(
                "SELECT DISTINCT CAST(timezone('UTC', start_time) AS DATE) AS d FROM spans"
            )
        }
    assert {p.name for p in (exported / "spans").iterdir()} == {f"day={d}" for d in days}
    rel = _read(exported, "runs")
    assert {str(day) for (day,) in rel.project("day").distinct().fetchall()} <= days
    for table in UNPARTITIONED:
        assert [p.name for p in (exported / table).iterdir()] == [f"{table}.parquet"]


def test_json_columns_stay_json(exported: Path) -> None:
    rel = _read(exported, "case_results")
    assert dict(zip(rel.columns, (str(t) for t in rel.types)))["tool_calls"] == "JSON"
    tools = rel.project("tool_calls->>'$[0].tool_name' AS t").filter("t IS NOT NULL")
    assert tools.distinct().fetchall() == [("get_weather",)]


def test_an_existing_export_is_kept_unless_overwrite(pipeline_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "w"
    assert tracereplay(pipeline_db, "export", "-o", str(out)).returncode == 0
    marker = out / "runs" / "keep-me"
    marker.write_text("x")
    again = tracereplay(pipeline_db, "export", "-o", str(out), check=False)
    assert again.returncode == 2
    assert "already exists; add --overwrite" in again.stderr and marker.exists()
    assert tracereplay(pipeline_db, "export", "-o", str(out), "--overwrite").returncode == 0
    assert not marker.exists() and (out / "runs").is_dir()


def test_an_empty_table_still_has_a_file_with_its_columns(tmp_path: Path) -> None:
    db, out = tmp_path / "empty.duckdb", tmp_path / "out"
    with Store.open(db):  # an empty store
        pass
    assert tracereplay(db, "export", "-o", str(out)).returncode == 0
    rel = _read(out, "eval_runs")
    assert rel.aggregate("count(*)").fetchall() == [(0,)]
    assert "eval_run_id" in rel.columns and "day" in rel.columns
