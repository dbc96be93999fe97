"""The rows a batch of spans or runs makes in the store's tables, built as Arrow tables.

Built apart from any store (a worker process lays out its batch's rows, ``RunTables`` is
picklable), a column at a time, with every column's type given: the engines insert these
tables as they are (``append_table``), so the rows are the same on every engine.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from tracereplay.lazy import LazyModule
from tracereplay.models import AgentResult, LlmCall, Run, ToolCallRecord
from tracereplay.spans import Span

if TYPE_CHECKING:
    import pyarrow as pa
else:  # loaded by the first Arrow table built: opening the store, or a query, needs none
    pa = LazyModule("pyarrow")

SPAN_COLUMNS = (
    "trace_id", "span_id", "parent_span_id", "name", "kind", "start_time", "end_time",
    "duration_ms", "status_code", "status_message", "service_name", "scope_name", "attributes",
    "events", "links", "resource", "start_time_unix_nano", "end_time_unix_nano",
)  # fmt: skip


@functools.cache
def ns_timestamp() -> pa.DataType:
    return pa.timestamp("ns", tz="UTC")


def json_text(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()


def utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def spans_table(spans: Sequence[Span]) -> pa.Table:
    """The ``spans`` rows of ``spans`` as an Arrow table (columns ``SPAN_COLUMNS``)."""
    starts = [s.start_ns for s in spans]
    ends = [s.end_ns for s in spans]
    dumps = orjson.dumps
    resources: dict[int, str] = {}  # the spans of one ResourceSpans share one resource dict
    resource_json = []
    for s in spans:
        key = id(s.resource)
        text = resources.get(key)
        if text is None:
            text = resources[key] = json_text(s.resource)
        resource_json.append(text)
    return pa.table(
        {
            "trace_id": pa.array([s.trace_id for s in spans], pa.string()),
            "span_id": pa.array([s.span_id for s in spans], pa.string()),
            "parent_span_id": pa.array([s.parent_span_id or None for s in spans], pa.string()),
            "name": pa.array([s.name for s in spans], pa.string()),
            "kind": pa.array([s.kind_name for s in spans], pa.string()),
            "start_time": pa.array(starts, ns_timestamp()),
            "end_time": pa.array(ends, ns_timestamp()),
            "duration_ms": pa.array(
                [max(0, e - b) / 1e6 for b, e in zip(starts, ends)], pa.float64()
            ),
            "status_code": pa.array([s.status_name for s in spans], pa.string()),
            "status_message": pa.array([s.status_message or None for s in spans], pa.string()),
            "service_name": pa.array([s.service_name for s in spans], pa.string()),
            "scope_name": pa.array([s.scope_name for s in spans], pa.string()),
            "attributes": pa.array([_dump(dumps, s.attributes) for s in spans], pa.string()),
            "events": pa.array(
                [_dump(dumps, s.events) if s.events else "[]" for s in spans], pa.string()
            ),
            "links": pa.array(
                [_dump(dumps, s.links) if s.links else "[]" for s in spans], pa.string()
            ),
            "resource": pa.array(resource_json, pa.string()),
            "start_time_unix_nano": pa.array(starts, pa.int64()),
            "end_time_unix_nano": pa.array(ends, pa.int64()),
        }
    )


def first_rows(data: pa.Table, key: Sequence[str]) -> pa.Table:
    """``data`` without the rows whose ``key`` an earlier row has (order kept)."""
    if data.num_rows < 2:
        return data
    index = pa.array(range(data.num_rows), pa.int64())
    keyed = pa.table({**{k: data[k] for k in key}, "_row": index})
    first = keyed.group_by(list(key), use_threads=False).aggregate([("_row", "min")])
    if first.num_rows == data.num_rows:
        return data
    rows = first["_row_min"]
    import pyarrow.compute as pc  # here: a command that only opens the store does not load it

    return data.take(rows.take(pc.sort_indices(rows)))


def _dump(dumps: Any, value: Any) -> str:
    """``json_text(value)``, with orjson called directly on the usual (plain JSON) values."""
    try:
        return dumps(value).decode()  # type: ignore[no-any-return]
    except TypeError:
        return json_text(value)


@dataclass(frozen=True, slots=True)
class RunTables:
    """Runs laid out as the rows of ``runs``, ``tool_calls`` and ``llm_calls`` (Arrow tables,
    ``None`` when there are no rows); picklable, so a worker process can build them."""

    runs: pa.Table | None = None
    tool_calls: pa.Table | None = None
    llm_calls: pa.Table | None = None

    def without(self, trace_ids: Collection[str]) -> RunTables:
        """These tables minus the rows of ``trace_ids``."""
        if not trace_ids or self.runs is None:
            return self
        import pyarrow.compute as pc  # as in first_rows

        drop = pa.array(list(trace_ids), pa.string())

        def keep(table: pa.Table | None) -> pa.Table | None:
            if table is None:
                return None
            return table.filter(pc.invert(pc.is_in(table["trace_id"], value_set=drop)))

        return RunTables(keep(self.runs), keep(self.tool_calls), keep(self.llm_calls))


def run_tables(runs: Sequence[Run]) -> RunTables:
    """The rows ``runs`` make in ``runs``, ``tool_calls`` and ``llm_calls`` (``RunRows``)."""
    rows = RunRows()
    rows.add(runs)
    return rows.tables()


class RunRows:
    """The rows of runs in ``runs``, ``tool_calls`` and ``llm_calls``, laid out as the runs
    come (``add``), then turned into Arrow tables a column at a time (``tables``).

    A converter adds each trace's runs as soon as it has them and lets them go: laid out
    while their values are still in the processor's caches, and their memory reused by the
    next trace, where holding a whole batch's runs first touched each value again once out
    of cache. A run's rows read each model's ``__dict__`` (pydantic's attribute access costs
    several dict lookups)."""

    __slots__ = ("count", "llm_calls", "runs", "tool_calls")

    def __init__(self) -> None:
        self.count = 0
        self.runs: list[tuple] = []
        self.tool_calls: list[tuple] = []
        self.llm_calls: list[tuple] = []

    def add(self, runs: Iterable[Run]) -> None:
        """Lay out the rows of ``runs`` after those added before."""
        for run in runs:
            r = run.__dict__
            self.runs.append(_run_row(r))
            started_at = utc(r["started_at"])
            _add_tool_call_rows(self.tool_calls, r, started_at)
            _add_llm_call_rows(self.llm_calls, r)
            self.count += 1

    def tables(self) -> RunTables:
        """The rows added so far as Arrow tables (``None`` for a table without rows)."""
        if not self.runs:
            return RunTables()
        return RunTables(
            _table(_RUN_NAMES, self.runs, _run_types()),
            _table(_TOOL_CALL_NAMES, self.tool_calls, _tool_call_types())
            if self.tool_calls
            else None,
            _table(_LLM_CALL_NAMES, self.llm_calls, _llm_call_types()) if self.llm_calls else None,
        )


@functools.cache
def _run_ts() -> pa.DataType:
    return pa.timestamp("us", tz="UTC")


def _text_type(column: Sequence[Any]) -> pa.DataType:
    """The type Arrow infers for a column of strings and ``None``: string, or null when the
    column holds no value (a run table's ``error`` when nothing failed)."""
    for value in column:
        if value is not None:
            return pa.string()
    return pa.null()


def _table(names: Sequence[str], rows: list[tuple], types: dict[str, pa.DataType]) -> pa.Table:
    """An Arrow table from ``rows`` (tuples in the order of ``names``); a column not in
    ``types`` holds text (strings and ``None``), typed as Arrow would infer it
    (``_text_type``). Given, not inferred: Arrow's inference of a string column tries to
    import pandas and dateutil (on every call, when they are not installed), costing as much
    as building the column."""
    columns = zip(*rows)
    return pa.table(
        {
            name: pa.array(col, types.get(name) or _text_type(col))
            for name, col in zip(names, columns)
        }
    )


_RUN_NAMES = (
    "run_id", "trace_id", "root_span_id", "parent_run_id", "agent_name", "service_name", "kind",
    "convention", "status", "query", "response", "context", "parameters", "models",
    "input_tokens", "output_tokens", "total_rounds", "total_llm_calls", "tool_calls_count",
    "started_at", "duration_ms", "error", "eval_run_id", "case_id", "result",
    "session_id", "tool_errors_count",
)  # fmt: skip


@functools.cache
def _run_types() -> dict[str, pa.DataType]:
    return {
        "input_tokens": pa.int64(),
        "output_tokens": pa.int64(),
        "total_rounds": pa.int32(),
        "total_llm_calls": pa.int32(),
        "tool_calls_count": pa.int32(),
        "tool_errors_count": pa.int32(),
        "started_at": _run_ts(),
        "duration_ms": pa.float64(),
    }


def _run_row(r: dict[str, Any]) -> tuple:
    """The ``runs`` row of a run (its ``__dict__``)."""
    result = r["result"]
    res = result.__dict__
    return (
        r["run_id"],
        r["trace_id"],
        r["root_span_id"],
        r["parent_run_id"],
        r["agent_name"],
        r["service_name"],
        r["kind"],
        r["convention"],
        res["status"],
        r["query"],
        res["response"],
        json_text([d.to_dict() for d in r["context"]]) if r["context"] else "[]",
        _dump(orjson.dumps, r["parameters"]) if r["parameters"] else "{}",
        _dump(orjson.dumps, r["models"]),
        r["input_tokens"],
        r["output_tokens"],
        res["total_rounds"],
        res["total_llm_calls"],
        len(res["tool_calls"]),
        utc(r["started_at"]),
        r["duration_ms"],
        r["error"],
        r["eval_run_id"],
        r["case_id"],
        _result_json(result),
        r["session_id"],
        len(result.failed_tool_calls),
    )


def _result_json(result: AgentResult) -> str:
    """``result.to_json()`` as text, built without pydantic's serializer for the plain JSON
    values the converter makes (anything else takes the pydantic path)."""
    res = result.__dict__
    try:
        return orjson.dumps(
            {
                "response": res["response"],
                "tool_calls": [_tool_call_json(tc.__dict__) for tc in res["tool_calls"]],
                "total_rounds": res["total_rounds"],
                "total_llm_calls": res["total_llm_calls"],
                "status": res["status"],
            }
        ).decode()
    except TypeError:
        return result.to_json().decode()


def _tool_call_json(tc: dict[str, Any]) -> dict[str, Any]:
    return {
        "round": tc["round"],
        "tool_name": tc["tool_name"],
        "tool_call_id": tc["tool_call_id"],
        "arguments": tc["arguments"],
        "result": tc["result"],
        "duration_ms": tc["duration_ms"],
        "error": tc["error"],
    }


_TOOL_CALL_NAMES = (
    "run_id", "position", "trace_id", "round", "tool_name", "tool_call_id", "arguments",
    "result", "duration_ms", "error", "run_started_at",
)  # fmt: skip


@functools.cache
def _tool_call_types() -> dict[str, pa.DataType]:
    return {
        "position": pa.int32(),
        "round": pa.int32(),
        "duration_ms": pa.float64(),
        "run_started_at": _run_ts(),
    }


def _add_tool_call_rows(rows: list[tuple], r: dict[str, Any], started_at: datetime | None) -> None:
    """The ``tool_calls`` rows of a run (its ``__dict__``; ``started_at`` its start)."""
    dumps = orjson.dumps
    record: ToolCallRecord
    for position, record in enumerate(r["result"].__dict__["tool_calls"]):
        tc = record.__dict__
        rows.append(
            (
                r["run_id"],
                position,
                r["trace_id"],
                tc["round"],
                tc["tool_name"],
                tc["tool_call_id"],
                _dump(dumps, tc["arguments"]),
                tc["result"],
                tc["duration_ms"],
                tc["error"],
                started_at,
            )
        )


_LLM_CALL_NAMES = (
    "run_id", "round", "trace_id", "span_id", "model", "provider", "input_tokens",
    "output_tokens", "duration_ms", "finish_reason", "started_at", "input_messages",
    "output_messages", "source",
)  # fmt: skip


@functools.cache
def _llm_call_types() -> dict[str, pa.DataType]:
    return {
        "round": pa.int32(),
        "input_tokens": pa.int64(),
        "output_tokens": pa.int64(),
        "duration_ms": pa.float64(),
        "started_at": _run_ts(),
    }


def _add_llm_call_rows(rows: list[tuple], r: dict[str, Any]) -> None:
    """The ``llm_calls`` rows of a run (its ``__dict__``)."""
    dumps = orjson.dumps
    call: LlmCall
    for call in r["llm_calls"]:
        c = call.__dict__
        rows.append(
            (
                r["run_id"],
                c["round"],
                r["trace_id"],
                c["span_id"],
                c["model"],
                c["provider"],
                c["input_tokens"],
                c["output_tokens"],
                c["duration_ms"],
                c["finish_reason"],
                utc(c["started_at"]),
                _dump(dumps, c["input_messages"]),
                _dump(dumps, c["output_messages"]),
                c["source"],
            )
        )
