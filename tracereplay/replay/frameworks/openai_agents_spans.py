"""The OpenAI Agents SDK's spans as OpenTelemetry GenAI spans, for a replay: whatever traced the
recording (OpenInference's or OpenLLMetry's instrumentor, Logfire, the SDK's own OpenAI
exporter), the replay's runs are read from these.

``GenAiProcessor`` is an SDK ``TracingProcessor``: for each SDK span it starts an OpenTelemetry
span on the replay's provider, under the span of the SDK span's parent (else the current one),
and makes it the current span while the SDK span runs (so an answered tool's ``mark_replayed``
marks its own span); at the SDK span's end it writes what the converter reads as GenAI:

- the SDK trace (one ``Runner`` invocation): ``invoke_workflow <name>``, the wrapper of its
  agents (a handoff target is then a sub-run of the first agent, as in the recording);
- agent: ``invoke_agent <name>`` (``gen_ai.agent.name``);
- function tool: ``execute_tool <name>`` (``gen_ai.tool.name``, ``gen_ai.tool.call.arguments``
  and ``.result``); a handoff: ``execute_tool`` with no tool name (matched to the handoff call);
- model call: ``chat`` with ``gen_ai.input.messages`` / ``gen_ai.output.messages`` built from
  the Responses API input items and response (or the chat messages of a generation span),
  model, usage and finish reason;
- a failed SDK span: status ERROR with the SDK's ``message: data``. Other SDK spans (tasks,
  turns, guardrails) are not recorded: their children hang from the nearest recorded span.
"""

from __future__ import annotations

import threading
from typing import Any

from tracereplay.convert.values import dumps
from tracereplay.semconv import (
    GEN_AI_AGENT_NAME,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_NAME,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_WORKFLOW_NAME,
)

__all__ = ["GenAiProcessor", "input_messages", "output_messages"]


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(exclude_none=True) if callable(dump) else value


def _text_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}] if content else []
    parts = []
    for item in content if isinstance(content, list) else ():
        item = _plain(item)
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append({"type": "text", "content": item["text"]})
    return parts


def _item_message(item: Any) -> dict[str, Any] | None:
    """One Responses API item (input or output) as a GenAI message."""
    item = _plain(item)
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind == "function_call":
        part = {
            "type": "tool_call",
            "id": item.get("call_id") or item.get("id") or "",
            "name": item.get("name") or "",
            "arguments": item.get("arguments"),
        }
        return {"role": "assistant", "parts": [part]}
    if kind == "function_call_output":
        part = {"type": "tool_call_response", "id": item.get("call_id") or "", "response": None}
        part["response"] = item.get("output")
        return {"role": "tool", "parts": [part]}
    if item.get("role") and kind in (None, "message"):
        return {"role": item["role"], "parts": _text_parts(item.get("content"))}
    return None


def input_messages(items: Any, instructions: Any = None) -> list[dict[str, Any]]:
    """A Responses API request's input (text or items) and instructions as GenAI messages."""
    messages = []
    if isinstance(instructions, str) and instructions:
        messages.append({"role": "system", "parts": [{"type": "text", "content": instructions}]})
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in items if isinstance(items, list) else ():
        message = _item_message(item)
        if message is not None:
            messages.append(message)
    return messages


def output_messages(response: Any) -> tuple[list[dict[str, Any]], str]:
    """A Responses API response's output as one assistant message, and its finish reason."""
    parts: list[dict[str, Any]] = []
    for item in getattr(response, "output", None) or ():
        message = _item_message(item)
        if message is not None:
            parts.extend(message["parts"])
    if not parts:
        return [], ""
    calls = any(p["type"] == "tool_call" for p in parts)
    return [{"role": "assistant", "parts": parts}], "tool_calls" if calls else "stop"


def _trace_key(item: Any) -> str:
    """The key of an SDK trace's workflow span (a trace, or a span by the trace it is in)."""
    return f"trace:{getattr(item, 'trace_id', '')}"


def _error_text(error: Any) -> str:
    """An SDK span's error as the instrumentations record it: ``message: data`` (the data as
    Python prints it, as OpenInference's does, so a replay's error reads as its recording's)."""
    if not isinstance(error, dict):
        return "error"
    message, data = str(error.get("message") or "error"), error.get("data")
    return f"{message}: {data}" if data else message


class GenAiProcessor:
    """An SDK trace processor writing GenAI spans to ``tracer_provider`` (see the module doc)."""

    def __init__(self, tracer_provider: Any) -> None:
        self._tracer = tracer_provider.get_tracer("tracereplay.openai_agents")
        self._lock = threading.Lock()
        self._open: dict[str, tuple[Any, Any]] = {}
        #: SDK spans not recorded (tasks, turns): the recorded span their children hang from
        self._alias: dict[str, str] = {}

    # the SDK's TracingProcessor interface
    def on_trace_start(self, trace: Any) -> None:
        name = getattr(trace, "name", None) or "Agent workflow"
        otel = self._tracer.start_span(
            f"invoke_workflow {name}",
            attributes={GEN_AI_OPERATION_NAME: "invoke_workflow", GEN_AI_WORKFLOW_NAME: name},
        )
        with self._lock:
            self._open[_trace_key(trace)] = (otel, None)

    def on_trace_end(self, trace: Any) -> None:
        with self._lock:
            entry = self._open.pop(_trace_key(trace), None)
        if entry is not None:
            entry[0].end()

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass

    def on_span_start(self, span: Any) -> None:
        from opentelemetry import context, trace

        start = self._start(span.span_data)
        with self._lock:
            key = self._alias.get(span.parent_id or "", span.parent_id)
            if key not in self._open:
                key = _trace_key(span)
            if start is None:
                self._alias[span.span_id] = key
                return
            parent = self._open.get(key)
        name, attributes = start
        ctx = trace.set_span_in_context(parent[0]) if parent is not None else None
        otel = self._tracer.start_span(name, context=ctx, attributes=attributes)
        token = context.attach(trace.set_span_in_context(otel))
        with self._lock:
            self._open[span.span_id] = (otel, token)

    def on_span_end(self, span: Any) -> None:
        from opentelemetry import context
        from opentelemetry.trace import Status, StatusCode

        with self._lock:
            self._alias.pop(span.span_id, None)
            entry = self._open.pop(span.span_id, None)
        if entry is None:
            return
        otel, token = entry
        for key, value in self._end(span.span_data).items():
            if value is not None:
                otel.set_attribute(key, value)
        if span.error:
            otel.set_status(Status(StatusCode.ERROR, _error_text(span.error)))
        otel.end()
        try:
            context.detach(token)
        except Exception:  # noqa: BLE001 - ended in another context than it started
            pass

    # what each SDK span type gives
    def _start(self, data: Any) -> tuple[str, dict[str, Any]] | None:
        kind = getattr(data, "type", "")
        if kind == "agent":
            return f"invoke_agent {data.name}", {
                GEN_AI_OPERATION_NAME: "invoke_agent",
                GEN_AI_AGENT_NAME: data.name,
            }
        if kind == "function":
            return f"execute_tool {data.name}", {
                GEN_AI_OPERATION_NAME: "execute_tool",
                GEN_AI_TOOL_NAME: data.name,
            }
        if kind == "handoff":
            return "handoff", {GEN_AI_OPERATION_NAME: "execute_tool"}
        if kind in ("response", "generation"):
            return "chat", {GEN_AI_OPERATION_NAME: "chat"}
        return None

    def _end(self, data: Any) -> dict[str, Any]:
        kind = getattr(data, "type", "")
        if kind == "function":
            return {
                GEN_AI_TOOL_CALL_ARGUMENTS: data.input,
                GEN_AI_TOOL_CALL_RESULT: None if data.output is None else str(data.output),
            }
        if kind == "handoff":
            return {GEN_AI_TOOL_CALL_RESULT: data.to_agent}
        if kind == "response":
            response = data.response
            outputs, finish = output_messages(response)
            usage = getattr(response, "usage", None)
            return {
                GEN_AI_INPUT_MESSAGES: dumps(
                    input_messages(data.input, getattr(response, "instructions", None))
                ),
                GEN_AI_OUTPUT_MESSAGES: dumps(outputs) if outputs else None,
                GEN_AI_RESPONSE_FINISH_REASONS: (finish,) if finish else None,
                GEN_AI_RESPONSE_MODEL: getattr(response, "model", None),
                GEN_AI_USAGE_INPUT_TOKENS: getattr(usage, "input_tokens", None),
                GEN_AI_USAGE_OUTPUT_TOKENS: getattr(usage, "output_tokens", None),
            }
        if kind == "generation":
            usage = data.usage if isinstance(data.usage, dict) else {}
            return {
                GEN_AI_INPUT_MESSAGES: dumps(list(data.input or [])),
                GEN_AI_OUTPUT_MESSAGES: dumps(list(data.output or [])) if data.output else None,
                GEN_AI_REQUEST_MODEL: data.model,
                GEN_AI_USAGE_INPUT_TOKENS: usage.get("input_tokens"),
                GEN_AI_USAGE_OUTPUT_TOKENS: usage.get("output_tokens"),
            }
        return {}
