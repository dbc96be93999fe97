"""Everything one eval run's report shows, read from the store in one go."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone
from typing import Any

import orjson
from pydantic import BaseModel, Field

from tracereplay import __version__
from tracereplay.errors import NotFoundError
from tracereplay.evaluate.diff import CaseDiff, diff_eval_runs
from tracereplay.evaluate.outcomes import EvalRunRecord, ReplayReport
from tracereplay.evaluate.results_store import get_eval_run, load_case_runs, resolve_eval_run_id
from tracereplay.models import ToolCallRecord
from tracereplay.report.trajectory import Step, align, recorded_only
from tracereplay.store.db import Store


class TrendPoint(BaseModel):
    """One eval run of the suite on the trend chart (a row of ``suite_trend``)."""

    eval_run_id: str
    run_number: int
    label: str | None = None
    git_commit: str | None = None
    started_at: datetime
    run_status: str
    cases: int
    passed: int
    pass_rate: float | None = None
    aggregate_score: float | None = None
    current: bool = False


class RunStats(BaseModel):
    """The reported eval run's counts, as ``suite_trend`` computes them."""

    cases: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    flaky: int = 0
    pass_rate: float | None = None
    aggregate_score: float | None = None
    checks: int = 0
    checks_passed: int = 0


class CheckRow(BaseModel):
    """One check result of one repetition."""

    name: str
    kind: str
    status: str
    passed: bool
    score: float | None = None
    explanation: str = ""


class RepetitionView(BaseModel):
    """One repetition of a case: its result, checks, response and tool trajectory."""

    repetition: int
    status: str
    score: float | None = None
    reason: str = ""
    duration_ms: float = 0.0
    attempts: int = 1
    run_id: str | None = None
    response: str | None = None
    checks: list[CheckRow] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    replay: ReplayReport | None = None


class CaseView(BaseModel):
    """One case of the reported eval run, its repetitions combined (as ``case_history``)."""

    case_id: str
    seq: int
    query: str = ""
    expected_output: str | None = None
    status: str
    score: float | None = None
    reason: str = ""
    flaky: bool = False
    source_run_id: str | None = None
    source_found: bool = True
    bucket: str | None = None
    repetitions: list[RepetitionView] = Field(default_factory=list)


class ReportData(BaseModel):
    """What ``render_report`` turns into HTML."""

    run: EvalRunRecord
    stats: RunStats
    trend: list[TrendPoint]
    previous: EvalRunRecord | None = None
    diff_counts: dict[str, int] = Field(default_factory=dict)
    changes: list[CaseDiff] = Field(default_factory=list)
    cases: list[CaseView] = Field(default_factory=list)
    generated_at: datetime
    version: str = __version__


def pick_eval_run(store: Store, ident: str | None, suite: str | None = None) -> str:
    """The eval run id ``ident`` names (a unique prefix), else the latest one (of ``suite``)."""
    if ident:
        return resolve_eval_run_id(store, ident)
    sql = "SELECT eval_run_id FROM eval_runs"
    params: list[Any] = []
    if suite:
        sql += " WHERE suite_name = ?"
        params.append(suite)
    rows = store.query_dicts(sql + " ORDER BY started_at DESC, eval_run_id DESC LIMIT 1", params)
    if not rows:
        where = f" of suite '{suite}'" if suite else ""
        raise NotFoundError(f"no eval run{where} in the store (run tracereplay eval first)")
    return str(rows[0]["eval_run_id"])


def _previous_run(store: Store, run: EvalRunRecord) -> str | None:
    rows = store.query_dicts(
        "SELECT eval_run_id FROM eval_runs WHERE suite_id = ?"
        " AND (started_at < ? OR (started_at = ? AND eval_run_id < ?))"
        " ORDER BY started_at DESC, eval_run_id DESC LIMIT 1",
        [run.suite_id, run.started_at, run.started_at, run.eval_run_id],
    )
    return str(rows[0]["eval_run_id"]) if rows else None


def _recorded_calls(store: Store, run_ids: set[str]) -> dict[str, list[ToolCallRecord]]:
    out: dict[str, list[ToolCallRecord]] = {r: [] for r in run_ids}
    if not run_ids:
        return out
    found = store.query_dicts(
        "SELECT run_id FROM runs WHERE run_id IN (SELECT unnest(?))", [sorted(run_ids)]
    )
    present = {r["run_id"] for r in found}
    for row in store.query_dicts(
        "SELECT run_id, round, tool_name, tool_call_id, arguments, result, duration_ms, error"
        " FROM tool_calls WHERE run_id IN (SELECT unnest(?)) ORDER BY run_id, position",
        [sorted(run_ids)],
    ):
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
    return {r: calls for r, calls in out.items() if r in present}


def load_report(store: Store, eval_run_id: str) -> ReportData:
    """Read the eval run, its suite's trend, the diff against the previous run and every case."""
    run = get_eval_run(store, eval_run_id)
    trend_rows = store.query_dicts(
        "SELECT * FROM suite_trend WHERE suite_id = ? ORDER BY run_number", [run.suite_id]
    )
    trend = [
        TrendPoint(**{k: r[k] for k in TrendPoint.model_fields if k in r},
                   current=r["eval_run_id"] == run.eval_run_id)
        for r in trend_rows
    ]  # fmt: skip
    this = next(r for r in trend_rows if r["eval_run_id"] == run.eval_run_id)
    stats = RunStats(**{k: this[k] for k in RunStats.model_fields})

    previous_id = _previous_run(store, run)
    previous = diff = None
    if previous_id is not None:
        diff = diff_eval_runs(store, previous_id, run.eval_run_id)
        previous = diff.a
    buckets = {c.case_id: c.bucket for c in diff.cases} if diff else {}

    case_rows = store.query_dicts(
        "SELECT h.*, c.expected_output FROM case_history AS h"
        " LEFT JOIN eval_cases AS c ON c.case_id = h.case_id"
        " WHERE h.eval_run_id = ? ORDER BY h.seq, h.case_id",
        [run.eval_run_id],
    )
    checks: dict[tuple[str, int], list[CheckRow]] = defaultdict(list)
    for c in store.query_dicts(
        "SELECT case_id, repetition, check_name, check_kind, status, passed, score, explanation"
        " FROM check_results WHERE eval_run_id = ? ORDER BY case_id, repetition, position",
        [run.eval_run_id],
    ):
        checks[(c["case_id"], c["repetition"])].append(
            CheckRow(
                name=c["check_name"],
                kind=c["check_kind"],
                status=c["status"],
                passed=c["passed"],
                score=c["score"],
                explanation=c["explanation"] or "",
            )
        )
    case_runs = load_case_runs(store, run.eval_run_id, with_checks=False)
    recorded = _recorded_calls(store, {r.source_run_id for r in case_runs if r.source_run_id})
    reps: dict[str, list[RepetitionView]] = defaultdict(list)
    for cr in case_runs:
        source = recorded.get(cr.source_run_id or "", [])
        if run.mode == "replay":
            steps = align(source, cr.tool_calls, cr.replay)
        else:
            steps = recorded_only(cr.tool_calls or source)
        reps[cr.case_id].append(
            RepetitionView(
                repetition=cr.repetition,
                status=cr.result.status.value,
                score=cr.result.score,
                reason=cr.result.reason,
                duration_ms=cr.result.duration_ms,
                attempts=cr.attempts,
                run_id=cr.result.run_id,
                response=cr.response,
                checks=checks.get((cr.case_id, cr.repetition), []),
                steps=steps,
                replay=cr.replay,
            )
        )
    cases = [
        CaseView(
            case_id=r["case_id"],
            seq=r["seq"] or 0,
            query=r["query"] or "",
            expected_output=r["expected_output"],
            status=r["status"],
            score=r["score"],
            reason=r["reason"] or "",
            flaky=bool(r["flaky"]),
            source_run_id=r["source_run_id"],
            source_found=r["source_run_id"] is None or r["source_run_id"] in recorded,
            bucket=buckets.get(r["case_id"]),
            repetitions=sorted(reps[r["case_id"]], key=lambda v: v.repetition),
        )
        for r in case_rows
    ]
    return ReportData(
        run=run,
        stats=stats,
        trend=trend,
        previous=previous,
        diff_counts=diff.counts() if diff else {},
        changes=[c for c in diff.cases if c.bucket != "Unchanged"] if diff else [],
        cases=cases,
        generated_at=datetime.now(timezone.utc),
    )
