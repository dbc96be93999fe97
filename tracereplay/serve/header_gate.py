"""OTLP/HTTP connections waiting for a request's headers, all in one selector thread.

Why: with one thread per connection from the accept on, a connection that sent part of a header
and waited (slowloris) held a thread and a connection slot until the read timeout; a few hundred
of them turned every legitimate export and ``/healthz`` away with 503. Here a connection takes a
slot (a thread, see ``HttpReceiver``) only once its headers are whole, and goes back here after
each answer on a kept-alive connection. Until then it costs a socket and at most
``MAX_HEADER_BYTES`` of buffer, and one deadline closes it: ``read_timeout_s`` from the
connection (or from the previous answer), never extended by bytes arriving; 408 when a request
had begun, silently when the connection was idle. TLS handshakes happen here too, non-blocking,
within the same deadline. At most ``max_waiting`` connections wait: a new one past that closes
the one waiting longest (the nearest deadline).

The only protocol code is finding the blank line that ends the headers; the request is parsed
by ``http.server`` in the connection's thread. (uvicorn's h11 protocol starts no timer before a
first request's headers are complete, so it would not do this job.)
"""

from __future__ import annotations

import heapq
import itertools
import logging
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("tracereplay.serve")

#: the most header bytes a request may send (431 above); what a waiting connection may buffer
MAX_HEADER_BYTES = 32 * 1024
_TIMEOUT_REPLY = (
    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
    b"Connection: close\r\n\r\n%s"
)
_TOO_LARGE_REPLY = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
)

#: called with the connection (blocking again), its address and the bytes read so far
Ready = Callable[[socket.socket, Any, bytes], None]


def _reply(template: bytes, message: str) -> bytes:
    body = b'{"code": 4, "message": "%s"}' % message.encode()
    return template % (len(body), body)


def headers_complete(buffer: bytearray | bytes) -> bool:
    """True once ``buffer`` holds the blank line ending a request's headers (CRLF or bare LF)."""
    return b"\n\r\n" in buffer or b"\n\n" in buffer


class _Waiting:
    __slots__ = ("sock", "address", "buffer", "deadline", "handshaking", "done")

    def __init__(
        self, sock: socket.socket, address: Any, buffer: bytes, deadline: float, tls: bool
    ) -> None:
        self.sock = sock
        self.address = address
        self.buffer = bytearray(buffer)
        self.deadline = deadline
        self.handshaking = tls
        self.done = False


class HeaderGate:
    """Holds connections until their headers are whole, then hands each to ``ready``."""

    def __init__(
        self,
        timeout_s: float,
        max_waiting: int,
        ready: Ready,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._timeout_s = timeout_s
        self._max_waiting = max_waiting
        self._ready = ready
        self._ssl_context = ssl_context
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._incoming: list[tuple[socket.socket, Any, bytes, bool]] = []
        self._waiting: dict[int, _Waiting] = {}  # by file descriptor
        self._deadlines: list[tuple[float, int, _Waiting]] = []  # a heap; stale entries skipped
        self._order = itertools.count()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="otlp-http-headers", daemon=True)
        self._thread.start()

    def admit(self, sock: socket.socket, address: Any, buffered: bytes = b"") -> None:
        """Wait for ``sock``'s next request headers; ``buffered``: bytes of it already read.
        A new connection (from accept) is TLS-wrapped here when the server has TLS."""
        self._enqueue(sock, address, buffered, self._ssl_context is not None)

    def readmit(self, sock: socket.socket, address: Any, buffered: bytes = b"") -> None:
        """A kept-alive connection back after an answer (already TLS-wrapped if TLS)."""
        self._enqueue(sock, address, buffered, False)

    def _enqueue(self, sock: socket.socket, address: Any, buffered: bytes, wrap: bool) -> None:
        with self._lock:
            if self._closed:
                sock.close()
                return
            self._incoming.append((sock, address, buffered, wrap))
        try:
            self._wake_w.send(b"x")
        except OSError:  # the wake-up pipe is full: the thread is awake anyway
            pass

    # ------------------------------------------------------------------ the thread
    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                incoming, self._incoming = self._incoming, []
            for sock, address, buffered, wrap in incoming:
                self._start(sock, address, buffered, wrap)
            now = time.monotonic()
            timeout = self._deadlines[0][0] - now if self._deadlines else 1.0
            for key, _ in self._selector.select(max(0.0, min(timeout, 1.0))):
                if key.fileobj is self._wake_r:
                    self._drain_wakeups()
                else:
                    self._readable(key.data)
            self._expire(time.monotonic())

    def _drain_wakeups(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass

    def _start(self, sock: socket.socket, address: Any, buffered: bytes, wrap: bool) -> None:
        try:
            sock.setblocking(False)
            if wrap:
                assert self._ssl_context is not None
                sock = self._ssl_context.wrap_socket(
                    sock, server_side=True, do_handshake_on_connect=False
                )
        except (OSError, ValueError):
            sock.close()
            return
        if len(self._waiting) >= self._max_waiting:
            self._evict_oldest()
        waiting = _Waiting(sock, address, buffered, time.monotonic() + self._timeout_s, wrap)
        if not wrap and headers_complete(waiting.buffer):  # a pipelined request: ready now
            self._hand_over(waiting, registered=False)
            return
        try:
            self._selector.register(sock, selectors.EVENT_READ, waiting)
        except (OSError, ValueError):
            sock.close()
            return
        self._waiting[sock.fileno()] = waiting
        heapq.heappush(self._deadlines, (waiting.deadline, next(self._order), waiting))
        if wrap:  # the client may have sent its hello already
            self._readable(waiting)

    def _readable(self, waiting: _Waiting) -> None:
        sock = waiting.sock
        if waiting.handshaking:
            try:
                sock.do_handshake()  # type: ignore[attr-defined]
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            except (OSError, ValueError) as exc:
                log.debug("TLS handshake with %s failed: %s", waiting.address, exc)
                self._close(waiting)
                return
            waiting.handshaking = False
        while True:  # until the socket (and TLS's own buffer) has nothing more
            try:
                chunk = sock.recv(65536)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            except OSError:
                self._close(waiting)
                return
            if not chunk:  # the client closed
                self._close(waiting)
                return
            waiting.buffer += chunk
            if headers_complete(waiting.buffer):
                self._hand_over(waiting, registered=True)
                return
            if len(waiting.buffer) > MAX_HEADER_BYTES:
                message = f"the request headers are over {MAX_HEADER_BYTES} bytes"
                self._close(waiting, _reply(_TOO_LARGE_REPLY, message))
                return

    def _hand_over(self, waiting: _Waiting, registered: bool) -> None:
        if registered:
            self._forget(waiting)
        waiting.done = True
        try:
            self._ready(waiting.sock, waiting.address, bytes(waiting.buffer))
        except Exception:  # never let one connection stop the thread
            log.exception("could not hand over a connection from %s", waiting.address)
            waiting.sock.close()

    def _expire(self, now: float) -> None:
        while self._deadlines and self._deadlines[0][0] <= now:
            _, _, waiting = heapq.heappop(self._deadlines)
            if not waiting.done:
                self._time_out(waiting)

    def _evict_oldest(self) -> None:
        while self._deadlines:
            _, _, waiting = heapq.heappop(self._deadlines)
            if not waiting.done:
                log.debug("too many connections waiting: closing %s's", waiting.address)
                self._time_out(waiting)
                return

    def _time_out(self, waiting: _Waiting) -> None:
        """Past the deadline: 408 when a request had begun, else just closed (idle)."""
        started = bool(waiting.buffer.strip()) and not waiting.handshaking
        reply = _reply(
            _TIMEOUT_REPLY, "the request headers did not arrive in time (--read-timeout)"
        )
        self._close(waiting, reply if started else None)

    def _close(self, waiting: _Waiting, reply: bytes | None = None) -> None:
        self._forget(waiting)
        waiting.done = True
        if reply is not None:
            try:
                waiting.sock.send(reply)  # small: fits the socket buffer, or is dropped
            except (OSError, ValueError):
                pass
        try:
            waiting.sock.close()
        except OSError:
            pass

    def _forget(self, waiting: _Waiting) -> None:
        fd = waiting.sock.fileno()
        if self._waiting.get(fd) is waiting:
            del self._waiting[fd]
        try:
            self._selector.unregister(waiting.sock)
        except (KeyError, ValueError, OSError):
            pass

    def close(self) -> None:
        """Stop the thread and close every waiting connection."""
        with self._lock:
            self._closed = True
            incoming, self._incoming = self._incoming, []
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        self._thread.join(timeout=5)
        for waiting in list(self._waiting.values()):
            self._close(waiting)
        for sock, *_ in incoming:
            sock.close()
        self._wake_r.close()
        self._wake_w.close()
        self._selector.close()
