"""Replaying the LangGraph fixture graphs (``agent:weather_agent``, ``agent:delegating_agent``,
``agent:handoff_graph``: ``langchain.agents.create_agent`` graphs) as they are, through the CLI
from the framework venv.

The agent module has no tracereplay import; its tools are the harness weather functions as
LangChain tools, which write ``$WEATHER_TOOL_MARKS`` when they really run, and its tool errors
are handled by a ``ToolErrorMiddleware`` (``"Error: <message>"`` for a ``ValueError``).
"""

from __future__ import annotations

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

FRAMEWORK = "langgraph"
SHAPES = ["multi_round", "tool_error", "parallel", "streaming", "provider_error"]


@pytest.fixture
def model() -> Iterator[Any]:
    """The scripted model on loopback (``.url``; ``.model.requests``: what it was asked)."""
    server, url = fake_openai.start(weather.SCRIPT)
    server.url = url
    try:
        yield server
    finally:
        server.shutdown()


def messages(server: Any, role: str) -> list[str]:
    """The text of every ``role`` message the model received (Chat Completions)."""
    out = []
    for request in server.model.requests:
        for message in request["body"].get("messages") or ():
            if message.get("role") == role:
                out.append(fake_openai._text_of(message.get("content")))
    return out


@pytest.mark.parametrize(
    "instrumentation",
    [
        "openinference",
        "openllmetry",
    ],
)
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
    # answered values became the ToolMessages; the recorded ValueError reached the agent's
    # ToolErrorMiddleware as a real tool exception does
    tool_messages = messages(model, "tool")
    assert "Paris: 18°C, cloudy" in tool_messages and "Oslo: 6°C, rain" in tool_messages
    assert "Error: unknown city: Atlantis" in tool_messages
    assert by_query[weather.QUESTIONS["tool_error"]]["response"] == (
        "I could not find a city called Atlantis."
    )


def test_agent_as_tool_is_answered_itself_and_its_graph_does_not_run(
    tmp_path: Path, model: Any
) -> None:
    db = tmp_path / "store.duckdb"
    _, expected = recorded_copy(db, FRAMEWORK, "openinference", ["sub_agent"])

    doc, marks = replay(db, tmp_path, FRAMEWORK, "delegating_agent", model.url)
    assert marks == []
    assert verdicts(doc) == expected == {weather.QUESTIONS["sub_agent"]: "PASSED"}, doc["_output"]
    assert_replay_runs_marked(db, doc)
    (case,) = doc["cases"]
    report = case["repetitions"][0]["replay"]
    assert report["answered"] == 1 and report["unanswered"] == [] and report["unused"] == []
    assert weather.SUB_AGENT_QUESTION not in messages(model, "user"), "the forecaster graph ran"
    assert "Snow is likely in Zurich tomorrow, -2°C." in messages(model, "tool")


def test_handoff_graph_replays_with_the_recorded_verdict(tmp_path: Path, model: Any) -> None:
    db = tmp_path / "store.duckdb"
    _, expected = recorded_copy(db, FRAMEWORK, "openinference", ["handoff"])

    doc, marks = replay(db, tmp_path, FRAMEWORK, "handoff_graph", model.url)
    assert marks == []
    assert verdicts(doc) == expected == {weather.QUESTIONS["handoff"]: "PASSED"}, doc["_output"]
    assert_replay_runs_marked(db, doc)
    # the transfer tool still routed the graph: the forecaster answered from its recording
    assert "Zurich tomorrow: snow, -2°C" in messages(model, "tool")


INLINE_CHECK = """
import asyncio, threading
from langchain_core.runnables import RunnableLambda
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from openinference.instrumentation.langchain import LangChainInstrumentor
from tracereplay.replay.frameworks.instrumentors import instrument

class Threads(SpanProcessor):
    seen = set()
    def on_start(self, span, parent_context=None):
        self.seen.add(threading.get_ident())

provider = TracerProvider()
provider.add_span_processor(Threads())
instrumentor = LangChainInstrumentor()
instrument(instrumentor, tracer_provider=provider)
chain = RunnableLambda(lambda x: x + 1) | RunnableLambda(lambda x: x * 2)
assert asyncio.run(chain.ainvoke(1)) == 4
instrumentor.uninstrument()
print(len(Threads.seen), threading.get_ident() in Threads.seen)
"""


def test_openinference_tracer_runs_inline_under_ainvoke(tmp_path: Path) -> None:
    """The replay's OpenInference tracer makes its spans on the agent's own thread: an async
    chain does not hand each callback event to the thread pool."""
    python = framework_bin(FRAMEWORK, "python")
    result = subprocess.run(
        [str(python), "-c", INLINE_CHECK],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "True"]
