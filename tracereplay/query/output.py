"""Sending a query result where the user asked: the terminal, stdout, or a file (written
beside the target and renamed into place, so a failed query never leaves half a file)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import duckdb
from rich.console import Console

from tracereplay.errors import BadParameterError
from tracereplay.query.formats import (
    OutputFormat,
    file_console,
    render_table,
    write_csv,
    write_json,
    write_parquet,
)


def check_destination(fmt: OutputFormat, output: Path | None) -> None:
    """Refuse combinations that cannot work before any SQL runs."""
    if fmt is OutputFormat.parquet and output is None:
        raise BadParameterError("--format parquet writes a binary file: give -o FILE")
    if output is not None:
        if output.is_dir():
            raise BadParameterError(f"-o {output} is a directory; give a file name")
        if not output.parent.exists():
            raise BadParameterError(f"-o {output}: directory {output.parent} does not exist")


@contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` that becomes ``path`` when the block succeeds."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _write_stream(rel: duckdb.DuckDBPyRelation, fmt: OutputFormat, out: IO[bytes]) -> None:
    if fmt is OutputFormat.csv:
        write_csv(rel, out)
    else:
        write_json(rel, out, lines=fmt is OutputFormat.jsonl)


def emit(
    rel: duckdb.DuckDBPyRelation | None,
    fmt: OutputFormat,
    *,
    output: Path | None,
    console: Console,
    max_rows: int,
) -> None:
    """Write ``rel`` (the last statement's result; None when it returned nothing)."""
    if rel is None:
        if fmt is OutputFormat.table and output is None:
            console.print("done", style="dim", markup=False)
        return
    if output is None:
        if fmt is OutputFormat.table:
            render_table(rel, console, max_rows=max_rows)
            return
        sys.stdout.flush()
        _write_stream(rel, fmt, sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    with _replacing(output) as tmp:
        if fmt is OutputFormat.parquet:
            write_parquet(rel, tmp)
        elif fmt is OutputFormat.table:
            with open(tmp, "w", encoding="utf-8") as text_out:
                render_table(rel, file_console(text_out), max_rows=max_rows)
        else:
            with open(tmp, "wb") as out:
                _write_stream(rel, fmt, out)
