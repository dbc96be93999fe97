"""The store examples/demo_offline.sh starts from: the weather agent on the OpenAI client
(``examples/weather_agent/openai_agent.py``), recorded against the scripted model on loopback,
its three runs promoted into suite ``weather-offline``. Made once per session (``made_once``)
and copied for each module: the offline replay CLI tests and the docs' worked replay-mode
examples recorded it each."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from made_once import copy_made_once
from typer.testing import CliRunner

from tracereplay.cli.app import app

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "weather_agent"


def scripted_server():  # noqa: ANN201 - the example's module
    """``examples/weather_agent/scripted_server.py``, the scripted model the demos serve."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        import scripted_server
    finally:
        sys.path.remove(str(EXAMPLE))
    return scripted_server


def record_example_agent(db: Path, url: str) -> None:
    """Run the example's weather agent on the OpenAI client (its three questions) against the
    model at ``url``, captured into ``db``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRACEREPLAY"))}
    made = subprocess.run(
        [sys.executable, str(EXAMPLE / "openai_agent.py"), "--db", str(db)],
        capture_output=True, text=True, timeout=300,
        env={**env, "PYTHONPATH": str(EXAMPLE), "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "demo"},
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr


def _make(folder: Path) -> None:
    db = folder / "tracereplay.duckdb"
    server, url = scripted_server().start()
    try:
        record_example_agent(db, url)
    finally:
        server.shutdown()
    where = "agent_name = 'weather_openai' AND kind = 'live'"
    promoted = CliRunner().invoke(
        app, ["--db", str(db), "promote", "--where", where, "--suite", "weather-offline"]
    )
    assert promoted.exit_code == 0, promoted.output


def offline_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the caller's own; returns its store's path."""
    return copy_made_once(tmp_path_factory, "offline", _make) / "tracereplay.duckdb"
