"""Replaying the Google ADK fixture agent (``agent:weather_agent``) as it is."""

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


SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]


def test_google_adk_agent_replays_with_the_recorded_verdicts(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    db = tmp_path / "store.duckdb"
    recorded = record_suite(db, "google_adk", "adk_native", SHAPES)
    assert recorded.cases == len(SHAPES)
    expected = verdicts(eval_doc(db, tmp_path / "recorded.json"))
    assert expected[weather.QUESTIONS["provider_error"]] == "FAILED"

    doc, marks = replay(db, tmp_path, "google_adk", "weather_agent", fake_model)
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    assert_replay_runs_marked(db, doc)
    by_query = {c["query"]: c for c in doc["cases"]}
    multi = by_query[weather.QUESTIONS["multi_round"]]["repetitions"][0]
    assert multi["replay"]["answered"] == 2 and multi["replay"]["unanswered"] == []
    tool_error = by_query[weather.QUESTIONS["tool_error"]]["repetitions"][0]
    assert tool_error["response"] == "I could not find a city called Atlantis."
