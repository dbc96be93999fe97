"""A recorded LLM answer rebuilt in the wire format of the API the replay asked: OpenAI Chat
Completions, OpenAI Responses, Anthropic Messages; as one JSON body, or as the server-sent
events of a stream when the request asked ``"stream": true``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from tracereplay.evaluate.replay.llm.recording import RecordedCall


@dataclass
class Answer:
    """What the recorded call said: text, tool calls, why it stopped, what it cost."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"id","name","arguments"}
    finish: str = "stop"  # "stop", "tool_calls", "length", "content_filter"
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    ident: str = "replay"


_LENGTH = {"length", "max_tokens", "max_output_tokens", "token_limit"}
_FILTER = {"content_filter", "safety", "refusal"}


def answer_of(call: RecordedCall, number: int) -> Answer:
    """The recorded output of ``call`` (``number``: the replay's call number, for ids)."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    # the assistant's output (the Responses API records one message per output item; choices
    # beyond the first are not replayed: agents ask for one)
    messages = [m for m in call.output_messages if m.get("role") in (None, "assistant", "model")]
    parts = [p for m in messages or call.output_messages[:1] for p in m.get("parts") or []]
    message = messages[0] if messages else {}
    for part in parts:
        kind = part.get("type")
        if kind == "text" and part.get("content"):
            texts.append(str(part["content"]))
        elif kind == "tool_call":
            arguments = part.get("arguments")
            if not isinstance(arguments, str):
                arguments = orjson.dumps(arguments if arguments is not None else {}).decode()
            calls.append(
                {
                    "id": str(part.get("id") or f"call_replay_{number}_{len(calls)}"),
                    "name": str(part.get("name") or ""),
                    "arguments": arguments,
                }
            )
    reason = (call.finish_reason or str(message.get("finish_reason") or "")).lower()
    finish = (
        "tool_calls"
        if calls
        else "length"
        if reason in _LENGTH
        else "content_filter"
        if reason in _FILTER
        else "stop"
    )
    return Answer(
        text="".join(texts),
        tool_calls=calls,
        finish=finish,
        model=call.model or call.request_model,
        input_tokens=call.input_tokens or 0,
        output_tokens=call.output_tokens or 0,
        ident=f"replay-{number:04d}",
    )


def _sse(events: list[tuple[str | None, dict[str, Any]]], done: bool) -> bytes:
    out = bytearray()
    for name, payload in events:
        if name:
            out += f"event: {name}\n".encode()
        out += b"data: " + orjson.dumps(payload) + b"\n\n"
    if done:
        out += b"data: [DONE]\n\n"
    return bytes(out)


def _pieces(text: str, size: int = 24) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


# ---------------------------------------------------------------------- Chat Completions
def chat_body(a: Answer, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": a.text or None, "refusal": None}
    if a.tool_calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in a.tool_calls
        ]
    return {
        "id": f"chatcmpl-{a.ident}",
        "object": "chat.completion",
        "created": 0,
        "model": a.model or model,
        "choices": [{"index": 0, "message": message, "finish_reason": a.finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": a.input_tokens,
            "completion_tokens": a.output_tokens,
            "total_tokens": a.input_tokens + a.output_tokens,
        },
    }


def chat_stream(a: Answer, model: str, include_usage: bool) -> bytes:
    base = {
        "id": f"chatcmpl-{a.ident}",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": a.model or model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    events = [chunk({"role": "assistant", "content": ""})]
    for piece in _pieces(a.text):
        events.append(chunk({"content": piece}))
    for i, c in enumerate(a.tool_calls):
        head = {"index": i, "id": c["id"], "type": "function"}
        events.append(
            chunk({"tool_calls": [{**head, "function": {"name": c["name"], "arguments": ""}}]})
        )
        for piece in _pieces(c["arguments"]):
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    events.append(chunk({}, a.finish))
    if include_usage:
        events.append(
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": a.input_tokens,
                    "completion_tokens": a.output_tokens,
                    "total_tokens": a.input_tokens + a.output_tokens,
                },
            }
        )
    return _sse([(None, e) for e in events], done=True)


# ---------------------------------------------------------------------- Responses
def responses_body(a: Answer, model: str, request: dict[str, Any]) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if a.text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{a.ident}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": a.text, "annotations": []}],
            }
        )
    for i, c in enumerate(a.tool_calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{a.ident}_{i}",
                "call_id": c["id"],
                "name": c["name"],
                "arguments": c["arguments"],
                "status": "completed",
            }
        )
    incomplete = a.finish == "length"
    return {
        "id": f"resp_{a.ident}",
        "object": "response",
        "created_at": 0,
        "status": "incomplete" if incomplete else "completed",
        "model": a.model or model,
        "output": output,
        "parallel_tool_calls": bool(request.get("parallel_tool_calls", True)),
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools") or [],
        "temperature": request.get("temperature"),
        "top_p": request.get("top_p"),
        "instructions": request.get("instructions"),
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "metadata": {},
        "text": {"format": {"type": "text"}},
        "truncation": "disabled",
        "usage": {
            "input_tokens": a.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": a.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": a.input_tokens + a.output_tokens,
        },
    }


def responses_stream(body: dict[str, Any]) -> bytes:
    started = dict(body, status="in_progress", output=[], usage=None)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": started},
        {"type": "response.in_progress", "response": started},
    ]
    for index, item in enumerate(body["output"]):
        if item["type"] == "message":
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": dict(item, status="in_progress", content=[]),
                }
            )
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            events.append(
                {
                    "type": "response.content_part.added",
                    **where,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                }
            )
            text = item["content"][0]["text"]
            for piece in _pieces(text):
                events.append(
                    {"type": "response.output_text.delta", **where, "delta": piece, "logprobs": []}
                )
            events.append(
                {"type": "response.output_text.done", **where, "text": text, "logprobs": []}
            )
            events.append(
                {"type": "response.content_part.done", **where, "part": item["content"][0]}
            )
        else:
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": dict(item, status="in_progress", arguments=""),
                }
            )
            where = {"item_id": item["id"], "output_index": index}
            events.append(
                {
                    "type": "response.function_call_arguments.delta",
                    **where,
                    "delta": item["arguments"],
                }
            )
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    **where,
                    "arguments": item["arguments"],
                }
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    final = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    events.append({"type": final, "response": body})
    for seq, event in enumerate(events):
        event["sequence_number"] = seq
    return _sse([(e["type"], e) for e in events], done=False)


# ---------------------------------------------------------------------- Anthropic Messages
_ANTHROPIC_STOP = {"tool_calls": "tool_use", "length": "max_tokens", "stop": "end_turn",
                   "content_filter": "refusal"}  # fmt: skip


def anthropic_body(a: Answer, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if a.text:
        content.append({"type": "text", "text": a.text})
    for c in a.tool_calls:
        try:
            arguments = orjson.loads(c["arguments"] or "{}")
        except orjson.JSONDecodeError:
            arguments = {"input": c["arguments"]}
        content.append({"type": "tool_use", "id": c["id"], "name": c["name"], "input": arguments})
    return {
        "id": f"msg_{a.ident}",
        "type": "message",
        "role": "assistant",
        "model": a.model or model,
        "content": content,
        "stop_reason": _ANTHROPIC_STOP.get(a.finish, "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": a.input_tokens, "output_tokens": a.output_tokens},
    }


def anthropic_stream(body: dict[str, Any]) -> bytes:
    start = dict(
        body,
        content=[],
        stop_reason=None,
        usage={"input_tokens": body["usage"]["input_tokens"], "output_tokens": 0},
    )
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            for piece in _pieces(block["text"]):
                delta = {"type": "text_delta", "text": piece}
                events.append(
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
                )
        else:
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": dict(block, input={}),
                    },
                )
            )
            delta = {
                "type": "input_json_delta",
                "partial_json": orjson.dumps(block["input"]).decode(),
            }
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": body["usage"]["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(list(events), done=False)


# ---------------------------------------------------------------------- one entry point
def recorded_response(
    api: str, call: RecordedCall, number: int, request: dict[str, Any]
) -> tuple[bytes, str]:
    """(body, content type) of the recorded answer to ``request``."""
    a = answer_of(call, number)
    model = str(request.get("model") or "")
    stream = bool(request.get("stream"))
    if api == "chat":
        if stream:
            usage = bool((request.get("stream_options") or {}).get("include_usage"))
            return chat_stream(a, model, usage), "text/event-stream"
        return orjson.dumps(chat_body(a, model)), "application/json"
    if api == "responses":
        body = responses_body(a, model, request)
        if stream:
            return responses_stream(body), "text/event-stream"
        return orjson.dumps(body), "application/json"
    body = anthropic_body(a, model)
    if stream:
        return anthropic_stream(body), "text/event-stream"
    return orjson.dumps(body), "application/json"


def error_body(api: str, message: str, kind: str) -> bytes:
    """An API error body (the shape the API's client reads the message from)."""
    if api == "anthropic":
        return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})
    return orjson.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})
