"""Answering an agent's LLM requests from the recording, at the HTTP layer.

The OpenAI, Anthropic and Google GenAI Python clients, and every OpenAI-compatible client built
on httpx (pydantic-ai, the OpenAI Agents SDK, langchain-openai, strands' ``OpenAIModel``,
litellm's OpenAI provider...), send their requests through ``httpx.Client.send`` /
``httpx.AsyncClient.send`` (``httpx2`` for the newest OpenAI client); boto3 (Bedrock) and
requests through urllib3's ``HTTPConnectionPool.urlopen``; aiohttp clients through
``ClientSession._request``. ``install()`` wraps each of them that is installed (once per
process: ``httpx_hook``, ``urllib3_hook``, ``aiohttp_hook``); every wrapper asks ``decide``
what to do with a request, which does nothing unless the current context carries a replay's
``RecordedLlm`` (``answering(...)``, a ``ContextVar``: the attempt's thread or task and what it
starts). Then nothing goes to the network:

- a request to an LLM API (``endpoints``: OpenAI Chat Completions and Responses, Anthropic
  Messages, Gemini ``generateContent``, Bedrock Converse, Cohere v2 chat) is answered with the
  recorded response of the matching call, in that API's wire format, streamed when the
  request asked a stream;
- a token-counting request of those APIs (no model turn: no recording holds it) is answered
  with an estimate;
- any other request fails loudly (unless ``--live-tools``: a tool that runs for real may call
  its own services);
- ``--llm-until N`` (a fork): the first N LLM calls are answered so, the later ones are sent
  as the agent made them (to its own base URL), each compared with the recorded call it
  stands for (prompt drift marked ``live``);
- a request nothing answers gets an HTTP 400 whose message names the round and the reason (with
  ``x-should-retry: false``: the client does not retry it), and the case is an ERROR.

While an offline replay runs, an LLM request made outside any replay's context (a thread that
does not carry the context) is refused too; ``live_llm()`` marks code that may call a model
for real meanwhile (an LLM judge scoring the case).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any, Literal

import orjson

from tracereplay.replay.answering.llm import noted_calls as noted
from tracereplay.replay.answering.llm.canonical import (
    Line,
    Request,
    as_recorded,
    id_pattern,
    mask_ids,
    messages_diff,
    parse_request,
    recorded_lines,
    render,
    same_model,
)
from tracereplay.replay.answering.llm.endpoints import (
    Endpoint,
    as_endpoint,
    endpoint,
    token_count,
)
from tracereplay.replay.answering.llm.layer import Layer, Reply
from tracereplay.replay.answering.llm.noted_calls import is_noting, live_call, open_live, start
from tracereplay.replay.answering.llm.recording import (
    RecordedCall,
    provider_message,
    recorded_call_ids,
)
from tracereplay.replay.answering.llm.sent_results import (
    SentResults,
    is_observing,
    observe,
    observing,
)
from tracereplay.replay.answering.llm.wire import (
    error_body,
    recorded_response,
    reply_headers,
    token_count_body,
)
from tracereplay.scoring.outcomes import LlmReport, PromptDrift

LlmMode = Literal["live", "recorded"]
LLM_MODES: tuple[str, ...] = ("live", "recorded")
LlmMatch = Literal["order", "strict"]
LLM_MATCHES: tuple[str, ...] = ("order", "strict")

#: the temperature of a request that sets none (OpenAI's and Anthropic's APIs): a recording
#: of 1 (an instrumentation that writes the default it did not send) matches an unset one
DEFAULT_TEMPERATURE = 1.0

CAPTURE_HINT = "turn message capture on: see docs/instrumenting.md, 'Recording for offline replay'"


class OfflineRequestError(RuntimeError):
    """A request that is not an LLM call, made during an offline replay (``--llm recorded``)."""


class RecordedLlm:
    """The LLM of one replayed case: answers requests from ``calls`` and keeps the report."""

    def __init__(
        self,
        calls: Sequence[RecordedCall],
        match: LlmMatch = "order",
        *,
        has_recording: bool = True,
        live_tools: bool = False,
        until: int | None = None,
    ) -> None:
        if match not in LLM_MATCHES:
            raise ValueError(f"LLM match must be order or strict, not {match!r}")
        if until is not None and until < 0:
            raise ValueError(f"--llm-until must be 0 or more, not {until}")
        self.calls = list(calls)
        self.match: LlmMatch = match
        self.has_recording = has_recording
        self.live_tools = live_tools
        self._lines: list[list[Line]] = [recorded_lines(c.input_messages) for c in self.calls]
        self._used = [False] * len(self.calls)
        self._lock = threading.Lock()
        self._count = 0
        self._answered = 0
        self._drift: list[PromptDrift] = []
        self._errors: list[str] = []
        self._unchecked: list[int] = []
        self._last_failure: tuple[Any, tuple[int, bytes, str], RecordedCall] | None = None
        #: ``--llm-until N``: calls after the N-th are sent live (the fork)
        self.until = until
        self._live: list[int] = []
        #: past the fork the live model names its tool calls with ids of its own: requests
        #: there are compared with every id masked (``id_pattern``)
        self._ids = id_pattern(recorded_call_ids(self.calls)) if until is not None else None
        self._live_lines = [mask_ids(lines, self._ids) for lines in self._lines]

    # ------------------------------------------------------------------ the fork
    def forked(self) -> bool:
        """Whether the replay is past its fork (``--llm-until N``: a call after the N-th was
        made): from then on its tools may run live (``--live-tools``); the tool calls of the
        first N rounds are answered from the recording only."""
        with self._lock:
            return self.until is not None and self._count > self.until

    def goes_live(self, api: str | Endpoint, body: Any) -> bool:
        """Whether this request is past the fork: then it is counted, compared with the
        recorded call it stands for (its prompt drift, ``live=True``), and sent live."""
        with self._lock:
            if self.until is None or self._count < self.until:
                return False
            self._count += 1
            n = self._count
            self._live.append(n)
            if not isinstance(body, dict) or not self.has_recording:
                return True
            request = parse_request(api, body)
            request.lines = mask_ids(request.lines, self._ids)
            free = [i for i, used in enumerate(self._used) if not used]
            if not free:
                return True
            lines = self._live_lines
            exact = next((i for i in free if self._same(i, request, lines)), None)
            chosen = exact if exact is not None else self._closest(free, request)
            self._used[chosen] = True
            if exact is None:
                drift = self._drift_of(n, chosen, request, lines)
                if drift is not None:
                    drift.answered = False
                    drift.live = True
                    self._drift.append(drift)
            return True

    # ------------------------------------------------------------------ answering
    def answer(self, api: str | Endpoint, body: dict[str, Any]) -> tuple[int, bytes, str]:
        """(HTTP status, body, content type) for one request of ``api`` (its name, or the
        ``Endpoint`` its URL shows)."""
        return self.answer_call(api, body)[0]

    def answer_call(
        self, api: str | Endpoint, body: dict[str, Any]
    ) -> tuple[tuple[int, bytes, str], RecordedCall | None]:
        """``answer``, and the recorded call that answered (None: the request was refused)."""
        request = parse_request(api, body)
        key = (request.api, request.lines, request.model)
        with self._lock:
            if self._last_failure is not None and self._last_failure[0] == key:
                # a retry of a call the recording says failed
                return self._last_failure[1], self._last_failure[2]
            self._count += 1
            n = self._count
            if not self.has_recording:
                return self._fail(
                    api,
                    f"LLM call {n} has no recording to answer it: the case has no source run "
                    "(--llm recorded replays recorded cases only)",
                ), None
            free = [i for i, used in enumerate(self._used) if not used]
            if not free:
                made = sum(1 for c in self.calls if not c.nested)
                return self._fail(
                    api,
                    f"LLM call {n}: the replay asked more LLM calls than were recorded "
                    f"(the source run made {made})",
                ), None
            exact = next((i for i in free if self._same(i, request)), None)
            chosen = exact if exact is not None else self._closest(free, request)
            call = self.calls[chosen]
            if call.error is None and not call.has_output:
                return self._fail(
                    api,
                    f"LLM call {n}: the recorded LLM call it matches ({call.label()}) has no "
                    "output messages: the source run was recorded without message content "
                    f"({CAPTURE_HINT})",
                ), None
            if exact is None:
                drift = self._drift_of(n, chosen, request)
                if drift is None:
                    self._unchecked.append(n)
                    if self.match == "strict" and call.error is None:
                        return self._fail(
                            api,
                            f"LLM call {n}: the recorded LLM call ({call.label()}) has no input "
                            f"messages to check it against (--llm-match strict; {CAPTURE_HINT})",
                        ), None
                else:
                    drift.answered = self.match == "order"
                    self._drift.append(drift)
                    if self.match == "strict":
                        return self._fail(
                            api,
                            f"LLM call {n}: prompt drift from the recorded {call.label()} "
                            f"({'; '.join(drift.differences[:2])}) (--llm-match strict)",
                        ), None
            self._used[chosen] = True
            self._answered += 1
            if call.error is not None:
                status = (
                    call.error_status if call.error_status and call.error_status >= 400 else 500
                )
                kind = "server_error" if status >= 500 else "invalid_request_error"
                message = provider_message(call.error)
                body_ = error_body(request.api, message, kind, status)
                result = (status, body_, "application/json")
                self._last_failure = (key, result, call)
                return result, call
            self._last_failure = None
        content, content_type = recorded_response(api, call, n, body)
        return (200, content, content_type), call

    def refuse(self, method: str, url: str) -> str:
        """Record a non-LLM request made during the replay; the message to raise."""
        message = (
            f"the agent sent {method} {url} during an offline replay (--llm recorded answers "
            "LLM API calls only; pass --live-tools when its tools call their own services)"
        )
        with self._lock:
            self._errors.append(message)
        return message

    def last_error(self) -> str | None:
        """The reason of the last request the replay refused."""
        with self._lock:
            return self._errors[-1] if self._errors else None

    def _fail(self, api: str | Endpoint, message: str) -> tuple[int, bytes, str]:
        self._errors.append(message)
        return (
            400,
            error_body(as_endpoint(api).api, f"tracereplay: {message}", "tracereplay_replay_error"),
            ("application/json"),
        )

    # ------------------------------------------------------------------ matching
    def _same(self, index: int, request: Request, recorded: list[list[Line]] | None = None) -> bool:
        lines = (recorded or self._lines)[index]
        asked = as_recorded(lines, request.lines)
        return bool(lines) and lines == asked and not self._field_drift(index, request)

    def _closest(self, free: list[int], request: Request) -> int:
        """The next unused call in order, preferring one asked by the same agent (same system
        prompt and tools; else the same system prompt, since an instrumentation may leave some
        tools out of what it records: smolagents' managed agents; a recording without system
        prompts: the same opening question)."""
        system = next((t for k, t in request.lines if k == "system"), None)
        question = next((t for k, t in request.lines if k == "user"), None)
        names = sorted(n for n, _ in request.tools)
        same_system = None
        for i in free:
            call = self.calls[i]
            lines = self._lines[i]
            rec_system = next((t for k, t in lines if k == "system"), None)
            if not lines:
                continue
            if rec_system is None and system is not None:
                # a recording without system prompts (AG2's): the same agent's call is the
                # one of the same conversation, which opens with the same question
                if next((t for k, t in lines if k == "user"), None) != question:
                    continue
            elif rec_system != system:
                continue
            rec_names = sorted(t.name for t in call.tools) if call.tools is not None else names
            if rec_names == names:
                return i
            if same_system is None:
                same_system = i
        return free[0] if same_system is None or system is None else same_system

    def _field_drift(self, index: int, request: Request) -> list[tuple[str, str]]:
        """(field, description) of every request setting that differs from the recorded one."""
        call = self.calls[index]
        out: list[tuple[str, str]] = []
        if (
            request.model
            and call.request_model
            and not same_model(request.model, call.request_model)
        ):
            out.append(("model", f"model: recorded {call.request_model}, replay {request.model}"))
        if call.temperature is not None:
            asked = request.temperature
            if asked is None and abs(call.temperature - DEFAULT_TEMPERATURE) <= 1e-9:
                asked = DEFAULT_TEMPERATURE  # what an unset temperature is (OpenLIT records it)
            if asked is None or abs(asked - call.temperature) > 1e-9:
                shown = "not set" if asked is None else f"{asked:g}"
                out.append(
                    ("temperature", f"temperature: recorded {call.temperature:g}, replay {shown}")
                )
        if call.tools is not None and (call.tools or request.tools):
            recorded = {t.name: t.description for t in call.tools}
            asked_tools = dict(request.tools)
            added = sorted(set(asked_tools) - set(recorded))
            removed = sorted(set(recorded) - set(asked_tools))
            changed = sorted(
                n
                for n in set(recorded) & set(asked_tools)
                if recorded[n] and asked_tools[n] and recorded[n].strip() != asked_tools[n].strip()
            )
            if added or removed or changed:
                parts = [f"+{n}" for n in added] + [f"-{n}" for n in removed]
                parts += [f"~{n} (description)" for n in changed]
                out.append(("tools", "tools offered: " + ", ".join(parts)))
        return out

    def _drift_of(
        self, n: int, index: int, request: Request, lines: list[list[Line]] | None = None
    ) -> PromptDrift | None:
        call = self.calls[index]
        recorded = (lines or self._lines)[index]
        if not recorded:
            return None
        fields: list[str] = []
        differences: list[str] = []
        diff = ""
        asked = as_recorded(recorded, request.lines)
        if recorded != asked:
            fields.append("messages")
            diff = messages_diff(recorded, asked)
            differences.append(_first_difference(recorded, asked))
        for name, text in self._field_drift(index, request):
            fields.append(name)
            differences.append(text)
        return PromptDrift(
            round=n,
            recorded_round=call.round,
            recorded_run_id=call.run_id,
            fields=fields,
            differences=differences,
            diff=diff,
            answered=True,
        )

    # ------------------------------------------------------------------ the report
    def report(self) -> LlmReport:
        with self._lock:
            forked = self.until is not None
            # after a fork the recorded calls past it are not owed: only the first N count
            owed = self.calls[: self.until] if forked else self.calls
            return LlmReport(
                fork_round=self.until,
                live=list(self._live),
                llm_match=self.match,
                recorded=len(self.calls),
                answered=self._answered,
                drift=list(self._drift),
                errors=list(self._errors),
                unused=[c.round for i, c in enumerate(owed) if not self._used[i] and not c.nested],
                unchecked=list(self._unchecked),
            )


def _first_difference(recorded: list[Line], asked: list[Line]) -> str:
    """One line saying where the messages first differ."""
    for i, (a, b) in enumerate(zip(recorded, asked)):
        if a != b:
            return f"messages: message {i + 1} differs: recorded {render(a, 80)!r}, replay {render(b, 80)!r}"
    if len(asked) > len(recorded):
        return f"messages: the replay sends {len(asked) - len(recorded)} more: {render(asked[len(recorded)], 80)!r}"
    return f"messages: the replay sends {len(recorded) - len(asked)} fewer (recorded {render(recorded[len(asked)], 80)!r})"


def llm_error_reason(report: LlmReport | None) -> str | None:
    """The case's ERROR reason when an LLM call got no answer (None otherwise)."""
    if report is None or not report.errors:
        return None
    text = report.errors[0]
    if len(report.errors) > 1:
        text += f" (and {len(report.errors) - 1} more LLM error(s))"
    return text


# ---------------------------------------------------------------------- the HTTP layer
class _Live:
    __slots__ = ()


LIVE = _Live()
_current: ContextVar[RecordedLlm | _Live | None] = ContextVar(
    "tracereplay_recorded_llm", default=None
)
_state_lock = threading.Lock()
_offline = 0  # replays answering from the recording right now
_installed: set[str] = set()


@contextlib.contextmanager
def answering(recorded: RecordedLlm) -> Iterator[RecordedLlm]:
    """Answer the LLM requests of this context (and what it starts) from ``recorded``."""
    global _offline
    install()
    with _state_lock:
        _offline += 1
    token = _current.set(recorded)
    try:
        yield recorded
    finally:
        _current.reset(token)
        with _state_lock:
            _offline -= 1


@contextlib.contextmanager
def live_llm() -> Iterator[None]:
    """Let this context's LLM requests reach the network (an LLM judge during a replay)."""
    token = _current.set(LIVE)
    try:
        yield
    finally:
        _current.reset(token)


_STRAY = (
    "an LLM request ({method} {url}) was made outside the replay's context while an offline "
    "replay runs (--llm recorded): it is refused, not sent (a thread started without the "
    "caller's context? use contextvars.copy_context())"
)


def wants_body(method: str, url: str) -> bool:
    """Whether ``decide`` needs the request's body (an LLM request's, a token count's); a hook
    reads it then."""
    return endpoint(method, url) is not None or token_count(method, url) is not None


#: a request a hook decided to send, on its way through another library a hook also wraps
#: (httpx over aiohttp: litellm's transport): decided, observed and counted once
_sending: ContextVar[bool] = ContextVar("tracereplay_llm_sending", default=False)


@contextlib.contextmanager
def sending() -> Iterator[None]:
    """The block sends a request ``decide`` let through: hooks below it leave it alone (and
    the span ``decide`` began for it, a live LLM call's, ends with the block)."""
    token = _sending.set(True)
    try:
        with live_call():
            yield
    finally:
        _sending.reset(token)


def decide(method: str, url: str, content: bytes) -> Reply | None:
    """What every HTTP hook does with a request (``url``: the full URL; ``content``: the body
    when ``wants_body``, else ``b""``): ``None``, send it as it is; a ``Reply``, answer it with
    that; ``OfflineRequestError`` raised, refuse it.

    Outside a replay's context (or in ``live_llm()``) a request is sent, but an LLM request is
    refused while an offline replay runs. In a replay's context an LLM request is answered from
    the recording (past the ``--llm-until`` fork it is sent), a token count estimated
    (``token_count_body``); any other request is refused, unless ``--live-tools``. The tool results of the LLM requests of a context that is
    ``observing`` are counted, whatever happens to them. A request another hook let through
    (``sending``) is sent as it is."""
    if _sending.get():
        return None
    where = endpoint(method, url)
    body = _body(content) if where is not None else None  # decoded once, for every use below
    if where is not None and is_observing():
        observe(where.api, body)
    current = _current.get()
    if current is None and _offline and where is not None:
        raise OfflineRequestError(_STRAY.format(method=method, url=url))
    if not isinstance(current, RecordedLlm):
        if where is not None and is_noting():  # a live replay: the call is kept as sent
            open_live(start(where, body, noted.LIVE))
        return None
    if where is None:
        counted = token_count(method, url)
        if counted is not None:  # estimated here: no recording holds it
            return Reply(
                200,
                token_count_body(counted, content),
                reply_headers(counted, 200, "application/json"),
            )
        if current.live_tools:
            return None
        raise OfflineRequestError(current.refuse(method, url))
    if current.until is not None and current.goes_live(where, body):
        open_live(start(where, body, noted.LIVE))
        return None
    call = None
    if not isinstance(body, dict):
        status, data, ctype = current._fail(where, "an LLM request whose body is not a JSON object")
    else:
        (status, data, ctype), call = current.answer_call(where, body)
    span = start(where, body, noted.RECORDING if call is not None else noted.REFUSED)
    if span is not None:
        noted.answered(span, call, call.error if call is not None else current.last_error())
    return Reply(status, data, reply_headers(where.api, status, ctype))


def _body(content: bytes) -> Any:
    """An LLM request's body as JSON (None when it is not JSON)."""
    try:
        return orjson.loads(content or b"{}")
    except orjson.JSONDecodeError:
        return None


@contextlib.contextmanager
def watching_tool_results() -> Iterator[SentResults]:
    """Count the tool results this context's LLM requests send (``sent_results``), live or
    answered from the recording."""
    install()
    with observing(SentResults()) as sent:
        yield sent


@contextlib.contextmanager
def keeping_calls() -> Iterator[None]:
    """Keep every LLM call this context makes as a span of the replay run (``noted_calls``),
    live or answered, whether or not the agent's LLM client is instrumented."""
    install()
    with noted.noting():
        yield


_install_tried = False


def install() -> None:
    """Wrap the sending of every HTTP client library installed: httpx's and httpx2's clients,
    urllib3's connection pools (boto3, requests), aiohttp's sessions (once per process; a
    no-op outside a replay's context, see ``decide``)."""
    global _install_tried
    if _install_tried:  # every attempt asks: each library was tried once (not installed: ever)
        return
    from tracereplay.replay.answering.llm import aiohttp_hook, httpx_hook, urllib3_hook

    hooks = {**httpx_hook.hooks(), "urllib3": urllib3_hook.patch, "aiohttp": aiohttp_hook.patch}
    with _state_lock:
        layer = Layer(decide, sending, wants_body)
        for name, hook in hooks.items():
            if name not in _installed and hook(layer):
                _installed.add(name)
        _install_tried = True
