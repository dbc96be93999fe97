"""Replaying the CrewAI fixture agents (``agent:crew``, ``agent:weather_agent``) as they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from framework_replay import (
    FRAMEWORKS,
    HARNESS,
    fake_model,  # noqa: F401 - a fixture
    replays_as_recorded,
    run_in_venv,
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


def _in_venv(tmp_path: Path, script: str) -> str:
    """``script`` in the CrewAI venv, the harness and the fixture agent importable."""
    paths = (HARNESS, FRAMEWORKS / "crewai")
    return run_in_venv("crewai", tmp_path, script, paths=paths, timeout=300)


SETUP = """
import contextlib, json, os
import capture, fake_openai
server, url = fake_openai.start(capture.script())
os.environ.update(OPENAI_BASE_URL=url, OPENAI_API_KEY="test", CREWAI_DISABLE_TELEMETRY="true",
                  CREWAI_TRACING_ENABLED="false")
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tracereplay.convert import convert_trace
from tracereplay.replay.capture import to_spans

def provider():
    exporter = InMemorySpanExporter()
    p = TracerProvider()
    p.add_span_processor(SimpleSpanProcessor(exporter))
    return p, exporter

def ask(agent, shape):
    question = capture.shape_question(shape)
    try:
        if shape == "agent_kickoff":
            agent.weather_agent.copy().kickoff(question)
        elif shape == "crew_of_two":
            agent.crew_of_two.copy().kickoff(inputs={"query": question})
        elif shape == "streaming":
            for _ in agent.streaming_crew.copy().kickoff(inputs={"query": question}):
                pass
        else:
            agent.crew.copy().kickoff(inputs={"query": question})
    except Exception:
        pass  # provider_error: the kickoff raises, its spans have ended
"""

SAME_RUNS = (
    SETUP
    + """
from openinference.instrumentation.crewai import CrewAIInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor
import re
import agent
from tracereplay.replay.frameworks.crewai import _instrumented

SHAPES = ["multi_round", "tool_error", "parallel", "provider_error", "agent_kickoff",
          "crew_of_two", "streaming"]

def summary(run):
    \"\"\"The run as the two passes can compare it (the fake model numbers its calls on: each
    pass's ids are numbered in order of appearance).\"\"\"
    ids = {}
    text = re.sub(r"call_[0-9]+", lambda m: ids.setdefault(m[0], f"call#{len(ids)}"),
                  json.dumps(_summary(run)))
    return json.loads(text)

def _summary(run):
    r = run.result
    # the parallel calls of a round run on threads, started in either order
    # which of a round's same-named calls gets which id follows the order their threads
    # started the tools (the converter pairs them by name, in order): the ids as a set
    calls = sorted((c.round, c.tool_name, json.dumps(c.arguments), c.result or "",
                    c.error or "") for c in r.tool_calls)
    ids = sorted(c.tool_call_id or "" for c in r.tool_calls)
    llm = [(c.round, c.model, c.provider, c.input_tokens, c.output_tokens, c.finish_reason,
            json.dumps(c.input_messages, sort_keys=True),
            json.dumps(c.output_messages, sort_keys=True)) for c in run.llm_calls]
    return [run.agent_name, run.parent_run_id is not None, r.status, run.query, r.response,
            run.error or "", r.total_llm_calls, r.total_rounds, run.input_tokens,
            run.output_tokens, run.models, calls, llm, ids]

def traced(tracing):
    p, exporter = provider()
    out = {}
    with tracing(p):
        for shape in SHAPES:
            exporter.clear()
            ask(agent, shape)
            out[shape] = sorted(summary(r) for r in convert_trace(to_spans(exporter.get_finished_spans())))
    return out

@contextlib.contextmanager
def openinference(p):
    CrewAIInstrumentor().instrument(tracer_provider=p)
    OpenAIInstrumentor().instrument(tracer_provider=p)
    try:
        yield
    finally:
        CrewAIInstrumentor().uninstrument()
        OpenAIInstrumentor().uninstrument()

print(json.dumps([traced(openinference), traced(_instrumented)], default=str))
server.shutdown()
"""
)


def test_the_replays_spans_convert_to_the_runs_openinference_records(tmp_path: Path) -> None:
    """The adapter's own GenAI spans (``crewai_spans``) and OpenInference's CrewAI and OpenAI
    spans of the same kickoffs convert to the same runs: agent, sub-run (a crew's second
    agent), status, question, answer, error, LLM calls (messages, usage, dated model, finish
    reason) and every tool call (id, arguments, result, error, round), for a crew, a
    streaming crew, a crew of two and an agent's own kickoff."""
    openinference, ours = json.loads(_in_venv(tmp_path, SAME_RUNS).splitlines()[-1])
    assert set(ours) == set(openinference) and all(ours.values()), ours
    assert [r[1] for r in ours["crew_of_two"]] == [False, True]  # the second agent: a sub-run
    # the call the provider failed: OpenInference's span of it has no model, ours the request's
    (failed,) = ours["provider_error"]
    assert failed[12][1][1] == "gpt-4o-mini"
    assert openinference["provider_error"][0][12][1][1] == ""
    failed[12][1][1] = ""
    assert ours == openinference


ONE_RECORDING = (
    SETUP
    + """
from openinference.instrumentation.crewai import CrewAIInstrumentor
users, users_spans = provider()
CrewAIInstrumentor().instrument(tracer_provider=users)  # as the agent's code does
import agent
from tracereplay.replay.frameworks.crewai import _instrumented
replays, replay_spans = provider()
with _instrumented(replays):
    ask(agent, "multi_round")
print(len(users_spans.get_finished_spans()), CrewAIInstrumentor().is_instrumented_by_opentelemetry,
      *sorted({s.name.split()[0] for s in replay_spans.get_finished_spans()}))
server.shutdown()
"""
)


def test_the_agents_own_crewai_instrumentor_does_not_record_the_replay_twice(
    tmp_path: Path,
) -> None:
    """OpenInference's CrewAI instrumentor switched on by the agent's code is off while the
    replay records its own spans (on the replay's provider)."""
    stdout = _in_venv(tmp_path, ONE_RECORDING)
    assert stdout.split() == [
        "0",
        "False",
        "chat",
        "execute_tool",
        "invoke_agent",
        "invoke_workflow",
    ]


NO_INSTRUMENTATION = (
    """
import sys
sys.modules["openinference"] = None  # no instrumentation can be imported where the agent runs
"""
    + SETUP
    + """
import agent
from tracereplay.replay.frameworks.crewai import _instrumented
p, exporter = provider()
with _instrumented(p):
    ask(agent, "multi_round")
(run,) = convert_trace(to_spans(exporter.get_finished_spans()))
print(run.agent_name, run.result.total_llm_calls, run.input_tokens,
      *(c.tool_name for c in run.result.tool_calls))
server.shutdown()
"""
)


def test_a_crew_replays_with_its_spans_when_no_instrumentation_is_installed(
    tmp_path: Path,
) -> None:
    """A crew recorded through an instrumentation its venv does not have (CrewAI's own tracing
    export, OpenLLMetry's): the replay still has its agent, LLM and tool spans."""
    stdout = _in_venv(tmp_path, NO_INSTRUMENTATION)
    assert stdout.split() == ["weather_agent", "3", "112", "get_weather", "get_forecast"]
