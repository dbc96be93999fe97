"""A recorded LLM answer rebuilt in the wire format of the API the replay asked: OpenAI Chat
Completions, OpenAI Responses, Anthropic Messages, Gemini ``generateContent``, Bedrock Converse,
Cohere v2 chat; as one JSON body, or as the stream the request asked (``"stream": true``,
Gemini's ``:streamGenerateContent``, Bedrock's ``/converse-stream``): server-sent events, or
for Bedrock the binary frames of ``application/vnd.amazon.eventstream``."""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracereplay.replay.answering.llm.endpoints import Endpoint, as_endpoint
from tracereplay.replay.answering.llm.recording import RecordedCall


def _dumps(value: Any) -> bytes:
    """``value`` as JSON: orjson, or the standard library for what orjson refuses (an integer
    beyond 64 bits in recorded arguments, which must go out as it was recorded)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


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
                arguments = _dumps(arguments if arguments is not None else {}).decode()
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


#: the line breaks JSON leaves as they are that a client splitting a stream into lines as
#: ``str.splitlines`` does (httpx's ``iter_lines``) would break a ``data:`` line at
_LINE_BREAKS = tuple((c.encode(), f"\\u{ord(c):04x}".encode()) for c in "\x85\u2028\u2029")


def _sse(events: list[tuple[str | None, dict[str, Any]]], done: bool) -> bytes:
    out = bytearray()
    for name, payload in events:
        if name:
            out += f"event: {name}\n".encode()
        data = _dumps(payload)
        for raw, escaped in _LINE_BREAKS:
            data = data.replace(raw, escaped)
        out += b"data: " + data + b"\n\n"
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
    # each tool call whole in one chunk (id, name, all its arguments): what Mistral's, Groq's
    # and vLLM's streams send, and what an OpenAI client puts together as well as pieces; a
    # client that does not join argument pieces (a hand-written Mistral loop) reads it right
    for i, c in enumerate(a.tool_calls):
        call = {"name": c["name"], "arguments": c["arguments"]}
        events.append(
            chunk(
                {"tool_calls": [{"index": i, "id": c["id"], "type": "function", "function": call}]}
            )
        )
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


def _input_of(arguments: str) -> Any:
    """A tool call's arguments as the JSON object the APIs that want one send (read by the
    standard library: orjson reads an integer beyond 64 bits as a float, which would change the
    recorded arguments)."""
    try:
        return json.loads(arguments or "{}")
    except ValueError:
        return {"input": arguments}


def anthropic_body(a: Answer, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if a.text:
        content.append({"type": "text", "text": a.text})
    for c in a.tool_calls:
        content.append(
            {
                "type": "tool_use",
                "id": c["id"],
                "name": c["name"],
                "input": _input_of(c["arguments"]),
            }
        )
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
                "partial_json": _dumps(block["input"]).decode(),
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


# ---------------------------------------------------------------------- Gemini
_GEMINI_FINISH = {"length": "MAX_TOKENS", "content_filter": "SAFETY"}  # else STOP
#: the id ``answer_of`` makes up for a recorded tool call without one
_MADE_UP_ID = "call_replay_"


def _gemini_usage(a: Answer) -> dict[str, int]:
    return {
        "promptTokenCount": a.input_tokens,
        "candidatesTokenCount": a.output_tokens,
        "totalTokenCount": a.input_tokens + a.output_tokens,
    }


def _gemini_call(c: dict[str, Any]) -> dict[str, Any]:
    call = {"name": c["name"], "args": _input_of(c["arguments"])}
    if not c["id"].startswith(_MADE_UP_ID):  # the Gemini API names its calls only at times
        call["id"] = c["id"]
    return {"functionCall": call}


def _gemini_chunk(a: Answer, model: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
        "modelVersion": a.model or model,
        "responseId": a.ident,
    }


def gemini_body(a: Answer, model: str) -> dict[str, Any]:
    parts = ([{"text": a.text}] if a.text else []) + [_gemini_call(c) for c in a.tool_calls]
    body = _gemini_chunk(a, model, parts or [{"text": ""}])
    body["candidates"][0]["finishReason"] = _GEMINI_FINISH.get(a.finish, "STOP")
    body["usageMetadata"] = _gemini_usage(a)
    return body


def gemini_chunks(a: Answer, model: str) -> list[dict[str, Any]]:
    """The responses of a ``streamGenerateContent`` call: the text in pieces, then the function
    calls; the last one says why it stopped and what it cost."""
    chunks = [_gemini_chunk(a, model, [{"text": piece}]) for piece in _pieces(a.text)]
    if a.tool_calls:
        chunks.append(_gemini_chunk(a, model, [_gemini_call(c) for c in a.tool_calls]))
    if not chunks:
        chunks.append(_gemini_chunk(a, model, [{"text": ""}]))
    chunks[-1]["candidates"][0]["finishReason"] = _GEMINI_FINISH.get(a.finish, "STOP")
    chunks[-1]["usageMetadata"] = _gemini_usage(a)
    return chunks


# ---------------------------------------------------------------------- Bedrock Converse
_BEDROCK_STOP = {"tool_calls": "tool_use", "length": "max_tokens", "stop": "end_turn",
                 "content_filter": "content_filtered"}  # fmt: skip


def _bedrock_usage(a: Answer) -> dict[str, int]:
    return {
        "inputTokens": a.input_tokens,
        "outputTokens": a.output_tokens,
        "totalTokens": a.input_tokens + a.output_tokens,
    }


def bedrock_body(a: Answer) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"text": a.text}] if a.text or not a.tool_calls else []
    for c in a.tool_calls:
        use = {"toolUseId": c["id"], "name": c["name"], "input": _input_of(c["arguments"])}
        content.append({"toolUse": use})
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _BEDROCK_STOP.get(a.finish, "end_turn"),
        "usage": _bedrock_usage(a),
        "metrics": {"latencyMs": 0},
    }


def event_frame(event: str, payload: dict[str, Any]) -> bytes:
    """One ``application/vnd.amazon.eventstream`` message: the prelude (total length, headers
    length, their CRC32), the headers (string values), the JSON payload, the message's CRC32."""
    headers = bytearray()
    for name, value in ((":event-type", event), (":content-type", "application/json"),
                        (":message-type", "event")):  # fmt: skip
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    body = _dumps(payload)
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + bytes(headers) + body
    return message + struct.pack(">I", zlib.crc32(message))


def bedrock_events(a: Answer) -> list[tuple[str, dict[str, Any]]]:
    """The events of a ConverseStream answer (``ConverseStreamOutput``'s members)."""
    events: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
    index = 0
    if a.text or not a.tool_calls:
        for piece in _pieces(a.text) or [""]:
            events.append(("contentBlockDelta", {"delta": {"text": piece}, "contentBlockIndex": 0}))
        events.append(("contentBlockStop", {"contentBlockIndex": 0}))
        index = 1
    for i, c in enumerate(a.tool_calls, start=index):
        start = {"toolUse": {"toolUseId": c["id"], "name": c["name"]}}
        events.append(("contentBlockStart", {"start": start, "contentBlockIndex": i}))
        arguments = _dumps(_input_of(c["arguments"])).decode()
        delta = {"toolUse": {"input": arguments}}
        events.append(("contentBlockDelta", {"delta": delta, "contentBlockIndex": i}))
        events.append(("contentBlockStop", {"contentBlockIndex": i}))
    events.append(("messageStop", {"stopReason": _BEDROCK_STOP.get(a.finish, "end_turn")}))
    events.append(("metadata", {"usage": _bedrock_usage(a), "metrics": {"latencyMs": 0}}))
    return events


def bedrock_stream(a: Answer) -> bytes:
    return b"".join(event_frame(name, payload) for name, payload in bedrock_events(a))


# ---------------------------------------------------------------------- Cohere v2 chat
_COHERE_FINISH = {"tool_calls": "TOOL_CALL", "length": "MAX_TOKENS", "stop": "COMPLETE",
                  "content_filter": "ERROR"}  # fmt: skip


def _cohere_usage(a: Answer) -> dict[str, Any]:
    tokens = {"input_tokens": a.input_tokens, "output_tokens": a.output_tokens}
    return {"billed_units": dict(tokens), "tokens": tokens}


def _cohere_call(c: dict[str, Any], arguments: str) -> dict[str, Any]:
    return {
        "id": c["id"],
        "type": "function",
        "function": {"name": c["name"], "arguments": arguments},
    }


def cohere_body(a: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if a.text:
        message["content"] = [{"type": "text", "text": a.text}]
    if a.tool_calls:
        message["tool_calls"] = [_cohere_call(c, c["arguments"]) for c in a.tool_calls]
    return {
        "id": a.ident,
        "finish_reason": _COHERE_FINISH.get(a.finish, "COMPLETE"),
        "message": message,
        "usage": _cohere_usage(a),
    }


def cohere_stream(a: Answer) -> bytes:
    empty = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    events: list[dict[str, Any]] = [
        {"type": "message-start", "id": a.ident, "delta": {"message": empty}}
    ]
    if a.text:
        start = {"message": {"content": {"type": "text", "text": ""}}}
        events.append({"type": "content-start", "index": 0, "delta": start})
        for piece in _pieces(a.text):
            delta = {"message": {"content": {"text": piece}}}
            events.append({"type": "content-delta", "index": 0, "delta": delta})
        events.append({"type": "content-end", "index": 0})
    for i, c in enumerate(a.tool_calls):
        start = {"message": {"tool_calls": _cohere_call(c, "")}}
        events.append({"type": "tool-call-start", "index": i, "delta": start})
        delta = {"message": {"tool_calls": {"function": {"arguments": c["arguments"]}}}}
        events.append({"type": "tool-call-delta", "index": i, "delta": delta})
        events.append({"type": "tool-call-end", "index": i})
    finish = _COHERE_FINISH.get(a.finish, "COMPLETE")
    events.append(
        {"type": "message-end", "delta": {"finish_reason": finish, "usage": _cohere_usage(a)}}
    )
    return _sse([(e["type"], e) for e in events], done=False)


# ---------------------------------------------------------------------- one entry point
def recorded_response(
    api: str | Endpoint, call: RecordedCall, number: int, request: dict[str, Any]
) -> tuple[bytes, str]:
    """(body, content type) of the recorded answer to ``request`` (of ``api``: its name, or the
    ``Endpoint`` its URL shows)."""
    where = as_endpoint(api)
    a = answer_of(call, number)
    model = where.model or str(request.get("model") or "")
    stream = where.stream or bool(request.get("stream"))
    if where.api == "chat":
        if stream:
            usage = bool((request.get("stream_options") or {}).get("include_usage"))
            return chat_stream(a, model, usage), "text/event-stream"
        return _dumps(chat_body(a, model)), "application/json"
    if where.api == "responses":
        body = responses_body(a, model, request)
        if stream:
            return responses_stream(body), "text/event-stream"
        return _dumps(body), "application/json"
    if where.api == "gemini":
        if not stream:
            return _dumps(gemini_body(a, model)), "application/json"
        if where.sse:
            return _sse(
                [(None, c) for c in gemini_chunks(a, model)], done=False
            ), "text/event-stream"
        return _dumps(gemini_chunks(a, model)), "application/json"
    if where.api == "bedrock":
        if stream:
            return bedrock_stream(a), "application/vnd.amazon.eventstream"
        return _dumps(bedrock_body(a)), "application/json"
    if where.api == "cohere":
        if stream:
            return cohere_stream(a), "text/event-stream"
        return _dumps(cohere_body(a)), "application/json"
    body = anthropic_body(a, model)
    if stream:
        return anthropic_stream(body), "text/event-stream"
    return _dumps(body), "application/json"


_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                  404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                  503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}  # fmt: skip
_AWS_ERROR = {403: "AccessDeniedException", 404: "ResourceNotFoundException",
              429: "ThrottlingException", 500: "InternalServerException",
              503: "ServiceUnavailableException"}  # fmt: skip


def error_body(api: str, message: str, kind: str, status: int = 400) -> bytes:
    """An API error body (the shape the API's client reads the message from)."""
    if api == "anthropic":
        return _dumps({"type": "error", "error": {"type": kind, "message": message}})
    if api == "gemini":
        google = _GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
        return _dumps({"error": {"code": status, "message": message, "status": google}})
    if api in ("bedrock", "cohere"):
        return _dumps({"message": message})
    return _dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})


def token_count_body(api: str, request: bytes) -> bytes:
    """The offline answer to a token-counting request (``endpoints.token_count``): an estimate,
    one token per four bytes of the request's body, in the API's shape. The counts are not
    recorded (no span says them), and an agent uses one to budget its context, not to answer."""
    tokens = max(1, len(request) // 4)
    if api == "anthropic":
        return _dumps({"input_tokens": tokens})
    if api == "gemini":
        return _dumps({"totalTokens": tokens})
    return _dumps({"object": "response.input_tokens", "input_tokens": tokens})


def reply_headers(api: str, status: int, content_type: str) -> dict[str, str]:
    """The headers of an answer to a request of ``api`` (``x-should-retry: false``: the OpenAI
    and Anthropic clients do not retry an error; Bedrock's client reads an error's type from
    ``x-amzn-errortype``)."""
    headers = {"content-type": content_type, "x-should-retry": "false", "x-tracereplay": "recorded"}
    if api == "bedrock" and status >= 400:
        default = "InternalServerException" if status >= 500 else "ValidationException"
        headers["x-amzn-errortype"] = _AWS_ERROR.get(status, default)
    return headers
