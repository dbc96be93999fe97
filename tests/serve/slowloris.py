"""A bounded slowloris against a server on loopback: many connections, each sending part of a
request one byte at a time, never finishing. Used by the serve tests and
``benchmarks/slowloris.py``. Loopback only; stops by itself after ``until_s``."""

from __future__ import annotations

import selectors
import socket
import threading
import time

#: an OTLP/HTTP request's headers, never finished (no blank line)
HTTP_PARTIAL = (
    b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-protobuf\r\n"
    + b"".join(b"X-Slow-%d: %s\r\n" % (i, b"z" * 40) for i in range(200))
)
#: the HTTP/2 connection preface a gRPC client starts with, and a SETTINGS frame header
GRPC_PARTIAL = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00" * 50


class Slowloris:
    """``connections`` sockets to ``127.0.0.1:port``, each sending the next byte of ``payload``
    every ``every_s`` seconds, for at most ``until_s`` seconds; ``reconnect``: a connection the
    server closes is replaced, so the attack keeps ``connections`` open. ``closed`` counts the
    connections the server closed, ``closed_after`` when, from their start."""

    def __init__(
        self,
        port: int,
        connections: int,
        payload: bytes,
        every_s: float,
        until_s: float,
        reconnect: bool = True,
    ) -> None:
        self.reconnect = reconnect
        self.port = port
        self.connections = connections
        self.payload = payload
        self.every_s = every_s
        self.until_s = until_s
        self.opened = 0
        self.closed_after: list[float] = []
        self.answers: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="slowloris", daemon=True)

    @property
    def closed(self) -> int:
        return len(self.closed_after)

    def start(self) -> Slowloris:
        self._thread.start()
        deadline = time.monotonic() + 30
        while self.opened < self.connections and self._thread.is_alive():
            assert time.monotonic() < deadline, f"only {self.opened} connections opened"
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def __enter__(self) -> Slowloris:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        begun = time.monotonic()
        socks: dict[socket.socket, list[float]] = {}  # sock -> [start, bytes sent]
        try:
            self._open(selector, socks, self.connections)
            next_round = time.monotonic()
            while socks and not self._stop.is_set():
                if time.monotonic() - begun > self.until_s:
                    break
                if self.reconnect:
                    self._open(selector, socks, self.connections - len(socks))
                now = time.monotonic()
                if now >= next_round:  # one more byte on every open connection
                    for sock, state in list(socks.items()):
                        index = int(state[1]) % len(self.payload)
                        try:
                            sock.send(self.payload[index : index + 1])
                            state[1] += 1
                        except OSError:
                            self._closed(selector, socks, sock)
                    next_round = now + self.every_s
                for key, _ in selector.select(max(0.0, min(next_round - time.monotonic(), 0.2))):
                    sock = key.fileobj  # type: ignore[assignment]
                    try:
                        data = sock.recv(4096)  # type: ignore[union-attr]
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b""
                    if data:  # an answer (a 408, gRPC's SETTINGS): the close comes next
                        self.answers.append(data)
                        continue
                    self._closed(selector, socks, sock)  # type: ignore[arg-type]
        finally:
            for sock in socks:
                sock.close()
            selector.close()

    def _open(
        self, selector: selectors.BaseSelector, socks: dict[socket.socket, list[float]], n: int
    ) -> None:
        for _ in range(n):
            if self._stop.is_set():
                return
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            sock.setblocking(False)
            socks[sock] = [time.monotonic(), 0]
            selector.register(sock, selectors.EVENT_READ)
            self.opened += 1

    def _closed(
        self,
        selector: selectors.BaseSelector,
        socks: dict[socket.socket, list[float]],
        sock: socket.socket,
    ) -> None:
        state = socks.pop(sock, None)
        if state is None:
            return
        self.closed_after.append(time.monotonic() - state[0])
        selector.unregister(sock)
        sock.close()
