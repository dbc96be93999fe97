"""Suites, cases and eval runs as the UI shows them: the evaluation tables and the history views
(``eval_runs``, ``case_results``, ``check_results``, ``case_history``, ``suite_trend``) read by
``store/suites.py`` and ``store/eval_runs.py``, their JSON parsed, trajectories and diff
buckets added here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from tracereplay.errors import AmbiguousIdError, NotFoundError
from tracereplay.evaluate.diff import settings_difference
from tracereplay.models import ToolCallRecord
from tracereplay.report.replay_modes import live_step, markers, replay_modes
from tracereplay.report.trajectory import summarize, trajectory
from tracereplay.scoring.outcomes import ReplayReport
from tracereplay.store import eval_runs as eval_runs_store
from tracereplay.store import suites as suites_store
from tracereplay.store.db import Store
from tracereplay.store.runs import stored_tool_calls

#: eval runs shown in a suite's grid (the most recent)
GRID_RUNS = 20


def suites(store: Store) -> list[dict[str, Any]]:
    """Every suite with its case count and its latest eval run."""
    return suites_store.suite_overview(store)


def suite_names(store: Store) -> list[str]:
    return suites_store.suite_names(store)


def suite_row(store: Store, name: str) -> dict[str, Any]:
    row = suites_store.suite_row(store, name)
    if row is None:
        raise NotFoundError(f"no suite named '{name}'")
    row["checks"] = orjson.loads(row["checks"] or "[]")
    row["required_parameters"] = orjson.loads(row["required_parameters"] or "[]")
    return row


def suite_cases(store: Store, suite_id: str) -> list[dict[str, Any]]:
    """The suite's cases with the status of each in the latest eval run."""
    return suites_store.case_overview(store, suite_id)


def suite_trend(store: Store, suite_id: str) -> list[dict[str, Any]]:
    """Each eval run of the suite, oldest first, with pass rate, score, and the latency and
    tokens of the runs it scored (the replay runs, or the source runs in recorded mode)."""
    return eval_runs_store.suite_trend_with_metrics(store, suite_id)


def case_row(store: Store, case_id: str) -> dict[str, Any]:
    row = suites_store.case_row(store, case_id)
    if row is None:
        raise NotFoundError(f"no case with id {case_id}")
    return row


def case_history(store: Store, case_id: str) -> list[dict[str, Any]]:
    """The case's result in each eval run (newest first), with the runs it scored (the replay
    runs, or the source run in recorded mode), one per repetition."""
    return eval_runs_store.case_history_with_runs(store, case_id)


def latest_result(store: Store, case_id: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    """The case's repetitions in its latest eval run (``history[0]``), each with its
    trajectory (``with_steps``); ``{}`` when it was never evaluated."""
    if not history:
        return {}
    latest = history[0]
    reps = eval_runs_store.case_repetitions(store, case_id, latest["eval_run_id"])
    for rep in reps:
        rep["tool_calls"] = orjson.loads(rep["tool_calls"]) if rep["tool_calls"] else []
        rep["drift"] = orjson.loads(rep["drift"]) if rep["drift"] else None
    with_steps(store, reps, {latest["eval_run_id"]: latest["mode"]})
    return {"eval": latest, "repetitions": reps}


def resolve_eval_run(store: Store, ident: str) -> str:
    """An eval run id from the id or a unique prefix of it."""
    prefix = ident.strip().lower()
    ids = eval_runs_store.eval_run_ids_by_prefix(store, prefix)
    if not prefix or not ids:
        raise NotFoundError(f"no eval run id starts with '{ident}'")
    if len(ids) > 1:
        raise AmbiguousIdError(f"eval run id '{ident}' is ambiguous: give more of it")
    return ids[0]


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
    row = eval_runs_store.eval_run_with_trend(store, eval_run_id)
    if row is None:  # resolved above: gone since
        raise NotFoundError(f"no eval run id starts with '{ident}'")
    row["options"] = orjson.loads(row["options"]) if row.get("options") else {}
    return row


def eval_run_cases(store: Store, eval_run_id: str, mode: str) -> list[CaseResultView]:
    """Every case of an eval run (of ``mode``): its combined status, each repetition with its
    checks, the trajectory it scored next to the recorded one (``with_steps``)."""
    cases = eval_runs_store.eval_run_case_rows(store, eval_run_id)
    reps = eval_runs_store.case_results_of_run(store, eval_run_id)
    checks = eval_runs_store.check_results_of_run(store, eval_run_id)
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
    rows = eval_runs_store.case_history_pair(store, a["eval_run_id"], b["eval_run_id"])
    order = {"Regressed": 0, "Fixed": 1, "Changed": 2, "Added": 3, "Removed": 4, "Unchanged": 5}
    runs: dict[tuple[str, str], list[str]] = {}
    for eval_run_id, case_id, run_id in eval_runs_store.scored_run_ids(
        store, a["eval_run_id"], b["eval_run_id"]
    ):
        runs.setdefault((eval_run_id, case_id), []).append(run_id)
    for row in rows:
        row["bucket"] = _bucket(row)
        # the runs each side scored (replay runs, or the source run in recorded mode)
        row["a_runs"] = runs.get((a["eval_run_id"], row["case_id"]), [])
        row["b_runs"] = runs.get((b["eval_run_id"], row["case_id"]), [])
    rows.sort(key=lambda r: (order[r["bucket"]], r["seq"] if r["seq"] is not None else 0))
    counts = {k: sum(1 for r in rows if r["bucket"] == k) for k in order}
    return {
        "a": a,
        "b": b,
        "rows": rows,
        "counts": counts,
        "settings_note": settings_difference(a, b),
    }


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
    columns = eval_runs_store.latest_trend_rows(store, suite_id, runs)[::-1]
    ids = [c["eval_run_id"] for c in columns]
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    if ids:
        for row in eval_runs_store.case_statuses(store, ids):
            cells[(row["case_id"], row["eval_run_id"])] = row
    cases = suites_store.case_queries_by_seq(store, suite_id)
    return {"columns": columns, "cases": cases, "cells": cells}


def eval_runs(store: Store, limit: int = 200) -> list[dict[str, Any]]:
    """The latest eval runs of every suite."""
    return eval_runs_store.recent_eval_runs(store, limit)
