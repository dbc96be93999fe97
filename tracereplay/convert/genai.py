"""OpenTelemetry GenAI semantic conventions: ``chat`` / ``execute_tool`` / ``invoke_agent`` spans.

Reads the current attributes (``gen_ai.input.messages``, ``gen_ai.tool.call.*``,
``gen_ai.provider.name``), the older ones (``gen_ai.system``, ``gen_ai.usage.prompt_tokens``,
``gen_ai.prompt`` / ``gen_ai.completion`` JSON), and message content sent as events: span events
(semconv 1.27) or OTLP log records joined by span id (semconv 1.28 - 1.36, and the 1.37
``gen_ai.client.inference.operation.details`` event).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tracereplay.convert.forms import tool_result
from tracereplay.convert.info import AgentInfo, LlmInfo, ToolInfo
from tracereplay.convert.messages import (
    Message,
    from_events,
    last_text,
    parse_history,
    parse_messages,
    payload_text,
    system_message,
)
from tracereplay.convert.values import (
    arguments_dict,
    as_int,
    as_name,
    as_text,
    decoded,
    first_name,
)
from tracereplay.semconv import (
    EVENT_CHOICE,
    EVENT_CONTENT_COMPLETION,
    EVENT_CONTENT_PROMPT,
    EVENT_INFERENCE_DETAILS,
    EVENT_NAME,
    EVENT_PREFIX,
    EVENT_TOOL_MESSAGE,
    EVENT_USER_MESSAGE,
    GEN_AI_AGENT_NAME,
    GEN_AI_COMPLETION,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROMPT,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_SYSTEM,
    GEN_AI_SYSTEM_INSTRUCTIONS,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_NAME,
    GEN_AI_TOOL_STATUS,
    GEN_AI_USAGE_COMPLETION_TOKENS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_USAGE_PROMPT_TOKENS,
    GEN_AI_WORKFLOW_NAME,
    TOOL_STATUS,
)
from tracereplay.spans import LogRecord, Span


def tokens(attrs: dict[str, Any], key: str, legacy: str) -> int | None:
    """A usage count from ``key``, else from its pre-1.27 name ``legacy``."""
    value = as_int(attrs.get(key))
    return as_int(attrs.get(legacy)) if value is None else value


def event_name(record: LogRecord) -> str:
    """A log record's event name: ``eventName`` on the wire, or the older ``event.name`` attr."""
    return record.event_name or as_name(record.attributes.get(EVENT_NAME))


def _event_messages(
    span: Span, logs: Sequence[LogRecord]
) -> tuple[list[Message], list[Message], str]:
    pairs: list[tuple[str, Any]] = []
    inputs: list[Message] = []
    outputs: list[Message] = []
    finish = ""
    for event in span.events:
        name = event.get("name")
        attrs = event.get("attributes")
        if not isinstance(attrs, dict):
            continue
        if name == EVENT_CONTENT_PROMPT:
            inputs, _ = parse_messages(attrs.get(GEN_AI_PROMPT), "user")
        elif name == EVENT_CONTENT_COMPLETION:
            outputs, finish = parse_messages(attrs.get(GEN_AI_COMPLETION), "assistant")
        elif name == EVENT_INFERENCE_DETAILS:
            inputs, _ = parse_messages(attrs.get(GEN_AI_INPUT_MESSAGES), "user")
            outputs, finish = parse_messages(attrs.get(GEN_AI_OUTPUT_MESSAGES), "assistant")
        elif isinstance(name, str) and name.startswith(EVENT_PREFIX):
            pairs.append((name, attrs))
    for record in logs:
        name = event_name(record)
        if name == EVENT_INFERENCE_DETAILS:
            source = (
                record.attributes if GEN_AI_INPUT_MESSAGES in record.attributes else record.body
            )
            if isinstance(source, dict):
                inputs, _ = parse_messages(source.get(GEN_AI_INPUT_MESSAGES), "user")
                outputs, finish = parse_messages(source.get(GEN_AI_OUTPUT_MESSAGES), "assistant")
        elif name.startswith(EVENT_PREFIX):
            pairs.append((name, record.body))
    if pairs:
        event_in, event_out, event_finish = from_events(pairs)
        inputs = inputs or event_in
        outputs = outputs or event_out
        finish = finish or event_finish
    return inputs, outputs, finish


_EMPTY_FINISH = re.compile(r'"finish_reason"\s*:\s*""')


def _final_outputs(value: Any) -> Any:
    """Output messages without the streamed chunks some instrumentations list before the
    whole message (each chunk with an empty ``finish_reason``, the whole one with its own)."""
    if type(value) is str and _EMPTY_FINISH.search(value) is None:
        return value
    messages = decoded(value)
    if not isinstance(messages, list):
        return value
    done = [m for m in messages if isinstance(m, dict) and m.get("finish_reason")]
    partial = [m for m in messages if isinstance(m, dict) and m.get("finish_reason") == ""]
    return done if done and partial else messages


def llm_info(span: Span, logs: Sequence[LogRecord] = ()) -> LlmInfo:
    """A GenAI ``chat`` (or ``text_completion`` / ``generate_content``) span's call."""
    a = span.attributes
    info = LlmInfo(
        model=as_name(a.get(GEN_AI_RESPONSE_MODEL)) or as_name(a.get(GEN_AI_REQUEST_MODEL)),
        provider=as_name(a.get(GEN_AI_PROVIDER_NAME)) or as_name(a.get(GEN_AI_SYSTEM)),
        input_tokens=tokens(a, GEN_AI_USAGE_INPUT_TOKENS, GEN_AI_USAGE_PROMPT_TOKENS),
        output_tokens=tokens(a, GEN_AI_USAGE_OUTPUT_TOKENS, GEN_AI_USAGE_COMPLETION_TOKENS),
        finish_reason=first_name(a.get(GEN_AI_RESPONSE_FINISH_REASONS)),
    )
    finish = ""
    if GEN_AI_INPUT_MESSAGES in a:
        info.input_messages, _ = parse_history(a[GEN_AI_INPUT_MESSAGES], "user")
    elif GEN_AI_PROMPT in a:
        info.input_messages, _ = parse_messages(a[GEN_AI_PROMPT], "user")
    if GEN_AI_OUTPUT_MESSAGES in a:
        info.output_messages, finish = parse_messages(
            _final_outputs(a[GEN_AI_OUTPUT_MESSAGES]), "assistant"
        )
    elif GEN_AI_COMPLETION in a:
        info.output_messages, finish = parse_messages(a[GEN_AI_COMPLETION], "assistant")
    if (not info.input_messages or not info.output_messages) and (span.events or logs):
        event_in, event_out, event_finish = _event_messages(span, logs)
        info.input_messages = info.input_messages or event_in
        info.output_messages = info.output_messages or event_out
        finish = finish or event_finish
    system = a.get(GEN_AI_SYSTEM_INSTRUCTIONS)
    if system is not None:
        message = system_message(system)
        if message is not None and not (
            info.input_messages and info.input_messages[0]["role"] == "system"
        ):
            info.input_messages = [message, *info.input_messages]
    info.finish_reason = info.finish_reason or finish
    return info


def _tool_events(span: Span) -> tuple[Any, Any, str]:
    """Arguments, result and call id a tool span reports in events (``gen_ai.tool.message``
    carries the arguments, ``gen_ai.choice`` the result: strands and GenAI <= 1.36)."""
    args = result = None
    call_id = ""
    for event in span.events:
        attrs = event.get("attributes")
        if not isinstance(attrs, dict):
            continue
        name = event.get("name")
        if name == EVENT_TOOL_MESSAGE:
            args = attrs.get("content", args)
            call_id = call_id or as_name(attrs.get("id"))
        elif name == EVENT_CHOICE:
            result = attrs.get("message", attrs.get("content", result))
            call_id = call_id or as_name(attrs.get("id"))
    return args, result, call_id


def _tool_status(attrs: dict[str, Any]) -> str:
    """The tool's own status, where an instrumentation writes one (``gen_ai.tool.status``;
    strands < 1.0 ``tool.status``): ``success`` / ``error``."""
    return as_name(attrs.get(GEN_AI_TOOL_STATUS)) or as_name(attrs.get(TOOL_STATUS))


def tool_info(span: Span) -> ToolInfo:
    """A GenAI ``execute_tool`` span's call: the ``gen_ai.tool.call.*`` attributes, else its
    events; the result is taken out of the framework's wrapper (``tool_result``)."""
    a = span.attributes
    name = as_name(a.get(GEN_AI_TOOL_NAME))
    if not name:
        name = span.name.removeprefix("execute_tool").strip() or span.name
    args = a.get(GEN_AI_TOOL_CALL_ARGUMENTS)
    result = a.get(GEN_AI_TOOL_CALL_RESULT)
    call_id = as_name(a.get(GEN_AI_TOOL_CALL_ID))
    if (args is None or result is None) and span.events:
        event_args, event_result, event_id = _tool_events(span)
        args = event_args if args is None else args
        result = event_result if result is None else result
        call_id = call_id or event_id
    text, result_id, error = tool_result(result)
    if error is None and _tool_status(a) == "error" and text:
        # the status says it failed; "Error: " is the framework's wording of the result
        error = text[7:] if text.startswith("Error: ") and text[7:].strip() else text
    return ToolInfo(
        name=name,
        call_id=call_id or result_id,
        arguments=None if args is None else arguments_dict(args),
        result=text,
        error=error,
    )


def _agent_events(span: Span) -> tuple[str | None, str | None]:
    """The question and answer an agent span reports in events (``gen_ai.user.message``,
    ``gen_ai.choice``), as strands does; the answer's trailing newline is dropped."""
    query = response = None
    for event in span.events:
        attrs = event.get("attributes")
        if not isinstance(attrs, dict):
            continue
        name = event.get("name")
        if name == EVENT_USER_MESSAGE:
            query = payload_text(attrs.get("content")) or query
        elif name == EVENT_CHOICE:
            text = payload_text(attrs.get("message", attrs.get("content")), output=True)
            response = text.rstrip("\n") if text else response
    return query, response


def agent_info(span: Span) -> AgentInfo:
    """A GenAI ``invoke_agent`` / ``invoke_workflow`` span: name, question, answer, totals."""
    a = span.attributes
    name = as_name(a.get(GEN_AI_AGENT_NAME))
    if not name:
        for prefix in ("invoke_agent", "invoke_workflow"):
            if span.name.startswith(prefix):
                name = span.name[len(prefix) :].strip()
                break
        name = name or as_name(a.get(GEN_AI_WORKFLOW_NAME)) or span.name
    query = response = raw_in = raw_out = None
    if GEN_AI_INPUT_MESSAGES in a:
        messages, _ = parse_messages(a[GEN_AI_INPUT_MESSAGES], "user")
        query = last_text(messages, "user") or last_text(messages) or None
        raw_in = as_text(a[GEN_AI_INPUT_MESSAGES])
    if GEN_AI_OUTPUT_MESSAGES in a:
        messages, _ = parse_messages(a[GEN_AI_OUTPUT_MESSAGES], "assistant")
        response = last_text(messages) or None
        raw_out = as_text(a[GEN_AI_OUTPUT_MESSAGES])
    if (query is None or response is None) and span.events:
        event_query, event_response = _agent_events(span)
        query = query if query is not None else event_query
        response = response if response is not None else event_response
    return AgentInfo(
        name=name,
        query=query,
        response=response,
        raw_input=raw_in,
        raw_output=raw_out,
        input_tokens=tokens(a, GEN_AI_USAGE_INPUT_TOKENS, GEN_AI_USAGE_PROMPT_TOKENS),
        output_tokens=tokens(a, GEN_AI_USAGE_OUTPUT_TOKENS, GEN_AI_USAGE_COMPLETION_TOKENS),
    )
