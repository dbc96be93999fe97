"""Decoded spans and logs -> stored spans, logs and (re)converted runs."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, fields

from tracereplay.convert import convert_trace
from tracereplay.spans import LogRecord, Span
from tracereplay.store.db import Store


@dataclass
class IngestStats:
    """What one ingest did: spans and logs read and newly stored, traces touched, runs written."""

    spans: int = 0
    new_spans: int = 0
    logs: int = 0
    new_logs: int = 0
    traces: int = 0
    runs: int = 0

    def add(self, other: IngestStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def ingest_batch(
    store: Store, spans: Sequence[Span], logs: Sequence[LogRecord] = ()
) -> IngestStats:
    """Store ``spans`` and ``logs`` and re-convert every trace they touch.

    Call it inside ``store.transaction()`` so the batch lands whole or not at all. A trace that
    already had spans stored (a late child, a trace split across batches or files) is converted
    again from all of its spans, so its runs always reflect everything received.
    """
    touched = {s.trace_id for s in spans} | {r.trace_id for r in logs if r.trace_id}
    if not touched:
        return IngestStats(spans=len(spans), logs=len(logs))
    already_stored = store.stored_trace_ids(touched)
    new_spans = store.insert_spans(spans)
    new_logs = store.insert_logs(logs)

    by_trace: dict[str, dict[str, Span]] = defaultdict(dict)
    for span in spans:
        if span.trace_id not in already_stored:
            by_trace[span.trace_id].setdefault(span.span_id, span)
    for span in store.load_spans(already_stored):
        by_trace[span.trace_id][span.span_id] = span

    logs_by_trace: dict[str, list[LogRecord]] = defaultdict(list)
    if logs or store.count("logs"):
        for record in store.load_logs(by_trace.keys()):
            logs_by_trace[record.trace_id].append(record)

    runs = []
    for trace_id, trace_spans in by_trace.items():
        ordered = sorted(trace_spans.values(), key=lambda s: s.start_ns)
        runs.extend(convert_trace(ordered, logs_by_trace.get(trace_id, ())))
    store.replace_runs(by_trace.keys(), runs)
    return IngestStats(
        spans=len(spans),
        new_spans=new_spans,
        logs=len(logs),
        new_logs=new_logs,
        traces=len(touched),
        runs=len(runs),
    )
