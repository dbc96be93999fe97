"""OpenInference (Arize): ``openinference.span.kind`` AGENT / CHAIN / LLM / TOOL spans.

LLM messages come from the flattened ``llm.input_messages.N.message.*`` and
``llm.output_messages.N.message.*`` attributes, else from the ``input.value`` / ``output.value``
request and response JSON. Tools read ``tool.name``, ``tool.id``, ``input.value``,
``output.value``; agents and chains ``input.value`` / ``output.value``.
"""

from __future__ import annotations

from tracereplay.convert.framework_forms import tool_arguments, tool_result
from tracereplay.convert.info import AgentInfo, LlmInfo, ToolInfo
from tracereplay.convert.messages import from_openinference, parse_messages, payload_text
from tracereplay.convert.values import as_int, as_name, as_text, decoded
from tracereplay.spans import Span


def _has_input(attrs: dict) -> bool:
    return (
        "llm.input_messages.0.message.role" in attrs
        or "llm.input_messages.0.message.content" in attrs
    )


def _has_output(attrs: dict) -> bool:
    return (
        "llm.output_messages.0.message.role" in attrs
        or "llm.output_messages.0.message.content" in attrs
    )


def llm_info(span: Span) -> LlmInfo:
    """An OpenInference LLM span's call."""
    a = span.attributes
    info = LlmInfo(
        model=as_name(a.get("llm.model_name")),
        provider=as_name(a.get("llm.provider")) or as_name(a.get("llm.system")),
        input_tokens=as_int(a.get("llm.token_count.prompt")),
        output_tokens=as_int(a.get("llm.token_count.completion")),
        finish_reason=as_name(a.get("llm.finish_reason")),
    )
    has_in, has_out = _has_input(a), _has_output(a)
    if has_in or has_out:
        info.input_messages, info.output_messages = from_openinference(a)
    if not has_in and "input.value" in a:
        value = decoded(a["input.value"])
        if isinstance(value, dict) and isinstance(value.get("messages"), list):
            info.input_messages, _ = parse_messages(value["messages"], "user")
    if has_out:
        if not info.finish_reason and "output.value" in a:
            value = decoded(a["output.value"])
            if isinstance(value, dict):  # the provider's response JSON
                info.finish_reason = parse_messages(value, "assistant")[1]
    elif "output.value" in a:
        info.output_messages, finish = parse_messages(a["output.value"], "assistant")
        info.finish_reason = info.finish_reason or finish
    return info


def tool_info(span: Span) -> ToolInfo:
    """An OpenInference TOOL span's call."""
    a = span.attributes
    arguments, fallback = tool_arguments(a.get("input.value"))
    text, result_id, error = tool_result(a.get("output.value"))
    return ToolInfo(
        name=as_name(a.get("tool.name")) or span.name,
        call_id=as_name(a.get("tool.id")) or as_name(a.get("tool_call.id")) or result_id,
        arguments=arguments,
        result=text,
        error=error,
        fallback_arguments=fallback,
    )


def agent_info(span: Span) -> AgentInfo:
    """An OpenInference AGENT (or CHAIN) span: name, question, answer, totals."""
    a = span.attributes
    raw_in = a.get("input.value")
    raw_out = a.get("output.value")
    return AgentInfo(
        name=as_name(a.get("agent.name")) or as_name(a.get("gen_ai.agent.name")) or span.name,
        query=None if raw_in is None else payload_text(raw_in),
        response=None if raw_out is None else payload_text(raw_out, output=True),
        raw_input=None if raw_in is None else as_text(raw_in),
        raw_output=None if raw_out is None else as_text(raw_out),
        input_tokens=as_int(a.get("llm.token_count.prompt")),
        output_tokens=as_int(a.get("llm.token_count.completion")),
    )
