"""A store holding a fork and a replay with tools run for real, built once per test session
through the CLI (the report and UI tests of those modes read it).

The example weather agent on the OpenAI client (``examples/weather_agent/openai_agent.py``)
is recorded against the scripted model on loopback, its runs promoted into suite ``weather``
(checks: the defaults and ``toolResultsMatch``), then evaluated twice with
``changed_data:answer`` (the same agent after its weather data changed: every temperature
2 °C higher, tests/evaluate/agents/changed_data.py):

- ``fork``: ``--llm recorded --llm-until 1 --live-tools`` with the scripted model serving:
  LLM call 1 and its tool calls from the recording, the later calls live (the model and the
  changed tools);
- ``tools``: ``--llm recorded --live-tools`` with no model at all: every decision from the
  recording, every tool run for real; the changed temperature is tool-result drift, and the
  next LLM call is where the run stops being comparable (``diverged_at``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from made_once import copy_made_once
from offline_store import record_example_agent, scripted_server
from sql_pipeline import tracereplay

from tracereplay.store.open import open_store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "weather_agent"
AGENTS = ROOT / "tests" / "evaluate" / "agents"
SUITE = "weather"


@dataclass(frozen=True)
class ModesStore:
    db: Path
    fork: str  # eval run id of the fork
    tools: str  # eval run id of the live-tools replay


_built: dict[str, ModesStore] = {}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRACEREPLAY"))}
    env["PYTHONPATH"] = os.pathsep.join([str(EXAMPLE), str(AGENTS)])
    env.update(extra)
    return env


def _eval_run(db: Path, label: str) -> str:
    with open_store(db) as store:  # drains the spool: the replay runs are in the file
        [(eval_run_id,)] = store.con.execute(
            "SELECT eval_run_id FROM eval_runs WHERE label = ?", [label]
        ).fetchall()
    return eval_run_id


def build(directory: Path) -> ModesStore:
    db = directory / "modes.duckdb"
    checks = directory / "checks.yaml"
    checks.write_text("- kind: toolResultsMatch\n  mode: json\n")
    server, url = scripted_server().start()
    try:
        record_example_agent(db, url)
        tracereplay(db, "suite", "create", SUITE, "--checks", str(checks))
        tracereplay(db, "promote", "--where", "agent_name = 'weather_openai'", "--suite", SUITE)
        replay = ("eval", SUITE, "--agent", "changed_data:answer", "--llm", "recorded")
        tracereplay(db, *replay, "--llm-until", "1", "--live-tools", "--label", "fork",
                    env=_env(OPENAI_BASE_URL=url, OPENAI_API_KEY="demo"))  # fmt: skip
    finally:
        server.shutdown()
    tracereplay(db, *replay, "--live-tools", "--label", "tools",
                env=_env(OPENAI_BASE_URL="http://127.0.0.1:9/v1"))  # fmt: skip
    return ModesStore(db, _eval_run(db, "fork"), _eval_run(db, "tools"))


def modes_store(tmp_path_factory) -> ModesStore:  # noqa: ANN001 - pytest's TempPathFactory
    """The session's store (built once for every worker: ``made_once``; copied once per
    process)."""
    if "store" not in _built:
        db = copy_made_once(tmp_path_factory, "modes", build) / "modes.duckdb"
        _built["store"] = ModesStore(db, _eval_run(db, "fork"), _eval_run(db, "tools"))
    return _built["store"]
