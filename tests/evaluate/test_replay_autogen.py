"""Replaying the AutoGen AgentChat fixture agent (``agent:weather_agent``, an
``AssistantAgent``) as it is: tools answered at AutoGen's tool layer, with the model live
(the scripted fake) and offline (``--llm recorded``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    assert_replay_runs_marked,
    eval_doc,
    fake_model,  # noqa: F401 - a fixture
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
    db = tmp_path / "store.duckdb"
    shapes = ["multi_round", "tool_error", "parallel", "streaming", "provider_error"]
    assert record_suite(db, "autogen", "openllmetry", shapes).cases == len(shapes)
    expected = verdicts(eval_doc(db, tmp_path / "recorded.json"))
    doc, marks = replay(db, tmp_path, "autogen", "weather_agent", NOWHERE, "--llm", "recorded")
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    for case in doc["cases"]:
        llm = case["repetitions"][0]["replay"]["llm"]
        assert llm["errors"] == [] and llm["drift"] == [] and llm["unused"] == [], llm


TEAM_NOTE = "Forecaster, please give the forecast for Zurich tomorrow."


def test_autogen_team_replays_as_recorded(tmp_path: Path) -> None:
    """The team of two (``agent:weather_team``): one case (the team's run: its first agent,
    the forecaster a handoff), the forecaster's tool answered from the recording; live against
    the capture's script, then offline."""
    db = tmp_path / "store.duckdb"
    assert record_suite(db, "autogen", "openllmetry", ["team"]).cases == 1
    expected = verdicts(eval_doc(db, tmp_path / "recorded.json"))
    script = dict(weather.SCRIPT)
    script[weather.QUESTIONS["handoff"]] = [{"text": TEAM_NOTE}]
    script[TEAM_NOTE] = weather.SCRIPT[weather.QUESTIONS["handoff"]][1:]
    server, url = fake_openai.start(script)
    try:
        live, marks = replay(db, tmp_path, "autogen", "weather_team", url)
    finally:
        server.shutdown()
    offline, offline_marks = replay(
        db, tmp_path, "autogen", "weather_team", NOWHERE, "--llm", "recorded"
    )
    assert marks == [] and offline_marks == [], "a tool ran for real during replay"
    for doc in (live, offline):
        assert verdicts(doc) == expected, doc["_output"]
        (case,) = doc["cases"]
        rep = case["repetitions"][0]
        assert rep["response"] == "Snow is likely in Zurich tomorrow, -2°C.", doc["_output"]
        assert rep["replay"]["answered"] == 1 and rep["replay"]["unanswered"] == []
        assert_replay_runs_marked(db, doc)
    llm = offline["cases"][0]["repetitions"][0]["replay"]["llm"]
    assert llm["errors"] == [] and llm["drift"] == [] and llm["unused"] == [], llm


def test_autogen_agent_tool_replays_offline(tmp_path: Path) -> None:
    """An agent used as a tool (``AgentTool``): the tool is answered with the recorded text
    (which AgentTool would format from a ``TaskResult``), the forecaster does not run."""
    db = tmp_path / "store.duckdb"
    assert record_suite(db, "autogen", "openllmetry", ["sub_agent"]).cases == 1
    expected = verdicts(eval_doc(db, tmp_path / "recorded.json"))
    doc, marks = replay(
        db, tmp_path, "autogen", "weather_agent_with_forecaster", NOWHERE, "--llm", "recorded"
    )
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    rep = doc["cases"][0]["repetitions"][0]
    assert rep["response"] == weather.SCRIPT[weather.QUESTIONS["sub_agent"]][1]["text"]
    (call,) = rep["tool_calls"]
    assert call["result"] == "forecaster: Snow is likely in Zurich tomorrow, -2°C."
