"""An agent that ends the process (sys.exit, os._exit) ends its own case, not the eval."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from replay_fixtures import AGENTS, eval_process, rows

pytestmark = pytest.mark.slow


def test_sys_exit_and_os_exit_are_errors_with_the_true_reason(db: Path) -> None:
    # a real process, as a user runs it: os._exit would end a test process too
    proc = eval_process(db, "--agent", "replay_agents:exits", "--concurrency", "1")
    assert proc.returncode == 1, proc.stderr  # cases did not pass; the eval itself finished
    assert "Traceback" not in proc.stderr
    [run] = rows(db, "SELECT eval_run_id, status FROM eval_runs")
    assert run["status"] == "completed"
    results = rows(
        db,
        "SELECT c.query, r.status, r.reason FROM case_results r "
        "JOIN eval_cases c ON c.case_id = r.case_id ORDER BY c.seq",
    )
    by_city = {r["query"].split()[-1].rstrip("?"): (r["status"], r["reason"]) for r in results}
    assert by_city["Paris"] == ("ERROR", "the agent called sys.exit(4)")
    assert by_city["Rome"] == ("ERROR", "the agent called os._exit(3)")
    assert by_city["Oslo"][0] == "PASSED"


def test_an_eval_whose_process_died_is_marked_interrupted_when_the_store_is_next_opened(
    db: Path,
) -> None:
    import signal
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "eval", "weather",
         "--agent", "replay_agents:hang", "--timeout", "30"],
        cwd=AGENTS, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.3)
            try:
                if rows(db, "SELECT status FROM eval_runs"):
                    break
            except Exception:  # the eval holds the store for a moment
                continue
        proc.send_signal(signal.SIGKILL)  # a crash: nothing of the eval runs after this
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    from tracereplay.store import Store

    with Store.open(db) as store:  # as the dead process left it
        [before] = store.query_dicts("SELECT status FROM eval_runs")
    assert before["status"] == "running"
    listed = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "runs"],
        cwd=AGENTS, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    [after] = rows(db, "SELECT status, finished_at FROM eval_runs")
    assert after["status"] == "interrupted" and after["finished_at"] is not None


def _assert_only_the_crashing_cases_ended(db: Path) -> None:
    """``replay_agents:crashes``' verdicts: Paris and Rome end their process (SIGSEGV, SIGABRT),
    each an ERROR naming the signal; Oslo passes."""
    results = rows(
        db,
        "SELECT c.query, r.status, r.reason FROM case_results r "
        "JOIN eval_cases c ON c.case_id = r.case_id ORDER BY c.seq",
    )
    by_city = {r["query"].split()[-1].rstrip("?"): (r["status"], r["reason"]) for r in results}
    assert by_city["Paris"][0] == "ERROR"
    assert by_city["Paris"][1].startswith("the agent's process was killed by signal SIGSEGV")
    assert by_city["Rome"][0] == "ERROR"
    assert by_city["Rome"][1].startswith("the agent's process was killed by signal SIGABRT")
    assert by_city["Oslo"][0] == "PASSED"


def test_an_agent_that_crashes_the_interpreter_ends_its_case_only(db: Path) -> None:
    proc = eval_process(db, "--agent", "replay_agents:crashes", "--concurrency", "2")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    [run] = rows(db, "SELECT status, passed, errored FROM eval_runs")
    assert (run["status"], run["passed"], run["errored"]) == ("completed", 1, 2)
    _assert_only_the_crashing_cases_ended(db)
    # the case that passed was replayed in a process that lived: its replay run is stored
    stored = rows(db, "SELECT count(*) AS n FROM runs WHERE kind = 'replay'")
    assert stored[0]["n"] >= 1


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_a_crash_in_a_process_running_several_cases_ends_only_the_crashing_one(
    db: Path, tmp_path: Path
) -> None:
    # one core: one agent process runs the three cases at once; Paris and Rome end it, each
    # once re-run alone, and Oslo, in the process both times, still passes
    pids = tmp_path / "pids"
    proc = eval_process(
        db, "--agent", "replay_agents:crashes_after_a_while", "--concurrency", "3",
        env={**os.environ, "REPLAY_AGENT_PIDS": str(pids)},
        preexec_fn=lambda: os.sched_setaffinity(0, [min(os.sched_getaffinity(0))]),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    _assert_only_the_crashing_cases_ended(db)
    started = pids.read_text().split()
    assert len(set(started[:3])) == 1  # the three ran in one process
    assert len(started) == 6 and started[0] not in started[3:]  # then each alone, elsewhere


def test_a_case_past_its_timeout_has_its_process_killed(db: Path, tmp_path: Path) -> None:
    import os
    import time

    pids = tmp_path / "pids"
    t0 = time.monotonic()
    proc = eval_process(
        db, "--agent", "replay_agents:hang", "--timeout", "1", "--concurrency", "3",
        env={**os.environ, "REPLAY_AGENT_PIDS": str(pids)},
    )  # fmt: skip
    elapsed = time.monotonic() - t0
    assert proc.returncode == 1, proc.stderr
    reasons = rows(db, "SELECT DISTINCT reason FROM case_results")
    assert reasons == [{"reason": "timed out after 1s"}]
    # the agent sleeps 30 s per case: killed, not waited for (nor left behind)
    assert elapsed < 25
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 3
    for pid in started:  # every hung agent process is gone
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"agent process {pid} still runs")


def test_in_process_replay_runs_the_agent_in_the_eval_process(db: Path) -> None:
    proc = eval_process(db, "--agent", "replay_agents:exits", "--concurrency", "1", "--in-process")
    assert proc.returncode == 1, proc.stderr
    reasons = {r["reason"] for r in rows(db, "SELECT reason FROM case_results")}
    assert {"the agent called sys.exit(4)", "the agent called os._exit(3)"} <= reasons
    [run] = rows(db, "SELECT options FROM eval_runs")
    assert '"in_process": true' in run["options"].replace(":true", ": true")


def test_a_crash_is_seen_even_when_a_child_of_the_agent_keeps_its_pipe_open(
    db: Path, tmp_path: Path
) -> None:
    import os
    import signal
    import time

    pids = tmp_path / "pids"
    t0 = time.monotonic()
    try:
        # output to files: the forked child holds the eval's stdout and stderr too
        with (tmp_path / "out").open("w") as out, (tmp_path / "err").open("w") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "tracereplay", "--db", str(db), "eval", "weather",
                 "--agent", "replay_agents:crashes_leaving_a_child", "--concurrency", "1",
                 "--timeout", "25"],
                cwd=AGENTS, stdout=out, stderr=err,
                env={**os.environ, "REPLAY_AGENT_PIDS": str(pids)},
            )  # fmt: skip
            proc.wait(timeout=120)
        elapsed = time.monotonic() - t0
    finally:
        for pid in pids.read_text().split() if pids.exists() else []:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert proc.returncode == 1, (tmp_path / "err").read_text()
    reasons = {r["reason"] for r in rows(db, "SELECT reason FROM case_results")}
    assert any(r.startswith("the agent's process was killed by signal SIGSEGV") for r in reasons)
    assert elapsed < 20  # not the 25 s timeout
