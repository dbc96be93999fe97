"""The OpenAI Agents SDK adapter's own span writer (``frameworks/openai_agents_spans.py``): the
Responses API request and response as GenAI messages the converter reads back as the same
call, and the SDK spans as GenAI spans on a real tracer provider (duck-typed SDK objects: the
SDK itself runs in the framework venv's replay tests)."""

from __future__ import annotations

from types import SimpleNamespace

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tracereplay.convert.genai import llm_info, tool_info
from tracereplay.replay.frameworks.openai_agents_spans import (
    GenAiProcessor,
    input_messages,
    output_messages,
)
from tracereplay.spans import Span

ITEMS = [
    {"role": "user", "content": "weather in Rome?"},
    {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}", "id": "f"},
    {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
]


def test_request_items_and_instructions() -> None:
    messages = input_messages(ITEMS, "be brief")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["parts"][0] == {
        "type": "tool_call",
        "id": "c1",
        "name": "get_weather",
        "arguments": "{}",
    }
    assert input_messages("just text") == [
        {"role": "user", "parts": [{"type": "text", "content": "just text"}]}
    ]


def test_response_output() -> None:
    text = SimpleNamespace(output=[{"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "It is sunny."}]}])  # fmt: skip
    calls = SimpleNamespace(output=[ITEMS[1]])
    assert output_messages(text) == (
        [{"role": "assistant", "parts": [{"type": "text", "content": "It is sunny."}]}],
        "stop",
    )
    assert output_messages(calls)[1] == "tool_calls"
    assert output_messages(SimpleNamespace(output=[])) == ([], "")


def _sdk_span(span_id: str, parent: str | None, data: object, error: object = None) -> object:
    return SimpleNamespace(span_id=span_id, parent_id=parent, span_data=data, error=error)


def _as_span(s: object) -> Span:
    return Span(
        trace_id="ab" * 16,
        span_id="cd" * 8,
        parent_span_id="",
        name=s.name,  # type: ignore[attr-defined]
        kind=1,
        start_ns=0,
        end_ns=1,
        status_code=s.status.status_code.value,  # type: ignore[attr-defined]
        status_message=s.status.description or "",  # type: ignore[attr-defined]
        attributes=dict(s.attributes),  # type: ignore[attr-defined]
    )


def test_sdk_spans_become_genai_spans_read_back_as_the_same_calls() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    processor = GenAiProcessor(provider)
    agent = _sdk_span("a", None, SimpleNamespace(type="agent", name="weather_agent"))
    response = SimpleNamespace(
        output=[ITEMS[1]],
        instructions="be brief",
        model="gpt-4o-mini",
        usage=SimpleNamespace(input_tokens=10, output_tokens=5),
    )
    model = _sdk_span(
        "m", "a", SimpleNamespace(type="response", input=ITEMS[:1], response=response)
    )
    tool = _sdk_span(
        "t",
        "a",
        SimpleNamespace(type="function", name="get_weather", input='{"city": "Rome"}', output=None),
        error={"message": "Error running tool (non-fatal)", "data": {"error": "boom"}},
    )
    for span in (agent, model, tool):
        processor.on_span_start(span)
        if span is not agent:
            processor.on_span_end(span)
    processor.on_span_end(agent)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"invoke_agent weather_agent", "chat", "execute_tool get_weather"}
    root = spans["invoke_agent weather_agent"].context.span_id
    assert spans["chat"].parent.span_id == root
    call = llm_info(_as_span(spans["chat"]))
    assert (call.model, call.input_tokens, call.finish_reason) == ("gpt-4o-mini", 10, "tool_calls")
    assert [m["role"] for m in call.input_messages] == ["system", "user"]
    assert call.output_messages[0]["parts"][0]["name"] == "get_weather"
    failed = _as_span(spans["execute_tool get_weather"])
    assert tool_info(failed).arguments == {"city": "Rome"}
    assert failed.status_code == 2 and "boom" in failed.status_message
