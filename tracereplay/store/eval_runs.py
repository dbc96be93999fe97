"""Reads of ``eval_runs`` and ``case_results`` that name eval runs and replays (the caller owns
the transaction): ``diff``'s references (``suite@N``, a label, ``--last``), whether an eval run
id is taken, the stored replay report of a replay run. The writes and the full records stay
with ``evaluate/results_store.py``, whose models (``EvalRunRecord``, ``CaseRun``) are
evaluate's.
"""

from __future__ import annotations

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
