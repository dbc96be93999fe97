"""``tracereplay ingest``: OTLP files into the store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import (
    BarColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from tracereplay.cli.common import console, db_path, err_console, print_error

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
    (a late child, a trace split across files) is converted again. Invalid spans (bad ids,
    times past 2262) are skipped with a warning; a file with nothing valid is an error.

    [bold]Examples[/bold]

      tracereplay ingest traces.pb
      tracereplay ingest ./otel-spool/       # a Collector file-exporter directory
    """
    # imported here: DuckDB and pyarrow are not needed for `--help`
    from tracereplay.ingest.files import WORKER_PRELOAD, default_workers, ingest_files
    from tracereplay.ingest.workers import worker_pool
    from tracereplay.otlp import iter_input_files
    from tracereplay.store.open import open_store

    files = iter_input_files(paths)
    if not files:
        print_error("no files found in " + ", ".join(str(p) for p in paths))
        raise typer.Exit(2)
    import os
    import time
    from datetime import UTC, datetime

    from tracereplay.cli.content_notes import ingested_note

    failed = 0
    sizes = []
    for path in files:
        try:
            sizes.append(os.path.getsize(path))
        except OSError:
            sizes.append(0)
    total_bytes = sum(sizes)
    # a file of 0 bytes holds no payload at all: refused, as an unreadable file is
    empty = {os.fspath(p) for p, n in zip(files, sizes, strict=True) if n == 0}
    started = time.monotonic()
    since = datetime.now(UTC)
    spans_seen = 0
    # workers first: they start while the store opens (and its spool drains)
    with (
        worker_pool(default_workers(files), WORKER_PRELOAD) as pool,
        open_store(db_path()) as store,
        Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[files]}"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=(len(files) < 3 and total_bytes < 16 * 2**20) or not console.is_terminal,
        ) as progress,
    ):
        task = progress.add_task(
            "ingesting", total=max(total_bytes, 1), files=f"0/{len(files)} files", rate=""
        )
        done_files = 0

        def on_part(nbytes: int, spans: int) -> None:
            nonlocal spans_seen
            spans_seen += spans
            elapsed = max(time.monotonic() - started, 1e-6)
            progress.update(task, advance=nbytes, rate=f"{spans_seen / elapsed:,.0f} spans/s")

        def on_file(report: FileReport) -> None:
            nonlocal failed, done_files
            done_files += 1
            progress.update(task, files=f"{done_files}/{len(files)} files")
            rejected = f"{report.rejected_spans} invalid spans and {report.rejected_logs} invalid log records"
            reasons = "; ".join(report.errors)
            if report.error is not None:
                print_error(report.error)
                failed += 1
            elif os.fspath(report.path) in empty:
                print_error(f"{report.path}: the file is empty (0 bytes): nothing to ingest")
                failed += 1
            elif report.all_invalid:
                print_error(f"{report.path}: nothing valid to store: {rejected} ({reasons})")
                failed += 1
            elif report.rejected_spans or report.rejected_logs:
                _warn(f"{report.path}: skipped {rejected} ({reasons}); the rest is stored")
            if report.error is None:
                _not_stored(report)

        total = ingest_files(store, files, pool, on_file, on_part=on_part)
        note = ingested_note(store, since) if total.runs else None
    console.print(
        f"read {len(files) - failed} file(s): {total.spans} spans ({total.new_spans} new), "
        f"{total.logs} log records ({total.new_logs} new), {total.traces} traces, "
        f"{total.runs} runs",
        markup=False,
    )
    if note is not None:
        _note(note)
    if failed:
        print_error(f"{failed} of {len(files)} file(s) could not be read")
        raise typer.Exit(1)


def _note(message: str) -> None:
    """``note: <message>`` on one line to stderr."""
    err_console.print(f"note: {message}", style="yellow", markup=False, soft_wrap=True)


def _not_stored(report: FileReport) -> None:
    """Say what a file held that is not stored, rather than a bare "0 new"."""
    for signal in report.other_signals:
        _warn(
            f"{report.path}: holds {signal}, which tracereplay does not store "
            "(it stores traces and logs)"
        )
    n = report.untraced_logs
    if n:
        records = "1 log record has" if n == 1 else f"{n} log records have"
        _warn(
            f"{report.path}: {records} no trace id: not stored (a log record joins an agent "
            "run through its trace and span ids)"
        )


def _warn(message: str) -> None:
    """``warning: <message>`` on one line to stderr."""
    err_console.print(
        f"warning: {' '.join(message.split())}", style="yellow", markup=False, soft_wrap=True
    )


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
