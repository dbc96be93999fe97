"""strands-agents' own OpenTelemetry traces of the weather agent convert to the right runs.

The payloads under ``tests/fixtures/frameworks/strands/payloads/native/`` were captured by
``tests/fixtures/frameworks/strands/capture.py``: strands-agents 1.62.0 with
``StrandsTelemetry().setup_otlp_exporter()`` and default settings (legacy GenAI conventions:
every message is a span event ``gen_ai.user.message`` / ``gen_ai.assistant.message`` /
``gen_ai.tool.message`` / ``gen_ai.choice`` whose ``content``/``message`` is a JSON list of
strands content blocks, ``[{"text": ...}]``, ``[{"toolUse": ...}]``, ``[{"toolResult": ...}]``).

What every framework gives for the shared shapes is tested in ``test_framework_shapes.py``;
this file holds what is strands' own. Where strands records what the shared tests check:

- one run per invocation: the ``execute_event_loop_cycle`` spans between the agent and its
  chat/tool spans are no runs;
- query: ``gen_ai.user.message`` event content ``[{"text": question}]`` on ``invoke_agent``;
  response: ``gen_ai.choice`` event message on ``invoke_agent``, plain text and a newline
  (stripped);
- tool arguments: the ``execute_tool`` span's ``gen_ai.tool.message`` event content (JSON
  object); tool result: its ``gen_ai.choice`` event message ``[{"text": result}]`` (the text,
  not the list); tool error: status ERROR ``unknown city: Atlantis`` (+ exception event); call
  id: ``gen_ai.tool.call.id``; tokens: ``gen_ai.usage.input_tokens``/``output_tokens`` on
  ``chat``;
- ``provider_error``: ``invoke_agent`` has status ERROR ``"Error code: 500 - {'error':
  {'message': 'scripted provider failure', ...}}"`` and an exception event
  (``strands.types.exceptions.EventLoopException``); the agent never answered (no
  ``gen_ai.choice`` on ``invoke_agent``, no text in any LLM output); round 2's ``chat`` span
  failed (status ERROR) and has no usage;
- ``sub_agent`` (agents as tools): ``execute_tool forecaster`` > ``invoke_agent forecaster``.
  The ``execute_tool`` span that wraps the sub-agent is the tool call (no second one is
  added), whose result is ``str(AgentResult)``: the forecaster's answer plus a trailing
  newline; the forecaster's LLM calls are its own, not the top run's.
"""

from __future__ import annotations

import json

import pytest
from framework_helpers import (
    QUESTIONS,
    assert_llm_rounds,
    assert_tool_calls,
    final_text,
    runs_of,
    sub_runs,
    the_top_run,
    tool_result,
    weather,
)

FRAMEWORK = "strands"
INSTRUMENTATIONS = ["native"]
AGENT = "weather_agent"
SUB_AGENT = "forecaster"
# strands records only the configured model id (gen_ai.request.model), never the response's model
MODEL = "gpt-4o-mini"
SYSTEM_PROMPT = "You are a weather assistant. Use the tools to answer questions about the weather."
# capture.py's script for the Swarm handoff (strands' handoff tool is handoff_to_agent)
HANDOFF_MESSAGE = (
    "The user wants to know if it will snow in Zurich tomorrow; please give the forecast."
)
HANDOFF_ACK = "I handed your question to the forecaster."

SHARED_SHAPES = [
    "multi_round",
    "tool_error",
    "parallel",
    "streaming",
    "provider_error",
    "sub_agent",
]


def parts(messages: list[dict], kind: str) -> list[dict]:
    return [p for m in messages for p in m.get("parts") or [] if p.get("type") == kind]


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
@pytest.mark.parametrize("shape", SHARED_SHAPES)
def test_service_model_and_tool_durations(instrumentation: str, shape: str) -> None:
    """Every run has the service name, only the configured model and timed tool calls."""
    for run in runs_of(FRAMEWORK, instrumentation, shape):
        assert run.service_name == "weather-agent", run.service_name
        assert run.models == [MODEL], (run.agent_name, run.models)
        for call in run.result.tool_calls:
            assert call.duration_ms > 0, call.tool_name


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_tool_error_is_the_tool_spans_status(instrumentation: str) -> None:
    run = the_top_run(runs_of(FRAMEWORK, instrumentation, "tool_error"))
    (call,) = run.result.tool_calls
    # execute_tool has status ERROR "unknown city: Atlantis", an exception event (ValueError)
    # and gen_ai.tool.status = error; the model was told "Error: unknown city: Atlantis"
    assert call.error == "ValueError: unknown city: Atlantis"
    assert call.result in ("", "Error: unknown city: Atlantis"), call.result
    assert run.result.status == "success"


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_messages_are_genai_shaped(instrumentation: str) -> None:
    """strands' content blocks (text / toolUse / toolResult) become GenAI parts."""
    key = QUESTIONS["multi_round"]
    run = the_top_run(runs_of(FRAMEWORK, instrumentation, "multi_round"))
    first, second, last = run.llm_calls

    roles = [m["role"] for m in first.input_messages]
    assert roles == ["system", "user"], roles
    assert parts(first.input_messages[:1], "text")[0]["content"] == SYSTEM_PROMPT
    assert parts(first.input_messages[1:], "text")[0]["content"] == key
    (asked,) = parts(first.output_messages, "tool_call")
    assert asked["name"] == "get_weather"
    assert asked["id"] == run.result.tool_calls[0].tool_call_id
    assert asked["arguments"] == {"city": "Paris"}
    assert first.finish_reason == "tool_use"

    responses = parts(second.input_messages, "tool_call_response")
    assert [r["id"] for r in responses] == [asked["id"]]
    response = responses[0].get("response", responses[0].get("result"))
    text = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
    assert tool_result("get_weather", {"city": "Paris"}) in text

    assert [p["content"] for p in parts(last.output_messages, "text")] == [final_text(key)]
    assert last.finish_reason == "end_turn"


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_handoff_swarm(instrumentation: str) -> None:
    """strands' Swarm: invoke_swarm > invoke_agent weather_agent, then (a sibling)
    invoke_agent forecaster. One run for the invocation, headed by the entry agent; the agent it
    handed off to is its sub-run."""
    key = QUESTIONS["handoff"]
    runs = runs_of(FRAMEWORK, instrumentation, "handoff")
    # the invoke_swarm wrapper (kind CLIENT, status UNSET, no output) is no run of its own
    top = the_top_run(runs)
    assert len(runs) == 2, [r.agent_name for r in runs]
    assert top.agent_name == AGENT
    # the question verbatim is only on invoke_swarm (gen_ai.user.message, content = the plain
    # string); the agents got strands' "Context:\nUser Request: <question>..." prompt
    assert top.query == key, top.query
    # the invocation's final text is the forecaster's answer: the swarm span records no
    # gen_ai.choice (strands never calls end_swarm_span), the last agent's invoke_agent does
    assert top.result.response == final_text(key), top.result.response
    assert top.result.status == "success"
    assert_llm_rounds(top, 2)
    # weather_agent's own last answer (its invoke_agent gen_ai.choice) is the acknowledgement
    assert [p["content"] for p in parts(top.llm_calls[-1].output_messages, "text")] == [HANDOFF_ACK]

    calls = [c for c in top.result.tool_calls if c.tool_name != SUB_AGENT]
    assert [(c.tool_name, c.arguments) for c in calls] == [
        ("handoff_to_agent", {"agent_name": SUB_AGENT, "message": HANDOFF_MESSAGE})
    ]
    (handoff,) = calls
    assert handoff.round == 1 and handoff.tool_call_id and handoff.error is None
    assert handoff.result == f"Handing off to {SUB_AGENT}: {HANDOFF_MESSAGE}", handoff.result

    (sub,) = sub_runs(runs, top)
    assert sub.parent_run_id == top.run_id
    assert sub.agent_name == SUB_AGENT
    assert HANDOFF_MESSAGE in sub.query, sub.query
    assert sub.result.response == final_text(key)
    assert sub.result.status == "success"
    assert_llm_rounds(sub, 2)
    # the forecaster's own turns are SUB_AGENT_QUESTION's: get_forecast(Zurich, 1) in round 1
    assert_tool_calls(sub, weather.SUB_AGENT_QUESTION)
