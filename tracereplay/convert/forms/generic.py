"""Forms no one framework owns, read through each framework's own (``forms/<framework>``):
a tool's output out of whatever wrapper holds it, a tool's arguments out of a Python call's
bound parameters, the agent a span named after a method call stands for, and a framework
object's repr where text was expected."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tracereplay.convert.forms import (
    bedrock_converse,
    google_adk,
    langchain,
    llama_index,
    vercel_ai,
)
from tracereplay.convert.forms.base import ToolOutput, blocks_text, is_block_list
from tracereplay.convert.values import as_text, decoded

_MAYBE_WRAPPED = re.compile(
    r'"(?:outputs?|lc|data|result|error|toolResult|text|content|json|raw_output|is_error|value|response)"'
)


def tool_output(value: Any) -> ToolOutput:
    """What a tool returned, taken out of the framework's wrapper (a LangChain ``ToolMessage``,
    ``{"output": ...}``, the AI SDK's typed output, content blocks, a ``toolResult`` block,
    LlamaIndex's ``ToolOutput``, a Gemini function response); other values as text (a string
    as it came)."""
    if type(value) is str:
        held = langchain.tool_message_repr(value)
        if held is not None:
            return held
        if _MAYBE_WRAPPED.search(value) is None:
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
    for form in (
        vercel_ai.typed_output,
        langchain.tool_message_output,
        bedrock_converse.tool_result_block,
    ):
        held = form(value)
        if held is not None:
            return held
    if is_block_list(value):
        return ToolOutput(blocks_text(value))
    held = llama_index.framework_tool_output(value)
    if held is not None:
        return held
    inner = google_adk.function_response(value)
    if inner is not None:
        return tool_output(inner)
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
        return llama_index.without_injected(value if unwrapped is None else unwrapped), None
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
