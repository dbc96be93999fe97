"""``tracereplay export``: every public table as Parquet, partitioned by day where it has a time.

Layout under the output directory (readable with DuckDB, Spark, Polars, warehouses...)::

    spans/day=2026-11-30/data_0.parquet       -- hive partitions by the UTC day of the time
    spans/day=__HIVE_DEFAULT_PARTITION__/...  -- rows whose time is NULL
    tool_calls/tool_calls.parquet             -- tables without a time column: one file

    SELECT * FROM read_parquet('DIR/spans/**/*.parquet', hive_partitioning = true)

Every table is read in one read-only transaction: the export is one consistent snapshot.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tracereplay.errors import BadParameterError
from tracereplay.store.db import Store

#: bookkeeping tables, not part of the public surface, and ``run_counts`` (runs counted per
#: facet: a view on DuckDB, a table kept by triggers on PostgreSQL, derived from ``runs`` on both)
PRIVATE_TABLES = frozenset({"schema_migrations", "spool_offsets", "run_counts"})

#: the time each table is partitioned by (other tables: their first timestamp column, if any)
TIME_COLUMNS = {
    "spans": "start_time",
    "logs": "time",
    "runs": "started_at",
    "llm_calls": "started_at",
    "eval_suites": "created_at",
    "eval_cases": "promoted_at",
    "eval_runs": "started_at",
    "case_results": "started_at",
}

PARTITION_COLUMN = "day"
#: tables written whole though they have a time (tool_calls' run_started_at is for lookups)
UNPARTITIONED = frozenset({"tool_calls"})


class ExportedTable(BaseModel):
    """What ``export_parquet`` wrote for one table."""

    table: str
    rows: int
    path: str
    partitioned_by: str | None = None
    files: int


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def public_tables(store: Store) -> list[str]:
    """The store's public base tables, in name order."""
    rows = store.query_dicts(
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
    )
    private = set(PRIVATE_TABLES)
    if store.engine == "postgres":  # a partition's rows are its parent's (spans): not twice
        from tracereplay.store.engines.pg_partitions import partitions

        private.update(p.name for p in partitions(store.con))  # type: ignore[arg-type]
    return [r["table_name"] for r in rows if r["table_name"] not in private]


def time_column(store: Store, table: str) -> str | None:
    """The column ``table`` is partitioned by, or None when it has no time."""
    columns = store.query_dicts(
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
        [table],
    )
    names = {c["column_name"] for c in columns}
    if PARTITION_COLUMN in names or table in UNPARTITIONED:
        return None  # the partition column would shadow a real one
    preferred = TIME_COLUMNS.get(table)
    if preferred in names:
        return preferred
    for c in columns:
        if c["data_type"].upper().startswith("TIMESTAMP"):
            return c["column_name"]
    return None


def export_parquet(store: Store, out_dir: Path, *, overwrite: bool = False) -> list[ExportedTable]:
    """Write every public table under ``out_dir`` (see the module docstring)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise BadParameterError(f"-o {out_dir} is a file; give a directory")
    tables = public_tables(store)
    clashes = [t for t in tables if (out_dir / t).exists()]
    if clashes and not overwrite:
        raise BadParameterError(
            f"{out_dir / clashes[0]} already exists; add --overwrite to replace the exported tables"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    for t in clashes:
        target = out_dir / t
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
    exported = []
    with store.transaction(read_only=True):
        for table in tables:
            exported.append(_export_table(store, table, out_dir / table))
    return exported


def _local_source(store: Store, table: str) -> tuple[Any, str]:
    """The DuckDB connection that writes the Parquet files and what it reads the table as:
    the table itself in a DuckDB store; a server store's table fetched (as Arrow) into the
    engine's embedded DuckDB, which writes the same files the same way."""
    if store.engine == "duckdb":
        return store.con, _ident(table)
    return store.con.local_view("_tr_export", f"SELECT * FROM {_ident(table)}"), "_tr_export"


def _export_table(store: Store, table: str, target: Path) -> ExportedTable:
    rows = store.count(_ident(table))
    con, source = _local_source(store, table)
    column = time_column(store, table)
    target.mkdir(parents=True)
    if column is None or rows == 0:
        # An empty partitioned table still gets a file, so readers find its schema.
        path = target / (f"{PARTITION_COLUMN}=__HIVE_DEFAULT_PARTITION__" if column else "")
        path.mkdir(exist_ok=True)
        name = "data_0.parquet" if column else f"{table}.parquet"
        con.execute(f"COPY {source} TO {_sql_string(str(path / name))} (FORMAT parquet)")
    else:
        con.execute(
            f"COPY (SELECT *, CAST(timezone('UTC', {_ident(column)}) AS DATE) AS {PARTITION_COLUMN}"
            f" FROM {source}) TO {_sql_string(str(target))}"
            f" (FORMAT parquet, PARTITION_BY ({PARTITION_COLUMN}))"
        )
    return ExportedTable(
        table=table,
        rows=rows,
        path=str(target),
        partitioned_by=column,
        files=sum(1 for _ in target.rglob("*.parquet")),
    )
