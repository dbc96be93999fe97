"""Input files into the store, with decoding and conversion in worker processes.

The work of a file is cut in parts (whole files, or runs of whole messages of a big Collector
``format: proto`` file); worker processes decode each part and ``prepare_batch`` it, while this
process writes the prepared parts to DuckDB in file order (``store_prepared``). A file lands
whole or not at all: a file that fails to decode is reported and leaves nothing behind.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.pool import AsyncResult, Pool
from pathlib import Path

from tracereplay.errors import DecodeError
from tracereplay.gcpause import gc_paused
from tracereplay.ingest.pipeline import IngestStats, PreparedBatch, prepare_batch, store_prepared
from tracereplay.otlp.files import decode_file_content, frame_ranges, read_file, read_range
from tracereplay.store.db import Store

#: bytes of a big length-delimited protobuf file decoded as one part
PART_BYTES = 8 * 1024 * 1024
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


def _prepare(part: _Part) -> _Prepared:
    """Decode and prepare one part (runs in a worker process, or here)."""
    # one collector pause for the whole part, the decoded spans freed inside it: on the way out
    # the collector then has only the (untracked) Arrow tables to look at
    with gc_paused():
        try:
            if part.range is None:
                decoded = read_file(part.path)
            else:
                decoded = decode_file_content(read_range(part.path, *part.range))
        except DecodeError as exc:
            return _Prepared(error=str(exc))
        out = _Prepared(
            prepare_batch(decoded.spans, decoded.logs),
            rejected_spans=decoded.rejected_spans,
            rejected_logs=decoded.rejected_logs,
            errors=decoded.errors,
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


def default_workers(files: Sequence[Path]) -> int:
    """Worker processes worth starting for ``files``: none for one small file, else up to the
    CPU count (at least 2, so decoding overlaps the DuckDB writes)."""
    total = 0
    for path in files:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    if total < 2 * PART_BYTES:
        return 0
    return max(2, min(os.cpu_count() or 1, 4))


@contextmanager
def worker_pool(workers: int) -> Iterator[Pool | None]:
    """A pool of ``workers`` processes (``None`` for 0). Start it before opening the store:
    workers are forked where the platform allows, and must not inherit an open DuckDB."""
    if workers <= 0:
        yield None
        return
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    pool = ctx.Pool(workers)
    try:
        yield pool
    finally:
        pool.terminate()
        pool.join()


def _results(parts: list[_Part], pool: Pool | None, window: int) -> Iterator[_Prepared]:
    """Prepared parts in order; at most ``window`` prepared ahead of the consumer."""
    if pool is None:
        for part in parts:
            yield _prepare(part)
        return
    pending: deque[AsyncResult[_Prepared]] = deque()
    todo = iter(parts)
    for part in todo:
        pending.append(pool.apply_async(_prepare, (part,)))
        if len(pending) >= window:
            break
    while pending:
        result = pending.popleft().get()
        nxt = next(todo, None)
        if nxt is not None:
            pending.append(pool.apply_async(_prepare, (nxt,)))
        yield result


def ingest_files(
    store: Store,
    files: Sequence[Path],
    pool: Pool | None = None,
    on_file: Callable[[FileReport], None] | None = None,
    part_bytes: int = PART_BYTES,
    window: int = 4,
) -> IngestStats:
    """Ingest ``files`` (decoded with ``pool`` when given) and return what was stored.

    ``on_file`` gets a ``FileReport`` for each file once it is written (or failed), in order;
    at most ``window`` parts are prepared ahead of the writes.
    Small files are grouped into transactions of about ``BATCH_SPANS`` spans; a file cut in
    parts gets a transaction of its own.
    """
    total = IngestStats()
    parts = _parts(files, part_bytes)
    in_tx = False
    tx_spans = 0
    report: FileReport | None = None

    def begin() -> None:
        nonlocal in_tx, tx_spans
        if not in_tx:
            store.con.execute("BEGIN TRANSACTION")
            in_tx, tx_spans = True, 0

    def commit() -> None:
        nonlocal in_tx
        if in_tx:
            store.con.execute("COMMIT")
            in_tx = False

    try:
        file_stats = IngestStats()
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
                    if split:  # drop the parts written so far; say what read_file says
                        store.con.execute("ROLLBACK")
                        in_tx = False
                        report.error = _whole_file_error(part.path, prepared.error)
                    file_stats = IngestStats()
                else:
                    assert prepared.batch is not None
                    report.rejected_spans += prepared.rejected_spans
                    report.rejected_logs += prepared.rejected_logs
                    report.errors.extend(e for e in prepared.errors if e not in report.errors)
                    begin()
                    file_stats.add(store_prepared(store, prepared.batch))
                    tx_spans += prepared.batch.span_count
            del prepared
            if part.last:
                if split or tx_spans >= BATCH_SPANS:
                    commit()
                total.add(file_stats)
                if on_file is not None:
                    on_file(report)
        commit()
    except BaseException:
        if in_tx:
            store.con.execute("ROLLBACK")
        raise
    return total


def _whole_file_error(path: Path, fallback: str) -> str:
    """The error ``read_file`` gives for the whole file (message numbers count from its start)."""
    try:
        read_file(path)
    except DecodeError as exc:
        return str(exc)
    return f"{path}: {fallback}"
