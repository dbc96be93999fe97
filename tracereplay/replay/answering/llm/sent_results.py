"""The tool results an agent sends its model, counted per tool name.

A loop on an LLM client gives each tool's output back to the model in its next request (a
Chat Completions or Cohere ``tool`` message, a Responses ``function_call_output``, an Anthropic
``tool_result`` block, a Gemini ``functionResponse`` part, a Bedrock ``toolResult`` block),
after the model's call that asked it. So the requests of one attempt say how many times each
tool ran, whatever ran it: with no tool span to look at, that is what tells a tool that ran for
real from one the replay answered (``tracereplay.replay.answering.airtight``).

A result belongs to the call whose id it names (else to the oldest call of its tool still
waiting for one, else to the oldest call waiting: Gemini's parts carry no ids, only names). A
request carries the conversation so far, so a tool's count is the most any one request shows.
The HTTP hooks (``interceptor``) hand every LLM request of a context that is ``observing(...)``
to ``observe``.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter, deque
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["SentResults", "is_observing", "observe", "observing", "results_per_tool"]


def _calls_and_results(api: str, body: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """``("call", id, name)`` and ``("result", id, "")`` items of one request, in order."""
    if api in ("chat", "cohere"):
        for m in body.get("messages") or ():
            if not isinstance(m, dict):
                continue
            for tc in m.get("tool_calls") or ():
                if isinstance(tc, dict):
                    fn = tc.get("function") or {}
                    yield "call", str(tc.get("id") or ""), str(fn.get("name") or "")
            if m.get("role") in ("tool", "function"):
                yield "result", str(m.get("tool_call_id") or ""), str(m.get("name") or "")
    elif api == "responses":
        items = body.get("input")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and item.get("type") == "function_call":
                yield "call", str(item.get("call_id") or ""), str(item.get("name") or "")
            elif isinstance(item, dict) and item.get("type") == "function_call_output":
                yield "result", str(item.get("call_id") or ""), ""
    elif api == "anthropic":
        for m in body.get("messages") or ():
            content = m.get("content") if isinstance(m, dict) else None
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    yield "call", str(block.get("id") or ""), str(block.get("name") or "")
                elif isinstance(block, dict) and block.get("type") == "tool_result":
                    yield "result", str(block.get("tool_use_id") or ""), ""
    elif api == "gemini":
        contents = body.get("contents")
        for content in contents if isinstance(contents, list) else ():
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else ():
                if not isinstance(part, dict):
                    continue
                call = part.get("functionCall", part.get("function_call"))
                response = part.get("functionResponse", part.get("function_response"))
                if isinstance(call, dict):
                    yield "call", str(call.get("id") or ""), str(call.get("name") or "")
                elif isinstance(response, dict):
                    yield "result", str(response.get("id") or ""), str(response.get("name") or "")
    elif api == "bedrock":
        for m in body.get("messages") or ():
            content = m.get("content") if isinstance(m, dict) else None
            for block in content if isinstance(content, list) else ():
                use = block.get("toolUse") if isinstance(block, dict) else None
                result = block.get("toolResult") if isinstance(block, dict) else None
                if isinstance(use, dict):
                    yield "call", str(use.get("toolUseId") or ""), str(use.get("name") or "")
                elif isinstance(result, dict):
                    yield "result", str(result.get("toolUseId") or ""), ""


def results_per_tool(api: str, body: dict[str, Any]) -> Counter[str]:
    """How many results of each tool one request of ``api`` carries: a result is its call's
    (by call id; without a known id, the oldest call of its tool still waiting for one, else the
    oldest call waiting)."""
    names: dict[str, str] = {}
    waiting: deque[str] = deque()
    counts: Counter[str] = Counter()
    for kind, call_id, name in _calls_and_results(api, body):
        if kind == "call":
            key = call_id or f"#{len(names)}"
            names[key] = name
            waiting.append(key)
            continue
        key = call_id if call_id in names else ""
        if not key:  # no id (Gemini): the oldest waiting call of that tool, else the oldest
            key = next((k for k in waiting if names[k] == name), waiting[0] if waiting else "")
        if key in waiting:
            waiting.remove(key)
            counts[names[key]] += 1
        elif name:  # a result of a call the history does not hold (a trimmed history)
            counts[name] += 1
    return counts


class SentResults:
    """The tool results seen in one attempt's LLM requests (safe across threads)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, api: str, body: dict[str, Any]) -> None:
        """Count the tool results of one request of ``api`` (one of ``endpoints.APIS``)."""
        counts = results_per_tool(api, body)
        with self._lock:
            for name, n in counts.items():
                if n > self._counts[name]:
                    self._counts[name] = n

    def counts(self) -> Counter[str]:
        with self._lock:
            return Counter(self._counts)


_observer: ContextVar[SentResults | None] = ContextVar("tracereplay_sent_results", default=None)


@contextlib.contextmanager
def observing(sent: SentResults) -> Iterator[SentResults]:
    """Count the tool results of this context's LLM requests into ``sent`` (the HTTP hook must
    be installed: ``interceptor.install()``)."""
    token = _observer.set(sent)
    try:
        yield sent
    finally:
        _observer.reset(token)


def observe(api: str, body: Any) -> None:
    """One LLM request's body (decoded JSON, ``None`` when it was not JSON), seen by the HTTP
    hook (nothing unless the context observes)."""
    sent = _observer.get()
    if sent is None or not isinstance(body, dict):
        return
    try:
        sent.add(api, body)
    except Exception:  # an odd body is the model's business, not the airtight check's
        pass


def is_observing() -> bool:
    return _observer.get() is not None
