"""Input files into the store, with decoding and conversion in worker processes.

The work of a file is cut in parts (whole files, or runs of whole messages of a big Collector
``format: proto`` file); worker processes decode each part and ``prepare_batch`` it, while this
process writes the prepared parts to DuckDB in file order (``store_prepared``). A file lands
whole or not at all: a file that fails to decode is reported and leaves nothing behind.

The workers are a ``workers.WorkerPool``: a window of parts is in flight, the results are taken
in order, and the prepared tables come back as memory-mapped Arrow files (``handoff``), not
pickles.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path

from tracereplay.errors import DecodeError
from tracereplay.gcpause import gc_paused
from tracereplay.ingest.pipeline import (
    IngestStats,
    PreparedBatch,
    merge_prepared,
    prepare_batch,
    store_prepared,
)
from tracereplay.ingest.workers import Job, WorkerPool
from tracereplay.otlp.files import decode_file_content, frame_ranges, read_file, read_range
from tracereplay.store.db import Store

#: bytes of a big length-delimited protobuf file decoded as one part (small parts keep a
#: worker's memory in cache and in the process: bigger parts cost more CPU per span)
PART_BYTES = 1024 * 1024
#: spans of consecutive parts of a file merged into one write (DuckDB pays per statement)
WRITE_SPANS = 10_000
#: parts prepared ahead of the writes
WINDOW = 16
#: input bytes from which worker processes are worth starting
PARALLEL_MIN_BYTES = 16 * 1024 * 1024
#: spans written per transaction when small files are grouped
BATCH_SPANS = 200_000


@dataclass
class FileReport:
    """What became of one input file."""

    path: Path
    error: str | None = None
    rejected_spans: int = 0
    rejected_logs: int = 0
    errors: list[str] = field(default_factory=list)
    #: valid spans and log records the file holds (stored, or already in the store)
    spans: int = 0
    logs: int = 0
    #: log records without a trace id: not stored (a record joins a run through its trace)
    untraced_logs: int = 0
    #: signals the file held that tracereplay does not store ("metrics")
    other_signals: list[str] = field(default_factory=list)

    @property
    def all_invalid(self) -> bool:
        """The file holds spans or log records, and every one of them is invalid."""
        return not self.spans and not self.logs and bool(self.rejected_spans or self.rejected_logs)


@dataclass(frozen=True)
class _Part:
    file: int
    path: Path
    range: tuple[int, int] | None  # None: the whole file
    last: bool


@dataclass
class _Prepared:
    batch: PreparedBatch | None = None
    error: str | None = None
    rejected_spans: int = 0
    rejected_logs: int = 0
    errors: list[str] = field(default_factory=list)
    untraced_logs: int = 0
    other_signals: list[str] = field(default_factory=list)


def _prepare(part: _Part) -> _Prepared:
    """Decode and prepare one part (runs in a worker process, or here)."""
    try:
        if part.range is None:
            decoded = read_file(part.path)
        else:
            decoded = decode_file_content(read_range(part.path, *part.range))
    except DecodeError as exc:
        return _Prepared(error=str(exc))
    logs = [r for r in decoded.logs if r.trace_id]
    out = _Prepared(
        prepare_batch(decoded.spans, logs),
        rejected_spans=decoded.rejected_spans,
        rejected_logs=decoded.rejected_logs,
        errors=decoded.errors,
        untraced_logs=len(decoded.logs) - len(logs),
        other_signals=decoded.other_signals,
    )
    del decoded
    return out


def _parts(files: Sequence[Path], part_bytes: int) -> list[_Part]:
    parts = []
    for index, path in enumerate(files):
        ranges = frame_ranges(path, part_bytes)
        if ranges is None:
            parts.append(_Part(index, path, None, True))
        else:
            parts.extend(_Part(index, path, r, i == len(ranges) - 1) for i, r in enumerate(ranges))
    return parts


#: what a file ingest's worker pool preloads (``workers.WorkerPool``): its jobs are this module's
WORKER_PRELOAD = (__name__,)


def default_workers(files: Sequence[Path]) -> int:
    """Worker processes worth starting for ``files``: none for one small file, else up to the
    CPU count (at least 2, so decoding overlaps the DuckDB writes)."""
    total = 0
    for path in files:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    if total < PARALLEL_MIN_BYTES:
        return 0
    return max(2, min(os.cpu_count() or 1, 4))


def _prepare_in_worker(part: _Part) -> tuple[PreparedBatch | None, _Prepared]:
    """``_prepare`` as a ``WorkerPool`` job: the batch apart, to go back as handoff files."""
    prepared = _prepare(part)
    return prepared.batch, replace(prepared, batch=None)


def _results(parts: list[_Part], pool: WorkerPool | None, window: int) -> Iterator[_Prepared]:
    """Prepared parts in order; at most ``window`` prepared ahead of the consumer."""
    if pool is None:
        for part in parts:
            yield _prepare(part)
        return
    todo = iter(parts)
    jobs: deque[Job[_Prepared]] = deque(
        pool.submit(_prepare_in_worker, part) for part in islice(todo, window)
    )
    while jobs:
        batch, prepared = jobs.popleft().result()
        nxt = next(todo, None)
        if nxt is not None:
            jobs.append(pool.submit(_prepare_in_worker, nxt))
        prepared.batch = batch
        yield prepared


def ingest_files(
    store: Store,
    files: Sequence[Path],
    pool: WorkerPool | None = None,
    on_file: Callable[[FileReport], None] | None = None,
    part_bytes: int = PART_BYTES,
    window: int = WINDOW,
    on_part: Callable[[int, int], None] | None = None,
) -> IngestStats:
    """Ingest ``files`` (decoded with ``pool`` when given) and return what was stored.

    ``on_file`` gets a ``FileReport`` for each file once it is written (or failed), in order;
    ``on_part(input_bytes, spans)`` is called as each part (a whole file, or a 1 MB piece of a
    big one) is taken in, for progress; at most ``window`` parts are prepared ahead of the
    writes.
    Small files are grouped into transactions of about ``BATCH_SPANS`` spans; a file cut in
    parts gets a transaction of its own.
    """
    # DuckDB on one thread while worker processes keep the cores busy: a second thread of its
    # own only competes with them (CPU per span for nothing)
    # the cyclic GC paused for the whole ingest (see gcpause): a part's decoded spans are freed
    # inside the pause, so the collector never scans them
    with gc_paused(), store.settings(threads=1) if pool is not None else nullcontext():
        return _ingest_files(store, files, pool, on_file, part_bytes, window, on_part)


def _part_bytes(part: _Part) -> int:
    if part.range is not None:
        return part.range[1] - part.range[0]
    try:
        return os.path.getsize(part.path)
    except OSError:
        return 0


def _ingest_files(
    store: Store,
    files: Sequence[Path],
    pool: WorkerPool | None,
    on_file: Callable[[FileReport], None] | None,
    part_bytes: int,
    window: int,
    on_part: Callable[[int, int], None] | None = None,
) -> IngestStats:
    total = IngestStats()
    parts = _parts(files, part_bytes)
    written = False  # the open transaction holds writes
    tx_spans = 0  # spans written by it
    report: FileReport | None = None
    pending: list[PreparedBatch] = []  # prepared parts of the current file, not yet written
    file_stats = IngestStats()

    def write() -> None:
        nonlocal written, tx_spans
        if pending:
            batch = merge_prepared(pending)
            pending.clear()
            file_stats.add(store_prepared(store, batch))
            written, tx_spans = True, tx_spans + batch.span_count

    def commit() -> None:
        nonlocal written, tx_spans
        if written:
            tx.commit()
            written, tx_spans = False, 0

    with store.transaction() as tx:
        for part, prepared in zip(parts, _results(parts, pool, window)):
            split = part.range is not None
            if report is None or report.path != part.path:
                report = FileReport(part.path)
                file_stats = IngestStats()
                if split:
                    commit()  # a file in parts is a transaction of its own
            if report.error is None:
                if prepared.error is not None:
                    report.error = prepared.error
                    pending.clear()
                    if split:  # drop the parts written so far; say what read_file says
                        if written:
                            tx.rollback()
                            written, tx_spans = False, 0
                        report.error = _whole_file_error(part.path, prepared.error)
                    file_stats = IngestStats()
                else:
                    assert prepared.batch is not None
                    report.rejected_spans += prepared.rejected_spans
                    report.rejected_logs += prepared.rejected_logs
                    report.spans += prepared.batch.span_count
                    report.logs += len(prepared.batch.logs)
                    report.untraced_logs += prepared.untraced_logs
                    report.other_signals += [
                        s for s in prepared.other_signals if s not in report.other_signals
                    ]
                    report.errors.extend(e for e in prepared.errors if e not in report.errors)
                    pending.append(prepared.batch)
                    if sum(b.span_count for b in pending) >= WRITE_SPANS:
                        write()
            if on_part is not None:
                batch = prepared.batch
                on_part(_part_bytes(part), batch.span_count if batch is not None else 0)
            del prepared
            if part.last:
                write()
                if split or tx_spans >= BATCH_SPANS:
                    commit()
                total.add(file_stats)
                if on_file is not None:
                    on_file(report)
    return total


def _whole_file_error(path: Path, fallback: str) -> str:
    """The error ``read_file`` gives for the whole file (message numbers count from its start)."""
    try:
        read_file(path)
    except DecodeError as exc:
        return str(exc)
    return f"{path}: {fallback}"
