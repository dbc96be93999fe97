"""Input files into the store, with decoding and conversion in worker processes.

The work of a file is cut in parts (whole files, or runs of whole messages of a big Collector
``format: proto`` file); worker processes decode each part and ``prepare_batch`` it, while this
process writes the prepared parts to DuckDB in file order (``store_prepared``). A file lands
whole or not at all: a file that fails to decode is reported and leaves nothing behind.

The workers get their parts through a pipe each (round robin: parts are about the same size)
and hand the prepared tables back as memory-mapped Arrow files (``handoff``), not pickles.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from tracereplay.errors import DecodeError, IngestError
from tracereplay.gcpause import gc_paused
from tracereplay.ingest.handoff import Shipped, handoff_directory, receive, ship
from tracereplay.ingest.pipeline import (
    IngestStats,
    PreparedBatch,
    merge_prepared,
    prepare_batch,
    store_prepared,
)
from tracereplay.otlp.files import decode_file_content, frame_ranges, read_file, read_range
from tracereplay.store.db import Store

#: bytes of a big length-delimited protobuf file decoded as one part (small parts keep a
#: worker's memory in cache and in the process: 8 MB parts cost a fifth more CPU per span)
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
    shipped: Shipped | None = None  # from a worker: ``batch`` waiting in handoff files


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
    if total < PARALLEL_MIN_BYTES:
        return 0
    return max(2, min(os.cpu_count() or 1, 4))


class Workers:
    """Worker processes that prepare parts; results come back in the order parts were given."""

    def __init__(self, count: int, directory: Path) -> None:
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self._conns: list[Connection] = []
        self._procs: list[BaseProcess] = []
        for _ in range(count):
            ours, theirs = ctx.Pipe()
            proc = ctx.Process(target=_work, args=(theirs, str(directory)), daemon=True)
            proc.start()
            theirs.close()
            self._conns.append(ours)
            self._procs.append(proc)
        self._given = 0
        self._taken = 0
        self.directory = directory

    def give(self, part: _Part) -> None:
        """Send ``part`` to the next worker in turn."""
        try:
            self._conns[self._given % len(self._conns)].send(part)
        except OSError:  # its end of the pipe is closed
            raise _died() from None
        self._given += 1

    def take(self) -> _Prepared:
        """The result of the oldest part given and not yet taken."""
        conn = self._conns[self._taken % len(self._conns)]
        try:
            message = conn.recv()
        except (EOFError, OSError):
            raise _died() from None
        self._taken += 1
        if isinstance(message, str):
            raise IngestError(
                f"ingest stopped: a worker process failed ({message}); run it again (spans"
                " already stored are skipped)"
            )
        prepared: _Prepared = message
        if prepared.shipped is not None:
            prepared.batch = receive(prepared.shipped)
            prepared.shipped = None
        return prepared

    def close(self) -> None:
        """Stop the workers (at once: what they are still doing is not wanted)."""
        for proc in self._procs:
            proc.terminate()
        for proc in self._procs:
            proc.join()
        for conn in self._conns:
            conn.close()


def _died() -> IngestError:
    return IngestError(
        "ingest stopped: a worker process died; run it again (spans already stored are skipped)"
    )


def _work(conn: Connection, directory: str) -> None:
    """A worker process: prepare each part received until told to stop (``None``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the writer's to handle
    where = Path(directory)
    done = 0
    while True:
        try:
            part = conn.recv()
        except EOFError:
            return
        if part is None:
            return
        try:
            prepared = _prepare(part)
            if prepared.batch is not None:
                name = f"{os.getpid()}-{done}"
                prepared = replace(prepared, batch=None, shipped=ship(prepared.batch, where, name))
            done += 1
            conn.send(prepared)
        except Exception as exc:  # reported to the writer, which raises it
            conn.send(f"{type(exc).__name__}: {exc}")


@contextmanager
def worker_pool(workers: int) -> Iterator[Workers | None]:
    """``workers`` worker processes (``None`` for 0). Start them before opening the store:
    they are forked where the platform allows, and must not inherit an open DuckDB."""
    if workers <= 0:
        yield None
        return
    with handoff_directory() as directory:
        pool = Workers(workers, directory)
        try:
            yield pool
        finally:
            pool.close()


def _results(parts: list[_Part], pool: Workers | None, window: int) -> Iterator[_Prepared]:
    """Prepared parts in order; at most ``window`` prepared ahead of the consumer."""
    if pool is None:
        for part in parts:
            yield _prepare(part)
        return
    todo = iter(parts)
    pending = 0
    for part in todo:
        pool.give(part)
        pending += 1
        if pending >= window:
            break
    while pending:
        result = pool.take()
        pending -= 1
        nxt = next(todo, None)
        if nxt is not None:
            pool.give(nxt)
            pending += 1
        yield result


def ingest_files(
    store: Store,
    files: Sequence[Path],
    pool: Workers | None = None,
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
    # own only competes with them (about 2 µs of CPU per span for nothing)
    with store.settings(threads=1) if pool is not None else nullcontext():
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
    pool: Workers | None,
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
