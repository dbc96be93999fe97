"""``tracereplay llm-server``: a suite's recorded LLM calls served on loopback, answered to a
real OpenAI client (plain and streamed) and to Anthropic's Messages wire over httpx, with prompt
drift in the report endpoint; and the command end to end in a subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from offline_store import EXAMPLE, offline_store, scripted_server

from tracereplay.replay.answering.llm.interceptor import RecordedLlm
from tracereplay.replay.answering.llm.server import LlmServer, ServedCase, load_cases
from tracereplay.store.open import open_store

pytestmark = pytest.mark.slow

sys.path.insert(0, str(EXAMPLE))
from openai_agent import MODEL, QUERIES, SYSTEM  # noqa: E402
from tools import TOOL_SCHEMAS  # noqa: E402

sys.path.remove(str(EXAMPLE))

SETTINGS = {"temperature": 0.0, "max_tokens": 400}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return offline_store(tmp_path_factory)


@pytest.fixture(scope="module")
def cases(store: Path) -> list[ServedCase]:
    with open_store(store) as s:
        served, name = load_cases(s, "weather-offline")
    assert name == "weather-offline" and len(served) == 3
    return served


@pytest.fixture
def server(cases: list[ServedCase]) -> Iterator[LlmServer]:
    with LlmServer(cases=cases) as running:
        yield running


def _client(server: LlmServer) -> Any:
    from openai import OpenAI

    return OpenAI(base_url=server.env()["OPENAI_BASE_URL"], api_key="x", max_retries=0)


def _first_request(query: str) -> dict[str, Any]:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": query}]
    return {"model": MODEL, "messages": messages, "tools": TOOL_SCHEMAS, **SETTINGS}


def _case_of(cases: list[ServedCase], query: str) -> ServedCase:
    return next(c for c in cases if c.query == query)


def test_the_openai_client_gets_the_recorded_chat_answer(
    server: LlmServer, cases: list[ServedCase]
) -> None:
    case = _case_of(cases, QUERIES[0])
    server.select(str(case.seq))
    completion = _client(server).chat.completions.create(**_first_request(QUERIES[0]))
    # the same body the in-process path answers with
    status, body, _ = RecordedLlm(case.calls).answer("chat", _first_request(QUERIES[0]))
    expected = httpx.Response(status, content=body).json()
    assert completion.model_dump(exclude_none=True) == _without_none(expected)
    calls = completion.choices[0].message.tool_calls
    assert calls and calls[0].function.name == "get_weather"
    report = httpx.get(server.url + "/tracereplay/report").json()
    assert report["case_id"] == case.case_id
    assert report["report"]["answered"] == 1 and report["report"]["drift"] == []


def test_a_streamed_chat_call_gives_the_same_answer(
    server: LlmServer, cases: list[ServedCase]
) -> None:
    case = _case_of(cases, QUERIES[0])
    server.select(case.case_id[:8])
    plain = RecordedLlm(case.calls).answer("chat", _first_request(QUERIES[0]))
    expected = httpx.Response(200, content=plain[1]).json()["choices"][0]["message"]
    stream = _client(server).chat.completions.create(**_first_request(QUERIES[0]), stream=True)
    names, arguments, text = [], [], ""
    for chunk in stream:
        delta = chunk.choices[0].delta if chunk.choices else None
        if delta is None:
            continue
        text += delta.content or ""
        for call in delta.tool_calls or []:
            if call.function and call.function.name:
                names.append(call.function.name)
                arguments.append("")
            if call.function and call.function.arguments:
                arguments[-1] += call.function.arguments
    assert names == [c["function"]["name"] for c in expected["tool_calls"]]
    assert arguments == [c["function"]["arguments"] for c in expected["tool_calls"]]
    assert text == (expected.get("content") or "")


def test_anthropic_messages_over_plain_http(server: LlmServer, cases: list[ServedCase]) -> None:
    case = _case_of(cases, QUERIES[0])
    server.select(str(case.seq))
    tools = [
        {
            "name": t["function"]["name"],
            "description": t["function"].get("description", ""),
            "input_schema": t["function"]["parameters"],
        }
        for t in TOOL_SCHEMAS
    ]
    body = {
        "model": MODEL,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": QUERIES[0]}],
        "tools": tools,
        **SETTINGS,
    }
    url = server.env()["ANTHROPIC_BASE_URL"] + "/v1/messages"
    reply = httpx.post(url, json=body, headers={"x-api-key": "x"})
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    message = reply.json()
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["stop_reason"] == "tool_use"
    assert [b["name"] for b in message["content"] if b["type"] == "tool_use"] == ["get_weather"]
    # the same conversation on another wire is no drift from the OpenAI-recorded call
    assert httpx.get(server.url + "/tracereplay/report").json()["report"]["drift"] == []
    streamed = httpx.post(url, json={**body, "stream": True})  # a second call: the next round
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert "event: message_start" in streamed.text and "event: message_stop" in streamed.text


def test_prompt_drift_is_in_the_report(server: LlmServer, cases: list[ServedCase]) -> None:
    server.select(str(_case_of(cases, QUERIES[0]).seq))
    drifted = _first_request("What's the weather in Lyon?")
    completion = _client(server).chat.completions.create(**drifted)  # answered in order
    assert completion.choices[0].message.tool_calls
    report = httpx.get(server.url + "/tracereplay/report").json()["report"]
    assert len(report["drift"]) == 1
    drift = report["drift"][0]
    assert drift["round"] == 1 and drift["fields"] == ["messages"] and drift["answered"]
    assert "Lyon" in drift["differences"][0]


def test_no_case_selected_is_a_409_and_an_unknown_path_a_404(server: LlmServer) -> None:
    from openai import APIStatusError

    with pytest.raises(APIStatusError) as raised:
        _client(server).chat.completions.create(**_first_request(QUERIES[0]))
    assert raised.value.status_code == 409 and "no case is selected" in str(raised.value)
    assert httpx.get(server.url + "/tracereplay/report").status_code == 409
    lost = httpx.post(server.url + "/v1/embeddings", json={"input": "x"})
    assert lost.status_code == 404 and lost.text.count("\n") == 1
    assert "no LLM API at POST /v1/embeddings" in lost.text
    # neither a seq of the suite nor a hex prefix a case id can start with ("99" began a
    # random case id now and then: the server then selected that case)
    unknown = httpx.post(server.url + "/tracereplay/case/nine")
    assert unknown.status_code == 404 and "no case 'nine'" in unknown.json()["error"]


def test_the_control_api_selects_a_case_and_starts_it_over(
    server: LlmServer, cases: list[ServedCase]
) -> None:
    listed = httpx.get(server.url + "/tracereplay/cases").json()["cases"]
    assert [c["seq"] for c in listed] == [c.seq for c in cases]
    case = _case_of(cases, QUERIES[0])
    for _ in range(2):  # selecting again starts the case over: call 1 answers again
        chosen = httpx.post(f"{server.url}/tracereplay/case/{case.seq}").json()
        assert chosen["query"] == QUERIES[0] and chosen["recorded_calls"] == len(case.calls)
        _client(server).chat.completions.create(**_first_request(QUERIES[0]))
        report = httpx.get(server.url + "/tracereplay/report").json()["report"]
        assert report["answered"] == 1 and report["errors"] == []


def test_a_fork_forwards_the_calls_past_it(cases: list[ServedCase]) -> None:
    model, url = scripted_server().start()
    try:
        with LlmServer(cases=cases, until=0, upstream={"chat": url}) as server:
            server.select(str(_case_of(cases, QUERIES[0]).seq))
            reply = httpx.post(
                server.env()["OPENAI_BASE_URL"] + "/chat/completions",
                json=_first_request(QUERIES[0]),
            )
            assert reply.status_code == 200 and reply.headers["x-tracereplay"] == "live"
            report = httpx.get(server.url + "/tracereplay/report").json()["report"]
            assert report["fork_round"] == 0 and report["live"] == [1]
    finally:
        model.shutdown()


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def test_the_command_serves_a_case_to_the_openai_client(store: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRACEREPLAY"))}
    args = ["--db", str(store), "llm-server", "--suite", "weather-offline", "--case", "0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracereplay", *args, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = []
        while not lines or not lines[-1].startswith("Ctrl-C"):
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            lines.append(line.strip())
        exports = dict(
            line.removeprefix("export ").split("=", 1)
            for line in lines
            if line.startswith("export ")
        )
        assert exports["OPENAI_BASE_URL"].endswith("/v1") and exports["OPENAI_API_KEY"]
        assert exports["ANTHROPIC_BASE_URL"] == exports["GOOGLE_GEMINI_BASE_URL"]
        from openai import OpenAI

        client = OpenAI(base_url=exports["OPENAI_BASE_URL"], api_key=exports["OPENAI_API_KEY"])
        completion = client.chat.completions.create(**_first_request(QUERIES[0]))
        assert completion.choices[0].message.tool_calls
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "stopped" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_command_says_what_is_wrong(store: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tracereplay", "--db", str(store), "llm-server", *args],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    # neither a seq of the suite nor a hex prefix any case id can start with ("7" was the
    # prefix of a random case id one time in six: the server then served that case)
    bad_case = run("--suite", "weather-offline", "--case", "nine")
    assert bad_case.returncode == 2 and "--case: no case 'nine'" in bad_case.stderr
    bad_suite = run("--suite", "nope")
    assert bad_suite.returncode == 2 and "nope" in bad_suite.stderr


def test_the_responses_api_and_gemini_are_answered_too(
    server: LlmServer, cases: list[ServedCase]
) -> None:
    case = _case_of(cases, QUERIES[0])
    server.select(str(case.seq))
    tools = [{"type": "function", **t["function"]} for t in TOOL_SCHEMAS]
    response = _client(server).responses.create(
        model=MODEL, instructions=SYSTEM, input=QUERIES[0], tools=tools, temperature=0.0
    )
    calls = [item for item in response.output if item.type == "function_call"]
    assert [c.name for c in calls] == ["get_weather"]
    server.select(str(case.seq))
    body = {
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "contents": [{"role": "user", "parts": [{"text": QUERIES[0]}]}],
        "tools": [{"functionDeclarations": [t["function"] for t in TOOL_SCHEMAS]}],
        "generationConfig": {"temperature": 0.0, "maxOutputTokens": 400},
    }
    base = server.env()["GOOGLE_GEMINI_BASE_URL"] + f"/v1beta/models/{MODEL}"
    reply = httpx.post(base + ":generateContent", json=body)
    assert reply.status_code == 200, reply.text
    parts = reply.json()["candidates"][0]["content"]["parts"]
    assert [p["functionCall"]["name"] for p in parts if "functionCall" in p] == ["get_weather"]
    server.select(str(case.seq))
    streamed = httpx.post(base + ":streamGenerateContent?alt=sse", json=body)
    assert streamed.status_code == 200
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert '"functionCall"' in streamed.text
    report = httpx.get(server.url + "/tracereplay/report").json()["report"]
    assert report["errors"] == [] and report["drift"] == [] and report["answered"] == 1


def test_otlp_requests_go_to_telemetry_chunked_or_not(cases: list[ServedCase]) -> None:
    """An agent command's exporter posts here too (``telemetry``): a protobuf body with a
    length, and one sent chunked (OpenTelemetry JS's exporter), reach it whole; every
    answered LLM request is handed to ``on_answer`` with what answered it."""
    got: list[tuple[str, str, bytes]] = []
    answered: list[tuple[str, bool, int]] = []

    def telemetry(path: str, ctype: str, body: bytes) -> tuple[int, bytes, dict[str, str]]:
        got.append((path, ctype, body))
        return 200, b"", {"content-type": "application/x-protobuf"}

    def on_answer(where: Any, body: Any, call: Any, status: int, live: bool) -> None:
        answered.append((where.api, call is not None, status))

    case = _case_of(cases, QUERIES[0])
    with LlmServer(telemetry=telemetry, on_answer=on_answer) as srv:
        srv.serve(case)
        headers = {"content-type": "application/x-protobuf"}
        plain = httpx.post(f"{srv.url}/v1/traces", content=b"\x0a\x00", headers=headers)
        chunked = httpx.post(
            f"{srv.url}/v1/logs", content=iter([b"ab", b"", b"cde"]), headers=headers
        )
        _client(srv).chat.completions.create(**_first_request(QUERIES[0]))
    assert plain.status_code == chunked.status_code == 200
    assert got == [
        ("/v1/traces", "application/x-protobuf", b"\x0a\x00"),
        ("/v1/logs", "application/x-protobuf", b"abcde"),
    ]
    assert answered == [("chat", True, 200)]
