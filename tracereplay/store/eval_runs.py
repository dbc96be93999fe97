"""Reads of ``eval_runs``, ``case_results``, ``check_results`` and the history views
(``case_history``, ``suite_trend``) (the caller owns the transaction): ``diff``'s references
(``suite@N``, a label, ``--last``), whether an eval run id is taken, the stored replay report
of a replay run, and the rows the HTML report and the UI's eval pages are built of (their
models are built in ``report/data.py`` and ``ui/queries/evals.py``). The writes and the full
records stay with ``evaluate/results_store.py``, whose models (``EvalRunRecord``, ``CaseRun``)
are evaluate's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tracereplay.store.db import Store


def eval_run_ids_of_suite(store: Store, suite_name: str) -> list[str]:
    """The eval runs of the suite called ``suite_name``, oldest first (``suite@1`` first)."""
    rows = store.con.execute(
        "SELECT eval_run_id FROM eval_runs WHERE suite_name = ? ORDER BY started_at, eval_run_id",
        [suite_name],
    ).fetchall()
    return [str(r[0]) for r in rows]


def latest_labelled(store: Store, label: str) -> str | None:
    """The latest eval run given ``label`` (``eval --label``), or None."""
    rows = store.con.execute(
        "SELECT eval_run_id FROM eval_runs WHERE label = ? ORDER BY started_at DESC LIMIT 1",
        [label],
    ).fetchall()
    return str(rows[0][0]) if rows else None


def latest_suite(store: Store, suite: str | None = None) -> tuple[str, str] | None:
    """``(suite_id, suite_name)`` of the latest eval run (of ``suite``, a name or an id, when
    given), or None when there is none."""
    sql = "SELECT suite_id, suite_name FROM eval_runs"
    params: list[str] = []
    if suite is not None:
        sql += " WHERE suite_name = ? OR suite_id = ?"
        params = [suite, suite]
    rows = store.con.execute(sql + " ORDER BY started_at DESC LIMIT 1", params).fetchall()
    return (rows[0][0], rows[0][1]) if rows else None


def latest_completed_eval_runs(
    store: Store, count: int, *, suite_id: str | None = None, suite_name: str | None = None
) -> tuple[list[str], list[tuple[str, str]]]:
    """The ``count`` latest eval runs whose status is ``completed`` (of the suite with this id
    or name, when given), newest first, and ``(eval_run_id, status)`` of each eval run passed
    over on the way (running, interrupted or stopped, newer than the oldest one taken): what
    ``diff --last`` and ``report`` take when no eval run is named."""
    sql = "SELECT eval_run_id, status FROM eval_runs"
    params: list[Any] = []
    if suite_id is not None:
        sql += " WHERE suite_id = ?"
        params.append(suite_id)
    elif suite_name:
        sql += " WHERE suite_name = ?"
        params.append(suite_name)
    cur = store.con.execute(sql + " ORDER BY started_at DESC, eval_run_id DESC", params)
    taken: list[str] = []
    skipped: list[tuple[str, str]] = []
    while len(taken) < count:
        row = cur.fetchone()
        if row is None:
            break
        if row[1] == "completed":
            taken.append(str(row[0]))
        else:
            skipped.append((str(row[0]), str(row[1])))
    return taken, skipped


def suite_and_mode(store: Store, eval_run_id: str) -> tuple[str, str] | None:
    """``(suite_id, mode)`` of the eval run with this exact id, or None when there is none."""
    rows = store.con.execute(
        "SELECT suite_id, mode FROM eval_runs WHERE eval_run_id = ?", [eval_run_id]
    ).fetchall()
    return (rows[0][0], rows[0][1]) if rows else None


def replay_drift(store: Store, run_id: str) -> str | None:
    """The stored replay report (``case_results.drift``, JSON) of the replay that made
    ``run_id``, or None when it has none."""
    rows = store.con.execute(
        "SELECT drift FROM case_results WHERE run_id = ? AND drift IS NOT NULL LIMIT 1", [run_id]
    ).fetchall()
    return rows[0][0] if rows else None


def previous_completed_eval_run_id(
    store: Store, suite_id: str, started_at: datetime, eval_run_id: str
) -> str | None:
    """The suite's latest completed eval run started before ``started_at`` (ties broken by
    id), or None: the baseline of ``eval --max-regressions``, what the report and the UI's
    eval run page compare with (an interrupted or failed eval run is not a result)."""
    rows = store.query_dicts(
        "SELECT eval_run_id FROM eval_runs WHERE suite_id = ? AND status = 'completed'"
        " AND eval_run_id <> ? AND (started_at < ? OR (started_at = ? AND eval_run_id < ?))"
        " ORDER BY started_at DESC, eval_run_id DESC LIMIT 1",
        [suite_id, eval_run_id, started_at, started_at, eval_run_id],
    )
    return str(rows[0]["eval_run_id"]) if rows else None


def suite_trend(store: Store, suite_id: str) -> list[dict[str, Any]]:
    """The ``suite_trend`` rows of a suite (an eval run each, its counts and rates), oldest
    first: the report's trend chart and the reported run's numbers."""
    return store.query_dicts(
        "SELECT * FROM suite_trend WHERE suite_id = ? ORDER BY run_number", [suite_id]
    )


def case_history_of_run(store: Store, eval_run_id: str) -> list[dict[str, Any]]:
    """The ``case_history`` rows of one eval run (a case each, its repetitions combined), with
    the case's ``expected_output``, by seq: the report's cases."""
    return store.query_dicts(
        "SELECT h.*, c.expected_output FROM case_history AS h"
        " LEFT JOIN eval_cases AS c ON c.case_id = h.case_id"
        " WHERE h.eval_run_id = ? ORDER BY h.seq, h.case_id",
        [eval_run_id],
    )


def check_results_of_run(store: Store, eval_run_id: str) -> list[dict[str, Any]]:
    """The ``check_results`` of one eval run's cases as a whole (a multi-turn case's own, not
    its turns') with their position, by case, repetition and position: the report's check
    rows and the UI's eval run page."""
    return store.query_dicts(
        "SELECT case_id, repetition, position, check_name, check_kind, status, passed, score,"
        " explanation FROM check_results WHERE eval_run_id = ? AND turn IS NULL"
        " ORDER BY case_id, repetition, position",
        [eval_run_id],
    )


def scored_run_metrics(store: Store, suite_id: str) -> list[dict[str, Any]]:
    """Per eval run of the suite: median and 95th percentile duration and mean tokens of the
    agent runs it scored (``case_results.run_id``: the replay run, or in recorded mode the
    source run), for the report's trend."""
    return store.query_dicts(
        "SELECT cr.eval_run_id, quantile_cont(r.duration_ms, 0.5) AS p50_ms,"
        " quantile_cont(r.duration_ms, 0.95) AS p95_ms,"
        " avg(coalesce(r.input_tokens, 0) + coalesce(r.output_tokens, 0))"
        "   FILTER (WHERE r.input_tokens IS NOT NULL OR r.output_tokens IS NOT NULL) AS tokens"
        " FROM case_results AS cr JOIN runs AS r ON r.run_id = cr.run_id"
        " WHERE cr.eval_run_id IN (SELECT eval_run_id FROM eval_runs WHERE suite_id = ?)"
        " GROUP BY cr.eval_run_id",
        [suite_id],
    )


def unstable_cases(store: Store, eval_run_ids: list[str], limit: int) -> list[dict[str, Any]]:
    """The cases whose status changed between the eval runs ``eval_run_ids`` (in start order) or
    that were flaky in one, those that changed most first, at most ``limit``: per case its
    ``changes``, and ``runs``, ``statuses``, ``flakies`` lists; ``unstable`` counts them all
    (the report's case x eval-run grid)."""
    return store.query_dicts(
        "WITH h AS (SELECT case_id, seq, query, eval_run_id, status, flaky,"
        "   coalesce(status <> lag(status) OVER (PARTITION BY case_id"
        "     ORDER BY started_at, eval_run_id), false) AS changed"
        "   FROM case_history WHERE eval_run_id IN (SELECT unnest(?))),"
        " c AS (SELECT case_id, max(seq) AS seq, any_value(query) AS query,"
        "   count(*) FILTER (WHERE changed) AS changes, count(*) FILTER (WHERE flaky) AS flaky_runs,"
        "   list(eval_run_id) AS runs, list(status) AS statuses, list(flaky) AS flakies"
        "   FROM h GROUP BY case_id)"
        " SELECT *, count(*) OVER () AS unstable FROM c WHERE changes > 0 OR flaky_runs > 0"
        " ORDER BY changes + flaky_runs DESC, seq, case_id LIMIT ?",
        [eval_run_ids, limit],
    )


def suite_trend_with_metrics(store: Store, suite_id: str) -> list[dict[str, Any]]:
    """Each eval run of the suite, oldest first: its ``suite_trend`` counts and rates, and the
    mean latency and tokens of the runs it scored (the replay runs, or the source runs in
    recorded mode; the cases that are an ERROR left out, so an eval run that could not be
    carried out has none: a gap in a chart, not a drop to 0) and of its cases, with the eval
    run's ``agent`` and ``options`` (the UI's suite page)."""
    return store.query_dicts(
        """
        WITH scored AS (
            SELECT cr.eval_run_id, avg(r.duration_ms) AS latency_ms,
                   avg(CASE WHEN r.input_tokens IS NOT NULL OR r.output_tokens IS NOT NULL
                       THEN coalesce(r.input_tokens, 0) + coalesce(r.output_tokens, 0) END)
                       AS tokens,
                   avg(cr.duration_ms) FILTER (WHERE cr.turn IS NULL) AS case_ms
            FROM case_results cr LEFT JOIN runs r ON r.run_id = cr.run_id
            WHERE cr.suite_id = ? AND cr.status <> 'ERROR' GROUP BY cr.eval_run_id
        )
        SELECT t.eval_run_id, t.run_number, t.label, t.git_commit, t.mode, t.run_status,
               t.started_at, t.finished_at, t.cases, t.passed, t.failed, t.errored, t.flaky,
               t.pass_rate, t.aggregate_score, t.pass_rate_change, t.score_change,
               s.latency_ms, s.tokens, s.case_ms, e.agent, e.options
        FROM suite_trend t LEFT JOIN scored s USING (eval_run_id)
        LEFT JOIN eval_runs e ON e.eval_run_id = t.eval_run_id
        WHERE t.suite_id = ? ORDER BY t.run_number
        """,
        [suite_id, suite_id],
    )


def case_history_with_runs(store: Store, case_id: str) -> list[dict[str, Any]]:
    """The case's result in each eval run (newest first, at most 100), with the runs it scored
    (``run_ids``: the replay runs, or the source run in recorded mode, one per repetition): the
    UI's case page."""
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


def case_repetitions(store: Store, case_id: str, eval_run_id: str) -> list[dict[str, Any]]:
    """The ``case_results`` rows of one case in one eval run, by repetition, a multi-turn
    case's turns after its own row (``turn``; ``tool_calls`` and ``drift`` as stored JSON
    text): the UI's case page."""
    return store.query_dicts(
        "SELECT eval_run_id, repetition, turn, status, reason, run_id, source_run_id, response,"
        " tool_calls, drift FROM case_results WHERE case_id = ? AND eval_run_id = ?"
        " ORDER BY repetition, turn NULLS FIRST",
        [case_id, eval_run_id],
    )


def eval_run_ids_by_prefix(store: Store, prefix: str) -> list[str]:
    """Up to 3 eval run ids starting with ``prefix`` (more than one: the prefix is
    ambiguous)."""
    rows = store.con.execute(
        "SELECT eval_run_id FROM eval_runs WHERE starts_with(eval_run_id, ?) LIMIT 3", [prefix]
    ).fetchall()
    return [str(r[0]) for r in rows]


def eval_run_with_trend(store: Store, eval_run_id: str) -> dict[str, Any] | None:
    """The ``eval_runs`` row of ``eval_run_id`` (``options`` as stored JSON text) with its
    ``suite_trend`` numbers, or None: the UI's eval run and diff pages."""
    rows = store.query_dicts(
        "SELECT e.*, t.run_number, t.flaky, t.checks, t.checks_passed, t.check_pass_rate,"
        " t.pass_rate_change, t.score_change FROM eval_runs e"
        " LEFT JOIN suite_trend t USING (eval_run_id) WHERE e.eval_run_id = ?",
        [eval_run_id],
    )
    return rows[0] if rows else None


def eval_run_case_rows(store: Store, eval_run_id: str) -> list[dict[str, Any]]:
    """Every case of an eval run (``case_history``, with ``expected_output``), those that did
    not pass first, then by seq: the UI's eval run page."""
    return store.query_dicts(
        "SELECT h.case_id, h.seq, h.query, h.status, h.score, h.reason, h.repetitions, h.flaky,"
        " c.expected_output FROM case_history h LEFT JOIN eval_cases c USING (case_id)"
        " WHERE h.eval_run_id = ? ORDER BY h.status = 'PASSED', h.seq",
        [eval_run_id],
    )


def case_results_of_run(store: Store, eval_run_id: str) -> list[dict[str, Any]]:
    """The ``case_results`` rows of an eval run's cases as a whole (not a multi-turn case's
    turns), by case and repetition (``tool_calls`` and ``drift`` as stored JSON text): the UI's
    eval run page."""
    return store.query_dicts(
        "SELECT eval_run_id, case_id, repetition, status, score, reason, attempts, duration_ms,"
        " run_id, source_run_id, response, tool_calls, drift FROM case_results"
        " WHERE eval_run_id = ? AND turn IS NULL ORDER BY case_id, repetition",
        [eval_run_id],
    )


def case_history_pair(store: Store, a: str, b: str) -> list[dict[str, Any]]:
    """The cases of eval runs ``a`` and ``b`` side by side by case (``a_``/``b_`` status,
    score, reason; a case in one run only has the other's None), by seq: the UI's diff."""
    return store.query_dicts(
        """
        SELECT coalesce(x.case_id, y.case_id) AS case_id, coalesce(y.seq, x.seq) AS seq,
               coalesce(y.query, x.query) AS query,
               x.status AS a_status, x.score AS a_score, y.status AS b_status,
               y.score AS b_score, y.reason AS b_reason, x.reason AS a_reason
        FROM (SELECT * FROM case_history WHERE eval_run_id = ?) x
        FULL OUTER JOIN (SELECT * FROM case_history WHERE eval_run_id = ?) y USING (case_id)
        ORDER BY seq
        """,
        [a, b],
    )


def scored_run_ids(store: Store, a: str, b: str) -> list[tuple[str, str, str]]:
    """``(eval_run_id, case_id, run_id)`` of the runs eval runs ``a`` and ``b`` scored (replay
    runs, or the source run in recorded mode), by repetition: the UI's diff links them."""
    rows = store.con.execute(
        "SELECT eval_run_id, case_id, run_id FROM case_results"
        " WHERE eval_run_id IN (?, ?) AND run_id IS NOT NULL ORDER BY repetition",
        [a, b],
    ).fetchall()
    return [(str(e), str(c), str(r)) for e, c, r in rows]


def latest_trend_rows(store: Store, suite_id: str, limit: int) -> list[dict[str, Any]]:
    """The suite's latest ``limit`` eval runs (id, number, label, commit, mode, start, pass
    rate), newest first: the columns of the UI's case x eval-run grid."""
    return store.query_dicts(
        "SELECT eval_run_id, run_number, label, git_commit, mode, started_at, pass_rate"
        " FROM suite_trend WHERE suite_id = ? ORDER BY run_number DESC LIMIT ?",
        [suite_id, limit],
    )


def case_statuses(store: Store, eval_run_ids: list[str]) -> list[dict[str, Any]]:
    """Each case's status, score, reason and flakiness in each of ``eval_run_ids`` (the
    cells of the UI's case x eval-run grid)."""
    return store.query_dicts(
        "SELECT case_id, eval_run_id, status, score, reason, flaky FROM case_history"
        " WHERE eval_run_id IN (SELECT unnest(CAST(? AS VARCHAR[])))",
        [eval_run_ids],
    )


def recent_eval_runs(store: Store, limit: int = 200) -> list[dict[str, Any]]:
    """The latest ``limit`` eval runs of every suite with their ``suite_trend`` numbers, newest
    first: the UI's eval runs page."""
    return store.query_dicts(
        "SELECT t.eval_run_id, t.suite_name, t.run_number, t.label, t.git_commit, t.mode,"
        " t.run_status, t.started_at, t.cases, t.passed, t.failed, t.errored, t.pass_rate,"
        " t.aggregate_score, t.pass_rate_change, e.agent, e.options FROM suite_trend t"
        " LEFT JOIN eval_runs e ON e.eval_run_id = t.eval_run_id"
        " ORDER BY t.started_at DESC LIMIT ?",
        [limit],
    )


def case_results_of_cases(store: Store, case_ids: list[str]) -> list[dict[str, Any]]:
    """The latest 50 results (``case_history``: eval run, suite, seq, label, mode, start,
    status, score, reason) of the cases ``case_ids``, newest first: the run page of the run
    they were promoted from."""
    return store.query_dicts(
        "SELECT h.eval_run_id, h.suite_name, h.seq, h.label, h.mode, h.started_at, h.status,"
        " h.score, h.reason FROM case_history h"
        " WHERE h.case_id IN (SELECT unnest(CAST(? AS VARCHAR[]))) ORDER BY h.started_at DESC LIMIT 50",
        [case_ids],
    )
