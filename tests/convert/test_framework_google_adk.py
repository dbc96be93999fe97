"""Google ADK's native OpenTelemetry (schema v2, semconv 1.44-aligned), converted into the right runs.

Payloads: ``tests/fixtures/frameworks/google_adk/payloads/adk_native/<shape>/``, captured by
``tests/fixtures/frameworks/google_adk/capture.py`` (its README says what each span holds).
ADK wraps every invocation in an ``invoke_workflow <root agent>`` span (no agent name, no
input/output) around ``invoke_agent <agent>`` spans; ``invoke_agent`` spans carry no input or
output either, so query and response come from the ``generate_content`` spans' messages.
ADK wraps a tool's returned string as ``{"result": "<text>"}`` in ``gen_ai.tool.call.result``;
the run keeps the tool's own text.

Differences from ``weather.SCRIPT`` (see capture.py): the handoff tool is ADK's
``transfer_to_agent`` with ``{"agent_name": "forecaster"}``, and ``AgentTool``'s argument is
``request``.
"""

from __future__ import annotations

from typing import Any

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
    tool_result,
    top_runs,
    weather,
)

from tracereplay.models.run import Run

FRAMEWORK = "google_adk"
INSTRUMENTATIONS = ("adk_native",)
AGENT = "weather_agent"
SUB_AGENT = "forecaster"


def runs_of(instrumentation: str, shape: str) -> list[Run]:
    folder = payload_dir(FRAMEWORK, instrumentation, shape)
    assert any(folder.glob("*-traces.*")), f"no payload in {folder}"
    return convert_folder(folder)


def the_top_run(runs: list[Run]) -> Run:
    """One invocation is one top-level run: the ``invoke_workflow`` wrapper span (and, in a
    handoff, the agent transferred to) must not become a second top-level run."""
    tops = top_runs(runs)
    assert len(tops) == 1, [(r.agent_name, r.query[:40]) for r in tops]
    return tops[0]


def assert_calls(run: Run, expected: list[tuple[int, str, dict[str, Any], str | None]]) -> None:
    """The run's tool calls, other than a nested agent's own call (``forecaster``), are
    ``expected``: ``(round, name, arguments, result)`` with ``result=None`` for "not checked"."""
    got = [
        c
        for c in run.result.tool_calls
        if c.tool_name != SUB_AGENT or SUB_AGENT in [e[1] for e in expected]
    ]
    assert [(c.tool_name, c.arguments) for c in got] == [(n, a) for _, n, a, _ in expected], [
        (c.tool_name, c.arguments) for c in got
    ]
    for call, (round_, name, _, result) in zip(got, expected):
        assert call.round == round_, (name, call.round, round_)
        assert call.tool_call_id, f"{name}: no tool_call_id"
        assert call.error is None, call.error
        if result is not None:
            assert call.result == result, (name, call.result)
    assert len({c.tool_call_id for c in got}) == len(got), "tool_call_ids repeat"


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
@pytest.mark.parametrize("shape", ["multi_round", "tool_error", "parallel", "streaming"])
def test_simple_shapes(instrumentation: str, shape: str) -> None:
    runs = runs_of(instrumentation, shape)
    run = the_top_run(runs)
    assert len(runs) == 1, [(r.agent_name, r.parent_run_id) for r in runs]
    # assert_tool_calls inside wants each result to be the tool's own text ("Paris: 18°C,
    # cloudy"), not ADK's {"result": "Paris: 18°C, cloudy"} wrapper.
    assert_simple_run(run, shape, AGENT)


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_tool_error_is_one_line_and_run_succeeds(instrumentation: str) -> None:
    run = the_top_run(runs_of(instrumentation, "tool_error"))
    (call,) = run.result.tool_calls
    # The tool span has status ERROR with status message "TOOL_ERROR" and error.type
    # "TOOL_ERROR", no exception event; the error text is only in gen_ai.tool.call.result
    # ({"error": "unknown city: Atlantis"}, what on_tool_error_callback gave the model).
    assert_one_line_error(call, "unknown city: Atlantis")
    assert call.tool_call_id == "call_0001"
    assert run.result.status == "success"


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_parallel_calls_share_a_round(instrumentation: str) -> None:
    run = the_top_run(runs_of(instrumentation, "parallel"))
    calls = run.result.tool_calls
    # ADK also records an "execute_tool (merged)" span (gen_ai.tool.name "(merged tools)",
    # gen_ai.tool.call.id = an ADK event id) after parallel calls: it is not a tool call.
    assert [c.tool_name for c in calls] == ["get_weather", "get_weather"]
    assert [c.round for c in calls] == [1, 1]
    assert [c.tool_call_id for c in calls] == ["call_0001", "call_0002"]


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_streaming_output_is_the_whole_answer_once(instrumentation: str) -> None:
    run = the_top_run(runs_of(instrumentation, "streaming"))
    # Streamed, ADK's gen_ai.output.messages holds one assistant message per chunk (finish_reason
    # "", tool calls with "arguments": null) and then the whole answer (finish_reason "stop").
    last = run.llm_calls[-1]
    texts = [
        part.get("content")
        for message in last.output_messages
        for part in message.get("parts") or []
        if part.get("type") == "text"
    ]
    assert texts == [final_text(QUESTIONS["streaming"])], texts
    for call in run.llm_calls[:-1]:
        tool_calls = [
            p
            for m in call.output_messages
            for p in m.get("parts") or []
            if p.get("type") == "tool_call"
        ]
        assert len(tool_calls) == 1, tool_calls
        assert tool_calls[0].get("arguments"), tool_calls


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_provider_error(instrumentation: str) -> None:
    runs = runs_of(instrumentation, "provider_error")
    run = the_top_run(runs)
    assert len(runs) == 1
    key = QUESTIONS["provider_error"]
    assert run.agent_name == AGENT
    assert run.query == key
    assert run.result.status == "failed", run.result.status
    assert run.error, "no run error"
    assert "scripted provider failure" in run.error, run.error
    assert "\n" not in run.error and "Traceback" not in run.error, run.error
    # Round 2 failed (generate_content status ERROR + exception event): no output, no usage.
    assert_llm_rounds(run, 2, tokens=False)
    assert run.llm_calls[0].input_tokens and run.llm_calls[0].output_tokens
    assert_tool_calls(run, key)


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_handoff(instrumentation: str) -> None:
    runs = runs_of(instrumentation, "handoff")
    key = QUESTIONS["handoff"]
    # ADK records the transfer as two sibling spans under invoke_workflow: invoke_agent
    # weather_agent (its transfer_to_agent call) then invoke_agent forecaster. The forecaster
    # must be a sub-run of weather_agent's run, not a second top-level run.
    top = the_top_run(runs)
    assert top.agent_name == AGENT
    assert top.query == key
    assert_plain(top.query)
    assert top.result.status == "success"
    # The invocation's final text is the forecaster's answer.
    assert top.result.response == final_text(key), top.result.response
    assert_llm_rounds(top, 1)
    # transfer_to_agent's gen_ai.tool.call.result is {"result": null}: result not checked.
    assert_calls(top, [(1, "transfer_to_agent", {"agent_name": "forecaster"}, None)])

    (sub,) = sub_runs(runs, top)
    assert len(runs) == 2, [(r.agent_name, r.parent_run_id) for r in runs]
    assert sub.agent_name == SUB_AGENT
    # The forecaster's last user message is ADK's "For context: ... [weather_agent]
    # `transfer_to_agent` tool returned result ..." quote of the other agent, not a user query:
    # the user's query is still the question.
    assert sub.query == key, sub.query
    assert sub.result.response == final_text(key)
    assert sub.result.status == "success"
    assert_llm_rounds(sub, 2)
    args = {"city": "Zurich", "days": 1}
    assert_calls(sub, [(1, "get_forecast", args, tool_result("get_forecast", args))])


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_sub_agent(instrumentation: str) -> None:
    runs = runs_of(instrumentation, "sub_agent")
    key = QUESTIONS["sub_agent"]
    # The forecaster runs inside the AgentTool's execute_tool forecaster span, in a nested
    # invoke_workflow forecaster span (gen_ai.workflow.nested = true) around invoke_agent
    # forecaster: one sub-run, no extra run from the nested workflow span.
    top = the_top_run(runs)
    assert top.agent_name == AGENT
    assert top.query == key
    assert top.result.response == final_text(key)
    assert top.result.status == "success"
    assert_llm_rounds(top, 2)
    sub_text = final_text(weather.SUB_AGENT_QUESTION)
    assert_calls(top, [(1, SUB_AGENT, {"request": weather.SUB_AGENT_QUESTION}, sub_text)])

    (sub,) = sub_runs(runs, top)
    assert len(runs) == 2, [(r.agent_name, r.parent_run_id) for r in runs]
    assert sub.agent_name == SUB_AGENT
    assert sub.query == weather.SUB_AGENT_QUESTION
    assert sub.result.response == sub_text
    assert sub.result.status == "success"
    assert_llm_rounds(sub, len(SCRIPT[weather.SUB_AGENT_QUESTION]))
    assert_tool_calls(sub, weather.SUB_AGENT_QUESTION)
