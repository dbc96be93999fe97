"""SDK overhead: one agent run with 1 LLM call and 5 tool calls, in microseconds per run.

(a) instrumented with tracereplay (``agent_run``, ``llm_call`` + ``set_openai_response``,
    ``@tracereplay.tool``);
(b) the same spans and attributes made by hand with the bare OpenTelemetry SDK, message JSON
    built with ``json.dumps`` (b) and with ``orjson`` (b', what the SDK itself uses);
(c) uninstrumented.
All instrumented variants export through a ``BatchSpanProcessor`` to the same null exporter.
Times are CPU time of the agent's thread (``time.thread_time``), the cost the agent pays.
Target: a/b <= 1.3, checked against the stricter b' on each variant's best repetition (the one
least disturbed by other processes; medians are printed too).

    .venv/bin/python benchmarks/overhead.py [--runs 200] [--repeat 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, Tracer

import tracereplay
from tracereplay.sdk import stats

QUERY = "What's the weather in Paris, Tokyo, London, Oslo and Rome?"
CITIES = ("Paris", "Tokyo", "London", "Oslo", "Rome")
CONTEXT = [{"name": "travel_note", "content": "The user prefers Celsius."}]
PARAMETERS = {"model": "gpt-4o-mini", "max_rounds": 4}
MESSAGES = [
    {"role": "system", "content": "You are a weather assistant."},
    {"role": "user", "content": QUERY},
]
COMPLETION = {
    "id": "chatcmpl-bench",
    "object": "chat.completion",
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
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": f'{{"city": "{c}"}}'},
                    }
                    for i, c in enumerate(CITIES)
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 207, "completion_tokens": 46, "total_tokens": 253},
}
ANSWER = "Sunny everywhere, 20 °C."


class NullExporter(SpanExporter):
    """Accepts every batch and does nothing with it."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def weather(city: str) -> dict[str, Any]:
    return {"city": city, "conditions": "sunny", "temperature_c": 20}


def calls_of(completion: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in completion["choices"][0]["message"]["tool_calls"]
    ]


# ---------------------------------------------------------------------------- (c) bare
def uninstrumented() -> str:
    completion = COMPLETION  # the LLM call
    for _, _, args in calls_of(completion):
        weather(**args)
    return ANSWER


# ---------------------------------------------------------------------------- (a) tracereplay
traced_weather = tracereplay.tool(weather)


def with_tracereplay() -> str:
    with tracereplay.agent_run(
        "weather_agent", QUERY, context=CONTEXT, parameters=PARAMETERS
    ) as run:
        with run.llm_call(model="gpt-4o-mini", messages=MESSAGES, provider="openai") as llm:
            completion = COMPLETION
            llm.set_openai_response(completion)
        for _, _, args in calls_of(completion):
            traced_weather(**args)
        run.set_response(ANSWER)
    return ANSWER


# ---------------------------------------------------------------------------- (b) by hand
def by_hand(tracer: Tracer, dumps: Callable[[Any], str]) -> Callable[[], str]:
    def genai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {"role": m["role"], "parts": [{"type": "text", "content": m["content"]}]}
            for m in messages
        ]

    def run() -> str:
        with tracer.start_as_current_span(
            "invoke_agent weather_agent",
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "weather_agent",
                "gen_ai.input.messages": dumps(genai([{"role": "user", "content": QUERY}])),
                "tracereplay.run.context": dumps(CONTEXT),
                "tracereplay.run.parameters": dumps(PARAMETERS),
            },
        ) as agent:
            with tracer.start_as_current_span(
                "chat gpt-4o-mini",
                kind=SpanKind.CLIENT,
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.input.messages": dumps(genai(MESSAGES)),
                },
            ) as chat:
                completion = COMPLETION
                calls = calls_of(completion)
                choice = completion["choices"][0]
                parts = [
                    {"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in calls
                ]
                chat.set_attribute(
                    "gen_ai.output.messages",
                    dumps([{"role": "assistant", "parts": parts, "finish_reason": "tool_call"}]),
                )
                chat.set_attribute("gen_ai.response.finish_reasons", [choice["finish_reason"]])
                chat.set_attribute("gen_ai.response.model", completion["model"])
                chat.set_attribute("gen_ai.response.id", completion["id"])
                chat.set_attribute(
                    "gen_ai.usage.input_tokens", completion["usage"]["prompt_tokens"]
                )
                chat.set_attribute(
                    "gen_ai.usage.output_tokens", completion["usage"]["completion_tokens"]
                )
            for call_id, name, args in calls:
                with tracer.start_as_current_span(
                    f"execute_tool {name}",
                    kind=SpanKind.INTERNAL,
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": name,
                        "gen_ai.tool.type": "function",
                        "gen_ai.tool.call.id": call_id,
                        "gen_ai.tool.call.arguments": dumps(args),
                    },
                ) as tool:
                    result = weather(**args)
                    tool.set_attribute("gen_ai.tool.call.result", dumps(result))
            agent.set_attribute(
                "gen_ai.output.messages",
                dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [{"type": "text", "content": ANSWER}],
                            "finish_reason": "stop",
                        }
                    ]
                ),
            )
        return ANSWER

    return run


# ---------------------------------------------------------------------------- timing
def per_run_us(fn: Callable[[], str], runs: int, flush: Callable[[], object]) -> float:
    """CPU time of the calling (agent) thread per run: the export thread and time spent
    descheduled by other processes do not count."""
    start = time.thread_time()
    for _ in range(runs):
        fn()
    elapsed = time.thread_time() - start
    flush()  # export outside the timed loop, so every repetition starts with an empty queue
    return elapsed / runs * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=200, help="agent runs per repetition")
    parser.add_argument("--repeat", type=int, default=30, help="timed repetitions per variant")
    args = parser.parse_args()

    null = NullExporter()
    tracereplay.configure(tracer_provider=TracerProvider(), exporter=null)
    hand_provider = TracerProvider()
    hand_provider.add_span_processor(BatchSpanProcessor(null))
    hand_tracer = hand_provider.get_tracer("by-hand")

    variants: dict[str, tuple[Callable[[], str], Callable[[], object]]] = {
        "a  tracereplay SDK": (with_tracereplay, tracereplay.flush),
        "b  by hand, json": (by_hand(hand_tracer, json.dumps), hand_provider.force_flush),
        "b' by hand, orjson": (
            by_hand(hand_tracer, lambda v: orjson.dumps(v).decode()),
            hand_provider.force_flush,
        ),
        "c  uninstrumented": (uninstrumented, lambda: None),
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for fn, flush in variants.values():  # warm up
        per_run_us(fn, max(1, args.runs // 10), flush)
    for _ in range(args.repeat):  # interleaved, so drift hits every variant alike
        for name, (fn, flush) in variants.items():
            samples[name].append(per_run_us(fn, args.runs, flush))

    best = {name: min(values) for name, values in samples.items()}
    median = {name: statistics.median(values) for name, values in samples.items()}
    print(f"one agent run = 1 LLM call + 5 tool calls (7 spans); {args.runs} runs x {args.repeat}")
    print(f"  {'':<20} {'best':>9}  {'median':>9}  (us of agent-thread CPU per run)")
    for name in samples:
        print(f"  {name:<20} {best[name]:9.1f}  {median[name]:9.1f}")
    a, b, b2 = "a  tracereplay SDK", "b  by hand, json", "b' by hand, orjson"
    print(f"  a/b  = {best[a] / best[b]:.2f} (best)  {median[a] / median[b]:.2f} (median)")
    ratio = best[a] / best[b2]
    print(f"  a/b' = {ratio:.2f} (best)  {median[a] / median[b2]:.2f} (median)")
    print(f"  target a/b' <= 1.3 (best of {args.repeat}): {'met' if ratio <= 1.3 else 'NOT met'}")
    s = stats()
    print(f"  tracereplay spans exported {s.spans_exported}, dropped {s.spans_dropped}")


if __name__ == "__main__":
    main()
