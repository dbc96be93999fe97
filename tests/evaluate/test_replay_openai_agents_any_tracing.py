"""An OpenAI Agents SDK ``Agent`` replays right whatever instrumentation traced it and whatever
the venv it is replayed in has installed: recordings made by Logfire and by OpenInference,
replayed from a venv with OpenInference and OpenLLMetry (``openai_agents``) and from one with
Logfire only (``openai_agents_logfire``). The replay runs have the tool calls the agent made
(the replay's own spans), the recorded failure a tool error again."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    assert_replay_runs_marked,
    fake_model,  # noqa: F401 - a fixture
    recorded_copy,
    replay,
    replay_tool_calls,
    replays_as_recorded,
    rows,
    verdicts,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv

SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]


@pytest.mark.parametrize(
    ("venv", "payloads", "instrumentation"),
    [
        pytest.param("openai_agents", "openai_agents_logfire", "logfire", id="logfire-in-oi-venv"),
        pytest.param(
            "openai_agents_logfire", "openai_agents_logfire", "logfire", id="logfire-in-lf-venv"
        ),
        pytest.param("openai_agents_logfire", "openai_agents", "openinference", id="oi-in-lf-venv"),
    ],
)
def test_agent_replays_whatever_traced_it(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
    venv: str,
    payloads: str,
    instrumentation: str,
) -> None:
    db, doc = replays_as_recorded(
        tmp_path, venv, instrumentation, SHAPES, fake_model, payloads=payloads
    )
    by_query = {c["query"]: c["repetitions"][0] for c in doc["cases"]}
    assert {q: r["replay"]["answered"] for q, r in by_query.items()} == {
        weather.QUESTIONS["multi_round"]: 2,
        weather.QUESTIONS["tool_error"]: 1,
        weather.QUESTIONS["parallel"]: 2,
        weather.QUESTIONS["provider_error"]: 1,
    }
    calls = replay_tool_calls(db, doc)
    assert [n for n, _ in calls[weather.QUESTIONS["multi_round"]]] == [
        "get_weather",
        "get_forecast",
    ], calls
    assert [n for n, _ in calls[weather.QUESTIONS["parallel"]]] == ["get_weather"] * 2, calls
    ((name, error),) = calls[weather.QUESTIONS["tool_error"]]
    assert name == "get_weather" and error, calls


def test_handoff_replays_as_recorded_with_no_instrumentation_installed(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    """The triage agent's handoff, recorded by Logfire, replayed in the venv without
    OpenInference or OpenLLMetry: the forecaster's replay run is a sub-run of triage's, as in
    the recording, with its own tool call answered."""
    db = tmp_path / "store.duckdb"
    _, expected = recorded_copy(db, "openai_agents_logfire", "logfire", ["handoff"])
    doc, marks = replay(db, tmp_path, "openai_agents_logfire", "triage", fake_model)
    assert marks == []
    assert verdicts(doc) == expected == {weather.QUESTIONS["handoff"]: "PASSED"}, doc["_output"]
    assert_replay_runs_marked(db, doc)
    runs = rows(
        db,
        "SELECT r.agent_name, p.agent_name AS parent FROM runs r LEFT JOIN runs p "
        "ON p.run_id = r.parent_run_id WHERE r.kind = 'replay' ORDER BY r.started_at",
    )
    assert runs == [
        {"agent_name": "triage", "parent": None},
        {"agent_name": "forecaster", "parent": "triage"},
    ]
