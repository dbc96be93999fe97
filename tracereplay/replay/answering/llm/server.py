"""The recording as a model server: a loopback HTTP server answering an agent's LLM requests
from one case's recorded calls, for agents tracereplay does not run in its own process (any
language, any test runner).

It answers what the in-process path answers (``interceptor.RecordedLlm.answer_call``, in the
wire format of ``wire``): a POST to a URL ``endpoints.endpoint`` knows (OpenAI Chat Completions
and Responses, Anthropic Messages, Gemini ``generateContent``, Bedrock Converse, Cohere v2
chat), streamed when the request asks; with the same prompt drift and errors in the case's
report. ``--llm-until N`` (the fork): the calls after the N-th are forwarded to the real API
(``upstream``), with the agent's own headers (its API key), and compared with the recorded
calls they stand for.

One case at a time: ``LlmServer.serve(case)`` selects it (a fresh ``RecordedLlm``); a request
while none is selected gets a 409 in the API's error shape. A control API under
``/tracereplay/`` lets a test runner select the case itself (``select`` given):

- ``GET /tracereplay/cases``: the cases (id, seq, query, recorded calls);
- ``POST /tracereplay/case/{id-or-seq}``: select one (again: start it over); its id, seq, query;
- ``GET /tracereplay/report``: the current case's LLM report (drift, errors, unused calls).

For an agent command (``eval --agent-cmd``, ``replay/command/``) the same server is its OTLP/HTTP
endpoint too: ``telemetry`` given, a POST to ``/v1/traces``, ``/v1/logs`` or ``/v1/metrics`` is
handed to it (the agent's exporter points here), and ``on_answer`` sees every LLM request the
server answered with what answered it (the command's replay run when it sends no telemetry).
Bodies may come chunked (the OpenTelemetry JS exporter sends no ``Content-Length``).

``base_url_env(url)`` gives the variables the usual SDKs read to reach it.
"""

from __future__ import annotations

import gzip
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from tracereplay.replay.answering.llm.endpoints import Endpoint, endpoint
from tracereplay.replay.answering.llm.interceptor import LlmMatch, RecordedLlm
from tracereplay.replay.answering.llm.recording import RecordedCall
from tracereplay.replay.answering.llm.wire import error_body, reply_headers

if TYPE_CHECKING:
    from tracereplay.store.db import Store

#: where a call past the fork (``--llm-until``) goes, by API, unless ``upstream`` says
DEFAULT_UPSTREAM: dict[str, str] = {
    "chat": "https://api.openai.com",
    "responses": "https://api.openai.com",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
    "cohere": "https://api.cohere.com",
}
CONTROL = "/tracereplay/"
#: the OTLP/HTTP paths handed to ``telemetry`` when it is given
OTLP_PATHS = frozenset({"/v1/traces", "/v1/logs", "/v1/metrics"})

#: ``telemetry(path, content_type, body)``: an OTLP/HTTP request, answered (status, body, headers)
Telemetry = Callable[[str, str, bytes], tuple[int, bytes, dict[str, str]]]
#: ``on_answer(endpoint, body, recorded_call, status, live)``: an LLM request answered
OnAnswer = Callable[[Endpoint, Any, RecordedCall | None, int, bool], None]
#: request headers not forwarded upstream (hop-by-hop, or set again for the new connection)
_DROPPED = {"host", "content-length", "connection", "accept-encoding", "transfer-encoding"}


def base_url_env(url: str) -> dict[str, str]:
    """The environment that points the usual LLM SDKs at the server at ``url``
    (``http://127.0.0.1:PORT``), with placeholder API keys so that they start without real
    ones: the OpenAI clients (``OPENAI_BASE_URL``, with ``/v1``), Anthropic's
    (``ANTHROPIC_BASE_URL``), google-genai's (``GOOGLE_GEMINI_BASE_URL``: it adds
    ``/v1beta/models/...``), Cohere's (``CO_API_URL``)."""
    url = url.rstrip("/")
    return {
        "OPENAI_BASE_URL": f"{url}/v1",
        "OPENAI_API_KEY": "tracereplay",
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "tracereplay",
        "GOOGLE_GEMINI_BASE_URL": url,
        "GEMINI_API_KEY": "tracereplay",
        "GOOGLE_API_KEY": "tracereplay",
        "CO_API_URL": url,
        "CO_API_KEY": "tracereplay",
    }


@dataclass
class ServedCase:
    """A case the server can answer: its recorded LLM calls (``has_recording`` False: the case
    has no source run, and every LLM call is refused)."""

    case_id: str
    seq: int
    query: str
    calls: Sequence[RecordedCall]
    has_recording: bool = True

    def describe(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "seq": self.seq,
            "query": self.query,
            "recorded_calls": sum(1 for c in self.calls if not c.nested),
            "has_recording": self.has_recording,
        }


def load_cases(store: Store, suite_ident: str) -> tuple[list[ServedCase], str]:
    """A suite's cases (``suite_ident``: its name or id prefix) with the LLM calls recorded on
    their source runs (and the runs nested under them), and the suite's name."""
    from tracereplay.replay.answering.llm.recording import load_llm_recordings
    from tracereplay.store.runs import load_runs, load_sub_runs
    from tracereplay.store.suites import get_suite, list_cases

    suite = get_suite(store, suite_ident)
    cases = list_cases(store, suite.id)
    sources = load_runs(store, [c.source_run_id for c in cases if c.source_run_id])
    sub_runs = load_sub_runs(store, sources.values())
    calls = load_llm_recordings(store, sources.values(), sub_runs)
    served = [
        ServedCase(
            case_id=c.id,
            seq=c.seq,
            query=c.query,
            calls=calls.get(c.source_run_id, []) if c.source_run_id else [],
            has_recording=c.source_run_id is not None and c.source_run_id in sources,
        )
        for c in cases
    ]
    return served, suite.name


class CaseNotFound(LookupError):
    """``select`` was given an id or seq no case has."""


def find_case(cases: Sequence[ServedCase], ident: str) -> ServedCase:
    """The case whose seq is ``ident`` (a number), else whose id starts with it (unique)."""
    text = ident.strip().lower()
    if text.isdigit():
        for case in cases:
            if case.seq == int(text):
                return case
    hits = [c for c in cases if text and c.case_id.lower().startswith(text)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise CaseNotFound(f"case '{ident}' is ambiguous: {len(hits)} case ids start with it")
    raise CaseNotFound(f"no case '{ident}' in this suite (give a case's seq or id prefix)")


class LlmServer:
    """The loopback server. ``serve(case)`` selects the case it answers; ``cases`` (optional)
    are those the control API may select."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        cases: Sequence[ServedCase] = (),
        match: LlmMatch = "order",
        until: int | None = None,
        upstream: Mapping[str, str] | None = None,
        telemetry: Telemetry | None = None,
        on_answer: OnAnswer | None = None,
    ) -> None:
        self.cases = list(cases)
        self.telemetry = telemetry
        self.on_answer = on_answer
        self.match: LlmMatch = match
        self.until = until
        self.upstream = {**DEFAULT_UPSTREAM, **(upstream or {})}
        self._lock = threading.Lock()
        self._case: ServedCase | None = None
        self._llm: RecordedLlm | None = None
        self._http = ThreadingHTTPServer((host, port), _handler(self))
        self._http.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ the case served
    def serve(self, case: ServedCase | None) -> RecordedLlm | None:
        """Answer from ``case`` from now on (a fresh ``RecordedLlm``; None: no case)."""
        llm = None
        if case is not None:
            llm = RecordedLlm(
                case.calls, self.match, has_recording=case.has_recording, until=self.until
            )
        with self._lock:
            self._case, self._llm = case, llm
        return llm

    def select(self, ident: str) -> ServedCase:
        """Serve the case of ``cases`` named by its seq or id prefix (``CaseNotFound``)."""
        case = find_case(self.cases, ident)
        self.serve(case)
        return case

    def current(self) -> tuple[ServedCase | None, RecordedLlm | None]:
        with self._lock:
            return self._case, self._llm

    # ------------------------------------------------------------------ running
    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        host = self._http.server_address[0]
        return f"http://{host}:{self.port}"

    def env(self) -> dict[str, str]:
        return base_url_env(self.url)

    def start(self) -> LlmServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._http.serve_forever, name="tracereplay-llm-server", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._http.serve_forever()

    def close(self) -> None:
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join()
            self._thread = None
        self._http.server_close()

    def __enter__(self) -> LlmServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ answering
    def answer(
        self, method: str, path: str, headers: Mapping[str, str], content: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        """(status, body, headers) for one request."""
        if path.startswith(CONTROL):
            return self._control(method, path)
        if self.telemetry is not None and method == "POST" and path.split("?")[0] in OTLP_PATHS:
            ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
            return self.telemetry(path.split("?")[0], ctype, content)
        where = endpoint(method, path)
        if where is None:
            return _text(404, f"tracereplay llm-server: no LLM API at {method} {path}")
        case, llm = self.current()
        if llm is None:
            message = (
                "tracereplay llm-server: no case is selected (POST /tracereplay/case/{id-or-seq} "
                "first, or start it with --case)"
            )
            return _error(where, 409, message)
        try:
            body = orjson.loads(content or b"{}")
        except orjson.JSONDecodeError:
            body = None
        if llm.until is not None and llm.goes_live(where, body):
            reply = self._forward(where, method, path, headers, content)
            if self.on_answer is not None:
                self.on_answer(where, body, None, reply[0], True)
            return reply
        call = None
        if not isinstance(body, dict):
            status, data, ctype = llm._fail(where, "an LLM request whose body is not a JSON object")
        else:
            (status, data, ctype), call = llm.answer_call(where, body)
        if self.on_answer is not None:
            self.on_answer(where, body, call, status, False)
        return status, data, reply_headers(where.api, status, ctype)

    def _forward(
        self, where: Endpoint, method: str, path: str, headers: Mapping[str, str], content: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        """A call past the fork, sent to the real API with the agent's own headers."""
        base = self.upstream.get(where.api)
        if not base:
            return _error(where, 502, f"tracereplay llm-server: no upstream for {where.api}")
        sent = {k: v for k, v in headers.items() if k.lower() not in _DROPPED}
        request = urllib.request.Request(
            _upstream_url(base, path), data=content, headers=sent, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=600) as reply:
                status, data, got = reply.status, reply.read(), reply.headers
        except urllib.error.HTTPError as exc:
            status, data, got = exc.code, exc.read(), exc.headers
        except OSError as exc:
            return _error(where, 502, f"tracereplay llm-server: {base} failed: {exc}")
        ctype = got.get("content-type", "application/json")
        return status, data, {"content-type": ctype, "x-tracereplay": "live"}

    def _control(self, method: str, path: str) -> tuple[int, bytes, dict[str, str]]:
        rest = path[len(CONTROL) :].split("?", 1)[0].strip("/")
        if rest == "cases" and method == "GET":
            return _json(200, {"cases": [c.describe() for c in self.cases]})
        if rest.startswith("case/") and method == "POST":
            try:
                case = self.select(urllib.request.unquote(rest[len("case/") :]))
            except CaseNotFound as exc:
                return _json(404, {"error": str(exc)})
            return _json(200, case.describe())
        if rest == "report" and method == "GET":
            case, llm = self.current()
            if case is None or llm is None:
                return _json(409, {"error": "no case is selected"})
            return _json(200, {**case.describe(), "report": llm.report().model_dump(mode="json")})
        return _text(404, f"tracereplay llm-server: no control endpoint {method} {path}")


def _upstream_url(base: str, path: str) -> str:
    """``path`` (as the agent sent it) on ``base``; a base that ends with the path's own
    prefix (``https://host/v1`` for ``/v1/chat/completions``) is not doubled."""
    parts = urlsplit(base.rstrip("/"))
    if parts.path and path.startswith(parts.path + "/"):
        return f"{parts.scheme}://{parts.netloc}{path}"
    return base.rstrip("/") + path


def _json(status: int, value: Any) -> tuple[int, bytes, dict[str, str]]:
    return status, orjson.dumps(value), {"content-type": "application/json"}


def _text(status: int, message: str) -> tuple[int, bytes, dict[str, str]]:
    return status, (message + "\n").encode(), {"content-type": "text/plain; charset=utf-8"}


def _error(where: Endpoint, status: int, message: str) -> tuple[int, bytes, dict[str, str]]:
    kind = "tracereplay_replay_error"
    return (
        status,
        error_body(where.api, message, kind, status),
        reply_headers(where.api, status, "application/json"),
    )


def _read_chunked(stream: Any) -> bytes:
    """A ``Transfer-Encoding: chunked`` body, its chunks joined (trailers skipped)."""
    parts: list[bytes] = []
    while True:
        size = int(stream.readline().split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while stream.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailer fields
            return b"".join(parts)
        parts.append(stream.read(size))
        stream.readline()  # the CRLF after the chunk


def _handler(server: LlmServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: every answer has its Content-Length
        server_version = "tracereplay-llm-server"

        def setup(self) -> None:
            super().setup()
            # headers and body go out in two writes: without this, Nagle's algorithm holds
            # the body until the client's delayed ACK (~40 ms a keep-alive call)
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _handle(self) -> None:
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                content = _read_chunked(self.rfile)
            else:
                length = int(self.headers.get("content-length") or 0)
                content = self.rfile.read(length) if length else b""
            if self.headers.get("content-encoding", "").lower() == "gzip":
                content = gzip.decompress(content)
            headers = {k: v for k, v in self.headers.items()}
            status, data, reply = server.answer(self.command, self.path, headers, content)
            self.send_response(status)
            for name, value in reply.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_GET = do_PUT = do_DELETE = _handle

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # the CLI says what it serves; no line per request

    return Handler
