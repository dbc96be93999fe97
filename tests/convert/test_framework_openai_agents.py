"""The OpenAI Agents SDK (``openai-agents``) weather agent, as its two instrumentations trace it.

Payloads: ``tests/fixtures/frameworks/openai_agents/payloads/<instrumentation>/<shape>/``,
captured by ``tests/fixtures/frameworks/openai_agents/capture.py`` (see the README there for
what each instrumentation records). Every shape is one ``Runner.run`` (or ``run_streamed``)
invocation, so every folder must give exactly one top-level run: the trace-root wrappers
(OpenInference ``Agent workflow`` AGENT + ``Agent workflow`` CHAIN, OpenLLMetry
``Agent Workflow`` workflow) are not runs of their own.

What every framework gives for the shared shapes (``multi_round``, ``parallel``,
``streaming``, ``provider_error``, ``sub_agent``) is tested in ``test_framework_shapes.py``;
this file holds what the SDK does its own way: the redacted tool error and the handoff.
Two recorded facts differ in the shared tests (``CAPTURES`` there says so): the call ids (the
Responses API numbers each function-call item before its call id: ``call_0002``,
``call_0004``), and on ``provider_error`` the failed second LLM call records no model and no
usage in either instrumentation (OpenInference: only ``llm.system`` + ERROR status;
OpenLLMetry: only ``gen_ai.operation.name``/provider + ERROR status).
"""

from __future__ import annotations

import pytest
from framework_helpers import (
    QUESTIONS,
    assert_llm_rounds,
    assert_one_line_error,
    assert_plain,
    assert_tool_calls,
    final_text,
    payload_dir,
    runs_of,
    sub_runs,
    the_top_run,
)

#: (fixture folder, instrumentation): Logfire's captures have a folder (and venv) of their own
CAPTURES = [
    pytest.param("openai_agents", "openinference", id="openinference"),
    pytest.param("openai_agents", "openllmetry", id="openllmetry"),
    pytest.param("openai_agents_logfire", "logfire", id="logfire"),
]


def payload_bytes(framework: str, instrumentation: str, shape: str) -> bytes:
    folder = payload_dir(framework, instrumentation, shape)
    return b"".join(p.read_bytes() for p in sorted(folder.glob("*.pb")))


@pytest.mark.parametrize(("framework", "instrumentation"), CAPTURES)
def test_tool_error(framework: str, instrumentation: str) -> None:
    key = QUESTIONS["tool_error"]
    runs = runs_of(framework, instrumentation, "tool_error")
    top = the_top_run(runs)
    assert len(runs) == 1, [(r.agent_name, r.parent_run_id) for r in runs]
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
    assert b"unknown city" not in payload_bytes(framework, instrumentation, "tool_error")
    [call] = top.result.tool_calls
    assert (call.tool_name, call.arguments) == ("get_weather", {"city": "Atlantis"})
    assert call.round == 1, call.round
    assert call.tool_call_id, "no tool_call_id"
    assert_one_line_error(call, "Error running tool (non-fatal)")
    assert "redacted" in (call.error or ""), call.error


@pytest.mark.parametrize(("framework", "instrumentation"), CAPTURES)
def test_handoff(framework: str, instrumentation: str) -> None:
    key = QUESTIONS["handoff"]
    runs = runs_of(framework, instrumentation, "handoff")
    top = the_top_run(runs)
    assert len(runs) == 2, [(r.agent_name, r.parent_run_id) for r in runs]
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


@pytest.mark.parametrize("shape", ["multi_round", "handoff", "sub_agent", "chat_completions"])
def test_logfire_attributes_are_read(shape: str) -> None:
    """Logfire's own attributes: agent names from the SDK's span data (never the message
    template ``OpenAI Agents trace: {name}`` / ``Agent run: {name!r}``), each LLM call's
    messages from its ``events`` list (the request's, then the response's), and the finish
    reasons Logfire sends as JSON text read as names. ``chat_completions`` is the SDK on the
    Chat Completions API (generation spans: the chat messages as ``input`` / ``output``)."""
    runs = runs_of("openai_agents_logfire", "logfire", shape)
    for run in runs:
        assert "{" not in run.agent_name, run.agent_name
        assert run.convention == "logfire", run.convention
        for call in run.llm_calls:
            assert call.input_messages and call.output_messages, (run.agent_name, call.round)
            assert call.input_messages[0]["role"] == "system"
            assert all(m["role"] == "assistant" for m in call.output_messages)
            assert call.finish_reason in ("tool_calls", "stop"), call.finish_reason
        last = run.llm_calls[-1]
        if last.finish_reason == "stop":  # (the triage agent's last call hands off)
            texts = [p["content"] for p in last.output_messages[-1]["parts"]]
            assert run.result.response in texts, (run.result.response, texts)


def test_logfire_chat_completions_gives_the_multi_round_run() -> None:
    """The multi_round question on the Chat Completions API: the same run as on Responses."""
    key = QUESTIONS["multi_round"]
    run = the_top_run(runs_of("openai_agents_logfire", "logfire", "chat_completions"))
    assert (run.agent_name, run.query, run.result.response) == (
        "weather_agent",
        key,
        final_text(key),
    )
    assert_llm_rounds(run, 3)
    assert_tool_calls(run, key)
    assert [c.tool_call_id for c in run.result.tool_calls] == ["call_0001", "call_0003"]


def test_openllmetry_on_chat_completions_takes_each_calls_output_from_the_next_request() -> None:
    """OpenLLMetry's openai-agents instrumentation records only the input of a Chat Completions
    call (issue 48: "no tool call ids"): each call's tool calls, ids included, are the model
    turn the next request's history holds; the last call's answer is recorded nowhere."""
    run = the_top_run(runs_of("openai_agents", "openllmetry", "chat_completions"))
    assert [(c.round, c.tool_name, c.tool_call_id) for c in run.result.tool_calls] == [
        (1, "get_weather", "call_0001"),
        (2, "get_forecast", "call_0003"),
    ]
    assert run.result.total_llm_calls == 3
    assert run.result.response == ""  # not recorded by this instrumentation
    assert the_top_run(
        runs_of("openai_agents", "openinference", "chat_completions")
    ).result.response
