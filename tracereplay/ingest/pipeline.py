"""Decoded spans and logs -> stored spans, logs and (re)converted runs.

The work is cut in two so it can run in two processes: ``prepare_batch`` (pure Python, no store:
span rows, and the runs of every trace the batch holds whole) and ``store_prepared`` (the DuckDB
writes, plus converting again the few traces the batch does not hold whole). ``ingest_batch``
does both in the caller's process.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter

import pyarrow as pa
import pyarrow.compute as pc

from tracereplay.convert import convert_trace
from tracereplay.gcpause import gc_paused
from tracereplay.ingest.stats import IngestStats
from tracereplay.spans import LogRecord, Span
from tracereplay.store.db import Store, TimeWindow
from tracereplay.store.rows import RunRows, RunTables, spans_table


def _count_by_trace(table: pa.Table | None, into: dict[str, int]) -> None:
    """The rows of each trace of ``table`` (a batch's runs: a few per trace), counted in
    Python: Arrow's ``group_by`` would import its query engine (once per process, more than
    the counting costs) for a thousand rows."""
    if table is None or not table.num_rows:
        return
    into.update(Counter(table["trace_id"].to_pylist()))


@dataclass
class PreparedBatch:
    """A batch of spans and logs made ready for the store by ``prepare_batch``; picklable.

    ``runs`` hold the runs of ``converted``: the traces whose spans are all new to the store as
    far as the batch knows, and which have no log records in it. ``store_prepared`` keeps them
    only for the traces the store turns out not to know yet.
    """

    span_count: int = 0
    spans: pa.Table | None = None
    trace_ids: list[str] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    converted: list[str] = field(default_factory=list)
    runs: RunTables = field(default_factory=RunTables)
    run_count: int = 0
    #: no (trace id, span id) occurs twice among the batch's spans
    distinct_spans: bool = False
    #: traces to convert from the store once the batch's spans are in (a merged batch's traces
    #: that its parts held a piece each of)
    reconvert: list[str] = field(default_factory=list)


_start = attrgetter("start_ns")


def _group(spans: Sequence[Span]) -> dict[str, dict[str, Span]]:
    by_trace: dict[str, dict[str, Span]] = defaultdict(dict)
    for span in spans:
        by_trace[span.trace_id].setdefault(span.span_id, span)
    return by_trace


def prepare_batch(spans: Sequence[Span], logs: Sequence[LogRecord] = ()) -> PreparedBatch:
    """Lay out ``spans`` as span rows and convert the traces they hold (see ``PreparedBatch``).

    Needs no store, so it can run in a worker process while another batch is being written.
    """
    # Called with the collector paused (see gcpause); the runs die here, before it runs again
    # (it would otherwise scan them all once on the way out). Each trace's runs are laid out
    # as rows as soon as they are made, and let go (see RunRows: cheaper than holding them).
    by_trace = _group(spans)
    with_logs = {r.trace_id for r in logs if r.trace_id}
    rows = RunRows()
    converted = []
    for trace_id, trace_spans in by_trace.items():
        if trace_id in with_logs:
            continue  # the store's copy of the logs decides (dedup, order): converted there
        ordered = sorted(trace_spans.values(), key=_start)
        rows.add(convert_trace(ordered))
        converted.append(trace_id)
    return PreparedBatch(
        span_count=len(spans),
        spans=spans_table(spans) if spans else None,
        trace_ids=list(by_trace),
        logs=list(logs),
        converted=converted,
        runs=rows.tables(),
        run_count=rows.count,
        distinct_spans=sum(map(len, by_trace.values())) == len(spans),
    )


def _concat(tables: Sequence[pa.Table | None]) -> pa.Table | None:
    present = [t for t in tables if t is not None]
    if len(present) <= 1:
        return present[0] if present else None
    # a column of nulls only (no run had an error, say) is typed null: promote it
    return pa.concat_tables(present, promote_options="default")


def merge_prepared(batches: Sequence[PreparedBatch]) -> PreparedBatch:
    """One batch standing for ``batches``, consecutive prepared parts of the input, so that the
    store gets one write for several small parts (small parts are cheaper to prepare: less
    memory to touch). A trace that more than one part holds a piece of was converted from a
    piece each time: those runs are dropped and the trace is converted from the store instead."""
    if len(batches) == 1:
        return batches[0]
    holders: dict[str, int] = defaultdict(int)
    for batch in batches:
        for trace_id in batch.trace_ids:
            holders[trace_id] += 1
    shared = {t for t, n in holders.items() if n > 1}
    runs = [b.runs.without(shared) for b in batches]
    merged_runs = RunTables(
        _concat([r.runs for r in runs]),
        _concat([r.tool_calls for r in runs]),
        _concat([r.llm_calls for r in runs]),
    )
    return PreparedBatch(
        span_count=sum(b.span_count for b in batches),
        spans=_concat([b.spans for b in batches]),
        trace_ids=list(holders),
        logs=[r for b in batches for r in b.logs],
        converted=[t for b in batches for t in b.converted if t not in shared],
        runs=merged_runs,
        run_count=merged_runs.runs.num_rows if merged_runs.runs is not None else 0,
        distinct_spans=not shared and all(b.distinct_spans for b in batches),
        reconvert=[*dict.fromkeys([*shared, *(t for b in batches for t in b.reconvert)])],
    )


def store_prepared(store: Store, batch: PreparedBatch) -> IngestStats:
    """Write a ``prepare_batch`` result: spans, logs, and the runs of every trace it touches.

    Call it inside ``store.transaction()``. A trace the store already had spans or log records
    of (a late child, a trace split across batches or files), or that has log records in the
    batch, is converted again here from everything stored, so its runs always reflect
    everything received.
    """
    logs = batch.logs
    touched = set(batch.trace_ids) | {r.trace_id for r in logs if r.trace_id}
    if not touched:
        return IngestStats(spans=batch.span_count, logs=len(logs))
    window = _window(batch)
    # a server store with other writers: this batch's traces are ours until we commit, and
    # what we read of them next includes every span another writer committed before
    store.lock([f"trace:{t}" for t in touched])
    stored = store.stored_trace_ids(touched, window)
    log_traces = {r.trace_id for r in logs}  # "" for records without a trace
    # traces with log records stored: theirs are converted again, and looked at for duplicates
    logged = store.log_trace_ids(touched | log_traces) if store.count("logs") else set()
    redo = stored | (logged - {""}) | (log_traces - {""})
    redo.update(batch.reconvert)
    new_spans = (
        store.insert_span_table(
            batch.spans,
            stored=stored.intersection(batch.trace_ids),
            distinct=batch.distinct_spans,
            window=window,
        )
        if batch.spans is not None
        else 0
    )
    new_logs = store.insert_logs(logs, stored=logged & log_traces)

    # the batch's runs stand for the traces the store did not know; the rest is redone.
    # Runs are only ever written with their trace's spans, so a trace without stored spans
    # or logs (not in ``redo``) has no runs to remove.
    kept = batch.runs.without(redo)
    store.replace_run_tables([t for t in batch.converted if t in redo], kept, window)
    run_counts = dict.fromkeys(touched, 0)
    _count_by_trace(kept.runs, run_counts)
    if redo:
        run_counts.update(_reconvert(store, redo, window))
    return IngestStats(
        spans=batch.span_count,
        new_spans=new_spans,
        logs=len(logs),
        new_logs=new_logs,
        run_counts=run_counts,
    )


def _window(batch: PreparedBatch) -> TimeWindow | None:
    """Where the batch's traces can have stored spans and runs (``TimeWindow``); None (look
    everywhere) when the batch touches a trace through log records alone, whose spans' times
    it does not know."""
    spans = batch.spans
    if spans is None or not spans.num_rows:
        return None
    if batch.logs:
        held = set(batch.trace_ids)
        if any(r.trace_id and r.trace_id not in held for r in batch.logs):
            return None
    bounds = pc.min_max(spans["start_time_unix_nano"]).as_py()
    if bounds["min"] is None:
        return None
    return TimeWindow.around(int(bounds["min"]), int(bounds["max"]))


def _reconvert(
    store: Store, trace_ids: set[str], window: TimeWindow | None = None
) -> dict[str, int]:
    """Convert ``trace_ids`` again from all their stored spans (within ``window``) and logs;
    returns the run count of each."""
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in store.load_spans(trace_ids, window):
        by_trace[span.trace_id].append(span)
    logs_by_trace: dict[str, list[LogRecord]] = defaultdict(list)
    if store.count("logs"):
        for record in store.load_logs(by_trace.keys()):
            logs_by_trace[record.trace_id].append(record)
    runs = []
    counts = dict.fromkeys(trace_ids, 0)
    for trace_id, trace_spans in by_trace.items():
        # load_spans gives one row per (trace, span) id, ordered by start
        converted = convert_trace(trace_spans, logs_by_trace.get(trace_id, ()))
        counts[trace_id] = len(converted)
        runs.extend(converted)
    store.replace_runs(by_trace.keys(), runs, window)
    return counts


def ingest_batch(
    store: Store, spans: Sequence[Span], logs: Sequence[LogRecord] = ()
) -> IngestStats:
    """Store ``spans`` and ``logs`` and re-convert every trace they touch.

    Call it inside ``store.transaction()`` so the batch lands whole or not at all. A trace that
    already had spans stored (a late child, a trace split across batches or files) is converted
    again from all of its spans, so its runs always reflect everything received.
    """
    with gc_paused():
        return store_prepared(store, prepare_batch(spans, logs))
