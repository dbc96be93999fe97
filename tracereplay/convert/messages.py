"""Normalize every message form the conventions use to the GenAI shape.

Output: ``[{"role": str, "parts": [part, ...]}]`` where a part is one of
``{"type": "text", "content": str}``, ``{"type": "tool_call", "id", "name", "arguments"}``,
``{"type": "tool_call_response", "id", "response"}``, or any other typed part kept as it came.

Accepted inputs: GenAI message JSON (string or structured; ``result`` for ``response``, string
``arguments``), OpenAI chat messages (``content`` / ``tool_calls`` / ``tool_call_id``), flattened
indexed attributes (OpenInference ``llm.input_messages.N.message.*``, OpenLLMetry
``gen_ai.prompt.N.*``), and the GenAI <= 1.36 log events (``gen_ai.user.message``,
``gen_ai.choice``...).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tracereplay.convert.values import as_name, as_text, decoded

Message = dict[str, Any]
Part = dict[str, Any]

_TOOL_CALL_TYPES = ("tool_call", "function_call", "tool_use")
_TOOL_RESPONSE_TYPES = ("tool_call_response", "tool_result", "function_call_output")
_TEXT_KEYS = ("input", "query", "question", "message", "prompt", "text", "content", "output")
_TEXT_KEYS += ("answer", "response", "result")


def text_part(content: Any) -> Part:
    return {"type": "text", "content": as_text(content)}


def tool_call_part(call_id: Any, name: Any, arguments: Any) -> Part:
    return {
        "type": "tool_call",
        "id": as_name(call_id),
        "name": as_name(name),
        "arguments": decoded(arguments),
    }


def tool_response_part(call_id: Any, response: Any) -> Part:
    return {"type": "tool_call_response", "id": as_name(call_id), "response": response}


def normalize_part(part: Any) -> Part | None:
    """One GenAI part (or an OpenAI content part) in the normalized shape; ``None`` if unusable."""
    if isinstance(part, str):
        return text_part(part)
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind == "text" or (kind is None and ("content" in part or "text" in part)):
        return text_part(part["content"] if "content" in part else part.get("text"))
    if kind in _TOOL_CALL_TYPES:
        fn = part.get("function")
        if isinstance(fn, dict):  # OpenAI-style part nested one level
            return tool_call_part(part.get("id"), fn.get("name"), fn.get("arguments"))
        args = part["arguments"] if "arguments" in part else part.get("input")
        return tool_call_part(part.get("id", part.get("call_id")), part.get("name"), args)
    if kind in _TOOL_RESPONSE_TYPES:
        for key in ("response", "result", "content", "output"):
            if key in part:
                response = part[key]
                break
        else:
            response = None
        call_id = part.get("id", part.get("tool_use_id", part.get("call_id")))
        return tool_response_part(call_id, response)
    if isinstance(kind, str):
        return dict(part)
    return None


def normalize_parts(raw: list[Any]) -> list[Part]:
    """A part list normalized; parts already in the normalized shape are kept as they are."""
    out = []
    for part in raw:
        if type(part) is dict:
            kind = part.get("type")
            if (
                (kind == "text" and type(part.get("content")) is str)
                or (
                    kind == "tool_call"
                    and type(part.get("id")) is str
                    and type(part.get("name")) is str
                    and type(part.get("arguments", "")) is not str
                )
                or (
                    kind == "tool_call_response"
                    and type(part.get("id")) is str
                    and "response" in part
                )
            ):
                out.append(part)
                continue
        normalized = normalize_part(part)
        if normalized is not None:
            out.append(normalized)
    return out


def _content_parts(content: Any) -> list[Part]:
    if content is None or content == "":
        return []
    if isinstance(content, list):
        return normalize_parts(content)
    return [text_part(content)]


def _openai_tool_calls(calls: Any) -> list[Part]:
    if not isinstance(calls, list):
        return []
    parts = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        fn = call.get("function")
        if isinstance(fn, dict):
            parts.append(tool_call_part(call.get("id"), fn.get("name"), fn.get("arguments")))
        else:
            parts.append(tool_call_part(call.get("id"), call.get("name"), call.get("arguments")))
    return parts


def normalize_message(message: Any, default_role: str = "user") -> Message | None:
    """One message (GenAI ``parts`` form or OpenAI ``content`` form) normalized."""
    if isinstance(message, str):
        return {"role": default_role, "parts": [text_part(message)]}
    if not isinstance(message, dict):
        return None
    role = message.get("role")
    if type(role) is not str or not role:
        role = as_name(role) or default_role
    raw_parts = message.get("parts")
    if type(raw_parts) is list:
        return {"role": role, "parts": normalize_parts(raw_parts)}
    content = message.get("content")
    call_id = message.get("tool_call_id")
    if role in ("tool", "function"):
        if isinstance(content, list) and all(isinstance(p, dict) for p in content):
            content = "".join(as_text(p.get("text", p.get("content"))) for p in content)
        return {"role": role, "parts": [tool_response_part(call_id, content)]}
    parts = _content_parts(content)
    parts.extend(_openai_tool_calls(message.get("tool_calls")))
    fn = message.get("function_call")
    if isinstance(fn, dict):
        parts.append(tool_call_part(None, fn.get("name"), fn.get("arguments")))
    return {"role": role, "parts": parts}


def parse_messages(value: Any, default_role: str = "user") -> tuple[list[Message], str]:
    """Messages from a GenAI messages attribute or any chat payload, plus the first
    ``finish_reason`` found on them (``""`` when none).

    ``value`` may be a JSON string or structured: a list of messages, ``{"messages": [...]}``
    (a request), ``{"choices": [...]}`` (an OpenAI response), ``{"text": ...}``, one message, or
    plain text.
    """
    value = decoded(value)
    finish = ""
    if isinstance(value, dict):
        if isinstance(value.get("messages"), list):
            value = value["messages"]
        elif isinstance(value.get("choices"), list):
            out = []
            for choice in value["choices"]:
                if isinstance(choice, dict):
                    msg = normalize_message(choice.get("message"), "assistant")
                    if msg is not None:
                        out.append(msg)
                    finish = finish or as_name(choice.get("finish_reason"))
            return out, finish
        elif "role" not in value and "parts" not in value and "text" in value:
            finish = as_name(value.get("finish_reason"))
            return [{"role": default_role, "parts": [text_part(value["text"])]}], finish
        else:
            value = [value]
    if isinstance(value, str):
        return ([{"role": default_role, "parts": [text_part(value)]}] if value else []), ""
    if not isinstance(value, list):
        return [], ""
    out = []
    for item in value:
        msg = normalize_message(item, default_role)
        if msg is not None:
            out.append(msg)
            if not finish and isinstance(item, dict):
                finish = as_name(item.get("finish_reason"))
    return out, finish


def system_message(instructions: Any) -> Message | None:
    """``gen_ai.system_instructions`` (a bare part list, or text) as a system message."""
    value = decoded(instructions)
    if isinstance(value, list):
        parts = normalize_parts(value)
    elif value is None or value == "":
        return None
    else:
        parts = [text_part(value)]
    return {"role": "system", "parts": parts} if parts else None


# ---------------------------------------------------------------- flattened indexed attributes
Groups = list[dict[str, Any]]


def indexed_pair(
    attrs: dict[str, Any], first: str, second: str, lists: tuple[str, ...]
) -> tuple[Groups, Groups]:
    """Group ``{prefix}{i}.{field}`` keys by ``i`` for two prefixes in one pass over ``attrs``.

    Each group maps ``field`` to its value, except fields under a nested list prefix in ``lists``
    (``{list}{k}.{sub}``), gathered as ``group[list] = [{sub: value}, ...]`` in ``k`` order.
    """
    n1, n2 = len(first), len(second)
    found: tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]] = ({}, {})
    for key, value in attrs.items():
        if key.startswith(first):
            groups, rest = found[0], key[n1:]
        elif key.startswith(second):
            groups, rest = found[1], key[n2:]
        else:
            continue
        index, _, field = rest.partition(".")
        if not field or not index.isdigit():
            continue
        group = groups.get(int(index))
        if group is None:
            group = groups[int(index)] = {}
        for nested in lists:
            if field.startswith(nested):
                k, _, sub = field[len(nested) :].partition(".")
                if sub and k.isdigit():
                    items = group.get(nested)
                    if not isinstance(items, dict):
                        items = group[nested] = {}
                    items.setdefault(int(k), {})[sub] = value
                break
        else:
            group[field] = value
    out = []
    for groups in found:
        ordered = []
        for i in sorted(groups):
            group = groups[i]
            for nested in lists:
                items = group.get(nested)
                if items is not None:
                    group[nested] = [items[k] for k in sorted(items)]
            ordered.append(group)
        out.append(ordered)
    return out[0], out[1]


_OI_LISTS = ("message.tool_calls.", "message.contents.")


def _openinference_message(fields: dict[str, Any], default_role: str) -> Message | None:
    msg: dict[str, Any] = {"role": fields.get("message.role")}
    contents = fields.get("message.contents.")
    if contents:
        msg["content"] = [
            {
                "type": as_name(c.get("message_content.type")) or "text",
                "text": c.get("message_content.text"),
            }
            for c in contents
            if c.get("message_content.text") is not None
        ]
    else:
        msg["content"] = fields.get("message.content")
    calls = fields.get("message.tool_calls.")
    if calls:
        msg["tool_calls"] = [
            {
                "id": c.get("tool_call.id"),
                "function": {
                    "name": c.get("tool_call.function.name"),
                    "arguments": c.get("tool_call.function.arguments"),
                },
            }
            for c in calls
        ]
    if "message.tool_call_id" in fields:
        msg["tool_call_id"] = fields["message.tool_call_id"]
    return normalize_message(msg, default_role)


def from_openinference(attrs: dict[str, Any]) -> tuple[list[Message], list[Message]]:
    """OpenInference ``llm.input_messages.N.message.*`` and ``llm.output_messages.N.message.*``
    attributes as input and output messages."""
    inputs, outputs = indexed_pair(attrs, "llm.input_messages.", "llm.output_messages.", _OI_LISTS)
    return (
        [m for m in (_openinference_message(f, "user") for f in inputs) if m is not None],
        [m for m in (_openinference_message(f, "assistant") for f in outputs) if m is not None],
    )


def _legacy_message(fields: dict[str, Any], default_role: str) -> Message | None:
    content = fields.get("content")
    if isinstance(content, str) and content.startswith("[{"):
        parsed = decoded(content)  # list content is serialized as JSON
        if isinstance(parsed, list) and all(isinstance(p, dict) for p in parsed):
            content = parsed
    msg: dict[str, Any] = {"role": fields.get("role"), "content": content}
    calls = fields.get("tool_calls.")
    if calls:
        msg["tool_calls"] = calls
    if "tool_call_id" in fields:
        msg["tool_call_id"] = fields["tool_call_id"]
    return normalize_message(msg, default_role)


def from_legacy_indexed(attrs: dict[str, Any]) -> tuple[list[Message], list[Message], str]:
    """OpenLLMetry <= 0.54 ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` as input and output
    messages, plus the first completion's ``finish_reason``."""
    inputs, outputs = indexed_pair(attrs, "gen_ai.prompt.", "gen_ai.completion.", ("tool_calls.",))
    finish = ""
    for fields in outputs:
        finish = finish or as_name(fields.get("finish_reason"))
    return (
        [m for m in (_legacy_message(f, "user") for f in inputs) if m is not None],
        [m for m in (_legacy_message(f, "assistant") for f in outputs) if m is not None],
        finish,
    )


# ---------------------------------------------------------------- GenAI <= 1.36 log events
_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
EVENT_ORDER = {name: i for i, name in enumerate([*_EVENT_ROLES, "gen_ai.choice"])}


def from_events(events: Iterable[tuple[str, Any]]) -> tuple[list[Message], list[Message], str]:
    """Input messages, output messages and finish reason from ``(event name, body)`` pairs in
    time order (the GenAI <= 1.36 per-message events)."""
    inputs: list[Message] = []
    outputs: list[Message] = []
    finish = ""
    for name, raw in events:
        body = decoded(raw)
        if not isinstance(body, dict):
            body = {"content": body}
        if name == "gen_ai.choice":
            message = body.get("message")
            if not isinstance(message, dict):
                message = {}
            calls = body.get("tool_calls", message.get("tool_calls"))
            content = message.get("content", body.get("content"))
            msg = {"role": message.get("role") or "assistant", "content": content}
            msg["tool_calls"] = calls
            normalized = normalize_message(msg, "assistant")
            if normalized is not None:
                outputs.append(normalized)
            finish = finish or as_name(body.get("finish_reason"))
            continue
        role = _EVENT_ROLES.get(name)
        if role is None:
            continue
        msg = {"role": body.get("role") or role, "content": body.get("content")}
        if role == "tool":
            msg["tool_call_id"] = body.get("id")
        else:
            msg["tool_calls"] = body.get("tool_calls")
        normalized = normalize_message(msg, role)
        if normalized is not None:
            inputs.append(normalized)
    return inputs, outputs, finish


# ---------------------------------------------------------------- reading normalized messages
def message_text(message: Message) -> str:
    """The text parts of one normalized message, joined by newlines."""
    texts = [
        p["content"] for p in message.get("parts", ()) if p.get("type") == "text" and p["content"]
    ]
    return "\n".join(texts)


def last_text(messages: list[Message], role: str | None = None) -> str:
    """Text of the last message (of ``role``, when given) that has any text."""
    for message in reversed(messages):
        if role is None or message.get("role") == role:
            text = message_text(message)
            if text:
                return text
    return ""


def payload_text(value: Any) -> str | None:
    """The question or answer inside an agent input/output payload: plain text as is; from JSON,
    the one string (or a ``query``/``input``/``answer``-like field, or the last user message);
    ``None`` when no text can be told apart."""
    value = decoded(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        strings = [v for v in value if isinstance(v, str)]
        if len(strings) == 1:
            return strings[0]
        if value and all(isinstance(v, dict) for v in value):
            messages, _ = parse_messages(value)
            return last_text(messages, "user") or last_text(messages) or None
        return None
    if isinstance(value, dict):
        for key in _TEXT_KEYS:
            item = value.get(key)
            if isinstance(item, str):
                return item
        if isinstance(value.get("messages"), list):
            messages, _ = parse_messages(value["messages"])
            return last_text(messages, "user") or last_text(messages) or None
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(strings) == 1:
            return strings[0]
    return None
