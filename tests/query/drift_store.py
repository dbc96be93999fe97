"""A store where a replay broke off half-way, built once per test session through the CLI.

The weather demo's live runs (``examples/weather_agent/demo.py``) promoted into suite
``weather``, then replayed with ``eval_agent:answer_v2`` under strict tool matching: in the case
"Compare the weather in Paris and Tokyo...", the replay calls ``get_weather`` twice (answered
from the recording), then ``get_forecast(days=5)``, which no recording answers (recorded:
``days=3``), and the agent stops there; the three recorded ``convert_temperature`` calls are
never made. The replay run is stored like any run (``kind = 'replay'``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from made_once import copy_made_once
from sql_pipeline import tracereplay, tracereplay_here

from tracereplay.store.open import open_store

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples" / "weather_agent"
SUITE = "weather"
#: the case whose replay broke off, by the start of its query
BROKEN_QUERY = "Compare the weather in Paris and Tokyo"

_built: dict[str, tuple[Path, str]] = {}


def build(directory: Path) -> tuple[Path, str]:
    """Fill ``directory/drift.duckdb``; returns it and the replay eval run's id."""
    db = directory / "drift.duckdb"
    env = {k: v for k, v in os.environ.items() if k != "TRACEREPLAY_DB"}
    subprocess.run(
        [sys.executable, str(WEATHER / "demo.py"), "--db", str(db)],
        check=True, capture_output=True, env=env, timeout=120,
    )  # fmt: skip
    good = "status = 'success' AND kind = 'live' AND agent_name = 'weather_agent'"
    tracereplay_here(db, "promote", "--where", good, "--suite", SUITE)
    path = os.pathsep.join([str(WEATHER), os.environ.get("PYTHONPATH", "")])
    tracereplay(db, "eval", SUITE, "--agent", "eval_agent:answer_v2", "--label", "v2",
                env={"PYTHONPATH": path})  # fmt: skip
    with open_store(db) as store:  # drains the spool: the replay runs are in the file
        [(eval_run_id,)] = store.con.execute("SELECT eval_run_id FROM eval_runs").fetchall()
    return db, eval_run_id


def drift_store(tmp_path_factory) -> tuple[Path, str]:  # noqa: ANN001 - pytest's TempPathFactory
    """The session's store (built once for every worker: ``made_once``; copied once per
    process) and its eval run id."""
    if "db" not in _built:
        db = copy_made_once(tmp_path_factory, "drift", build) / "drift.duckdb"
        with open_store(db) as store:
            [(eval_run_id,)] = store.con.execute("SELECT eval_run_id FROM eval_runs").fetchall()
        _built["db"] = (db, eval_run_id)
    return _built["db"]
