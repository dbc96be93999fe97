"""A JSON list of ffai ``AgentResult`` objects, each with the query it answered, as stored runs.

Each item is an ffai ``AgentResult.to_dict()`` (``response``, ``tool_calls`` of ``round`` /
``tool_name`` / ``tool_call_id`` / ``arguments`` / ``result`` / ``duration_ms`` / ``error``,
``total_rounds``, ``total_llm_calls``, ``status``) plus ``query``; or ``{"query": ...,
"result": {AgentResult}}``. Optional: ``agent_name``, ``context`` (text or document blocks),
``parameters``, ``started_at``, ``duration_ms``, ``error``, ``run_id``.

The runs are of kind ``imported`` (no trace behind them: their trace id is derived from the run
id). A run id is the item's ``run_id`` when it is a UUID, else derived from the item's content
and position, so importing the same file again replaces the same runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
from pydantic import ValidationError

from tracereplay.models import AgentResult, Document, Run
from tracereplay.promote.documents import DocumentFormatError, parse_documents
from tracereplay.promote.foreign import ImportedRuns, as_uuid, derived_id
from tracereplay.promote.suite_file import Problem, validation_message

_RESULT_KEYS = ("response", "tool_calls", "total_rounds", "total_llm_calls", "status")
_RUN_KEYS = (
    "query", "result", "agent_name", "context", "parameters", "started_at", "duration_ms",
    "error", "run_id",
)  # fmt: skip


def convert(data: list[Any], problems: list[Problem]) -> ImportedRuns | None:
    runs: list[Run] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(data):
        run = _run(raw, index, problems)
        if run is None:
            continue
        if run.run_id in seen:
            problems.append(
                Problem((index, "run_id"), f"is also the run of item [{seen[run.run_id]}]")
            )
        seen.setdefault(run.run_id, index)
        runs.append(run)
    if problems:
        return None
    return ImportedRuns(runs)


def _run(raw: Any, index: int, problems: list[Problem]) -> Run | None:
    if not isinstance(raw, dict):
        problems.append(Problem((index,), "an item must be an AgentResult object with a 'query'"))
        return None
    before = len(problems)
    nested = raw.get("result")
    if isinstance(nested, dict):
        result_data = nested
        extra = [k for k in raw if k not in _RUN_KEYS]
    else:
        result_data = {k: raw[k] for k in _RESULT_KEYS if k in raw}
        extra = [k for k in raw if k not in _RUN_KEYS and k not in _RESULT_KEYS]
    for key in extra:
        problems.append(
            Problem((index, key), f"unknown field (known: {', '.join(_RESULT_KEYS + _RUN_KEYS)})")
        )
    query = raw.get("query")
    if not isinstance(query, str) or not query.strip():
        problems.append(
            Problem((index, "query"), "missing (required): the query this run answered")
        )
    try:
        result = AgentResult.model_validate(result_data)
    except ValidationError as exc:
        base = (index, "result") if isinstance(nested, dict) else (index,)
        for err in exc.errors():
            problems.append(Problem((*base, *err["loc"]), validation_message(err)))
        result = None
    context: list[Document] = []
    if raw.get("context") is not None:
        if not isinstance(raw["context"], str):
            problems.append(Problem((index, "context"), "must be text (or document blocks)"))
        else:
            try:
                context = parse_documents(raw["context"])
            except DocumentFormatError as exc:
                problems.append(Problem((index, "context"), str(exc)))
    parameters = raw.get("parameters") or {}
    if not isinstance(parameters, dict):
        problems.append(Problem((index, "parameters"), "must be an object"))
    started = raw.get("started_at")
    if started is not None:
        try:
            started = datetime.fromisoformat(str(started).replace("Z", "+00:00"))
        except ValueError:
            problems.append(Problem((index, "started_at"), "must be an ISO 8601 time"))
    for key in ("agent_name", "error"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            problems.append(Problem((index, key), "must be a string"))
    duration = raw.get("duration_ms", 0.0)
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or duration < 0:
        problems.append(Problem((index, "duration_ms"), "must be a number, 0 or more"))
    if len(problems) > before or result is None:
        return None
    run_id = as_uuid(raw.get("run_id")) or derived_id(
        "ffai", str(index), orjson.dumps(raw, default=str, option=orjson.OPT_SORT_KEYS).decode()
    )
    trace_id = run_id.replace("-", "")
    try:
        return Run(
            run_id=run_id,
            trace_id=trace_id,
            root_span_id=trace_id[:16],
            agent_name=raw.get("agent_name") or "",
            kind="imported",
            convention="ffai",
            query=query,
            context=context,
            parameters={str(k): v for k, v in parameters.items()},
            started_at=started,
            duration_ms=float(duration),
            error=raw.get("error"),
            result=result,
        )
    except ValidationError as exc:
        for err in exc.errors():
            problems.append(Problem((index, *err["loc"]), validation_message(err)))
        return None
