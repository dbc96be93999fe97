"""Spans of one trace -> one ``Run`` per agent run (GenAI semconv, OpenInference, OpenLLMetry).

``convert_trace`` is pure: the same spans and logs always give the same runs with the same ids,
so a trace is simply converted again when a late span arrives. Modules: ``detect`` (convention
and role of a span), ``messages`` (message forms -> GenAI parts), ``forms`` (what agent
frameworks write, one module per framework: LangChain messages, content blocks, wrapped tool outputs), ``genai`` /
``openinference`` / ``openllmetry`` (per-convention readers), ``tree`` (runs, nesting, framework
wrappers folded), ``tools`` (tool calls, rounds), ``build`` (``Run`` assembly). See
``docs/conventions.md``.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""

from __future__ import annotations

from collections.abc import Sequence

from tracereplay.convert.build import NAMESPACE, build_runs, run_id_for
from tracereplay.convert.genai import event_name
from tracereplay.convert.messages import EVENT_ORDER
from tracereplay.convert.tree import plan_trace
from tracereplay.models.run import Run
from tracereplay.spans import LogRecord, Span

__all__ = ["NAMESPACE", "convert_trace", "run_id_for"]


def _logs_by_span(logs: Sequence[LogRecord]) -> dict[str, list[LogRecord]]:
    by_span: dict[str, list[LogRecord]] = {}
    for record in logs:
        if record.span_id:
            by_span.setdefault(record.span_id, []).append(record)
    for records in by_span.values():
        if len(records) > 1:
            records.sort(key=lambda r: (r.time_ns, EVENT_ORDER.get(event_name(r), 99)))
    return by_span


def convert_trace(spans: list[Span], logs: Sequence[LogRecord] = ()) -> list[Run]:
    """The agent runs in ``spans`` (all spans of one trace) and ``logs`` (that trace's log
    records), ordered by start. A trace with no agent span and no LLM span gives no run."""
    if not spans:
        return []
    planned = plan_trace(spans)
    try:
        if not planned.runs:
            return []
        return build_runs(planned.runs, _logs_by_span(logs) if logs else {})
    finally:
        planned.release()  # see TracePlan.release: no cycles left for the collector
