"""examples/weather_agent: the demo script, run as ``make demo`` runs it, lands five runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tracereplay.cli.app import app
from tracereplay.store.open import open_store

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "weather_agent" / "demo.py"


def test_demo_records_every_kind_of_run(tmp_path: Path) -> None:
    db = tmp_path / "demo.duckdb"
    id_file = tmp_path / "run-id"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACEREPLAY_"))}
    out = subprocess.run(
        [sys.executable, str(DEMO), "--db", str(db), "--run-id-file", str(id_file)],
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == 5
    run_id = id_file.read_text().strip()

    with open_store(db) as store:
        rows = store.query_dicts(
            "SELECT status, total_llm_calls, tool_calls_count, error FROM runs ORDER BY started_at",
            [],
        )
        multi = store.get_run(run_id)
        [atlantis_id] = store.query_dicts(
            "SELECT run_id FROM runs WHERE query LIKE '%Atlantis%'", []
        )
        atlantis = store.get_run(atlantis_id["run_id"])
    assert [(r["status"], r["total_llm_calls"], r["tool_calls_count"]) for r in rows] == [
        ("success", 2, 1),
        ("success", 2, 1),
        ("failed", 2, 1),
        ("max_rounds_exceeded", 3, 3),
        ("success", 4, 6),
    ]
    assert "503 Service Unavailable" in rows[2]["error"]
    assert multi.result.total_rounds == 4
    assert [c.tool_name for c in multi.result.tool_calls] == (
        ["get_weather"] * 2 + ["get_forecast"] + ["convert_temperature"] * 3
    )
    assert multi.context[0].name == "travel_note"
    assert multi.parameters == {"model": "scripted-weather-1", "max_rounds": 4}
    assert "69.8 °F" in multi.result.response
    [failed_tool] = atlantis.result.failed_tool_calls
    assert "no weather station" in (failed_tool.error or "")

    shown = CliRunner().invoke(app, ["--db", str(db), "show", run_id])
    assert shown.exit_code == 0, shown.output
    assert "convert_temperature" in shown.stdout
