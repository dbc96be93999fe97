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


def test_cases_at_once_each_run_in_a_process_of_their_own(tmp_path: Path) -> None:
    """A strands ``Agent`` keeps its conversation on itself, so two cases on it at once would
    share one: with ``--concurrency 4`` (and a model slow enough that the cases overlap) each
    agent process takes one case at a time, the eval starts more of them, and every case
    gives its recorded verdict."""
    db = tmp_path / "store.duckdb"
    _, expected = recorded_copy(db, "strands", "native", SHAPES)
    server, url = fake_openai.start(weather.SCRIPT)
    server.model.delay_s = 0.3
    try:
        doc, marks = replay(db, tmp_path, "strands", "weather_agent", url, "--concurrency", "4")
    finally:
        server.shutdown()
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]


def test_in_process_cases_take_the_agent_one_at_a_time(tmp_path: Path) -> None:
    """``--in-process`` has no processes to spread the cases over: with ``--concurrency 4``
    (and a model slow enough that the cases would overlap) the cases of an agent that keeps
    its conversation on itself take it one after the other, and every case gives its
    recorded verdict."""
    db = tmp_path / "store.duckdb"
    _, expected = recorded_copy(db, "strands", "native", SHAPES)
    server, url = fake_openai.start(weather.SCRIPT)
    server.model.delay_s = 0.3
    try:
        doc, marks = replay(
            db, tmp_path, "strands", "weather_agent", url, "--concurrency", "4", "--in-process"
        )
    finally:
        server.shutdown()
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
