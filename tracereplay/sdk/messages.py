"""Chat messages in the GenAI semantic-conventions JSON shape.

Accepts OpenAI-style chat messages (``{"role", "content", "tool_calls", "tool_call_id"}``, or the
openai client's pydantic objects), messages already in the GenAI shape (``{"role", "parts"}``),
or a bare string (one user message), and returns ``[{"role", "parts": [...]}]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

GenAIMessage = dict[str, Any]

# OpenAI finish reasons -> GenAI output-message finish reasons
_FINISH_REASONS = {"tool_calls": "tool_call", "function_call": "tool_call"}


def as_dict(obj: Any) -> Any:
    """An openai/pydantic object as a plain dict (``None`` fields dropped); others unchanged."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=True)
    return obj


def parse_arguments(arguments: Any) -> Any:
    """Tool-call arguments as an object when they are a JSON string, else unchanged."""
    if isinstance(arguments, (str, bytes)):
        try:
            return orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return arguments
    return arguments


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "content": text}


def tool_call_part(call: Any) -> dict[str, Any]:
    """A ``tool_call`` part from ``{"id","name","arguments"}`` or an OpenAI tool call."""
    call = as_dict(call)
    function = call.get("function")
    if isinstance(function, Mapping):
        name, arguments = function.get("name", ""), function.get("arguments")
    else:
        name, arguments = call.get("name", ""), call.get("arguments")
    part: dict[str, Any] = {"type": "tool_call", "name": name}
    if call.get("id"):
        part["id"] = call["id"]
    part["arguments"] = parse_arguments(arguments) if arguments is not None else {}
    return part


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [text_part(content)] if content else []
    parts: list[dict[str, Any]] = []
    for item in content if isinstance(content, list) else [content]:
        item = as_dict(item)
        if isinstance(item, str):
            parts.append(text_part(item))
        elif isinstance(item, Mapping) and item.get("type") == "text":
            parts.append(text_part(str(item.get("text", item.get("content", "")))))
        elif isinstance(item, Mapping):
            parts.append(dict(item))
        else:
            parts.append(text_part(str(item)))
    return parts


def to_genai_message(message: Any) -> GenAIMessage:
    """One message in the GenAI shape."""
    message = as_dict(message)
    if isinstance(message, str):
        return {"role": "user", "parts": [text_part(message)]}
    if not isinstance(message, Mapping):
        return {"role": "user", "parts": [text_part(str(message))]}
    if "parts" in message:
        return dict(message)
    role = str(message.get("role") or "user")
    out: GenAIMessage = {"role": role}
    if role == "tool":
        part: dict[str, Any] = {"type": "tool_call_response", "response": message.get("content")}
        if message.get("tool_call_id"):
            part["id"] = message["tool_call_id"]
        out["parts"] = [part]
        return out
    parts = _content_parts(message.get("content"))
    for call in message.get("tool_calls") or ():
        parts.append(tool_call_part(call))
    if message.get("function_call"):
        parts.append(tool_call_part(message["function_call"]))
    out["parts"] = parts
    if message.get("name"):
        out["name"] = message["name"]
    return out


def to_genai_messages(messages: Any) -> list[GenAIMessage]:
    """Messages (a list, one message, or a string) in the GenAI shape."""
    if messages is None:
        return []
    if isinstance(messages, (str, Mapping)) or not isinstance(messages, Iterable):
        return [to_genai_message(messages)]
    return [to_genai_message(m) for m in messages]


def output_message(
    content: Any = None,
    tool_calls: Iterable[Any] | None = None,
    finish_reason: str | None = None,
    role: str = "assistant",
) -> GenAIMessage:
    """An output message: text and/or tool calls, with its GenAI finish reason."""
    parts = _content_parts(content)
    calls = [tool_call_part(c) for c in tool_calls or ()]
    parts.extend(calls)
    reason = finish_reason or ("tool_call" if calls else "stop")
    return {"role": role, "parts": parts, "finish_reason": _FINISH_REASONS.get(reason, reason)}


def tool_calls_of(messages: Iterable[GenAIMessage]) -> list[dict[str, Any]]:
    """The ``tool_call`` parts of ``messages``, in order."""
    return [
        part
        for message in messages
        for part in message.get("parts", ())
        if isinstance(part, Mapping) and part.get("type") == "tool_call"
    ]
