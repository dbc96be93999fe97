"""LangGraph (LangChain v1 ``create_agent``) under both LangChain instrumentations, converted
into the right runs.

Payloads: ``tests/fixtures/frameworks/langgraph/payloads/<instrumentation>/<shape>/``, captured
by ``tests/fixtures/frameworks/langgraph/capture.py`` (its README says what each span holds):

- ``openinference``: openinference-instrumentation-langchain (``LangChainInstrumentor``);
- ``openllmetry``: opentelemetry-instrumentation-langchain (Traceloop).

``sub_agent`` is the ``forecaster`` graph invoked from a ``forecaster`` tool; ``handoff`` is a
parent ``StateGraph`` (``weather_team``) whose ``weather_agent`` node hands over to the
``forecaster`` node with ``transfer_to_forecaster`` (``Command(graph=Command.PARENT)``).
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

FRAMEWORK = "langgraph"
INSTRUMENTATIONS = ("openinference", "openllmetry")
AGENT = "weather_agent"
SUB_AGENT = "forecaster"


def runs_of(instrumentation: str, shape: str):
    folder = payload_dir(FRAMEWORK, instrumentation, shape)
    assert any(folder.glob("*-traces.*")), f"no payload in {folder}"
    return convert_folder(folder)


def the_top_run(runs):
    """One invocation is one top-level run: no second run from a wrapper span (the graph's
    workflow/chain span, OpenLLMetry's ``invoke_agent`` + ``<name>.workflow`` pair, or the
    ``create_agent`` spans OpenLLMetry emits in traces of their own when the agents are built)."""
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
    # openinference: status ERROR, message "ValueError('unknown city: Atlantis')Traceback ...",
    # plus an `exception` event (ValueError / "unknown city: Atlantis").
    # openllmetry: status ERROR "unknown city: Atlantis", error.type ValueError, `exception` event.
    assert call.tool_name == "get_weather"
    assert call.arguments == {"city": "Atlantis"}, call.arguments
    assert call.error is not None
    assert "unknown city: Atlantis" in call.error, call.error
    assert "Traceback" not in call.error and "\n" not in call.error, call.error
    assert call.tool_call_id == "call_0001", call.tool_call_id
    assert run.result.status == "success"
    assert run.result.response == final_text(QUESTIONS["tool_error"])


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_parallel_calls_share_a_round(instrumentation: str) -> None:
    run = the_top_run(runs_of(instrumentation, "parallel"))
    calls = run.result.tool_calls
    assert [c.round for c in calls] == [1, 1]
    assert [c.tool_call_id for c in calls] == ["call_0001", "call_0002"]
    assert [c.result for c in calls] == ["Rome: 24°C, sunny", "Oslo: 6°C, rain"]


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_tool_arguments_and_results_are_the_tools_own(instrumentation: str) -> None:
    """The instrumentations record a single-argument tool's input as the bare value
    (openinference ``input.value`` = ``Paris``) or a Python repr (openllmetry ``input_str``
    = ``{'city': 'Paris'}``), and the result as a serialized ``ToolMessage``: the run must hold
    the argument dict and the tool's own output text."""
    run = the_top_run(runs_of(instrumentation, "multi_round"))
    calls = run.result.tool_calls
    assert [(c.tool_name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_forecast", {"city": "Paris", "days": 2}),
    ]
    assert [c.result for c in calls] == ["Paris: 18°C, cloudy", "Paris next 2 day(s): rain likely"]
    assert [c.tool_call_id for c in calls] == ["call_0001", "call_0003"]
    assert_plain(run.result.response)


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_provider_error(instrumentation: str) -> None:
    runs = runs_of(instrumentation, "provider_error")
    run = the_top_run(runs)
    assert len(runs) == 1, [(r.agent_name, r.parent_run_id) for r in runs]
    key = QUESTIONS["provider_error"]
    assert run.agent_name == AGENT, run.agent_name
    assert run.query == key, run.query
    assert run.result.status == "failed", run.result.status
    assert run.error, "no run error"
    assert "scripted provider failure" in run.error, run.error
    # openinference's status message is repr(error) + the whole traceback: keep one line.
    assert "Traceback" not in run.error and "\n" not in run.error, run.error
    # The invocation raised: there is no final answer.
    assert not run.result.response, run.result.response
    # Two LLM calls: round 1 answered (model + tokens), round 2 failed (HTTP 500), so its span
    # has only the request model (gpt-4o-mini) and no usage.
    assert_llm_rounds(run, 2, tokens=False)
    first, failed = run.llm_calls
    assert first.input_tokens and first.output_tokens
    assert failed.model and failed.model.startswith("gpt-4o-mini"), failed.model
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

    # The forecaster graph is a sub-run of the main run, with its own LLM rounds and tools.
    # openinference marks it CHAIN, not AGENT (its kind is AGENT only when "agent" is in the
    # run name); its metadata says ls_integration=langchain_create_agent, lc_agent_name=forecaster.
    # openllmetry: an empty `invoke_agent forecaster` span next to the `execute_task forecaster`
    # task span that holds its work.
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


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_handoff(instrumentation: str) -> None:
    runs = runs_of(instrumentation, "handoff")
    top = the_top_run(runs)
    key = QUESTIONS["handoff"]

    # The invocation is one run headed by the first agent, weather_agent (the parent graph
    # `weather_team` is a wrapper, not a run); its answer is the invocation's final text, which
    # the forecaster gave.
    assert top.agent_name == AGENT, top.agent_name
    assert top.query == key, top.query
    assert_plain(top.query)
    assert top.result.response == final_text(key), top.result.response
    # The handoff is a `ParentCommand` exception on the weather_agent spans (openinference:
    # status OK + `exception` event; openllmetry: status ERROR "Command(graph=...)"): control
    # flow, not a failure.
    assert top.result.status == "success", (top.result.status, top.error)
    assert top.error is None, top.error

    # weather_agent's own round: the transfer_to_forecaster call (no arguments). The tool
    # returns a Command, not text, so only its name, id and round are asserted.
    assert_llm_rounds(top, 1)
    (transfer,) = top.result.tool_calls
    assert transfer.tool_name == "transfer_to_forecaster", transfer.tool_name
    assert transfer.arguments == {}, transfer.arguments
    assert transfer.round == 1, transfer.round
    assert transfer.tool_call_id == "call_0001", transfer.tool_call_id
    assert transfer.error is None, transfer.error

    # The forecaster is a sub-run of the top run with its own rounds and tool call.
    subs = sub_runs(runs, top)
    assert len(subs) == 1, [(r.agent_name, r.query) for r in subs]
    assert len(runs) == 2, [(r.agent_name, r.parent_run_id) for r in runs]
    (sub,) = subs
    assert sub.parent_run_id == top.run_id
    assert sub.agent_name == SUB_AGENT, sub.agent_name
    assert sub.result.response == final_text(key), sub.result.response
    assert sub.result.status == "success", (sub.result.status, sub.error)
    assert_llm_rounds(sub, 2)
    # In the sub-run, get_forecast is round 1 (the script's round 2 of the conversation).
    assert_tool_calls(sub, key, skip=("transfer_to_forecaster",), rounds=False)
    (forecast,) = sub.result.tool_calls
    assert forecast.round == 1, forecast.round
    assert {c.span_id for c in top.llm_calls}.isdisjoint(c.span_id for c in sub.llm_calls)
