"""Google ADK's native OpenTelemetry (schema v2, semconv 1.44-aligned), converted into the right runs.

Payloads: ``tests/fixtures/frameworks/google_adk/payloads/adk_native/<shape>/``, captured by
``tests/fixtures/frameworks/google_adk/capture.py`` (its README says what each span holds).
What every framework gives for the shared shapes is tested in ``test_framework_shapes.py``;
this file holds what is ADK's own.

ADK wraps every invocation in an ``invoke_workflow <root agent>`` span (no agent name, no
input/output) around ``invoke_agent <agent>`` spans; neither it nor (in a handoff) the agent
transferred to may become a second top-level run. ``invoke_agent`` spans carry no input or
output either, so query and response come from the ``generate_content`` spans' messages.
ADK wraps a tool's returned string as ``{"result": "<text>"}`` in ``gen_ai.tool.call.result``;
the run keeps the tool's own text.

How ADK records the shared shapes:

- ``tool_error``: the tool span has status ERROR with status message ``TOOL_ERROR`` and
  ``error.type`` ``TOOL_ERROR``, no exception event; the error text is only in
  ``gen_ai.tool.call.result`` (``{"error": "unknown city: Atlantis"}``, what
  ``on_tool_error_callback`` gave the model).
- ``parallel``: ADK also records an ``execute_tool (merged)`` span (``gen_ai.tool.name``
  ``(merged tools)``, ``gen_ai.tool.call.id`` = an ADK event id) after parallel calls: it is
  not a tool call.
- ``provider_error``: round 2's ``generate_content`` span has status ERROR and an exception
  event: no output, no usage.
- ``sub_agent``: the forecaster runs inside the ``AgentTool``'s ``execute_tool forecaster``
  span, in a nested ``invoke_workflow forecaster`` span (``gen_ai.workflow.nested = true``)
  around ``invoke_agent forecaster``: one sub-run, no extra run from the nested workflow span.

Differences from ``weather.SCRIPT`` (see capture.py): the handoff tool is ADK's
``transfer_to_agent`` with ``{"agent_name": "forecaster"}``, and ``AgentTool``'s argument is
``request``.
"""

from __future__ import annotations

from typing import Any

import pytest
from framework_helpers import (
    QUESTIONS,
    assert_llm_rounds,
    assert_plain,
    final_text,
    runs_of,
    sub_runs,
    the_top_run,
    tool_result,
)

from tracereplay.models.run import Run

FRAMEWORK = "google_adk"
INSTRUMENTATIONS = ("adk_native",)
AGENT = "weather_agent"
SUB_AGENT = "forecaster"


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
def test_streaming_output_is_the_whole_answer_once(instrumentation: str) -> None:
    run = the_top_run(runs_of(FRAMEWORK, instrumentation, "streaming"))
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
def test_handoff(instrumentation: str) -> None:
    runs = runs_of(FRAMEWORK, instrumentation, "handoff")
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
