"""A three-turn conversation as a chat assistant's GenAI telemetry records it (issue 54): one
trace per turn, ``gen_ai.conversation.id`` on every span, each turn's LLM input holding the
earlier turns. Written as an OTLP/JSON file for ``ingest``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tracereplay.convert import run_id_for
from tracereplay.otlp.json_encode import encode_traces_json
from tracereplay.spans import Span

SESSION = "conv-paris"
SYSTEM = "You are a weather assistant."
TURNS = [
    ("What's the weather in Paris?", "Rainy, 12 °C in Paris."),
    ("And tomorrow?", "Tomorrow Paris stays rainy, 11 °C."),
    ("Should I take an umbrella then?", "Yes, take an umbrella."),
]
T0 = 1_790_000_000_000_000_000
MINUTE = 60 * 10**9
MS = 10**6


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _json(messages: list[dict[str, Any]]) -> str:
    return orjson.dumps(messages).decode()


def _turn(n: int, session: str | None, trace_id: str) -> list[Span]:
    """Turn ``n`` (0-based): the agent span, a weather tool call and two LLM calls."""
    question, answer = TURNS[n]
    start = T0 + n * MINUTE
    common = {"gen_ai.conversation.id": session} if session else {}
    history = [_text("system", SYSTEM)]
    for q, a in TURNS[:n]:
        history += [_text("user", q), _text("assistant", a)]
    ask = history + [_text("user", question)]
    call = {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": f"c{n}", "name": "get_weather", "arguments": {}}],
    }
    result = {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": f"c{n}", "response": "rain"}],
    }

    def span(i: int, parent: str, name: str, a: float, b: float, attrs: dict) -> Span:
        return Span(
            trace_id=trace_id,
            span_id=f"{n + 1:04x}{i:012x}",
            parent_span_id=parent,
            name=name,
            kind=1,
            start_ns=start + int(a * MS),
            end_ns=start + int(b * MS),
            attributes={**common, **attrs},
            service_name="chat-app",
        )

    root = span(
        1,
        "",
        "invoke_agent weather_chat",
        0,
        100,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "weather_chat",
            "gen_ai.input.messages": _json([_text("user", question)]),
            "gen_ai.output.messages": _json([_text("assistant", answer)]),
        },
    )
    llm = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}
    return [
        root,
        span(
            2,
            root.span_id,
            "chat gpt-4o-mini",
            10,
            30,
            {
                **llm,
                "gen_ai.input.messages": _json(ask),
                "gen_ai.output.messages": _json([call]),
            },
        ),
        span(
            3,
            root.span_id,
            "execute_tool get_weather",
            31,
            40,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": f"c{n}",
                "gen_ai.tool.call.result": "rain",
            },
        ),
        span(
            4,
            root.span_id,
            "chat gpt-4o-mini",
            41,
            90,
            {
                **llm,
                "gen_ai.input.messages": _json([*ask, call, result]),
                "gen_ai.output.messages": _json([_text("assistant", answer)]),
            },
        ),
    ]


def trace_id(n: int) -> str:
    return f"{n + 1:02x}" * 16


def conversation_spans(session: str | None = SESSION, traces: int = 0) -> list[Span]:
    """The three turns' spans, turn by turn (the traces ``trace_id(traces + 0..2)``)."""
    return [s for n in range(len(TURNS)) for s in _turn(n, session, trace_id(traces + n))]


def turn_run_ids() -> list[str]:
    """The run ids the converter gives the three turns, in order."""
    return [run_id_for(trace_id(n), f"{n + 1:04x}{1:012x}") for n in range(len(TURNS))]


def write_conversation(path: Path, session: str | None = SESSION, traces: int = 0) -> Path:
    """The conversation as an OTLP/JSON file ``ingest`` reads; turns written last first (the
    order of arrival is not the order of the turns). ``traces``: where its trace ids start
    (another conversation of the same store starts at 3)."""
    spans = conversation_spans(session, traces)
    path.write_bytes(encode_traces_json(list(reversed(spans))))
    return path
