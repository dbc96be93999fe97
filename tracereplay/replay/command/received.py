"""The OTLP/HTTP requests an agent command's exporter sends the eval, decoded as they come.

The model server (``answering/llm/server.py``) hands each POST to ``/v1/traces``, ``/v1/logs``
or ``/v1/metrics`` to ``Received.handle``: protobuf or JSON by content type, decoded by the
decoders every ingest uses (``otlp/pb_decode``, ``otlp/json_decode``); metrics are accepted
and dropped. An undecodable body gets a 400, as from ``tracereplay serve``.
"""

from __future__ import annotations

import threading

import orjson

from tracereplay.otlp.json_decode import decode_logs_json, decode_traces_json
from tracereplay.otlp.model import Decoded
from tracereplay.otlp.pb_decode import decode_logs_pb, decode_traces_pb
from tracereplay.spans import LogRecord, Span

_PROTOBUF = "application/x-protobuf"


class Received:
    """Every span and log record one command sent (safe across the server's threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.spans: list[Span] = []
        self.logs: list[LogRecord] = []
        self.requests = 0

    def handle(
        self, path: str, content_type: str, body: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        """One OTLP/HTTP request: (status, body, headers) of the answer."""
        is_json = "json" in content_type.lower()
        ctype = "application/json" if is_json else _PROTOBUF
        if path == "/v1/metrics":
            return 200, b"{}" if is_json else b"", {"content-type": ctype}
        try:
            decoded = _decode(path, is_json, body)
        except Exception as exc:  # a body no decoder reads: the exporter's problem, said
            message = f"tracereplay: cannot decode this OTLP request: {exc}"
            return (
                400,
                orjson.dumps({"code": 3, "message": message}),
                {"content-type": "application/json"},
            )
        with self._lock:
            self.requests += 1
            self.spans.extend(decoded.spans)
            self.logs.extend(decoded.logs)
        return 200, b"{}" if is_json else b"", {"content-type": ctype}

    def taken(self) -> tuple[list[Span], list[LogRecord]]:
        with self._lock:
            return list(self.spans), list(self.logs)


def _decode(path: str, is_json: bool, body: bytes) -> Decoded:
    if path == "/v1/logs":
        return decode_logs_json(body) if is_json else decode_logs_pb(body)
    return decode_traces_json(body) if is_json else decode_traces_pb(body)
