"""Writing a query result: a terminal table, or CSV / JSON / JSON lines / Parquet streamed in
record batches so a result larger than memory never has to be held whole.

Values are rendered by DuckDB itself (one projection per format) so a result reads the same on
stdout and in a file: nested values (lists, structs, maps) become JSON, JSON columns stay JSON
(nested, not quoted, in the JSON formats), times use DuckDB's text form
(``2026-11-30 09:00:00+00``).
"""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import duckdb
import pyarrow as pa
from rich.console import Console
from rich.table import Table
from rich.text import Text

# re-exported: the enum lives in a module the CLI can import without duckdb or pyarrow
from tracereplay.query.format_names import OutputFormat as OutputFormat

#: rows fetched per record batch
BATCH_ROWS = 8_192

_NESTED = {"list", "struct", "map", "array", "union"}
_NUMERIC = {
    "tinyint", "smallint", "integer", "bigint", "utinyint", "usmallint", "uinteger", "ubigint",
    "hugeint", "uhugeint", "float", "double", "decimal",
}  # fmt: skip

#: longest cell text handed to the table renderer (it cuts further to fit the terminal)
_CELL_CHARS = 300


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def column_names(rel: duckdb.DuckDBPyRelation) -> list[str]:
    """The result's column names, repeated names made unique (``id``, ``id_1``...)."""
    names: list[str] = []
    used: set[str] = set()
    for name in rel.columns:
        unique, n = name, 0
        while unique in used:
            n += 1
            unique = f"{name}_{n}"
        used.add(unique)
        names.append(unique)
    return names


def _as_text(position: int, type_id: str) -> str:
    if type_id in _NESTED:
        return f"CAST(to_json(#{position}) AS VARCHAR)"
    return f"CAST(#{position} AS VARCHAR)"


def _text_columns(rel: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """Every column as DuckDB's text for it (nested values as JSON), for CSV."""
    exprs = []
    for i, (name, typ) in enumerate(zip(column_names(rel), rel.types), start=1):
        kept = f"#{i}" if typ.id == "varchar" else _as_text(i, typ.id)
        exprs.append(f"{kept} AS {_quote(name)}")
    return rel.project(", ".join(exprs))


def _text_projection(rel: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """Every column as display text (floating-point values rounded to 6 decimals)."""
    exprs = []
    for i, (name, typ) in enumerate(zip(column_names(rel), rel.types), start=1):
        text = (
            f"CAST(round(#{i}, 6) AS VARCHAR)"
            if typ.id in ("float", "double")
            else _as_text(i, typ.id)
        )
        exprs.append(f"{text} AS {_quote(name)}")
    return rel.project(", ".join(exprs))


def _json_projection(rel: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    fields = ", ".join(
        f"{_quote(name)} := #{i}" for i, name in enumerate(column_names(rel), start=1)
    )
    return rel.project(f"CAST(to_json(struct_pack({fields})) AS VARCHAR) AS j")


def _batches(rel: duckdb.DuckDBPyRelation) -> Iterator[pa.RecordBatch]:
    reader = rel.to_arrow_reader(BATCH_ROWS)
    try:
        yield from reader
    finally:
        reader.close()


def write_csv(rel: duckdb.DuckDBPyRelation, out: IO[bytes]) -> int:
    """Stream the result as CSV with a header line; returns the number of rows.

    Every value is DuckDB's text for it (nested values as JSON), written by Python's csv
    module with its minimal quoting: a value is quoted only when it holds the delimiter, a
    quote or a line break (pyarrow's writer quotes every string, header included)."""
    projected = _text_columns(rel)
    rows = 0
    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    try:
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(column_names(rel))
        for batch in _batches(projected):
            writer.writerows(zip(*(column.to_pylist() for column in batch.columns)))
            rows += batch.num_rows
        text.flush()
    finally:
        text.detach()  # ``out`` stays open: the caller owns it
    return rows


def write_json(rel: duckdb.DuckDBPyRelation, out: IO[bytes], *, lines: bool) -> int:
    """Stream the result as one JSON array of objects, or (``lines``) one object per line."""
    rows = 0
    if not lines:
        out.write(b"[")
    for batch in _batches(_json_projection(rel)):
        values = [v.encode() for v in batch.column(0).to_pylist()]
        if not values:
            continue
        if lines:
            out.write(b"\n".join(values) + b"\n")
        else:
            out.write((b",\n" if rows else b"\n") + b",\n".join(values))
        rows += len(values)
    if not lines:
        out.write(b"\n]\n" if rows else b"]\n")
    return rows


def write_parquet(rel: duckdb.DuckDBPyRelation, path: Path) -> None:
    """Write the result to a Parquet file, streamed in Arrow batches (written by this process,
    not by DuckDB: the connection may be denied any file access, see
    ``Store.deny_host_access``)."""
    import pyarrow.parquet as pq

    names = column_names(rel)
    if names != list(rel.columns):
        rel = rel.project(", ".join(f"#{i} AS {_quote(n)}" for i, n in enumerate(names, start=1)))
    reader = rel.to_arrow_reader(65_536)
    with pq.ParquetWriter(str(path), reader.schema, compression="zstd") as writer:
        for batch in reader:
            writer.write_batch(batch)


def _cell_text(value: str | None) -> str | None:
    if value is None:
        return None
    flat = " ".join(value.split()) if any(c in value for c in "\n\r\t") else value
    return flat if len(flat) <= _CELL_CHARS else flat[: _CELL_CHARS - 1] + "…"


def _fit_columns(names: list[str], rows: list[list[str | None]], width: int) -> list[int]:
    """Column widths for a table ``width`` wide: natural widths, the widest shrunk first; when
    even the narrow minimums do not fit, the rightmost columns are left out (fewer widths)."""
    natural = [
        max([len(name)] + [4 if r[i] is None else len(r[i]) for r in rows])  # type: ignore[arg-type]
        for i, name in enumerate(names)
    ]
    minimum = [min(n, max(6, min(len(name), 12))) for n, name in zip(natural, names)]
    count = len(names)
    while count > 1 and sum(minimum[:count]) + 3 * (count - 1) > width:
        count -= 1
    widths = natural[:count]
    excess = sum(widths) + 3 * (count - 1) - width
    while excess > 0:
        shrinkable = [i for i in range(count) if widths[i] > minimum[i]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1
    return widths


def render_table(
    rel: duckdb.DuckDBPyRelation, console: Console, *, max_rows: int
) -> tuple[int, int]:
    """Print the result as a table fitted to the console width, at most ``max_rows`` rows.

    Long values are cut with ``…``; when even narrow columns do not fit, the rightmost ones
    are left out and named below the table. Returns ``(rows shown, rows in the result)``.
    """
    names = column_names(rel)
    numeric = [typ.id in _NUMERIC for typ in rel.types]
    rows: list[list[str | None]] = []
    total = 0
    for batch in _batches(_text_projection(rel)):
        total += batch.num_rows
        if len(rows) >= max_rows:
            continue  # keep reading only to count
        columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
        take = min(batch.num_rows, max_rows - len(rows))
        rows.extend([_cell_text(col[r]) for col in columns] for r in range(take))
    widths = _fit_columns(names, rows, console.width)
    shown_cols = len(widths)
    table = Table(header_style="bold", pad_edge=False, show_edge=False, expand=False)
    for name, is_number, width in zip(names, numeric, widths):
        table.add_column(
            Text(name),
            overflow="ellipsis",
            no_wrap=True,
            justify="right" if is_number else "left",
            width=width,
        )
    for row in rows:
        table.add_row(
            *(Text("NULL", style="dim") if v is None else Text(v) for v in row[:shown_cols])
        )
    console.print(table)
    notes = []
    if shown_cols < len(names):
        hidden = names[shown_cols:]
        notes.append(
            f"{len(hidden)} more column{'s' if len(hidden) > 1 else ''} not shown: "
            f"{', '.join(hidden)}"
        )
    if total > len(rows):
        notes.append(f"{len(rows)} of {total} rows shown (--max-rows N to see more)")
    else:
        notes.append(f"{total} row{'' if total == 1 else 's'}")
    if shown_cols < len(names) or total > len(rows):
        notes.append("--format csv/jsonl shows everything")
    console.print("; ".join(notes), style="dim", markup=False, soft_wrap=True)
    return len(rows), total


def file_console(out: IO[str]) -> Console:
    """A console writing plain text (no colour) to a file, as wide as the terminal."""
    return Console(
        file=out,
        width=max(shutil.get_terminal_size((120, 24)).columns, 80),
        no_color=True,
        highlight=False,
        soft_wrap=False,
    )
