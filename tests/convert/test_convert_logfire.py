"""Logfire's own attributes (``convert/logfire.py``) and the rules strands 0.2 needed, each on a
small synthetic trace: SDK span data told by its fields, the ``events`` list split into request
and response, the SDK's error attribute, lists sent as JSON text, a tool's status flag, a span
whose parent was never exported."""

from __future__ import annotations

import dataclasses
import json

import orjson
from convert_helpers import Trace, agent, chat, tool, user
from hypothesis import given
from hypothesis import strategies as st

from tracereplay.convert import convert_trace
from tracereplay.convert.detect import AGENT, TOOL, WORKFLOW, detect
from tracereplay.convert.logfire import event_messages, sdk_error
from tracereplay.convert.values import first_name
from tracereplay.spans import Span

TEMPLATE = "logfire.msg_template"


def lf(t: Trace, template: str, attrs: dict, **kw) -> Span:
    return t.span(template, {TEMPLATE: template, "logfire.span_type": "span", **attrs}, **kw)


def events(*items: dict) -> str:
    return orjson.dumps(list(items)).decode()


SYSTEM = {"event.name": "gen_ai.system.message", "role": "system", "content": "be brief"}
USER = {"event.name": "gen_ai.user.message", "role": "user", "content": "weather in Rome?"}
ASKS = {
    "event.name": "gen_ai.assistant.message",
    "role": "assistant",
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    ],
}
ANSWER = {"event.name": "gen_ai.tool.message", "role": "tool", "id": "c1", "content": "sunny"}
FINAL = {"event.name": "gen_ai.assistant.message", "role": "assistant", "content": "It is sunny."}


def llm(t: Trace, parent: Span, start: float, end: float, items: list, response=True) -> Span:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.response.model": "gpt-4o-mini",
        "gen_ai.response.finish_reasons": '["stop"]',
        "events": events(*items),
    }
    if response:
        attrs["response"] = '{"id": "resp_1"}'
    return lf(t, "Responses API", attrs, parent=parent, start=start, end=end)


def test_sdk_span_data_is_told_by_its_fields() -> None:
    t = Trace()
    root = lf(t, "OpenAI Agents trace: {name}", {"name": "Agent workflow", "agent_trace_id": "x"})
    run = lf(t, "Agent run: {name!r}", {"name": "a", "handoffs": "[]", "output_type": "str"})
    fn = lf(t, "Function: {name}", {"name": "f", "input": "{}", "output": "", "mcp_data": "null"})
    handoff = lf(t, "Handoff: {from_agent} → {to_agent}", {"from_agent": "a", "to_agent": "b"})
    turn = lf(t, "Turn {turn} for agent a", {"type": "custom", "sdk_span_type": "turn"})
    plain = lf(t, "Doing {thing}", {"thing": "x", "logfire.msg": "Doing x"})
    roles = [detect(s) for s in (root, run, fn, handoff, turn, plain)]
    assert roles[:4] == [
        (WORKFLOW, "logfire"),
        (AGENT, "logfire"),
        (TOOL, "logfire"),
        (TOOL, "logfire"),
    ]
    assert roles[4][0] == roles[5][0] == 0  # a turn, a plain Logfire span: no role


def test_a_run_of_logfire_spans() -> None:
    t = Trace()
    root = lf(t, "OpenAI Agents trace: {name}", {"name": "Agent workflow", "agent_trace_id": "x"})
    run = lf(
        t,
        "Agent run: {name!r}",
        {"name": "weather_agent", "handoffs": "[]", "output_type": "str"},
        parent=root,
        start=1,
        end=99,
    )
    llm(t, run, 2, 10, [SYSTEM, USER, ASKS])
    lf(
        t,
        "Function: {name}",
        {"name": "get_weather", "input": '{"city": "Rome"}', "output": "sunny", "mcp_data": "null"},
        parent=run,
        start=11,
        end=12,
    )
    llm(t, run, 13, 20, [SYSTEM, USER, ASKS, ANSWER, FINAL])
    [r] = convert_trace(t.spans)
    assert (r.agent_name, r.convention) == ("weather_agent", "logfire")
    assert (r.query, r.result.response) == ("weather in Rome?", "It is sunny.")
    [call] = r.result.tool_calls
    assert (call.tool_name, call.tool_call_id, call.arguments, call.result) == (
        "get_weather",
        "c1",
        {"city": "Rome"},
        "sunny",
    )
    assert [c.finish_reason for c in r.llm_calls] == ["stop", "stop"]
    assert [m["role"] for m in r.llm_calls[1].input_messages] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]


def test_the_events_list_without_a_response_is_all_request() -> None:
    t = Trace()
    span = llm(t, agent(t, "a"), 1, 2, [USER, FINAL], response=False)
    inputs, outputs = event_messages(span)
    assert [m["role"] for m in inputs] == ["user", "assistant"] and outputs == []


def test_the_sdk_error_attribute_is_the_span_error() -> None:
    t = Trace()
    failed = lf(
        t,
        "Agent run: {name!r}",
        {
            "name": "a",
            "handoffs": "[]",
            "output_type": "str",
            "error": '{"message": "Error in agent run", "data": {"error": "boom"}}',
        },
        status=2,
    )
    assert sdk_error(failed) == "Error in agent run: boom"
    chat(t, failed, 1, 2, [user("q")], None)
    [r] = convert_trace(t.spans)
    assert r.error == "Error in agent run: boom"


def test_lists_sent_as_json_text() -> None:
    assert first_name('["tool_calls", "stop"]') == "tool_calls"
    assert first_name("[not json") == "[not json"


def test_a_tool_status_flag_makes_a_tool_error() -> None:
    t = Trace()
    root = agent(t, "a")
    chat(t, root, 1, 2, [user("q")], None)
    tool(
        t,
        "get_weather",
        root,
        3,
        4,
        **{"tool.status": "error"},
    ).events.append(
        {"name": "gen_ai.choice", "time_unix_nano": 0, "attributes": {"message": "Error: nope"}}
    )
    [r] = convert_trace(t.spans)
    [call] = r.result.tool_calls
    assert (call.result, call.error) == ("Error: nope", "nope")


def test_a_span_whose_parent_was_never_exported_is_the_agents() -> None:
    t = Trace()
    root = agent(t, "a", end=100)
    chat(t, root, 1, 10, [user("q")], None)
    lost = chat(t, None, 20, 30, [user("q")], None)
    t.spans[-1] = dataclasses.replace(lost, parent_span_id="f" * 16)  # a cycle never exported
    [r] = convert_trace(t.spans)
    assert r.agent_name == "a" and r.result.total_llm_calls == 2


@given(
    st.recursive(
        st.none() | st.text() | st.integers(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)
    )
)
def test_any_events_value_reads_without_error(value: object) -> None:
    t = Trace()
    span = llm(t, agent(t, "a"), 1, 2, [])
    span.attributes["events"] = json.dumps(value) if value is not None else "["
    inputs, outputs = event_messages(span)
    assert isinstance(inputs, list) and isinstance(outputs, list)


def test_an_agent_spans_system_prompt_is_its_llm_calls_system_message() -> None:
    t = Trace()
    root = agent(t, "a", system_prompt="be brief")
    chat(t, root, 1, 2, [user("q")], None)
    chat(t, root, 3, 4, [{"role": "system", "parts": []}, user("q")], None)
    [r] = convert_trace(t.spans)
    first, second = r.llm_calls
    assert [m["role"] for m in first.input_messages] == ["system", "user"]
    assert first.input_messages[0]["parts"] == [{"type": "text", "content": "be brief"}]
    assert second.input_messages[0]["parts"] == []  # it recorded its own
