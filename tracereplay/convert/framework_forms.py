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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracereplay.convert.object_reprs import read_fields
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


_MAYBE_WRAPPED = re.compile(
    r'"(?:outputs?|lc|data|result|error|toolResult|text|content|json|raw_output|is_error|value|response)"'
)
#: the typed output of a tool result (the Vercel AI SDK's ``{"type": "text", "value": ...}``;
#: ``error-*`` when the tool failed)
_TYPED_OUTPUTS = frozenset(("text", "json", "content", "error-text", "error-json"))
_FUNCTION_RESPONSE_KEYS = frozenset(("id", "name", "response", "will_continue", "scheduling"))


@dataclass(slots=True)
class ToolOutput:
    """A tool's output as the tool returned it: its text, the call id and whether it failed,
    when the framework's wrapper says so."""

    text: str
    call_id: str = ""
    error: bool = False


def framework_tool_output(value: Any) -> ToolOutput | None:
    """A framework's tool-result object dumped as JSON, as LlamaIndex's ``ToolOutput``
    (``{"blocks": [...], "tool_name", "raw_input", "raw_output", "is_error"}``, older versions
    ``content``): the text the model got (the blocks' text, else ``content``, else the raw
    output), failed when ``is_error``; else ``None``."""
    if not isinstance(value, dict) or "tool_name" not in value or "is_error" not in value:
        return None
    if not set(value) & {"blocks", "content", "raw_output"}:
        return None
    text = blocks_text(value["blocks"]) if isinstance(value.get("blocks"), list) else ""
    if not text:
        content = value.get("content")
        raw = value.get("raw_output")
        text = as_text(content) if content else ("" if raw is None else as_text(raw))
    return ToolOutput(text, error=value.get("is_error") is True)


def tool_output(value: Any) -> ToolOutput:
    """What a tool returned, taken out of the framework's wrapper (a LangChain ``ToolMessage``,
    ``{"output": ...}``, a typed output ``{"type": "text", "value": ...}``, content blocks, a
    ``toolResult`` block); other values as text (a string as it came)."""
    if type(value) is str and value.startswith("content="):
        fields = read_fields(value)  # str(ToolMessage): content='...' name='...' ...
        if fields is not None and isinstance(fields.get("content"), (str, list)):
            return ToolOutput(
                blocks_text(fields["content"]),
                as_name(fields.get("tool_call_id")),
                fields.get("status") == "error",
            )
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
    if (
        isinstance(value, dict)
        and "value" in value
        and value.get("type") in _TYPED_OUTPUTS
        and len(value) <= 3
    ):
        inner = value["value"]
        text = blocks_text(inner) if isinstance(inner, list) else as_text(inner)
        return ToolOutput(text, error=str(value["type"]).startswith("error"))
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
    held = framework_tool_output(value)
    if held is not None:
        return held
    if isinstance(value, dict) and "response" in value and set(value) <= _FUNCTION_RESPONSE_KEYS:
        # a Gemini function response object ({"id", "name", "response": {"result": ...}})
        return tool_output(value["response"])
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


_ENVELOPE_KEYS = frozenset(("args", "kwargs"))


def parameter_names(schema: Any) -> list[str]:
    """The parameter names a tool declares, in order: a JSON schema's ``properties``, or a
    mapping of name to spec (OpenInference's ``tool.parameters`` for smolagents)."""
    schema = decoded(schema)
    if not isinstance(schema, dict):
        return []
    properties = schema.get("properties")
    if isinstance(properties, dict):
        return [k for k in properties if isinstance(k, str)]
    if schema.get("type") == "object":
        return []
    return [k for k, v in schema.items() if isinstance(k, str) and isinstance(v, dict)]


def call_envelope(value: dict[str, Any], parameters: Sequence[str] = ()) -> dict[str, Any] | None:
    """The tool's own arguments out of a Python call's bound parameters, as instrumentations
    record ``Tool.__call__(self, *args, flag=..., **kwargs)``: ``{"args": [], "kwargs": {...}}``
    (OpenInference smolagents adds ``"sanitize_inputs_outputs": true``; llama-index records
    ``{"kwargs": {...}}``). ``kwargs`` (a dict) is the arguments, merged over a lone dict in
    ``args``, or over the positional values named by the tool's declared ``parameters`` in
    order (``final_answer("...")`` in a smolagents ``CodeAgent``'s code); any other key must be
    a framework flag (a bool or ``None``), and positional values that cannot be named make it
    no envelope (``None``)."""
    kwargs = value.get("kwargs")
    if not isinstance(kwargs, dict):
        return None
    args = value.get("args", [])
    if not isinstance(args, list):
        return None
    for key, flag in value.items():
        if key not in _ENVELOPE_KEYS and not (flag is None or isinstance(flag, bool)):
            return None
    if len(args) == 1 and isinstance(args[0], dict):
        return {**args[0], **kwargs}
    if not args:
        return dict(kwargs)
    if len(args) <= len(parameters):
        return {**dict(zip(parameters, args, strict=False)), **kwargs}
    return None


_OBJECT_AT = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>")


def without_injected(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments less those the framework injected into the call, recorded as a Python
    object's default repr (LlamaIndex's handoff tool gets ``ctx`` =
    ``"<workflows.context.context.Context object at 0x7f...>"``): the model never sent them."""
    if not any(type(v) is str and v[:1] == "<" for v in arguments.values()):
        return arguments
    return {k: v for k, v in arguments.items() if not (type(v) is str and _OBJECT_AT.fullmatch(v))}


def tool_arguments(
    value: Any, parameters: Any = None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(arguments, fallback)`` from a tool span's recorded input: a JSON object is the
    arguments (taken out of a call envelope, ``call_envelope``, whose positional values the
    tool's declared ``parameters`` name); a bare value (a one-argument tool's input) is only a
    fallback, since the LLM's request names the argument."""
    if value is None:
        return None, None
    value = decoded(value)
    if isinstance(value, dict):
        unwrapped = (
            call_envelope(value, parameter_names(parameters) if parameters else [])
            if "kwargs" in value
            else None
        )
        return without_injected(value if unwrapped is None else unwrapped), None
    if value == "":
        return None, {}
    return None, {"input": value}


#: what instrumentations that name a span after the Python call it wraps put after the agent
#: or tool: ``weather_agent.run`` (smolagents), ``FunctionAgent.run``, ``Crew._execute_core``,
#: DSPy's ``ReAct.forward`` and ``get_weather.__call__``
_CALL_METHODS = frozenset(
    (
        "run",
        "arun",
        "run_async",
        "run_sync",
        "run_stream",
        "invoke",
        "ainvoke",
        "stream",
        "astream",
        "execute",
        "aexecute",
        "call",
        "acall",
        "__call__",
        "kickoff",
        "kickoff_async",
        "chat",
        "achat",
        "step",
        "astep",
        "start",
        "forward",
        "aforward",
        "generate",
        "agenerate",
        "get_response",
    )
)


def method_span_name(name: str) -> str:
    """The agent a span named after a method call stands for (``weather_agent.run`` ->
    ``weather_agent``): the name without a trailing ``.<method>`` when that is an entry-point
    verb (``_CALL_METHODS``) or a private method (``._execute_core``); other names as they are
    (a dotted agent name keeps its dots)."""
    head, dot, method = name.rpartition(".")
    if dot and head and (method in _CALL_METHODS or (method[:1] == "_" and method.isidentifier())):
        return head
    return name


#: the tool an agent calls to end its run with its answer (smolagents' ``final_answer``)
ANSWER_TOOLS = frozenset(("final_answer", "finish"))


def is_answer_tool(name: str | None) -> bool:
    """Whether a tool call is the framework's way to give the run's answer (smolagents agents
    end by calling ``final_answer(answer)``, DSPy's ``ReAct`` by calling ``finish()``): the answer is the run's response, not a tool
    call (its recording would otherwise answer a changed final answer in a replay)."""
    return name in ANSWER_TOOLS


#: a framework object's repr: a dataclass/pydantic-style ``Name()`` / ``Name(field=...)``
_OBJECT_REPR = re.compile(r"[A-Z][A-Za-z0-9_]*\((?:\)|[a-z_][A-Za-z0-9_]*=)")
#: Python's default repr of an object that defines none: ``<module.Class object at 0x7f...>``
_DEFAULT_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>")


def is_object_repr(text: str | None) -> bool:
    """Whether an agent's recorded input or output is the ``repr`` of a framework object, not
    text: ``AgentWorkflowStartEvent()``, ``StopEvent(result=AgentOutput(...))``, smolagents'
    ``ActionStep(step_number=1, ...)`` (an instrumentation that ``str()``s what it wraps), or
    Python's default ``<crewai.types.streaming.CrewStreamingOutput object at 0x7f...>`` (a
    return value it cannot serialize, such as a streaming kickoff's handle). Such a value is no
    question or answer; the run's messages say those."""
    if not text:
        return False
    stripped = text.strip()
    return _OBJECT_REPR.match(stripped) is not None or (
        stripped.startswith("<") and _DEFAULT_REPR.fullmatch(stripped) is not None
    )


_STEP_AGENT = re.compile(r"\bcurrent_agent_name='([^'\\]+)'")


def step_agent_name(value: Any) -> str | None:
    """The agent a workflow step ran for, as LlamaIndex's agent workflows record it only in
    the repr of the step's event (``AgentInput(..., current_agent_name='weather_agent')``);
    else ``None``."""
    if type(value) is not str or "current_agent_name=" not in value:
        return None
    found = _STEP_AGENT.search(value)
    return found.group(1) if found else None


_REACT_ANSWER = re.compile(r"(?:^|\n)Thought:.*?\nAnswer:\s*(.*)\Z", re.DOTALL)


def react_answer(text: str) -> str:
    """The answer of a ReAct model's last turn (``Thought: ...\nAnswer: <answer>``, as
    LlamaIndex's ``ReActAgent`` prompts for it); other text as it is."""
    if "Answer:" not in text:
        return text
    found = _REACT_ANSWER.search(text)
    return found.group(1).strip() if found else text


_REPR_FINISH = re.compile(r"\bfinish_reason='([A-Za-z_]+)'")


def repr_finish_reason(value: Any) -> str:
    """The finish reason inside a provider response recorded as its Python repr, as smolagents'
    ``ChatMessage.raw`` (``ChatCompletion(choices=[Choice(finish_reason='tool_calls', ...)])``):
    the first choice's; ``""`` when there is none."""
    if type(value) is not str or "finish_reason=" not in value:
        return ""
    found = _REPR_FINISH.search(value)
    return found.group(1) if found else ""
