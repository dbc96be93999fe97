"""Read-your-writes with several writers: two agent processes append to the spool while
``tracereplay runs`` (the CLI, its own process) drains it again and again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tracereplay.cli.common import store_exists
from tracereplay.store.open import open_store

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RUNS_PER_AGENT = 12
SPANS_PER_RUN = 5  # invoke_agent + 2 chat + 2 execute_tool


def cli_runs(db: Path, env: dict[str, str]) -> list[dict]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tracereplay",
            "--db",
            str(db),
            "runs",
            "--format",
            "json",
            "--limit",
            "1000",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    return json.loads(out.stdout)


def test_two_agents_and_the_cli_at_once_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "shared.duckdb"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACEREPLAY_"))},
        "PYTHONPATH": str(REPO),
        "OTEL_BSP_SCHEDULE_DELAY": "20",  # write often, so drains overlap the writes
    }
    agents = [
        subprocess.Popen(
            [sys.executable, str(HERE / "agent_process.py"), str(db), name, str(RUNS_PER_AGENT)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("agent_a", "agent_b")
    ]
    seen_during: list[int] = []
    while any(a.poll() is None for a in agents):
        if not store_exists(db):  # no agent has written yet: `runs` says there is no store
            time.sleep(0.01)
            continue
        seen_during.append(len(cli_runs(db, env)))
    outputs = [a.communicate(timeout=60) for a in agents]
    for agent, (_, err) in zip(agents, outputs):
        assert agent.returncode == 0, err
    expected_ids = {line for out, _ in outputs for line in out.split()}
    assert len(expected_ids) == 2 * RUNS_PER_AGENT

    runs = cli_runs(db, env)  # right after the agents exit: everything is there
    assert {r["run_id"] for r in runs} == expected_ids
    assert all(r["status"] == "success" for r in runs)
    assert all(r["tool_calls_count"] == 2 and r["total_llm_calls"] == 2 for r in runs)
    print("runs seen while the agents wrote:", seen_during)
    assert seen_during and seen_during == sorted(seen_during), "runs never disappear"
    with open_store(db) as store:
        assert store.count("spans") == 2 * RUNS_PER_AGENT * SPANS_PER_RUN
        assert store.count("tool_calls") == 2 * RUNS_PER_AGENT * 2
