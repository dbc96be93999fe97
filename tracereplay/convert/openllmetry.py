"""OpenLLMetry / Traceloop: ``traceloop.span.kind`` workflow / agent / task / tool decorator
spans, and LLM spans in the <= 0.54 indexed form (``gen_ai.prompt.N.*``,
``gen_ai.completion.N.tool_calls.K.*``). LLM spans from >= 0.55 use the GenAI attributes and
are read by :mod:`tracereplay.convert.genai`.

``traceloop.entity.input`` is ``{"args": [...], "kwargs": {...}}`` JSON; ``traceloop.entity.output``
is the JSON of the return value, so a returned string arrives quoted and is decoded here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracereplay.convert import genai
from tracereplay.convert.forms import tool_result
from tracereplay.convert.info import AgentInfo, LlmInfo, ToolInfo
from tracereplay.convert.messages import from_legacy_indexed, payload_text
from tracereplay.convert.values import arguments_dict, as_name, as_text, decoded
from tracereplay.semconv import (
    GEN_AI_AGENT_NAME,
    GEN_AI_TOOL_NAME,
    LEGACY_COMPLETION_0_CONTENT,
    LEGACY_COMPLETION_0_ROLE,
    LEGACY_PROMPT_0_CONTENT,
    LEGACY_PROMPT_0_ROLE,
    TRACELOOP_ENTITY_INPUT,
    TRACELOOP_ENTITY_NAME,
    TRACELOOP_ENTITY_OUTPUT,
)
from tracereplay.spans import LogRecord, Span


def _has_prompt(attrs: dict[str, Any]) -> bool:
    return LEGACY_PROMPT_0_ROLE in attrs or LEGACY_PROMPT_0_CONTENT in attrs


def _has_completion(attrs: dict[str, Any]) -> bool:
    return LEGACY_COMPLETION_0_ROLE in attrs or LEGACY_COMPLETION_0_CONTENT in attrs


def llm_info(span: Span, logs: Sequence[LogRecord] = ()) -> LlmInfo:
    """An OpenLLMetry LLM span's call (indexed <= 0.54 form, or the GenAI form)."""
    info = genai.llm_info(span, logs)
    a = span.attributes
    if (not info.input_messages and _has_prompt(a)) or (
        not info.output_messages and _has_completion(a)
    ):
        inputs, outputs, finish = from_legacy_indexed(a)
        info.input_messages = info.input_messages or inputs
        info.output_messages = info.output_messages or outputs
        info.finish_reason = info.finish_reason or finish
    return info


def entity_arguments(value: Any) -> dict[str, Any] | None:
    """Tool arguments from ``traceloop.entity.input``: the kwargs, plus ``args`` when positional
    arguments were passed; ``None`` when the input is absent."""
    if value is None:
        return None
    value = decoded(value)
    if isinstance(value, dict) and ("kwargs" in value or "args" in value):
        kwargs = value.get("kwargs")
        out = dict(kwargs) if isinstance(kwargs, dict) else {}
        args = value.get("args")
        if isinstance(args, list) and args:
            out["args"] = args
        return out
    if isinstance(value, dict):
        return value
    return {} if value == "" else {"input": value}


def entity_output(value: Any) -> str:
    """``traceloop.entity.output`` as text: a JSON string decoded, other JSON kept compact."""
    return as_text(decoded(value))


def _input_text(value: Any) -> str | None:
    value = decoded(value)
    if isinstance(value, dict) and ("args" in value or "kwargs" in value):
        args = value.get("args")
        strings = [v for v in args if isinstance(v, str)] if isinstance(args, list) else []
        if len(strings) == 1:
            return strings[0]
        kwargs = value.get("kwargs")
        return payload_text(kwargs) if isinstance(kwargs, dict) and kwargs else None
    return payload_text(value)


def _langchain_tool_input(value: Any) -> tuple[dict[str, Any], str] | None:
    """The LangChain tool callback's input (``{"input_str", "inputs", "kwargs": {...,
    "tool_call_id"}}``): the tool's arguments and call id."""
    value = decoded(value)
    if not isinstance(value, dict) or "inputs" not in value:
        return None
    inputs = value["inputs"]
    kwargs = value.get("kwargs")
    call_id = as_name(kwargs.get("tool_call_id")) if isinstance(kwargs, dict) else ""
    if isinstance(inputs, dict):
        return inputs, call_id
    return arguments_dict(inputs), call_id


def tool_info(span: Span) -> ToolInfo:
    """A Traceloop ``tool`` span's call: ``traceloop.entity.*``, else the GenAI
    ``gen_ai.tool.call.*`` attributes (these often carry no call id: matched by name and
    order)."""
    a = span.attributes
    info = genai.tool_info(span)
    name = as_name(a.get(TRACELOOP_ENTITY_NAME)) or as_name(a.get(GEN_AI_TOOL_NAME))
    raw_in = a.get(TRACELOOP_ENTITY_INPUT)
    call_id = info.call_id
    langchain = _langchain_tool_input(raw_in)
    if langchain is not None:
        arguments, lc_id = langchain
        call_id = call_id or lc_id
    elif raw_in is not None:
        arguments = entity_arguments(raw_in)
    else:
        arguments = info.arguments
    output = a.get(TRACELOOP_ENTITY_OUTPUT)
    text, result_id, error = (
        tool_result(entity_output(output)) if output is not None else (info.result, "", None)
    )
    return ToolInfo(
        name=name or span.name.removesuffix(".tool") or span.name,
        call_id=call_id or result_id,
        arguments=arguments,
        result=text,
        error=error or info.error,
    )


def agent_info(span: Span) -> AgentInfo:
    """A Traceloop ``agent`` / ``workflow`` span: name, question, answer."""
    a = span.attributes
    raw_in = a.get(TRACELOOP_ENTITY_INPUT)
    raw_out = a.get(TRACELOOP_ENTITY_OUTPUT)
    name = as_name(a.get(GEN_AI_AGENT_NAME)) or as_name(a.get(TRACELOOP_ENTITY_NAME))
    response = None
    if raw_out is not None:
        out = decoded(raw_out)
        response = out if isinstance(out, str) else payload_text(out, output=True)
    return AgentInfo(
        name=name or span.name.rsplit(".", 1)[0] or span.name,
        query=None if raw_in is None else _input_text(raw_in),
        response=response,
        raw_input=None if raw_in is None else as_text(raw_in),
        raw_output=None if raw_out is None else entity_output(raw_out),
    )
