"""OpenInference (Arize): ``openinference.span.kind`` AGENT / CHAIN / LLM / TOOL spans.

LLM messages come from the flattened ``llm.input_messages.N.message.*`` and
``llm.output_messages.N.message.*`` attributes, else from the ``input.value`` / ``output.value``
request and response JSON. Tools read ``tool.name``, ``tool.id``, ``input.value``,
``output.value``; agents and chains ``input.value`` / ``output.value``.
"""

from __future__ import annotations

from tracereplay.convert.detect import AGENT
from tracereplay.convert.detect import detect as detect_span
from tracereplay.convert.forms import (
    is_object_repr,
    method_span_name,
    repr_finish_reason,
    tool_arguments,
    tool_result,
)
from tracereplay.convert.info import AgentInfo, LlmInfo, ToolInfo
from tracereplay.convert.messages import from_openinference, parse_messages, payload_text
from tracereplay.convert.values import as_int, as_name, as_text, decoded
from tracereplay.semconv import (
    GEN_AI_AGENT_NAME,
    INPUT_VALUE,
    LLM_FINISH_REASON,
    LLM_INPUT_MESSAGES_0_CONTENT,
    LLM_INPUT_MESSAGES_0_ROLE,
    LLM_MODEL_NAME,
    LLM_OUTPUT_MESSAGES_0_CONTENT,
    LLM_OUTPUT_MESSAGES_0_ROLE,
    LLM_PROVIDER,
    LLM_SYSTEM,
    LLM_TOKEN_COUNT_COMPLETION,
    LLM_TOKEN_COUNT_PROMPT,
    OPENINFERENCE_AGENT_NAME,
    OPENINFERENCE_GRAPH_NODE_ID,
    OPENINFERENCE_TOOL_CALL_ID,
    OPENINFERENCE_TOOL_ID,
    OPENINFERENCE_TOOL_NAME,
    OUTPUT_MIME_TYPE,
    OUTPUT_VALUE,
)
from tracereplay.spans import Span


def _has_input(attrs: dict) -> bool:
    return LLM_INPUT_MESSAGES_0_ROLE in attrs or LLM_INPUT_MESSAGES_0_CONTENT in attrs


def _has_output(attrs: dict) -> bool:
    return LLM_OUTPUT_MESSAGES_0_ROLE in attrs or LLM_OUTPUT_MESSAGES_0_CONTENT in attrs


def llm_info(span: Span) -> LlmInfo:
    """An OpenInference LLM span's call."""
    a = span.attributes
    info = LlmInfo(
        model=as_name(a.get(LLM_MODEL_NAME)),
        provider=as_name(a.get(LLM_PROVIDER)) or as_name(a.get(LLM_SYSTEM)),
        input_tokens=as_int(a.get(LLM_TOKEN_COUNT_PROMPT)),
        output_tokens=as_int(a.get(LLM_TOKEN_COUNT_COMPLETION)),
        finish_reason=as_name(a.get(LLM_FINISH_REASON)),
    )
    has_in, has_out = _has_input(a), _has_output(a)
    if has_in or has_out:
        info.input_messages, info.output_messages = from_openinference(a)
        if any(not m["parts"] for m in info.input_messages):
            _from_raw_request(info, a.get(INPUT_VALUE))
        _fill_call_ids(info.input_messages, a.get(INPUT_VALUE), "user")
        _fill_call_ids(info.output_messages, a.get(OUTPUT_VALUE), "assistant")
    if not has_in and INPUT_VALUE in a:
        value = decoded(a[INPUT_VALUE])
        if isinstance(value, dict) and isinstance(value.get("messages"), list):
            info.input_messages, _ = parse_messages(value["messages"], "user")
    if has_out:
        if not info.finish_reason and OUTPUT_VALUE in a:
            value = decoded(a[OUTPUT_VALUE])
            if isinstance(value, dict):  # the provider's response JSON
                info.finish_reason = parse_messages(value, "assistant")[1] or repr_finish_reason(
                    value.get("raw")
                )
    elif OUTPUT_VALUE in a:
        info.output_messages, finish = parse_messages(a[OUTPUT_VALUE], "assistant")
        info.finish_reason = info.finish_reason or finish
    return info


def _id_parts(messages: list[dict]) -> list[dict]:
    return [
        part
        for message in messages
        for part in message["parts"]
        if part.get("type") in ("tool_call", "tool_call_response")
    ]


def _raw_messages(raw: object) -> list | dict | None:
    """The message list of a raw request or response JSON (``{"messages": [...]}``, an OpenAI
    response's ``choices``, or the one list of message objects a framework's output holds:
    Haystack's ``{"replies": [...]}``)."""
    value = decoded(raw)
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("messages"), list):
        return value["messages"]
    if isinstance(value.get("choices"), list):
        return value
    lists = [v for v in value.values() if isinstance(v, list) and v]
    return lists[0] if len(lists) == 1 else None


def _from_raw_request(info: LlmInfo, raw: object) -> None:
    """The input messages from the raw request when the flattened ones lost the content of
    some (OpenInference's Haystack instrumentation writes a tool message's role only; the
    request holds each message's repr) and the request gives as many, each with content."""
    value = _raw_messages(raw)
    if not isinstance(value, list):
        return
    messages, _ = parse_messages(value, "user")
    if len(messages) == len(info.input_messages) and all(m["parts"] for m in messages):
        info.input_messages = messages


def _fill_call_ids(messages: list[dict], raw: object, role: str) -> None:
    """Call ids the flattened messages left out (OpenInference's mistralai instrumentation
    writes tool calls without their ``id``), from the raw request or response JSON beside them
    (``input.value`` / ``output.value``): the tool calls and results of both, in order, where
    they agree on the kind of part and the tool's name."""
    parts = _id_parts(messages)
    if not parts or all(part.get("id") for part in parts) or raw is None:
        return
    value = _raw_messages(raw)
    if value is None:
        return
    raw_parts = _id_parts(parse_messages(value, role)[0])
    if len(raw_parts) != len(parts):
        return
    for part, source in zip(parts, raw_parts, strict=True):
        if part["type"] != source["type"] or part.get("name", "") != source.get("name", ""):
            return
    for part, source in zip(parts, raw_parts, strict=True):
        if not part.get("id") and source.get("id"):
            part["id"] = source["id"]


def tool_info(span: Span) -> ToolInfo:
    """An OpenInference TOOL span's call."""
    a = span.attributes
    arguments, fallback = tool_arguments(a.get(INPUT_VALUE), a.get("tool.parameters"))
    output = a.get(OUTPUT_VALUE)
    if type(output) is str and output[:1] == '"' and a.get(OUTPUT_MIME_TYPE) == "application/json":
        output = decoded(output)  # the returned text as JSON (DSPy's tools): the text
    text, result_id, error = tool_result(output)
    return ToolInfo(
        name=as_name(a.get(OPENINFERENCE_TOOL_NAME)) or method_span_name(span.name),
        call_id=as_name(a.get(OPENINFERENCE_TOOL_ID))
        or as_name(a.get(OPENINFERENCE_TOOL_CALL_ID))
        or result_id,
        arguments=arguments,
        result=text,
        error=error,
        fallback_arguments=fallback,
    )


def agent_name(span: Span) -> str:
    """An OpenInference agent's own name: ``agent.name``, ``gen_ai.agent.name``, else the
    agent's ``graph.node.id`` (the node an agent framework names after the agent: CrewAI's
    role, whose span is named after the method it wraps, ``<role>._execute_core`` /
    ``<role>.kickoff``), else the span name less the method it names (``weather_agent.run``,
    ``FunctionAgent.run``: ``forms.generic.method_span_name``)."""
    a = span.attributes
    return (
        as_name(a.get(OPENINFERENCE_AGENT_NAME))
        or as_name(a.get(GEN_AI_AGENT_NAME))
        or (as_name(a.get(OPENINFERENCE_GRAPH_NODE_ID)) if detect_span(span)[0] == AGENT else "")
        or method_span_name(span.name)
    )


def agent_info(span: Span) -> AgentInfo:
    """An OpenInference AGENT (or CHAIN) span: name, question, answer, totals."""
    a = span.attributes
    raw_in = _not_repr(a.get(INPUT_VALUE))
    raw_out = _not_repr(a.get(OUTPUT_VALUE))
    query = None if raw_in is None else payload_text(raw_in)
    response = None if raw_out is None else payload_text(raw_out, output=True)
    return AgentInfo(
        name=agent_name(span),
        query=None if is_object_repr(query) else query,
        response=None if is_object_repr(response) else response,
        raw_input=None if raw_in is None else as_text(raw_in),
        raw_output=None if raw_out is None else as_text(raw_out),
        input_tokens=as_int(a.get(LLM_TOKEN_COUNT_PROMPT)),
        output_tokens=as_int(a.get(LLM_TOKEN_COUNT_COMPLETION)),
    )


def _not_repr(value: object) -> object:
    """A recorded input/output, or None when it is a framework object's repr (``is_object_repr``)."""
    return None if isinstance(value, str) and is_object_repr(value) else value
