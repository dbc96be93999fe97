"""A loopback stand-in for ``POST /v1/chat/completions`` (the shape of OpenAI's replies).

First call of a conversation (no ``tool`` message yet): the model asks for ``get_weather`` and
``get_population``; once tool results are in: a final answer. Usage numbers are fixed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROUND1_USAGE = {"prompt_tokens": 207, "completion_tokens": 46, "total_tokens": 253}
ROUND2_USAGE = {"prompt_tokens": 301, "completion_tokens": 19, "total_tokens": 320}
FINAL_ANSWER = "In San Francisco it is foggy and 14 °C; the population service timed out."


def _completion(
    message: dict[str, Any], finish_reason: str, usage: dict[str, int], n: int
) -> bytes:
    return json.dumps(
        {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": 1772011299,
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
            "usage": usage,
        }
    ).encode()


def reply(body: dict[str, Any]) -> bytes:
    messages = body.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        return _completion({"role": "assistant", "content": FINAL_ANSWER}, "stop", ROUND2_USAGE, 2)
    calls = [
        {
            "id": f"call_{name}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps({"city": "San Francisco"})},
        }
        for name in ("get_weather", "get_population")
    ]
    return _completion(
        {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls", ROUND1_USAGE, 1
    )


@contextmanager
def fake_openai() -> Iterator[str]:
    """Yields the base URL to give ``openai.OpenAI(base_url=...)``."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            out = reply(json.loads(self.rfile.read(length) or b"{}"))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
