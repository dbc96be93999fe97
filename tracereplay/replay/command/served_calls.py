"""The LLM calls the model server answered for one command, as GenAI ``chat`` spans.

An agent command that sends no telemetry (or none of its model calls) still leaves a run: the
server saw every request it made, the way the in-process HTTP hooks see them
(``answering/llm/noted_calls``), and each becomes a ``chat`` span as ``noted_calls`` writes
it: the request's messages (``noted_calls.request_messages``: the conversation so far, so the
tool results the agent sent back), the recorded answer's messages, finish reason, model and
usage, and ``tracereplay.llm.source`` (``recording``, ``live`` past the fork, ``refused``). The
converter then finds the rounds, the tool calls the model asked for and, in the next request,
their results, as it does for any uninstrumented LLM client's run.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

import orjson

from tracereplay import semconv
from tracereplay.replay.answering.llm.endpoints import Endpoint
from tracereplay.replay.answering.llm.noted_calls import (
    LIVE,
    PROVIDERS,
    RECORDING,
    REFUSED,
    request_messages,
)
from tracereplay.replay.answering.llm.recording import RecordedCall
from tracereplay.sdk import attributes as A
from tracereplay.spans import STATUS_ERROR, Span

_CLIENT = 3  # SpanKind CLIENT


@dataclass
class _Answered:
    where: Endpoint
    body: Any
    call: RecordedCall | None
    status: int
    live: bool
    start_ns: int
    end_ns: int


class ServedCalls:
    """``on_answer`` of the model server: the answered requests, in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[_Answered] = []
        self._last_ns = 0

    def __call__(
        self, where: Endpoint, body: Any, call: RecordedCall | None, status: int, live: bool
    ) -> None:
        now = time.time_ns()
        with self._lock:
            start = max(now - 1_000, self._last_ns + 1)  # strictly ordered: rounds by start
            end = max(now, start + 1)
            self._last_ns = end
            self._calls.append(_Answered(where, body, call, status, live, start, end))

    def __len__(self) -> int:
        with self._lock:
            return len(self._calls)

    def sources(self) -> list[str]:
        """What answered each call, in order (``recording``, ``live``, ``refused``)."""
        with self._lock:
            return [_source(c) for c in self._calls]

    def spans(self, trace_id: str, parent_span_id: str, service_name: str = "") -> list[Span]:
        """One ``chat`` span per answered request, children of ``parent_span_id``."""
        with self._lock:
            calls = list(self._calls)
        return [_span(c, trace_id, parent_span_id, service_name) for c in calls]


def _source(c: _Answered) -> str:
    return LIVE if c.live else RECORDING if c.call is not None else REFUSED


def _span(c: _Answered, trace_id: str, parent: str, service_name: str) -> Span:
    body = c.body if isinstance(c.body, dict) else {}
    model = c.where.model or str(body.get("model") or "")
    source = _source(c)
    attrs: dict[str, Any] = {
        A.OPERATION_NAME: A.OP_CHAT,
        A.PROVIDER_NAME: PROVIDERS.get(c.where.api, c.where.api),
        A.REQUEST_MODEL: model,
        semconv.LLM_SOURCE: source,
        A.INPUT_MESSAGES: orjson.dumps(request_messages(c.where.api, body)).decode(),
    }
    call = c.call
    if call is not None:
        if call.output_messages:
            attrs[A.OUTPUT_MESSAGES] = orjson.dumps(call.output_messages).decode()
        if call.finish_reason:
            attrs[A.RESPONSE_FINISH_REASONS] = [call.finish_reason]
        if call.model:
            attrs[A.RESPONSE_MODEL] = call.model
        if call.input_tokens is not None:
            attrs[A.USAGE_INPUT_TOKENS] = call.input_tokens
        if call.output_tokens is not None:
            attrs[A.USAGE_OUTPUT_TOKENS] = call.output_tokens
    failed = c.status >= 400
    return Span(
        trace_id=trace_id,
        span_id=secrets.token_hex(8),
        parent_span_id=parent,
        name=f"{A.OP_CHAT} {model}".strip(),
        kind=_CLIENT,
        start_ns=c.start_ns,
        end_ns=c.end_ns,
        status_code=STATUS_ERROR if failed else 0,
        status_message=f"HTTP {c.status}" if failed else "",
        attributes=attrs,
        service_name=service_name,
        scope_name="tracereplay",
    )
