"""Logfire (Pydantic): the attributes Logfire writes on its own spans.

Every Logfire span carries ``logfire.msg_template`` (which is also its name) and ``logfire.msg``
(the template filled in), and Logfire sends every non-scalar value as JSON text. What its
integrations record beyond that:

- LLM spans (``gen_ai.operation.name = chat``, read as GenAI first): the messages as one
  ``events`` attribute, a JSON list of GenAI <= 1.36 event dicts (``event.name`` inside each),
  the request's first and then the response's; the Responses API response as ``response``.
  The SDK's Chat Completions calls (generation spans): the chat messages as ``input`` and
  ``output`` (no finish reason: told by the output, tool calls or text).
- The OpenAI Agents SDK (``logfire.instrument_openai_agents()``): each SDK span's data
  (``SpanData.export()``) spread as attributes, its ``type`` dropped when the template does not
  show it. The kind is told by that data's fields: an agent (``handoffs``, ``output_type``), a
  function tool (``input``, ``output``, ``mcp_data``), a handoff (``from_agent``, ``to_agent``),
  a generation (``input``, ``model_config``),
  the trace (``agent_trace_id``), a task or turn (``sdk_span_type``). A failed SDK span has status
  ERROR without a message and the SDK's error as ``error`` (``{"message", "data"}``).
"""

from __future__ import annotations

from typing import Any

from tracereplay.convert.forms import tool_arguments, tool_result
from tracereplay.convert.info import AgentInfo, LlmInfo, ToolInfo
from tracereplay.convert.messages import Message, from_events, parse_messages
from tracereplay.convert.values import as_name, as_text, decoded
from tracereplay.semconv import (
    AGENTS_ERROR,
    AGENTS_FROM_AGENT,
    AGENTS_HANDOFFS,
    AGENTS_INPUT,
    AGENTS_MCP_DATA,
    AGENTS_MODEL_CONFIG,
    AGENTS_NAME,
    AGENTS_OUTPUT,
    AGENTS_OUTPUT_TYPE,
    AGENTS_SDK_SPAN_TYPE,
    AGENTS_SPAN_TYPE,
    AGENTS_TO_AGENT,
    AGENTS_TRACE_ID,
    EVENT_NAME,
    LOGFIRE_EVENTS,
    LOGFIRE_MSG,
    LOGFIRE_MSG_TEMPLATE,
    LOGFIRE_RESPONSE,
)
from tracereplay.spans import Span

LOGFIRE = "logfire"

__all__ = [
    "LOGFIRE",
    "SDK_AGENT_TYPES",
    "SDK_LLM_TYPES",
    "SDK_TOOL_TYPES",
    "SDK_WORKFLOW_TYPES",
    "agent_info",
    "display_name",
    "event_messages",
    "fill_llm_info",
    "is_logfire",
    "sdk_error",
    "sdk_span_type",
    "tool_info",
]

#: the SDK's span ``type`` values (``SpanData.type``) read as an agent, a tool or a workflow
SDK_AGENT_TYPES = frozenset({"agent"})
SDK_TOOL_TYPES = frozenset({"function", "handoff"})
SDK_WORKFLOW_TYPES = frozenset({"task", "trace"})
SDK_LLM_TYPES = frozenset({"generation"})
_SDK_TYPES = SDK_AGENT_TYPES | SDK_TOOL_TYPES | SDK_WORKFLOW_TYPES | SDK_LLM_TYPES


def is_logfire(span: Span) -> bool:
    """Whether Logfire wrote ``span`` (its message template is on it)."""
    return LOGFIRE_MSG_TEMPLATE in span.attributes


def sdk_span_type(attrs: dict[str, Any]) -> str:
    """The OpenAI Agents SDK span type whose data a Logfire span carries, ``""`` for none: its
    ``type`` (``sdk_span_type`` for the SDK's custom task/turn spans), else told by the fields
    of the data the SDK exports for that type."""
    kind = as_name(attrs.get(AGENTS_SDK_SPAN_TYPE)) or as_name(attrs.get(AGENTS_SPAN_TYPE))
    if kind in _SDK_TYPES:
        return kind
    if AGENTS_TRACE_ID in attrs:
        return "trace"
    if AGENTS_NAME in attrs and AGENTS_HANDOFFS in attrs and AGENTS_OUTPUT_TYPE in attrs:
        return "agent"
    if AGENTS_NAME in attrs and AGENTS_INPUT in attrs and AGENTS_MCP_DATA in attrs:
        return "function"
    if AGENTS_FROM_AGENT in attrs and AGENTS_TO_AGENT in attrs:
        return "handoff"
    if AGENTS_INPUT in attrs and AGENTS_MODEL_CONFIG in attrs:
        return "generation"
    return kind


def display_name(span: Span) -> str:
    """A Logfire span's name with its template filled in (``logfire.msg``) when the span name is
    the bare template (``Agent run: {name!r}``), else the span name."""
    message = as_name(span.attributes.get(LOGFIRE_MSG))
    if message and "{" in span.name and span.name == span.attributes.get(LOGFIRE_MSG_TEMPLATE):
        return message
    return span.name


def sdk_error(span: Span) -> str | None:
    """The SDK's error a Logfire span records (``error`` = ``{"message", "data": {"error"}}``) on
    one line, ``None`` when there is none."""
    value = decoded(span.attributes.get(AGENTS_ERROR))
    if not isinstance(value, dict):
        return None
    message = as_text(value.get("message")).strip()
    data = value.get("data")
    detail = as_text(data.get("error")).strip() if isinstance(data, dict) else ""
    if message and detail:
        return f"{message}: {detail}"
    return message or detail or None


def _events(value: Any) -> list[tuple[str, Any]]:
    items = decoded(value)
    if not isinstance(items, list):
        return []
    return [
        (as_name(item.get(EVENT_NAME)), item)
        for item in items
        if isinstance(item, dict) and item.get(EVENT_NAME)
    ]


def event_messages(span: Span) -> tuple[list[Message], list[Message]]:
    """Input and output messages of a Logfire LLM span's ``events`` list. Logfire lists the
    request's messages, then the response's as assistant messages: when the span holds a
    response, the assistant messages after the last message of any other role are the output."""
    inputs, _, _ = from_events(_events(span.attributes.get(LOGFIRE_EVENTS)))
    if decoded(span.attributes.get(LOGFIRE_RESPONSE)) in (None, "", {}):
        return inputs, []
    cut = len(inputs)
    while cut > 0 and inputs[cut - 1]["role"] == "assistant":
        cut -= 1
    return inputs[:cut], inputs[cut:]


def fill_llm_info(span: Span, info: LlmInfo) -> LlmInfo:
    """``info`` (read as GenAI) with what only Logfire's own attributes give: the messages
    (an SDK generation span's chat messages as ``input`` / ``output``, else ``events``)."""
    a = span.attributes
    if sdk_span_type(a) in SDK_LLM_TYPES:
        info.input_messages = info.input_messages or parse_messages(a.get(AGENTS_INPUT))[0]
        if not info.output_messages:
            info.output_messages = parse_messages(a.get(AGENTS_OUTPUT), "assistant")[0]
        if not info.finish_reason and info.output_messages:
            calls = any(p.get("type") == "tool_call" for p in info.output_messages[-1]["parts"])
            info.finish_reason = "tool_calls" if calls else "stop"
        return info
    if LOGFIRE_EVENTS in a and not (info.input_messages and info.output_messages):
        inputs, outputs = event_messages(span)
        info.input_messages = info.input_messages or inputs
        info.output_messages = info.output_messages or outputs
    return info


def tool_info(span: Span) -> ToolInfo:
    """An SDK function or handoff span: name, arguments (``input``), result (``output``). A
    handoff records no tool name (``Handoff: triage → forecaster``): left empty, the call is
    matched to the one request of its round no other span answered; its result is the agent
    handed to."""
    a = span.attributes
    if sdk_span_type(a) == "handoff":
        return ToolInfo(name="", result=as_name(a.get(AGENTS_TO_AGENT)) or None)
    arguments, fallback = tool_arguments(a.get(AGENTS_INPUT))
    text, result_id, error = tool_result(a.get(AGENTS_OUTPUT))
    return ToolInfo(
        name=as_name(a.get(AGENTS_NAME)) or display_name(span),
        call_id=result_id,
        arguments=arguments,
        result=text,
        error=error,
        fallback_arguments=fallback,
    )


def agent_info(span: Span) -> AgentInfo:
    """An SDK agent, task or trace span: its name (the agent's, the workflow's). The SDK records
    no input or output on them: the question and answer come from the LLM calls."""
    a = span.attributes
    if sdk_span_type(a) in _SDK_TYPES:
        return AgentInfo(name=as_name(a.get(AGENTS_NAME)) or display_name(span))
    return AgentInfo(name=display_name(span))
