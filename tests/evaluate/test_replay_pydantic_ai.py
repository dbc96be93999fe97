"""Replaying the pydantic-ai fixture agent (``agent:weather_agent``) as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    assert_replay_runs_marked,
    eval_doc,
    fake_model,  # noqa: F401 - a fixture
    record_suite,
    replay,
    verdicts,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv


SHAPES = ["multi_round", "tool_error", "parallel", "provider_error", "sub_agent"]


def test_pydantic_ai_agent_replays_with_the_recorded_verdicts(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    db = tmp_path / "store.duckdb"
    recorded = record_suite(db, "pydantic_ai", "native", SHAPES)
    assert recorded.cases == len(SHAPES)
    expected = verdicts(eval_doc(db, tmp_path / "recorded.json"))
    assert expected[weather.QUESTIONS["provider_error"]] == "FAILED"

    doc, marks = replay(db, tmp_path, "pydantic_ai", "weather_agent", fake_model)
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    assert_replay_runs_marked(db, doc)
    by_query = {c["query"]: c for c in doc["cases"]}
    # the failed tool's recorded text went back to the model as pydantic-ai reports it
    tool_error = by_query[weather.QUESTIONS["tool_error"]]["repetitions"][0]
    assert tool_error["response"] == "I could not find a city called Atlantis."
    assert tool_error["replay"]["answered"] == 1
    # the forecaster tool is answered from the recording: its sub-agent does not run
    sub = by_query[weather.QUESTIONS["sub_agent"]]["repetitions"][0]
    assert sub["replay"]["answered"] == 1 and sub["replay"]["unanswered"] == []
