"""Everything one eval run's report shows, read from the store in one go."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from pydantic import BaseModel, Field

from tracereplay import __version__
from tracereplay.errors import NotFoundError
from tracereplay.evaluate.diff import CaseDiff, EvalDiff, diff_eval_runs, skipped_note
from tracereplay.evaluate.results_store import get_eval_run, load_case_runs, resolve_eval_run_id
from tracereplay.report.trajectory import Step, trajectory
from tracereplay.scoring.outcomes import CaseRun, EvalRunRecord, ReplayReport
from tracereplay.store import eval_runs, runs
from tracereplay.store.db import Store
from tracereplay.store.runs import stored_tool_calls
from tracereplay.store.suites import turn_questions


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
    #: a turn of a multi-turn case: its number and question
    turn: int | None = None
    query: str = ""
    #: a multi-turn case: each turn's result, response and trajectory, in order
    turns: list[RepetitionView] = Field(default_factory=list)


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


def pick_eval_run(
    store: Store,
    ident: str | None,
    suite: str | None = None,
    note: Callable[[str], None] | None = None,
) -> str:
    """The eval run id ``ident`` names (a unique prefix), else the latest completed one (of
    ``suite``): running, interrupted and stopped eval runs are skipped, each said to ``note``
    in one line."""
    if ident:
        return resolve_eval_run_id(store, ident)
    taken, skipped = eval_runs.latest_completed_eval_runs(store, 1, suite_name=suite)
    where = f" of suite '{suite}'" if suite else ""
    if not taken:
        if skipped:
            raise NotFoundError(
                f"no completed eval run{where} in the store ({len(skipped)} not completed: "
                f"name one to report it, e.g. tracereplay report {skipped[0][0][:8]})"
            )
        raise NotFoundError(f"no eval run{where} in the store (run tracereplay eval first)")
    message = skipped_note(skipped, f"reporting the latest completed eval run {taken[0][:8]}")
    if message and note is not None:
        note(message)
    return taken[0]


def _previous_run(store: Store, run: EvalRunRecord) -> str | None:
    return eval_runs.previous_completed_eval_run_id(
        store, run.suite_id, run.started_at, run.eval_run_id
    )


def diff_with_previous(store: Store, run: EvalRunRecord) -> EvalDiff | None:
    """``run`` compared with the eval run of its suite before it (None for the suite's first):
    the report's diff section, and what ``report --format markdown`` summarizes."""
    previous_id = _previous_run(store, run)
    return None if previous_id is None else diff_eval_runs(store, previous_id, run.eval_run_id)


def load_report(store: Store, eval_run_id: str) -> ReportData:
    """Read the eval run, its suite's trend, the diff against the previous run and every case."""
    run = get_eval_run(store, eval_run_id)
    trend_rows = eval_runs.suite_trend(store, run.suite_id)
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

    case_rows = eval_runs.case_history_of_run(store, run.eval_run_id)
    checks: dict[tuple[str, int], list[CheckRow]] = defaultdict(list)
    for c in eval_runs.check_results_of_run(store, run.eval_run_id):
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
    every = [t for r in case_runs for t in (r, *r.turns)]
    calls = stored_tool_calls(
        store, [id_ for r in every for id_ in (r.result.run_id, r.source_run_id)]
    )
    questions = turn_questions(store, {r.case_id for r in case_runs if r.turns})

    def view(cr: CaseRun) -> RepetitionView:
        steps = trajectory(
            calls,
            replay_mode=run.mode == "replay",
            run_id=cr.result.run_id,
            source_run_id=cr.source_run_id,
            report=cr.replay,
            scored=cr.tool_calls,
        )
        asked = questions.get(cr.case_id, [])
        return RepetitionView(
            repetition=cr.repetition,
            status=cr.result.status.value,
            score=cr.result.score,
            reason=cr.result.reason,
            duration_ms=cr.result.duration_ms,
            attempts=cr.attempts,
            run_id=cr.result.run_id,
            response=cr.response,
            checks=checks.get((cr.case_id, cr.repetition), []) if cr.turn is None else [],
            steps=steps if not cr.turns else [],
            replay=cr.replay,
            turn=cr.turn,
            query=asked[cr.turn - 1] if cr.turn and cr.turn <= len(asked) else "",
            turns=[view(t) for t in cr.turns],
        )

    reps: dict[str, list[RepetitionView]] = defaultdict(list)
    for cr in case_runs:
        reps[cr.case_id].append(view(cr))
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
    rows = eval_runs.scored_run_metrics(store, suite_id)
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
    rows = eval_runs.unstable_cases(store, ids, GRID_ROWS)
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
    agents = runs.promoted_live_agents(store, suite_id)
    end = runs.last_live_day(store, agents)
    if end is None:
        return Production(agents=agents)
    start = end - timedelta(days=PRODUCTION_DAYS - 1)
    days = {d: DayPoint(day=d) for d in (start + timedelta(days=i) for i in range(PRODUCTION_DAYS))}
    for r in runs.live_runs_per_day(store, agents, start):
        days[r["day"]].runs, days[r["day"]].failed = r["runs"], r["failed"]
    for r in runs.live_tool_calls_per_day(store, agents, start):
        days[r["day"]].tool_calls, days[r["day"]].tool_errors = r["calls"], r["errors"]
    tools = [
        ToolErrors(tool_name=r["tool_name"] or "?", calls=r["calls"], errors=r["errors"])
        for r in runs.live_tool_errors(store, agents, start, limit=8)
    ]
    return Production(agents=agents, days=list(days.values()), tools=tools)
