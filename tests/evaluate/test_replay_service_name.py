"""A replay run carries the service of the run it replays, not OpenTelemetry's
``unknown_service:python``: when the agent does not set tracereplay up itself, the eval does,
named after the suite's source runs (agent processes and ``--in-process`` alike)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from drift_store import SUITE, WEATHER, drift_store
from sql_pipeline import tracereplay

from tracereplay.store.open import open_store

pytestmark = pytest.mark.slow


def _services(db: Path) -> list[tuple[str, str, str]]:
    with open_store(db) as store:
        return store.con.execute(
            "SELECT e.label, r.service_name, s.service_name FROM case_results cr"
            " JOIN eval_runs e USING (eval_run_id)"
            " JOIN runs r ON r.run_id = cr.run_id JOIN runs s ON s.run_id = cr.source_run_id"
            " ORDER BY e.label"
        ).fetchall()


@pytest.mark.slow
def test_replay_runs_carry_the_source_service(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    db = tmp_path / "copy.duckdb"
    shutil.copyfile(drift_store(tmp_path_factory)[0], db)
    path = os.pathsep.join([str(WEATHER), os.environ.get("PYTHONPATH", "")])
    tracereplay(db, "eval", SUITE, "--agent", "eval_agent:answer", "--in-process",
                "--label", "v1-in-process", env={"PYTHONPATH": path})  # fmt: skip
    rows = _services(db)
    assert {label for label, _, _ in rows} == {"v1-in-process", "v2"}
    assert all(replayed == source == "weather-agent-demo" for _, replayed, source in rows), rows
