"""``tracereplay ingest``: OTLP files into the store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from tracereplay.cli.common import console, db_path, print_error

if TYPE_CHECKING:
    from tracereplay.ingest.files import FileReport


def ingest(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="OTLP files or directories (walked recursively): protobuf, JSON, Collector "
            "file-exporter lines, any of them gzip-compressed.",
            show_default=False,
        ),
    ],
) -> None:
    """Read OTLP trace and log files into the store and convert the agent runs they hold.

    Ingesting is idempotent: a span already stored is skipped, and a trace that gains spans
    (a late child, a trace split across files) is converted again.

    [bold]Examples[/bold]

      tracereplay ingest traces.pb
      tracereplay ingest ./otel-spool/          # a Collector file-exporter directory
    """
    # imported here: DuckDB and pyarrow are not needed for `--help`
    from tracereplay.ingest import open_store
    from tracereplay.ingest.files import default_workers, ingest_files, worker_pool
    from tracereplay.otlp import iter_input_files

    files = iter_input_files(paths)
    if not files:
        print_error("no files found in " + ", ".join(str(p) for p in paths))
        raise typer.Exit(2)
    failed = 0
    # workers first: they are forked, and must not inherit the open DuckDB file
    with (
        worker_pool(default_workers(files)) as pool,
        open_store(db_path()) as store,
        Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=len(files) < 3 or not console.is_terminal,
        ) as progress,
    ):
        task = progress.add_task("ingesting", total=len(files))

        def on_file(report: FileReport) -> None:
            nonlocal failed
            if report.error is not None:
                print_error(report.error)
                failed += 1
            elif report.rejected_spans or report.rejected_logs:
                print_error(
                    f"{report.path}: skipped {report.rejected_spans} invalid spans and "
                    f"{report.rejected_logs} invalid log records "
                    f"({'; '.join(report.errors)})"
                )
            progress.advance(task)

        total = ingest_files(store, files, pool, on_file)
    console.print(
        f"read {len(files) - failed} file(s): {total.spans} spans ({total.new_spans} new), "
        f"{total.logs} log records ({total.new_logs} new), {total.traces} traces, "
        f"{total.runs} runs",
        markup=False,
    )
    if failed:
        print_error(f"{failed} of {len(files)} file(s) could not be read")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
