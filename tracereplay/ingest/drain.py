"""Draining the spool into DuckDB, and opening the store the way every reading command does."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tracereplay.errors import DecodeError
from tracereplay.ingest.pipeline import IngestStats, ingest_batch
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


def drain_spool(store: Store, batch_bytes: int = BATCH_BYTES) -> IngestStats:
    """Move every complete record of the spool into the store.

    Each batch of records and the new read offset of its segment commit in one transaction, so
    a crash at any point neither loses nor doubles anything. Finished segments that are fully
    drained are deleted; a damaged one is renamed ``.corrupt`` and reported in the log.
    """
    total = IngestStats()
    for segment in spool.list_segments(store.spool_dir):
        offset = store.spool_offset(segment.key)
        # Stop at what the segment held when we got to it: chasing a writer that keeps appending
        # (a busy ``tracereplay serve``) would keep this command, and the store lock, forever.
        end = spool.segment_size(segment)
        while True:
            finished = segment.finished  # read before the data: a later append is seen next time
            chunk = spool.read_records(segment, offset, batch_bytes)
            if chunk.records:
                spans: list[Span] = []
                logs: list[LogRecord] = []
                for kind, payload in chunk.records:
                    try:
                        decoded = _DECODERS[kind](payload)
                    except (
                        DecodeError
                    ) as exc:  # writers validate first; never block the spool on it
                        log.warning(
                            "skipping an undecodable spool record in %s: %s", segment.key, exc
                        )
                        continue
                    spans.extend(decoded.spans)
                    logs.extend(decoded.logs)
                with store.transaction():
                    total.add(ingest_batch(store, spans, logs))
                    store.set_spool_offset(segment.key, chunk.end_offset)
                offset = chunk.end_offset
                if offset >= end and not finished:
                    break  # the rest was appended since: the next drain takes it
            if chunk.corrupt:
                log.warning("spool segment damaged, set aside: %s", chunk.corrupt)
                spool.retire_segment(segment, corrupt=True)
                store.forget_spool_segment(segment.key)
                break
            if not chunk.records:
                if finished and offset >= spool.segment_size(segment):
                    spool.retire_segment(segment)
                    store.forget_spool_segment(segment.key)
                break
    return total


@contextmanager
def open_store(
    db: str | Path | None = None, *, drain: bool = True, timeout: float = 60.0
) -> Iterator[Store]:
    """Open the store for a command: lock, open, migrate and (by default) drain the spool first,
    so what any agent process wrote before is visible (read-your-writes)."""
    with Store.open(db, timeout=timeout) as store:
        if drain:
            drain_spool(store)
        yield store
