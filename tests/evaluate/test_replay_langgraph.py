"""Replaying the LangGraph fixture graphs (``agent:weather_agent``, ``agent:delegating_agent``,
``agent:handoff_graph``: ``langchain.agents.create_agent`` graphs) as they are, through the CLI
from the framework venv.

The agent module has no tracereplay import; its tools are the harness weather functions as
LangChain tools, which write ``$WEATHER_TOOL_MARKS`` when they really run, and its tool errors
are handled by a ``ToolErrorMiddleware`` (``"Error: <message>"`` for a ``ValueError``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from framework_replay import (
    FRAMEWORKS,
    HARNESS,
    assert_replay_runs_marked,
    fake_openai,
    recorded_copy,
    replay,
    replays_as_recorded,
    run_in_venv,
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


def _in_venv(tmp_path: Path, script: str, *args: str, timeout: int = 120) -> str:
    return run_in_venv(FRAMEWORK, tmp_path, script, *args, timeout=timeout)


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
    stdout = _in_venv(tmp_path, INLINE_CHECK)
    assert stdout.split() == ["1", "True"]


SAME_RUNS = """
import asyncio, json, os, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import fake_openai, weather
server, url = fake_openai.start(weather.SCRIPT)
os.environ.update(OPENAI_BASE_URL=url, OPENAI_API_KEY="test")
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from openinference.instrumentation.langchain import LangChainInstrumentor
import agent
from tracereplay.convert import convert_trace
from tracereplay.replay.capture import to_spans
from tracereplay.replay.frameworks.langgraph import _replay_tracing

CASES = [("weather_agent", "multi_round"), ("weather_agent", "tool_error"),
         ("weather_agent", "parallel"), ("weather_agent", "provider_error"),
         ("delegating_agent", "sub_agent")]

def summary(run):
    r = run.result
    # the fake model numbers its calls on: an id is there, not the same in both passes; the
    # parallel calls of a round run on threads, started in either order
    calls = sorted((c.round, c.tool_name, bool(c.tool_call_id), json.dumps(c.arguments),
                    c.result or "", c.error or "") for c in r.tool_calls)
    return [run.agent_name, run.parent_run_id is not None, r.status, run.query, r.response,
            (run.error or "")[:60], r.total_llm_calls, r.total_rounds, run.input_tokens,
            run.output_tokens, run.models, calls]

LOOP = asyncio.new_event_loop()  # ChatOpenAI's async client outlives a loop per run

async def ask(graph, question):
    try:
        await graph.ainvoke({"messages": [{"role": "user", "content": question}]})
    except Exception:
        pass

def traced(tracing):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    out = {}
    with tracing(provider):
        for attr, shape in CASES:
            exporter.clear()
            LOOP.run_until_complete(ask(getattr(agent, attr), weather.QUESTIONS[shape]))
            runs = convert_trace(to_spans(exporter.get_finished_spans()))
            out[shape] = sorted(summary(r) for r in runs)
    return out

import contextlib
@contextlib.contextmanager
def openinference(provider):
    LangChainInstrumentor().instrument(tracer_provider=provider)
    try:
        yield
    finally:
        LangChainInstrumentor().uninstrument()

print(json.dumps([traced(openinference), traced(_replay_tracing)], default=str))
server.shutdown()
"""


def test_the_replays_spans_convert_to_the_runs_openinference_records(tmp_path: Path) -> None:
    """The adapter's own GenAI spans (``langchain_spans``) and OpenInference's LangChain spans
    of the same graph runs convert to the same runs: agent, sub-agent (an agent-as-tool's
    graph), status, question, answer, error, LLM calls, usage and every tool call (id,
    arguments, result, error, round)."""
    stdout = _in_venv(tmp_path, SAME_RUNS, str(HARNESS), str(FRAMEWORKS / FRAMEWORK), timeout=300)
    openinference, ours = json.loads(stdout.splitlines()[-1])
    assert set(ours) == {"multi_round", "tool_error", "parallel", "provider_error", "sub_agent"}
    assert all(ours.values()), ours
    assert sorted(r[1] for r in ours["sub_agent"]) == [False, True]  # the forecaster: a sub-run
    assert ours == openinference


ONE_RECORDING = """
import asyncio, sys
from langchain_core.runnables import RunnableLambda
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from openinference.instrumentation.langchain import LangChainInstrumentor
from tracereplay.replay.frameworks.langgraph import _replay_tracing

def provider():
    exporter = InMemorySpanExporter()
    p = TracerProvider()
    p.add_span_processor(SimpleSpanProcessor(exporter))
    return p, exporter

users, users_spans = provider()
replays, replay_spans = provider()
LangChainInstrumentor().instrument(tracer_provider=users)  # as the agent's code does
chain = RunnableLambda(lambda x: x + 1).with_config(run_name="graph")
with _replay_tracing(replays):
    assert asyncio.run(chain.ainvoke(1)) == 2
print(len(users_spans.get_finished_spans()),
      [s.name for s in replay_spans.get_finished_spans()],
      LangChainInstrumentor().is_instrumented_by_opentelemetry)
"""


def test_the_agents_own_langchain_instrumentor_does_not_record_the_replay_twice(
    tmp_path: Path,
) -> None:
    """OpenInference's instrumentor switched on by the agent's code is off while the replay's
    handler records (one span per run, on the replay's provider)."""
    stdout = _in_venv(tmp_path, ONE_RECORDING)
    assert stdout.split() == ["0", "['invoke_workflow", "graph']", "False"]


NO_INSTRUMENTATION = """
import asyncio, os, sys
for name in ("openinference", "opentelemetry.instrumentation.langchain"):
    sys.modules[name] = None  # neither LangChain instrumentation can be imported
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import fake_openai, weather
server, url = fake_openai.start(weather.SCRIPT)
os.environ.update(OPENAI_BASE_URL=url, OPENAI_API_KEY="test")
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
import agent
from tracereplay.convert import convert_trace
from tracereplay.replay.capture import to_spans
from tracereplay.replay.frameworks.langgraph import _replay_tracing

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
question = weather.QUESTIONS["multi_round"]
with _replay_tracing(provider):
    asyncio.run(agent.weather_agent.ainvoke({"messages": [{"role": "user", "content": question}]}))
(run,) = convert_trace(to_spans(exporter.get_finished_spans()))
print(run.agent_name, run.result.total_llm_calls, *(c.tool_name for c in run.result.tool_calls))
server.shutdown()
"""


def test_a_graph_replays_with_its_spans_when_no_langchain_instrumentation_is_installed(
    tmp_path: Path,
) -> None:
    """A graph recorded through an instrumentation the agent's venv does not have (LangSmith's
    OpenTelemetry export): the replay still has its agent, LLM and tool spans."""
    stdout = _in_venv(
        tmp_path, NO_INSTRUMENTATION, str(HARNESS), str(FRAMEWORKS / FRAMEWORK), timeout=300
    )
    assert stdout.split() == ["weather_agent", "3", "get_weather", "get_forecast"]
