"""Replaying the CrewAI fixture agents (``agent:crew``, ``agent:weather_agent``) as they are."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    fake_model,  # noqa: F401 - a fixture
    replays_as_recorded,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv

SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]


def test_crewai_crew_replays_with_the_recorded_verdicts(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    _, doc = replays_as_recorded(tmp_path, "crewai", "openinference", SHAPES, fake_model, "crew")
    by_query = {c["query"]: c for c in doc["cases"]}
    multi = by_query[weather.QUESTIONS["multi_round"]]["repetitions"][0]
    assert multi["replay"]["answered"] == 2 and multi["replay"]["unanswered"] == []
    tool_error = by_query[weather.QUESTIONS["tool_error"]]["repetitions"][0]
    assert tool_error["response"] == "I could not find a city called Atlantis."
