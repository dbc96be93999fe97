"""A case's history reaches each framework the way it takes earlier messages (issue 54):
pydantic-ai's ``message_history``, the OpenAI Agents SDK's input items, a LangGraph graph's
``messages``. Each fixture agent is run by its adapter in its pinned venv against the scripted
model, which must receive the conversation before the question, in order."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest
from framework_replay import FRAMEWORKS, fake_openai, framework_bin

pytestmark = pytest.mark.slow  # runs each framework in its venv

HISTORY = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {"role": "assistant", "content": "Rainy, 12 degrees in Paris."},
]
QUESTION = "Should I take an umbrella then?"
RUN = textwrap.dedent(
    """
    import asyncio, json, sys
    import agent
    from tracereplay.replay.frameworks import framework_agent

    adapter = framework_agent(agent.weather_agent, "agent:weather_agent")
    assert adapter is not None and adapter.takes_history
    history, question = json.loads(sys.argv[1]), sys.argv[2]
    print(asyncio.run(adapter.arun(question, history=history)))
    """
)


@pytest.mark.parametrize("framework", ["pydantic_ai", "openai_agents", "langgraph"])
def test_the_framework_gets_the_conversation_before_the_question(framework: str) -> None:
    python = framework_bin(framework, "python")
    server, url = fake_openai.start({"umbrella": [{"text": "Yes, take an umbrella."}]})
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
        env.update(
            OPENAI_BASE_URL=url, OPENAI_API_KEY="test", PYTHONPATH=str(FRAMEWORKS / framework)
        )
        done = subprocess.run(
            [str(python), "-c", RUN, json.dumps(HISTORY), QUESTION],
            capture_output=True, text=True, timeout=120, env=env, cwd=FRAMEWORKS / framework,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().endswith("Yes, take an umbrella."), done.stdout
        [request] = server.model.requests
    finally:
        server.shutdown()
    sent = json.dumps(request, ensure_ascii=False)
    said = [sent.find(m["content"]) for m in HISTORY] + [sent.find(QUESTION)]
    assert -1 not in said and said == sorted(said), sent[:2000]
