"""Synthetic agent traces as OTLP protobuf, shared by the benchmarks.

Each trace is one weather-agent run in the OpenTelemetry GenAI conventions, 10 spans: an
``invoke_agent`` root, 4 ``chat`` calls and 5 ``execute_tool`` calls, with the attributes real
instrumentations set (messages as JSON strings, usage, finish reasons, tool arguments/results).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, Span, Status

SPANS_PER_TRACE = 10
_CITIES = ["Paris", "London", "Tokyo", "Lima", "Oslo", "Cairo", "Quito", "Perth"]
_TOOLS = ["get_weather", "get_population", "get_time", "search_docs", "convert_units"]


def _kv(key: str, value) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    if isinstance(value, list):
        av = AnyValue()
        av.array_value.values.extend(AnyValue(string_value=v) for v in value)
        return KeyValue(key=key, value=av)
    return KeyValue(key=key, value=AnyValue(string_value=value))


def _span(trace_id, span_id, parent, name, kind, start, end, attrs, error=False) -> Span:
    span = Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=kind,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        attributes=[_kv(k, v) for k, v in attrs.items()],
    )
    if error:
        span.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message="tool failed"))
    return span


def trace_spans(rng: random.Random, t0: int) -> list[Span]:
    """One 10-span agent trace starting at ``t0`` ns."""
    trace_id = rng.randbytes(16)
    root_id = rng.randbytes(8)
    city = rng.choice(_CITIES)
    question = f"What's the weather and population in {city}? Answer briefly."
    messages = [
        {"role": "system", "parts": [{"type": "text", "content": "You are a helpful assistant."}]},
        {"role": "user", "parts": [{"type": "text", "content": question}]},
    ]
    spans: list[Span] = []
    t = t0 + 1_000_000
    tool_index = 0
    for round_no in range(1, 5):
        chat_id = rng.randbytes(8)
        n_tools = 2 if round_no == 1 else (1 if round_no < 4 else 0)
        if round_no == 3:
            n_tools = 2
        calls = []
        for _ in range(n_tools):
            name = _TOOLS[tool_index % len(_TOOLS)]
            calls.append(
                {"type": "tool_call", "id": f"call_{rng.getrandbits(64):016x}", "name": name,
                 "arguments": {"city": city, "units": "metric"}}
            )  # fmt: skip
            tool_index += 1
        output = (
            [{"role": "assistant", "parts": calls, "finish_reason": "tool_calls"}]
            if calls
            else [{"role": "assistant", "parts": [{"type": "text", "content": f"In {city} it is mild."}], "finish_reason": "stop"}]
        )  # fmt: skip
        dur = rng.randint(300, 900) * 1_000_000
        spans.append(
            _span(trace_id, chat_id, root_id, "chat gpt-4o-mini", Span.SPAN_KIND_CLIENT, t, t + dur, {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                "gen_ai.response.id": f"chatcmpl-{rng.getrandbits(64):x}",
                "gen_ai.response.finish_reasons": ["tool_calls" if calls else "stop"],
                "gen_ai.usage.input_tokens": rng.randint(150, 900),
                "gen_ai.usage.output_tokens": rng.randint(10, 80),
                "server.address": "api.openai.com",
                "server.port": 443,
                "gen_ai.input.messages": json.dumps(messages),
                "gen_ai.output.messages": json.dumps(output),
            })
        )  # fmt: skip
        t += dur
        messages = messages + output
        for call in calls:
            tdur = rng.randint(5, 120) * 1_000_000
            failed = call["name"] == "get_population" and rng.random() < 0.2
            result = json.dumps({"city": city, "value": rng.randint(1, 10_000_000)})
            attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call["name"],
                "gen_ai.tool.call.id": call["id"],
                "gen_ai.tool.type": "function",
                "gen_ai.tool.call.arguments": json.dumps(call["arguments"]),
            }
            if not failed:
                attrs["gen_ai.tool.call.result"] = result
            spans.append(
                _span(trace_id, rng.randbytes(8), root_id, f"execute_tool {call['name']}",
                      Span.SPAN_KIND_INTERNAL, t, t + tdur, attrs, error=failed)
            )  # fmt: skip
            messages = messages + [
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": call["id"], "response": result}]}
            ]  # fmt: skip
            t += tdur
    root = _span(trace_id, root_id, b"", "invoke_agent weather_agent", Span.SPAN_KIND_INTERNAL, t0, t + 1_000_000, {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather_agent",
        "gen_ai.conversation.id": f"conv-{rng.getrandbits(32):x}",
        "gen_ai.input.messages": json.dumps([messages[1]]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": f"In {city} it is mild."}]}]),
    })  # fmt: skip
    return [root, *spans]


def requests(
    n_traces: int, traces_per_request: int = 50, seed: int = 7, t0: int = 1_790_000_000_000_000_000
) -> Iterator[ExportTraceServiceRequest]:
    """``n_traces`` traces, ``traces_per_request`` to a request, deterministic for a seed."""
    rng = random.Random(seed)
    for first in range(0, n_traces, traces_per_request):
        req = ExportTraceServiceRequest()
        rs = ResourceSpans()
        rs.resource.attributes.extend(
            [_kv("service.name", "weather-agent"), _kv("telemetry.sdk.language", "python")]
        )
        ss = rs.scope_spans.add()
        ss.scope.name = "tracereplay.bench"
        for i in range(first, min(n_traces, first + traces_per_request)):
            ss.spans.extend(trace_spans(rng, t0 + i * 10_000_000_000))
        req.resource_spans.append(rs)
        yield req
