"""A judge model on 127.0.0.1: an OpenAI-compatible ``/chat/completions`` server answering each
request with a score picked from the question (so the test knows which run gets which), and
token usage, as a real endpoint reports it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeJudge:
    """``score_for(prompt) -> str`` decides the reply; every request body is kept."""

    def __init__(self, score_for=lambda prompt: "score: 0.9") -> None:
        self.requests: list[dict] = []
        self.score_for = score_for
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                prompt = body["messages"][-1]["content"]
                payload = json.dumps(
                    {
                        "choices": [
                            {"message": {"role": "assistant", "content": outer.score_for(prompt)}}
                        ],
                        "usage": {"prompt_tokens": 120, "completion_tokens": 7},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
