"""Reads of ``eval_runs`` and ``case_results`` that name eval runs and replays (the caller owns
the transaction): ``diff``'s references (``suite@N``, a label, ``--last``), whether an eval run
id is taken, the stored replay report of a replay run. The writes and the full records stay
with ``evaluate/results_store.py``, whose models (``EvalRunRecord``, ``CaseRun``) are
evaluate's.
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


def latest_eval_run_ids(store: Store, suite_id: str, count: int) -> list[str]:
    """The suite's ``count`` latest eval runs, newest first."""
    rows = store.con.execute(
        "SELECT eval_run_id FROM eval_runs WHERE suite_id = ?"
        " ORDER BY started_at DESC, eval_run_id DESC LIMIT ?",
        [suite_id, count],
    ).fetchall()
    return [str(r[0]) for r in rows]


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


def latest_eval_run_id(store: Store, suite_name: str | None = None) -> str | None:
    """The latest eval run (of the suite called ``suite_name``), or None: what ``report``
    shows when no eval run is named."""
    sql = "SELECT eval_run_id FROM eval_runs"
    params: list[Any] = []
    if suite_name:
        sql += " WHERE suite_name = ?"
        params.append(suite_name)
    rows = store.query_dicts(sql + " ORDER BY started_at DESC, eval_run_id DESC LIMIT 1", params)
    return str(rows[0]["eval_run_id"]) if rows else None


def previous_eval_run_id(
    store: Store, suite_id: str, started_at: datetime, eval_run_id: str
) -> str | None:
    """The eval run of the suite just before the one started at ``started_at`` (ties broken by
    id), or None for the suite's first: what the report diffs against."""
    rows = store.query_dicts(
        "SELECT eval_run_id FROM eval_runs WHERE suite_id = ?"
        " AND (started_at < ? OR (started_at = ? AND eval_run_id < ?))"
        " ORDER BY started_at DESC, eval_run_id DESC LIMIT 1",
        [suite_id, started_at, started_at, eval_run_id],
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
    """The ``check_results`` of one eval run, by case, repetition and the check's position: the
    report's check rows."""
    return store.query_dicts(
        "SELECT case_id, repetition, check_name, check_kind, status, passed, score, explanation"
        " FROM check_results WHERE eval_run_id = ? ORDER BY case_id, repetition, position",
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
