"""Cases sent to an agent process ahead of time (``dispatch.Dispatcher._ahead``): a process
holds one case more per case it runs (more of quick cases: ``dispatch.ahead_per_case``), so it
starts the next the moment one ends instead of waiting for the eval to hear of the result.
``--concurrency`` still bounds the cases running at once, ``--timeout`` counts from when a case
starts, not from when it was sent, and a crash still ends only the crashing case."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from replay_agents import RUNNING_AT_START
from replay_fixtures import AGENTS, CITIES, eval_process, make_suite, rows

from tracereplay.models import EvalCase, EvalSuite
from tracereplay.replay.workers.agent_process import (
    AgentProcesses,
    AgentSetup,
    CaseInputs,
    ReplayPlan,
)
from tracereplay.replay.workers.dispatch import (
    AHEAD_MOST,
    AHEAD_S,
    SLOW_S,
    Dispatcher,
    ahead_per_case,
)
from tracereplay.scoring.runner import Job, RunnerOptions, error_run


@given(st.floats(min_value=0, max_value=1e6), st.floats(min_value=0, max_value=1e6))
def test_quicker_cases_are_held_ahead_in_greater_numbers_within_bounds(a: float, b: float) -> None:
    quick, slow = sorted((a, b))
    assert 1 <= ahead_per_case(slow) <= ahead_per_case(quick) <= AHEAD_MOST
    # what a process holds ahead of each case it runs takes about AHEAD_S, or is one case
    n = ahead_per_case(quick)
    assert n == AHEAD_MOST or n == 1 or n * quick <= AHEAD_S < (n + 1) * quick


def test_one_case_is_held_ahead_until_a_case_has_ended_and_of_cases_of_50_ms() -> None:
    # not known yet: the first cases of an agent whose cases take minutes must not all go to
    # the first process ready
    assert ahead_per_case(None) == 1
    assert ahead_per_case(0.05) == 1 and ahead_per_case(0.0) == AHEAD_MOST


@pytest.mark.parametrize(
    ("concurrency", "sleep", "n"), [(1, 0.05, 30), (3, 0.05, 30), (3, 0.001, 150)]
)
def test_concurrency_bounds_the_cases_running_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, concurrency: int, sleep: float, n: int
) -> None:
    # cases of 50 ms (one held ahead per case running) and of 1 ms (many held ahead): the
    # processes hold cases ahead the whole time, and still no more than --concurrency run
    # at once (across processes); of the slow ones, as many as that do
    monkeypatch.chdir(AGENTS)
    db = tmp_path / "store.duckdb"
    make_suite(db, [f"City{i}" for i in range(n)])
    proc = eval_process(
        db, "--agent", "replay_agents:weather_counting_overlap",
        "--concurrency", str(concurrency),
        env={**os.environ, "REPLAY_AGENT_SLEEP": str(sleep)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [run] = rows(db, "SELECT passed, total_cases FROM eval_runs")
    assert run["passed"] == run["total_cases"] == n
    counts = RUNNING_AT_START.items()
    assert len(counts) == n
    assert max(counts) <= concurrency
    if sleep >= 0.05:
        assert max(counts) == concurrency


def test_a_crash_among_quick_cases_held_ahead_ends_only_the_crashing_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # quick cases, the two that crash their process (Paris: SIGSEGV, Rome: SIGABRT) last:
    # when they run, their process holds many cases sent ahead, which nothing tells apart
    # from the one that crashed it; each is run again alone, and only the two are ERRORs
    monkeypatch.chdir(AGENTS)
    db = tmp_path / "store.duckdb"
    cities = [*(f"City{i}" for i in range(60)), "Paris", *(f"Town{i}" for i in range(20)), "Rome"]
    make_suite(db, cities)
    proc = eval_process(db, "--agent", "replay_agents:crashes", "--concurrency", "2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    results = rows(
        db,
        "SELECT c.query, r.status, r.reason, r.attempts FROM case_results r "
        "JOIN eval_cases c ON c.case_id = r.case_id",
    )
    by_city = {r["query"].split()[-1].rstrip("?"): r for r in results}
    assert len(by_city) == len(cities)
    assert by_city["Paris"]["reason"].startswith("the agent's process was killed by signal SIGSEGV")
    assert by_city["Rome"]["reason"].startswith("the agent's process was killed by signal SIGABRT")
    others = {c: r["status"] for c, r in by_city.items() if c not in ("Paris", "Rome")}
    assert set(others.values()) == {"PASSED"}, others
    [run] = rows(db, "SELECT passed, errored FROM eval_runs")
    assert (run["passed"], run["errored"]) == (len(cities) - 2, 2)


def test_a_case_sent_ahead_counts_its_timeout_from_when_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one case at a time, 1.6 s each, --timeout 2 (killed 1 s past it): the second case was
    # sent as the first began, and ends 3.2 s after that, past the 3 s its process would be
    # killed at if its time counted from then; counted from its start, it passes
    monkeypatch.chdir(AGENTS)
    db = tmp_path / "store.duckdb"
    make_suite(db, CITIES[:2])
    proc = eval_process(
        db, "--agent", "replay_agents:slow", "--concurrency", "1", "--timeout", "2",
        env={**os.environ, "REPLAY_AGENT_SLEEP": "1.6"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert rows(db, "SELECT status FROM case_results") == [{"status": "PASSED"}] * 2


def _dispatcher(tmp_path: Path, n: int) -> tuple[Dispatcher, SimpleNamespace]:
    """A dispatcher of ``n`` jobs and one agent process as it sees it (no process started)."""
    suite = EvalSuite(name="s")
    jobs = [Job(EvalCase(suite_id=suite.id, seq=i, query=f"q{i}")) for i in range(n)]
    pool = AgentProcesses(AgentSetup("m:agent", tmp_path / "s.duckdb"), concurrency=2)
    pool.start(ReplayPlan(suite=suite, eval_run_id="e"), lambda job: CaseInputs())
    dispatcher = Dispatcher(pool, jobs, RunnerOptions(concurrency=2), on_result=lambda run: None)
    process = SimpleNamespace(running={}, queued={})
    dispatcher.live = [process]  # type: ignore[list-item]
    return dispatcher, process


def _ran(dispatcher: Dispatcher, process: SimpleNamespace, seen_s: float, ran_s: float) -> None:
    """Two cases start in ``process``; one's result comes back after ``seen_s`` (as the eval
    sees it), saying its attempt took ``ran_s`` (as the process measured it)."""
    now = time.monotonic()
    for _ in range(2):
        task = dispatcher.todo.popleft()
        task.t0 = now - seen_s
        process.running[task.key] = task
    key = next(iter(process.running))
    end = datetime.now(UTC)
    result = error_run(process.running[key].job, "x", started=end - timedelta(seconds=ran_s))
    dispatcher._message(
        process, ("results", [(key, result.model_copy(update={"finished_at": end}))])
    )


def test_quick_cases_are_held_ahead_by_what_they_took_in_the_process(tmp_path: Path) -> None:
    # results come back in batches: a case of 0.3 ms seems to the eval to take the round trip
    # (12 ms here, and the case still running seems that old); what is sent ahead follows
    # the processes' own measure, so quick cases are held ahead in numbers
    dispatcher, process = _dispatcher(tmp_path, 100)
    _ran(dispatcher, process, seen_s=0.012, ran_s=0.0003)
    assert len(dispatcher._ahead(process, running=2)) == 2 * AHEAD_MOST
    # a case seen running for longer than SLOW_S is a slow one: one ahead per case running
    dispatcher, process = _dispatcher(tmp_path, 100)
    _ran(dispatcher, process, seen_s=SLOW_S + 0.1, ran_s=0.0003)
    assert len(dispatcher._ahead(process, running=2)) == 2
