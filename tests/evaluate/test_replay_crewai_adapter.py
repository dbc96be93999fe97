"""What the CrewAI adapter decides before a replay runs, on the fixture's real crews and agents
(in the crewai venv): which objects it takes, how a case's query becomes kickoff inputs, and
that a tool is answered inside the tool span of an instrumentation the agent's module had
already installed (the patch goes under its wrapper), and that a tool class overriding ``run``
itself is answered too, each call asked once (its ``super().run`` is not asked again)."""

from __future__ import annotations

import json
import subprocess

import pytest
from framework_replay import FRAMEWORKS, framework_bin

pytestmark = pytest.mark.slow  # imports CrewAI in its framework venv

PROBE = """
import json
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from openinference.instrumentation.crewai import CrewAIInstrumentor

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
CrewAIInstrumentor().instrument(tracer_provider=provider)  # the agent module's own, first
import agent
from crewai import Agent, Crew, Task
from tracereplay.replay.frameworks import framework_agent
from tracereplay.replay.frameworks.crewai import CrewInputsError, crew_inputs

out = {}
out["accepted"] = [
    type(framework_agent(getattr(agent, name), name)).__name__
    for name in ("crew", "weather_agent", "crew_of_two", "streaming_crew")
]
out["one"] = crew_inputs(agent.crew_of_two, "Will it snow?")
out["json"] = crew_inputs(agent.crew, '{"query": "a", "city": "Rome"}')
writer = Agent(role="writer on {topic}", goal="g", backstory="b", llm=agent.make_llm())
two = Crew(agents=[writer], tasks=[Task(description="{topic} in {year}", expected_output="x", agent=writer)])
try:
    crew_inputs(two, "plain text")
except CrewInputsError as err:
    out["several"] = str(err)
fixed = Crew(agents=[writer], tasks=[Task(description="Write.", expected_output="x", agent=writer)])
writer.role = "writer"
out["none"] = crew_inputs(fixed, "q")

from crewai.tools import BaseTool
ran = []
class OwnRun(BaseTool):  # a tool class that overrides run itself, and calls BaseTool's
    name: str = "own_run"
    description: str = "A tool with its own run."
    def _run(self, city: str) -> str:
        ran.append(city)
        return "really ran"
    def run(self, *args, **kwargs):
        return super().run(*args, **kwargs)

from tracereplay.replay.frameworks import crewai as adapter
asked = []
with adapter._patch.answering(adapter._answer, lambda name, args: asked.append(args) or "answered"):
    out["answered"] = agent.get_weather.run(city="Paris")
    out["own"] = OwnRun().run(city="Oslo")
out["own_live"] = OwnRun().run(city="Bergen")
out["ran"] = ran
out["live"] = agent.get_weather.run(city="Rome")
out["asked"] = asked
out["spans"] = [
    [s.attributes.get("output.value"), s.attributes.get("tracereplay.tool.replayed")]
    for s in exporter.get_finished_spans()
]
print(json.dumps(out))
"""


def test_crews_and_agents_are_taken_and_the_query_fills_the_one_placeholder() -> None:
    python = framework_bin("crewai", "python")
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "test",
           "CREWAI_DISABLE_TELEMETRY": "true", "PATH": "/usr/bin:/bin"}  # fmt: skip
    done = subprocess.run(
        [str(python), "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(FRAMEWORKS / "crewai"),
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["accepted"] == ["CrewAIAgent"] * 4
    assert out["one"] == {"query": "Will it snow?"}
    assert out["json"] == {"query": "a", "city": "Rome"}
    assert out["several"] == (
        "the crew's tasks take 2 inputs ({topic}, {year}): give the case's query as a JSON "
        "object of them"
    )
    assert out["none"] is None
    assert (out["answered"], out["live"]) == ("answered", "Rome: 24°C, sunny")
    assert out["asked"] == [{"city": "Paris"}, {"city": "Oslo"}]  # each call asked once
    assert (out["own"], out["own_live"], out["ran"]) == ("answered", "really ran", ["Bergen"])
    assert out["spans"] == [
        ["answered", True],
        ["really ran", None],
        ["Rome: 24°C, sunny", None],
    ]
