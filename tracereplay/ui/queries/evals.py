"""Suites, cases and eval runs, read from the evaluation tables and the history views
(``eval_runs``, ``case_results``, ``check_results``, ``case_history``, ``suite_trend``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from tracereplay.errors import AmbiguousIdError, NotFoundError
from tracereplay.models import ToolCallRecord
from tracereplay.report.replay_modes import live_step, markers, replay_modes
from tracereplay.report.trajectory import summarize, trajectory
from tracereplay.scoring.outcomes import ReplayReport
from tracereplay.store.db import Store
from tracereplay.store.runs import stored_tool_calls

#: eval runs shown in a suite's grid (the most recent)
GRID_RUNS = 20


def suites(store: Store) -> list[dict[str, Any]]:
    """Every suite with its case count and its latest eval run."""
    return store.query_dicts(
        """
        WITH last AS (
            SELECT suite_id, count(*) AS eval_runs,
                   arg_max(eval_run_id, started_at) AS last_eval_run_id,
                   arg_max(pass_rate, started_at) AS last_pass_rate,
                   arg_max(aggregate_score, started_at) AS last_score,
                   max(started_at) AS last_started_at,
                   list(pass_rate ORDER BY started_at) AS pass_rates
            FROM suite_trend GROUP BY suite_id
        ), counts AS (
            SELECT suite_id, count(*) AS cases FROM eval_cases GROUP BY suite_id
        )
        SELECT s.suite_id, s.name, s.agent_name, s.description, s.updated_at,
               coalesce(c.cases, 0) AS cases, coalesce(l.eval_runs, 0) AS eval_runs,
               l.last_eval_run_id, l.last_pass_rate, l.last_score, l.last_started_at,
               l.pass_rates
        FROM eval_suites s LEFT JOIN last l USING (suite_id) LEFT JOIN counts c USING (suite_id)
        ORDER BY s.name
        """
    )


def suite_names(store: Store) -> list[str]:
    return [
        r[0] for r in store.con.execute("SELECT name FROM eval_suites ORDER BY name").fetchall()
    ]


def suite_row(store: Store, name: str) -> dict[str, Any]:
    rows = store.query_dicts("SELECT * FROM eval_suites WHERE name = ?", [name])
    if not rows:
        raise NotFoundError(f"no suite named '{name}'")
    row = rows[0]
    row["checks"] = orjson.loads(row["checks"] or "[]")
    row["required_parameters"] = orjson.loads(row["required_parameters"] or "[]")
    return row


def suite_cases(store: Store, suite_id: str) -> list[dict[str, Any]]:
    """The suite's cases with the status of each in the latest eval run."""
    return store.query_dicts(
        """
        WITH latest AS (
            SELECT case_id, arg_max(status, started_at) AS last_status,
                   arg_max(score, started_at) AS last_score
            FROM case_history WHERE suite_id = ? GROUP BY case_id
        )
        SELECT c.case_id, c.seq, left(c.query, 160) AS query, c.source_kind, c.source_run_id,
               c.tags, c.expected_output IS NOT NULL AS has_expected,
               json_array_length(c.expected_tool_calls) AS expected_tools,
               c.checks IS NOT NULL AS own_checks, l.last_status, l.last_score
        FROM eval_cases c LEFT JOIN latest l USING (case_id)
        WHERE c.suite_id = ? ORDER BY c.seq
        """,
        [suite_id, suite_id],
    )


def suite_trend(store: Store, suite_id: str) -> list[dict[str, Any]]:
    """Each eval run of the suite, oldest first, with pass rate, score, and the latency and
    tokens of the runs it scored (the replay runs, or the source runs in recorded mode)."""
    return store.query_dicts(
        """
        WITH scored AS (
            SELECT cr.eval_run_id, avg(r.duration_ms) AS latency_ms,
                   avg(coalesce(r.input_tokens, 0) + coalesce(r.output_tokens, 0)) AS tokens,
                   avg(cr.duration_ms) AS case_ms
            FROM case_results cr LEFT JOIN runs r ON r.run_id = cr.run_id
            WHERE cr.suite_id = ? GROUP BY cr.eval_run_id
        )
        SELECT t.eval_run_id, t.run_number, t.label, t.git_commit, t.mode, t.run_status,
               t.started_at, t.finished_at, t.cases, t.passed, t.failed, t.errored, t.flaky,
               t.pass_rate, t.aggregate_score, t.pass_rate_change, t.score_change,
               s.latency_ms, s.tokens, s.case_ms
        FROM suite_trend t LEFT JOIN scored s USING (eval_run_id)
        WHERE t.suite_id = ? ORDER BY t.run_number
        """,
        [suite_id, suite_id],
    )


def case_row(store: Store, case_id: str) -> dict[str, Any]:
    rows = store.query_dicts(
        "SELECT c.*, s.name AS suite_name FROM eval_cases c JOIN eval_suites s USING (suite_id)"
        " WHERE c.case_id = ?",
        [case_id],
    )
    if not rows:
        raise NotFoundError(f"no case with id {case_id}")
    return rows[0]


def case_history(store: Store, case_id: str) -> list[dict[str, Any]]:
    """The case's result in each eval run (newest first), with the runs it scored (the replay
    runs, or the source run in recorded mode), one per repetition."""
    return store.query_dicts(
        "WITH runs AS (SELECT eval_run_id, list(run_id ORDER BY repetition)"
        "   FILTER (WHERE run_id IS NOT NULL) AS run_ids"
        "   FROM case_results WHERE case_id = ? GROUP BY eval_run_id)"
        " SELECT h.eval_run_id, h.label, h.mode, h.started_at, h.status, h.score, h.reason,"
        " h.repetitions, h.flaky, coalesce(r.run_ids, []) AS run_ids"
        " FROM case_history h LEFT JOIN runs r USING (eval_run_id)"
        " WHERE h.case_id = ? ORDER BY h.started_at DESC LIMIT 100",
        [case_id, case_id],
    )


def latest_result(store: Store, case_id: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    """The case's repetitions in its latest eval run (``history[0]``), each with its
    trajectory (``with_steps``); ``{}`` when it was never evaluated."""
    if not history:
        return {}
    latest = history[0]
    reps = store.query_dicts(
        "SELECT eval_run_id, repetition, status, run_id, source_run_id, tool_calls, drift"
        " FROM case_results WHERE case_id = ? AND eval_run_id = ? ORDER BY repetition",
        [case_id, latest["eval_run_id"]],
    )
    for rep in reps:
        rep["tool_calls"] = orjson.loads(rep["tool_calls"]) if rep["tool_calls"] else []
        rep["drift"] = orjson.loads(rep["drift"]) if rep["drift"] else None
    with_steps(store, reps, {latest["eval_run_id"]: latest["mode"]})
    return {"eval": latest, "repetitions": reps}


def resolve_eval_run(store: Store, ident: str) -> str:
    """An eval run id from the id or a unique prefix of it."""
    prefix = ident.strip().lower()
    rows = store.con.execute(
        "SELECT eval_run_id FROM eval_runs WHERE starts_with(eval_run_id, ?) LIMIT 3", [prefix]
    ).fetchall()
    if not prefix or not rows:
        raise NotFoundError(f"no eval run id starts with '{ident}'")
    if len(rows) > 1:
        raise AmbiguousIdError(f"eval run id '{ident}' is ambiguous: give more of it")
    return rows[0][0]


@dataclass
class CaseResultView:
    case_id: str
    seq: int | None
    query: str
    status: str
    score: float | None
    reason: str | None
    repetitions: int
    flaky: bool
    expected_output: str | None
    repetition_rows: list[dict[str, Any]] = field(default_factory=list)


def eval_run(store: Store, ident: str) -> dict[str, Any]:
    """An eval run's row, with its ``suite_trend`` counts."""
    eval_run_id = resolve_eval_run(store, ident)
    row = store.query_dicts(
        "SELECT e.*, t.run_number, t.flaky, t.checks, t.checks_passed, t.check_pass_rate,"
        " t.pass_rate_change, t.score_change FROM eval_runs e"
        " LEFT JOIN suite_trend t USING (eval_run_id) WHERE e.eval_run_id = ?",
        [eval_run_id],
    )[0]
    row["options"] = orjson.loads(row["options"]) if row.get("options") else {}
    return row


def eval_run_cases(store: Store, eval_run_id: str, mode: str) -> list[CaseResultView]:
    """Every case of an eval run (of ``mode``): its combined status, each repetition with its
    checks, the trajectory it scored next to the recorded one (``with_steps``)."""
    cases = store.query_dicts(
        "SELECT h.case_id, h.seq, h.query, h.status, h.score, h.reason, h.repetitions, h.flaky,"
        " c.expected_output FROM case_history h LEFT JOIN eval_cases c USING (case_id)"
        " WHERE h.eval_run_id = ? ORDER BY h.status = 'PASSED', h.seq",
        [eval_run_id],
    )
    reps = store.query_dicts(
        "SELECT eval_run_id, case_id, repetition, status, score, reason, attempts, duration_ms,"
        " run_id, source_run_id, response, tool_calls, drift FROM case_results"
        " WHERE eval_run_id = ? ORDER BY case_id, repetition",
        [eval_run_id],
    )
    checks = store.query_dicts(
        "SELECT case_id, repetition, position, check_name, check_kind, status, passed, score,"
        " explanation FROM check_results WHERE eval_run_id = ?"
        " ORDER BY case_id, repetition, position",
        [eval_run_id],
    )
    checks_by: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for ch in checks:
        checks_by.setdefault((ch["case_id"], ch["repetition"]), []).append(ch)
    reps_by: dict[str, list[dict[str, Any]]] = {}
    for rep in reps:
        rep["tool_calls"] = orjson.loads(rep["tool_calls"]) if rep["tool_calls"] else []
        rep["drift"] = orjson.loads(rep["drift"]) if rep["drift"] else None
        rep["checks"] = checks_by.get((rep["case_id"], rep["repetition"]), [])
        reps_by.setdefault(rep["case_id"], []).append(rep)
    with_steps(store, reps, {eval_run_id: mode})
    return [
        CaseResultView(
            case_id=c["case_id"],
            seq=c["seq"],
            query=c["query"] or "",
            status=c["status"],
            score=c["score"],
            reason=c["reason"],
            repetitions=c["repetitions"],
            flaky=bool(c["flaky"]),
            expected_output=c["expected_output"],
            repetition_rows=reps_by.get(c["case_id"], []),
        )
        for c in cases
    ]


def with_steps(store: Store, reps: list[dict[str, Any]], modes: dict[str, str]) -> None:
    """Give each ``case_results`` row (``tool_calls`` and ``drift`` parsed) its trajectory,
    ``steps``, and its tool-call counts, ``summary``: ``tracereplay.report.trajectory``, as the
    HTML report shows it; a fork's or live tools' ``modes`` and the trajectory's ``markers``
    and ``live_steps`` (``tracereplay.report.replay_modes``). ``modes``: each row's eval run's
    mode."""
    calls = stored_tool_calls(
        store, [r for rep in reps for r in (rep["run_id"], rep["source_run_id"])]
    )
    for rep in reps:
        report = ReplayReport.model_validate(rep["drift"]) if rep["drift"] else None
        replayed = modes.get(rep["eval_run_id"]) == "replay"
        rep["steps"] = trajectory(
            calls,
            replay_mode=replayed,
            run_id=rep["run_id"],
            source_run_id=rep["source_run_id"],
            report=report,
            scored=[ToolCallRecord.model_validate(t) for t in rep["tool_calls"]],
        )
        rep["summary"] = summarize(rep["steps"]) if report is not None else None
        rep["tool_match"] = report.tool_match if report is not None else None
        view = replay_modes(report) if replayed else None
        rep["modes"] = view
        rep["markers"] = markers(rep["steps"], view)
        rep["live_steps"] = [live_step(s, view) for s in rep["steps"]]


def diff(store: Store, a_ident: str, b_ident: str) -> dict[str, Any]:
    """Two eval runs case by case: Regressed, Fixed, Changed (score), Unchanged, Added, Removed."""
    a = eval_run(store, a_ident)
    b = eval_run(store, b_ident)
    rows = store.query_dicts(
        """
        SELECT coalesce(x.case_id, y.case_id) AS case_id, coalesce(y.seq, x.seq) AS seq,
               coalesce(y.query, x.query) AS query,
               x.status AS a_status, x.score AS a_score, y.status AS b_status,
               y.score AS b_score, y.reason AS b_reason, x.reason AS a_reason
        FROM (SELECT * FROM case_history WHERE eval_run_id = ?) x
        FULL OUTER JOIN (SELECT * FROM case_history WHERE eval_run_id = ?) y USING (case_id)
        ORDER BY seq
        """,
        [a["eval_run_id"], b["eval_run_id"]],
    )
    order = {"Regressed": 0, "Fixed": 1, "Changed": 2, "Added": 3, "Removed": 4, "Unchanged": 5}
    runs: dict[tuple[str, str], list[str]] = {}
    for eval_run_id, case_id, run_id in store.con.execute(
        "SELECT eval_run_id, case_id, run_id FROM case_results"
        " WHERE eval_run_id IN (?, ?) AND run_id IS NOT NULL ORDER BY repetition",
        [a["eval_run_id"], b["eval_run_id"]],
    ).fetchall():
        runs.setdefault((eval_run_id, case_id), []).append(run_id)
    for row in rows:
        row["bucket"] = _bucket(row)
        # the runs each side scored (replay runs, or the source run in recorded mode)
        row["a_runs"] = runs.get((a["eval_run_id"], row["case_id"]), [])
        row["b_runs"] = runs.get((b["eval_run_id"], row["case_id"]), [])
    rows.sort(key=lambda r: (order[r["bucket"]], r["seq"] if r["seq"] is not None else 0))
    counts = {k: sum(1 for r in rows if r["bucket"] == k) for k in order}
    return {"a": a, "b": b, "rows": rows, "counts": counts}


def _bucket(row: dict[str, Any]) -> str:
    if row["a_status"] is None:
        return "Added"
    if row["b_status"] is None:
        return "Removed"
    a_pass, b_pass = row["a_status"] == "PASSED", row["b_status"] == "PASSED"
    if a_pass and not b_pass:
        return "Regressed"
    if b_pass and not a_pass:
        return "Fixed"
    a_score, b_score = row["a_score"], row["b_score"]
    if row["a_status"] != row["b_status"] or (
        a_score is not None and b_score is not None and abs(a_score - b_score) > 1e-9
    ):
        return "Changed"
    return "Unchanged"


def grid(store: Store, suite_id: str, runs: int = GRID_RUNS) -> dict[str, Any]:
    """The suite's cases (rows) by its latest eval runs (columns, oldest first)."""
    columns = store.query_dicts(
        "SELECT eval_run_id, run_number, label, git_commit, mode, started_at, pass_rate"
        " FROM suite_trend WHERE suite_id = ? ORDER BY run_number DESC LIMIT ?",
        [suite_id, runs],
    )[::-1]
    ids = [c["eval_run_id"] for c in columns]
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    if ids:
        for row in store.query_dicts(
            "SELECT case_id, eval_run_id, status, score, reason, flaky FROM case_history"
            " WHERE eval_run_id IN (SELECT unnest(CAST(? AS VARCHAR[])))",
            [ids],
        ):
            cells[(row["case_id"], row["eval_run_id"])] = row
    cases = store.query_dicts(
        "SELECT case_id, seq, left(query, 80) AS query FROM eval_cases WHERE suite_id = ?"
        " ORDER BY seq",
        [suite_id],
    )
    return {"columns": columns, "cases": cases, "cells": cells}


def eval_runs(store: Store, limit: int = 200) -> list[dict[str, Any]]:
    """The latest eval runs of every suite."""
    return store.query_dicts(
        "SELECT eval_run_id, suite_name, run_number, label, git_commit, mode, run_status,"
        " started_at, cases, passed, failed, errored, pass_rate, aggregate_score,"
        " pass_rate_change FROM suite_trend ORDER BY started_at DESC LIMIT ?",
        [limit],
    )
