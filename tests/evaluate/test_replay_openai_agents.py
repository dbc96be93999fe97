"""Replaying the OpenAI Agents SDK fixture agents (``agent:weather_agent``, ``agent:triage``,
``agent:weather_agent_with_forecaster``) as they are, through the CLI from the framework venv.

The agent module has no tracereplay import; its tools are ``function_tool``s of the harness
weather functions, which write ``$WEATHER_TOOL_MARKS`` when they really run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from framework_replay import (
    assert_replay_runs_marked,
    eval_doc,
    fake_openai,
    record_suite,
    replay,
    replays_as_recorded,
    verdicts,
    weather,
)

pytestmark = pytest.mark.slow  # runs the agent in its framework venv


FRAMEWORK = "openai_agents"
SHAPES = ["multi_round", "tool_error", "parallel", "streaming", "provider_error"]
#: what the SDK's default failure_error_function tells the model when a tool raised
TOOL_FAILED = "An error occurred while running the tool. Please try again."


@pytest.fixture
def model() -> Iterator[Any]:
    """The scripted model on loopback (``.url``; ``.model.requests``: what it was asked)."""
    server, url = fake_openai.start(weather.SCRIPT)
    server.url = url
    try:
        yield server
    finally:
        server.shutdown()


def tool_outputs(server: Any) -> list[str]:
    """Every function_call_output the model received (Responses API input items)."""
    out = []
    for request in server.model.requests:
        items = request["body"].get("input")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                out.append(
                    item.get("output")
                    if isinstance(item.get("output"), str)
                    else json.dumps(item.get("output"))
                )
    return out


def asked(server: Any, text: str) -> bool:
    """Whether a conversation whose user message is ``text`` reached the model."""
    for request in server.model.requests:
        items = request["body"].get("input")
        for item in items if isinstance(items, list) else ():
            if (
                isinstance(item, dict)
                and item.get("role") == "user"
                and text in str(item.get("content"))
            ):
                return True
    return False


@pytest.mark.parametrize("instrumentation", ["openinference", "openllmetry"])
def test_weather_agent_replays_with_the_recorded_verdicts(
    tmp_path: Path, model: Any, instrumentation: str
) -> None:
    _, doc = replays_as_recorded(tmp_path, FRAMEWORK, instrumentation, SHAPES, model.url)
    by_query = {c["query"]: c["repetitions"][0] for c in doc["cases"]}
    answered = {q: r["replay"]["answered"] for q, r in by_query.items()}
    assert answered == {
        weather.QUESTIONS["multi_round"]: 2,
        weather.QUESTIONS["tool_error"]: 1,
        weather.QUESTIONS["parallel"]: 2,
        weather.QUESTIONS["streaming"]: 2,
        weather.QUESTIONS["provider_error"]: 1,
    }
    # answered values went back to the model as the tools' outputs; the recorded failure went
    # through the tool's failure_error_function, as a real exception does
    outputs = tool_outputs(model)
    assert "Paris: 18°C, cloudy" in outputs and "Oslo: 6°C, rain" in outputs
    assert TOOL_FAILED in outputs
    assert by_query[weather.QUESTIONS["tool_error"]]["response"] == (
        "I could not find a city called Atlantis."
    )


def test_agent_as_tool_is_answered_itself_and_its_agent_does_not_run(
    tmp_path: Path, model: Any
) -> None:
    db = tmp_path / "store.duckdb"
    record_suite(db, FRAMEWORK, "openinference", ["sub_agent"])
    expected = verdicts(eval_doc(db, tmp_path / "recorded.json"))

    doc, marks = replay(db, tmp_path, FRAMEWORK, "weather_agent_with_forecaster", model.url)
    assert marks == []
    assert verdicts(doc) == expected == {weather.QUESTIONS["sub_agent"]: "PASSED"}, doc["_output"]
    assert_replay_runs_marked(db, doc)
    (case,) = doc["cases"]
    report = case["repetitions"][0]["replay"]
    assert report["answered"] == 1 and report["unanswered"] == [] and report["unused"] == []
    assert not asked(model, weather.SUB_AGENT_QUESTION), "the forecaster agent ran"
    assert "Snow is likely in Zurich tomorrow, -2°C." in tool_outputs(model)


def test_handoff_target_tools_are_answered(tmp_path: Path, model: Any) -> None:
    db = tmp_path / "store.duckdb"
    record_suite(db, FRAMEWORK, "openinference", ["handoff"])
    expected = verdicts(eval_doc(db, tmp_path / "recorded.json"))

    doc, marks = replay(db, tmp_path, FRAMEWORK, "triage", model.url)
    assert marks == []
    assert verdicts(doc) == expected == {weather.QUESTIONS["handoff"]: "PASSED"}, doc["_output"]
    assert_replay_runs_marked(db, doc)
    assert "Zurich tomorrow: snow, -2°C" in tool_outputs(model)
