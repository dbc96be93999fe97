"""Cases sent to an agent process ahead of time (``dispatch.Dispatcher._ahead``): a process
holds one case more per case it runs, so it starts the next the moment one ends instead of
waiting for the eval to hear of the result. ``--concurrency`` still bounds the cases running
at once, and ``--timeout`` counts from when a case starts, not from when it was sent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from replay_agents import RUNNING_AT_START
from replay_fixtures import AGENTS, CITIES, eval_process, make_suite, rows


@pytest.mark.parametrize("concurrency", [1, 3])
def test_concurrency_bounds_the_cases_running_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, concurrency: int
) -> None:
    # 30 cases of 50 ms: the processes hold cases ahead the whole time, and still no more
    # than --concurrency run at once (across processes); as many as that do
    monkeypatch.chdir(AGENTS)
    db = tmp_path / "store.duckdb"
    make_suite(db, [f"City{i}" for i in range(30)])
    proc = eval_process(
        db, "--agent", "replay_agents:weather_counting_overlap",
        "--concurrency", str(concurrency),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [run] = rows(db, "SELECT passed, total_cases FROM eval_runs")
    assert run["passed"] == run["total_cases"] == 30
    counts = RUNNING_AT_START.items()
    assert len(counts) == 30
    assert max(counts) == concurrency


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
