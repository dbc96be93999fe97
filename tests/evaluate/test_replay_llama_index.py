"""Replaying the LlamaIndex fixture agents as they are: ``agent:weather_agent`` (a
``FunctionAgent``), ``agent:handoff_workflow`` (an ``AgentWorkflow``), ``agent:react_agent`` (a
``ReActAgent``) and ``agent:weather_agent_with_forecaster`` (an agent called as a tool)."""

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
    verdicts,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv

SHAPES = ["multi_round", "tool_error", "parallel", "provider_error"]


def _capture_module():
    spec = importlib.util.spec_from_file_location(
        "llama_index_capture", FRAMEWORKS / "llama_index" / "capture.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def llama_model() -> Iterator[str]:
    """The fake model with the LlamaIndex captures' script (its handoff tool)."""
    server, url = fake_openai.start(_capture_module().script(weather))
    try:
        yield url
    finally:
        server.shutdown()


def test_function_agent_replays_with_the_recorded_verdicts(
    tmp_path: Path, llama_model: str
) -> None:
    db, doc = replays_as_recorded(tmp_path, "llama_index", "openinference", SHAPES, llama_model)
    by_query = {c["query"]: c for c in doc["cases"]}
    multi = by_query[weather.QUESTIONS["multi_round"]]["repetitions"][0]
    assert multi["replay"]["answered"] == 2 and multi["replay"]["unanswered"] == []
    assert multi["response"] == weather.SCRIPT[weather.QUESTIONS["multi_round"]][-1]["text"]
    tool_error = by_query[weather.QUESTIONS["tool_error"]]["repetitions"][0]
    assert tool_error["response"] == "I could not find a city called Atlantis."
    # offline: the LLM answered from the recording too, no model server needed
    offline, marks = replay(
        db, tmp_path, "llama_index", "weather_agent", "http://127.0.0.1:9/v1", "--llm", "recorded"
    )
    assert marks == []
    assert verdicts(offline) == verdicts(doc), offline["_output"]


@pytest.mark.parametrize(
    ("shape", "attr", "answered"),
    [
        ("handoff", "handoff_workflow", 2),  # an AgentWorkflow: the handoff and get_forecast
        ("react", "react_agent", 2),  # a ReActAgent
        ("sub_agent", "weather_agent_with_forecaster", 1),  # the agent tool answered itself
    ],
)
def test_workflow_react_and_agent_tool_replay(
    tmp_path: Path, llama_model: str, shape: str, attr: str, answered: int
) -> None:
    db = tmp_path / "store.duckdb"
    _, expected = recorded_copy(db, "llama_index", "openinference", [shape])
    assert list(expected.values()) == ["PASSED"]
    doc, marks = replay(db, tmp_path, "llama_index", attr, llama_model)
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    (case,) = doc["cases"]
    assert case["repetitions"][0]["replay"]["answered"] == answered
    if shape == "handoff":  # offline: the forecaster's calls answered from its handoff run
        offline, marks = replay(
            db, tmp_path, "llama_index", attr, "http://127.0.0.1:9/v1", "--llm", "recorded"
        )
        assert marks == []
        assert verdicts(offline) == expected, offline["_output"]
