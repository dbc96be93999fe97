"""Draining the spool into DuckDB, and opening the store the way every reading command does."""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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
from tracereplay.ingest.workers import Job, WorkerPool, shared_pool
from tracereplay.otlp import (
    decode_logs_json,
    decode_logs_pb,
    decode_traces_json,
    decode_traces_pb,
)
from tracereplay.spans import LogRecord, Span
from tracereplay.store import spool
from tracereplay.store.db import Store

log = logging.getLogger("tracereplay.drain")

_DECODERS = {
    spool.KIND_TRACES_PB: decode_traces_pb,
    spool.KIND_LOGS_PB: decode_logs_pb,
    spool.KIND_TRACES_JSON: decode_traces_json,
    spool.KIND_LOGS_JSON: decode_logs_json,
}

#: payload bytes read per DuckDB transaction
BATCH_BYTES = 16 * 1024 * 1024
#: with worker processes: payload bytes per transaction (smaller, so decoding the next batch
#: overlaps writing this one)
PARALLEL_BATCH_BYTES = 4 * 1024 * 1024
#: undrained bytes from which a drain decodes in worker processes
PARALLEL_MIN_BYTES = 2 * PARALLEL_BATCH_BYTES
#: with worker processes: payload bytes written per transaction (several batches)
PARALLEL_TX_BYTES = 64 * 1024 * 1024
#: worker processes a big backlog is decoded in (few: a server's drain shares the cores with
#: its receivers)
WORKERS = 2


def _decode_records(
    records: list[tuple[int, bytes]], spool_directory: Path | None = None
) -> tuple[PreparedBatch, list[str]]:
    """Decode spool records and prepare them for the store; undecodable ones are skipped and
    described in the returned warnings.

    A record that fails for any other reason (a value nothing downstream can hold, a converter
    bug) never blocks the records after it: the batch is prepared again record by record and
    the record that fails is set aside, whole, in ``<db>.spool/rejected/`` (see
    ``spool.set_aside``)."""
    try:
        return _decode_all(records)
    except (DecodeError, MemoryError):
        raise
    except Exception:
        if len(records) == 1:
            raise
    batches = []
    warnings = []
    for record in records:
        try:
            batch, found = _decode_all([record])
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}"
            where = spool.set_aside(spool_directory, *record, why) if spool_directory else None
            kept = f"; kept in {where}" if where else ""
            warnings.append(f"a spool record could not be stored ({why[:200]}){kept}")
            continue
        batches.append(batch)
        warnings.extend(found)
    return (merge_prepared(batches) if batches else PreparedBatch()), warnings


def _decode_all(records: list[tuple[int, bytes]]) -> tuple[PreparedBatch, list[str]]:
    spans: list[Span] = []
    logs: list[LogRecord] = []
    warnings = []
    rejected_spans = rejected_logs = 0
    reasons: list[str] = []
    for kind, payload in records:
        try:
            decoded = _DECODERS[kind](payload)
        except DecodeError as exc:  # writers validate first; never block the spool on it
            warnings.append(str(exc))
            continue
        spans.extend(decoded.spans)
        logs.extend(decoded.logs)
        rejected_spans += decoded.rejected_spans
        rejected_logs += decoded.rejected_logs
        reasons.extend(r for r in decoded.errors if r not in reasons)
    batch = prepare_batch(spans, logs)
    del spans, logs
    if rejected_spans or rejected_logs:
        # receivers refuse these before acknowledging; SDK agents (a bad clock) do not
        warnings.append(
            f"skipped {rejected_spans} invalid spans and {rejected_logs} invalid log records"
            f" ({'; '.join(reasons[:3])})"
        )
    return batch, warnings


def _worker_pool() -> WorkerPool | None:
    """The process-wide worker pool (started on first use; ``None`` on a single core)."""
    if min(WORKERS, os.cpu_count() or 1) < 2:
        return None
    return shared_pool(WORKERS, preload=(__name__,))  # the workers run this module's jobs


@dataclass
class _Step:
    """One thing a drain does to a segment, in order: write a chunk, or retire the segment."""

    segment: spool.Segment
    chunk: spool.ReadResult | None = None
    retire: bool = False
    corrupt: str | None = None
    job: Job[list[str]] | None = None


def _steps(segment: spool.Segment, offset: int, batch_bytes: int) -> Iterator[_Step]:
    """What draining ``segment`` from ``offset`` takes, read ahead of the writes."""
    # Stop at what the segment held when we got to it: chasing a writer that keeps appending
    # (a busy ``tracereplay serve``) would keep this command, and the store lock, forever.
    end = spool.segment_size(segment)
    while True:
        finished = segment.finished  # read before the data: a later append is seen next time
        chunk = spool.read_records(segment, offset, batch_bytes)
        if chunk.records:
            yield _Step(segment, chunk)
            offset = chunk.end_offset
            if offset >= end and not finished:
                return  # the rest was appended since: the next drain takes it
        if chunk.corrupt:
            yield _Step(segment, corrupt=chunk.corrupt)
            return
        if not chunk.records:
            if finished and offset >= spool.segment_size(segment):
                yield _Step(segment, retire=True)
            return


def warm_up() -> None:
    """Start the worker processes a big backlog is decoded in now (in the background), so that
    the first burst a server receives does not wait for them to start."""
    pool = _worker_pool()
    if pool is not None:
        pool.start()


def drain_spool(
    store: Store,
    batch_bytes: int = BATCH_BYTES,
    *,
    tx_bytes: int | None = None,
    on_commit: Callable[[IngestStats], None] | None = None,
) -> IngestStats:
    """Move every complete record of the spool into the store.

    Each batch of records and the new read offset of its segment commit in one transaction, so
    a crash at any point neither loses nor doubles anything. Finished segments that are fully
    drained are deleted; a damaged one is renamed ``.corrupt`` and reported in the log. A big
    backlog is decoded and converted in worker processes, a few batches ahead of the writes,
    and written in transactions of up to ``PARALLEL_TX_BYTES`` (DuckDB pays much more per
    commit than per row). ``tx_bytes`` caps both the batches and the transactions: what is
    drained becomes queryable every ``tx_bytes`` of payload (``tracereplay serve``);
    ``on_commit`` gets what each transaction stored once it is committed.
    """
    total = IngestStats()
    with gc_paused():  # see gcpause: the decoded spans die inside the pause
        _drain_all(store, batch_bytes, tx_bytes, on_commit, total)
    return total


def _drain_all(
    store: Store,
    batch_bytes: int,
    tx_bytes: int | None,
    on_commit: Callable[[IngestStats], None] | None,
    total: IngestStats,
) -> None:
    for segment in spool.list_segments(store.spool_dir):
        offset = store.spool_offset(segment.key)
        pool = None
        size = batch_bytes
        if spool.segment_size(segment) - offset >= PARALLEL_MIN_BYTES:
            pool = _worker_pool()
            if pool is not None:
                size = min(batch_bytes, PARALLEL_BATCH_BYTES)
        tx = PARALLEL_TX_BYTES if pool is not None else 0
        if tx_bytes is not None:
            size, tx = min(size, tx_bytes), min(tx, tx_bytes)
        _drain_segment(store, _steps(segment, offset, size), pool, tx, total, on_commit)


def _drain_segment(
    store: Store,
    steps: Iterator[_Step],
    pool: WorkerPool | None,
    tx_bytes: int,
    total: IngestStats,
    on_commit: Callable[[IngestStats], None] | None = None,
) -> None:
    """Carry out ``steps`` in order, chunks grouped in transactions of about ``tx_bytes``."""
    ahead: deque[_Step] = deque()
    window = 3 if pool is not None else 1
    chunks = 0  # written by the open transaction
    written = 0  # their payload bytes
    committed = IngestStats()  # what they stored

    def commit() -> None:
        nonlocal chunks, written, committed
        if chunks:
            tx.commit()
            if on_commit is not None:
                on_commit(committed)
            chunks, written, committed = 0, 0, IngestStats()

    with store.transaction() as tx:
        while True:
            while len(ahead) < window:
                step = next(steps, None)
                if step is None:
                    break
                if pool is not None and step.chunk is not None:
                    step.job = pool.submit(
                        _decode_records, step.chunk.records, step.segment.path.parent
                    )
                ahead.append(step)
            if not ahead:
                break
            step = ahead.popleft()
            if step.chunk is None:  # retiring the segment: only once what precedes is committed
                commit()
                _retire(store, step)
                tx.commit()
                continue
            batch = _prepared(step)
            stored = store_prepared(store, batch)
            total.add(stored)
            committed.add(stored)
            store.set_spool_offset(step.segment.key, step.chunk.end_offset)
            chunks += 1
            written += sum(len(payload) for _, payload in step.chunk.records)
            if written >= tx_bytes:
                commit()
        commit()


def _prepared(step: _Step) -> PreparedBatch:
    """The step's chunk decoded and prepared (by its worker, else here); warnings logged. A
    worker that died or failed stops the drain with an ``IngestError`` (the open transaction
    is rolled back: its records are drained again next time)."""
    assert step.chunk is not None
    if step.job is not None:
        batch, warnings = step.job.result()
        assert batch is not None
    else:
        batch, warnings = _decode_records(step.chunk.records, step.segment.path.parent)
    for warning in warnings:
        log.warning("draining %s: %s", step.segment.key, warning)
    return batch


def _retire(store: Store, step: _Step) -> None:
    segment = step.segment
    if step.corrupt is not None:
        log.warning("spool segment damaged, set aside: %s", step.corrupt)
        spool.retire_segment(segment, corrupt=True)
        store.forget_spool_segment(segment.key)
    elif step.retire:
        spool.retire_segment(segment)
        store.forget_spool_segment(segment.key)
