"""The embedded default: an SDK agent writes runs to the spool, the next ``tracereplay`` command
drains them and starts a detached background round that judges them (the command itself does
not wait for it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider

import tracereplay
from tracereplay import sdk
from tracereplay.monitor.embedded import CHILD_ENV
from tracereplay.store import Store


def tr(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (CHILD_ENV, "TRACEREPLAY_DB")}
    return subprocess.run(
        [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def judged(db: Path) -> set[str]:
    with Store.open(db) as store:
        return {r["run_id"] for r in store.query_dicts("SELECT run_id FROM monitor_results")}


def test_the_command_that_drains_the_spool_starts_a_background_round(tmp_path: Path) -> None:
    db = tmp_path / "embedded.duckdb"
    checks = tmp_path / "m.yaml"
    checks.write_text("checks:\n  - kind: status\n")
    assert tr(db, "monitor", "create", "ok", "--checks", str(checks)).returncode == 0
    tracereplay.configure(db=db, tracer_provider=TracerProvider())
    ids = set()
    for query in ("first", "second"):
        with tracereplay.agent_run("weather", query) as run:
            run.set_response("fine")
            ids.add(run.run_id)
    assert tracereplay.flush()
    sdk.shutdown()
    listed = tr(db, "runs")  # drains the spool: the runs are stored, the round starts
    assert listed.returncode == 0, listed.stderr
    deadline = time.monotonic() + 90
    while judged(db) != ids and time.monotonic() < deadline:
        time.sleep(0.3)
    log = db.with_name(db.name + ".monitor.log")
    assert judged(db) == ids, log.read_text() if log.exists() else "no log"
    # nothing new: the next command starts no round (and judges nothing twice)
    assert tr(db, "runs").returncode == 0
    with Store.open(db) as store:
        assert store.count("monitor_results") == 2
