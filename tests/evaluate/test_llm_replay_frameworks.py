"""Offline replay of the framework fixtures' agents: ``--llm recorded`` answers every model call
of pydantic-ai, the OpenAI Agents SDK (Responses API; recorded by OpenInference, OpenLLMetry or
Logfire), LangGraph (langchain-openai), strands 1.x and 0.2 (``OpenAIModel``, streamed), Google
ADK (LiteLLM) and CrewAI (its native OpenAI provider: an agent's kickoff, a streaming crew, a crew
of two) from the captured recordings. No scripted
model runs: ``OPENAI_BASE_URL`` names a port where nothing listens, so any request that reached
the network would fail. The verdicts are the recorded ones, with no prompt drift."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_replay import recorded_copy, replay, verdicts

pytestmark = pytest.mark.slow

NOWHERE = "http://127.0.0.1:9/v1"

CASES = [
    ("pydantic_ai", "native", "weather_agent", ["multi_round", "tool_error", "parallel", "provider_error", "sub_agent"]),
    ("openai_agents", "openinference", "weather_agent", ["multi_round", "tool_error", "parallel", "streaming", "provider_error"]),
    ("openai_agents", "openllmetry", "weather_agent", ["multi_round", "tool_error", "parallel", "streaming", "provider_error"]),
    ("openai_agents", "openinference", "triage", ["handoff"]),
    ("openai_agents", "openinference", "weather_agent_with_forecaster", ["sub_agent"]),
    ("langgraph", "openinference", "weather_agent", ["multi_round", "tool_error", "parallel", "streaming", "provider_error"]),
    ("langgraph", "openllmetry", "weather_agent", ["multi_round", "tool_error", "parallel", "streaming", "provider_error"]),
    ("langgraph", "openinference", "handoff_graph", ["handoff"]),
    ("langgraph", "openinference", "delegating_agent", ["sub_agent"]),
    # LangChain 1.x create_agent + OpenLLMetry, agent called as a tool: keeps that row right
    ("langgraph", "openllmetry", "delegating_agent", ["sub_agent"]),
    ("openai_agents_logfire", "logfire", "weather_agent", ["multi_round", "tool_error", "parallel", "provider_error"]),
    ("strands", "native", "weather_agent", ["multi_round", "tool_error", "parallel", "provider_error"]),
    ("strands_0_2", "native", "weather_agent", ["multi_round", "tool_error", "parallel", "provider_error"]),
    ("google_adk", "adk_native", "weather_agent", ["multi_round", "tool_error", "parallel", "provider_error"]),
    ("crewai", "openinference", "weather_agent", ["agent_kickoff"]),
    ("crewai", "openinference", "streaming_crew", ["streaming"]),
    ("crewai", "openinference", "crew_of_two", ["crew_of_two"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("framework", "instrumentation", "attr", "shapes"),
    CASES,
    ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES],
)
def test_framework_agent_replays_offline_with_the_recorded_verdicts(
    tmp_path: Path, framework: str, instrumentation: str, attr: str, shapes: list[str]
) -> None:
    db = tmp_path / "store.duckdb"
    recorded, expected = recorded_copy(db, framework, instrumentation, shapes)
    assert recorded.cases == len(shapes)

    doc, marks = replay(db, tmp_path, framework, attr, NOWHERE, "--llm", "recorded")
    assert marks == [], "a tool ran for real during replay"
    assert verdicts(doc) == expected, doc["_output"]
    for case in doc["cases"]:
        llm = case["repetitions"][0]["replay"]["llm"]
        assert llm["errors"] == [], (case["query"], llm["errors"])
        assert llm["drift"] == [], (case["query"], llm["drift"])
        assert llm["unused"] == [], (case["query"], llm["unused"])
        assert llm["answered"] >= 1
    assert doc["eval_run"]["options"]["llm"] == "recorded"
