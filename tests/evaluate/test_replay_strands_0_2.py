"""Replaying the strands 0.2 fixture agent (``agent:weather_agent``) as it is: strands 0.2 has
no hooks, so its tools are answered at the agent's tool handler (parallel ones on its thread
pool), and a recorded failure reaches the model as strands' own error result."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    fake_model,  # noqa: F401 - a fixture
    replay_tool_calls,
    replays_as_recorded,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv


SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]


def test_strands_0_2_agent_replays_with_the_recorded_verdicts(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    db, doc = replays_as_recorded(tmp_path, "strands_0_2", "native", SHAPES, fake_model)
    by_query = {c["query"]: c["repetitions"][0] for c in doc["cases"]}
    answered = {q: r["replay"]["answered"] for q, r in by_query.items()}
    assert answered == {
        weather.QUESTIONS["multi_round"]: 2,
        weather.QUESTIONS["tool_error"]: 1,
        weather.QUESTIONS["parallel"]: 2,
        weather.QUESTIONS["provider_error"]: 1,
    }
    for query, rep in by_query.items():
        assert rep["replay"]["unanswered"] == [], (query, rep["replay"])
    tool_error = by_query[weather.QUESTIONS["tool_error"]]
    assert tool_error["response"] == "I could not find a city called Atlantis."
    # the replay runs' own tool calls, the recorded failure a tool error again
    calls = replay_tool_calls(db, doc)
    assert calls[weather.QUESTIONS["parallel"]] == [("get_weather", None), ("get_weather", None)]
    assert calls[weather.QUESTIONS["tool_error"]] == [("get_weather", "unknown city: Atlantis")]
