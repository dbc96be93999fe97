"""Recording one LLM call as a GenAI ``chat`` span: ``with run.llm_call(...) as llm:``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

from opentelemetry.trace import SpanKind
from opentelemetry.util.types import AttributeValue

from tracereplay.sdk import attributes as A
from tracereplay.sdk.content import ContentPolicy, current_policy
from tracereplay.sdk.health import guard
from tracereplay.sdk.messages import (
    GenAIMessage,
    as_dict,
    output_message,
    to_genai_message,
    to_genai_messages,
    tool_calls_of,
)
from tracereplay.sdk.span_scope import SpanScope, SyncAsyncContext

ToolCallSink = Callable[[list[dict[str, Any]]], None]

#: request settings recorded under their GenAI names (what offline replay compares)
REQUEST_PARAMETERS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "max_output_tokens": "gen_ai.request.max_tokens",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "seed": "gen_ai.request.seed",
    "stop": "gen_ai.request.stop_sequences",
    "stop_sequences": "gen_ai.request.stop_sequences",
}
#: the other request settings, as one JSON object
OTHER_PARAMETERS = "tracereplay.llm.request.parameters"


def parameter_attributes(
    parameters: Mapping[str, Any], policy: ContentPolicy
) -> dict[str, AttributeValue]:
    """Span attributes for a request's settings (``temperature``, ``max_tokens``...): the GenAI
    ones under their names, the rest as JSON under ``tracereplay.llm.request.parameters``
    (strings redacted and capped)."""
    attrs: dict[str, AttributeValue] = {}
    other: dict[str, Any] = {}
    for key, value in parameters.items():
        if value is None:
            continue
        name = REQUEST_PARAMETERS.get(key)
        plain = isinstance(value, (int, float, str, list, tuple)) and not isinstance(value, bool)
        if name is None or not plain:
            other[key] = value
        elif isinstance(value, (list, tuple)):
            attrs[name] = [policy.text(str(v)) for v in value]
        elif isinstance(value, str):
            attrs[name] = [policy.text(value)] if name.endswith("stop_sequences") else value
        else:
            attrs[name] = value
    if other:
        attrs[OTHER_PARAMETERS] = policy.json(other)
    return attrs


class LlmCallHandle:
    """The LLM call being recorded: set what the model answered and what it cost."""

    __slots__ = ("_scope", "_policy", "_on_tool_calls", "output_messages")

    def __init__(self, scope: SpanScope, policy: ContentPolicy, on_tool_calls: ToolCallSink | None):
        self._scope = scope
        self._policy = policy
        self._on_tool_calls = on_tool_calls
        self.output_messages: list[GenAIMessage] = []

    def set_output(
        self,
        content: Any = None,
        tool_calls: Iterable[Any] | None = None,
        finish_reason: str | None = None,
    ) -> None:
        """The model's answer: text and/or tool calls (``{"id","name","arguments"}`` or OpenAI's
        ``{"id","function":{"name","arguments"}}``), and its finish reason as the provider gave it."""
        with guard("llm output"):
            message = output_message(content, tool_calls, finish_reason)
            self._set_output_messages([message], [finish_reason or message["finish_reason"]])

    def set_output_messages(self, messages: Any, finish_reasons: list[str] | None = None) -> None:
        """Several output messages (choices), OpenAI-style or GenAI-shaped."""
        with guard("llm output"):
            converted = []
            for m in to_genai_messages(messages):
                m = dict(m)
                m.setdefault("finish_reason", "tool_call" if tool_calls_of([m]) else "stop")
                converted.append(m)
            reasons = finish_reasons or [str(m["finish_reason"]) for m in converted]
            self._set_output_messages(converted, reasons)

    def set_usage(self, input_tokens: int | None = None, output_tokens: int | None = None) -> None:
        """Token counts as the provider reported them (input includes cached tokens)."""
        span = self._scope.span
        with guard("llm usage"):
            if input_tokens is not None:
                span.set_attribute(A.USAGE_INPUT_TOKENS, int(input_tokens))
            if output_tokens is not None:
                span.set_attribute(A.USAGE_OUTPUT_TOKENS, int(output_tokens))

    def set_response_model(self, model: str) -> None:
        with guard("llm response model"):
            self._scope.span.set_attribute(A.RESPONSE_MODEL, str(model))

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        with guard("llm attribute"):
            self._scope.span.set_attribute(key, value)

    def set_parameters(self, **parameters: Any) -> None:
        """The request's settings as sent (``temperature=0.2, max_tokens=512, ...``): offline
        replay (``tracereplay eval --llm recorded``) reports a replay that changes them."""
        with guard("llm parameters"):
            span = self._scope.span
            for key, value in parameter_attributes(parameters, self._policy).items():
                span.set_attribute(key, value)

    def set_openai_response(self, response: Any) -> None:
        """Record an OpenAI-style chat completion (the openai client's object or its dict):
        the choices' messages, finish reasons, usage, response model and id."""
        with guard("openai response"):
            data = as_dict(response)
            if not isinstance(data, Mapping):
                raise TypeError(f"not a chat completion: {type(response).__name__}")
            choices = sorted(data.get("choices") or [], key=lambda c: c.get("index", 0))
            messages, reasons = [], []
            for choice in choices:
                message = to_genai_message(choice.get("message") or {"role": "assistant"})
                reason = choice.get("finish_reason") or "stop"
                message["finish_reason"] = output_message(finish_reason=reason)["finish_reason"]
                messages.append(message)
                reasons.append(reason)
            self._set_output_messages(messages, reasons)
            usage = data.get("usage") or {}
            self.set_usage(usage.get("prompt_tokens"), usage.get("completion_tokens"))
            span = self._scope.span
            if data.get("model"):
                span.set_attribute(A.RESPONSE_MODEL, str(data["model"]))
            if data.get("id"):
                span.set_attribute(A.RESPONSE_ID, str(data["id"]))

    def _set_output_messages(self, messages: list[GenAIMessage], reasons: list[str]) -> None:
        self.output_messages = messages
        span = self._scope.span
        span.set_attribute(A.RESPONSE_FINISH_REASONS, [str(r) for r in reasons])
        if self._policy.capture:
            span.set_attribute(A.OUTPUT_MESSAGES, self._policy.json(messages))
        if self._on_tool_calls is not None:
            calls = tool_calls_of(messages)
            if calls:
                self._on_tool_calls(calls)


class LlmCall(SyncAsyncContext[LlmCallHandle]):
    """Context manager (sync and async) around one LLM call; yields an ``LlmCallHandle``."""

    def __init__(
        self,
        model: str,
        messages: Any = None,
        *,
        provider: str | None = None,
        tools: Any = None,
        system_instructions: str | None = None,
        attributes: Mapping[str, AttributeValue] | None = None,
        on_tool_calls: ToolCallSink | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.parameters = parameters
        self.messages = messages
        self.provider = provider
        self.tools = tools
        self.system_instructions = system_instructions
        self.attributes = attributes
        self._on_tool_calls = on_tool_calls
        self._scope: SpanScope | None = None
        self._policy: ContentPolicy | None = None

    def _start(self) -> LlmCallHandle:
        policy = self._policy = current_policy()
        attrs: dict[str, AttributeValue] = {A.OPERATION_NAME: A.OP_CHAT}
        with guard("llm attributes"):
            attrs[A.REQUEST_MODEL] = str(self.model)
            if self.provider:
                attrs[A.PROVIDER_NAME] = self.provider
            if policy.capture and self.messages is not None:
                attrs[A.INPUT_MESSAGES] = policy.json(to_genai_messages(self.messages))
            if policy.capture and self.system_instructions:
                attrs[A.SYSTEM_INSTRUCTIONS] = policy.json(
                    [{"type": "text", "content": self.system_instructions}]
                )
            if self.tools:
                attrs[A.TOOL_DEFINITIONS] = policy.json([as_dict(t) for t in self.tools])
            if self.parameters:
                attrs.update(parameter_attributes(self.parameters, policy))
            if self.attributes:
                attrs.update(self.attributes)
        self._scope = SpanScope(f"{A.OP_CHAT} {self.model}", SpanKind.CLIENT, attrs)
        return LlmCallHandle(self._scope, policy, self._on_tool_calls)

    def _finish(self, exc: BaseException | None) -> None:
        if self._scope is not None and self._policy is not None:
            self._scope.close(exc, self._policy)

    def __enter__(self) -> LlmCallHandle:
        return self._start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._finish(exc)
