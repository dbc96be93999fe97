"""What an exception that ended a replay says: something the agent did, or the evaluation failing.

The verdict rule: FAILED when the agent behaved differently, ERROR only when the evaluation
could not be carried out. An exception the agent's own code or its framework raised, in a
replay of a recorded case whose source run did not end in it, is the agent behaving differently
(a renamed tool the recorded model answer still calls: the OpenAI Agents SDK's
``ModelBehaviorError``; a bug in a prompt template): the case is FAILED. Still ERRORs, since
they say nothing about the agent:

- an exception of tracereplay's own anywhere in its chain (its class defined in ``tracereplay``:
  a refused request of an offline replay, an SDK misconfiguration; or raised by tracereplay's
  code: a fault of an adapter): the replay's machinery;
- the network (a refused or timed-out connection: ``ConnectionError``, a client's
  ``APIConnectionError`` or ``ConnectError``), and with a live LLM the provider refusing to
  serve (an HTTP status of 401, 403, 408, 429 or 5xx on the exception or its ``response``): the
  environment, which a retry may get past. A 400 or 404 is what the agent sent: its behaviour.

Classes are told by name and attributes: the agent's clients are not tracereplay's to import.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import tracereplay
from tracereplay.replay.answering.recorded_tools import RecordedToolError

__all__ = ["environment_failure", "replays_a_recorded_failure", "tracereplays_own", "unreachable"]

#: the package's directory: an exception raised by code under it is tracereplay's
_PACKAGE = os.path.realpath(Path(tracereplay.__file__).resolve().parent) + os.sep

#: HTTP statuses of a provider that did not serve the request (auth, throttling, its outage)
UNAVAILABLE = frozenset({401, 403, 408, 429})


def chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what caused it (``__cause__``, else ``__context__``), each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def replays_a_recorded_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is (or was caused by) a tool failure replayed from the recording."""
    return any(isinstance(e, RecordedToolError) for e in chain(exc))


def tracereplays_own(exc: BaseException) -> bool:
    """Whether ``exc`` or what caused it is tracereplay's: its class is defined in tracereplay,
    or tracereplay's code raised it (the innermost frame of its traceback is in the package)."""
    for e in chain(exc):
        if isinstance(e, RecordedToolError):  # a replayed failure reads as the recorded one
            continue
        if type(e).__module__.partition(".")[0] == "tracereplay" or _raised_by_us(e):
            return True
    return False


def _raised_by_us(exc: BaseException) -> bool:
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.realpath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE)


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a failed connection: a ``ConnectionError``, or
    a client's own (openai's ``APIConnectionError``, httpx's ``ConnectError``)."""
    for e in chain(exc):
        if isinstance(e, ConnectionError):
            return True
        if any(c.__name__.endswith(("ConnectionError", "ConnectError")) for c in type(e).__mro__):
            return True
    return False


def _status(exc: BaseException) -> int | None:
    """The HTTP status an exception carries: ``status_code``, or its ``response``'s."""
    for holder in (exc, getattr(exc, "response", None)):
        status = getattr(holder, "status_code", None)
        if isinstance(status, int) and not isinstance(status, bool):
            return status
    return None


def environment_failure(exc: BaseException, live_llm: bool) -> bool:
    """Whether ``exc`` is the environment failing the agent, not the agent: a failed
    connection, or (``live_llm``: some LLM calls went to the provider) a provider status that
    says it would not serve (401, 403, 408, 429, 5xx)."""
    if unreachable(exc):
        return True
    if not live_llm:  # a recorded provider failure is the recording's, replayed as it was
        return False
    for e in chain(exc):
        status = _status(e)
        if status is not None and (status in UNAVAILABLE or status >= 500):
            return True
    return False
