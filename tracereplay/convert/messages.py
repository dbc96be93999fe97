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

from tracereplay.convert.forms import (
    blocks_text,
    call_envelope,
    converse_part,
    is_block_list,
    is_object_repr,
    langchain_message,
)
from tracereplay.convert.object_reprs import read_repr, repr_message
from tracereplay.convert.values import as_name, as_text, decoded, loads
from tracereplay.semconv import (
    EVENT_ASSISTANT_MESSAGE,
    EVENT_CHOICE,
    EVENT_SYSTEM_MESSAGE,
    EVENT_TOOL_MESSAGE,
    EVENT_USER_MESSAGE,
    LEGACY_COMPLETION_PREFIX,
    LEGACY_PROMPT_PREFIX,
    LLM_INPUT_MESSAGES_PREFIX,
    LLM_OUTPUT_MESSAGES_PREFIX,
)

Message = dict[str, Any]
Part = dict[str, Any]

_TOOL_CALL_TYPES = ("tool_call", "function_call", "tool_use", "tool-call")
_TOOL_RESPONSE_TYPES = ("tool_call_response", "tool_result", "function_call_output", "tool-result")
#: text parts under the names providers give them (OpenAI Responses' ``input_text`` /
#: ``output_text``, the Vercel AI SDK's ``reasoning`` aside)
_TEXT_TYPES = ("text", "input_text", "output_text")
#: roles as providers and frameworks name them, in the GenAI names
_ROLES = {"model": "assistant", "human": "user", "ai": "assistant", "developer": "system"}
_INPUT_KEYS = ("input", "query", "question", "message", "prompt", "text", "content")
_OUTPUT_KEYS = ("output", "answer", "response", "result", "text", "content", "message")


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


def _first_key(part: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if key in part:
            return part[key]
    return None


def _gemini_part(part: dict[str, Any]) -> Part | None:
    """A Gemini part (``functionCall`` / ``functionResponse``, camel or snake case) as a GenAI
    part, else ``None``. The response is kept as the tool's own value: Gemini's
    ``{"result": ...}`` wrapper is taken off where results are read (``tool_output``)."""
    call = part.get("functionCall", part.get("function_call"))
    if isinstance(call, dict) and "name" in call:
        return tool_call_part(call.get("id"), call.get("name"), call.get("args"))
    response = part.get("functionResponse", part.get("function_response"))
    if isinstance(response, dict) and "name" in response:
        return tool_response_part(response.get("id"), response.get("response"))
    return None


def normalize_part(part: Any) -> Part | None:
    """One part of any provider's message in the normalized shape, ``None`` if unusable: GenAI
    parts, OpenAI chat and Responses content parts and items, Anthropic blocks, Gemini parts,
    Converse blocks, the Vercel AI SDK's parts (``tool-call`` / ``tool-result``)."""
    if isinstance(part, str):
        return text_part(part)
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind is None:
        if "toolUse" in part or "toolResult" in part:
            return converse_part(part)
        gemini = _gemini_part(part) if len(part) <= 3 else None
        if gemini is not None:
            return gemini
    if kind in _TEXT_TYPES or (kind is None and ("content" in part or "text" in part)):
        return text_part(part["content"] if "content" in part else part.get("text"))
    if kind in _TOOL_CALL_TYPES:
        fn = part.get("function")
        if isinstance(fn, dict):  # OpenAI-style part nested one level
            return tool_call_part(part.get("id"), fn.get("name"), fn.get("arguments"))
        args = _first_key(part, ("arguments", "input", "args"))
        call_id = _first_key(part, ("id", "call_id", "toolCallId"))
        return tool_call_part(call_id, _first_key(part, ("name", "toolName")), args)
    if kind in _TOOL_RESPONSE_TYPES:
        response = _first_key(part, ("response", "result", "content", "output"))
        call_id = _first_key(part, ("id", "tool_use_id", "call_id", "toolCallId"))
        out = tool_response_part(call_id, response)
        if part.get("is_error") is True or part.get("isError") is True:
            out["status"] = "error"
        return out
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
    """One message (GenAI ``parts`` form or OpenAI ``content`` form, or a chat message
    object's Python repr: ``object_reprs``) normalized."""
    if isinstance(message, str):
        if is_object_repr(message):
            read = repr_message(message)
            if read is not None:
                read["role"] = _ROLES.get(read["role"], read["role"])
                return read
        return {"role": default_role, "parts": [text_part(message)]}
    if isinstance(message, list):
        message = langchain_message(message)
    if not isinstance(message, dict):
        return None
    if "role" not in message and "parts" not in message:
        kind = message.get("type")
        if kind in _TOOL_CALL_TYPES or kind in _TOOL_RESPONSE_TYPES:
            # an OpenAI Responses input item (function_call / function_call_output)
            part = normalize_part(message)
            if part is not None:
                role = "assistant" if part["type"] == "tool_call" else "tool"
                return {"role": role, "parts": [part]}
        converted = langchain_message(message)
        if converted is not None:
            message = converted
    role = message.get("role")
    if type(role) is not str or not role:
        role = as_name(role) or default_role
    role = _ROLES.get(role, role)
    raw_parts = message.get("parts")
    if type(raw_parts) is list:
        return {"role": role, "parts": normalize_parts(raw_parts)}
    content = message.get("content")
    call_id = message.get("tool_call_id")
    if role in ("tool", "function"):
        if isinstance(content, list) and all(isinstance(p, dict) for p in content):
            if call_id is None and any(
                "toolResult" in p or p.get("type") in _TOOL_RESPONSE_TYPES for p in content
            ):
                return {"role": role, "parts": normalize_parts(content)}
            content = blocks_text(content)
        part = tool_response_part(call_id, content)
        if message.get("status") == "error":
            part["status"] = "error"
        return {"role": role, "parts": [part]}
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
    return _parse_list(value, default_role, finish)


def _parse_list(value: list[Any], default_role: str, finish: str = "") -> tuple[list[Message], str]:
    out = []
    for item in value:
        if type(item) is dict:
            if not finish and "finish_reason" in item:
                finish = as_name(item["finish_reason"])
            role, parts = item.get("role"), item.get("parts")
            if type(role) is str and role and type(parts) is list:  # GenAI- or Gemini-shaped
                out.append({"role": _ROLES.get(role, role), "parts": normalize_parts(parts)})
                continue
        msg = normalize_message(item, default_role)
        if msg is not None:
            out.append(msg)
    return out, finish


# The last history parse_history read: (text, default role, messages, finish reason).
_last_history: tuple[str, str, list[Message], str] | None = None


def parse_history(value: Any, default_role: str = "user") -> tuple[list[Message], str]:
    """``parse_messages`` for the input messages of an LLM call, which usually repeat the
    previous call's input and add to it: when ``value`` is JSON text that extends the list last
    read here (same text up to its closing bracket, then more items), only the new items are
    parsed. The result is the same as ``parse_messages(value, default_role)``."""
    global _last_history
    if type(value) is not str:
        return parse_messages(value, default_role)
    last = _last_history
    if last is not None and last[1] == default_role:
        prev = last[0]
        if value == prev:
            return list(last[2]), last[3]
        cut = len(prev) - 1
        if len(value) > len(prev) and value.startswith(prev[:cut]):
            rest = value[cut:].lstrip(" \t\r\n")
            if rest[:1] == ",":
                tail = loads("[" + rest[1:], None)
                if type(tail) is list:
                    messages, finish = _parse_list(tail, default_role, last[3])
                    messages = last[2] + messages
                    _last_history = (value, default_role, messages, finish)
                    return list(messages), finish
    parsed = decoded(value)
    if type(parsed) is not list:
        return parse_messages(value, default_role)
    messages, finish = _parse_list(parsed, default_role)
    if value[:1] == "[" and value[-1:] == "]":
        _last_history = (value, default_role, messages, finish)
    return list(messages), finish


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
# Lists flattened as ``{prefix}{i}.{field}`` are read by probing indices 0, 1, 2... until one is
# absent: instrumentations write them contiguously, and probing costs a few lookups per message
# where parsing every attribute key would cost a pass over all of them.
_MAX_ITEMS = 10_000


def _openinference_list(a: dict[str, Any], prefix: str, default_role: str) -> list[Message]:
    out = []
    for i in range(_MAX_ITEMS):
        p = f"{prefix}{i}.message."
        role = a.get(p + "role")
        content = a.get(p + "content")
        parts: list[Part] = []
        if content is None:
            for j in range(_MAX_ITEMS):
                q = f"{p}contents.{j}.message_content."
                kind = a.get(q + "type")
                text = a.get(q + "text")
                if kind is None and text is None:
                    break
                if text is not None:
                    parts.append(text_part(text))
        for k in range(_MAX_ITEMS):
            q = f"{p}tool_calls.{k}.tool_call."
            call_id = a.get(q + "id")
            name = a.get(q + "function.name")
            args = a.get(q + "function.arguments")
            if call_id is None and name is None and args is None:
                break
            parts.append(tool_call_part(call_id, name, args))
        call_id = a.get(p + "tool_call_id")
        if role is None and content is None and not parts and call_id is None:
            break
        role = as_name(role) or ("tool" if call_id is not None else default_role)
        role = _ROLES.get(role, role)
        if role == "tool" or call_id is not None:
            if content is None:  # multipart content
                content = "\n".join(p["content"] for p in parts if p["type"] == "text")
            parts = [tool_response_part(call_id, content)]
        elif content is not None and content != "":
            parts.insert(0, text_part(content))
        out.append({"role": role, "parts": parts})
    return out


def from_openinference(attrs: dict[str, Any]) -> tuple[list[Message], list[Message]]:
    """OpenInference ``llm.input_messages.N.message.*`` and ``llm.output_messages.N.message.*``
    attributes (``role``, ``content``, ``contents.J.message_content.*``,
    ``tool_calls.K.tool_call.*``, ``tool_call_id``) as input and output messages."""
    return (
        _openinference_list(attrs, LLM_INPUT_MESSAGES_PREFIX, "user"),
        _openinference_list(attrs, LLM_OUTPUT_MESSAGES_PREFIX, "assistant"),
    )


def _legacy_list(a: dict[str, Any], prefix: str, default_role: str) -> tuple[list[Message], str]:
    out = []
    finish = ""
    for i in range(_MAX_ITEMS):
        p = f"{prefix}{i}."
        role = a.get(p + "role")
        content = a.get(p + "content")
        call_id = a.get(p + "tool_call_id")
        calls: list[Part] = []
        for k in range(_MAX_ITEMS):
            q = f"{p}tool_calls.{k}."
            tc_id, name, args = a.get(q + "id"), a.get(q + "name"), a.get(q + "arguments")
            if tc_id is None and name is None and args is None:
                break
            calls.append(tool_call_part(tc_id, name, args))
        if role is None and content is None and not calls and call_id is None:
            break
        role = as_name(role) or ("tool" if call_id is not None else default_role)
        if isinstance(content, str) and content.startswith("[{"):
            parsed = decoded(content)  # list content is serialized as JSON
            if isinstance(parsed, list) and all(isinstance(x, dict) for x in parsed):
                content = parsed
        if role == "tool" or call_id is not None:
            if isinstance(content, list):
                content = "".join(as_text(x.get("text", x.get("content"))) for x in content)
            parts = [tool_response_part(call_id, content)]
        else:
            parts = _content_parts(content)
            parts.extend(calls)
        out.append({"role": role, "parts": parts})
        finish = finish or as_name(a.get(p + "finish_reason"))
    return out, finish


def from_legacy_indexed(attrs: dict[str, Any]) -> tuple[list[Message], list[Message], str]:
    """OpenLLMetry <= 0.54 ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` (``role``,
    ``content``, ``tool_call_id``, ``tool_calls.K.id|name|arguments``) as input and output
    messages, plus the first completion's ``finish_reason``."""
    inputs, _ = _legacy_list(attrs, LEGACY_PROMPT_PREFIX, "user")
    outputs, finish = _legacy_list(attrs, LEGACY_COMPLETION_PREFIX, "assistant")
    return inputs, outputs, finish


# ---------------------------------------------------------------- GenAI <= 1.36 log events
_EVENT_ROLES = {
    EVENT_SYSTEM_MESSAGE: "system",
    EVENT_USER_MESSAGE: "user",
    EVENT_ASSISTANT_MESSAGE: "assistant",
    EVENT_TOOL_MESSAGE: "tool",
}
EVENT_ORDER = {name: i for i, name in enumerate([*_EVENT_ROLES, EVENT_CHOICE])}


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
        if name == EVENT_CHOICE:
            message = body.get("message")
            if isinstance(message, str):  # the text, or content blocks as JSON
                message = {"content": decoded(message)}
            elif isinstance(message, list):
                message = {"content": message}
            elif not isinstance(message, dict):
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
        content = body.get("content")
        if isinstance(content, str) and content.startswith("[{"):
            blocks = decoded(content)  # content blocks as JSON (strands)
            if isinstance(blocks, list) and all(isinstance(b, dict) for b in blocks):
                content = blocks
        msg = {"role": body.get("role") or role, "content": content}
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


def sole_string(value: dict[str, Any]) -> str | None:
    """The one string field of a payload object (``{"topic": "..."}``: a crew's kickoff
    inputs), unless the object also holds structured values: a method's bound arguments (an
    agent, its tools, beside a ``context`` string: OpenInference's CrewAI task span) name no
    question."""
    strings = [v for v in value.values() if isinstance(v, str)]
    if len(strings) != 1 or any(isinstance(v, (dict, list)) and v for v in value.values()):
        return None
    return strings[0]


def payload_text(value: Any, output: bool = False) -> str | None:
    """The question (or, with ``output``, the answer) inside an agent's input/output payload:
    plain text as is; from JSON, the one string, a ``query``/``input`` (``answer``/``output``)
    field, or the last user (assistant) message; ``None`` when no text can be told apart."""
    value = decoded(value)
    if isinstance(value, str):
        if not is_object_repr(value):
            return value
        # a result object's repr (DSPy's ``Prediction(reasoning=..., answer=...)``): its fields
        value = read_repr(value)
        if not isinstance(value, dict):
            return None
        value.pop("__type__", None)
    if isinstance(value, dict):
        if not output and "kwargs" in value:
            # a Python call's bound arguments (``{"args": [], "kwargs": {"question": ...}}``:
            # DSPy's ``ReAct.forward``): the arguments
            unwrapped = call_envelope(value)
            if unwrapped is not None:
                value = unwrapped
        if len(value) == 1:
            # one named group of arguments ({"input_args": {"question": ...}}: DSPy's forward)
            (only,) = value.values()
            if isinstance(only, dict) and only:
                return payload_text(only, output)
        # a framework's envelope around the payload ({"inputs": ..., "tags": ..., "metadata": ...})
        envelope = value.get("outputs" if output else "inputs")
        if isinstance(envelope, (dict, list, str)) and envelope:
            return payload_text(envelope, output)
        message = langchain_message(value)
        if message is not None:
            return message_text(normalize_message(message) or {}) or None
        for key in _OUTPUT_KEYS if output else _INPUT_KEYS:
            item = value.get(key)
            if isinstance(item, str):
                return item
        if isinstance(value.get("messages"), list):
            value = value["messages"]
        else:
            return sole_string(value)
    if isinstance(value, list):
        strings = [v for v in value if isinstance(v, str)]
        if len(strings) == 1:
            return strings[0]
        if is_block_list(value):  # one message's content blocks
            return blocks_text(value)
        if value and all(isinstance(v, (dict, list)) for v in value):
            messages, _ = parse_messages(value)
            role = "assistant" if output else "user"
            return last_text(messages, role) or last_text(messages) or None
    return None
