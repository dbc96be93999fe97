"""One comparable form for an LLM request, whichever API asked it and however the recording
stored it: a list of ``(kind, text)`` lines.

Kinds: ``system``, ``user``, ``assistant`` (text), ``call`` (``name({json arguments})``),
``result`` (a tool's result as the model saw it). The text parts of one message are one line;
tool call ids, empty texts and reasoning items are left out; JSON (tool arguments, a result that
is JSON) is written with sorted keys. The OpenAI Chat Completions and Responses requests, the
Anthropic Messages, Gemini ``generateContent``, Bedrock Converse and Cohere v2 chat requests,
and the recorded GenAI messages (``[{"role", "parts"}]``) all come to this form, so a replay's request is compared with the recorded one line by line, and a
difference shows as a readable diff.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tracereplay.replay.answering.llm.endpoints import Endpoint, as_endpoint

Line = tuple[str, str]

#: every role as the provider receives it; smolagents records its own ``tool-call`` and
#: ``tool-response`` roles, which it sends as ``assistant`` and ``user`` messages
_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant",
          "model": "assistant", "ai": "assistant", "human": "user",
          "tool-call": "assistant", "tool-response": "user"}  # fmt: skip


def canonical_json(value: Any) -> str:
    """JSON text with sorted keys (a JSON string is decoded first: ``'{"a": 1}'`` and
    ``{"a": 1}`` give the same text); other text is stripped. (The standard library's JSON:
    integers of any size stay exact.)"""
    if isinstance(value, (bytes, bytearray)):
        value = value.decode(errors="replace")
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] not in ("{", "[", '"'):
            return stripped
        try:
            value = json.loads(stripped)
        except ValueError:
            return stripped
        if isinstance(value, str):
            return value.strip()
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
    except (TypeError, ValueError):
        return str(value)


def _text_of(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                if kind in (None, "text", "input_text", "output_text"):
                    texts.append(str(part.get("text") or part.get("content") or ""))
                elif kind in ("image_url", "input_image", "image"):
                    texts.append("[image]")
                elif kind in ("input_file", "file", "document"):
                    texts.append("[file]")
        return "\n".join(t.strip() for t in texts if t and t.strip())
    if isinstance(content, dict):
        return _text_of([content])
    return str(content).strip()


def _call(name: Any, arguments: Any) -> Line:
    return ("call", f"{name}({canonical_json(arguments if arguments not in (None, '') else {})})")


#: a tool result wrapped by a framework in a one-key object (``{"error": ...}`` on the wire
#: where the instrumentation recorded the bare text; Google ADK's ``{"result": ...}``)
_WRAPPER_KEYS = frozenset({"result", "error", "output", "content", "return_value"})
#: the Vercel AI SDK's tool output as its telemetry records it (``{"type": "text" | "error-text"
#: | "json" | "error-json", "value": ...}``), where the provider's wire carries the bare value
_AI_SDK_OUTPUTS = frozenset({"text", "error-text", "json", "error-json"})


def _result(value: Any) -> Line:
    if isinstance(value, list) and all(isinstance(p, dict) for p in value):
        text = _text_of(value)  # content parts (Anthropic tool_result blocks, Responses parts)
        if text:
            value = text
    if isinstance(value, str) and value.strip()[:1] == "{":
        try:
            value = json.loads(value.strip())
        except ValueError:
            pass
    if (
        isinstance(value, dict)
        and set(value) == {"type", "value"}
        and value["type"] in _AI_SDK_OUTPUTS
    ):
        value = value["value"]
    if isinstance(value, dict) and len(value) == 1:
        ((key, inner),) = value.items()
        if key in _WRAPPER_KEYS:
            value = inner
    if isinstance(value, str):
        value = without_frames(value.strip())  # a traceback the tool's failure gave the model
    return ("result", canonical_json(value if value is not None else ""))


#: the frames of a Python traceback an agent put in its prompt (DSPy's ReAct gives the model
#: the traceback of a tool that raised): ``  File "...", line N, in f`` and the source lines
#: under it, up to the exception's own line
_FRAMES = re.compile(r"(Traceback \(most recent call last\):\n)(?:[ \t]+.*\n)+")


def without_frames(text: str) -> str:
    """``text`` with the frames of any Python traceback in it left out (the header and the
    exception's line stay): they name files, lines and the callers of the call that raised,
    which a replay, or any edit of the agent's code, changes without changing the conversation."""
    if "Traceback (most recent call last):" not in text:
        return text
    return _FRAMES.sub(r"\1", text)


class _Builder:
    """Lines of one conversation; a message's text parts become one line."""

    def __init__(self) -> None:
        self.lines: list[Line] = []
        self._pending: tuple[str, list[str]] | None = None

    def text(self, role: str, text: str) -> None:
        text = without_frames(text.strip())
        if not text:
            return
        if self._pending is not None and self._pending[0] == role:
            self._pending[1].append(text)
        else:
            self.flush()
            self._pending = (role, [text])

    def system(self, prompt: Any) -> None:
        """The request's system prompt (text, or text blocks), as a line of its own."""
        if prompt:
            self.text("system", _text_of(prompt))
            self.flush()

    def add(self, line: Line) -> None:
        self.flush()
        self.lines.append(line)

    def flush(self) -> None:
        if self._pending is not None:
            self.lines.append((self._pending[0], "\n".join(self._pending[1])))
            self._pending = None

    def done(self) -> list[Line]:
        self.flush()
        return self.lines


def _role(value: Any) -> str:
    return _ROLES.get(str(value or "user").lower(), str(value or "user").lower())


# ---------------------------------------------------------------------- the wire formats
def chat_lines(body: dict[str, Any]) -> list[Line]:
    """An OpenAI Chat Completions request's messages."""
    b = _Builder()
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        role = str(m.get("role") or "user")
        if role in ("tool", "function"):
            b.add(_result(m.get("content")))
            continue
        b.text(_role(role), _text_of(m.get("content")))
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            b.add(_call(fn.get("name"), fn.get("arguments")))
        fc = m.get("function_call")
        if isinstance(fc, dict):
            b.add(_call(fc.get("name"), fc.get("arguments")))
        b.flush()
    return b.done()


def responses_lines(body: dict[str, Any]) -> list[Line]:
    """An OpenAI Responses API request's instructions and input items."""
    b = _Builder()
    b.system(body.get("instructions"))
    items = body.get("input")
    if isinstance(items, str):
        b.text("user", items)
        return b.done()
    for item in items or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call":
            b.add(_call(item.get("name"), item.get("arguments")))
        elif kind == "function_call_output":
            b.add(_result(item.get("output")))
        elif kind in (None, "message") and "role" in item:
            b.text(_role(item["role"]), _text_of(item.get("content")))
            b.flush()
        # reasoning items, web search calls...: not part of the conversation compared
    return b.done()


def anthropic_lines(body: dict[str, Any]) -> list[Line]:
    """An Anthropic Messages request's system prompt and messages."""
    b = _Builder()
    b.system(body.get("system"))
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        role = _role(m.get("role"))
        content = m.get("content")
        if isinstance(content, str):
            b.text(role, content)
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                b.text(role, str(block.get("text") or ""))
            elif kind == "tool_use":
                b.add(_call(block.get("name"), block.get("input")))
            elif kind == "tool_result":
                b.add(_result(block.get("content")))
            elif kind in ("image", "document"):
                b.text(role, f"[{kind}]")
        b.flush()
    return b.done()


def _gemini_text(content: Any) -> str:
    """The text of a Gemini ``Content`` (``{"parts": [{"text"}]}``), or of a plain string."""
    if isinstance(content, dict):
        return _text_of([p for p in content.get("parts") or [] if isinstance(p, dict)])
    return _text_of(content)


def _get(mapping: dict[str, Any], camel: str, snake: str) -> Any:
    """A field of a Google request, in its JSON (camelCase) or its proto (snake_case) name."""
    return mapping.get(camel, mapping.get(snake))


def gemini_lines(body: dict[str, Any]) -> list[Line]:
    """A Gemini ``generateContent`` request's system instruction and contents."""
    b = _Builder()
    system = _get(body, "systemInstruction", "system_instruction")
    if system:
        b.text("system", _gemini_text(system))
        b.flush()
    contents = body.get("contents")
    for content in [contents] if isinstance(contents, (str, dict)) else contents or []:
        if isinstance(content, str):
            b.text("user", content)
            b.flush()
            continue
        if not isinstance(content, dict):
            continue
        role = _role(content.get("role"))
        for part in content.get("parts") or []:
            if not isinstance(part, dict) or part.get("thought"):
                continue  # a thought summary: reasoning, not compared
            call = _get(part, "functionCall", "function_call")
            response = _get(part, "functionResponse", "function_response")
            blob = _get(part, "inlineData", "inline_data") or _get(part, "fileData", "file_data")
            if isinstance(part.get("text"), str):
                b.text(role, part["text"])
            elif isinstance(call, dict):
                b.add(_call(call.get("name"), call.get("args")))
            elif isinstance(response, dict):
                b.add(_result(response.get("response")))
            elif isinstance(blob, dict):
                mime = str(_get(blob, "mimeType", "mime_type") or "")
                b.text(role, "[image]" if mime.startswith("image") else "[file]")
        b.flush()
    return b.done()


def _bedrock_result(content: Any) -> Any:
    """A Bedrock ``toolResult``'s content (``[{"text"} | {"json"}...]``) as the model saw it."""
    if not isinstance(content, list):
        return content
    blocks = [c for c in content if isinstance(c, dict)]
    if len(blocks) == 1 and "json" in blocks[0]:
        return blocks[0]["json"]
    texts = []
    for block in blocks:
        if "text" in block:
            texts.append(str(block["text"] or ""))
        elif "json" in block:
            texts.append(canonical_json(block["json"]))
        elif "image" in block:
            texts.append("[image]")
        elif "document" in block or "video" in block:
            texts.append("[file]")
    return "\n".join(t.strip() for t in texts if t.strip())


def bedrock_lines(body: dict[str, Any]) -> list[Line]:
    """A Bedrock Converse request's system prompt and messages."""
    b = _Builder()
    b.system(body.get("system"))
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        role = _role(m.get("role"))
        for block in m.get("content") or []:
            if not isinstance(block, dict):
                continue
            if isinstance(block.get("text"), str):
                b.text(role, block["text"])
            elif isinstance(block.get("toolUse"), dict):
                b.add(_call(block["toolUse"].get("name"), block["toolUse"].get("input")))
            elif isinstance(block.get("toolResult"), dict):
                b.add(_result(_bedrock_result(block["toolResult"].get("content"))))
            elif "image" in block:
                b.text(role, "[image]")
            elif "document" in block or "video" in block:
                b.text(role, "[file]")
            # reasoningContent, cachePoint, guardContent: not part of the conversation compared
        b.flush()
    return b.done()


def cohere_lines(body: dict[str, Any]) -> list[Line]:
    """A Cohere v2 chat request's messages: Chat Completions' shape, but a tool's result may be
    a list of documents (``{"type": "document", "document": {"data"}}``)."""
    messages = []
    for m in body.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == "tool" and isinstance(m.get("content"), list):
            parts = [
                {"type": "text", "text": (p.get("document") or {}).get("data")}
                if isinstance(p, dict) and p.get("type") == "document"
                else p
                for p in m["content"]
            ]
            m = {**m, "content": parts}
        messages.append(m)
    return chat_lines({"messages": messages})


# ---------------------------------------------------------------------- the recording
def recorded_lines(messages: Iterable[dict[str, Any]]) -> list[Line]:
    """Recorded GenAI messages (``[{"role", "parts": [{"type", ...}]}]``)."""
    b = _Builder()
    for m in messages:
        if not isinstance(m, dict):
            continue
        role = str(m.get("role") or "user")
        for part in m.get("parts") or []:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                text = _text_of(part.get("content"))
                if role == "tool":
                    b.add(_result(text))
                else:
                    b.text(_role(role), text)
            elif kind == "tool_call":
                b.add(_call(part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                b.add(_result(part.get("response", part.get("result"))))
            elif kind in ("blob", "uri", "file", "image"):
                b.text(
                    _role(role),
                    "[image]" if "image" in str(part.get("mime_type") or kind) else "[file]",
                )
        b.flush()
    return b.done()


# ---------------------------------------------------------------------- comparing
def as_recorded(recorded: Sequence[Line], asked: list[Line]) -> list[Line]:
    """``asked`` as the recording could have recorded it: a recorded history with tool results
    but no tool-call turns at all comes from an instrumentation that leaves the assistant's
    tool calls out of the messages it records (OpenLIT's LangChain spans), one with no system
    line from one that leaves the system prompt out (AG2's telemetry): the request's lines of
    that kind are left out of the comparison too, not reported as drift."""
    kinds = {kind for kind, _ in recorded}
    dropped = set()
    if "result" in kinds and "call" not in kinds:
        dropped.add("call")
    if recorded and "system" not in kinds:
        dropped.add("system")
    return [line for line in asked if line[0] not in dropped] if dropped else asked


def same_model(asked: str, recorded: str) -> bool:
    """Whether two model names name the same model: equal once a ``provider/`` prefix is
    dropped, or one is the other with a version suffix (``gpt-4o-mini-2024-07-18``)."""
    a = asked.rsplit("/", 1)[-1].strip().lower()
    r = recorded.rsplit("/", 1)[-1].strip().lower()
    if not a or not r or a == r:
        return True
    short, long = sorted((a, r), key=len)
    return long.startswith(short + "-") and _VERSION.match(long[len(short) + 1 :]) is not None


#: what a provider appends to a model name for a snapshot: a date, a number, "latest"
_VERSION = re.compile(r"^(?:\d[\d-]*|latest)$")


def render(line: Line, limit: int = 240) -> str:
    kind, text = line
    flat = text.replace("\n", "\\n")
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return f"{kind}: {flat}"


def messages_diff(recorded: Sequence[Line], asked: Sequence[Line], max_lines: int = 40) -> str:
    """A unified diff of the messages, recorded -> replay (at most ``max_lines`` lines)."""
    lines = list(
        difflib.unified_diff(
            [render(x) for x in recorded],
            [render(x) for x in asked],
            fromfile="recorded",
            tofile="replay",
            n=1,
            lineterm="",
        )
    )
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more diff lines)"]
    return "\n".join(lines)


#: a tool call id: a few letters and ``_`` or ``-`` (``call_``, ``toolu_``, ``fc_``), then id text
_ID_SHAPE = re.compile(r"^([A-Za-z]{1,12}[_-])[A-Za-z0-9_-]{2,}$")
#: what a tool call id reads as once masked
MASKED_ID = "<call id>"


def id_pattern(ids: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern for tool call ids shaped as ``ids`` are (the same prefixes: ``call_``...),
    ``None`` when none has such a shape. A live model names its tool calls with ids of its own;
    a framework that writes the call into the text of the next request (smolagents' "Calling
    tools: [{'id': 'call_..'}]") makes that text differ from the recorded one by the id only."""
    prefixes = sorted({m.group(1) for i in ids if (m := _ID_SHAPE.match(i))})
    if not prefixes:
        return None
    return re.compile(
        r"(?<![A-Za-z0-9])(?:" + "|".join(map(re.escape, prefixes)) + r")[A-Za-z0-9]{2,}"
    )


def mask_ids(lines: Sequence[Line], pattern: re.Pattern[str] | None) -> list[Line]:
    """``lines`` with every tool call id ``pattern`` matches read as ``MASKED_ID``."""
    if pattern is None:
        return list(lines)
    return [(kind, pattern.sub(MASKED_ID, text)) for kind, text in lines]


@dataclass
class Request:
    """An LLM request as replay compares it."""

    api: str  # one of ``endpoints.APIS``
    body: dict[str, Any]
    lines: list[Line]
    model: str
    temperature: float | None
    tools: list[tuple[str, str]]  # (name, description)
    stream: bool


def _declarations(api: str, body: dict[str, Any]) -> list[Any]:
    """The tool declarations of a request (each with a name and a description)."""
    if api == "gemini":
        return [
            d
            for tool in body.get("tools") or []
            if isinstance(tool, dict)
            for d in _get(tool, "functionDeclarations", "function_declarations") or []
        ]
    if api == "bedrock":
        config = body.get("toolConfig")
        tools = config.get("tools") if isinstance(config, dict) else None
        return [t.get("toolSpec") for t in tools or [] if isinstance(t, dict)]
    return [
        tool.get("function") if isinstance(tool.get("function"), dict) else tool
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
    ]


def tools_of(api: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for fn in _declarations(api, body):
        name = fn.get("name") if isinstance(fn, dict) else None
        if isinstance(name, str) and name:
            out.append((name, str(fn.get("description") or "")))
    return out


def _temperature(api: str, body: dict[str, Any]) -> Any:
    if api == "gemini":
        config = _get(body, "generationConfig", "generation_config")
        return config.get("temperature") if isinstance(config, dict) else None
    if api == "bedrock":
        config = body.get("inferenceConfig")
        return config.get("temperature") if isinstance(config, dict) else None
    return body.get("temperature")


_LINES = {"chat": chat_lines, "responses": responses_lines, "anthropic": anthropic_lines,
          "gemini": gemini_lines, "bedrock": bedrock_lines, "cohere": cohere_lines}  # fmt: skip


def parse_request(api: str | Endpoint, body: dict[str, Any]) -> Request:
    """``body``, a request of ``api`` (an API name, or the ``Endpoint`` its URL shows: Gemini
    and Bedrock name the model in the URL), as replay compares it."""
    where = as_endpoint(api)
    temperature = _temperature(where.api, body)
    return Request(
        api=where.api,
        body=body,
        lines=_LINES[where.api](body),
        model=where.model or str(body.get("model") or ""),
        temperature=float(temperature)
        if isinstance(temperature, (int, float)) and not isinstance(temperature, bool)
        else None,
        tools=tools_of(where.api, body),
        stream=where.stream or bool(body.get("stream")),
    )
