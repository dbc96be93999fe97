"""Builders shared by the check tests: a case, an agent result, a subject, a spec; ``FakeChat``,\nthe judge's chat-completions server (the ``chat`` fixture of ``conftest.py``)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tracereplay.evaluate import CheckSubject, run_check
from tracereplay.models import (
    AgentResult,
    CheckSpec,
    EvalCase,
    EvalExpectedToolCall,
    LlmCall,
    Run,
    ScoreResult,
    ToolCallRecord,
)


def call(name: str, error: str | None = None, **arguments: Any) -> ToolCallRecord:
    return ToolCallRecord(round=1, tool_name=name, arguments=arguments, error=error)


def expect(name: str, arguments: dict[str, Any] | None = None) -> EvalExpectedToolCall:
    return EvalExpectedToolCall(name=name, arguments=arguments)


def make_case(
    expected: str | None = None,
    expected_calls: list[EvalExpectedToolCall] | None = None,
    query: str = "What is the weather in Paris?",
    **kw: Any,
) -> EvalCase:
    return EvalCase(
        suite_id="00000000-0000-4000-8000-000000000001",
        seq=kw.pop("seq", 0),
        query=query,
        expected_output=expected,
        expected_tool_calls=expected_calls or [],
        **kw,
    )


def make_subject(
    output: str = "",
    expected: str | None = None,
    calls: list[ToolCallRecord] | None = None,
    expected_calls: list[EvalExpectedToolCall] | None = None,
    status: str = "success",
    run: Run | None = None,
    rounds: int = 1,
    llm_calls: int = 1,
    **subject_kw: Any,
) -> CheckSubject:
    result = AgentResult(
        response=output,
        tool_calls=calls or [],
        status=status,
        total_rounds=rounds,
        total_llm_calls=llm_calls,
    )
    return CheckSubject(
        case=make_case(expected, expected_calls), result=result, run=run, **subject_kw
    )


def make_run(
    result: AgentResult | None = None,
    duration_ms: float = 1200.0,
    input_tokens: int = 0,
    output_tokens: int = 0,
    llm_calls: list[LlmCall] | None = None,
    run_id: str = "run-1",
    error: str | None = None,
) -> Run:
    return Run(
        run_id=run_id,
        trace_id="t" * 32,
        root_span_id="s" * 16,
        duration_ms=duration_ms,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        llm_calls=llm_calls or [],
        result=result or AgentResult(response="ok"),
        error=error,
    )


def run(kind: str, subject: CheckSubject, **options: Any) -> ScoreResult:
    """Run a freshly built spec (so option validation happens every time)."""
    result = run_check(CheckSpec(kind=kind, **options), subject)
    # every result must be a valid ScoreResult, even though checks build them unvalidated
    ScoreResult.model_validate(result.model_dump())
    return result


class FakeChat:
    """A chat-completions server answering each POST with the next scripted reply."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, object]] = []
        self.requests: list[dict] = []
        self.delay = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests.append(
                    {
                        "path": self.path,
                        "auth": self.headers.get("Authorization"),
                        "body": json.loads(body),
                    }
                )
                status, reply = outer.replies.pop(0) if outer.replies else (200, "score: 1")
                if reply == "HANG":
                    outer.delay.wait(5)
                    return
                if isinstance(reply, str):
                    payload = json.dumps(
                        {"choices": [{"message": {"role": "assistant", "content": reply}}]}
                    ).encode()
                elif isinstance(reply, bytes):
                    payload = reply
                else:
                    payload = json.dumps(reply).encode()
                self.send_response(status)
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
        self.delay.set()
        self.server.shutdown()
        self.server.server_close()
