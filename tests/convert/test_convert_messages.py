"""Message normalizers: the upstream single-span fixtures (Arize's GenAI <-> OpenInference test
pairs) and each message form, down to the GenAI parts shape."""

from __future__ import annotations

from convert_helpers import load_attributes

from tracereplay.convert import genai, openinference, openllmetry
from tracereplay.convert.messages import (
    from_events,
    from_legacy_indexed,
    from_openinference,
    parse_messages,
    payload_text,
)
from tracereplay.spans import Span

PARIS_HISTORY = [
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    {
        "role": "assistant",
        "parts": [
            {"type": "text", "content": "Absolutely! Let me check the weather for you."},
            {
                "type": "tool_call",
                "id": "1234",
                "name": "get_weather",
                "arguments": {"location": "Paris"},
            },
        ],
    },
    {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "1234", "response": "rainy, 57°F"}],
    },
]
PARIS_ANSWER = [
    {
        "role": "assistant",
        "parts": [
            {
                "type": "text",
                "content": "The weather in Paris is currently rainy with a temperature of 57°F.",
            }
        ],
    }
]


def _span(attrs: dict, name: str = "span") -> Span:
    return Span("ab" * 16, "cd" * 8, "", name, 3, 0, 1_000_000, attributes=attrs)


def _strip(messages: list[dict]) -> list[dict]:
    """Messages without extra keys (``finish_reason``...), to compare shapes."""
    return [{"role": m["role"], "parts": m["parts"]} for m in messages]


def test_genai_client_span_fixture() -> None:
    attrs = load_attributes("openinference-genai__otel_genai_client_span_tool_calls.json")
    info = genai.llm_info(_span(attrs))
    assert _strip(info.input_messages) == PARIS_HISTORY
    assert _strip(info.output_messages) == PARIS_ANSWER
    assert (info.model, info.provider) == ("gpt-4-0613", "openai")
    assert (info.input_tokens, info.output_tokens) == (97, 52)
    assert info.finish_reason == "stop"


def test_openinference_client_span_fixture_normalizes_to_the_same_messages() -> None:
    # the same exchange as the GenAI fixture, in OpenInference's flattened attributes
    attrs = load_attributes("openinference-genai__openinference_client_span_tool_calls.json")
    inputs, outputs = from_openinference(attrs)
    assert inputs == PARIS_HISTORY
    assert outputs == PARIS_ANSWER
    info = openinference.llm_info(_span(attrs))
    assert (info.model, info.provider) == ("gpt-4-0613", "openai")
    assert (info.input_tokens, info.output_tokens) == (97, 52)
    assert info.finish_reason == "stop"  # from output.value, as llm.finish_reason is absent


def test_deprecated_genai_prompt_and_completion_fixture() -> None:
    attrs = load_attributes(
        "openinference-genai__otel_genai_deprecated_client_span_tool_calls.json"
    )
    info = genai.llm_info(_span(attrs))
    assert info.input_messages == PARIS_HISTORY
    assert info.output_messages == PARIS_ANSWER  # {"text": ..., "finish_reason": ...}
    assert info.finish_reason == "stop"


def test_genai_tool_execution_span_fixture() -> None:
    attrs = load_attributes("openinference-genai__otel_genai_tool_execution_span.json")
    info = genai.tool_info(_span(attrs, "execute_tool get_weather"))
    assert (info.name, info.call_id) == ("get_weather", "1234")
    # the fixture's "input"/"output" keys are not convention attributes: nothing recorded
    assert info.arguments is None and info.result is None


def test_result_for_response_and_string_arguments() -> None:
    messages, _ = parse_messages(
        '[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"f",'
        '"arguments":"{\\"x\\": 1}"}]},'
        '{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","result":{"ok":true}}]}]'
    )
    assert messages[0]["parts"][0]["arguments"] == {"x": 1}
    assert messages[1]["parts"][0] == {
        "type": "tool_call_response",
        "id": "c1",
        "response": {"ok": True},
    }


def test_structured_messages_and_unknown_parts_are_kept() -> None:
    value = [
        {"role": "user", "parts": [{"type": "blob", "modality": "image", "content": "AAAA"}]},
        {"role": "assistant", "parts": [{"type": "reasoning", "content": "thinking"}]},
    ]
    messages, _ = parse_messages(value)
    assert messages == value


def test_openai_chat_messages() -> None:
    messages, _ = parse_messages(
        {
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "42"},
            ]
        }
    )
    assert messages == [
        {"role": "system", "parts": [{"type": "text", "content": "be brief"}]},
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {}}],
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "42"}]},
    ]


def test_openai_response_payload() -> None:
    messages, finish = parse_messages(
        '{"choices":[{"finish_reason":"length","message":{"role":"assistant","content":"ok"}}]}'
    )
    assert messages == [{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}]
    assert finish == "length"


def test_plain_text_and_garbage() -> None:
    assert parse_messages("hello")[0] == [
        {"role": "user", "parts": [{"type": "text", "content": "hello"}]}
    ]
    assert parse_messages("[not json")[0] == [
        {"role": "user", "parts": [{"type": "text", "content": "[not json"}]}
    ]
    assert parse_messages(42) == ([], "")
    assert parse_messages([1, None, {"parts": [7, None]}])[0] == [{"role": "user", "parts": []}]


def test_legacy_openllmetry_indexed_attributes() -> None:
    attrs = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Weather in Paris?",
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.id": "1234",
        "gen_ai.prompt.1.tool_calls.0.name": "get_weather",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"location":"Paris"}',
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.tool_call_id": "1234",
        "gen_ai.prompt.2.content": "rainy, 57°F",
        **{f"gen_ai.prompt.{i}.role": "user" for i in range(3, 11)},
        **{f"gen_ai.prompt.{i}.content": f"#{i}" for i in range(3, 11)},
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "You're welcome.",
        "gen_ai.completion.0.finish_reason": "stop",
    }
    inputs, outputs, finish = from_legacy_indexed(attrs)
    assert [m["role"] for m in inputs] == ["user", "assistant", "tool"] + ["user"] * 8
    assert inputs[1]["parts"] == [
        {
            "type": "tool_call",
            "id": "1234",
            "name": "get_weather",
            "arguments": {"location": "Paris"},
        }
    ]
    assert inputs[2]["parts"] == [
        {"type": "tool_call_response", "id": "1234", "response": "rainy, 57°F"}
    ]
    # index order, not string order ("10" after "9")
    assert [m["parts"][0]["content"] for m in inputs[3:]] == [f"#{i}" for i in range(3, 11)]
    assert outputs == [
        {"role": "assistant", "parts": [{"type": "text", "content": "You're welcome."}]}
    ]
    assert finish == "stop"
    info = openllmetry.llm_info(_span({"llm.request.type": "chat", **attrs}))
    assert info.input_messages == inputs and info.finish_reason == "stop"


def test_log_events() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    inputs, outputs, finish = from_events(
        [
            ("gen_ai.system.message", {"content": "sys"}),
            ("gen_ai.user.message", {"content": "q"}),
            ("gen_ai.assistant.message", {"tool_calls": [call]}),
            ("gen_ai.tool.message", {"content": "done", "id": "c1"}),
            ("gen_ai.choice", {"index": 0, "finish_reason": "tool_calls", "tool_calls": [call]}),
            ("gen_ai.choice", {"index": 1, "message": {"content": "text", "tool_calls": [call]}}),
            ("gen_ai.unknown", {"content": "ignored"}),
        ]
    )
    tool_call = {"type": "tool_call", "id": "c1", "name": "f", "arguments": {"a": 1}}
    assert inputs == [
        {"role": "system", "parts": [{"type": "text", "content": "sys"}]},
        {"role": "user", "parts": [{"type": "text", "content": "q"}]},
        {"role": "assistant", "parts": [tool_call]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "done"}]},
    ]
    assert outputs == [
        {"role": "assistant", "parts": [tool_call]},
        {"role": "assistant", "parts": [{"type": "text", "content": "text"}, tool_call]},
    ]
    assert finish == "tool_calls"


def test_log_events_without_content() -> None:
    # content capture off: events still come, without content
    inputs, outputs, _ = from_events(
        [("gen_ai.user.message", {}), ("gen_ai.choice", {"index": 0, "message": {}})]
    )
    assert inputs == [{"role": "user", "parts": []}]
    assert outputs == [{"role": "assistant", "parts": []}]


def test_system_instructions_become_the_first_message() -> None:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system_instructions": '[{"type":"text","content":"be brief"}]',
        "gen_ai.input.messages": '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]',
    }
    info = genai.llm_info(_span(attrs))
    assert [m["role"] for m in info.input_messages] == ["system", "user"]
    assert info.input_messages[0]["parts"] == [{"type": "text", "content": "be brief"}]


def test_payload_text() -> None:
    assert payload_text("plain question") == "plain question"
    assert payload_text('"quoted"') == "quoted"
    assert payload_text('{"query": "q", "top_k": 3}') == "q"
    assert payload_text('{"messages": [{"role": "user", "content": "hi"}]}') == "hi"
    assert payload_text('{"a": 1, "b": [2]}') is None
    assert payload_text(["only one string", 3]) == "only one string"
    state = {
        "messages": [
            {"role": "user", "content": "question"},
            {"role": "assistant", "content": "answer"},
        ]
    }
    assert payload_text(state) == "question"
    assert payload_text(state, output=True) == "answer"
    assert payload_text({"answer": "a", "input": "q"}, output=True) == "a"
