"""Message and payload forms that agent frameworks write into span attributes and events.

- LangChain messages, serialized (``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
  "kwargs": {...}}``), dumped (``{"type": "ai", "data": {...}}``) or as ``(role, text)`` pairs;
- Converse content blocks (strands, Bedrock): ``{"text": ...}``, ``{"toolUse": {"toolUseId",
  "name", "input"}}``, ``{"toolResult": {"toolUseId", "status", "content": [blocks]}}``;
- a tool's output wrapped by the framework: a LangChain ``ToolMessage``, ``{"output": ...}``, a
  list of content blocks.

Everything here turns such a value into the plain forms the rest of the converter reads (OpenAI
chat messages, GenAI parts, text), and returns ``None`` for a value it does not recognise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tracereplay.convert.values import as_name, as_text, decoded

_LC_ROLES = {
    "human": "user",
    "humanmessage": "user",
    "humanmessagechunk": "user",
    "ai": "assistant",
    "aimessage": "assistant",
    "aimessagechunk": "assistant",
    "tool": "tool",
    "toolmessage": "tool",
    "toolmessagechunk": "tool",
    "system": "system",
    "systemmessage": "system",
    "function": "function",
    "functionmessage": "function",
    "chat": "user",
}
_PAIR_ROLES = {"user", "human", "assistant", "ai", "system", "tool"}


def _lc_fields(value: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """``(role, fields)`` of a serialized or dumped LangChain message, else ``None``."""
    if value.get("lc") == 1 and isinstance(value.get("kwargs"), dict):
        ident = value.get("id")
        cls = ident[-1] if isinstance(ident, list) and ident else ""
        kwargs = value["kwargs"]
        role = _LC_ROLES.get(as_name(cls).lower()) or _LC_ROLES.get(as_name(kwargs.get("type")))
        return (role, kwargs) if role else None
    data = value.get("data")
    if isinstance(data, dict) and "content" in data:
        role = _LC_ROLES.get(as_name(value.get("type")).lower())
        return (role, data) if role else None
    return None


def langchain_message(value: Any) -> dict[str, Any] | None:
    """A LangChain message (serialized, dumped or a ``(role, text)`` pair) as an OpenAI-style
    chat message (``role``, ``content``, ``tool_calls``, ``tool_call_id``), else ``None``."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], str):
        role = as_name(value[0]).lower()
        if role in _PAIR_ROLES:
            return {"role": _LC_ROLES.get(role, role), "content": value[1]}
        return None
    if not isinstance(value, dict):
        return None
    found = _lc_fields(value)
    if found is None:
        return None
    role, fields = found
    message: dict[str, Any] = {"role": role, "content": fields.get("content")}
    calls = fields.get("tool_calls")
    if isinstance(calls, list) and calls:
        message["tool_calls"] = [
            {
                "id": call.get("id"),
                "function": {"name": call.get("name"), "arguments": call.get("args", {})},
            }
            if isinstance(call, dict) and "args" in call
            else call
            for call in calls
        ]
    if role == "tool":
        message["tool_call_id"] = fields.get("tool_call_id")
        if fields.get("status") == "error":
            message["status"] = "error"
    return message


def converse_part(block: dict[str, Any]) -> dict[str, Any] | None:
    """A Converse ``toolUse`` / ``toolResult`` content block as a GenAI part, else ``None``."""
    use = block.get("toolUse")
    if isinstance(use, dict):
        return {
            "type": "tool_call",
            "id": as_name(use.get("toolUseId")),
            "name": as_name(use.get("name")),
            "arguments": decoded(use.get("input")),
        }
    result = block.get("toolResult")
    if isinstance(result, dict):
        part = {
            "type": "tool_call_response",
            "id": as_name(result.get("toolUseId")),
            "response": blocks_text(result.get("content")),
        }
        if result.get("status") == "error":
            part["status"] = "error"
        return part
    return None


def blocks_text(value: Any) -> str:
    """The text of a content-block list (``[{"text": ...}, {"json": ...}]``) joined, or the
    value as text when it is not one."""
    value = decoded(value)
    if isinstance(value, list) and value and all(isinstance(b, dict) for b in value):
        texts = []
        for block in value:
            if "text" in block:
                texts.append(as_text(block["text"]))
            elif "json" in block:
                texts.append(as_text(block["json"]))
            elif "content" in block:
                texts.append(as_text(block["content"]))
        return "".join(texts)
    return as_text(value)


def is_block_list(value: Any) -> bool:
    """A list of content blocks with text and no roles (a Converse message's content)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(b, dict) and "role" not in b for b in value)
        and any("text" in b for b in value)
    )


_MAYBE_WRAPPED = re.compile(r'"(?:outputs?|lc|data|result|error|toolResult|text|content|json)"')


@dataclass(slots=True)
class ToolOutput:
    """A tool's output as the tool returned it: its text, the call id and whether it failed,
    when the framework's wrapper says so."""

    text: str
    call_id: str = ""
    error: bool = False


def tool_output(value: Any) -> ToolOutput:
    """What a tool returned, taken out of the framework's wrapper (a LangChain ``ToolMessage``,
    ``{"output": ...}``, content blocks, a ``toolResult`` block); other values as text (a
    string as it came)."""
    if type(value) is str and _MAYBE_WRAPPED.search(value) is None:
        return ToolOutput(value)  # plain text, or JSON no wrapper could be in (the common case)
    original = value
    value = first = decoded(value)
    for _ in range(3):  # {"output": ToolMessage} and the like
        if isinstance(value, dict) and set(value) & {"output", "outputs"} and len(value) <= 3:
            inner = value.get("output", value.get("outputs"))
            if isinstance(inner, (dict, list)):
                value = inner
                continue
        break
    message = langchain_message(value) if isinstance(value, dict) else None
    if message is not None and message["role"] == "tool":
        return ToolOutput(
            blocks_text(message.get("content")),
            as_name(message.get("tool_call_id")),
            message.get("status") == "error",
        )
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        part = converse_part(value[0])
        if part is not None and part["type"] == "tool_call_response":
            return ToolOutput(part["response"], part["id"], part.get("status") == "error")
    if is_block_list(value):
        return ToolOutput(blocks_text(value))
    if isinstance(value, dict) and len(value) == 1:
        # a return value the framework wrapped ({"result": x}), or the error it reported
        if "result" in value:
            inner = value["result"]
            return ToolOutput("" if inner is None else as_text(inner))
        if "error" in value and value["error"]:
            return ToolOutput(as_text(value["error"]), error=True)
    if isinstance(original, str) and value is first:
        return ToolOutput(original)
    return ToolOutput(as_text(value))


def tool_result(info_result: Any) -> tuple[str | None, str, str | None]:
    """``(result text, call id, error)`` from a tool span's recorded output (``None``: none
    recorded)."""
    if info_result is None:
        return None, "", None
    out = tool_output(info_result)
    return out.text, out.call_id, (out.text or "error") if out.error else None


def tool_arguments(value: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(arguments, fallback)`` from a tool span's recorded input: a JSON object is the
    arguments; a bare value (a one-argument tool's input) is only a fallback, since the LLM's
    request names the argument."""
    if value is None:
        return None, None
    value = decoded(value)
    if isinstance(value, dict):
        return value, None
    if value == "":
        return None, {}
    return None, {"input": value}
