"""``tracereplay export``: the store's tables as Parquet files, for a warehouse or DuckDB elsewhere."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from tracereplay.cli.common import console, db_path


class ExportFormat(str, Enum):
    parquet = "parquet"


def export(
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="Directory to write (one sub-directory per table).",
            file_okay=False,
            show_default=False,
        ),
    ],
    fmt: Annotated[
        ExportFormat, typer.Option("--format", "-f", help="File format.")
    ] = ExportFormat.parquet,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace tables exported there before.")
    ] = False,
) -> None:
    """Write every public table as Parquet, partitioned by UTC day where the table has a time.

    Read it back with: SELECT * FROM read_parquet('DIR/runs/**/*.parquet', hive_partitioning = true)

    [bold]Example[/bold]

      tracereplay export --format parquet -o ./warehouse/tracereplay
    """
    from tracereplay.query.export import export_parquet
    from tracereplay.store.open import open_store

    with open_store(db_path()) as store:
        exported = export_parquet(store, output, overwrite=overwrite)
    table = Table(header_style="bold", pad_edge=False)
    table.add_column("table")
    table.add_column("rows", justify="right")
    table.add_column("files", justify="right")
    table.add_column("partitioned by day of", overflow="ellipsis")
    for e in exported:
        table.add_row(Text(e.table), str(e.rows), str(e.files), Text(e.partitioned_by or "-"))
    console.print(table)
    console.print(f"wrote {len(exported)} tables ({fmt.value}) to {output}", markup=False)


def register(app: typer.Typer) -> None:
    app.command(name="export")(export)
