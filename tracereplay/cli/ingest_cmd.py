"""``tracereplay ingest``: OTLP files into the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from tracereplay.cli.common import console, db_path, print_error
from tracereplay.errors import DecodeError
from tracereplay.ingest import IngestStats, ingest_batch, open_store
from tracereplay.otlp import Decoded, iter_input_files, read_file
from tracereplay.spans import LogRecord, Span

#: spans decoded before they are written in one transaction
BATCH_SPANS = 200_000


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
    files = iter_input_files(paths)
    if not files:
        print_error("no files found in " + ", ".join(str(p) for p in paths))
        raise typer.Exit(2)
    total = IngestStats()
    failed = 0
    pending_spans: list[Span] = []
    pending_logs: list[LogRecord] = []
    with open_store(db_path()) as store:

        def flush() -> None:
            if pending_spans or pending_logs:
                with store.transaction():
                    total.add(ingest_batch(store, pending_spans, pending_logs))
                pending_spans.clear()
                pending_logs.clear()

        with Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=len(files) < 3 or not console.is_terminal,
        ) as progress:
            task = progress.add_task("ingesting", total=len(files))
            for path in files:
                try:
                    decoded: Decoded = read_file(path)
                except DecodeError as exc:
                    print_error(str(exc))
                    failed += 1
                    progress.advance(task)
                    continue
                pending_spans.extend(decoded.spans)
                pending_logs.extend(decoded.logs)
                if decoded.rejected_spans or decoded.rejected_logs:
                    print_error(
                        f"{path}: skipped {decoded.rejected_spans} invalid spans and "
                        f"{decoded.rejected_logs} invalid log records ({'; '.join(decoded.errors)})"
                    )
                if len(pending_spans) >= BATCH_SPANS:
                    flush()
                progress.advance(task)
            flush()
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
