"""OTLP/HTTP: ``POST /v1/traces``, ``POST /v1/logs`` and ``GET /healthz`` on the standard library's
threading HTTP server (HTTP/1.1 keep-alive, optional TLS, a bounded number of threads).

Slow clients cannot hold a thread: a connection waits for each request's headers in the
``HeaderGate`` (one selector thread for all of them, ``read_timeout_s`` from the connection or the
previous answer), and takes a thread, one of ``max_connections``, only once they are whole; it
goes back to the gate after the answer. A body must arrive within ``read_timeout_s`` plus one
second per ``MIN_BODY_RATE`` bytes received; a byte now and then does not extend either
deadline. A request whose headers are whole when every thread is busy gets a 503 with
``Retry-After``, and its connection is closed gracefully (never reset) by one background thread.
"""

from __future__ import annotations

import io
import logging
import selectors
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import orjson

from tracereplay.serve.admission import Admission
from tracereplay.serve.auth import TokenCheck
from tracereplay.serve.bodies import check_encoding, inflate, parse_length, read_body
from tracereplay.serve.header_gate import HeaderGate
from tracereplay.serve.intake import LOGS, TRACES, Intake, Receipt
from tracereplay.serve.rejections import (
    InvalidData,
    NotFound,
    Rejection,
    Unauthenticated,
    Unavailable,
    UnsupportedMediaType,
)
from tracereplay.serve.responses import JSON, PROTOBUF, error_body, export_body

log = logging.getLogger("tracereplay.serve")

ROUTES = {"/v1/traces": TRACES, "/v1/logs": LOGS}
_MEDIA_TYPES = {
    "application/x-protobuf": PROTOBUF,
    "application/protobuf": PROTOBUF,
    "application/json": JSON,
}
#: how long a refused connection reads and drops the rest of a body before closing
LINGER_S = 2.0
#: body bytes per second a slow client is granted past ``read_timeout_s`` (see the module doc)
MIN_BODY_RATE = 64 * 1024
#: connections refused at once that are closed gracefully; past it, closed at once
MAX_REFUSED = 1024
#: connections that may wait for their headers (idle keep-alive ones too), per thread slot
WAITING_PER_SLOT = 16
_BUSY_REPLY = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: %d\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
)


class _Clock:
    """The deadline of what a connection is reading now (headers, or a body)."""

    __slots__ = ("idle_s", "start", "allowance_s", "rate", "received")

    def __init__(self, idle_s: float) -> None:
        self.idle_s = idle_s
        self.restart(idle_s)

    def restart(self, allowance_s: float, rate: float = 0.0) -> None:
        """From now: ``allowance_s`` seconds, plus one per ``rate`` bytes received (if set)."""
        self.start = time.monotonic()
        self.allowance_s = allowance_s
        self.rate = rate
        self.received = 0

    def left(self) -> float:
        allowed = self.allowance_s + (self.received / self.rate if self.rate else 0.0)
        return self.start + allowed - time.monotonic()


class _DeadlineReader(io.RawIOBase):
    """A socket's reads, each bounded by what is left of the connection's ``_Clock``; first
    the bytes the ``HeaderGate`` read already. ``nonblocking``: give only those (None after)."""

    def __init__(self, sock: socket.socket, clock: _Clock, prefix: bytes = b"") -> None:
        self._sock = sock
        self._clock = clock
        self._prefix = memoryview(prefix)
        self.nonblocking = False

    def readable(self) -> bool:
        return True

    def take_prefix(self) -> bytes:
        """What is left of the gate's bytes (a pipelined request), taken out."""
        rest, self._prefix = bytes(self._prefix), memoryview(b"")
        return rest

    def readinto(self, buffer: Any) -> int | None:
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        if self.nonblocking:
            return None
        clock = self._clock
        left = clock.left()
        if left <= 0:
            raise TimeoutError("the client is too slow (read deadline passed)")
        self._sock.settimeout(min(left, clock.idle_s))
        n = self._sock.recv_into(buffer)
        clock.received += n
        return n


class _Refuser:
    """Answers connections past the limit with 503 + Retry-After and closes them gracefully:
    stop writing, read and drop what the client still sends (its request) for up to
    ``LINGER_S``, then close; a close with unread data would reset the connection instead."""

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._pending: list[tuple[socket.socket, float]] = []
        self._deadlines: dict[socket.socket, float] = {}
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="otlp-http-refuser", daemon=True)
        self._thread.start()

    def refuse(self, sock: socket.socket, reply: bytes) -> bool:
        """Send ``reply`` and hand ``sock`` to the thread; False (caller closes) when full."""
        with self._lock:
            if self._closed or len(self._deadlines) + len(self._pending) >= MAX_REFUSED:
                return False
        try:
            sock.setblocking(False)
            sent = sock.send(reply)  # a few hundred bytes: fits in any socket buffer
            if sent < len(reply):
                return False
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            return False
        with self._lock:
            self._pending.append((sock, time.monotonic() + LINGER_S))
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        return True

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    break
                pending, self._pending = self._pending, []
            for sock, deadline in pending:
                try:
                    self._selector.register(sock, selectors.EVENT_READ)
                    self._deadlines[sock] = deadline
                except (OSError, ValueError):
                    sock.close()
            now = time.monotonic()
            timeout = min((d - now for d in self._deadlines.values()), default=1.0)
            for key, _ in self._selector.select(max(0.0, min(timeout, 1.0))):
                sock = key.fileobj
                if sock is self._wake_r:
                    try:
                        while self._wake_r.recv(4096):
                            pass
                    except OSError:
                        pass
                    continue
                try:
                    finished = not sock.recv(65536)  # type: ignore[union-attr]
                except BlockingIOError:
                    finished = False
                except OSError:
                    finished = True
                if finished:
                    self._drop(sock)  # type: ignore[arg-type]
            now = time.monotonic()
            for sock in [s for s, d in self._deadlines.items() if d <= now]:
                self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        self._deadlines.pop(sock, None)
        try:
            self._selector.unregister(sock)
        except (KeyError, ValueError):
            pass
        sock.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        self._thread.join(timeout=5)
        for sock in list(self._deadlines):
            self._drop(sock)
        for sock, _ in self._pending:
            sock.close()
        self._wake_r.close()
        self._wake_w.close()
        self._selector.close()


class HttpReceiver(ThreadingHTTPServer):
    """The OTLP/HTTP server: a thread per request being read and handled, at most
    ``max_connections`` of them; connections between requests wait in the ``HeaderGate``."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024

    def __init__(
        self,
        address: tuple[str, int],
        intake: Intake,
        admission: Admission,
        auth: TokenCheck,
        ssl_context: ssl.SSLContext | None = None,
        health: Any = None,
    ) -> None:
        self.intake = intake
        self.admission = admission
        self.auth = auth
        self.ssl_context = ssl_context
        self.limits = admission.limits
        self.health = health or (lambda: {})
        self._slots = threading.BoundedSemaphore(self.limits.max_connections)
        self._refuser = _Refuser()  # before binding: a failed bind calls server_close
        self._gate = HeaderGate(
            self.limits.read_timeout_s,
            WAITING_PER_SLOT * self.limits.max_connections,
            self._dispatch,
            ssl_context,
        )
        super().__init__(address, OtlpHandler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        """A new connection waits for its headers in the gate (no thread yet)."""
        self._gate.admit(request, client_address)

    def _dispatch(self, request: socket.socket, client_address: Any, prefix: bytes) -> None:
        """Headers whole (called by the gate's thread): a thread handles the request, or 503."""
        if not self._slots.acquire(blocking=False):
            self._refuse_connection(request)
            return
        try:
            threading.Thread(
                target=self.process_request_thread,
                args=(request, client_address, prefix),
                name="otlp-http",
                daemon=True,
            ).start()
        except Exception:
            self._slots.release()
            raise

    def _refuse_connection(self, request: socket.socket) -> None:
        if self.ssl_context is None:  # (over TLS: closed, the gate's TLS socket is non-blocking)
            body = orjson.dumps(
                {"code": 14, "message": "too many requests at once (--max-connections)"}
            )
            reply = _BUSY_REPLY % (self.limits.retry_after_s, len(body), body)
            if self._refuser.refuse(request, reply):
                return
        self.shutdown_request(request)

    def stop_listening(self) -> None:
        """No new connections; open ones still get answers (503 while stopping)."""
        super().server_close()

    def server_close(self) -> None:
        super().server_close()
        self._gate.close()
        self._refuser.close()

    def process_request_thread(  # type: ignore[override]
        self, request: Any, client_address: Any, prefix: bytes = b""
    ) -> None:
        """One request of a connection; a kept-alive connection then goes back to the gate."""
        handler: OtlpHandler | None = None
        try:
            request.settimeout(self.limits.read_timeout_s)
            handler = OtlpHandler(request, client_address, self, prefix)
        except (OSError, ssl.SSLError) as exc:
            log.debug("connection from %s ended: %s", client_address, exc)
        except Exception:
            log.exception("unexpected error on a connection from %s", client_address)
        finally:
            self._slots.release()
            if handler is not None and handler.kept is not None:
                self._gate.readmit(request, client_address, handler.kept)
            else:
                self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("error on a connection from %s", client_address, exc_info=True)


class OtlpHandler(BaseHTTPRequestHandler):
    """One request of a connection, its headers already read whole by the gate (``prefix``);
    ``kept``: the bytes read past it when the connection stays open (None: close it)."""

    server: HttpReceiver
    protocol_version = "HTTP/1.1"
    _unread: int | None = None  # body bytes of the current request not read yet (None: unknown)
    _answered = False  # the current request was answered 408 already
    server_version = "tracereplay"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        log.debug("%s %s", self.address_string(), format % args)

    def __init__(self, request: Any, client_address: Any, server: Any, prefix: bytes = b"") -> None:
        self._prefix = prefix
        self.kept: bytes | None = None
        super().__init__(request, client_address, server)

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        self._clock = _Clock(self.server.limits.read_timeout_s)
        self._reader = _DeadlineReader(self.connection, self._clock, self._prefix)
        self.rfile = io.BufferedReader(self._reader, 65536)

    def handle(self) -> None:
        self.close_connection = True
        self.handle_one_request()
        if not self.close_connection:  # what the reader holds of the next request goes along
            self._reader.nonblocking = True
            self.kept = self.rfile.peek(1) + self._reader.take_prefix()

    def handle_one_request(self) -> None:
        # the headers of the next request: whole within read_timeout_s from now
        self._clock.restart(self._clock.idle_s)
        self._answered = False
        try:
            super().handle_one_request()  # answers nothing when its reads time out
        except TimeoutError:
            self.close_connection = True
        # headers cut by the deadline: say so when the client had started a request
        late = self.close_connection and not self._answered and self._clock.left() <= 0
        if late and self._clock.received:
            self._timed_out("the request headers did not arrive in time")

    # ------------------------------------------------------------------ GET
    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path not in ("/healthz", "/health"):
            self._send(404, JSON, orjson.dumps({"code": 5, "message": f"no such path: {path}"}))
            return
        stopping = self.server.admission.stopping
        body: dict[str, Any] = {"status": "stopping" if stopping else "ok"}
        if self.server.auth.allows(self.headers.get("Authorization")):
            body.update(self.server.health())
        self._send(503 if stopping else 200, JSON, orjson.dumps(body))

    # ------------------------------------------------------------------ POST
    def do_POST(self) -> None:
        content_type = JSON
        self._unread = self._declared_length()
        try:
            path = urlsplit(self.path).path
            signal = ROUTES.get(path)
            if signal is None:
                raise NotFound(f"no such path: {path} (POST /v1/traces or /v1/logs)")
            content_type = self._media_type()
            receipt = self._receive(signal, content_type)
        except Rejection as rejection:
            self._reject(rejection, content_type)
            return
        except EOFError as exc:  # the client stopped sending (half-close, or gone)
            log.debug("request from %s cut: %s", self.address_string(), exc)
            self.close_connection = True
            self._send(
                400,
                content_type,
                error_body(content_type, InvalidData(f"the body is incomplete: {exc}")),
            )
            return
        except TimeoutError:
            self._timed_out("the request body did not arrive in time")
            return
        except Exception:  # a bug: answer (500, not retried) rather than drop the connection
            log.exception("unexpected error handling a request from %s", self.address_string())
            self.close_connection = True
            self._send(500, JSON, orjson.dumps({"code": 13, "message": "internal error"}))
            return
        self._send(200, content_type, export_body(signal, content_type, receipt))

    def _declared_length(self) -> int | None:
        """Body bytes still to read, from ``Content-Length`` (None: unknown or chunked)."""
        if self.headers.get("Transfer-Encoding"):
            return None
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        return length if length >= 0 else None

    def _media_type(self) -> str:
        raw = self.headers.get("Content-Type") or ""
        media = raw.split(";", 1)[0].strip().lower()
        found = _MEDIA_TYPES.get(media)
        if found is None:
            raise UnsupportedMediaType(
                f"Content-Type {media or 'none'!r} is not supported: send "
                "application/x-protobuf or application/json"
            )
        return found

    def _receive(self, signal: str, content_type: str) -> Receipt:
        server = self.server
        limits = server.limits
        if not server.auth.allows(self.headers.get("Authorization")):
            raise Unauthenticated("a valid 'Authorization: Bearer <token>' header is required")
        encoding = check_encoding(self.headers.get("Content-Encoding"))
        declared = self.headers.get("Content-Length")
        transfer = self.headers.get("Transfer-Encoding")
        expected = (
            parse_length(declared, limits.max_request_bytes) if declared and not transfer else 0
        )
        # the body: whole within read_timeout_s, plus a second per MIN_BODY_RATE bytes received
        self._clock.restart(limits.read_timeout_s, MIN_BODY_RATE)
        with server.admission.admit(expected) as ticket:
            body = read_body(self.rfile, declared, transfer, limits.max_request_bytes)
            self._unread = 0
            if len(body) > expected:  # chunked: charge what actually came
                ticket.grow(len(body) - expected)
            payload = inflate(body, encoding, limits.max_decompressed_bytes, ticket.grow)
            del body
            intake = server.intake
            if signal == TRACES:
                return (
                    intake.traces_pb(payload)
                    if content_type == PROTOBUF
                    else intake.traces_json(payload)
                )
            return (
                intake.logs_pb(payload) if content_type == PROTOBUF else intake.logs_json(payload)
            )

    def _reject(self, rejection: Rejection, content_type: str) -> None:
        # Keep the connection when the body is read (or cheaply readable) and the client is
        # welcome back at once; an unauthenticated or turned-away client is closed on.
        welcome = not isinstance(rejection, (Unauthenticated, Unavailable))
        reusable = self._unread == 0 or (welcome and self._discard(self._unread))
        if not reusable or not welcome:
            self.close_connection = True
        headers = {}
        if rejection.retry_after is not None:
            headers["Retry-After"] = str(rejection.retry_after)
        if rejection.http_status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="tracereplay"'
        self._send(
            rejection.http_status, content_type, error_body(content_type, rejection), headers
        )
        if not reusable:
            self._linger()

    def _discard(self, unread: int | None) -> bool:
        """Read and drop an unread body that is within the size limit, keeping the connection."""
        if unread is None or unread > self.server.limits.max_request_bytes:
            return False
        try:
            while unread > 0:
                got = self.rfile.read(min(unread, 65536))
                if not got:
                    return False
                unread -= len(got)
        except OSError:
            return False
        self._unread = 0
        return True

    def _linger(self) -> None:
        """Close after an answer sent before the body was read, without resetting the connection
        under the client's feet (it gets to read the answer): stop writing, drop what still comes."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + LINGER_S
            while (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(65536):
                    break
        except OSError:
            pass

    def _timed_out(self, message: str) -> None:
        """408 to a client too slow to send its request, then close."""
        log.debug("%s: %s", self.address_string(), message)
        self.close_connection = True
        self._answered = True
        body = orjson.dumps({"code": 4, "message": f"{message} (--read-timeout)"})
        self._send(408, JSON, body)

    def _send(
        self, status: int, content_type: str, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        try:
            self.connection.settimeout(self.server.limits.read_timeout_s)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
        except OSError as exc:
            self.close_connection = True
            log.debug("could not answer %s: %s", self.address_string(), exc)
