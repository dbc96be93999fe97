"""``tracereplay sql``: DuckDB SQL over the store, read-only unless ``--write``."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from typer import _click as click  # typer's own copy of click (typer does not install click)
from typer.core import TyperCommand

from tracereplay.cli.common import console, db_path, print_error
from tracereplay.errors import BadParameterError
from tracereplay.query.format_names import OutputFormat


class _SqlCommand(TyperCommand):
    """``sql`` reads an argument that starts with ``-`` as SQL, not as an option, when it can
    be nothing else: a comment (``-- failed runs``, ``--\nSELECT``), or text over several
    lines or with spaces after its first word that no option of ``sql`` has."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        names = {n for p in self.params for n in (*p.opts, *p.secondary_opts)}
        plain: list[str] = []
        queries: list[str] = []
        rest = iter(args)
        for arg in rest:
            if arg == "--":
                queries.extend(rest)
                break
            if _is_sql(arg, names):
                queries.append(arg)
            else:
                plain.append(arg)
        return super().parse_args(ctx, [*plain, "--", *queries] if queries else plain)


def _is_sql(arg: str, options: set[str]) -> bool:
    if not arg.startswith("-") or arg == "-":
        return False
    if arg.split("=", 1)[0] in options:
        return False  # an option (--output=my file.csv holds a space, and is still one)
    return arg.startswith("--") and not arg[2:3].isalnum() or any(c.isspace() for c in arg)


def _run_one(
    sql: str,
    fmt: OutputFormat,
    output: Optional[Path],
    write: bool,
    max_rows: int,
    host_access: bool = False,
) -> None:
    from tracereplay.query import SqlError, emit, run_sql
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        if not host_access:
            store.deny_host_access()
        try:
            with run_sql(store, sql, write=write) as rel:
                emit(rel, fmt, output=output, console=console, max_rows=max_rows)
        except SqlError as exc:
            if host_access or not _NEEDS_HOST.search(str(exc)):
                raise
            reason = str(exc).split(". Please try installing", 1)[0]
            raise SqlError(
                f"{reason} (tracereplay sql sees the store only; --host-access lets it read "
                "files, reach the network and load extensions)"
            ) from None


_NEEDS_HOST = re.compile(r"disabled by configuration|is disabled through configuration|extension")


def _read_sql(file: Path) -> str:
    """The SQL in ``file`` (``-``: stdin)."""
    if str(file) == "-":
        return sys.stdin.read()
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        hint = ""
        if str(file) in {f.value for f in OutputFormat}:
            hint = f" (-f reads SQL from a file; for the output format use --format {file})"
        raise BadParameterError(f"no such SQL file: {file}{hint}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadParameterError(f"cannot read the SQL file {file}: {exc}") from None


def _prompt(fmt: OutputFormat, write: bool, max_rows: int, host_access: bool = False) -> int:
    from tracereplay.query.prompt import TABLES_SQL, load_catalog, run_prompt

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
        lambda sql: _run_one(sql, chosen[0], None, write, max_rows, host_access),
        list_tables=lambda: _run_one(TABLES_SQL, OutputFormat.table, None, False, 10_000),
        set_format=set_format,
        current_format=lambda: chosen[0].value,
        report_error=print_error,
        catalog=lambda: load_catalog(db_path()),
    )


def sql(
    query: Annotated[
        Optional[str],
        typer.Argument(
            help="SQL to run (several statements: the last one's rows are printed); it may "
            "start with a comment ('-- failed runs'). '-' reads it from stdin. Without it (and "
            "without -f), an interactive prompt opens; statements piped in run one by one.",
            show_default=False,
        ),
    ] = None,
    file: Annotated[
        Optional[Path],
        typer.Option(
            "--file",
            "-f",
            help="Read the SQL from this file ('-': stdin).",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
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
    host_access: Annotated[
        bool,
        typer.Option(
            "--host-access",
            help="Let the SQL read and write files of this machine (read_csv, read_parquet, "
            "glob, COPY, ATTACH...), reach the network and load DuckDB extensions. Off by "
            "default: the SQL sees the store only.",
        ),
    ] = False,
) -> None:
    """Run DuckDB SQL over the store: tables, the history views, and anything DuckDB reads.

    Read-only unless --write is given, and sees nothing but the store (no files of this
    machine, no network) unless --host-access is given. Views for the usual questions:
    score_history, case_history, suite_trend, tool_usage, run_summary (columns in docs/sql.md).

    [bold]Examples[/bold]

      tracereplay sql "SELECT * FROM suite_trend ORDER BY started_at DESC"
      tracereplay sql "SELECT * FROM tool_usage" --format csv -o tools.csv
      tracereplay sql -f failing.sql     # or: tracereplay sql < failing.sql
      tracereplay sql                    # interactive; statements end with ;
    """
    if file is not None:
        if query is not None:
            raise BadParameterError("give the SQL as an argument or with -f FILE, not both")
        query = _read_sql(file)
    if query is None:  # (piped statements run one by one: `tracereplay sql < queries.sql`)
        if output is not None:
            raise BadParameterError("-o needs a QUERY (the prompt prints to the terminal)")
        if fmt is OutputFormat.parquet:
            raise BadParameterError("--format parquet needs a QUERY and -o FILE")
        code = _prompt(fmt, write, max_rows, host_access)
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
        _run_one(query, fmt, output, write, max_rows, host_access)
    except BrokenPipeError:  # `tracereplay sql ... | head`: the reader left, not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(0) from None


def register(app: typer.Typer) -> None:
    app.command(name="sql", cls=_SqlCommand)(sql)
