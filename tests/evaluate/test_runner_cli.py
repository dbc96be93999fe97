"""The runner behind ``tracereplay eval``: timeouts, retries, repeat, fail-fast, filters, Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from replay_fixtures import AGENTS, CITIES, cli, eval_json, make_suite, query, replay_agents, rows


@pytest.mark.parametrize("agent", ["hang", "hang_async"])
def test_a_hung_agent_is_an_error_after_the_timeout_and_the_run_moves_on(
    db: Path, tmp_path: Path, agent: str
) -> None:
    doc = eval_json(
        db, tmp_path, "weather", "--agent", f"replay_agents:{agent}", "--timeout", "0.3",
        "--concurrency", "2", exit_code=1,
    )  # fmt: skip
    assert len(doc["cases"]) == 3  # every case was tried, none waited for the 30 s agent
    for case in doc["cases"]:
        assert case["status"] == "ERROR" and case["reason"] == "timed out after 0.3s"
    assert doc["eval_run"]["status"] == "completed"


def test_retries_repeat_errors_until_one_attempt_passes(db: Path, tmp_path: Path) -> None:
    replay_agents._ATTEMPTS.clear()
    first = eval_json(db, tmp_path, "weather", "--agent", "replay_agents:flaky", exit_code=1)
    assert {c["status"] for c in first["cases"]} == {"ERROR"}
    assert "ConnectionError" in first["cases"][0]["reason"]
    replay_agents._ATTEMPTS.clear()
    doc = eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:flaky", "--retries", "2", exit_code=0
    )
    assert [c["repetitions"][0]["attempts"] for c in doc["cases"]] == [2, 2, 2]
    stored = rows(
        db,
        "SELECT attempts FROM case_results WHERE eval_run_id = ?",
        [doc["eval_run"]["eval_run_id"]],
    )
    assert [r["attempts"] for r in stored] == [2, 2, 2]


def test_failed_cases_are_never_retried(db: Path, tmp_path: Path) -> None:
    doc = eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:wrong_answer", "--retries", "3",
        exit_code=1,
    )  # fmt: skip
    assert {c["status"] for c in doc["cases"]} == {"FAILED"}
    assert all(c["repetitions"][0]["attempts"] == 1 for c in doc["cases"])
    assert set(replay_agents.CALLS.values()) == {1}


def test_repeat_passes_a_case_only_if_every_repetition_passes(db: Path, tmp_path: Path) -> None:
    steady = eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:weather", "--repeat", "3", exit_code=0
    )
    assert all(len(c["repetitions"]) == 3 for c in steady["cases"])
    doc = eval_json(
        db, tmp_path, "weather", "--agent", "replay_agents:alternating", "--repeat", "2",
        "--concurrency", "1", exit_code=1,
    )  # fmt: skip
    for case in doc["cases"]:
        assert case["status"] == "FAILED"
        assert [r["status"] for r in case["repetitions"]] == ["PASSED", "FAILED"]
        assert "repetition 2" in case["reason"]
        assert 0 < case["score"] < 1
    stored = rows(
        db,
        "SELECT case_id, count(*) AS n FROM case_results WHERE eval_run_id = ? GROUP BY case_id",
        [doc["eval_run"]["eval_run_id"]],
    )
    assert sorted(r["n"] for r in stored) == [2, 2, 2]
    assert doc["eval_run"]["total_cases"] == 3 and doc["eval_run"]["failed"] == 3


def test_fail_fast_stops_starting_cases_after_the_first_failure(db: Path, tmp_path: Path) -> None:
    result = cli(
        db, "eval", "weather", "--agent", "replay_agents:wrong_answer", "--fail-fast",
        "--concurrency", "1",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "--fail-fast" in result.stdout and "2 case(s) not run" in result.stdout
    [run] = rows(db, "SELECT * FROM eval_runs")
    assert run["status"] == "stopped" and run["total_cases"] == 1 and run["failed"] == 1
    assert rows(db, "SELECT count(*) AS n FROM case_results")[0]["n"] == 1
    assert sum(replay_agents.CALLS.values()) == 1


def test_recorded_mode_fail_fast_and_filters(db: Path, tmp_path: Path) -> None:
    cases = eval_json(db, tmp_path, "weather", exit_code=0)["cases"]
    assert [c["status"] for c in cases] == ["PASSED"] * 3
    tagged = cli(
        db, "case", "add", "--suite", "weather", "--query", query("Lima"), "--tag", "smoke",
        "--expected-output", "Lima",
    )  # fmt: skip
    assert tagged.exit_code == 0, tagged.output
    only_tag = eval_json(db, tmp_path, "weather", "--tag", "smoke", exit_code=1)["cases"]
    assert [c["query"] for c in only_tag] == [query("Lima")]
    assert "no source run" in only_tag[0]["reason"]  # recorded mode needs a recording
    second = cases[1]["case_id"]
    only_case = eval_json(db, tmp_path, "weather", "--case", second[:8], exit_code=0)["cases"]
    assert [c["case_id"] for c in only_case] == [second]
    stopped = eval_json(db, tmp_path, "weather", "--fail-fast", "--concurrency", "1")
    assert stopped["eval_run"]["status"] == "stopped"
    assert [c["status"] for c in stopped["cases"]][-1] == "ERROR"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--case", "zzzz"], "--case 'zzzz' matches no case"),
        (["--tag", "nope"], "no case matches"),
        (["--concurrency", "0"], "concurrency"),
        (["--repeat", "0"], "repeat"),
        # no fork bomb, no job list without end, no retry loop without end: bounded, one line
        (["--concurrency", "99999999999999999999999"], "less than or equal to 256"),
        (["--repeat", "100000000000000"], "less than or equal to 1000"),
        (["--retries", "101"], "less than or equal to 100"),
    ],
)
def test_selection_and_runner_usage_errors_exit_2(db: Path, args: list[str], message: str) -> None:
    result = cli(db, "eval", "weather", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_ctrl_c_keeps_the_finished_results_and_marks_the_run_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(AGENTS)
    db = tmp_path / "store.duckdb"
    make_suite(db, CITIES)  # 10 cases
    markers = tmp_path / "markers"
    markers.mkdir()
    env = {
        **os.environ,
        "REPLAY_AGENT_MARKERS": str(markers),
        "REPLAY_AGENT_SLEEP": "0.3",
        "PYTHONPATH": os.pathsep.join(p for p in (str(AGENTS), os.environ.get("PYTHONPATH")) if p),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "eval", "weather",
         "--agent", "replay_agents:slow", "--concurrency", "1"],
        cwd=AGENTS, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while len(list(markers.iterdir())) < 4 and proc.poll() is None:
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out.decode(), err.decode())
    assert b"interrupted" in err
    said = " ".join(out.decode().split())
    assert "interrupted after" in said and "pass rate" not in said, said
    [run] = rows(db, "SELECT * FROM eval_runs")
    assert run["status"] == "interrupted" and run["finished_at"] is not None
    stored = rows(db, "SELECT status FROM case_results WHERE eval_run_id = ?", [run["eval_run_id"]])
    assert 1 <= len(stored) < 10  # the cases finished before Ctrl-C, not the rest
    assert {r["status"] for r in stored} == {"PASSED"}
    assert run["total_cases"] == len(stored) and run["passed"] == len(stored)


def test_runner_options_from_python_have_the_same_bounds() -> None:
    from tracereplay.errors import BadParameterError
    from tracereplay.evaluate import RunnerOptions

    for bad in (
        {"concurrency": 257},
        {"repeat": 1001},
        {"retries": 101},
        {"timeout_s": float("inf")},
        {"timeout_s": float("nan")},
    ):
        with pytest.raises(BadParameterError):
            RunnerOptions(**bad)


def test_cases_at_once_default_to_the_cores_when_nothing_can_wait() -> None:
    """``--concurrency`` unset: a Python agent answered wholly from the recording waits on
    nothing, so one case per usable core; a live model, a fork, live tools, a command or no
    replay at all keep 4 (a waiting case costs a thread, not a core)."""
    from tracereplay.evaluate.settings import DEFAULT_CONCURRENCY, default_concurrency
    from tracereplay.replay.workers.agent_process import usable_cores

    offline = {"agent": "agent:answer", "llm": "recorded"}
    assert default_concurrency(**offline) == usable_cores()
    for waits in (
        {**offline, "llm": "live"},
        {**offline, "llm": None},
        {**offline, "llm_until": 1},
        {**offline, "live_tools": True},
        {**offline, "agent": None},  # --agent-cmd, or recorded mode
    ):
        assert default_concurrency(**waits) == DEFAULT_CONCURRENCY == 4, waits
