"""The general rules behind framework traces, each on a small synthetic trace: wrappers folded,
handoffs, agents placed by time, wrapped tool outputs, one-line errors, control flow."""

from __future__ import annotations

import orjson
from convert_helpers import Trace, agent, assistant, calls, chat, responses, tool, user
from hypothesis import given
from hypothesis import strategies as st

from tracereplay.convert import convert_trace
from tracereplay.convert.forms import (
    blocks_text,
    converse_part,
    langchain_message,
    tool_output,
)
from tracereplay.convert.messages import normalize_message, payload_text
from tracereplay.convert.openinference import agent_name
from tracereplay.convert.tools import tool_execution_spans
from tracereplay.spans import Span


def weather(t: Trace, root: Span, offset: float = 0, question: str = "weather?") -> None:
    chat(t, root, offset + 1, offset + 5, [user(question)], [calls(("c1", "get_weather", {}))])
    tool(t, "get_weather", root, offset + 6, offset + 8, **{"gen_ai.tool.call.id": "c1"})
    chat(
        t,
        root,
        offset + 9,
        offset + 12,
        [user(question), calls(("c1", "get_weather", {})), responses(("c1", "sunny"))],
        [assistant(f"sunny ({question})")],
    )


def workflow(t: Trace, name: str, parent: Span | None = None, start=0, end=100, **extra) -> Span:
    attrs = {"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": name, **extra}
    return t.span(f"invoke_workflow {name}", attrs, parent=parent, start=start, end=end)


# ------------------------------------------------------------------ wrappers and handoffs
def test_a_wrapper_around_one_agent_is_folded_into_it() -> None:
    t = Trace()
    outer = workflow(t, "Agent workflow", end=100)
    inner = agent(t, "weather_agent", parent=outer, start=2, end=90)
    weather(t, inner, 2)
    [run] = convert_trace(t.spans)
    assert run.agent_name == "weather_agent"
    assert run.root_span_id == inner.span_id
    assert run.query == "weather?" and run.result.response == "sunny (weather?)"
    assert run.duration_ms == 100.0  # the whole invocation, wrapper included


def test_an_agent_span_around_one_agent_is_a_wrapper_too() -> None:
    t = Trace()
    node = agent(t, "weather_agent", end=100)  # a graph node around the agent graph
    graph = agent(t, "weather_agent", parent=node, start=1, end=99)
    weather(t, graph, 1)
    [run] = convert_trace(t.spans)
    assert run.root_span_id == graph.span_id and run.parent_run_id is None


def test_agents_after_the_first_in_a_wrapper_are_handoffs() -> None:
    t = Trace()
    flow = workflow(
        t,
        "swarm",
        **{"gen_ai.input.messages": orjson.dumps([user("Ask the forecaster")]).decode()},
    )
    triage = agent(t, "triage", parent=flow, start=1, end=40)
    chat(t, triage, 2, 5, [user("Ask the forecaster")], [calls(("h1", "transfer", {}))])
    tool(t, "transfer", triage, 6, 7, **{"gen_ai.tool.call.id": "h1"})
    forecaster = agent(t, "forecaster", parent=flow, start=41, end=99)
    weather(t, forecaster, 41, question="For context: the triage agent transferred you")
    top, sub = convert_trace(t.spans)
    assert (top.agent_name, sub.agent_name) == ("triage", "forecaster")
    assert sub.parent_run_id == top.run_id and top.parent_run_id is None
    assert top.query == "Ask the forecaster"  # the wrapper's question
    assert sub.query == "Ask the forecaster"  # a handoff carries the conversation on
    # the invocation's answer is the last agent's; the handoff is no tool call of the first
    assert top.result.response == "sunny (For context: the triage agent transferred you)"
    assert [c.tool_name for c in top.result.tool_calls] == ["transfer"]


def test_an_orchestrator_with_its_own_llm_calls_is_no_wrapper() -> None:
    t = Trace()
    planner = agent(t, "planner", end=100)
    chat(t, planner, 1, 5, [user("plan")], [assistant("done")])
    helper = agent(t, "helper", parent=planner, start=10, end=50)
    weather(t, helper, 10)
    parent, child = convert_trace(t.spans)
    assert parent.agent_name == "planner" and child.parent_run_id == parent.run_id
    assert [c.tool_name for c in parent.result.tool_calls] == ["helper"]


# ------------------------------------------------------------------ lost parent links
def test_a_childless_agent_span_adopts_the_siblings_within_its_time() -> None:
    t = Trace()
    root = agent(t, "weather_agent", end=100)
    chat(t, root, 1, 5, [user("go")], [calls(("f1", "forecaster", {"input": "Zurich"}))])
    wrapper = tool(t, "forecaster", root, 6, 60, **{"gen_ai.tool.call.id": "f1"})
    agent(t, "forecaster", parent=wrapper, start=7, end=59)  # recorded as an empty marker
    task = t.span("execute_task forecaster", {}, parent=wrapper, start=8, end=58)
    weather(t, task, 8)
    chat(t, root, 61, 70, [user("go")], [assistant("it snows")])
    top, sub = convert_trace(t.spans)
    assert sub.agent_name == "forecaster" and sub.parent_run_id == top.run_id
    assert sub.result.total_llm_calls == 2 and sub.result.response == "sunny (weather?)"
    assert [c.tool_name for c in top.result.tool_calls] == ["forecaster"]


def test_an_agent_running_inside_a_tool_of_another_branch_moves_under_it() -> None:
    t = Trace()
    flow = workflow(t, "Agent Workflow", end=100)
    main = agent(t, "weather_agent", parent=flow, start=1, end=99)
    chat(t, main, 2, 5, [user("go")], [calls(("f1", "forecaster", {"input": "Zurich"}))])
    tool(t, "forecaster", main, 6, 60, **{"gen_ai.tool.call.id": "f1"})
    sub_span = agent(t, "forecaster", parent=flow, start=7, end=59)  # parented to the workflow
    weather(t, sub_span, 7)
    chat(t, main, 61, 70, [user("go")], [assistant("it snows")])
    top, sub = convert_trace(t.spans)
    assert top.agent_name == "weather_agent" and sub.parent_run_id == top.run_id
    assert [c.tool_name for c in top.result.tool_calls] == ["forecaster"]  # not two calls


# ------------------------------------------------------------------ tool calls
def test_a_tool_span_named_its_own_way_takes_the_one_request_of_its_round() -> None:
    t = Trace()
    root = agent(t, "triage", end=100)
    chat(t, root, 1, 5, [user("go")], [calls(("h1", "transfer_to_forecaster", {}))])
    t.span(
        "handoff to forecaster",
        {"openinference.span.kind": "TOOL", "input.value": "triage"},
        parent=root,
        start=6,
        end=7,
    )
    [run] = convert_trace(t.spans)
    [call] = run.result.tool_calls
    assert (call.tool_name, call.tool_call_id, call.arguments) == (
        "transfer_to_forecaster",
        "h1",
        {},
    )


def test_a_summary_tool_span_no_request_asked_for_is_no_call() -> None:
    t = Trace()
    root = agent(t, "a", end=100)
    chat(t, root, 1, 5, [user("go")], [calls(("c1", "get_weather", {"city": "Rome"}))])
    tool(t, "get_weather", root, 6, 7, **{"gen_ai.tool.call.id": "c1"})
    tool(t, "(merged tools)", root, 6, 8, **{"gen_ai.tool.call.id": "3f2a-event-id"})
    [run] = convert_trace(t.spans)
    assert [c.tool_name for c in run.result.tool_calls] == ["get_weather"]


def test_tool_execution_spans_leave_out_summary_spans_and_keep_nested_ones() -> None:
    t = Trace()
    root = agent(t, "a", end=100)
    chat(t, root, 1, 5, [user("go")], [calls(("c1", "forecaster", {"city": "Rome"}))])
    outer = tool(t, "forecaster", root, 6, 9, **{"gen_ai.tool.call.id": "c1"})
    inner = tool(t, "get_weather", outer, 7, 8)  # not a call of the run, still an execution
    tool(t, "(merged tools)", root, 9, 10, **{"gen_ai.tool.call.id": "3f2a-event-id"})
    executions = tool_execution_spans(t.spans)
    assert [(s.span_id, info.name) for s, info in executions] == [
        (outer.span_id, "forecaster"),
        (inner.span_id, "get_weather"),
    ]


def test_a_one_argument_tool_input_defers_to_the_llm_request() -> None:
    t = Trace()
    root = agent(t, "a", end=100)
    chat(t, root, 1, 5, [user("go")], [calls(("c1", "get_weather", {"city": "Paris"}))])
    t.span(
        "get_weather",
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "get_weather",
            "input.value": "Paris",
            "output.value": orjson.dumps(
                {"type": "tool", "data": {"content": "Paris: 18°C", "tool_call_id": "c1"}}
            ).decode(),
        },
        parent=root,
        start=6,
        end=7,
    )
    [call] = convert_trace(t.spans)[0].result.tool_calls
    assert call.arguments == {"city": "Paris"}
    assert call.result == "Paris: 18°C" and call.tool_call_id == "c1"


def test_a_tool_error_reported_only_in_its_output_is_recorded() -> None:
    t = Trace()
    root = agent(t, "a", end=100)
    chat(t, root, 1, 5, [user("go")], [calls(("c1", "get_weather", {"city": "X"}))])
    tool(
        t,
        "get_weather",
        root,
        6,
        7,
        status=2,
        message="TOOL_ERROR",
        **{
            "gen_ai.tool.call.id": "c1",
            "error.type": "TOOL_ERROR",
            "gen_ai.tool.call.result": '{"error": "unknown city: X"}',
        },
    )
    [call] = convert_trace(t.spans)[0].result.tool_calls
    assert call.error == "unknown city: X"


# ------------------------------------------------------------------ errors and status
def test_a_traceback_in_the_status_gives_way_to_the_exception() -> None:
    t = Trace()
    t.span(
        "invoke_agent a",
        {"gen_ai.operation.name": "invoke_agent"},
        status=2,
        message="ValueError('boom')Traceback (most recent call last):\n  File x\nValueError: boom",
        events=[
            {
                "name": "exception",
                "attributes": {"exception.type": "ValueError", "exception.message": "boom"},
            }
        ],
    )
    [run] = convert_trace(t.spans)
    assert run.error == "ValueError: boom" and run.result.status == "failed"


def test_a_control_flow_exception_is_no_failure() -> None:
    t = Trace()
    root = agent(t, "a", end=100)
    weather(t, root)
    root.status_code = 2
    root.status_message = "Command(graph='__parent__', goto='forecaster')"
    root.events.append(
        {
            "name": "exception",
            "attributes": {"exception.type": "langgraph.errors.ParentCommand"},
        }
    )
    [run] = convert_trace(t.spans)
    assert run.error is None and run.result.status == "success"


def test_streamed_chunks_before_the_whole_output_are_dropped() -> None:
    t = Trace()
    root = agent(t, "a", end=100)
    chunks = [
        {"role": "assistant", "parts": [{"type": "text", "content": "Hel"}], "finish_reason": ""},
        {"role": "assistant", "parts": [{"type": "text", "content": "lo"}], "finish_reason": ""},
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Hello"}],
            "finish_reason": "stop",
        },
    ]
    chat(
        t,
        root,
        1,
        5,
        [user("hi")],
        None,
        **{"gen_ai.output.messages": orjson.dumps(chunks).decode()},
    )
    [run] = convert_trace(t.spans)
    assert len(run.llm_calls[0].output_messages) == 1 and run.result.response == "Hello"


# ------------------------------------------------------------------ message and payload forms
def test_langchain_messages_in_every_form() -> None:
    serialized = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "AIMessage"],
        "kwargs": {"content": "", "tool_calls": [{"name": "f", "args": {"x": 1}, "id": "c1"}]},
    }
    message = normalize_message(serialized)
    assert message == {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {"x": 1}}],
    }
    dumped = {"type": "human", "data": {"content": "hi"}}
    assert langchain_message(dumped) == {"role": "user", "content": "hi"}
    assert langchain_message(["user", "hi"]) == {"role": "user", "content": "hi"}
    assert payload_text({"messages": [["user", "What is up?"]]}) == "What is up?"
    state = {"outputs": {"messages": [dumped, {"type": "ai", "data": {"content": "fine"}}]}}
    assert payload_text(state, output=True) == "fine"


def test_converse_blocks() -> None:
    assert payload_text('[{"text": "What is the weather?"}]') == "What is the weather?"
    use = {"toolUse": {"toolUseId": "t1", "name": "f", "input": {"a": 1}}}
    assert converse_part(use) == {
        "type": "tool_call",
        "id": "t1",
        "name": "f",
        "arguments": {"a": 1},
    }
    result = {"toolResult": {"toolUseId": "t1", "status": "error", "content": [{"text": "bad"}]}}
    out = tool_output([result])
    assert (out.text, out.call_id, out.error) == ("bad", "t1", True)


def test_wrapped_tool_outputs() -> None:
    message = {"type": "tool", "data": {"content": "ok", "tool_call_id": "c9", "status": "success"}}
    assert tool_output({"output": message}).text == "ok"
    assert tool_output('{"result": "Rome: 24°C"}').text == "Rome: 24°C"
    assert tool_output('{"error": "unknown city"}').error
    assert tool_output('{"city": "Rome", "temp": 24}').text == '{"city": "Rome", "temp": 24}'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_the_form_readers_take_anything(value: object) -> None:
    text = orjson.dumps(value).decode()
    for raw in (value, text):
        assert isinstance(tool_output(raw).text, str)
        assert isinstance(blocks_text(raw), str)
        langchain_message(raw)
        normalize_message(raw)
        payload_text(raw)
        payload_text(raw, output=True)
        if isinstance(raw, dict):
            converse_part(raw)


# ------------------------------------------------------------------ OpenInference agent spans
def test_an_openinference_agent_is_named_by_its_graph_node_not_its_method_span() -> None:
    t = Trace()
    attrs = {
        "openinference.span.kind": "AGENT",
        "graph.node.id": "Weather analyst",
        "input.value": '{"agent": {"role": "Weather analyst"}, "context": "", "tools": ["x"]}',
        "output.value": '{"description": "weather?", "raw": "sunny"}',
    }
    root = t.span("Weather analyst.forecast_task._execute_core", attrs, start=0, end=100)
    weather(t, root, 1)
    [run] = convert_trace(t.spans)
    assert run.agent_name == "Weather analyst"
    # a method's bound arguments are no question: the first LLM call's user message is
    assert run.query == "weather?"
    # a CHAIN's graph.node.id is a graph step, not an agent name: its span name less the method
    chain = Trace().span("Crew.kickoff", {**attrs, "openinference.span.kind": "CHAIN"})
    assert agent_name(chain) == "Crew"


def test_payload_texts_are_never_object_reprs_nor_bound_arguments() -> None:
    assert payload_text('{"topic": "AI agents"}') == "AI agents"  # a crew's kickoff inputs
    assert payload_text('{"topic": "AI", "year": 2026}') == "AI"
    assert payload_text('{"agent": {}, "context": "earlier output", "tools": []}') == (
        "earlier output"  # empty structured values do not count
    )
    assert payload_text('{"agent": {"role": "r"}, "context": "earlier output"}') is None
    repr_text = "<crewai.types.streaming.CrewStreamingOutput object at 0x7fbdfa0f5b10>"
    assert payload_text(repr_text, output=True) is None
    assert payload_text("<b>bold</b> answer", output=True) == "<b>bold</b> answer"


# ------------------------------------------------------------------ agent runtime deliveries
def _runtime(t: Trace, op: str, destination: str, parent: Span, start: float, end: float) -> Span:
    span = t.span(
        f"autogen {op} {destination}",
        {"messaging.operation": op, "messaging.destination": destination},
        parent=parent,
        start=start,
        end=end,
    )
    span.scope_name = "autogen SingleThreadedAgentRuntime"
    return span


def test_a_runtime_send_adopts_the_deliveries_of_its_key() -> None:
    """AutoGen's team: one short send to the manager, the agents' turns delivered beside it
    under the same key; a delivery to another key (another team) stays out."""
    t = Trace()
    app = t.span("runtime", start=0, end=100)
    _runtime(t, "send", "Manager_k1.(k1)-A", app, 1, 3)
    first = _runtime(t, "process", "first_k1.(k1)-A", app, 4, 30)
    a = agent(t, "first", parent=first, start=5, end=29)
    weather(t, a, 5, question="first?")
    second = _runtime(t, "process", "second_k1.(k1)-A", app, 31, 60)
    b = agent(t, "second", parent=second, start=32, end=59)
    weather(t, b, 32, question="second?")
    other = _runtime(t, "process", "other_k2.(k2)-A", app, 61, 90)
    c = agent(t, "other", parent=other, start=62, end=89)
    weather(t, c, 62, question="other?")
    runs = {r.agent_name: r for r in convert_trace(t.spans)}
    assert runs["first"].parent_run_id is None
    assert runs["second"].parent_run_id == runs["first"].run_id  # a handoff of the team's run
    assert runs["first"].result.response == "sunny (second?)"  # the last speaker's answer
    assert runs["other"].parent_run_id is None


def test_spans_of_other_scopes_are_no_runtime_send() -> None:
    t = Trace()
    app = t.span("runtime", start=0, end=100)
    t.span("autogen send Manager_k1.(k1)-A", {"messaging.destination": "Manager_k1.(k1)-A"},
           parent=app, start=1, end=3)  # fmt: skip
    for i, name in enumerate(("first", "second")):
        a = agent(t, name, parent=app, start=10 + 40 * i, end=40 + 40 * i)
        weather(t, a, 10 + 40 * i)
    assert all(r.parent_run_id is None for r in convert_trace(t.spans))
