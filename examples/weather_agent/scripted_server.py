"""The scripted weather model behind an OpenAI-compatible HTTP API, on 127.0.0.1.

It stands in for a model provider in the offline-replay demo: ``POST /v1/chat/completions``
answers with ``ScriptedLLM`` (``"model": "scripted-weather-2"`` with the next version's
behaviour). No network beyond loopback, no API key checked.

    python examples/weather_agent/scripted_server.py --url-file demo-work/model-url &
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_agent import ScriptedLLMv2  # noqa: E402
from scripted_llm import ScriptedLLM  # noqa: E402


def complete(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted chat completion for a request body."""
    messages = body.get("messages") or []
    llm = ScriptedLLMv2() if body.get("model") == ScriptedLLMv2.model else ScriptedLLM()
    # call ids stay unique over a conversation: number this call after the model turns so far
    llm.calls = sum(1 for m in messages if m.get("role") == "assistant")
    return llm.complete(messages)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/").endswith("/chat/completions"):
            status, data = 200, complete(body)
        else:
            status, data = 404, {"error": {"message": f"no route {self.path}"}}
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def start(port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Serve in a daemon thread; returns the server and its base URL (``.../v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url-file", type=Path, help="write the base URL here once serving")
    args = parser.parse_args(argv)
    server, url = start()
    if args.url_file:
        args.url_file.write_text(url + "\n")
    print(url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
