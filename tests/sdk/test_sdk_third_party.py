"""Third-party LLM instrumentations used with the SDK: their spans nest under the agent span
and every LLM call counts once, also when the agent wraps it in its own ``llm_call``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from fake_openai import FINAL_ANSWER, fake_openai
from openinference.instrumentation.openai import OpenAIInstrumentor as OpenInferenceInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tracereplay
from tracereplay.convert import convert_trace
from tracereplay.models import Run
from tracereplay.otlp import decode_traces_pb

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    for name in ("get_weather", "get_population")
]


@tracereplay.tool
def get_weather(city: str) -> dict[str, Any]:
    return {"city": city, "weather": "foggy", "temperature_c": 14}


@tracereplay.tool
def get_population(city: str) -> int:
    raise TimeoutError(f"population service timed out for {city}")


FUNCS = {"get_weather": get_weather, "get_population": get_population}


@pytest.fixture(params=["opentelemetry-instrumentation-openai-v2", "openinference"])
def instrumented(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, InMemorySpanExporter]]:
    """configure() on a fresh provider, plus a real OpenAI instrumentation on the same one."""
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    tracereplay.configure(tracer_provider=provider, exporter=exporter)
    instrumentor = (
        OpenAIInstrumentor()
        if request.param.startswith("opentelemetry")
        else OpenInferenceInstrumentor()
    )
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield request.param, exporter
    finally:
        instrumentor.uninstrument()


def weather_agent(client: openai.OpenAI, wrap_llm_calls: bool) -> str:
    question = "What's the weather and population in San Francisco?"
    with tracereplay.agent_run("weather_agent", question) as run:
        messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
        for _ in range(3):
            if wrap_llm_calls:
                with run.llm_call(model="gpt-4o-mini", messages=messages, provider="openai") as llm:
                    response = client.chat.completions.create(
                        model="gpt-4o-mini", messages=messages, tools=TOOLS
                    )
                    llm.set_openai_response(response)
            else:
                response = client.chat.completions.create(
                    model="gpt-4o-mini", messages=messages, tools=TOOLS
                )
            message = response.choices[0].message
            if not message.tool_calls:
                run.set_response(message.content)
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                tool = FUNCS[call.function.name]
                if not wrap_llm_calls:  # no llm_call to learn the ids from: pass them
                    tool = tool.with_call_id(call.id)
                try:
                    content = json.dumps(tool(**json.loads(call.function.arguments)))
                except TimeoutError as exc:
                    content = f"error: {exc}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        run.mark_max_rounds_exceeded()
        return ""


def convert(spans: list[ReadableSpan]) -> list[Run]:
    decoded = decode_traces_pb(encode_spans(spans).SerializeToString())
    return convert_trace(sorted(decoded.spans, key=lambda s: s.start_ns))


@pytest.mark.parametrize(
    "wrap_llm_calls", [False, True], ids=["provider-spans", "nested-in-llm_call"]
)
def test_llm_spans_nest_under_the_agent_and_count_once(
    instrumented: tuple[str, InMemorySpanExporter], wrap_llm_calls: bool
) -> None:
    library, exporter = instrumented
    with fake_openai() as base_url:
        client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
        assert weather_agent(client, wrap_llm_calls) == FINAL_ANSWER
    assert tracereplay.flush()
    spans = list(exporter.get_finished_spans())

    [agent] = [s for s in spans if s.name == "invoke_agent weather_agent"]
    ours = {s.context.span_id for s in spans if s.instrumentation_scope.name == "tracereplay"}
    library_llm = [s for s in spans if s.context.span_id not in ours]
    assert len(library_llm) == 2, f"{library} made one span per completion"
    parent_ids = {s.parent.span_id for s in library_llm}
    if wrap_llm_calls:
        ours_chat = {
            s.context.span_id
            for s in spans
            if s.name == "chat gpt-4o-mini" and s.context.span_id in ours
        }
        assert parent_ids <= ours_chat and len(ours_chat) == 2
    else:
        assert parent_ids == {agent.context.span_id}
    assert {s.context.trace_id for s in spans} == {agent.context.trace_id}

    [run] = convert(spans)
    assert run.agent_name == "weather_agent" and run.status == "success"
    assert run.result.response == FINAL_ANSWER
    assert run.result.total_llm_calls == 2 and len(run.llm_calls) == 2
    assert (run.input_tokens, run.output_tokens) == (207 + 301, 46 + 19)
    calls = [(c.tool_name, c.tool_call_id, c.round, c.error is None) for c in run.result.tool_calls]
    assert calls == [
        ("get_weather", "call_get_weather", 1, True),
        ("get_population", "call_get_population", 1, False),
    ]
