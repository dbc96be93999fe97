"""Helpers for the converter tests: fixture loading (through the real OTLP decoders) and a small
builder for synthetic spans."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson

from tracereplay.otlp import decode_file_content, decode_logs_json
from tracereplay.spans import LogRecord, Span

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "otlp"

QUESTION = "What's the weather and population in San Francisco?"
ANSWER = (
    "In San Francisco it is foggy and 14 °C. "
    "I could not get the population: the population service timed out."
)
WEATHER_ID = "call_S1xa8vawU2HXSrvSeUcqSCZm"
POPULATION_ID = "call_ZfEORmbRGEJZ4b7dAuVSPnaf"
V136_SPANS = "generated-otel-genai-v1.36-default__chat_spans"
V136_LOGS = "generated-otel-genai-v1.36-default__events.logs.json"


def load_spans(name: str) -> list[Span]:
    """All spans of a trace fixture file (``.json``, ``.pb`` or ``.jsonl``)."""
    return decode_file_content((FIXTURES / name).read_bytes()).spans


def load_logs(name: str) -> list[LogRecord]:
    return decode_logs_json((FIXTURES / name).read_bytes()).logs


def load_attributes(name: str) -> dict[str, Any]:
    """A flat attribute-map fixture (the upstream single-span files)."""
    return orjson.loads((FIXTURES / name).read_bytes())


def by_trace(spans: list[Span]) -> dict[str, list[Span]]:
    out: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        out[span.trace_id].append(span)
    return dict(out)


MS = 1_000_000
T0 = 1_790_000_000_000_000_000


class Trace:
    """Builds the spans of one synthetic trace; times are in milliseconds from ``T0``."""

    def __init__(self, trace_id: str = "ab" * 16) -> None:
        self.trace_id = trace_id
        self.spans: list[Span] = []

    def span(
        self,
        name: str,
        attrs: dict[str, Any] | None = None,
        *,
        parent: Span | None = None,
        start: float = 0,
        end: float = 1,
        status: int = 0,
        message: str = "",
        events: list[dict[str, Any]] | None = None,
        service: str = "svc",
    ) -> Span:
        span = Span(
            trace_id=self.trace_id,
            span_id=f"{len(self.spans) + 1:016x}",
            parent_span_id=parent.span_id if parent is not None else "",
            name=name,
            kind=1,
            start_ns=T0 + int(start * MS),
            end_ns=T0 + int(end * MS),
            status_code=status,
            status_message=message,
            attributes=dict(attrs or {}),
            events=list(events or []),
            service_name=service,
        )
        self.spans.append(span)
        return span


def genai_messages(*messages: dict[str, Any]) -> str:
    return orjson.dumps(list(messages)).decode()


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": text}]}


def calls(*items: tuple[str, str, Any]) -> dict[str, Any]:
    """An assistant message asking for tools: ``(id, name, arguments)`` triples."""
    return {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in items],
    }


def responses(*items: tuple[str, Any]) -> dict[str, Any]:
    return {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": i, "response": r} for i, r in items],
    }


def chat(
    trace: Trace,
    parent: Span | None,
    start: float,
    end: float,
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
    tokens: tuple[int, int] | None = (10, 5),
    **extra: Any,
) -> Span:
    """A GenAI ``chat`` span."""
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
    }
    if tokens is not None:
        attrs["gen_ai.usage.input_tokens"], attrs["gen_ai.usage.output_tokens"] = tokens
    if inputs is not None:
        attrs["gen_ai.input.messages"] = genai_messages(*inputs)
    if outputs is not None:
        attrs["gen_ai.output.messages"] = genai_messages(*outputs)
    attrs.update(extra)
    return trace.span("chat gpt-4o-mini", attrs, parent=parent, start=start, end=end)


def agent(trace: Trace, name: str, parent: Span | None = None, start=0, end=100, **extra) -> Span:
    """A GenAI ``invoke_agent`` span."""
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, **extra}
    return trace.span(f"invoke_agent {name}", attrs, parent=parent, start=start, end=end)


def tool(
    trace: Trace, name: str, parent: Span | None, start: float, end: float, **extra: Any
) -> Span:
    """A GenAI ``execute_tool`` span."""
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **extra}
    return trace.span(f"execute_tool {name}", attrs, parent=parent, start=start, end=end)
