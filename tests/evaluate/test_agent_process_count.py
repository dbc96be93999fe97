"""How many agent processes a replay starts: one, and more only when the cases are worth
loading the agent again (``dispatch.Dispatcher._processes_wanted``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from replay_fixtures import AGENTS, eval_process, make_suite, rows

from tracereplay.replay.workers.agent_process import usable_cores


def _pids_of_replay(tmp_path: Path, cities: list[str], agent: str) -> list[str]:
    """Record ``cities``, replay them with ``--agent AGENT --concurrency 4`` (every case must
    pass) and return the process ids the agent wrote to ``$REPLAY_AGENT_PIDS``."""
    db, pids = tmp_path / "store.duckdb", tmp_path / "pids"
    make_suite(db, cities)
    proc = eval_process(
        db,
        "--agent",
        agent,
        "--concurrency",
        "4",
        env={**os.environ, "REPLAY_AGENT_PIDS": str(pids)},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [run] = rows(db, "SELECT passed, total_cases FROM eval_runs")
    assert run["passed"] == run["total_cases"]
    return pids.read_text().split()


@pytest.mark.skipif(usable_cores() < 2, reason="a second process needs a second core")
def test_a_few_quick_cases_of_an_agent_slow_to_load_run_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # loading takes a second; the three cases take milliseconds: a second process would only
    # load the agent again
    monkeypatch.chdir(AGENTS)
    started = _pids_of_replay(tmp_path, ["Paris", "Rome", "Oslo"], "slow_loading:answer")
    assert len(started) == 4 and len(set(started)) == 1  # one import, three cases


@pytest.mark.skipif(usable_cores() < 2, reason="a second process needs a second core")
def test_many_cases_that_take_cpu_share_the_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 60 cases of 50 ms of CPU each (3 s) against an agent that loads in a fraction of that:
    # a process per core
    monkeypatch.chdir(AGENTS)
    cities = [f"City{i}" for i in range(60)]
    started = _pids_of_replay(tmp_path, cities, "replay_agents:weather_taking_a_while")
    assert len(started) == 60 and len(set(started)) == min(usable_cores(), 4)
