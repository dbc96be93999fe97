"""``run.llm_call``: GenAI chat spans, OpenAI-style messages and responses."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from openai.types.chat import ChatCompletion
from opentelemetry.trace import SpanKind, StatusCode
from sdk_helpers import Recorded

import tracereplay
from tracereplay.sdk.messages import to_genai_messages

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1772011299,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_S1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 207, "completion_tokens": 46, "total_tokens": 253},
}


def attr_json(span: Any, key: str) -> Any:
    return json.loads(span.attributes[key])


@pytest.mark.parametrize("as_object", [False, True])
def test_openai_response_helper(recorded: Recorded, as_object: bool) -> None:
    response = ChatCompletion.model_validate(COMPLETION) if as_object else COMPLETION
    prompt = [
        {"role": "system", "content": "Use the tools."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    with (
        tracereplay.agent_run("a", "Weather in Paris?") as run,
        run.llm_call(model="gpt-4o-mini", messages=prompt, provider="openai") as llm,
    ):
        llm.set_openai_response(response)
    span = recorded.one("chat gpt-4o-mini")
    a = span.attributes
    assert span.kind is SpanKind.CLIENT
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.provider.name"] == "openai"
    assert a["gen_ai.request.model"] == "gpt-4o-mini"
    assert a["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    assert a["gen_ai.response.id"] == "chatcmpl-1"
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (207, 46)
    assert tuple(a["gen_ai.response.finish_reasons"]) == ("tool_calls",)
    assert attr_json(span, "gen_ai.input.messages") == [
        {"role": "system", "parts": [{"type": "text", "content": "Use the tools."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    ]
    assert attr_json(span, "gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "name": "get_weather",
                    "id": "call_S1",
                    "arguments": {"city": "Paris"},
                }
            ],
            "finish_reason": "tool_call",
        }
    ]
    assert span.parent.span_id == recorded.one("invoke_agent a").context.span_id


def test_set_output_usage_and_errors(recorded: Recorded) -> None:
    with tracereplay.agent_run("a", "q") as run:
        with run.llm_call(model="m1", system_instructions="Be brief.") as llm:
            llm.set_output("Final answer.")
            llm.set_usage(input_tokens=10, output_tokens=3)
            llm.set_response_model("m1-2025")
        with pytest.raises(ConnectionError), run.llm_call(model="m2", messages="hi"):
            raise ConnectionError("provider down")
    ok = recorded.one("chat m1")
    assert attr_json(ok, "gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Final answer."}],
            "finish_reason": "stop",
        }
    ]
    assert attr_json(ok, "gen_ai.system_instructions") == [{"type": "text", "content": "Be brief."}]
    assert ok.attributes["gen_ai.response.model"] == "m1-2025"
    assert tuple(ok.attributes["gen_ai.response.finish_reasons"]) == ("stop",)
    failed = recorded.one("chat m2")
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["error.type"] == "ConnectionError"


def test_async_llm_call(recorded: Recorded) -> None:
    async def main() -> None:
        async with tracereplay.agent_run("a", "q") as run, run.llm_call(model="m") as llm:
            llm.set_output_messages([{"role": "assistant", "content": "hi"}])

    asyncio.run(main())
    span = recorded.one("chat m")
    assert attr_json(span, "gen_ai.output.messages")[0]["parts"] == [
        {"type": "text", "content": "hi"}
    ]


def test_message_conversion_covers_the_openai_roles() -> None:
    converted = to_genai_messages(
        [
            {"role": "user", "content": [{"type": "text", "text": "look"}]},
            {
                "role": "assistant",
                "content": "calling",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{bad"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "result"},
            {"role": "user", "parts": [{"type": "text", "content": "already genai"}]},
        ]
    )
    assert converted == [
        {"role": "user", "parts": [{"type": "text", "content": "look"}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "calling"},
                {"type": "tool_call", "name": "f", "id": "c1", "arguments": "{bad"},
            ],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "response": "result", "id": "c1"}],
        },
        {"role": "user", "parts": [{"type": "text", "content": "already genai"}]},
    ]
    assert to_genai_messages("just text") == [
        {"role": "user", "parts": [{"type": "text", "content": "just text"}]}
    ]
