"""Replaying the OpenAI Agents SDK fixture agents (``agent:weather_agent``, ``agent:triage``,
``agent:weather_agent_with_forecaster``) as they are, through the CLI from the framework venv.

The agent module has no tracereplay import; its tools are ``function_tool``s of the harness
weather functions, which write ``$WEATHER_TOOL_MARKS`` when they really run.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from framework_replay import (
    REPO,
    assert_replay_runs_marked,
    fake_openai,
    framework_bin,
    recorded_copy,
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
    _, expected = recorded_copy(db, FRAMEWORK, "openinference", ["sub_agent"])

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
    _, expected = recorded_copy(db, FRAMEWORK, "openinference", ["handoff"])

    doc, marks = replay(db, tmp_path, FRAMEWORK, "triage", model.url)
    assert marks == []
    assert verdicts(doc) == expected == {weather.QUESTIONS["handoff"]: "PASSED"}, doc["_output"]
    assert_replay_runs_marked(db, doc)
    assert "Zurich tomorrow: snow, -2°C" in tool_outputs(model)


#: run in the framework venv: what the adapter relies on in the SDK, and its tracing around an
#: instrumentor the agent's code switched on
LIBRARY_PROBE = """
from agents import set_trace_processors
from agents.tracing import function_span, get_trace_provider, trace as sdk_trace
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor as OpenLLMetry

from tracereplay.replay.frameworks.openai_agents import (
    _registered_processors,
    _replay_tracing,
    _restore_tracing,
    _saved_tracing,
)

# the SDK's own state, saved and put back exactly (processors, the manual disabled flag)
sdk_provider = get_trace_provider()
assert _registered_processors(sdk_provider) is not None, "processors no longer readable"
assert hasattr(sdk_provider, "_manual_disabled"), "the disabled flag moved"
assert hasattr(sdk_provider, "_refresh_disabled_flag"), "the disabled refresh moved"
before = _saved_tracing(sdk_provider)
set_trace_processors([])
sdk_provider.set_disabled(True)
_restore_tracing(sdk_provider, before)
assert _saved_tracing(sdk_provider) == before, (before, _saved_tracing(sdk_provider))
assert sdk_provider._disabled is False


def provider():
    exporter = InMemorySpanExporter()
    p = TracerProvider()
    p.add_span_processor(SimpleSpanProcessor(exporter))
    return p, exporter


for name, instrumentor in [
    ("openinference", OpenAIAgentsInstrumentor()),
    ("openllmetry", OpenLLMetry(replace_existing_processors=True)),
]:
    users, users_spans = provider()
    replays, replay_spans = provider()
    set_trace_processors([])
    instrumentor.instrument(tracer_provider=users)  # as the agent's code does
    registered = _registered_processors(sdk_provider)
    with _replay_tracing(replays):
        with sdk_trace("probe"), function_span("get_weather"):
            trace.get_current_span().set_attribute("probe.current", True)
    # the replay's spans only on the replay's provider, the tool's span current while it ran
    assert users_spans.get_finished_spans() == (), (name, "recorded twice")
    marked = [s.name for s in replay_spans.get_finished_spans() if s.attributes.get("probe.current")]
    assert marked == ["execute_tool get_weather"], (name, marked)
    # the agent's own processors back after the replay
    assert _registered_processors(sdk_provider) == registered, name
    instrumentor.uninstrument()
print("ok")
"""


def test_the_sdk_and_the_replays_tracing_behave_as_the_adapter_relies_on(tmp_path: Path) -> None:
    """Inside an SDK tool span, the current OpenTelemetry span is the one the adapter's processor
    started for it (where ``mark_replayed`` marks an answered tool); an instrumentor the agent's
    code switched on records nothing of the replay and is registered again after it; and the
    SDK's registered trace processors, which the adapter saves and puts back around a replay,
    are where the adapter reads them."""
    python = framework_bin(FRAMEWORK, "python")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
    result = subprocess.run(
        [str(python), "-c", LIBRARY_PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**env, "OPENAI_API_KEY": "test", "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stdout + result.stderr
