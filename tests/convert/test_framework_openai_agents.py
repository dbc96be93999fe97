"""The OpenAI Agents SDK (``openai-agents``) weather agent, as its two instrumentations trace it.

Payloads: ``tests/fixtures/frameworks/openai_agents/payloads/<instrumentation>/<shape>/``,
captured by ``tests/fixtures/frameworks/openai_agents/capture.py`` (see the README there for
what each instrumentation records). Every shape is one ``Runner.run`` (or ``run_streamed``)
invocation, so every folder must give exactly one top-level run: the trace-root wrappers
(OpenInference ``Agent workflow`` AGENT + ``Agent workflow`` CHAIN, OpenLLMetry
``Agent Workflow`` workflow) are not runs of their own.
"""

from __future__ import annotations

import pytest
from framework_helpers import (
    QUESTIONS,
    SCRIPT,
    assert_llm_rounds,
    assert_one_line_error,
    assert_plain,
    assert_simple_run,
    assert_tool_calls,
    convert_folder,
    final_text,
    payload_dir,
    sub_runs,
    top_runs,
    weather,
)

from tracereplay.models.run import Run

FRAMEWORK = "openai_agents"
INSTRUMENTATIONS = ("openinference", "openllmetry")
SHAPES = (
    "multi_round",
    "tool_error",
    "parallel",
    "streaming",
    "provider_error",
    "handoff",
    "sub_agent",
)
SUB_AGENT_QUESTION: str = weather.SUB_AGENT_QUESTION


def runs_of(instrumentation: str, shape: str) -> list[Run]:
    folder = payload_dir(FRAMEWORK, instrumentation, shape)
    assert folder.is_dir() and any(folder.glob("*-traces.pb")), f"not captured: {folder}"
    return convert_folder(folder)


def the_top_run(runs: list[Run]) -> Run:
    tops = top_runs(runs)
    assert len(tops) == 1, [(r.agent_name, r.query) for r in tops]
    return tops[0]


def payload_bytes(instrumentation: str, shape: str) -> bytes:
    folder = payload_dir(FRAMEWORK, instrumentation, shape)
    return b"".join(p.read_bytes() for p in sorted(folder.glob("*.pb")))


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_one_top_run_per_invocation(instrumentation: str, shape: str) -> None:
    runs = runs_of(instrumentation, shape)
    top = the_top_run(runs)
    assert top.agent_name == ("triage" if shape == "handoff" else "weather_agent"), top.agent_name
    assert top.query == QUESTIONS[shape], top.query
    # one agent per shape, two for handoff and sub_agent: no run for a workflow wrapper
    assert len(runs) == (2 if shape in ("handoff", "sub_agent") else 1), [
        (r.agent_name, r.parent_run_id) for r in runs
    ]


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
@pytest.mark.parametrize("shape", ["multi_round", "parallel", "streaming"])
def test_simple_shapes(instrumentation: str, shape: str) -> None:
    runs = runs_of(instrumentation, shape)
    top = the_top_run(runs)
    assert_simple_run(top, shape, "weather_agent")
    assert sub_runs(runs, top) == []


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_tool_error(instrumentation: str) -> None:
    key = QUESTIONS["tool_error"]
    top = the_top_run(runs_of(instrumentation, "tool_error"))
    assert top.agent_name == "weather_agent"
    assert top.query == key
    assert top.result.response == final_text(key)
    assert top.result.status == "success", (top.result.status, top.error)
    assert_llm_rounds(top, 2)
    # The SDK's default failure_error_function redacts the exception: the model is told
    # "An error occurred while running the tool. Please try again." and the tool span's ERROR
    # status only says "Error running tool (non-fatal)" + "Tool execution failed. Error
    # details are redacted.". "unknown city: Atlantis" is recorded nowhere (checked below), so
    # the error is asserted on the SDK's own message instead of assert_tool_calls' text.
    assert b"unknown city" not in payload_bytes(instrumentation, "tool_error")
    [call] = top.result.tool_calls
    assert (call.tool_name, call.arguments) == ("get_weather", {"city": "Atlantis"})
    assert call.round == 1, call.round
    assert call.tool_call_id, "no tool_call_id"
    assert_one_line_error(call, "Error running tool (non-fatal)")
    assert "redacted" in (call.error or ""), call.error


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_provider_error(instrumentation: str) -> None:
    key = QUESTIONS["provider_error"]
    top = the_top_run(runs_of(instrumentation, "provider_error"))
    assert top.agent_name == "weather_agent"
    assert top.query == key
    assert top.result.status == "failed", top.result.status
    assert top.error and "scripted provider failure" in top.error, top.error
    assert "\n" not in top.error and "Traceback" not in top.error, top.error
    # Two LLM calls; the failed second one records no model and no usage in either
    # instrumentation (OpenInference: only llm.system + ERROR status; OpenLLMetry: only
    # gen_ai.operation.name/provider + ERROR status), so model/tokens are checked on round 1.
    assert top.result.total_llm_calls == 2, top.result.total_llm_calls
    assert len(top.llm_calls) == 2
    first = min(top.llm_calls, key=lambda c: c.round)
    assert first.model and first.input_tokens and first.output_tokens
    assert top.models
    assert_tool_calls(top, key)


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_handoff(instrumentation: str) -> None:
    key = QUESTIONS["handoff"]
    runs = runs_of(instrumentation, "handoff")
    top = the_top_run(runs)
    assert top.agent_name == "triage", top.agent_name
    assert top.query == key
    assert top.result.status == "success", (top.result.status, top.error)
    # the invocation's answer is the forecaster's (the triage agent span records no output)
    assert top.result.response == final_text(key), top.result.response
    assert_plain(top.result.response)
    # the triage agent's own round: it asks for the handoff
    assert_llm_rounds(top, 1)
    transfers = [c for c in top.result.tool_calls if c.tool_name == "transfer_to_forecaster"]
    assert len(transfers) == 1, [c.tool_name for c in top.result.tool_calls]
    assert transfers[0].arguments == {}, transfers[0].arguments
    assert transfers[0].round == 1, transfers[0].round
    assert transfers[0].tool_call_id, "transfer_to_forecaster: no tool_call_id"
    assert transfers[0].error is None, transfers[0].error
    assert "get_forecast" not in [c.tool_name for c in top.result.tool_calls]

    [sub] = sub_runs(runs, top)
    assert sub.agent_name == "forecaster", sub.agent_name
    assert sub.parent_run_id == top.run_id
    assert sub.query == key, sub.query
    assert sub.result.response == final_text(key), sub.result.response
    assert sub.result.status == "success", (sub.result.status, sub.error)
    assert_llm_rounds(sub, 2)
    # rounds count within the forecaster's own run (its first call is round 1)
    assert_tool_calls(sub, key, skip=("transfer_to_forecaster",), rounds=False)
    assert [c.round for c in sub.result.tool_calls] == [1]


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_sub_agent(instrumentation: str) -> None:
    key = QUESTIONS["sub_agent"]
    runs = runs_of(instrumentation, "sub_agent")
    top = the_top_run(runs)
    assert top.agent_name == "weather_agent", top.agent_name
    assert top.query == key
    assert top.result.response == final_text(key), top.result.response
    assert_plain(top.result.response)
    assert top.result.status == "success", (top.result.status, top.error)
    assert_llm_rounds(top, len(SCRIPT[key]))
    # Agent.as_tool: one "forecaster" tool call, argument named "input", result = its answer
    [call] = top.result.tool_calls
    assert (call.tool_name, call.arguments) == ("forecaster", {"input": SUB_AGENT_QUESTION})
    assert call.result == final_text(SUB_AGENT_QUESTION), call.result
    assert call.error is None, call.error
    assert call.round == 1, call.round
    assert call.tool_call_id, "forecaster: no tool_call_id"

    [sub] = sub_runs(runs, top)
    assert sub.agent_name == "forecaster", sub.agent_name
    assert sub.parent_run_id == top.run_id
    assert sub.query == SUB_AGENT_QUESTION, sub.query
    assert sub.result.response == final_text(SUB_AGENT_QUESTION), sub.result.response
    assert sub.result.status == "success", (sub.result.status, sub.error)
    assert_llm_rounds(sub, len(SCRIPT[SUB_AGENT_QUESTION]))
    assert_tool_calls(sub, SUB_AGENT_QUESTION)
