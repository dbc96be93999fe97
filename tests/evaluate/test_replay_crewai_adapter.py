"""What the CrewAI adapter decides before a replay runs, on the fixture's real crews and agents
(in the crewai venv): which objects it takes, and how a case's query becomes kickoff inputs."""

from __future__ import annotations

import json
import subprocess

import pytest
from framework_replay import FRAMEWORKS, framework_bin

pytestmark = pytest.mark.slow  # imports CrewAI in its framework venv

PROBE = """
import json, agent
from crewai import Agent, Crew, Task
from tracereplay.evaluate.replay.frameworks import framework_agent
from tracereplay.evaluate.replay.frameworks.crewai import CrewInputsError, crew_inputs

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
