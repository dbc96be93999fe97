"""Replaying the strands fixture agent (``agent:weather_agent``) as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import (
    fake_model,  # noqa: F401 - a fixture
    fake_openai,
    recorded_copy,
    replay,
    replays_as_recorded,
    verdicts,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv


SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]


def test_strands_agent_replays_with_the_recorded_verdicts(
    tmp_path: Path,
    fake_model: str,  # noqa: F811
) -> None:
    _, doc = replays_as_recorded(tmp_path, "strands", "native", SHAPES, fake_model)
    by_query = {c["query"]: c for c in doc["cases"]}
    multi = by_query[weather.QUESTIONS["multi_round"]]["repetitions"][0]
    assert multi["replay"]["answered"] == 2 and multi["replay"]["unanswered"] == []
    tool_error = by_query[weather.QUESTIONS["tool_error"]]["repetitions"][0]
    assert tool_error["response"] == "I could not find a city called Atlantis."


@pytest.mark.parametrize("mode", [[], ["--in-process"]], ids=["agent-processes", "in-process"])
def test_cases_at_once_give_the_recorded_verdicts(tmp_path: Path, mode: list[str]) -> None:
    """A strands ``Agent`` keeps its conversation on itself, so two cases on it at once would
    share one: with ``--concurrency 4`` (and a model slow enough that the cases overlap) each
    agent process takes one case at a time and the eval starts more of them; ``--in-process``
    runs every framework attempt on one event loop, where the adapter's lock lets one case at
    a time use the object. Either way every case gives its recorded verdict and no tool runs."""
    db = tmp_path / "store.duckdb"
    _, expected = recorded_copy(db, "strands", "native", SHAPES)
    server, url = fake_openai.start(weather.SCRIPT)
    server.model.delay_s = 0.3
    try:
        doc, marks = replay(
            db, tmp_path, "strands", "weather_agent", url, "--concurrency", "4", *mode
        )
    finally:
        server.shutdown()
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
