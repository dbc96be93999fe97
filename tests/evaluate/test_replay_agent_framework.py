"""Replaying the Microsoft Agent Framework fixture agent (``agent:weather_agent``, an
``agent_framework.Agent``) and workflow (``agent:weather_workflow``) as they are: tools answered
inside Agent Framework's tool invocation, with the model live (the scripted fake) and offline
(``--llm recorded``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    assert_replay_runs_marked,
    eval_doc,
    fake_openai,
    record_suite,
    replay,
    replays_as_recorded,
    verdicts,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv

SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]
NOWHERE = "http://127.0.0.1:9/v1"
WORKFLOW_NOTE = "Forecaster, please give the forecast for Zurich tomorrow."


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


def test_agent_framework_workflow_replays_offline(tmp_path: Path) -> None:
    """The workflow of two agents: one case (the first agent's run, the forecaster its
    handoff), both agents' model calls and the forecaster's tool answered from the recording."""
    db = tmp_path / "store.duckdb"
    assert record_suite(db, "agent_framework", "sensitive", ["workflow"]).cases == 1
    expected = verdicts(eval_doc(db, tmp_path / "recorded.json"))
    doc, marks = replay(
        db, tmp_path, "agent_framework", "weather_workflow", NOWHERE, "--llm", "recorded"
    )
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    (case,) = doc["cases"]
    rep = case["repetitions"][0]
    assert rep["response"] == "Snow is likely in Zurich tomorrow, -2°C.", doc["_output"]
    assert rep["replay"]["answered"] == 1
    llm = rep["replay"]["llm"]
    assert llm["errors"] == [] and llm["drift"] == [] and llm["unused"] == [], llm
    assert_replay_runs_marked(db, doc)


def test_agent_framework_agent_replays_offline(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    shapes = [*SHAPES, "streaming"]
    assert record_suite(db, "agent_framework", "sensitive", shapes).cases == len(shapes)
    expected = verdicts(eval_doc(db, tmp_path / "recorded.json"))
    doc, marks = replay(
        db, tmp_path, "agent_framework", "weather_agent", NOWHERE, "--llm", "recorded"
    )
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    for case in doc["cases"]:
        llm = case["repetitions"][0]["replay"]["llm"]
        assert llm["errors"] == [] and llm["drift"] == [] and llm["unused"] == [], llm
