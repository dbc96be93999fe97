"""One run: the run itself, its spans (tree + waterfall) and what it is linked to, read by
``store/runs.py``, ``store/suites.py``, ``store/eval_runs.py`` and ``store/monitors.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import orjson

from tracereplay.models import Run, ToolCallRecord
from tracereplay.models.failure import failure_point
from tracereplay.store import eval_runs
from tracereplay.store import runs as run_store
from tracereplay.store import suites as suite_store
from tracereplay.store.db import Store
from tracereplay.store.labels import Label
from tracereplay.store.monitors import run_monitor_results
from tracereplay.ui.queries.sessions import TurnStrip, turn_strip

#: spans shown in the waterfall at most (a trace can be huge)
MAX_SPANS = 2000
#: how far from the run a span of its trace may start
SKEW = timedelta(days=1)


@dataclass
class SpanRow:
    span_id: str
    parent_span_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    duration_ms: float
    status_code: str
    status_message: str | None
    attributes: dict[str, Any]
    depth: int = 0
    offset_pct: float = 0.0
    width_pct: float = 0.0


@dataclass
class Round:
    """One LLM call and the tool calls its output asked for."""

    number: int
    llm: Any | None  # LlmCall
    new_input: list[dict[str, Any]]
    output: list[dict[str, Any]]
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    #: the run stopped at this round's LLM call / at its tool call of this index
    #: (``tracereplay.models.failure``, as ``tracereplay show`` marks it)
    failed_llm: bool = False
    failed_tool: int | None = None


@dataclass
class RunView:
    run: Run
    rounds: list[Round]
    spans: list[SpanRow]
    spans_total: int
    parent: dict[str, Any] | None
    sub_runs: list[dict[str, Any]]
    cases: list[dict[str, Any]]
    replays: list[dict[str, Any]]
    case_results: list[dict[str, Any]]
    source_case: dict[str, Any] | None
    #: people's labels of the run, newest first (the first is the run's label)
    labels: list[Label] = field(default_factory=list)
    #: the monitors' verdicts on the run: ``{monitor, run_status, checks: [rows]}``
    monitors: list[dict[str, Any]] = field(default_factory=list)
    #: the turns of the run's conversation around it; None for no turn of a session
    turns: TurnStrip | None = None


def rounds_of(run: Run) -> list[Round]:
    """The trajectory: each LLM call with the messages it added, what it said, and its tool calls
    (rounds recorded only through tool calls get a round of their own)."""
    by_round: dict[int, list[ToolCallRecord]] = {}
    for call in run.result.tool_calls:
        by_round.setdefault(call.round, []).append(call)
    rounds: list[Round] = []
    seen = 0
    for call in run.llm_calls:
        messages = call.input_messages
        # each call repeats the conversation so far: show only what is new since the last one
        new = messages[seen:] if len(messages) >= seen else messages
        seen = len(messages) + len(call.output_messages)
        rounds.append(
            Round(call.round, call, new, call.output_messages, by_round.pop(call.round, []))
        )
    for number, calls in sorted(by_round.items()):
        rounds.append(Round(number, None, [], [], calls))
    rounds.sort(key=lambda r: r.number)
    at = failure_point(run)
    for r in rounds if at is not None else ():
        if r.number == at.round and (at.kind == "tool" or r.llm is not None):
            r.failed_llm = at.kind == "llm"
            r.failed_tool = at.index if at.kind == "tool" else None
    return rounds


def span_rows(store: Store, run: Run) -> tuple[list[SpanRow], int]:
    """The run's spans (its root span's subtree) in tree order, with depth and the place of each
    bar in the waterfall."""
    rows: list[Any] = []
    if run.started_at is not None:
        # spans are stored about in time order: a window around the run lets DuckDB skip the
        # row groups of other days (a day of margin for clock skew between services)
        end = run.started_at + timedelta(milliseconds=run.duration_ms or 0)
        rows = run_store.trace_spans(store, run.trace_id, (run.started_at - SKEW, end + SKEW))
    if not any(r[0] == run.root_span_id for r in rows):
        rows = run_store.trace_spans(store, run.trace_id)
    spans = {
        r[0]: SpanRow(
            span_id=r[0],
            parent_span_id=r[1],
            name=r[2] or "",
            kind=r[3] or "",
            start_ns=int(r[4] or 0),
            end_ns=int(r[5] or r[4] or 0),
            duration_ms=float(r[6] or 0.0),
            status_code=r[7] or "UNSET",
            status_message=r[8],
            attributes=_attrs(r[9]),
        )
        for r in rows
    }
    children: dict[str | None, list[SpanRow]] = {}
    for span in spans.values():
        parent = span.parent_span_id if span.parent_span_id in spans else None
        children.setdefault(parent, []).append(span)
    roots = [spans[run.root_span_id]] if run.root_span_id in spans else children.get(None, [])
    ordered: list[SpanRow] = []
    stack = [(s, 0) for s in reversed(roots)]
    while stack:
        span, depth = stack.pop()
        span.depth = depth
        ordered.append(span)
        stack.extend((c, depth + 1) for c in reversed(children.get(span.span_id, [])))
    total = len(ordered)
    ordered = ordered[:MAX_SPANS]
    if ordered:
        t0 = min(s.start_ns for s in ordered)
        t1 = max(s.end_ns for s in ordered)
        width = max(t1 - t0, 1)
        for s in ordered:
            s.offset_pct = 100.0 * (s.start_ns - t0) / width
            s.width_pct = max(100.0 * (s.end_ns - s.start_ns) / width, 0.3)
    return ordered, total


def _attrs(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def run_view(store: Store, ident: str) -> RunView:
    """Everything the run page shows."""
    run = store.get_run(ident)
    spans, spans_total = span_rows(store, run)
    parent = None
    if run.parent_run_id:
        parent = run_store.run_link(store, run.parent_run_id) or {"run_id": run.parent_run_id}
    sub_runs = run_store.sub_run_links(store, run.run_id)
    cases = suite_store.cases_from_run(store, run.run_id)
    replays: list[dict[str, Any]] = []
    case_results: list[dict[str, Any]] = []
    if cases:
        ids = [c["case_id"] for c in cases]
        replays = run_store.replay_links(store, ids)
        case_results = eval_runs.case_results_of_cases(store, ids)
    source_case = None
    if run.case_id:
        source_case = suite_store.case_link(store, run.case_id) or {"case_id": run.case_id}
    monitors: dict[str, dict[str, Any]] = {}
    for row in run_monitor_results(store, run.run_id):
        entry = monitors.setdefault(
            row["monitor"], {"monitor": row["monitor"], "status": row["run_status"], "checks": []}
        )
        entry["checks"].append(row)
    return RunView(
        run=run,
        rounds=rounds_of(run),
        spans=spans,
        spans_total=spans_total,
        parent=parent,
        sub_runs=sub_runs,
        cases=cases,
        replays=replays,
        case_results=case_results,
        source_case=source_case,
        labels=store.list_labels(run.run_id),
        monitors=list(monitors.values()),
        turns=turn_strip(store, run),
    )
