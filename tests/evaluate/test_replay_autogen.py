"""Replaying the AutoGen AgentChat fixture agents as they are: ``agent:weather_agent`` (an
``AssistantAgent``), ``agent:weather_agent_with_forecaster`` (an ``AgentTool``) and
``agent:weather_team`` (a ``RoundRobinGroupChat`` of two); tools answered at AutoGen's tool
layer, the model live (the scripted fake) or offline (``--llm recorded``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    assert_replay_runs_marked,
    fake_model,  # noqa: F401 - a fixture
    fake_openai,
    replay,
    replays_as_recorded,
    replays_offline,
    verdicts,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv

SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]
TEAM_NOTE = "Forecaster, please give the forecast for Zurich tomorrow."


def test_autogen_agent_replays_with_the_recorded_verdicts(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    _, doc = replays_as_recorded(tmp_path, "autogen", "openllmetry", SHAPES, fake_model)
    by_query = {c["query"]: c for c in doc["cases"]}
    multi = by_query[weather.QUESTIONS["multi_round"]]["repetitions"][0]
    assert multi["replay"]["answered"] == 2 and multi["replay"]["unanswered"] == []
    tool_error = by_query[weather.QUESTIONS["tool_error"]]["repetitions"][0]
    assert tool_error["response"] == "I could not find a city called Atlantis."


def test_autogen_agent_replays_offline(tmp_path: Path) -> None:
    replays_offline(tmp_path, "autogen", "openllmetry", [*SHAPES, "streaming"], "weather_agent")


def test_autogen_agent_tool_replays_offline(tmp_path: Path) -> None:
    """An agent used as a tool (``AgentTool``): the tool is answered with the recorded text
    (which AgentTool would format from a ``TaskResult``), the forecaster does not run."""
    _, doc = replays_offline(
        tmp_path, "autogen", "openllmetry", ["sub_agent"], "weather_agent_with_forecaster"
    )
    rep = doc["cases"][0]["repetitions"][0]
    assert rep["response"] == weather.SCRIPT[weather.QUESTIONS["sub_agent"]][1]["text"]
    (call,) = rep["tool_calls"]
    assert call["result"] == "forecaster: Snow is likely in Zurich tomorrow, -2°C."


def test_autogen_team_replays_as_recorded(tmp_path: Path) -> None:
    """The team of two (``agent:weather_team``): one case (the team's run: its first agent,
    the forecaster a handoff), the forecaster's tool answered from the recording; offline, then
    live against the capture's script."""
    db, offline = replays_offline(tmp_path, "autogen", "openllmetry", ["team"], "weather_team")
    script = dict(weather.SCRIPT)
    script[weather.QUESTIONS["handoff"]] = [{"text": TEAM_NOTE}]
    script[TEAM_NOTE] = weather.SCRIPT[weather.QUESTIONS["handoff"]][1:]
    server, url = fake_openai.start(script)
    try:
        live, marks = replay(db, tmp_path, "autogen", "weather_team", url)
    finally:
        server.shutdown()
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(live) == verdicts(offline), live["_output"]
    assert_replay_runs_marked(db, live)
    for doc in (live, offline):
        rep = doc["cases"][0]["repetitions"][0]
        assert rep["response"] == "Snow is likely in Zurich tomorrow, -2°C.", doc["_output"]
        assert rep["replay"]["answered"] == 1 and rep["replay"]["unanswered"] == []


def test_autogen_swarm_handoff_replays_offline(tmp_path: Path) -> None:
    """A ``Swarm`` handoff (``agent:handoff_swarm``): the handoff tool is answered from the
    recording, with its own message where no instrumentation recorded one, so the forecaster
    gets the conversation it got (no prompt drift)."""
    _, doc = replays_offline(tmp_path, "autogen", "openllmetry", ["handoff"], "handoff_swarm")
    rep = doc["cases"][0]["repetitions"][0]
    assert rep["response"] == "Snow is likely in Zurich tomorrow, -2°C.", doc["_output"]
    assert rep["replay"]["answered"] == 2
