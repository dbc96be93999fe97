"""The Vercel AI SDK's own telemetry (``experimental_telemetry: {isEnabled: true}``), TypeScript.

The SDK names each span after its operation (``ai.operationId``): ``ai.generateText`` /
``ai.streamText`` (and the object variants) is one call of the user's function, the agent
loop; ``ai.generateText.doGenerate`` / ``ai.streamText.doStream`` is one provider request
inside it, and ``ai.toolCall`` one tool execution. Everything said is in ``ai.*`` attributes,
not the GenAI ones (the request spans carry ``gen_ai.system``, model and usage only):

- the function: ``ai.telemetry.functionId`` (the user's name for it), ``ai.prompt`` (``{"system",
  "prompt"}`` or ``{"messages"}``), ``ai.response.text``, ``ai.usage.*``;
- a request: ``ai.prompt.messages`` (the provider-level messages: ``text`` / ``tool-call`` /
  ``tool-result`` parts), ``ai.response.text``, ``ai.response.toolCalls`` (``toolCallId``,
  ``toolName``, ``input`` or, before 5.0, ``args``), ``ai.response.finishReason``,
  ``ai.model.id`` / ``ai.response.model``, ``ai.usage.inputTokens`` / ``outputTokens`` (before
  5.0 ``promptTokens`` / ``completionTokens``);
- a tool: ``ai.toolCall.name``, ``.id``, ``.args`` (or ``.input``), ``.result`` (or
  ``.output``); a tool that throws leaves its error on the span's status and ``exception``
  event.
"""

from __future__ import annotations

from typing import Any

from tracereplay.convert.forms import tool_arguments, tool_result
from tracereplay.convert.info import AgentInfo, LlmInfo, ToolInfo
from tracereplay.convert.messages import (
    last_text,
    parse_history,
    parse_messages,
    payload_text,
    text_part,
    tool_call_part,
)
from tracereplay.convert.values import as_int, as_name, as_text, decoded, first_name
from tracereplay.semconv import (
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_SYSTEM,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
)
from tracereplay.spans import Span

AI_SDK = "ai_sdk"

OPERATION_ID = "ai.operationId"
FUNCTION_ID = "ai.telemetry.functionId"

#: operation ids of the user's function (the agent loop), of one request, of one tool call
FUNCTION_OPERATIONS = frozenset(
    ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")
)
REQUEST_OPERATIONS = frozenset(
    (
        "ai.generateText.doGenerate",
        "ai.streamText.doStream",
        "ai.generateObject.doGenerate",
        "ai.streamObject.doStream",
    )
)
TOOL_OPERATION = "ai.toolCall"


def operation(span: Span) -> str:
    """The span's AI SDK operation id, ``""`` for a span the SDK did not make."""
    value = span.attributes.get(OPERATION_ID)
    return value if type(value) is str else ""


def _first(attrs: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None:
            return value
    return None


def _tokens(attrs: dict[str, Any]) -> tuple[int | None, int | None]:
    inputs = as_int(
        _first(attrs, "ai.usage.inputTokens", "ai.usage.promptTokens", GEN_AI_USAGE_INPUT_TOKENS)
    )
    outputs = as_int(
        _first(
            attrs,
            "ai.usage.outputTokens",
            "ai.usage.completionTokens",
            GEN_AI_USAGE_OUTPUT_TOKENS,
        )
    )
    return inputs, outputs


def _response_message(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """The assistant's turn: ``ai.response.text`` and ``ai.response.toolCalls``."""
    parts = []
    text = attrs.get("ai.response.text")
    if type(text) is str and text:
        parts.append(text_part(text))
    calls = decoded(attrs.get("ai.response.toolCalls"))
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, dict):
                parts.append(
                    tool_call_part(
                        call.get("toolCallId"),
                        call.get("toolName"),
                        _first(call, "input", "args"),
                    )
                )
    return [{"role": "assistant", "parts": parts}] if parts else []


def llm_info(span: Span) -> LlmInfo:
    """One provider request (``ai.*.doGenerate`` / ``doStream``)."""
    a = span.attributes
    inputs, outputs = _tokens(a)
    finish = as_name(a.get("ai.response.finishReason")) or first_name(
        a.get(GEN_AI_RESPONSE_FINISH_REASONS)
    )
    info = LlmInfo(
        model=as_name(_first(a, "ai.response.model", GEN_AI_RESPONSE_MODEL, "ai.model.id")),
        # "openai.responses", "anthropic.messages": the provider, then the API it was asked on
        provider=as_name(_first(a, "ai.model.provider", GEN_AI_SYSTEM)).partition(".")[0],
        input_tokens=inputs,
        output_tokens=outputs,
        finish_reason=finish.replace("-", "_"),  # "tool-calls": the GenAI "tool_calls"
    )
    messages = a.get("ai.prompt.messages")
    if messages is not None:
        info.input_messages, _ = parse_history(messages, "user")
    info.output_messages = _response_message(a)
    return info


def tool_info(span: Span) -> ToolInfo:
    """One ``ai.toolCall`` span."""
    a = span.attributes
    arguments, fallback = tool_arguments(_first(a, "ai.toolCall.args", "ai.toolCall.input"))
    # the result is the tool's return value as JSON: a returned string arrives quoted
    text, result_id, error = tool_result(
        decoded(_first(a, "ai.toolCall.result", "ai.toolCall.output"))
    )
    return ToolInfo(
        name=as_name(a.get("ai.toolCall.name")) or span.name,
        call_id=as_name(a.get("ai.toolCall.id")) or result_id,
        arguments=arguments,
        result=text,
        error=error,
        fallback_arguments=fallback,
    )


def agent_info(span: Span) -> AgentInfo:
    """The user's function (``ai.generateText`` ...): named by its ``functionId``."""
    a = span.attributes
    prompt = a.get("ai.prompt")
    query = None
    if prompt is not None:
        value = decoded(prompt)
        if isinstance(value, dict) and isinstance(value.get("messages"), list):
            messages, _ = parse_messages(value["messages"])
            query = last_text(messages, "user") or None
        else:
            query = payload_text(value)
    text = a.get("ai.response.text")
    inputs, outputs = _tokens(a)
    return AgentInfo(
        name=as_name(a.get(FUNCTION_ID)) or as_name(a.get("resource.name")) or span.name,
        query=query,
        response=text if type(text) is str and text else None,
        raw_input=None if prompt is None else as_text(prompt),
        input_tokens=inputs,
        output_tokens=outputs,
    )
