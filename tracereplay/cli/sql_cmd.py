"""``tracereplay sql``: DuckDB SQL over the store, read-only unless ``--write``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from tracereplay.cli.common import console, db_path, print_error
from tracereplay.errors import BadParameterError
from tracereplay.query.format_names import OutputFormat


def _run_one(
    sql: str, fmt: OutputFormat, output: Optional[Path], write: bool, max_rows: int
) -> None:
    from tracereplay.ingest import open_store
    from tracereplay.query import emit, run_sql

    with open_store(db_path()) as store, run_sql(store, sql, write=write) as rel:
        emit(rel, fmt, output=output, console=console, max_rows=max_rows)


def _prompt(fmt: OutputFormat, write: bool, max_rows: int) -> int:
    from tracereplay.query.prompt import TABLES_SQL, run_prompt

    chosen = [fmt]

    def set_format(name: str) -> str:
        try:
            new = OutputFormat(name)
        except ValueError:
            raise BadParameterError(f"unknown format '{name}' (table, csv, json, jsonl)") from None
        if new is OutputFormat.parquet:
            raise BadParameterError("parquet needs a file: run tracereplay sql QUERY -o FILE")
        chosen[0] = new
        return new.value

    return run_prompt(
        lambda sql: _run_one(sql, chosen[0], None, write, max_rows),
        list_tables=lambda: _run_one(TABLES_SQL, OutputFormat.table, None, False, 10_000),
        set_format=set_format,
        current_format=lambda: chosen[0].value,
        report_error=print_error,
    )


def sql(
    query: Annotated[
        Optional[str],
        typer.Argument(
            help="SQL to run (several statements: the last one's rows are printed); '-' reads "
            "it from stdin. Without it, an interactive prompt opens.",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            "-f",
            help="table (fitted to the terminal), csv, json (one array), jsonl (one object per "
            "line) or parquet (needs -o).",
        ),
    ] = OutputFormat.table,
    output: Annotated[
        Optional[Path],
        typer.Option(
            "--output", "-o", help="Write to this file instead of stdout.", dir_okay=False
        ),
    ] = None,
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help="Allow statements that change the store (INSERT, UPDATE, DELETE, CREATE...).",
        ),
    ] = False,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=1, help="Rows shown by --format table.")
    ] = 1000,
) -> None:
    """Run DuckDB SQL over the store: tables, the history views, and anything DuckDB reads.

    Read-only unless --write is given. Views for the usual questions: score_history,
    case_history, suite_trend, tool_usage, run_summary (columns in docs/sql.md).

    [bold]Examples[/bold]

      tracereplay sql "SELECT * FROM suite_trend ORDER BY started_at DESC LIMIT 10"
      tracereplay sql "SELECT * FROM tool_usage" --format csv -o tools.csv
      tracereplay sql                      # interactive prompt; statements end with ;
    """
    if query is None:
        if output is not None:
            raise BadParameterError("-o needs a QUERY (the prompt prints to the terminal)")
        if fmt is OutputFormat.parquet:
            raise BadParameterError("--format parquet needs a QUERY and -o FILE")
        code = _prompt(fmt, write, max_rows)
        if code:
            raise typer.Exit(code)
        return
    if query == "-":
        query = sys.stdin.read()
    if not query.strip():
        raise BadParameterError("the query is empty")
    from tracereplay.query.output import check_destination

    check_destination(fmt, output)
    try:
        _run_one(query, fmt, output, write, max_rows)
    except BrokenPipeError:  # `tracereplay sql ... | head`: the reader left, not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(0) from None


def register(app: typer.Typer) -> None:
    app.command(name="sql")(sql)
