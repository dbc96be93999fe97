"""pydantic-ai's own instrumentation (``Agent.instrument_all()``), converted into the right runs.

Payloads: ``tests/fixtures/frameworks/pydantic_ai/payloads/native/<shape>/``, captured by
``tests/fixtures/frameworks/pydantic_ai/capture.py`` (see its README for what each span holds).
pydantic-ai has no handoff, so there is no ``handoff`` shape; ``sub_agent`` is agent delegation
(a ``forecaster`` tool that runs the ``forecaster`` agent).
"""

from __future__ import annotations

import pytest
from framework_helpers import (
    QUESTIONS,
    SCRIPT,
    assert_llm_rounds,
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

FRAMEWORK = "pydantic_ai"
INSTRUMENTATIONS = ("native",)
AGENT = "weather_agent"
SUB_AGENT = "forecaster"


def runs_of(instrumentation: str, shape: str):
    folder = payload_dir(FRAMEWORK, instrumentation, shape)
    assert any(folder.glob("*-traces.*")), f"no payload in {folder}"
    return convert_folder(folder)


def the_top_run(runs):
    """One invocation is one top-level run: no second run from a wrapper span."""
    tops = top_runs(runs)
    assert len(tops) == 1, [(r.agent_name, r.query[:40]) for r in tops]
    return tops[0]


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
@pytest.mark.parametrize("shape", ["multi_round", "tool_error", "parallel", "streaming"])
def test_simple_shapes(instrumentation: str, shape: str) -> None:
    runs = runs_of(instrumentation, shape)
    run = the_top_run(runs)
    assert len(runs) == 1, [(r.agent_name, r.parent_run_id) for r in runs]
    assert_simple_run(run, shape, AGENT)


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_tool_error_is_one_line_and_run_succeeds(instrumentation: str) -> None:
    run = the_top_run(runs_of(instrumentation, "tool_error"))
    (call,) = run.result.tool_calls
    # The tool span has status ERROR with an empty status message and an `exception` event
    # (type pydantic_ai.exceptions.ToolFailedError, message "unknown city: Atlantis").
    assert call.error is not None
    assert "unknown city: Atlantis" in call.error
    assert "Traceback" not in call.error and "\n" not in call.error
    assert run.result.status == "success"


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_parallel_calls_share_a_round(instrumentation: str) -> None:
    run = the_top_run(runs_of(instrumentation, "parallel"))
    calls = run.result.tool_calls
    assert [c.round for c in calls] == [1, 1]
    assert [c.tool_call_id for c in calls] == ["call_0001", "call_0002"]


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_provider_error(instrumentation: str) -> None:
    runs = runs_of(instrumentation, "provider_error")
    run = the_top_run(runs)
    assert len(runs) == 1
    key = QUESTIONS["provider_error"]
    assert run.agent_name == AGENT, run.agent_name
    assert run.query == key, run.query
    assert run.result.status == "failed", run.result.status
    assert run.error, "no run error"
    assert "scripted provider failure" in run.error, run.error
    assert "Traceback" not in run.error
    # The invocation raised: there is no final answer.
    assert not run.result.response, run.result.response
    # Two LLM calls: round 1 answered (model + tokens), round 2 failed (HTTP 500), so its span
    # has only the request model and no usage.
    assert_llm_rounds(run, 2, tokens=False)
    first, failed = run.llm_calls
    assert first.input_tokens and first.output_tokens
    assert failed.model == "gpt-4o-mini", failed.model
    assert failed.input_tokens is None and failed.output_tokens is None
    assert run.input_tokens > 0 and run.output_tokens > 0
    # The one tool call that ran before the provider failed.
    assert_tool_calls(run, key)


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_sub_agent(instrumentation: str) -> None:
    runs = runs_of(instrumentation, "sub_agent")
    top = the_top_run(runs)
    key = QUESTIONS["sub_agent"]
    sub_key = weather.SUB_AGENT_QUESTION

    # The main agent: its own query, LLM rounds and final text.
    assert top.agent_name == AGENT, top.agent_name
    assert top.query == key, top.query
    assert_plain(top.query)
    assert top.result.response == final_text(key), top.result.response
    assert top.result.status == "success", (top.result.status, top.error)
    assert_llm_rounds(top, len(SCRIPT[key]))

    # Its one tool call is the delegation: tool `forecaster`, the sub-agent's answer as result.
    assert [c.tool_name for c in top.result.tool_calls] == [SUB_AGENT], [
        c.tool_name for c in top.result.tool_calls
    ]
    (call,) = top.result.tool_calls
    assert call.arguments == {"input": sub_key}, call.arguments
    assert call.result == final_text(sub_key), call.result
    assert call.error is None, call.error
    assert call.round == 1, call.round
    assert call.tool_call_id == "call_0001", call.tool_call_id

    # The forecaster is a sub-run of the main run, with its own LLM rounds and tool calls.
    subs = sub_runs(runs, top)
    assert len(subs) == 1, [(r.agent_name, r.query) for r in subs]
    assert len(runs) == 2, [(r.agent_name, r.parent_run_id) for r in runs]
    (sub,) = subs
    assert sub.parent_run_id == top.run_id
    assert sub.agent_name == SUB_AGENT, sub.agent_name
    assert sub.query == sub_key, sub.query
    assert sub.result.response == final_text(sub_key), sub.result.response
    assert sub.result.status == "success", (sub.result.status, sub.error)
    assert_llm_rounds(sub, len(SCRIPT[sub_key]))
    assert_tool_calls(sub, sub_key)

    # The sub-agent's LLM calls and tools are not counted in the main run.
    assert {c.span_id for c in top.llm_calls}.isdisjoint(c.span_id for c in sub.llm_calls)
    assert "get_forecast" not in [c.tool_name for c in top.result.tool_calls]
