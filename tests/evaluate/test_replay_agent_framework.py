"""Replaying the Microsoft Agent Framework fixture agents as they are: ``agent:weather_agent``
(an ``agent_framework.Agent``), ``agent:weather_agent_with_forecaster`` (an agent as a tool) and
``agent:weather_workflow`` (a workflow of two agents); tools answered inside Agent Framework's
tool invocation, the model live (the scripted fake) or offline (``--llm recorded``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import fake_openai, replays_as_recorded, replays_offline, weather

pytestmark = pytest.mark.slow  # runs the agent in its framework venv

SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]


def test_agent_framework_agent_replays_with_the_recorded_verdicts(tmp_path: Path) -> None:
    server, url = fake_openai.start(weather.SCRIPT)
    try:
        _, doc = replays_as_recorded(tmp_path, "agent_framework", "sensitive", SHAPES, url)
    finally:
        server.shutdown()
    by_query = {c["query"]: c for c in doc["cases"]}
    multi = by_query[weather.QUESTIONS["multi_round"]]["repetitions"][0]
    assert multi["replay"]["answered"] == 2 and multi["replay"]["unanswered"] == []
    tool_error = by_query[weather.QUESTIONS["tool_error"]]["repetitions"][0]
    assert tool_error["response"] == "I could not find a city called Atlantis."


def test_agent_framework_agent_replays_offline(tmp_path: Path) -> None:
    replays_offline(
        tmp_path, "agent_framework", "sensitive", [*SHAPES, "streaming"], "weather_agent"
    )


def test_agent_framework_agent_as_tool_replays_offline(tmp_path: Path) -> None:
    """``forecaster.as_tool()``: the tool is answered from the recording, the forecaster does
    not run."""
    _, doc = replays_offline(
        tmp_path, "agent_framework", "sensitive", ["sub_agent"], "weather_agent_with_forecaster"
    )
    rep = doc["cases"][0]["repetitions"][0]
    assert [c["tool_name"] for c in rep["tool_calls"]] == ["forecaster"]
    assert rep["replay"]["answered"] == 1


def test_agent_framework_workflow_replays_offline(tmp_path: Path) -> None:
    """The workflow of two agents: one case (the first agent's run, the forecaster its
    handoff), both agents' model calls and the forecaster's tool answered from the recording."""
    _, doc = replays_offline(
        tmp_path, "agent_framework", "sensitive", ["workflow"], "weather_workflow"
    )
    rep = doc["cases"][0]["repetitions"][0]
    assert rep["response"] == "Snow is likely in Zurich tomorrow, -2°C.", doc["_output"]
    assert rep["replay"]["answered"] == 1
