"""Reads of ``runs``, their ``llm_calls``, ``tool_calls`` and the spans of their traces (the
caller owns the transaction): the commands' run listings, evaluation's source runs (two queries
for any number of runs, instead of two per run), what ``ingest`` and ``show`` check runs'
content by, and the rows of the report's production section and of the UI's dashboard, run
page and runs list (whose WHERE clause the UI's filter builds from its facets, never from a
person's SQL).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

import orjson

from tracereplay.models import AgentResult, Document, LlmCall, Run, ToolCallRecord
from tracereplay.models.fast import build
from tracereplay.semconv import TOOL_RESULT_ENCODING
from tracereplay.store.db import Store

_RUN_COLUMNS = (
    "run_id", "trace_id", "root_span_id", "parent_run_id", "agent_name", "service_name", "kind",
    "convention", "query", "context", "parameters", "models", "input_tokens", "output_tokens",
    "started_at", "duration_ms", "error", "eval_run_id", "case_id", "result",
    "session_id",
)  # fmt: skip


def _loads(text: str | None, default: Any) -> Any:
    return default if not text or text in ("[]", "{}") else orjson.loads(text)


def load_runs(store: Store, run_ids: Iterable[str]) -> dict[str, Run]:
    """The stored runs among ``run_ids`` by id (ids not in the store are left out).

    LLM calls come without their messages (checks need their count, tokens and durations).
    """
    ids = sorted(set(run_ids))
    if not ids:
        return {}
    rows = store.con.execute(
        f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs WHERE run_id IN (SELECT unnest(?))", [ids]
    ).fetchall()
    llm: dict[str, list[LlmCall]] = {}
    for run_id, rnd, span_id, model, provider, tin, tout, dur, finish, started in store.con.execute(
        "SELECT run_id, round, span_id, model, provider, input_tokens, output_tokens,"
        " duration_ms, finish_reason, started_at FROM llm_calls"
        " WHERE run_id IN (SELECT unnest(?)) ORDER BY run_id, round",
        [ids],
    ).fetchall():
        llm.setdefault(run_id, []).append(
            build(
                LlmCall,
                {
                    "round": rnd,
                    "span_id": span_id or "",
                    "model": model or "",
                    "provider": provider or "",
                    "input_tokens": tin,
                    "output_tokens": tout,
                    "duration_ms": dur or 0.0,
                    "finish_reason": finish or "",
                    "started_at": started,
                    "input_messages": [],
                    "output_messages": [],
                },
            )
        )
    runs: dict[str, Run] = {}
    for row in rows:
        d = dict(zip(_RUN_COLUMNS, row))
        run_id = d["run_id"]
        runs[run_id] = build(
            Run,
            {
                "run_id": run_id,
                "trace_id": d["trace_id"],
                "root_span_id": d["root_span_id"],
                "parent_run_id": d["parent_run_id"],
                "agent_name": d["agent_name"] or "",
                "service_name": d["service_name"] or "",
                "kind": d["kind"] or "live",
                "convention": d["convention"] or "",
                "query": d["query"] or "",
                "context": [Document.model_validate(x) for x in _loads(d["context"], [])],
                "parameters": _loads(d["parameters"], {}),
                "models": _loads(d["models"], []),
                "input_tokens": d["input_tokens"] or 0,
                "output_tokens": d["output_tokens"] or 0,
                "started_at": d["started_at"],
                "duration_ms": d["duration_ms"] or 0.0,
                "error": d["error"],
                "eval_run_id": d["eval_run_id"],
                "case_id": d["case_id"],
                "session_id": d["session_id"],
                "result": (
                    AgentResult.model_validate_json(d["result"]) if d["result"] else AgentResult()
                ),
                "llm_calls": llm.get(run_id, []),
            },
        )
    return runs


#: span attribute the SDK's ``@tool`` writes: how a result was recorded ("text" or "json")
RESULT_ENCODING = TOOL_RESULT_ENCODING


def load_result_encodings(store: Store, runs: Iterable[Run]) -> dict[str, list[str | None]]:
    """For each run, how each recorded tool result was encoded (aligned with its tool calls):
    "json" (the tool returned a structure or a number: replay gives back the decoded value),
    "text" (a string), or None when the recording does not say (not made by the SDK)."""
    runs = [r for r in runs if r.result.tool_calls]
    if not runs:
        return {}
    rows = store.con.execute(
        "SELECT trace_id, attributes->>'gen_ai.tool.name', attributes->>'gen_ai.tool.call.id',"
        f" attributes->>'{RESULT_ENCODING}' FROM spans"
        " WHERE trace_id IN (SELECT unnest(?))"
        f" AND attributes->>'{RESULT_ENCODING}' IS NOT NULL"
        " ORDER BY trace_id, start_time_unix_nano, span_id",
        [sorted({r.trace_id for r in runs})],
    ).fetchall()
    by_id: dict[tuple[str, str], str] = {}
    by_name: dict[tuple[str, str], list[str]] = {}
    for trace_id, tool, call_id, encoding in rows:
        if call_id:
            by_id[(trace_id, call_id)] = encoding
        by_name.setdefault((trace_id, tool or ""), []).append(encoding)
    out: dict[str, list[str | None]] = {}
    for run in runs:
        seen: dict[str, int] = {}
        encodings: list[str | None] = []
        for call in run.result.tool_calls:
            nth = seen.get(call.tool_name, 0)
            seen[call.tool_name] = nth + 1
            found = by_id.get((run.trace_id, call.tool_call_id)) if call.tool_call_id else None
            if found is None:
                same = by_name.get((run.trace_id, call.tool_name), [])
                found = same[nth] if nth < len(same) else None
            encodings.append(found)
        out[run.run_id] = encodings
    return out


def load_sub_runs(store: Store, sources: Iterable[Run]) -> dict[str, list[Run]]:
    """For each source run, the runs nested under it in its trace (sub-agents, handoff
    targets), outermost first then by start: their tool calls were made by the same recorded
    invocation, so replay answers from them too."""
    sources = list(sources)
    if not sources:
        return {}
    rows = store.con.execute(
        "SELECT run_id, parent_run_id FROM runs WHERE trace_id IN (SELECT unnest(?))"
        " AND parent_run_id IS NOT NULL",
        [sorted({r.trace_id for r in sources})],
    ).fetchall()
    children: dict[str, list[str]] = {}
    for run_id, parent in rows:
        children.setdefault(parent, []).append(run_id)
    wanted: dict[str, list[str]] = {}
    for source in sources:
        found: list[str] = []
        queue = list(children.get(source.run_id, []))
        while queue and len(found) < 10_000:
            run_id = queue.pop(0)
            if run_id in found or run_id == source.run_id:
                continue
            found.append(run_id)
            queue.extend(children.get(run_id, []))
        if found:
            wanted[source.run_id] = found
    loaded = load_runs(store, [i for ids in wanted.values() for i in ids])
    return {source_id: [loaded[i] for i in ids if i in loaded] for source_id, ids in wanted.items()}


def runs_to_promote(store: Store, run_ids: Sequence[str]) -> list[Run]:
    """The runs with these exact ids, in the given order (unknown ids left out), as promotion
    needs them: query, context, parameters, result and error; LLM calls are not loaded."""
    rows = store.con.execute(
        "SELECT run_id, trace_id, root_span_id, agent_name, service_name, query, context,"
        " parameters, result, error, started_at FROM runs WHERE run_id IN (SELECT unnest(?))",
        [list(run_ids)],
    ).fetchall()

    def loads(value: str | None, default: Any) -> Any:
        return default if value is None else orjson.loads(value)

    by_id = {
        r[0]: Run(
            run_id=r[0],
            trace_id=r[1],
            root_span_id=r[2],
            agent_name=r[3] or "",
            service_name=r[4] or "",
            query=r[5] or "",
            context=[Document.model_validate(d) for d in loads(r[6], [])],
            parameters=loads(r[7], {}),
            result=AgentResult.model_validate(loads(r[8], {})),
            error=r[9],
            started_at=r[10],
        )
        for r in rows
    }
    return [by_id[i] for i in run_ids if i in by_id]


def run_kinds(store: Store, run_ids: Sequence[str]) -> list[tuple[str, str]]:
    """``(run_id, kind)`` of each stored run among ``run_ids``."""
    return store.con.execute(
        "SELECT run_id, kind FROM runs WHERE run_id IN (SELECT unnest(?))", [list(run_ids)]
    ).fetchall()


def converted_at(store: Store, run_ids: Sequence[str]) -> dict[str, datetime]:
    """When each stored run among ``run_ids`` was last converted (``converted_at``), by id."""
    return dict(
        store.con.execute(
            "SELECT run_id, converted_at FROM runs WHERE run_id IN (SELECT unnest(?))",
            [list(run_ids)],
        ).fetchall()
    )


def list_runs(
    store: Store,
    *,
    status: str | None = None,
    agent: str | None = None,
    kind: str | None = None,
    since: datetime | None = None,
    monitor: str | None = None,
    failing: bool = False,
    label: str | None = None,
    session: str | None = None,
    limit: int,
) -> list[dict[str, Any]]:
    """Rows of ``runs`` (every column), newest first, as ``tracereplay runs`` filters them:
    each given filter must hold; ``monitor``/``failing`` keep runs with ``monitor_results``
    (of that monitor, FAILED ones), ``label`` runs whose latest label has that verdict;
    ``session`` the turns of that session (``store/sessions.py``), oldest first."""
    where: list[str] = []
    params: list[Any] = []
    if status is not None:
        where.append("status = ?")
        params.append(status)
    if agent is not None:
        where.append("agent_name = ?")
        params.append(agent)
    if kind is not None:
        where.append("kind = ?")
        params.append(kind)
    if since is not None:
        where.append("started_at >= ?")
        params.append(since)
    if monitor is not None or failing:
        where.append(
            "run_id IN (SELECT run_id FROM monitor_results WHERE (? IS NULL OR monitor = ?)"
            " AND (NOT ? OR status = 'FAILED'))"
        )
        params += [monitor, monitor, failing]
    if label is not None:
        where.append("run_id IN (SELECT run_id FROM latest_labels WHERE verdict = ?)")
        params.append(label)
    if session is not None:
        where.append("session_id = ? AND parent_run_id IS NULL")
        params.append(session)
    sql = "SELECT * FROM runs"
    if where:
        sql += " WHERE " + " AND ".join(where)
    order = "" if session is not None else " DESC"
    sql += f" ORDER BY started_at{order} NULLS LAST, run_id LIMIT ?"
    params.append(limit)
    return store.query_dicts(sql, params)


def live_runs_without_text(store: Store, since: datetime, limit: int) -> list[dict[str, Any]]:
    """``run_id`` and ``trace_id`` of live runs converted since ``since`` with neither query nor
    response (by id, at most ``limit``): the candidates of the "recorded without content"
    note, cheap to find here and confirmed on the whole run by the caller."""
    return store.query_dicts(
        "SELECT run_id, trace_id FROM runs WHERE converted_at >= ? AND kind = 'live' "
        "AND coalesce(query, '') = '' AND coalesce(response, '') = '' ORDER BY run_id LIMIT ?",
        [since, limit],
    )


def span_scopes(store: Store, trace_ids: list[str]) -> list[str]:
    """The distinct instrumentation scopes of the traces' spans, sorted ('' for none)."""
    if not trace_ids:
        return []
    marks = ", ".join("?" for _ in trace_ids)
    rows = store.query_dicts(
        f"SELECT DISTINCT scope_name FROM spans WHERE trace_id IN ({marks}) ORDER BY 1", trace_ids
    )
    return [r["scope_name"] or "" for r in rows]


def recorded_llm_calls(store: Store, run_ids: list[str]) -> list[tuple[Any, ...]]:
    """The runs' LLM calls with their messages and their span's attributes and status, by run
    then round: ``(run_id, round, span_id, model, input_tokens, output_tokens, finish_reason,
    started_at, input_messages, output_messages, attributes, status_code, status_message)``,
    what a replay is answered from (``--llm recorded``)."""
    return store.con.execute(
        "SELECT c.run_id, c.round, c.span_id, c.model, c.input_tokens, c.output_tokens,"
        " c.finish_reason, c.started_at, c.input_messages, c.output_messages,"
        " s.attributes, s.status_code, s.status_message"
        " FROM llm_calls c LEFT JOIN spans s ON s.trace_id = c.trace_id AND s.span_id = c.span_id"
        " WHERE c.run_id IN (SELECT unnest(?)) ORDER BY c.run_id, c.round",
        [run_ids],
    ).fetchall()


def stored_tool_calls(
    store: Store, run_ids: Iterable[str | None]
) -> dict[str, list[ToolCallRecord]]:
    """The tool calls of each stored run among ``run_ids``, in order (a run not in the store is
    left out; a stored run without tool calls maps to ``[]``): the trajectories of the report
    and of the UI's eval pages."""
    ids = sorted({r for r in run_ids if r})
    if not ids:
        return {}
    present = store.con.execute(
        "SELECT run_id, started_at, tool_calls_count FROM runs WHERE run_id IN (SELECT unnest(?))",
        [ids],
    ).fetchall()
    out: dict[str, list[ToolCallRecord]] = {r: [] for r, _, _ in present}
    select = (
        "SELECT run_id, round, tool_name, tool_call_id, arguments, result, duration_ms, error"
        " FROM tool_calls WHERE run_id IN (SELECT unnest(?))"
    )
    rows: list[dict[str, Any]] | None = None
    starts = [started for _, started, _ in present]
    if starts and None not in starts:
        # a tool call holds its run's start (``run_started_at``): looked up between the runs'
        # first and last start, DuckDB skips the row groups of other times; every run's count
        # found, or else looked up everywhere
        rows = store.query_dicts(
            select + " AND run_started_at BETWEEN ? AND ? ORDER BY run_id, position",
            [ids, min(starts), max(starts)],
        )
        found: dict[str, int] = {}
        for row in rows:
            found[row["run_id"]] = found.get(row["run_id"], 0) + 1
        if any(found.get(r, 0) != (n or 0) for r, _, n in present):
            rows = None
    if rows is None:
        rows = store.query_dicts(select + " ORDER BY run_id, position", [ids])
    for row in rows:
        if row["run_id"] in out:
            out[row["run_id"]].append(
                ToolCallRecord(
                    round=row["round"] or 0,
                    tool_name=row["tool_name"] or "",
                    tool_call_id=row["tool_call_id"] or "",
                    arguments=orjson.loads(row["arguments"]) if row["arguments"] else {},
                    result=row["result"] or "",
                    duration_ms=row["duration_ms"] or 0.0,
                    error=row["error"],
                )
            )
    return out


def promoted_live_agents(store: Store, suite_id: str) -> list[str]:
    """The agents of the live runs the suite's cases were promoted from, sorted (the report's
    production section follows them)."""
    return sorted(
        r["agent_name"]
        for r in store.query_dicts(
            "SELECT DISTINCT r.agent_name FROM eval_cases AS c"
            " JOIN runs AS r ON r.run_id = c.source_run_id"
            " WHERE c.suite_id = ? AND r.agent_name IS NOT NULL AND r.kind = 'live'",
            [suite_id],
        )
    )


def _live(agents: Sequence[str]) -> tuple[str, list[Any]]:
    """Live top-level runs (of ``agents``; every agent's when empty), as a query and its
    parameters."""
    live = "SELECT * FROM runs WHERE kind = 'live' AND parent_run_id IS NULL"
    params: list[Any] = []
    if agents:
        live += " AND agent_name IN (SELECT unnest(?))"
        params.append(list(agents))
    return live, params


def last_live_day(store: Store, agents: Sequence[str]) -> date | None:
    """The day the newest live top-level run (of ``agents``; any when empty) started, or None
    when there is none: where the report's production window ends."""
    live, params = _live(agents)
    [last] = store.query_dicts(
        f"SELECT CAST(max(started_at) AS DATE) AS day FROM ({live}) AS live", params
    )
    return last["day"]


def _live_window(agents: Sequence[str], start: date) -> tuple[str, list[Any]]:
    live, params = _live(agents)
    window = f"SELECT * FROM ({live}) AS live WHERE CAST(started_at AS DATE) >= ?"
    return window, [*params, start]


def live_runs_per_day(store: Store, agents: Sequence[str], start: date) -> list[dict[str, Any]]:
    """Per day since ``start``: the live top-level runs (of ``agents``; any when empty) and how
    many did not succeed (``day``, ``runs``, ``failed``): the report's production chart."""
    window, params = _live_window(agents, start)
    return store.query_dicts(
        "SELECT CAST(started_at AS DATE) AS day, count(*) AS runs,"
        f" count(*) FILTER (WHERE status <> 'success') AS failed FROM ({window}) AS w GROUP BY day",
        params,
    )


def _live_calls(agents: Sequence[str], start: date) -> tuple[str, list[Any]]:
    window, params = _live_window(agents, start)
    calls = (
        "SELECT CAST(w.started_at AS DATE) AS day, tc.tool_name, tc.error FROM tool_calls AS tc"
        f" JOIN ({window}) AS w ON w.trace_id = tc.trace_id"
    )
    return calls, params


def live_tool_calls_per_day(
    store: Store, agents: Sequence[str], start: date
) -> list[dict[str, Any]]:
    """Per day since ``start``: the tool calls of the live top-level runs' traces (of
    ``agents``; any when empty) and how many failed (``day``, ``calls``, ``errors``)."""
    calls, params = _live_calls(agents, start)
    return store.query_dicts(
        f"SELECT day, count(*) AS calls, count(error) AS errors FROM ({calls}) AS c GROUP BY day",
        params,
    )


def live_tool_errors(
    store: Store, agents: Sequence[str], start: date, limit: int = 8
) -> list[dict[str, Any]]:
    """The tools of the live top-level runs' traces since ``start`` (of ``agents``; any when
    empty), most errors first, at most ``limit`` (``tool_name``, ``calls``, ``errors``)."""
    calls, params = _live_calls(agents, start)
    return store.query_dicts(
        f"SELECT tool_name, count(*) AS calls, count(error) AS errors FROM ({calls}) AS c"
        f" GROUP BY tool_name ORDER BY errors DESC, calls DESC, tool_name LIMIT {int(limit)}",
        params,
    )


def last_live_start(store: Store, agent: str | None = None) -> datetime | None:
    """When the newest live run (of ``agent``) started, or None: where the UI's dashboard
    window ends."""
    sql = "SELECT max(started_at) FROM runs WHERE kind = 'live'"
    params: list[Any] = []
    if agent:
        sql += " AND agent_name = ?"
        params.append(agent)
    return store.con.execute(sql, params).fetchall()[0][0]


#: what a read that sorts much (the dashboard's percentiles) may hold in memory per sort
#: before spilling to disk (PostgreSQL's ``work_mem``; DuckDB has one memory limit for all)
SORT_MEMORY = "64MB"


def live_window(
    store: Store, since: datetime, until: datetime, agent: str | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The UI's dashboard over the live runs started in ``[since, until)``: per UTC day with
    runs (of ``agent``; every agent when None) its runs, failures, median and 95th
    percentile duration, tokens, tool calls and failed tool calls; and per agent, most runs
    first (at most 100), its runs, failure rate, median and 95th percentile duration, tokens
    per run, tool calls and failed ones.

    Days and agents come from one aggregate of the window's runs (``GROUPING SETS``), failed
    tool calls too: each run carries its count (``tool_errors_count``, schema version 21),
    where joining the window's failed calls to their runs read the runs a second time. The
    columns read are those PostgreSQL's index of live runs holds (migrations 0018 and 0021): a
    column added here goes into that index too, or the read goes back to the table's rows."""
    day_set = "(day, agent_name)" if agent else "(day)"
    # its percentiles sort every duration of the window (250,000 runs in a month of a big
    # store): in memory, where PostgreSQL's default work_mem (4 MB) spilled them to disk
    with store.settings(work_mem=SORT_MEMORY):
        runs = store.con.execute(
            f"""
            SELECT GROUPING(day) AS by_agent, day, agent_name, count(*) AS runs,
                   count(*) FILTER (WHERE status <> 'success') AS failures,
                   quantile_cont(duration_ms, 0.5) AS p50_ms,
                   quantile_cont(duration_ms, 0.95) AS p95_ms,
                   sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) AS tokens,
                   sum(tool_calls_count) AS tool_calls,
                   sum(coalesce(tool_errors_count, 0)) AS tool_errors
            FROM (SELECT CAST(timezone('UTC', started_at) AS DATE) AS day, agent_name, status,
                         duration_ms, input_tokens, output_tokens, tool_calls_count,
                         tool_errors_count
                  FROM runs WHERE kind = 'live' AND started_at >= ? AND started_at < ?) AS w
            GROUP BY GROUPING SETS ({day_set}, (agent_name))
            """,
            [since, until],
        ).fetchall()
    days: list[dict[str, Any]] = []
    agents: list[dict[str, Any]] = []
    for by_agent, day, name, n, failures, p50, p95, tokens, calls, errors in runs:
        if by_agent:
            agents.append({
                "agent_name": name, "runs": int(n), "failure_rate": failures / n,
                "p50_ms": p50, "p95_ms": p95, "tokens_per_run": (tokens or 0) / n,
                "tool_calls": calls, "tool_errors": int(errors),
            })  # fmt: skip
        elif not agent or name == agent:
            days.append({
                "day": day, "runs": int(n), "failures": int(failures), "p50_ms": p50,
                "p95_ms": p95, "tokens": tokens, "tool_calls": calls,
                "tool_errors": int(errors),
            })  # fmt: skip
    days.sort(key=lambda r: r["day"])
    agents.sort(key=lambda r: (-r["runs"], r["agent_name"] or ""))
    return days, agents[:100]


def live_agents(store: Store) -> list[str]:
    """The agents of live runs, most runs first (at most 200): the UI's agent picker (every
    live run counted, from ``run_counts``: on PostgreSQL a few rows per agent, not an index
    entry per run)."""
    return [
        r[0]
        for r in store.con.execute(
            "SELECT agent_name FROM run_counts WHERE kind = 'live' AND agent_name IS NOT NULL"
            " GROUP BY agent_name HAVING sum(n) > 0 ORDER BY sum(n) DESC, agent_name LIMIT 200"
        ).fetchall()
    ]


#: what a link to a run shows (the run page's parent, sub-runs and replays)
RUN_LINK_COLUMNS = (
    "run_id, agent_name, kind, status, started_at, duration_ms, left(query, 120) AS query"
)


def trace_spans(
    store: Store, trace_id: str, between: tuple[datetime, datetime] | None = None
) -> list[tuple[Any, ...]]:
    """The spans of a trace (``span_id``, ``parent_span_id``, ``name``, ``kind``, start and end
    ns, ``duration_ms``, status code and message, ``attributes`` as JSON text) in start order,
    only those started ``between`` two times when given (spans are stored about in time order:
    a window lets DuckDB skip other days' row groups): the run page's tree and waterfall."""
    sql = (
        "SELECT span_id, parent_span_id, name, kind, start_time_unix_nano, end_time_unix_nano,"
        " duration_ms, status_code, status_message, attributes FROM spans WHERE trace_id = ?"
    )
    if between is not None:
        return store.con.execute(
            sql + " AND start_time BETWEEN ? AND ? ORDER BY start_time_unix_nano, span_id",
            [trace_id, between[0], between[1]],
        ).fetchall()
    return store.con.execute(sql + " ORDER BY start_time_unix_nano, span_id", [trace_id]).fetchall()


def run_link(store: Store, run_id: str) -> dict[str, Any] | None:
    """``RUN_LINK_COLUMNS`` of one run, or None when it is not stored."""
    found = store.query_dicts(f"SELECT {RUN_LINK_COLUMNS} FROM runs WHERE run_id = ?", [run_id])
    return found[0] if found else None


def sub_run_links(store: Store, run_id: str) -> list[dict[str, Any]]:
    """``RUN_LINK_COLUMNS`` of the runs whose parent is ``run_id``, by start."""
    return store.query_dicts(
        f"SELECT {RUN_LINK_COLUMNS} FROM runs WHERE parent_run_id = ? ORDER BY started_at",
        [run_id],
    )


def replay_links(store: Store, case_ids: list[str]) -> list[dict[str, Any]]:
    """``RUN_LINK_COLUMNS``, ``eval_run_id`` and ``case_id`` of the latest 50 replay runs of
    the cases ``case_ids``, newest first (the run page of the runs they were promoted from)."""
    return store.query_dicts(
        f"SELECT {RUN_LINK_COLUMNS}, eval_run_id, case_id FROM runs"
        " WHERE case_id IN (SELECT unnest(CAST(? AS VARCHAR[]))) AND kind = 'replay'"
        " ORDER BY started_at DESC LIMIT 50",
        [case_ids],
    )


#: what the runs list shows of each run
LIST_COLUMNS = (
    "run_id, trace_id, parent_run_id, agent_name, service_name, kind, status, started_at,"
    " duration_ms, input_tokens, output_tokens, tool_calls_count, total_llm_calls, models,"
    " left(query, 160) AS query, left(error, 160) AS error"
)


def runs_page_rows(
    store: Store, where: str, params: Sequence[Any], order: str, limit: int, offset: int
) -> list[dict[str, Any]]:
    """``LIST_COLUMNS`` of the runs matching ``where`` (a SQL condition on ``runs`` with its
    ``params``, built by the UI's runs filter from its facets, never a person's text) in
    ``order``, ``limit`` of them from ``offset``: a page of the UI's runs list."""
    return store.query_dicts(
        f"SELECT {LIST_COLUMNS} FROM runs WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )


def matching_run_ids(store: Store, where: str, params: Sequence[Any], limit: int) -> list[str]:
    """Ids of the recorded (not replay) runs matching ``where`` (as in ``runs_page_rows``),
    oldest first, at most ``limit``: the UI's bulk promotion."""
    rows = store.con.execute(
        f"SELECT run_id FROM runs WHERE ({where}) AND kind IS DISTINCT FROM 'replay' "
        "ORDER BY started_at NULLS LAST, run_id LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [r[0] for r in rows]


#: the runs list's facets: name -> the ``runs`` column it counts (``models`` is a JSON array;
#: ``label``, the run's latest label, is not a column: ``scanned_facet_counts`` joins it in,
#: ``shared_facet_counts`` counts it by a join of the labels with the runs)
RUN_FACETS: dict[str, str] = {
    "status": "status",
    "kind": "kind",
    "agent": "agent_name",
    "service": "service_name",
    "model": "models",
    "label": "label",
}
#: the facet name of ``_facet_select``'s rows of runs counted by their list of models
_MODEL_LISTS = "model lists"


def _models_counted(rows: Iterable[tuple[str, Any, int]]) -> list[tuple[str, Any, int]]:
    """``rows`` with the counts of runs by their list of models (JSON text) turned into
    ``('model', name, n)``: the runs whose list names each model (a list naming it twice
    counts twice, as unnesting it does)."""
    out: list[tuple[str, Any, int]] = []
    models: dict[str, int] = {}
    for facet, value, n in rows:
        if facet != _MODEL_LISTS:
            out.append((facet, value, n))
            continue
        names = orjson.loads(value) if value else []
        for name in names if isinstance(names, list) else ():
            key = name if isinstance(name, str) else orjson.dumps(name).decode()
            models[key] = models.get(key, 0) + int(n)
    out.extend(("model", name, n) for name, n in models.items())
    return out


def _facet_select(name: str, source: str) -> str:
    if name == "model":
        # the runs counted by their list of models (a store holds few distinct ones), each
        # list read into its models afterwards (``_models_counted``): not one list per run
        return (
            f"(SELECT '{_MODEL_LISTS}', CAST(models AS VARCHAR), sum(n) FROM {source}"
            " GROUP BY CAST(models AS VARCHAR) HAVING sum(n) > 0)"
        )
    col = RUN_FACETS[name]
    return f"(SELECT '{name}', {col}, sum(n) FROM {source} GROUP BY {col} HAVING sum(n) > 0)"


def shared_facet_counts(
    store: Store, where: str, params: Sequence[Any], facets: Sequence[str]
) -> list[tuple[str, Any, int]]:
    """``('total', None, n)`` and ``(facet, value, n)`` for every value of each of ``facets``
    among the runs matching ``where``, a condition on facet columns only (kind, status,
    agent, service, models), counted from ``run_counts`` (migration 0020: on PostgreSQL a few
    rows per combination, not every run's row): the UI's runs list. The total and the column
    facets are one ``GROUPING SETS`` aggregate; labels by a join of the (few) latest labels
    with the runs, the rest of the total ``unlabelled``."""
    columns = [RUN_FACETS[f] for f in facets if f not in ("label", "model")]
    if "model" in facets:
        columns.append("model_list")
    sets = ", ".join(["()", *(f"({c})" for c in columns)])
    flags = "".join(f"GROUPING({c}) AS g_{c}, " for c in columns)
    rows = store.con.execute(
        f"SELECT {flags}{''.join(f'{c}, ' for c in columns)}sum(n) AS n FROM (SELECT status,"
        " kind, agent_name, service_name, CAST(models AS VARCHAR) AS model_list, n"
        f" FROM run_counts WHERE {where}) AS m GROUP BY GROUPING SETS ({sets})"
        " HAVING sum(n) > 0",
        list(params),
    ).fetchall()
    names = {RUN_FACETS[f]: f for f in facets if f not in ("label", "model")}
    names["model_list"] = _MODEL_LISTS
    out: list[tuple[str, Any, int]] = []
    total = 0
    k = len(columns)
    for row in rows:
        grouped = [c for c, flag in zip(columns, row[:k]) if not flag]
        if not grouped:
            total = int(row[-1])
            out.append(("total", None, total))
        else:
            out.append((names[grouped[0]], row[k + columns.index(grouped[0])], int(row[-1])))
    if "label" in facets:
        labelled = 0
        for verdict, n in store.con.execute(
            f"SELECT l.verdict, count(*) FROM (SELECT run_id FROM runs WHERE {where}) AS m"
            " JOIN latest_labels AS l ON l.run_id = m.run_id GROUP BY l.verdict",
            list(params),
        ).fetchall():
            out.append(("label", verdict, int(n)))
            labelled += int(n)
        if total > labelled:
            out.append(("label", "unlabelled", total - labelled))
    return _models_counted(out)


def facet_value_counts(
    store: Store, name: str, where: str, params: Sequence[Any]
) -> list[tuple[Any, int]]:
    """``(value, n)`` for every value of facet ``name`` (a column facet, not ``label``) among
    the runs matching ``where`` (as in ``shared_facet_counts``), from ``run_counts``: the
    UI's runs list, where a facet filtered by its own values counts without that filter."""
    value = f"{RUN_FACETS[name]}, n"
    sql = f"WITH m AS (SELECT {value} FROM run_counts WHERE {where}) " + _facet_select(name, "m")
    rows = _models_counted(store.con.execute(sql, list(params)).fetchall())
    return [(v, int(c)) for _, v, c in rows]


#: the runs list's default order, and its ``runs_newest`` index on PostgreSQL
NEWEST_FIRST = "started_at DESC NULLS LAST, run_id"


def scanned_facet_counts(
    store: Store,
    where: str,
    params: Sequence[Any],
    own: Sequence[tuple[str, str, Sequence[Any]]],
    newest: int | None = None,
) -> list[tuple[str, Any, int]]:
    """In one pass over the runs matching ``where`` (a search, a time range: what every count
    shares): ``('total', None, n)`` and ``(facet, value, n)`` for every facet of
    ``RUN_FACETS``, each counted under the facet filters ``own`` (``(facet, condition,
    parameters)``) but its own, so a facet shows what choosing another of its values would
    give. Each condition is evaluated once per run, as a flag the counts filter on; labels
    come from a join on the (few) latest labels. Where a read per facet scanned the runs again
    for each facet with a filter (a search always has one: the kinds shown), this reads them
    once.

    ``newest``: count only the newest ``newest`` runs matching ``where`` (in the runs list's
    order, so PostgreSQL walks its ``runs_newest`` index and stops there), and add
    ``('more', None, 1)`` when more runs match. A text search, which no index serves, then
    costs what its newest matches cost, not a read of every run's text."""
    names = [name for name, _, _ in own]
    flags = "".join(f", ({cond}) AS f_{i}" for i, (_, cond, _) in enumerate(own))
    values = [v for _, _, p in own for v in p]
    matching = (
        "SELECT run_id, started_at, status, kind, agent_name, service_name,"
        f" CAST(models AS VARCHAR) AS model_list{flags} FROM runs WHERE {where}"
    )
    counted: list[str] = []  # the condition of the runs counted: all, or the newest
    if newest is not None:
        # one run past the bound says whether more match: numbered, and left out of the counts
        counted = [f"rn <= {int(newest)}"]
        matching = (
            f"SELECT *, row_number() OVER (ORDER BY {NEWEST_FIRST}) AS rn FROM ({matching}"
            f" ORDER BY {NEWEST_FIRST} LIMIT {int(newest) + 1}) AS newest"
        )

    def count(skip: str | None) -> str:
        kept = [*(f"f_{i}" for i, name in enumerate(names) if name != skip), *counted]
        return f"count(*) FILTER (WHERE {' AND '.join(kept)})" if kept else "count(*)"

    columns = {f: ("model_list" if f == "model" else RUN_FACETS[f]) for f in RUN_FACETS}
    facets = list(columns)
    sets = ", ".join(["()", *(f"({c})" for c in columns.values())])
    grouping = ", ".join(f"GROUPING({c})" for c in columns.values())
    counts = ", ".join([count(None), *(count(n) for n in names), "count(*)"])
    rows = store.con.execute(
        f"SELECT {grouping}, {', '.join(columns.values())}, {counts} FROM (SELECT m.*,"
        f" coalesce(l.verdict, 'unlabelled') AS label FROM ({matching}) AS m"
        " LEFT JOIN latest_labels AS l ON l.run_id = m.run_id) AS s"
        f" GROUP BY GROUPING SETS ({sets})",
        [*values, *params],
    ).fetchall()
    k = len(columns)
    out: list[tuple[str, Any, int]] = []
    for row in rows:
        if newest is not None and all(row[:k]) and row[-1] > newest:
            out.append(("more", None, 1))
        grouped = [i for i in range(k) if not row[i]]
        facet = facets[grouped[0]] if grouped else None
        n = row[2 * k + (1 + names.index(facet) if facet in names else 0)]
        if not n:
            continue
        if facet is None:
            out.append(("total", None, int(n)))
        else:
            name = _MODEL_LISTS if facet == "model" else facet
            out.append((name, row[k + grouped[0]], int(n)))
    return _models_counted(out)
