"""LangChain's (and LangGraph's) payload forms: messages serialized (``{"lc": 1, "type":
"constructor", "id": [..., "AIMessage"], "kwargs": {...}}``), dumped (``{"type": "ai", "data":
{...}}``) or as ``(role, text)`` pairs, and a ``ToolMessage`` as a tool's output (dumped, or
its ``str()``: ``content='...' name='...' tool_call_id='...'``), whichever instrumentation
recorded them (OpenInference's LangChain tracer, OpenLLMetry's, Langfuse's)."""

from __future__ import annotations

from typing import Any

from tracereplay.convert.forms.base import ToolOutput, blocks_text
from tracereplay.convert.object_reprs import read_fields
from tracereplay.convert.values import as_name

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


def tool_message_repr(value: str) -> ToolOutput | None:
    """A tool's output recorded as ``str(ToolMessage)`` (``content='...' name='...'``)."""
    if not value.startswith("content="):
        return None
    fields = read_fields(value)
    if fields is not None and isinstance(fields.get("content"), (str, list)):
        return ToolOutput(
            blocks_text(fields["content"]),
            as_name(fields.get("tool_call_id")),
            fields.get("status") == "error",
        )
    return None


def tool_message_output(value: Any) -> ToolOutput | None:
    """A tool's output recorded as a LangChain ``ToolMessage`` (serialized or dumped)."""
    message = langchain_message(value) if isinstance(value, dict) else None
    if message is None or message["role"] != "tool":
        return None
    return ToolOutput(
        blocks_text(message.get("content")),
        as_name(message.get("tool_call_id")),
        message.get("status") == "error",
    )
