"""The general rules of issue 48, each on a small synthetic trace: they hold for telemetry of
no named framework.

- one request is one LLM call, whichever spans describe it (``build.same_request``);
- a tool result is the tool's own value, whatever envelope is round it;
- a tool message without a call id answers its call by order;
- every major provider's message format is read (Gemini, OpenAI Responses, the Vercel AI SDK);
- a run of no agent and no application span is named after its service, not an operation;
- content in attributes the converter does not read is a conversion gap, not "no content".
"""

from __future__ import annotations

from typing import Any

import orjson
from convert_helpers import Trace, agent, assistant, calls, chat, user
from convert_helpers import responses as responses_
from hypothesis import given
from hypothesis import strategies as st

from tracereplay.convert import convert_trace
from tracereplay.convert.content import records_no_content, unread_content
from tracereplay.convert.messages import parse_messages, payload_text
from tracereplay.convert.object_reprs import read_repr, repr_message
from tracereplay.spans import Span


def _one(spans: list[Span]):
    runs = convert_trace(spans)
    assert len(runs) == 1, [(r.agent_name, r.query) for r in runs]
    return runs[0]


def _bare_llm(trace: Trace, parent: Span, start: float, end: float) -> Span:
    """An SDK's own span of a request: a model and nothing that was said."""
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.system": "anthropic"}
    attrs["gen_ai.request.model"] = "claude-sonnet-4"
    return trace.span("anthropic.messages.create", attrs, parent=parent, start=start, end=end)


def test_an_sdk_span_beside_the_instrumentations_is_one_call() -> None:
    t = Trace()
    root = agent(t, "a")
    ask = calls(("c1", "get_weather", '{"city": "Paris"}'))
    model = {"gen_ai.request.model": "claude-sonnet-4"}
    first = chat(t, root, 10, 20, [user("q")], [ask], **model)
    _bare_llm(t, root, 11, 19)
    chat(t, root, 30, 40, [user("q"), ask], [assistant("done")], **model)
    _bare_llm(t, root, 31, 39.5)
    run = _one(t.spans)
    assert run.result.total_llm_calls == 2
    assert [c.round for c in run.llm_calls] == [1, 2]
    # the richer span is kept: it has the messages
    assert run.llm_calls[0].span_id == first.span_id
    assert run.llm_calls[0].output_messages
    assert run.result.response == "done"


def test_calls_one_after_another_are_not_merged() -> None:
    t = Trace()
    root = agent(t, "a")
    chat(t, root, 10, 20, [user("q")], [assistant("x")])
    chat(t, root, 19, 30, [user("q")], [assistant("y")])  # touches, not the same request
    assert _one(t.spans).result.total_llm_calls == 2


def test_overlapping_calls_that_asked_different_things_are_two() -> None:
    t = Trace()
    root = agent(t, "a")
    chat(t, root, 10, 20, [user("first")], [assistant("x")])
    chat(t, root, 11, 19, [user("second")], [assistant("y")])
    assert _one(t.spans).result.total_llm_calls == 2


def test_tool_message_without_call_id_answers_by_order() -> None:
    t = Trace()
    root = agent(t, "a")
    ask = calls(
        ("c1", "get_weather", '{"city": "Rome"}'), ("c2", "get_weather", '{"city": "Oslo"}')
    )
    no_ids = [
        {"role": "tool", "content": "Rome: 24°C, sunny"},
        {"role": "tool", "content": "Oslo: 6°C, rain"},
    ]
    chat(t, root, 1, 2, [user("q")], [ask])
    chat(
        t,
        root,
        5,
        6,
        outputs=[assistant("ok")],
        **{"gen_ai.input.messages": orjson.dumps([user("q"), ask, *no_ids]).decode()},
    )
    run = _one(t.spans)
    assert [(c.tool_call_id, c.result) for c in run.result.tool_calls] == [
        ("c1", "Rome: 24°C, sunny"),
        ("c2", "Oslo: 6°C, rain"),
    ]


def _gemini_run(response: Any) -> Any:
    t = Trace()
    root = agent(t, "a")
    contents_1 = [{"role": "user", "parts": [{"text": "q"}]}]
    call = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"n": 1}}}]}
    answer = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": response}}]}
    chat(
        t, root, 1, 2, outputs=None, **{"gen_ai.input.messages": orjson.dumps(contents_1).decode()}
    )
    t.spans[-1].attributes["gen_ai.output.messages"] = orjson.dumps([call]).decode()
    chat(
        t,
        root,
        5,
        6,
        outputs=[assistant("ok")],
        **{"gen_ai.input.messages": orjson.dumps([*contents_1, call, answer]).decode()},
    )
    return _one(t.spans)


def test_gemini_parts_and_the_result_wrapper() -> None:
    run = _gemini_run({"result": "Paris: 18°C, cloudy"})
    (call,) = run.result.tool_calls
    assert (call.tool_name, call.arguments, call.result, call.error) == (
        "f",
        {"n": 1},
        "Paris: 18°C, cloudy",
        None,
    )
    assert run.llm_calls[0].output_messages[0]["role"] == "assistant"  # Gemini's "model"


def test_gemini_error_wrapper_is_the_tools_error() -> None:
    (call,) = _gemini_run({"error": "unknown city: Atlantis"}).result.tool_calls
    assert (call.result, call.error) == ("unknown city: Atlantis", "unknown city: Atlantis")


def test_openai_responses_items() -> None:
    items = [
        {"role": "user", "content": "q"},
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": '{"n": 1}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "one"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]},
    ]
    messages, _ = parse_messages(items)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["parts"][0] == {
        "type": "tool_call",
        "id": "call_1",
        "name": "f",
        "arguments": {"n": 1},
    }
    assert messages[2]["parts"][0]["response"] == "one"
    assert messages[3]["parts"] == [{"type": "text", "content": "a"}]


def test_vercel_ai_sdk_parts() -> None:
    messages, _ = parse_messages(
        [
            {"role": "user", "content": [{"type": "text", "text": "q"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool-call", "toolCallId": "c1", "toolName": "f", "input": {"n": 1}}
                ],
            },
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "c1",
                        "toolName": "f",
                        "output": {"type": "text", "value": "one"},
                    }
                ],
            },
        ]
    )
    assert messages[1]["parts"][0] == {
        "type": "tool_call",
        "id": "c1",
        "name": "f",
        "arguments": {"n": 1},
    }
    assert messages[2]["parts"][0]["id"] == "c1"


def test_a_run_of_no_agent_is_named_after_its_service() -> None:
    t = Trace()
    t.span(
        "chat gpt-4o-mini",
        {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
        service="billing-bot",
    )
    assert _one(t.spans).agent_name == "billing-bot"
    t = Trace()
    t.span("chat gpt-4o-mini", {"gen_ai.operation.name": "chat"}, service="unknown_service:python")
    assert _one(t.spans).agent_name == "chat gpt-4o-mini"


def test_content_the_converter_does_not_read_is_a_gap() -> None:
    t = Trace()
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    attrs["vendor.request.prompt"] = "What is the weather in Paris?"
    attrs["vendor.prompt.format"] = ""  # no text: not content
    t.span("vendor.chat", attrs)
    run = _one(t.spans)
    assert records_no_content(run)
    assert unread_content(t.spans) == ["vendor.chat"]
    bare = Trace()
    bare.span("chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"})
    assert unread_content(bare.spans) == []


@given(
    st.lists(
        st.one_of(
            st.text(max_size=20),
            st.dictionaries(
                st.sampled_from(
                    ["type", "text", "functionCall", "functionResponse", "toolCallId", "role"]
                ),
                st.one_of(st.text(max_size=8), st.none(), st.integers(), st.just({"name": "f"})),
                max_size=4,
            ),
        ),
        max_size=6,
    )
)
def test_any_message_list_parses_without_raising(items: list[Any]) -> None:
    messages, _ = parse_messages([{"role": "model", "parts": items}, *items])
    for message in messages:
        assert isinstance(message["role"], str)
        assert all(isinstance(p, dict) and "type" in p for p in message["parts"])


def _lone_call(scope: str, content: bool) -> list[Span]:
    t = Trace()
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    if content:
        attrs["gen_ai.input.messages"] = orjson.dumps([user("q")]).decode()
    span = t.span("anthropic.messages.create", attrs)
    span.scope_name = scope
    return t.spans


def test_an_sdks_own_span_alone_in_its_trace_is_no_run() -> None:
    """The SDK's span of a request, in a trace of its own, content-less: no run. A content-less
    call of an instrumentation library stays one (ingest says what records its content)."""
    assert convert_trace(_lone_call("com.anthropic.sdk.python", content=False)) == []
    assert len(convert_trace(_lone_call("com.anthropic.sdk.python", content=True))) == 1
    for scope in ("opentelemetry.instrumentation.openai_v2", "openinference.instrumentation.x"):
        assert len(convert_trace(_lone_call(scope, content=False))) == 1


def test_a_request_alias_beside_its_dated_model_is_one_model() -> None:
    t = Trace()
    root = agent(t, "a")
    dated = {"gen_ai.response.model": "gpt-4o-mini-2024-07-18"}
    chat(t, root, 1, 2, [user("q")], [assistant("x")], **dated)
    chat(t, root, 3, 4, [user("q")], None, tokens=None)  # failed: the request's model only
    assert _one(t.spans).models == ["gpt-4o-mini-2024-07-18"]


TOOL_MESSAGE_REPR = (
    "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result='Paris: 18°C',"
    " origin=ToolCall(tool_name='get_weather', arguments={'city': 'Paris'}, id='call_1',"
    " extra=None), error=True)], _name=None, _meta={})"
)


def test_a_chat_message_repr_is_read_as_a_message() -> None:
    assert repr_message(TOOL_MESSAGE_REPR) == {
        "role": "tool",
        "parts": [
            {
                "type": "tool_call_response",
                "id": "call_1",
                "response": "Paris: 18°C",
                "status": "error",
            }
        ],
    }
    call = repr_message(
        "ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[ToolCall("
        "tool_name='f', arguments={'n': -1}, id='c2')], _meta={'f': <function f at 0x7f00>})"
    )
    assert call is not None and call["parts"] == [
        {"type": "tool_call", "id": "c2", "name": "f", "arguments": {"n": -1}}
    ]
    assert read_repr("Step(n=1, flag=True, items=[1, 'a'])") == {
        "__type__": "Step",
        "n": 1,
        "flag": True,
        "items": [1, "a"],
    }
    # read, never evaluated
    assert read_repr("__import__('os').system('x')") == {"__type__": "system", "args": ["x"]}


@given(st.text(max_size=80))
def test_any_text_is_read_as_a_repr_without_raising(text: str) -> None:
    read_repr("X(" + text)
    read_repr(text)
    repr_message(text)


def test_an_agent_input_of_bound_arguments_and_a_result_repr() -> None:
    """DSPy's OpenInference spans: the module's ``forward`` records its bound arguments and
    returns a ``Prediction``, recorded as its repr."""
    assert payload_text({"args": [], "kwargs": {"question": "Rain in Oslo?"}}) == "Rain in Oslo?"
    answer = "Prediction(trajectory={'thought_0': 'look it up'}, reasoning='r', answer='Yes.')"
    assert payload_text(answer, output=True) == "Yes."
    assert payload_text("AgentWorkflowStartEvent()") is None


def test_a_call_with_no_recorded_output_takes_its_turn_from_the_next_request() -> None:
    t = Trace()
    root = agent(t, "a")
    ask = calls(("c1", "get_weather", '{"city": "Rome"}'))
    chat(t, root, 1, 2, [user("q")], None)  # only the input recorded
    chat(t, root, 5, 6, [user("q"), ask, responses_(("c1", "Rome: sunny"))], [assistant("ok")])
    run = _one(t.spans)
    (call,) = run.result.tool_calls
    assert (call.round, call.tool_call_id, call.result) == (1, "c1", "Rome: sunny")
