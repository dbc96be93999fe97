"""Everything one eval run's report shows, read from the store in one go."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field

from tracereplay import __version__
from tracereplay.errors import NotFoundError
from tracereplay.evaluate.diff import CaseDiff, EvalDiff, diff_eval_runs
from tracereplay.evaluate.results_store import get_eval_run, load_case_runs, resolve_eval_run_id
from tracereplay.report.trajectory import Step, stored_calls, trajectory
from tracereplay.scoring.outcomes import EvalRunRecord, ReplayReport
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
    #: the agent runs the eval run scored (replay runs, or the recorded source runs): median
    #: and 95th percentile duration, mean tokens (input + output) per run
    p50_ms: float | None = None
    p95_ms: float | None = None
    tokens: float | None = None


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


class GridRow(BaseModel):
    """One case on the case x eval-run grid: its status in each eval run of the window."""

    case_id: str
    seq: int
    query: str = ""
    #: per grid column: PASSED / FAILED / ERROR, or None when the case was not in that run
    statuses: list[str | None]
    #: per grid column: whether the case was flaky within that run (mixed repetitions)
    flaky: list[bool]
    changes: int = 0


class Grid(BaseModel):
    """The cases whose status moves between eval runs (or within one): the flaky ones."""

    runs: list[TrendPoint] = Field(default_factory=list)
    rows: list[GridRow] = Field(default_factory=list)
    #: how many cases qualify (rows holds the first GRID_ROWS of them)
    unstable: int = 0


class DayPoint(BaseModel):
    """One day of production (live) runs."""

    day: date
    runs: int = 0
    failed: int = 0
    tool_calls: int = 0
    tool_errors: int = 0

    @property
    def tool_error_rate(self) -> float | None:
        return self.tool_errors / self.tool_calls if self.tool_calls else None


class ToolErrors(BaseModel):
    """One tool over the production window."""

    tool_name: str
    calls: int
    errors: int


class Production(BaseModel):
    """Live runs of the suite's agents, per day, over the window ending at the newest one."""

    agents: list[str] = Field(default_factory=list)
    days: list[DayPoint] = Field(default_factory=list)
    tools: list[ToolErrors] = Field(default_factory=list)


class ReportData(BaseModel):
    """What ``render_report`` turns into HTML."""

    run: EvalRunRecord
    stats: RunStats
    trend: list[TrendPoint]
    previous: EvalRunRecord | None = None
    diff_counts: dict[str, int] = Field(default_factory=dict)
    changes: list[CaseDiff] = Field(default_factory=list)
    cases: list[CaseView] = Field(default_factory=list)
    grid: Grid = Field(default_factory=Grid)
    production: Production = Field(default_factory=Production)
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


def diff_with_previous(store: Store, run: EvalRunRecord) -> EvalDiff | None:
    """``run`` compared with the eval run of its suite before it (None for the suite's first):
    the report's diff section, and what ``report --format markdown`` summarizes."""
    previous_id = _previous_run(store, run)
    return None if previous_id is None else diff_eval_runs(store, previous_id, run.eval_run_id)


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
    _add_run_metrics(store, run.suite_id, trend)
    this = next(r for r in trend_rows if r["eval_run_id"] == run.eval_run_id)
    stats = RunStats(**{k: this[k] for k in RunStats.model_fields})

    diff = diff_with_previous(store, run)
    previous = diff.a if diff else None
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
    calls = stored_calls(
        store, [id_ for r in case_runs for id_ in (r.result.run_id, r.source_run_id)]
    )
    reps: dict[str, list[RepetitionView]] = defaultdict(list)
    for cr in case_runs:
        steps = trajectory(
            calls,
            replay_mode=run.mode == "replay",
            run_id=cr.result.run_id,
            source_run_id=cr.source_run_id,
            report=cr.replay,
            scored=cr.tool_calls,
        )
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
            source_found=r["source_run_id"] is None or r["source_run_id"] in calls,
            bucket=buckets.get(r["case_id"]),
            repetitions=sorted(reps[r["case_id"]], key=lambda v: v.repetition),
        )
        for r in case_rows
    ]
    return ReportData(
        grid=load_grid(store, trend),
        production=load_production(store, run.suite_id),
        run=run,
        stats=stats,
        trend=trend,
        previous=previous,
        diff_counts=diff.counts() if diff else {},
        changes=[c for c in diff.cases if c.bucket != "Unchanged"] if diff else [],
        cases=cases,
        generated_at=datetime.now(UTC),
    )


#: the grid shows the last this many eval runs (up to the reported one) ...
GRID_RUNS = 20
#: ... and at most this many cases (those that changed most first)
GRID_ROWS = 40
#: production charts: this many days, ending at the day of the newest live run
PRODUCTION_DAYS = 30


def _add_run_metrics(store: Store, suite_id: str, trend: list[TrendPoint]) -> None:
    """Latency and tokens of the agent runs each eval run scored (``case_results.run_id``: the
    replay run, or in recorded mode the source run)."""
    rows = store.query_dicts(
        "SELECT cr.eval_run_id, quantile_cont(r.duration_ms, 0.5) AS p50_ms,"
        " quantile_cont(r.duration_ms, 0.95) AS p95_ms,"
        " avg(coalesce(r.input_tokens, 0) + coalesce(r.output_tokens, 0))"
        "   FILTER (WHERE r.input_tokens IS NOT NULL OR r.output_tokens IS NOT NULL) AS tokens"
        " FROM case_results AS cr JOIN runs AS r ON r.run_id = cr.run_id"
        " WHERE cr.eval_run_id IN (SELECT eval_run_id FROM eval_runs WHERE suite_id = ?)"
        " GROUP BY cr.eval_run_id",
        [suite_id],
    )
    by_run = {r["eval_run_id"]: r for r in rows}
    for p in trend:
        m = by_run.get(p.eval_run_id)
        if m:
            p.p50_ms, p.p95_ms, p.tokens = m["p50_ms"], m["p95_ms"], m["tokens"]


def load_grid(store: Store, trend: list[TrendPoint]) -> Grid:
    """The last ``GRID_RUNS`` eval runs up to the reported one, and the cases whose status is not
    the same in all of them (or that were flaky in one), those that changed most first."""
    upto = next((i for i, p in enumerate(trend) if p.current), len(trend) - 1)
    window = trend[max(0, upto + 1 - GRID_RUNS) : upto + 1]
    if len(window) < 1:
        return Grid()
    ids = [p.eval_run_id for p in window]
    rows = store.query_dicts(
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
        [ids, GRID_ROWS],
    )
    column = {eval_run_id: i for i, eval_run_id in enumerate(ids)}
    out: list[GridRow] = []
    for r in rows:
        statuses: list[str | None] = [None] * len(ids)
        flaky = [False] * len(ids)
        for run_id, status, is_flaky in zip(r["runs"], r["statuses"], r["flakies"]):
            statuses[column[run_id]] = status
            flaky[column[run_id]] = bool(is_flaky)
        out.append(
            GridRow(
                case_id=r["case_id"],
                seq=r["seq"] or 0,
                query=r["query"] or "",
                statuses=statuses,
                flaky=flaky,
                changes=r["changes"],
            )
        )
    return Grid(runs=window, rows=out, unstable=rows[0]["unstable"] if rows else 0)


def load_production(store: Store, suite_id: str) -> Production:
    """Live top-level runs of the agents the suite's cases were promoted from (every agent's
    when no case has a source run), per day over ``PRODUCTION_DAYS`` days ending at the newest."""
    agents = sorted(
        r["agent_name"]
        for r in store.query_dicts(
            "SELECT DISTINCT r.agent_name FROM eval_cases AS c"
            " JOIN runs AS r ON r.run_id = c.source_run_id"
            " WHERE c.suite_id = ? AND r.agent_name IS NOT NULL AND r.kind = 'live'",
            [suite_id],
        )
    )
    live = "SELECT * FROM runs WHERE kind = 'live' AND parent_run_id IS NULL"
    live_params: list[Any] = []
    if agents:
        live += " AND agent_name IN (SELECT unnest(?))"
        live_params.append(agents)
    [last] = store.query_dicts(
        f"SELECT CAST(max(started_at) AS DATE) AS day FROM ({live}) AS live", live_params
    )
    if last["day"] is None:
        return Production(agents=agents)
    end: date = last["day"]
    start = end - timedelta(days=PRODUCTION_DAYS - 1)
    window = f"SELECT * FROM ({live}) AS live WHERE CAST(started_at AS DATE) >= ?"
    params = [*live_params, start]
    days = {d: DayPoint(day=d) for d in (start + timedelta(days=i) for i in range(PRODUCTION_DAYS))}
    for r in store.query_dicts(
        "SELECT CAST(started_at AS DATE) AS day, count(*) AS runs,"
        f" count(*) FILTER (WHERE status <> 'success') AS failed FROM ({window}) AS w GROUP BY day",
        params,
    ):
        days[r["day"]].runs, days[r["day"]].failed = r["runs"], r["failed"]
    calls = (
        "SELECT CAST(w.started_at AS DATE) AS day, tc.tool_name, tc.error FROM tool_calls AS tc"
        f" JOIN ({window}) AS w ON w.trace_id = tc.trace_id"
    )
    for r in store.query_dicts(
        f"SELECT day, count(*) AS calls, count(error) AS errors FROM ({calls}) AS c GROUP BY day",
        params,
    ):
        days[r["day"]].tool_calls, days[r["day"]].tool_errors = r["calls"], r["errors"]
    tools = [
        ToolErrors(tool_name=r["tool_name"] or "?", calls=r["calls"], errors=r["errors"])
        for r in store.query_dicts(
            f"SELECT tool_name, count(*) AS calls, count(error) AS errors FROM ({calls}) AS c"
            " GROUP BY tool_name ORDER BY errors DESC, calls DESC, tool_name LIMIT 8",
            params,
        )
    ]
    return Production(agents=agents, days=list(days.values()), tools=tools)
