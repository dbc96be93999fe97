"""Every LLM call a replay makes, kept as a GenAI ``chat`` span of its replay run.

A replay run is converted from the spans the agent left, and an agent whose LLM client nobody
instruments (a plain OpenAI-client loop) leaves none for its model calls: its replay run had no
``llm_calls`` rows and every tool call in round 0. The HTTP hooks see each of those calls
anyway (``interceptor.decide``), so while an attempt runs (``noting()``) each one is written as
a ``chat`` span under the current span, with the request's messages read from its body and
``tracereplay.llm.source`` saying what answered it: ``recording`` (the recorded call's answer,
whose messages and usage the span takes), ``live`` (a model, past the ``--llm-until`` fork or in
a live replay: the span lasts until the response's headers are in, and its output is the model
turn the next request's history holds, as the converter reads it), or ``refused`` (nothing in
the recording matched: tracereplay answered with an error).

Where an instrumentation records the call too, the converter merges the two spans into one
call (the nested one fills what the other lacks, the source among it), so nothing is counted
twice."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from tracereplay import semconv
from tracereplay.convert.messages import parse_messages, system_message
from tracereplay.replay.answering.llm.endpoints import Endpoint
from tracereplay.replay.answering.llm.recording import RecordedCall
from tracereplay.sdk import attributes as A
from tracereplay.sdk.config import get_tracer
from tracereplay.sdk.content import current_policy
from tracereplay.sdk.health import guard

RECORDING = "recording"
LIVE = "live"
REFUSED = "refused"

#: the GenAI provider name of each API's calls
PROVIDERS = {
    "chat": "openai",
    "responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "bedrock": "aws.bedrock",
    "cohere": "cohere",
}

_noting: ContextVar[bool] = ContextVar("tracereplay_noting_llm_calls", default=False)
#: the span of a live call, from ``decide`` until its response is in (``sending``)
_open: ContextVar[Span | None] = ContextVar("tracereplay_live_llm_span", default=None)


@contextlib.contextmanager
def noting() -> Iterator[None]:
    """Keep every LLM call this context (and what it starts) makes as a span."""
    token = _noting.set(True)
    try:
        yield
    finally:
        _noting.reset(token)


def is_noting() -> bool:
    return _noting.get()


def request_messages(api: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages of an LLM request body in the GenAI shape, its system prompt first."""
    if api in ("chat", "cohere"):
        return parse_messages(body.get("messages") or [])[0]
    if api == "responses":
        system, messages = body.get("instructions"), body.get("input")
    elif api == "anthropic":
        system, messages = body.get("system"), body.get("messages")
    elif api == "gemini":
        system = body.get("systemInstruction", body.get("system_instruction"))
        if isinstance(system, dict):
            system = system.get("parts")
        messages = body.get("contents")
    elif api == "bedrock":
        system, messages = body.get("system"), body.get("messages")
    else:
        return []
    out = parse_messages(messages or [])[0]
    head = system_message(system) if system else None
    return [head, *out] if head is not None else out


def _model(where: Endpoint, body: Any) -> str:
    model = body.get("model") if isinstance(body, dict) else None
    return where.model or (model if isinstance(model, str) else "")


def start(where: Endpoint, body: Any, source: str) -> Span | None:
    """A ``chat`` span for a request being made (``None`` when the context is not noting)."""
    if not _noting.get():
        return None
    with guard("replay llm span"):
        policy = current_policy()
        model = _model(where, body)
        attrs: dict[str, Any] = {
            A.OPERATION_NAME: A.OP_CHAT,
            A.PROVIDER_NAME: PROVIDERS.get(where.api, where.api),
            A.REQUEST_MODEL: model,
            semconv.LLM_SOURCE: source,
        }
        if policy.capture and isinstance(body, dict):
            attrs[A.INPUT_MESSAGES] = policy.json(request_messages(where.api, body))
        return get_tracer().start_span(
            f"{A.OP_CHAT} {model}".strip(), kind=SpanKind.CLIENT, attributes=attrs
        )
    return None


def answered(span: Span | None, call: RecordedCall | None, error: str | None = None) -> None:
    """End the span of a call tracereplay answered: with the recorded ``call``'s answer, or
    ``error`` (the call was refused, or the recording says it failed)."""
    if span is None:
        return
    with guard("replay llm span"):
        if call is not None:
            policy = current_policy()
            if call.output_messages and policy.capture:
                span.set_attribute(A.OUTPUT_MESSAGES, policy.json(call.output_messages))
            if call.finish_reason:
                span.set_attribute(A.RESPONSE_FINISH_REASONS, [call.finish_reason])
            if call.model:
                span.set_attribute(A.RESPONSE_MODEL, call.model)
            if call.input_tokens is not None:
                span.set_attribute(A.USAGE_INPUT_TOKENS, call.input_tokens)
            if call.output_tokens is not None:
                span.set_attribute(A.USAGE_OUTPUT_TOKENS, call.output_tokens)
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        # at least 1 ns long: the converter merges it with an instrumentation's span of the
        # same call by their overlap
        span.end(max(time.time_ns(), getattr(span, "start_time", 0) + 1))


def open_live(span: Span | None) -> None:
    """The span of a call sent live: ended when its response is in (``close_live``)."""
    if span is not None:
        _open.set(span)


@contextlib.contextmanager
def live_call() -> Iterator[None]:
    """The block sends the live call ``open_live`` began: its span ends with the block."""
    span = _open.get()
    if span is None:
        yield
        return
    _open.set(None)
    try:
        yield
    except BaseException as exc:
        with guard("replay llm span"):
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        with guard("replay llm span"):
            span.end()
