"""Replaying the AutoGen AgentChat fixture agent (``agent:weather_agent``, an
``AssistantAgent``) as it is: tools answered at AutoGen's tool layer, with the model live
(the scripted fake) and offline (``--llm recorded``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    eval_doc,
    fake_model,  # noqa: F401 - a fixture
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
