"""Replaying the pydantic-ai fixture agent (``agent:weather_agent``) as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    fake_model,  # noqa: F401 - a fixture
    replays_as_recorded,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv


SHAPES = ["multi_round", "tool_error", "parallel", "provider_error", "sub_agent"]


def test_pydantic_ai_agent_replays_with_the_recorded_verdicts(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    _, doc = replays_as_recorded(tmp_path, "pydantic_ai", "native", SHAPES, fake_model)
    by_query = {c["query"]: c for c in doc["cases"]}
    # the failed tool's recorded text went back to the model as pydantic-ai reports it
    tool_error = by_query[weather.QUESTIONS["tool_error"]]["repetitions"][0]
    assert tool_error["response"] == "I could not find a city called Atlantis."
    assert tool_error["replay"]["answered"] == 1
    # the forecaster tool is answered from the recording: its sub-agent does not run
    sub = by_query[weather.QUESTIONS["sub_agent"]]["repetitions"][0]
    assert sub["replay"]["answered"] == 1 and sub["replay"]["unanswered"] == []
