"""Replaying the smolagents fixture agents (``agent:weather_agent``, a ``ToolCallingAgent``;
``agent:weather_code_agent``, a ``CodeAgent``; ``agent:weather_agent_with_forecaster``, with a
managed agent) as they are."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from framework_replay import (
    FRAMEWORKS,
    fake_openai,
    recorded_copy,
    replay,
    replays_as_recorded,
    rows,
    verdicts,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv

# provider_error: OpenInference never ends the agent span of a run that raised (README.md)
SHAPES = ["multi_round", "tool_error", "parallel"]
NOWHERE = "http://127.0.0.1:9/v1"  # --llm recorded: nothing listens there


def _capture_module():
    spec = importlib.util.spec_from_file_location(
        "smolagents_capture", FRAMEWORKS / "smolagents" / "capture.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


capture = _capture_module()


@pytest.fixture
def smol_model() -> Iterator[str]:
    """The fake model with the smolagents captures' script (final_answer calls)."""
    server, url = fake_openai.start(capture.script(weather))
    try:
        yield url
    finally:
        server.shutdown()


def test_tool_calling_agent_replays_with_the_recorded_verdicts(
    tmp_path: Path, smol_model: str
) -> None:
    db, doc = replays_as_recorded(tmp_path, "smolagents", "openinference", SHAPES, smol_model)
    by_query = {c["query"]: c for c in doc["cases"]}
    multi = by_query[weather.QUESTIONS["multi_round"]]["repetitions"][0]
    assert multi["replay"]["answered"] == 2 and multi["replay"]["unanswered"] == []
    tool_error = by_query[weather.QUESTIONS["tool_error"]]["repetitions"][0]
    assert tool_error["response"] == "I could not find a city called Atlantis."
    offline, marks = replay(
        db, tmp_path, "smolagents", "weather_agent", NOWHERE, "--llm", "recorded"
    )
    assert marks == []
    assert verdicts(offline) == verdicts(doc), offline["_output"]


@pytest.mark.parametrize(
    ("shape", "attr", "answered"),
    [("code_agent", "weather_code_agent", 2), ("sub_agent", "weather_agent_with_forecaster", 1)],
)
def test_code_agent_and_managed_agent_replay(
    tmp_path: Path, smol_model: str, shape: str, attr: str, answered: int
) -> None:
    db = tmp_path / "store.duckdb"
    _, expected = recorded_copy(db, "smolagents", "openinference", [shape])
    assert list(expected.values()) == ["PASSED"]
    doc, marks = replay(db, tmp_path, "smolagents", attr, smol_model)
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    (case,) = doc["cases"]
    assert case["repetitions"][0]["replay"]["answered"] == answered
    assert rows(db, "SELECT count(*) AS n FROM runs WHERE kind = 'replay'")[0]["n"] >= 1
    # offline: the managed agent's answer reaches the manager as smolagents reports it, so its
    # next request is the recorded one (the recording lists no managed agent among the tools)
    offline, marks = replay(db, tmp_path, "smolagents", attr, NOWHERE, "--llm", "recorded")
    assert marks == []
    assert verdicts(offline) == expected, offline["_output"]
