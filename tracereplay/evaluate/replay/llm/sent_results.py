"""The tool results an agent sends its model, counted per tool name.

A loop on an LLM client gives each tool's output back to the model in its next request (a
Chat Completions ``tool`` message, a Responses ``function_call_output``, an Anthropic
``tool_result`` block), after the model's call that asked it. So the requests of one attempt
say how many times each tool ran, whatever ran it: with no tool span to look at, that is what
tells a tool that ran for real from one the replay answered (``tracereplay.evaluate.replay.airtight``).

Each request is read in the canonical form (``canonical``): a ``result`` line belongs to the
oldest ``call`` line not yet given a result. A request carries the conversation so far, so a
tool's count is the most any one request shows. The HTTP hook (``interceptor``) hands every
LLM request of a context that is ``observing(...)`` to ``observe``.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from tracereplay.evaluate.replay.llm.canonical import Line, parse_request

__all__ = ["SentResults", "is_observing", "observe", "observing", "results_per_tool"]


def results_per_tool(lines: Sequence[Line]) -> Counter[str]:
    """How many results of each tool a conversation holds (each paired with the oldest call
    still waiting for one)."""
    waiting: deque[str] = deque()
    counts: Counter[str] = Counter()
    for kind, text in lines:
        if kind == "call":
            waiting.append(text.partition("(")[0])
        elif kind == "result" and waiting:
            counts[waiting.popleft()] += 1
    return counts


class SentResults:
    """The tool results seen in one attempt's LLM requests (safe across threads)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, api: str, body: dict[str, Any]) -> None:
        """Count the tool results of one request of ``api`` ("chat", "responses", "anthropic")."""
        counts = results_per_tool(parse_request(api, body).lines)
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


def observe(api: str, content: bytes) -> None:
    """One LLM request's body, seen by the HTTP hook (nothing unless the context observes)."""
    sent = _observer.get()
    if sent is None:
        return
    import orjson

    try:
        body = orjson.loads(content or b"{}")
        if isinstance(body, dict):
            sent.add(api, body)
    except Exception:  # an odd body is the model's business, not the airtight check's
        pass


def is_observing() -> bool:
    return _observer.get() is not None
