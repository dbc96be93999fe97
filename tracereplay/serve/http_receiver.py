"""OTLP/HTTP: ``POST /v1/traces``, ``POST /v1/logs`` and ``GET /healthz`` on the standard library's
threading HTTP server (HTTP/1.1 keep-alive, optional TLS, a bounded number of connections)."""

from __future__ import annotations

import logging
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
from tracereplay.serve.intake import LOGS, TRACES, Intake, Receipt
from tracereplay.serve.rejections import (
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
_BUSY_REPLY = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: %d\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
)


class HttpReceiver(ThreadingHTTPServer):
    """The OTLP/HTTP server: one thread per connection, at most ``max_connections`` of them."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

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
        super().__init__(address, OtlpHandler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse_connection(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self._slots.release()
            raise

    def _refuse_connection(self, request: socket.socket) -> None:
        if self.ssl_context is None:
            body = orjson.dumps({"code": 14, "message": "too many open connections"})
            retry = self.limits.retry_after_s
            try:
                request.settimeout(1.0)
                request.sendall(_BUSY_REPLY % (retry, len(body), body))
            except OSError:
                pass
        self.shutdown_request(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            request.settimeout(self.limits.read_timeout_s)
            if self.ssl_context is not None:
                request = self.ssl_context.wrap_socket(request, server_side=True)
            self.finish_request(request, client_address)
        except (OSError, ssl.SSLError) as exc:
            log.debug("connection from %s ended: %s", client_address, exc)
        except Exception:
            log.exception("unexpected error on a connection from %s", client_address)
        finally:
            self.shutdown_request(request)
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("error on a connection from %s", client_address, exc_info=True)


class OtlpHandler(BaseHTTPRequestHandler):
    """One connection's requests (keep-alive)."""

    server: HttpReceiver
    protocol_version = "HTTP/1.1"
    _unread: int | None = None  # body bytes of the current request not read yet (None: unknown)
    server_version = "tracereplay"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        log.debug("%s %s", self.address_string(), format % args)

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
        except EOFError as exc:
            log.debug("request from %s cut: %s", self.address_string(), exc)
            self.close_connection = True
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

    def _send(
        self, status: int, content_type: str, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        try:
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
