"""One test per mapping rule, on small synthetic traces."""

from __future__ import annotations

import random

import orjson
from convert_helpers import (
    Trace,
    agent,
    assistant,
    calls,
    chat,
    genai_messages,
    responses,
    tool,
    user,
)

from tracereplay.convert import convert_trace, run_id_for
from tracereplay.spans import Span

EXC = {
    "name": "exception",
    "time_unix_nano": 0,
    "attributes": {"exception.type": "ValueError", "exception.message": "bad input"},
}


def _one(spans: list[Span], logs=()):
    runs = convert_trace(spans, logs)
    assert len(runs) == 1, runs
    return runs[0]


def weather_loop(t: Trace, root: Span | None, offset: float = 0) -> None:
    """chat (asks get_weather) -> execute_tool -> chat (answers), under ``root``."""
    chat(t, root, offset + 1, offset + 10, [user("weather?")], [calls(("c1", "get_weather", {}))])
    tool(
        t,
        "get_weather",
        root,
        offset + 11,
        offset + 15,
        **{"gen_ai.tool.call.id": "c1", "gen_ai.tool.call.result": "sunny"},
    )
    chat(
        t,
        root,
        offset + 16,
        offset + 20,
        [user("weather?"), calls(("c1", "get_weather", {})), responses(("c1", "sunny"))],
        [assistant("It is sunny.")],
    )


# ------------------------------------------------------------------ runs and nesting
def test_nested_sub_agent_is_a_run_and_a_tool_call_of_its_parent() -> None:
    t = Trace()
    planner = agent(t, "planner", end=100)
    chat(
        t,
        planner,
        1,
        10,
        [user("Plan a trip to Paris")],
        [calls(("r1", "researcher", {"topic": "Paris"}))],
    )
    researcher = agent(
        t,
        "researcher",
        parent=planner,
        start=11,
        end=50,
        **{
            "gen_ai.input.messages": genai_messages(user("Paris")),
            "gen_ai.output.messages": genai_messages(assistant("Paris is lovely in May.")),
        },
    )
    weather_loop(t, researcher, offset=12)
    chat(t, planner, 60, 70, [user("Plan a trip to Paris")], [assistant("Go in May.")])

    parent, child = convert_trace(t.spans)
    assert parent.agent_name == "planner" and child.agent_name == "researcher"
    assert parent.parent_run_id is None
    assert child.parent_run_id == parent.run_id
    assert child.result.total_llm_calls == 2
    assert [c.tool_name for c in child.result.tool_calls] == ["get_weather"]
    assert parent.result.total_llm_calls == 2  # the child's LLM calls are the child's
    assert (parent.input_tokens, child.input_tokens) == (20, 20)
    (call,) = parent.result.tool_calls
    assert call.tool_name == "researcher"
    assert call.tool_call_id == "r1"
    assert call.arguments == {"topic": "Paris"}  # what the LLM asked for
    assert call.result == "Paris is lovely in May."
    assert call.round == 1
    assert call.duration_ms == 39.0
    assert parent.result.response == "Go in May."


def test_sub_agent_wrapped_in_a_tool_span_is_one_tool_call() -> None:
    t = Trace()
    planner = agent(t, "planner", end=100)
    chat(t, planner, 1, 10, [user("go")], [calls(("r1", "research", {"q": "x"}))])
    wrapper = tool(t, "research", planner, 11, 50, **{"gen_ai.tool.call.id": "r1"})
    sub = agent(t, "researcher", parent=wrapper, start=12, end=49)
    chat(t, sub, 13, 20, [user("x")], [assistant("found x")])
    parent, child = convert_trace(t.spans)
    assert [c.tool_name for c in parent.result.tool_calls] == ["research"]
    assert parent.result.tool_calls[0].arguments == {"q": "x"}
    assert child.parent_run_id == parent.run_id
    assert child.result.response == "found x"


def test_two_agent_runs_side_by_side_in_one_trace() -> None:
    t = Trace()
    root = t.span("POST /batch", end=200)
    first = agent(t, "a", parent=root, start=1, end=50)
    weather_loop(t, first, offset=1)
    second = agent(t, "b", parent=root, start=60, end=120)
    weather_loop(t, second, offset=60)
    a, b = convert_trace(t.spans)
    assert (a.agent_name, b.agent_name) == ("a", "b")
    assert a.parent_run_id is None and b.parent_run_id is None
    assert a.run_id != b.run_id


def test_trace_with_llm_spans_only_is_one_run_rooted_at_its_top_span() -> None:
    t = Trace()
    root = t.span("POST /ask", end=50, service="api")
    weather_loop(t, root)
    run = _one(t.spans)
    assert run.root_span_id == root.span_id
    assert run.agent_name == "POST /ask"
    assert run.service_name == "api"
    assert run.convention == "genai"
    assert run.query == "weather?"
    assert run.result.response == "It is sunny."
    assert run.result.total_llm_calls == 2
    assert [(c.tool_name, c.round, c.result) for c in run.result.tool_calls] == [
        ("get_weather", 1, "sunny")
    ]


def test_parentless_llm_spans_of_one_trace_are_one_run() -> None:
    t = Trace()
    weather_loop(t, None)
    run = _one(t.spans)
    assert run.root_span_id == t.spans[0].span_id  # the earliest top span
    assert run.result.total_llm_calls == 2
    assert run.duration_ms == 19.0  # covers every call, not only the first
    assert run.result.response == "It is sunny."


def test_workflow_span_heads_llm_calls_outside_any_agent() -> None:
    t = Trace()
    http = t.span("POST /ask", end=100)
    flow = t.span(
        "invoke_workflow triage",
        {"gen_ai.operation.name": "invoke_workflow"},
        parent=http,
        start=1,
        end=90,
    )
    chat(t, flow, 2, 5, [user("route me")], [assistant("to billing")])
    run = _one(t.spans)
    assert run.root_span_id == flow.span_id
    assert run.agent_name == "triage"


def test_openinference_kinds_are_case_insensitive() -> None:
    t = Trace()
    root = t.span(
        "my agent",
        {"openinference.span.kind": "agent", "agent.name": "helper", "input.value": "hi"},
        end=50,
    )
    t.span(
        "llm",
        {
            "openinference.span.kind": "Llm",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "hello",
        },
        parent=root,
        start=1,
        end=5,
    )
    t.span(
        "lookup",
        {"openinference.span.kind": "tool ", "tool.name": "lookup", "input.value": "x"},
        parent=root,
        start=6,
        end=7,
    )
    run = _one(t.spans)
    assert run.convention == "openinference"
    assert (run.agent_name, run.query, run.result.response) == ("helper", "hi", "hello")
    assert run.result.tool_calls[0].arguments == {"input": "x"}


# ------------------------------------------------------------------ LLM calls
def test_llm_span_nested_in_an_llm_span_is_counted_once() -> None:
    t = Trace()
    root = t.span("agent", {"openinference.span.kind": "AGENT", "input.value": "hi"}, end=100)
    # framework span (no usage) wrapping the provider instrumentation's span (usage)
    outer = t.span(
        "ChatOpenAI",
        {
            "openinference.span.kind": "LLM",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "hi",
        },
        parent=root,
        start=1,
        end=20,
    )
    t.span(
        "ChatCompletion",
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o",
            "llm.token_count.prompt": 11,
            "llm.token_count.completion": 7,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "hello",
        },
        parent=outer,
        start=2,
        end=19,
    )
    run = _one(t.spans)
    assert run.result.total_llm_calls == 1
    assert run.result.total_rounds == 1
    assert (run.input_tokens, run.output_tokens) == (11, 7)
    (call,) = run.llm_calls
    assert call.span_id == outer.span_id
    assert call.model == "gpt-4o"  # filled from the inner span
    assert call.input_messages[0]["parts"][0]["content"] == "hi"
    assert run.result.response == "hello"


def test_genai_chat_inside_chat_tokens_not_double_counted() -> None:
    t = Trace()
    root = agent(t, "a")
    outer = chat(t, root, 1, 10, tokens=(100, 10))
    chat(t, outer, 2, 9, tokens=(100, 10))
    run = _one(t.spans)
    assert (run.result.total_llm_calls, run.input_tokens, run.output_tokens) == (1, 100, 10)


def test_tokens_fall_back_to_the_agent_span_totals() -> None:
    t = Trace()
    root = agent(t, "a", **{"gen_ai.usage.input_tokens": 42, "gen_ai.usage.output_tokens": "8"})
    chat(t, root, 1, 10, tokens=None)
    run = _one(t.spans)
    assert (run.input_tokens, run.output_tokens) == (42, 8)
    assert run.llm_calls[0].input_tokens is None


def test_legacy_usage_attribute_names() -> None:
    t = Trace()
    root = agent(t, "a")
    chat(
        t,
        root,
        1,
        2,
        tokens=None,
        **{"gen_ai.usage.prompt_tokens": 3, "gen_ai.usage.completion_tokens": 4},
    )
    run = _one(t.spans)
    assert (run.input_tokens, run.output_tokens) == (3, 4)


def test_models_are_distinct_in_order() -> None:
    t = Trace()
    root = agent(t, "a")
    chat(t, root, 1, 2, **{"gen_ai.response.model": "m-1"})
    chat(t, root, 3, 4, **{"gen_ai.response.model": "m-2"})
    chat(t, root, 5, 6, **{"gen_ai.response.model": "m-1"})
    assert _one(t.spans).models == ["m-1", "m-2"]


# ------------------------------------------------------------------ tool calls and rounds
def test_tool_rounds_follow_the_llm_call_that_asked() -> None:
    t = Trace()
    root = agent(t, "a")
    chat(t, root, 1, 2, [user("q")], [calls(("c1", "f", {"n": 1}))])
    tool(t, "f", root, 3, 4, **{"gen_ai.tool.call.id": "c1"})
    chat(t, root, 5, 6, [], [calls(("c2", "g", {}), ("c3", "f", {"n": 2}))])
    tool(t, "g", root, 7, 8, **{"gen_ai.tool.call.id": "c2"})
    tool(t, "f", root, 7.5, 8, **{"gen_ai.tool.call.id": "c3"})
    chat(t, root, 9, 10, [], [assistant("done")])
    run = _one(t.spans)
    assert [(c.tool_name, c.round) for c in run.result.tool_calls] == [
        ("f", 1),
        ("g", 2),
        ("f", 2),
    ]
    # arguments not recorded on the tool span: taken from the tool_call part
    assert [c.arguments for c in run.result.tool_calls] == [{"n": 1}, {}, {"n": 2}]
    assert run.result.total_rounds == 3


def test_tool_spans_without_ids_match_by_name_and_order() -> None:
    t = Trace()
    root = agent(t, "a")
    chat(t, root, 1, 2, [], [calls(("c1", "f", {"n": 1}), ("c2", "f", {"n": 2}))])
    tool(t, "f", root, 3, 4)
    tool(t, "f", root, 5, 6)
    run = _one(t.spans)
    assert [(c.tool_call_id, c.arguments) for c in run.result.tool_calls] == [
        ("c1", {"n": 1}),
        ("c2", {"n": 2}),
    ]


def test_tool_span_round_by_time_without_messages() -> None:
    t = Trace()
    root = agent(t, "a")
    tool(t, "prefetch", root, 0.5, 0.8)  # before any LLM call
    chat(t, root, 1, 2)
    tool(t, "f", root, 3, 4)
    chat(t, root, 5, 6)
    tool(t, "g", root, 7, 8)
    run = _one(t.spans)
    assert [(c.tool_name, c.round) for c in run.result.tool_calls] == [
        ("prefetch", 0),
        ("f", 1),
        ("g", 2),
    ]


def test_tool_calls_rebuilt_from_messages_without_ids() -> None:
    t = Trace()
    root = agent(t, "a")
    ask = {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "name": "f", "arguments": '{"n": 1}'},
            {"type": "tool_call", "name": "g", "arguments": "not json"},
        ],
    }
    answers = {
        "role": "tool",
        "parts": [
            {"type": "tool_call_response", "response": "one"},
            {"type": "tool_call_response", "response": {"error": "boom"}},
        ],
    }
    chat(t, root, 1, 2, [user("q")], [ask])
    chat(t, root, 12, 13, [user("q"), ask, answers], [assistant("ok")])
    run = _one(t.spans)
    f, g = run.result.tool_calls
    assert (f.tool_name, f.arguments, f.result, f.error, f.round) == ("f", {"n": 1}, "one", None, 1)
    assert f.duration_ms == 10.0
    assert g.arguments == {"input": "not json"}
    # the error envelope is taken off, as a tool span's output is (tool_output)
    assert (g.result, g.error) == ("boom", "boom")


def test_llm_spans_inside_a_tool_belong_to_the_tool() -> None:
    t = Trace()
    root = agent(t, "a")
    chat(t, root, 1, 2, [], [calls(("c1", "summarize", {}))])
    summarize = tool(t, "summarize", root, 3, 10, **{"gen_ai.tool.call.id": "c1"})
    chat(t, summarize, 4, 9)
    tool(t, "inner", summarize, 5, 6)  # a tool's own tool spans are not the agent's
    chat(t, root, 11, 12, [], [assistant("ok")])
    run = _one(t.spans)
    assert run.result.total_llm_calls == 2
    assert [c.tool_name for c in run.result.tool_calls] == ["summarize"]


# ------------------------------------------------------------------ status and errors
def test_failed_root_by_status() -> None:
    t = Trace()
    root = t.span(
        "invoke_agent a",
        {"gen_ai.operation.name": "invoke_agent"},
        end=10,
        status=2,
        message="LLM API unavailable",
        events=[EXC],
    )
    chat(t, root, 1, 2)
    run = _one(t.spans)
    assert run.result.status == "failed"
    assert run.error == "LLM API unavailable"


def test_failed_root_by_exception_event_or_error_type() -> None:
    t = Trace()
    agent(t, "a")
    t.spans[0].events.append(EXC)
    run = _one(t.spans)
    assert (run.result.status, run.error) == ("failed", "ValueError: bad input")

    t = Trace()
    agent(t, "a", **{"error.type": "TimeoutError"})
    run = _one(t.spans)
    assert (run.result.status, run.error) == ("failed", "TimeoutError")


def test_explicit_ok_status_wins_over_a_recorded_exception() -> None:
    t = Trace()
    root = agent(t, "a")
    root.status_code = 1
    root.events.append(EXC)
    assert _one(t.spans).result.status == "success"


def test_failed_tool_alone_does_not_fail_the_run() -> None:
    t = Trace()
    root = agent(t, "a")
    chat(t, root, 1, 2, [], [calls(("c1", "f", {}))])
    failing = tool(t, "f", root, 3, 4, **{"gen_ai.tool.call.id": "c1"})
    failing.events.append(EXC)
    run = _one(t.spans)
    assert run.result.status == "success" and run.error is None
    assert run.result.tool_calls[0].error == "ValueError: bad input"


def test_run_headed_by_an_llm_span_fails_with_its_last_call() -> None:
    t = Trace()
    chat(t, None, 1, 2)
    last = chat(t, None, 3, 4)
    last.status_code, last.status_message = 2, "rate limited"
    run = _one(t.spans)
    assert (run.result.status, run.error) == ("failed", "rate limited")


def test_max_rounds_exceeded_marks() -> None:
    for attrs in (
        {"tracereplay.run.status": "max_rounds_exceeded"},
        {"gen_ai.agent.max_rounds_exceeded": True},
        {"gen_ai.agent.max_rounds_exceeded": "true"},
    ):
        t = Trace()
        root = agent(t, "a", **attrs)
        root.status_code, root.status_message = 2, "too many rounds"
        run = _one(t.spans)
        assert run.result.status == "max_rounds_exceeded"
        assert run.error == "too many rounds"
    t = Trace()
    agent(t, "a", **{"gen_ai.agent.max_rounds_exceeded": False})
    assert _one(t.spans).result.status == "success"


# ------------------------------------------------------------------ OpenLLMetry
def test_openllmetry_quoted_string_output_is_decoded() -> None:
    t = Trace()
    root = t.span(
        "helper.agent",
        {
            "traceloop.span.kind": "agent",
            "traceloop.entity.name": "helper",
            "traceloop.entity.input": '{"args": [], "kwargs": {"question": "Is it sunny?"}}',
            "traceloop.entity.output": '"Yes, \\"very\\" sunny."',
        },
        end=10,
    )
    t.span(
        "weather.tool",
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "weather",
            "traceloop.entity.input": '{"args": ["Paris"], "kwargs": {"units": "C"}}',
            "traceloop.entity.output": '"sunny"',
        },
        parent=root,
        start=1,
        end=2,
    )
    t.span(
        "stats.tool",
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.output": '{"a": [1, 2]}',
        },
        parent=root,
        start=3,
        end=4,
    )
    run = _one(t.spans)
    assert run.convention == "openllmetry"
    assert run.query == "Is it sunny?"
    assert run.result.response == 'Yes, "very" sunny.'
    weather, stats = run.result.tool_calls
    assert weather.result == "sunny"
    assert weather.arguments == {"units": "C", "args": ["Paris"]}
    assert (stats.tool_name, stats.result, stats.arguments) == ("stats", '{"a":[1,2]}', {})


# ------------------------------------------------------------------ content capture off
def test_missing_content_degrades_gracefully() -> None:
    t = Trace()
    root = agent(t, "a")
    chat(t, root, 1, 2, **{"gen_ai.response.finish_reasons": ["tool_calls"]})
    tool(t, "f", root, 3, 4, **{"gen_ai.tool.call.id": "c1"})
    chat(t, root, 5, 6)
    run = _one(t.spans)
    assert (run.query, run.result.response) == ("", "")
    (call,) = run.result.tool_calls
    assert (call.tool_name, call.tool_call_id, call.arguments, call.result) == ("f", "c1", {}, "")
    assert call.round == 1
    assert run.result.total_llm_calls == 2
    assert (run.input_tokens, run.output_tokens) == (20, 10)
    assert run.llm_calls[0].finish_reason == "tool_calls"
    assert run.llm_calls[0].input_messages == run.llm_calls[0].output_messages == []


def test_openinference_hidden_content() -> None:
    t = Trace()
    root = t.span("agent", {"openinference.span.kind": "AGENT", "input.value": "__REDACTED__"})
    t.span("llm", {"openinference.span.kind": "LLM"}, parent=root, start=0.1, end=0.5)
    run = _one(t.spans)
    assert run.query == "__REDACTED__"
    assert run.result.total_llm_calls == 1


# ------------------------------------------------------------------ stability and late spans
def test_same_input_same_output_whatever_the_order() -> None:
    t = Trace()
    root = agent(t, "a")
    weather_loop(t, root)
    sub = agent(t, "b", parent=root, start=30, end=40)
    chat(t, sub, 31, 32, [user("x")], [assistant("y")])
    expected = [r.to_dict() for r in convert_trace(t.spans)]
    rng = random.Random(7)
    for _ in range(5):
        shuffled = t.spans[:]
        rng.shuffle(shuffled)
        assert [r.to_dict() for r in convert_trace(shuffled)] == expected


def test_run_id_is_stable_and_documented() -> None:
    import uuid

    from tracereplay.convert import NAMESPACE

    rid = run_id_for("ab" * 16, "cd" * 8)
    assert rid == str(uuid.uuid5(NAMESPACE, f"{'ab' * 16}:{'cd' * 8}"))
    assert rid == run_id_for("ab" * 16, "cd" * 8)


def test_late_child_changes_the_result_not_the_run_id() -> None:
    t = Trace()
    root = agent(t, "a", end=30)
    weather_loop(t, root)
    all_spans = t.spans
    early = convert_trace(all_spans[:2])  # agent + first chat only
    late = convert_trace(all_spans)
    assert early[0].run_id == late[0].run_id
    assert early[0].result.total_llm_calls == 1 and late[0].result.total_llm_calls == 2
    assert early[0].result.tool_calls[0].result == ""  # asked, result not seen yet
    assert late[0].result.tool_calls[0].result == "sunny"
    assert late[0].result.response == "It is sunny."


def test_late_agent_span_takes_over_its_orphan_children() -> None:
    t = Trace()
    root = agent(t, "a", end=30)
    weather_loop(t, root)
    orphans = convert_trace(t.spans[1:])  # the agent span has not arrived yet
    assert len(orphans) == 1 and orphans[0].root_span_id != root.span_id
    (run,) = convert_trace(t.spans)
    assert run.root_span_id == root.span_id and run.agent_name == "a"


def test_parent_cycles_do_not_hang_or_lose_spans() -> None:
    t = Trace()
    a = agent(t, "a")
    b = chat(t, a, 1, 2)
    a.parent_span_id = b.span_id  # garbage: a loop
    run = _one(t.spans)
    assert run.result.total_llm_calls == 1


def test_no_agent_and_no_llm_span_gives_no_run() -> None:
    t = Trace()
    root = t.span("GET /health")
    tool(t, "f", root, 0, 1)
    assert convert_trace(t.spans) == []
    assert convert_trace([]) == []


# ------------------------------------------------------------------ tracereplay.* attributes
def test_tracereplay_attributes() -> None:
    t = Trace()
    agent(
        t,
        "a",
        **{
            "tracereplay.run.context": orjson.dumps(
                [{"name": "policy.md", "content": "Refunds within 30 days."}, "loose text"]
            ).decode(),
            "tracereplay.run.parameters": '{"temperature": 0.2, "plan": "pro"}',
            "tracereplay.run.kind": "replay",
            "tracereplay.eval_run_id": "er-1",
            "tracereplay.case_id": "case-9",
        },
    )
    run = _one(t.spans)
    assert [(d.name, d.content) for d in run.context] == [
        ("policy.md", "Refunds within 30 days."),
        ("context", "loose text"),
    ]
    assert run.parameters == {"temperature": 0.2, "plan": "pro"}
    assert (run.kind, run.eval_run_id, run.case_id) == ("replay", "er-1", "case-9")


def test_tracereplay_attributes_with_garbage_values() -> None:
    t = Trace()
    agent(
        t,
        "a",
        **{
            "tracereplay.run.context": "{not json",
            "tracereplay.run.parameters": "[1, 2]",
            "tracereplay.run.kind": "REPLAYED",
            "tracereplay.eval_run_id": ["x"],
        },
    )
    run = _one(t.spans)
    assert [d.content for d in run.context] == ["{not json"]
    assert run.parameters == {}
    assert (run.kind, run.eval_run_id, run.case_id) == ("live", None, None)


def test_tracereplay_ids_from_the_resource() -> None:
    t = Trace()
    root = agent(t, "a")
    root.resource = {"tracereplay.run.kind": "replay", "tracereplay.case_id": "c-1"}
    run = _one(t.spans)
    assert (run.kind, run.case_id) == ("replay", "c-1")


def test_call_ids_repeated_across_rounds() -> None:
    """Some providers number tool calls per response (``call_0`` every round)."""
    first, second = calls(("call_0", "f", {"n": 1})), calls(("call_0", "f", {"n": 2}))
    history = [user("q"), first, responses(("call_0", "one"))]
    for with_tool_spans in (False, True):
        t = Trace()
        root = agent(t, "a")
        chat(t, root, 1, 2, [user("q")], [first])
        if with_tool_spans:
            tool(t, "f", root, 3, 4, **{"gen_ai.tool.call.id": "call_0"})
        chat(t, root, 5, 6, history, [second])
        if with_tool_spans:
            tool(t, "f", root, 7, 8, **{"gen_ai.tool.call.id": "call_0"})
        chat(t, root, 9, 10, [*history, second, responses(("call_0", "two"))], [assistant("ok")])
        run = _one(t.spans)
        assert [(c.round, c.arguments, c.result) for c in run.result.tool_calls] == [
            (1, {"n": 1}, "one"),
            (2, {"n": 2}, "two"),
        ], with_tool_spans
