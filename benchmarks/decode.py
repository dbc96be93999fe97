"""Decode throughput of the OTLP decoders (protobuf and JSON), in spans per second.

Builds a realistic synthetic ``ExportTraceServiceRequest``: agent runs of ~10 spans each
(``invoke_agent`` root, ``chat`` LLM spans with GenAI attributes and message JSON, ``execute_tool``
spans; ~10 attributes per span), batched like the SDK's BatchSpanProcessor (512 spans per
request), then times ``decode_traces_pb`` and ``decode_traces_json`` over all batches (CPU time
of this single-threaded process, best of ``--repeat``). Also times
the real instrumentation payloads of ``tests/fixtures/otlp`` (LLM spans there carry 30-46
attributes each).

    .venv/bin/python benchmarks/decode.py [--spans 100000] [--batch 512] [--repeat 3]
"""

from __future__ import annotations

import argparse
import base64
import random
import time
from pathlib import Path
from typing import Any

import orjson
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan

from tracereplay.otlp import decode_traces_json, decode_traces_pb

_FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "otlp"
_TOOLS = ("get_weather", "get_population", "search_docs", "run_sql", "send_email")
_MODELS = ("gpt-4o-mini", "claude-sonnet-4", "gemini-2.5-flash")


def _kv(key: str, value: str | int | float | bool | list[str]) -> KeyValue:
    kv = KeyValue(key=key)
    if isinstance(value, bool):
        kv.value.bool_value = value
    elif isinstance(value, int):
        kv.value.int_value = value
    elif isinstance(value, float):
        kv.value.double_value = value
    elif isinstance(value, list):
        kv.value.array_value.values.extend(AnyValue(string_value=v) for v in value)
    else:
        kv.value.string_value = value
    return kv


def _span(
    rng: random.Random,
    trace_id: bytes,
    parent: bytes,
    name: str,
    kind: int,
    start: int,
    attrs: dict[str, Any],
) -> PbSpan:
    span = PbSpan(
        trace_id=trace_id,
        span_id=rng.randbytes(8),
        parent_span_id=parent,
        name=name,
        kind=kind,
        start_time_unix_nano=start,
        end_time_unix_nano=start + rng.randint(1_000_000, 900_000_000),
    )
    span.attributes.extend(_kv(k, v) for k, v in attrs.items())
    return span


def _agent_run(rng: random.Random, spans_per_trace: int, start: int) -> list[PbSpan]:
    trace_id = rng.randbytes(16)
    model = rng.choice(_MODELS)
    root = _span(
        rng,
        trace_id,
        b"",
        "invoke_agent weather",
        1,
        start,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "weather",
            "gen_ai.agent.id": "agent-7",
            "gen_ai.conversation.id": f"conv-{rng.randrange(10**6)}",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": rng.randint(100, 5000),
            "gen_ai.usage.output_tokens": rng.randint(10, 800),
            "gen_ai.input.messages": f'[{{"role":"user","parts":[{{"type":"text","content":"What is the weather in city #{rng.randrange(10**6)}?"}}]}}]',
            "gen_ai.output.messages": f'[{{"role":"assistant","parts":[{{"type":"text","content":"Rainy, {rng.randrange(40)} C."}}],"finish_reason":"stop"}}]',
        },
    )
    spans = [root]
    for i in range(1, spans_per_trace):
        t = start + i * 1_000_000
        if i % 2:
            attrs: dict[str, Any] = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": model,
                "gen_ai.response.model": model + "-2025-01-01",
                "gen_ai.response.id": f"chatcmpl-{rng.randrange(10**12)}",
                "gen_ai.response.finish_reasons": ["tool_calls"],
                "gen_ai.usage.input_tokens": rng.randint(100, 5000),
                "gen_ai.usage.output_tokens": rng.randint(10, 800),
                "gen_ai.request.temperature": 0.2,
                "gen_ai.input.messages": f'[{{"role":"user","parts":[{{"type":"text","content":"What is the weather in city #{rng.randrange(10**6)}?"}}]}}]',
                "gen_ai.output.messages": f'[{{"role":"assistant","parts":[{{"type":"tool_call","id":"call_{i}","name":"get_weather","arguments":{{"location":"city #{rng.randrange(10**6)}"}}}}]}}]',
            }
            spans.append(_span(rng, trace_id, root.span_id, f"chat {model}", 3, t, attrs))
        else:
            tool = rng.choice(_TOOLS)
            attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": f"call_{rng.randrange(10**9)}",
                "gen_ai.tool.type": "function",
                "gen_ai.tool.description": "Look something up.",
                "gen_ai.tool.call.arguments": f'{{"location": "city #{rng.randrange(10**6)}", "unit": "celsius"}}',
                "gen_ai.tool.call.result": f'{{"temperature": {rng.randrange(40)}, "conditions": "rain"}}',
                "gen_ai.agent.name": "weather",
                "thread.id": rng.randrange(1000),
                "code.function": tool,
            }
            span = _span(rng, trace_id, root.span_id, f"execute_tool {tool}", 1, t, attrs)
            if rng.random() < 0.1:
                span.status.code = 2
                span.status.message = "TimeoutError"
                event = span.events.add(name="exception", time_unix_nano=t + 5)
                event.attributes.extend(
                    [_kv("exception.type", "TimeoutError"), _kv("exception.message", "timed out")]
                )
            spans.append(span)
    return spans


def build_requests(
    n_spans: int = 100_000, batch: int = 512, spans_per_trace: int = 10, seed: int = 7
) -> list[ExportTraceServiceRequest]:
    """Synthetic agent-run spans, ``batch`` spans per request (one resource, one scope)."""
    rng = random.Random(seed)
    all_spans: list[PbSpan] = []
    start = 1_796_000_000_000_000_000
    while len(all_spans) < n_spans:
        all_spans.extend(_agent_run(rng, spans_per_trace, start))
        start += 10_000_000_000
    del all_spans[n_spans:]
    requests = []
    for i in range(0, len(all_spans), batch):
        req = ExportTraceServiceRequest()
        rs = req.resource_spans.add()
        rs.resource.attributes.extend(
            [
                _kv("service.name", "weather-agent"),
                _kv("telemetry.sdk.language", "python"),
                _kv("telemetry.sdk.version", "1.45.2"),
            ]
        )
        ss = rs.scope_spans.add()
        ss.scope.name = "opentelemetry.util.genai.handler"
        ss.spans.extend(all_spans[i : i + batch])
        requests.append(req)
    return requests


def to_otlp_json(req: ExportTraceServiceRequest) -> bytes:
    """OTLP/JSON bytes of a request (protobuf JSON mapping with hex ids, integer enums)."""
    d = json_format.MessageToDict(req, use_integers_for_enums=True)
    for rs in d.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        s[key] = base64.b64decode(s[key]).hex()
    return orjson.dumps(d)


def _time(fn: Any, payloads: list[Any], repeat: int) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        t0 = time.process_time()  # CPU time: stable when other processes share the cores
        count = sum(len(fn(p).spans) for p in payloads)
        best = min(best, time.process_time() - t0)
    return best, count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spans", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    requests = build_requests(args.spans, args.batch)
    pb_payloads = [r.SerializeToString() for r in requests]
    json_payloads = [to_otlp_json(r) for r in requests]
    mb_pb = sum(map(len, pb_payloads)) / 1e6
    mb_json = sum(map(len, json_payloads)) / 1e6
    print(f"{args.spans} spans in {len(requests)} requests of {args.batch} spans")
    for label, fn, payloads, mb in (
        ("protobuf", decode_traces_pb, pb_payloads, mb_pb),
        ("json", decode_traces_json, json_payloads, mb_json),
    ):
        seconds, count = _time(fn, payloads, args.repeat)
        print(
            f"{label:9s} {count / seconds:>10,.0f} spans/s  "
            f"({seconds * 1e6 / count:.2f} us/span, {mb:.1f} MB, best of {args.repeat})"
        )
    fixtures = sorted(_FIXTURES.glob("generated-*__*.pb"))
    if fixtures:
        for label, fn, ext in (
            ("protobuf", decode_traces_pb, ".pb"),
            ("json", decode_traces_json, ".json"),
        ):
            payloads = [p.with_suffix(ext).read_bytes() for p in fixtures] * 200
            seconds, count = _time(fn, payloads, args.repeat)
            print(
                f"{label:9s} {count / seconds:>10,.0f} spans/s  ({seconds * 1e6 / count:.2f} us/span)"
                f"  real fixtures ({len(fixtures)} payloads x 200)"
            )


if __name__ == "__main__":
    main()
