"""A multi-turn case replayed end to end on real frameworks (issue 54): a three-turn
conversation of the fixture weather agent is recorded at test time in the framework's pinned
venv against the scripted model on loopback (each turn calls the weather tool, then answers),
traced by the framework's own instrumentation into a store (``tracereplay.configure(db=...)``),
promoted with ``promote --session``, then replayed with ``eval --agent agent:weather_agent
--llm recorded`` in that venv with no model at all (``--history recorded`` and ``replayed``):
every turn PASSED with its recorded answer, each turn's LLM calls answered from its own
recorded run, no tool run for real.

The conversation is recorded three ways (``WAYS``):

- ``agent_run``: the application's ``tracereplay.agent_run(..., session_id=...)`` around the
  framework's own run, the earlier turns given as the adapter gives a case's history;
- ``own``: the session named the framework's way (pydantic-ai's ``conversation_id``,
  OpenInference's ``using_session``), the history as the adapter gives it;
- ``native``: as an application keeps a conversation with the framework, its own messages of
  the earlier turns given back whole (pydantic-ai's ``all_messages()``, the Agents SDK's
  ``to_input_list()``, the graph's ``messages``): the recorded prompts of turns 2.. hold the
  earlier turns' tool calls and results, which a case's history (questions and answers) does
  not, so their calls drift by exactly those and the case still passes (``--llm-match
  order``); docs/evaluating.md, *Cases with history*.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from framework_replay import (
    FRAMEWORKS,
    NOWHERE,
    REPO,
    fake_openai,
    framework_bin,
    main_cli,
    replay,
    rows,
    weather,
)
from weather_conversation import SCRIPT, SESSION, TURNS

pytestmark = pytest.mark.slow  # runs each framework in its venv

#: how each framework is traced when the conversation is recorded (its own instrumentation,
#: on the tracer provider ``tracereplay.configure`` set up)
INSTRUMENT = {
    "pydantic_ai": """
        from pydantic_ai import Agent
        from pydantic_ai.models.instrumented import InstrumentationSettings
        Agent.instrument_all(InstrumentationSettings(include_content=True))
    """,
    "openai_agents": """
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        OpenAIAgentsInstrumentor().instrument(tracer_provider=setup.tracer_provider)
    """,
    "langgraph": """
        from openinference.instrumentation.langchain import LangChainInstrumentor
        LangChainInstrumentor().instrument(tracer_provider=setup.tracer_provider)
    """,
}
RECORD = """
import asyncio, json, sys
import tracereplay

setup = tracereplay.configure(service_name="weather-chat", db=sys.argv[1])
{instrument}
import agent
from tracereplay.replay.frameworks import framework_agent

adapter = framework_agent(agent.weather_agent, "agent:weather_agent")
assert adapter is not None and adapter.takes_history


{turn}


async def converse(questions):  # one event loop: the model's client keeps its connections
    history = []
    for question in questions:
        answer = await turn(question, list(history))
        history += [{{"role": "user", "content": question}},
                    {{"role": "assistant", "content": answer}}]
        print(answer)


asyncio.run(converse(json.loads(sys.argv[2])))
tracereplay.flush()
"""


#: one turn, the session named by the application's ``agent_run`` around the framework's run
AGENT_RUN = """
async def turn(question, history):
    with tracereplay.agent_run("weather_agent", question, session_id=SESSION) as run:
        answer = await adapter.arun(question, history=history)
        run.set_response(answer)
    return answer
"""
#: one turn, the session named the framework's way: pydantic-ai's ``conversation_id`` (its
#: ``gen_ai.conversation.id``), OpenInference's ``using_session`` (``session.id``); the history
#: as the adapter gives it
OWN_SESSION = {
    "pydantic_ai": """
        from tracereplay.replay.frameworks.pydantic_ai import _model_messages

        async def turn(question, history):
            result = await agent.weather_agent.run(
                question, message_history=_model_messages(history) or None,
                conversation_id=SESSION,
            )
            return result.output
    """,
    "openai_agents": """
        from openinference.instrumentation import using_session

        async def turn(question, history):
            with using_session(SESSION):
                return await adapter.arun(question, history=history)
    """,
}
OWN_SESSION["langgraph"] = OWN_SESSION["openai_agents"]
#: one turn as an application keeps a conversation with the framework: its own messages of the
#: earlier turns (the tool calls and results among them) given back whole, the session named
#: the framework's way (pydantic-ai: ``conversation_id`` on the first turn, inherited from the
#: message history after it)
NATIVE = {
    "pydantic_ai": """
        kept = []

        async def turn(question, history):
            result = await agent.weather_agent.run(
                question, message_history=kept or None,
                conversation_id=None if kept else SESSION,
            )
            kept[:] = result.all_messages()
            return result.output
    """,
    "openai_agents": """
        from agents import Runner
        from openinference.instrumentation import using_session

        kept = []

        async def turn(question, history):
            with using_session(SESSION):
                result = await Runner.run(
                    agent.weather_agent, [*kept, {"role": "user", "content": question}]
                )
            kept[:] = result.to_input_list()
            return result.final_output
    """,
    "langgraph": """
        from openinference.instrumentation import using_session

        kept = []

        async def turn(question, history):
            with using_session(SESSION):
                state = await agent.weather_agent.ainvoke(
                    {"messages": [*kept, {"role": "user", "content": question}]}
                )
            kept[:] = state["messages"]
            return state["messages"][-1].text
    """,
}


def _env(framework: str, **extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "TRACEREPLAY"))
    }
    # the framework venv has tracereplay installed from another checkout: this one's first
    env.update(PYTHONPATH=os.pathsep.join([str(REPO), str(FRAMEWORKS / framework)]), **extra)
    return env


def record_conversation(db: Path, tmp: Path, framework: str, how: str) -> list[str]:
    """The conversation recorded into ``db`` by the framework's agent, each turn's session
    named ``how`` (``agent_run`` or ``own``: the framework's way); its answers."""
    marks = tmp / "recorded-marks.txt"
    ways = {
        "agent_run": AGENT_RUN,
        "own": OWN_SESSION.get(framework),
        "native": NATIVE.get(framework),
    }
    turn = textwrap.dedent(ways[how])
    code = RECORD.format(instrument=textwrap.dedent(INSTRUMENT[framework]), turn=turn)
    code = code.replace("import tracereplay\n", f"import tracereplay\nSESSION = {SESSION!r}\n")
    server, url = fake_openai.start(SCRIPT)
    try:
        done = subprocess.run(
            [str(framework_bin(framework, "python")), "-c", code, str(db),
             json.dumps([q for q, _, _ in TURNS])],
            capture_output=True, text=True, timeout=180, cwd=FRAMEWORKS / framework,
            env=_env(framework, OPENAI_BASE_URL=url, OPENAI_API_KEY="test",
                     WEATHER_TOOL_MARKS=str(marks)),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        # two model calls a turn: the tool call, then the answer
        assert len(server.model.requests) == 2 * len(TURNS)
    finally:
        server.shutdown()
    # the tools really ran while recording
    assert marks.read_text().split() == [f"get_weather({c})" for _, c, _ in TURNS]
    return done.stdout.strip().splitlines()


WAYS = [(fw, how) for fw in ("pydantic_ai", "openai_agents", "langgraph")
        for how in ("agent_run", "own", "native")]  # fmt: skip


@pytest.fixture(scope="module", params=WAYS, ids=[f"{fw}-{how}" for fw, how in WAYS])
def promoted(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """``(framework, how, store)``: the conversation recorded ``how`` and promoted as suite
    ``weather``."""
    framework, how = request.param
    tmp = tmp_path_factory.mktemp(f"{framework}-{how}")
    db = tmp / "store.duckdb"
    answers = record_conversation(db, tmp, framework, how)
    assert answers == [a for _, _, a in TURNS]
    listed = main_cli(db, "runs", "--session", SESSION)
    assert listed.returncode == 0, listed.stderr
    done = main_cli(db, "promote", "--session", SESSION, "--suite", "weather")
    assert done.returncode == 0, done.stderr + listed.stdout
    assert f"{len(TURNS)} turns" in done.stderr, done.stderr
    return framework, how, db


def _turn_rows(db: Path, eval_run_id: str) -> list[dict]:
    return rows(
        db,
        "SELECT turn, status, response, run_id, source_run_id FROM case_results"
        " WHERE eval_run_id = ? ORDER BY turn NULLS FIRST",
        [eval_run_id],
    )


@pytest.mark.parametrize("history", ["recorded", "replayed"])
def test_a_recorded_conversation_replays_turn_by_turn_offline(
    promoted: tuple[str, str, Path], tmp_path: Path, history: str
) -> None:
    framework, how, db = promoted
    doc, marks = replay(
        db, tmp_path, framework, "weather_agent", NOWHERE, "--llm", "recorded",
        "--history", history,
    )  # fmt: skip
    assert marks == [], "a tool ran for real during replay"
    [case] = doc["cases"]
    assert case["status"] == "PASSED", doc["_output"]
    eval_run_id = doc["eval_run"]["eval_run_id"]
    assert doc["eval_run"]["options"].get("history", "recorded") == history

    whole, *turns = _turn_rows(db, eval_run_id)
    assert whole["turn"] is None and whole["status"] == "PASSED"
    assert [t["turn"] for t in turns] == list(range(1, len(TURNS) + 1))
    assert all(t["status"] == "PASSED" for t in turns), turns
    assert [t["response"] for t in turns] == [a for _, _, a in TURNS]
    # each turn answered from its own recorded run, in session order
    session = rows(
        db,
        "SELECT run_id FROM runs WHERE session_id = ? AND kind = 'live'"
        " AND parent_run_id IS NULL ORDER BY started_at",
        [SESSION],
    )
    assert [t["source_run_id"] for t in turns] == [r["run_id"] for r in session]

    for turn in turns:
        # every LLM call of the turn's replay (its run and the runs under it) was answered
        # by the recording: two a turn, none live
        calls = rows(
            db,
            "SELECT round, source FROM llm_calls WHERE trace_id ="
            " (SELECT trace_id FROM runs WHERE run_id = ?)",
            [turn["run_id"]],
        )
        assert len(calls) == 2 and {c["source"] for c in calls} == {"recording"}, (turn, calls)
        [drift] = rows(
            db,
            "SELECT drift FROM case_results WHERE eval_run_id = ? AND turn = ?",
            [eval_run_id, turn["turn"]],
        )
        llm = json.loads(drift["drift"])["llm"]
        assert llm["answered"] == 2, llm
        assert llm["errors"] == [] and llm["unused"] == [], llm
        if how != "native" or turn["turn"] == 1:
            assert llm["drift"] == [], llm  # the history as the recorded turn had it
        else:
            # the application gave the framework its own messages of the earlier turns, their
            # tool calls and results among them; a case's history holds the questions and
            # answers only, so both calls of turns 2.. drift by exactly those (reported, not
            # refused: --llm-match order) and nothing else
            earlier = TURNS[: turn["turn"] - 1]
            missing = [
                line
                for _, city, _ in earlier
                for line in (
                    f'-call: get_weather({{"city":"{city}"}})',
                    f"-result: {city}: {weather.WEATHER[city]}",
                )
            ]
            assert [d["round"] for d in llm["drift"]] == [1, 2], llm
            for d in llm["drift"]:
                assert d["fields"] == ["messages"], d
                changed = [
                    line
                    for line in d["diff"].splitlines()
                    if line.startswith(("+", "-")) and not line.startswith(("---", "+++"))
                ]
                assert changed == missing, d["diff"]
        # the recorded tool call answered it
        tools = rows(
            db,
            "SELECT tool_name FROM tool_calls WHERE run_id IN"
            " (SELECT run_id FROM runs WHERE trace_id ="
            " (SELECT trace_id FROM runs WHERE run_id = ?))",
            [turn["run_id"]],
        )
        assert [t["tool_name"] for t in tools] == ["get_weather"], tools
