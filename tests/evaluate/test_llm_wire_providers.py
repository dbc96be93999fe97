"""Offline replay (``--llm recorded``) of the providers beyond OpenAI and Anthropic: Gemini
``generateContent``, Bedrock Converse, Cohere v2 chat; and the HTTP clients beyond httpx
(urllib3: boto3 and requests; aiohttp).

The SDKs run in their framework venvs (a script run with the venv's python: google-genai in
``.venvs/plain_google_genai``, boto3 in ``.venvs/plain_bedrock``, aiohttp in ``.venvs/dspy``),
each a real client pointed at an address where nothing listens: an answer can only come from
the recording. The wire encoders are checked here too, in the main venv: any recorded answer
comes back as the same text and tool calls once its stream is decoded."""

from __future__ import annotations

import asyncio
import json
import struct
import subprocess
import textwrap
import threading
import zlib
from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st

from tracereplay.replay.answering.llm import (
    OfflineRequestError,
    RecordedCall,
    RecordedLlm,
    answering,
)
from tracereplay.replay.answering.llm.canonical import parse_request, recorded_lines
from tracereplay.replay.answering.llm.endpoints import Endpoint, endpoint, token_count
from tracereplay.replay.answering.llm.sent_results import results_per_tool
from tracereplay.replay.answering.llm.wire import (
    Answer,
    bedrock_stream,
    cohere_stream,
    gemini_chunks,
    recorded_response,
)

ROOT = Path(__file__).resolve().parents[2]
NOWHERE = "http://127.0.0.1:9"  # the discard port: nothing answers there
SYSTEM = "You answer weather questions."
QUESTION = "Weather in Paris?"
ANSWER = "Paris is 12 °C."
RESULT = "12 °C"
BEDROCK_MODEL = "anthropic.claude-3-haiku-20240307-v1:0"


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def recording(model: str, call_id: str | None = "call_1") -> list[RecordedCall]:
    """Two recorded rounds: a tool call (``call_id``: its id; None, none recorded: Gemini),
    then the answer."""
    tool_call: dict[str, Any] = {"type": "tool_call", "name": "get_weather"}
    tool_call["arguments"] = {"city": "Paris"}
    if call_id:
        tool_call["id"] = call_id
    result = {"type": "tool_call_response", "response": RESULT}
    if call_id:
        result["id"] = call_id
    first_in = [_text("system", SYSTEM), _text("user", QUESTION)]
    second_in = [*first_in, {"role": "assistant", "parts": [tool_call]}]
    second_in.append({"role": "tool", "parts": [result]})
    common = {"run_id": "run-1", "model": model, "request_model": model}
    return [
        RecordedCall(
            round=1,
            temperature=0.0,
            input_messages=first_in,
            output_messages=[{"role": "assistant", "parts": [tool_call]}],
            finish_reason="tool_calls",
            input_tokens=20,
            output_tokens=7,
            **common,
        ),
        RecordedCall(
            round=2,
            temperature=0.0,
            input_messages=second_in,
            output_messages=[_text("assistant", ANSWER)],
            finish_reason="stop",
            input_tokens=30,
            output_tokens=5,
            **common,
        ),
    ]


# ---------------------------------------------------------------------- the requests
def gemini_request(second: bool) -> dict[str, Any]:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": QUESTION}]}]
    if second:
        call = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}
        response = {"name": "get_weather", "response": {"result": RESULT}}
        contents += [
            {"role": "model", "parts": [call]},
            {"role": "user", "parts": [{"functionResponse": response}]},
        ]
    return {
        "contents": contents,
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "tools": [
            {"functionDeclarations": [{"name": "get_weather", "description": "Current weather."}]}
        ],
        "generationConfig": {"temperature": 0},
    }


def bedrock_request(second: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": QUESTION}]}]
    if second:
        use = {"toolUseId": "call_1", "name": "get_weather", "input": {"city": "Paris"}}
        result = {"toolUseId": "call_1", "content": [{"text": RESULT}], "status": "success"}
        messages += [
            {"role": "assistant", "content": [{"toolUse": use}]},
            {"role": "user", "content": [{"toolResult": result}]},
        ]
    spec = {"name": "get_weather", "description": "Current weather.", "inputSchema": {"json": {}}}
    return {
        "messages": messages,
        "system": [{"text": SYSTEM}],
        "toolConfig": {"tools": [{"toolSpec": spec}]},
        "inferenceConfig": {"temperature": 0},
    }


def cohere_request(second: bool, stream: bool = False) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
    ]
    if second:
        call = {"id": "call_1", "type": "function"}
        call["function"] = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
        document = {"type": "document", "document": {"data": RESULT}}
        messages += [
            {"role": "assistant", "tool_plan": "I will look it up.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": [document]},
        ]
    tool = {"type": "function", "function": {"name": "get_weather", "description": "x"}}
    return {
        "model": "command-r-plus",
        "messages": messages,
        "tools": [tool],
        "temperature": 0,
        "stream": stream,
    }


# ---------------------------------------------------------------------- the API detection
def test_endpoints_of_the_new_apis() -> None:
    gemini = endpoint("POST", f"{NOWHERE}/v1beta/models/gemini-2.0-flash:generateContent")
    assert gemini == Endpoint("gemini", "gemini-2.0-flash", stream=False, sse=False)
    streamed = endpoint("POST", "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse")
    assert streamed == Endpoint("gemini", "gemini-2.0-flash", stream=True, sse=True)
    vertex = "/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-pro:generateContent"
    assert endpoint("POST", vertex) == Endpoint("gemini", "gemini-2.5-pro")
    quoted = "/model/us.anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream"
    assert endpoint("POST", quoted) == Endpoint(
        "bedrock", "us.anthropic.claude-3-5-haiku-20241022-v1:0", stream=True
    )
    arn = "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fm/converse"
    assert endpoint("POST", arn) == Endpoint(
        "bedrock", "arn:aws:bedrock:us-east-1:1:inference-profile/m"
    )
    assert endpoint("POST", "https://api.cohere.com/v2/chat") == Endpoint("cohere")
    assert endpoint("POST", "/v1beta/models/gemini-2.0-flash:countTokens") is None
    assert token_count("POST", "/v1beta/models/gemini-2.0-flash:countTokens") == "gemini"
    assert token_count("POST", "https://api.anthropic.com/v1/messages/count_tokens") == "anthropic"
    assert token_count("POST", "/v1/responses/input_tokens") == "responses"
    assert token_count("POST", "/v1/messages") is None
    assert endpoint("POST", "/v1/messages/count_tokens") is None
    assert endpoint("GET", "/model/m/converse") is None
    assert endpoint("POST", "/model/m/invoke") is None
    assert endpoint("POST", "/v1/chat/completions?x=1") == Endpoint("chat")


# ---------------------------------------------------------------------- parse_request
@pytest.mark.parametrize(
    "api, request_of, model",
    [
        ("gemini", gemini_request, "gemini-2.0-flash"),
        ("bedrock", bedrock_request, BEDROCK_MODEL),
        ("cohere", cohere_request, "command-r-plus"),
    ],
)
def test_parse_request_reads_the_conversation_as_recorded(
    api: str, request_of: Any, model: str
) -> None:
    where = Endpoint(api, "" if api == "cohere" else model)
    for second, call in zip((False, True), recording(model)):
        request = parse_request(where, request_of(second))
        assert request.lines == recorded_lines(call.input_messages)
        assert request.model == model
        assert request.temperature == 0.0
        assert [name for name, _ in request.tools] == ["get_weather"]
    gemini = parse_request(Endpoint("gemini", "g"), {"contents": [{"parts": [{"text": "hi"}]}]})
    assert gemini.lines == [("user", "hi")] and gemini.temperature is None


def test_parse_request_of_gemini_skips_thoughts_and_names_blobs() -> None:
    body = {
        "contents": [
            {
                "role": "user",
                "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": ""}}],
            },
            {"role": "model", "parts": [{"text": "hmm", "thought": True}, {"text": "A cat."}]},
        ]
    }
    assert parse_request(Endpoint("gemini"), body).lines == [
        ("user", "look\n[image]"),
        ("assistant", "A cat."),
    ]


def test_parse_request_of_bedrock_reads_json_tool_results() -> None:
    result = {"toolUseId": "t", "content": [{"json": {"temp": 12}}], "status": "success"}
    body = {"messages": [{"role": "user", "content": [{"toolResult": result}]}]}
    assert parse_request("bedrock", body).lines == [("result", '{"temp":12}')]


# ---------------------------------------------------------------------- sent_results
def test_sent_results_of_the_new_apis() -> None:
    assert results_per_tool("gemini", gemini_request(True)) == {"get_weather": 1}
    assert results_per_tool("bedrock", bedrock_request(True)) == {"get_weather": 1}
    assert results_per_tool("cohere", cohere_request(True)) == {"get_weather": 1}
    # no ids: a result is the oldest waiting call's of its own tool
    calls = [{"functionCall": {"name": n, "args": {}}} for n in ("a", "b")]
    body = {
        "contents": [
            {"role": "model", "parts": calls},
            {"role": "user", "parts": [{"functionResponse": {"name": "b", "response": {}}}]},
        ]
    }
    assert results_per_tool("gemini", body) == {"b": 1}
    assert results_per_tool("gemini", gemini_request(False)) == {}


# ---------------------------------------------------------------------- stream decoders
def sse_events(data: bytes) -> list[Any]:
    """The ``data:`` payloads, the stream split into lines as httpx's ``iter_lines`` does
    (``str.splitlines``: U+2028 and U+0085 break a line too)."""
    return [
        json.loads(line[len("data: ") :])
        for line in data.decode().splitlines()
        if line.startswith("data: ")
    ]


def eventstream_frames(data: bytes) -> list[tuple[dict[str, str], Any]]:
    """Decode ``application/vnd.amazon.eventstream`` messages (checking both CRCs)."""
    frames = []
    while data:
        total, headers_length = struct.unpack(">II", data[:8])
        (prelude_crc,) = struct.unpack(">I", data[8:12])
        assert prelude_crc == zlib.crc32(data[:8])
        message = data[:total]
        (message_crc,) = struct.unpack(">I", message[-4:])
        assert message_crc == zlib.crc32(message[:-4])
        raw, headers = message[12 : 12 + headers_length], {}
        while raw:
            n = raw[0]
            name = raw[1 : 1 + n].decode()
            assert raw[1 + n] == 7  # a string
            (length,) = struct.unpack(">H", raw[2 + n : 4 + n])
            headers[name] = raw[4 + n : 4 + n + length].decode()
            raw = raw[4 + n + length :]
        frames.append((headers, json.loads(message[12 + headers_length : -4])))
        data = data[total:]
    return frames


def from_gemini(chunks: list[dict[str, Any]]) -> tuple[str, list[tuple[str, Any]], str]:
    text, calls, finish = "", [], ""
    for chunk in chunks:
        candidate = chunk["candidates"][0]
        finish = candidate.get("finishReason") or finish
        for part in candidate["content"]["parts"]:
            text += part.get("text", "")
            if "functionCall" in part:
                calls.append((part["functionCall"]["name"], part["functionCall"]["args"]))
    return text, calls, finish


def from_bedrock(data: bytes) -> tuple[str, list[tuple[str, Any]], str]:
    text, calls, inputs, stop = "", [], {}, ""
    for headers, payload in eventstream_frames(data):
        assert headers[":message-type"] == "event"
        assert headers[":content-type"] == "application/json"
        event = headers[":event-type"]
        if event == "contentBlockStart":
            use = payload["start"]["toolUse"]
            calls.append([use["name"], payload["contentBlockIndex"]])
        elif event == "contentBlockDelta":
            delta, index = payload["delta"], payload["contentBlockIndex"]
            text += delta.get("text", "")
            if "toolUse" in delta:
                inputs[index] = inputs.get(index, "") + delta["toolUse"]["input"]
        elif event == "messageStop":
            stop = payload["stopReason"]
    return text, [(name, json.loads(inputs[i])) for name, i in calls], stop


def from_cohere(data: bytes) -> tuple[str, list[tuple[str, Any]], str]:
    text, calls, finish = "", [], ""
    for event in sse_events(data):
        message = (event.get("delta") or {}).get("message") or {}
        if event["type"] == "content-delta":
            text += message["content"]["text"]
        elif event["type"] == "tool-call-start":
            calls.append([message["tool_calls"]["function"]["name"], ""])
        elif event["type"] == "tool-call-delta":
            calls[-1][1] += message["tool_calls"]["function"]["arguments"]
        elif event["type"] == "message-end":
            finish = event["delta"]["finish_reason"]
    return text, [(name, json.loads(arguments)) for name, arguments in calls], finish


_names = st.text("abcdefghij_", min_size=1, max_size=8)
_arguments = st.dictionaries(_names, st.one_of(st.integers(), st.text(max_size=30)), max_size=3)
_answers = st.builds(
    lambda text, calls, finish: Answer(
        text=text,
        tool_calls=[
            {"id": f"call_{i}", "name": name, "arguments": json.dumps(arguments)}
            for i, (name, arguments) in enumerate(calls)
        ],
        finish="tool_calls" if calls else finish,
        input_tokens=3,
        output_tokens=4,
    ),
    st.text(max_size=80),
    st.lists(st.tuples(_names, _arguments), max_size=3),
    st.sampled_from(["stop", "length"]),
)


@settings(max_examples=60, deadline=None)
@given(_answers)
def test_every_answer_round_trips_through_the_stream_encoders(a: Answer) -> None:
    calls = [(c["name"], json.loads(c["arguments"])) for c in a.tool_calls]
    text, got_calls, finish = from_gemini(gemini_chunks(a, "g"))
    assert (text, got_calls) == (a.text, calls)
    assert finish == {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP"}[a.finish]
    text, got_calls, stop = from_bedrock(bedrock_stream(a))
    assert (text, got_calls) == (a.text, calls)
    assert stop == {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}[a.finish]
    text, got_calls, finish = from_cohere(cohere_stream(a))
    assert (text, got_calls) == (a.text, calls)
    assert (
        finish == {"stop": "COMPLETE", "length": "MAX_TOKENS", "tool_calls": "TOOL_CALL"}[a.finish]
    )


def test_gemini_stream_without_sse_is_a_json_array() -> None:
    call = recording("gemini-2.0-flash", call_id=None)[0]
    where = Endpoint("gemini", "gemini-2.0-flash", stream=True, sse=False)
    data, ctype = recorded_response(where, call, 1, gemini_request(False))
    assert ctype == "application/json"
    text, calls, _ = from_gemini(json.loads(data))
    assert calls == [("get_weather", {"city": "Paris"})]
    # a call recorded without an id is sent without one
    assert "id" not in json.loads(data)[0]["candidates"][0]["content"]["parts"][0]["functionCall"]


# ---------------------------------------------------------------------- requests (urllib3)
def test_requests_to_bedrock_are_answered_from_the_recording() -> None:
    """requests goes through urllib3: Converse as JSON, ConverseStream as eventstream frames
    read in pieces; another request is refused, and an LLM call of another context too."""
    llm = RecordedLlm(recording(BEDROCK_MODEL))
    url = f"{NOWHERE}/model/{BEDROCK_MODEL.replace(':', '%3A')}"
    with answering(llm):
        first = requests.post(f"{url}/converse", json=bedrock_request(False), timeout=5)
        assert first.status_code == 200 and first.headers["x-tracereplay"] == "recorded"
        body = first.json()
        assert body["stopReason"] == "tool_use"
        use = body["output"]["message"]["content"][0]["toolUse"]
        assert (use["toolUseId"], use["name"], use["input"]) == (
            "call_1",
            "get_weather",
            {"city": "Paris"},
        )
        second = requests.post(
            f"{url}/converse-stream", json=bedrock_request(True), stream=True, timeout=5
        )
        assert second.headers["content-type"] == "application/vnd.amazon.eventstream"
        data = b"".join(second.iter_content(7))
        assert from_bedrock(data) == (ANSWER, [], "end_turn")
        with pytest.raises(OfflineRequestError, match="GET http://127.0.0.1:9/weather"):
            requests.get(f"{NOWHERE}/weather", timeout=5)
    report = llm.report()
    assert report.answered == 2 and report.drift == [] and report.errors[0].startswith("the agent")


def test_requests_without_a_replay_context_are_sent() -> None:
    with pytest.raises(requests.ConnectionError):
        requests.post(f"{NOWHERE}/v2/chat", json=cohere_request(False), timeout=5)


def test_live_tools_let_other_requests_through_urllib3() -> None:
    live_tools = RecordedLlm(recording("m"), live_tools=True)
    with answering(live_tools), pytest.raises(requests.ConnectionError):
        requests.get(f"{NOWHERE}/weather", timeout=5)


def test_a_request_of_a_thread_without_the_context_is_refused_through_urllib3() -> None:
    errors: list[Exception] = []

    def stray() -> None:
        try:
            requests.post(f"{NOWHERE}/model/m/converse", json=bedrock_request(False), timeout=5)
        except Exception as error:
            errors.append(error)

    with answering(RecordedLlm(recording("m"))):
        thread = threading.Thread(target=stray)
        thread.start()
        thread.join()
    assert isinstance(errors[0], OfflineRequestError)
    assert "outside the replay's context" in str(errors[0])


def test_past_the_fork_urllib3_requests_are_sent() -> None:
    """``--llm-until 1``: the first call is answered, the second one sent (nothing listens)."""
    llm = RecordedLlm(recording(BEDROCK_MODEL), until=1)
    url = f"{NOWHERE}/model/{BEDROCK_MODEL}"
    with answering(llm):
        assert requests.post(f"{url}/converse", json=bedrock_request(False), timeout=5).ok
        with pytest.raises(requests.ConnectionError):
            requests.post(f"{url}/converse", json=bedrock_request(True), timeout=5)
    report = llm.report()
    assert (report.answered, report.live, report.drift) == (1, [2], [])


def test_bedrock_failure_is_a_typed_aws_error() -> None:
    call = recording(BEDROCK_MODEL)[0]
    call.error, call.error_status = "ThrottlingException: slow down", 429
    with answering(RecordedLlm([call])):
        reply = requests.post(f"{NOWHERE}/model/m/converse", json=bedrock_request(False), timeout=5)
    assert reply.status_code == 429
    assert reply.headers["x-amzn-errortype"] == "ThrottlingException"
    assert reply.json() == {"message": "slow down"}


# ---------------------------------------------------------------------- Cohere over httpx
def test_cohere_v2_chat_is_answered_over_httpx() -> None:
    llm = RecordedLlm(recording("command-r-plus"))

    async def agent() -> tuple[dict[str, Any], bytes]:
        async with httpx.AsyncClient(base_url=NOWHERE) as client:
            first = await client.post("/v2/chat", json=cohere_request(False))
            second = await client.post("/v2/chat", json=cohere_request(True, stream=True))
            return first.json(), second.content

    with answering(llm):
        body, stream = asyncio.run(agent())
    assert body["finish_reason"] == "TOOL_CALL"
    call = body["message"]["tool_calls"][0]
    assert (call["id"], call["function"]["name"]) == ("call_1", "get_weather")
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert from_cohere(stream) == (ANSWER, [], "COMPLETE")
    assert llm.report().drift == [] and llm.report().answered == 2


# ---------------------------------------------------------------------- the SDKs, in their venvs
def run_in_venv(venv: str, script: str, calls: list[RecordedCall], make: str) -> Any:
    """Run ``script`` with ``.venvs/<venv>``'s python; it finds ``RECORDED`` (the recorded
    calls) and ``NOWHERE`` defined, and prints its result as JSON on its last line."""
    python = ROOT / ".venvs" / venv / "bin" / "python"
    if not python.exists():
        pytest.skip(f".venvs/{venv} is absent: make {make}")
    preamble = textwrap.dedent(
        f"""
        import asyncio, json, sys
        from tracereplay.replay.answering.llm import RecordedCall, RecordedLlm, answering
        NOWHERE = {NOWHERE!r}
        SYSTEM, QUESTION, ANSWER, RESULT = {SYSTEM!r}, {QUESTION!r}, {ANSWER!r}, {RESULT!r}
        RECORDED = [RecordedCall(**c) for c in json.loads(sys.argv[1])]

        def report(llm):
            r = llm.report()
            return {{"answered": r.answered, "drift": [d.differences for d in r.drift],
                     "errors": r.errors}}
        """
    )
    recorded = json.dumps([asdict(c) for c in calls])
    done = subprocess.run(
        [str(python), "-c", preamble + textwrap.dedent(script), recorded],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


GENAI_AGENT = """
from google import genai
from google.genai import types

client = genai.Client(api_key="x", http_options=types.HttpOptions(
    base_url=NOWHERE, retry_options=types.HttpRetryOptions(attempts=1)))
tool = types.Tool(function_declarations=[types.FunctionDeclaration(
    name="get_weather", description="Current weather.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}})])
config = types.GenerateContentConfig(
    system_instruction=SYSTEM, tools=[tool], temperature=0,
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
MODEL = "gemini-2.0-flash"

def ask(contents, stream, aio):
    if not stream and not aio:
        r = client.models.generate_content(model=MODEL, contents=contents, config=config)
        return [r]
    if stream and not aio:
        return list(client.models.generate_content_stream(model=MODEL, contents=contents,
                                                          config=config))
    async def go():
        if not stream:
            return [await client.aio.models.generate_content(
                model=MODEL, contents=contents, config=config)]
        chunks = await client.aio.models.generate_content_stream(
            model=MODEL, contents=contents, config=config)
        return [c async for c in chunks]
    return asyncio.run(go())

def agent(stream, aio):
    contents = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]
    out = []
    for _ in range(3):
        chunks = ask(contents, stream, aio)
        text = "".join(c.text or "" for c in chunks)
        calls = [fc for c in chunks for fc in (c.function_calls or [])]
        finish = chunks[-1].candidates[0].finish_reason.name
        usage = chunks[-1].usage_metadata.total_token_count
        out.append({"text": text, "calls": [[fc.name, fc.args] for fc in calls],
                    "finish": finish, "usage": usage})
        if not calls:
            return out
        contents.append(types.Content(role="model", parts=[
            types.Part(function_call=fc) for fc in calls]))
        contents.append(types.Content(role="user", parts=[
            types.Part.from_function_response(name=fc.name, response={"result": RESULT})
            for fc in calls]))
    return out

results = {}
for stream in (False, True):
    for aio in (False, True):
        llm = RecordedLlm(RECORDED)
        with answering(llm):
            rounds = agent(stream, aio)
        results[f"{stream}-{aio}"] = {"rounds": rounds, "report": report(llm)}
results["aiohttp"] = client._api_client._use_aiohttp()  # the async client's transport
print(json.dumps(results))
"""


@pytest.mark.parametrize("venv", ["plain_google_genai", "google_adk"])
def test_google_genai_is_answered_from_the_recording(venv: str) -> None:
    """google-genai, sync and async, streamed and not: a tool call, then the text. Its sync
    client is on httpx; its async one on httpx too, or on aiohttp where aiohttp is installed
    (``.venvs/google_adk``)."""
    results = run_in_venv(
        venv,
        GENAI_AGENT,
        recording("gemini-2.0-flash", call_id=None),
        "frameworks",
    )
    assert results.pop("aiohttp") is (venv == "google_adk")
    assert len(results) == 4
    for key, result in results.items():
        first, second = result["rounds"]
        assert first["calls"] == [["get_weather", {"city": "Paris"}]], key
        assert first["finish"] == "STOP" and first["usage"] == 27, key
        assert (second["text"], second["calls"], second["finish"]) == (ANSWER, [], "STOP"), key
        assert result["report"] == {"answered": 2, "drift": [], "errors": []}, key


BEDROCK_AGENT = """
import boto3
from botocore.config import Config
from botocore.eventstream import EventStreamBuffer
from tracereplay.replay.answering.llm.wire import Answer, bedrock_stream

client = boto3.client(
    "bedrock-runtime", region_name="us-east-1", endpoint_url=NOWHERE,
    aws_access_key_id="x", aws_secret_access_key="x",
    config=Config(retries={"max_attempts": 1}))
MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
SPEC = {"name": "get_weather", "description": "Current weather.",
        "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}}}

def ask(messages, stream):
    kwargs = dict(modelId=MODEL, messages=messages, system=[{"text": SYSTEM}],
                  toolConfig={"tools": [{"toolSpec": SPEC}]},
                  inferenceConfig={"temperature": 0})
    if not stream:
        r = client.converse(**kwargs)
        return r["output"]["message"]["content"], r["stopReason"], r["usage"]["totalTokens"]
    content, stop, usage = [], None, None
    for event in client.converse_stream(**kwargs)["stream"]:
        if "contentBlockStart" in event:
            use = event["contentBlockStart"]["start"]["toolUse"]
            content.append({"toolUse": dict(use, input="")})
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]["delta"]
            if "text" in delta:
                if not content or "text" not in content[-1]:
                    content.append({"text": ""})
                content[-1]["text"] += delta["text"]
            else:
                content[-1]["toolUse"]["input"] += delta["toolUse"]["input"]
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            usage = event["metadata"]["usage"]["totalTokens"]
    for block in content:
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"])
    return content, stop, usage

def agent(stream):
    messages = [{"role": "user", "content": [{"text": QUESTION}]}]
    out = []
    for _ in range(3):
        content, stop, usage = ask(messages, stream)
        uses = [b["toolUse"] for b in content if "toolUse" in b]
        out.append({"text": "".join(b.get("text", "") for b in content),
                    "calls": [[u["toolUseId"], u["name"], u["input"]] for u in uses],
                    "stop": stop, "usage": usage})
        if not uses:
            return out
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": [
            {"toolResult": {"toolUseId": u["toolUseId"], "content": [{"text": RESULT}],
                            "status": "success"}} for u in uses]})
    return out

results = {}
for stream in (False, True):
    llm = RecordedLlm(RECORDED)
    with answering(llm):
        rounds = agent(stream)
    results[str(stream)] = {"rounds": rounds, "report": report(llm)}

# a failure the recording holds: botocore raises the typed error
failing = RecordedCall(**{**RECORDED[0].__dict__, "error": "ValidationException: bad input",
                          "error_status": 400})
with answering(RecordedLlm([failing])):
    try:
        client.converse(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "x"}]}])
    except client.exceptions.ValidationException as error:
        results["error"] = [error.response["Error"]["Code"], error.response["Error"]["Message"]]

# botocore's own decoder reads the frames of any answer
buffer = EventStreamBuffer()
buffer.add_data(bedrock_stream(Answer(text="hé" * 40, tool_calls=[
    {"id": "t1", "name": "f", "arguments": '{"a": [1, 2]}'}], finish="tool_calls")))
results["frames"] = [[m.headers[":event-type"], json.loads(m.payload)] for m in buffer]
print(json.dumps(results))
"""


def test_boto3_bedrock_is_answered_from_the_recording() -> None:
    """boto3 (urllib3): Converse and ConverseStream, a tool call then the text; a recorded
    failure is botocore's typed error; botocore's decoder reads the eventstream frames."""
    results = run_in_venv(
        "plain_bedrock",
        BEDROCK_AGENT,
        recording(BEDROCK_MODEL, call_id="tooluse_1"),
        ".venvs/plain_bedrock/.installed-stamp (plain_bedrock in FRAMEWORKS)",
    )
    for key in ("False", "True"):
        first, second = results[key]["rounds"]
        assert first["calls"] == [["tooluse_1", "get_weather", {"city": "Paris"}]], key
        assert (first["stop"], first["usage"]) == ("tool_use", 27), key
        assert (second["text"], second["calls"], second["stop"]) == (ANSWER, [], "end_turn")
        assert results[key]["report"] == {"answered": 2, "drift": [], "errors": []}, key
    assert results["error"] == ["ValidationException", "bad input"]
    events = [name for name, _ in results["frames"]]
    assert events[0] == "messageStart" and events[-2:] == ["messageStop", "metadata"]
    deltas = [p["delta"] for name, p in results["frames"] if name == "contentBlockDelta"]
    assert "".join(d.get("text", "") for d in deltas) == "hé" * 40
    assert [json.loads(d["toolUse"]["input"]) for d in deltas if "toolUse" in d] == [{"a": [1, 2]}]


AIOHTTP_AGENT = """
import aiohttp
from tracereplay.replay.answering.llm import OfflineRequestError

GEMINI = NOWHERE + "/v1beta/models/gemini-2.0-flash"
BODY = {"contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "generationConfig": {"temperature": 0}}

async def agent():
    out = {}
    async with aiohttp.ClientSession() as session:
        async with session.post(GEMINI + ":generateContent", json=BODY) as r:
            out["json"] = [r.status, r.headers["content-type"], await r.json()]
        second = dict(BODY, contents=BODY["contents"] + [
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather",
                                                          "args": {"city": "Paris"}}}]},
            {"role": "user", "parts": [{"functionResponse": {
                "name": "get_weather", "response": {"result": RESULT}}}]}])
        r = await session.post(GEMINI + ":streamGenerateContent", params={"alt": "sse"},
                               data=json.dumps(second))
        out["lines"] = [line.decode() async for line in r.content]
        r.release()
        try:
            await session.get(NOWHERE + "/weather")
        except OfflineRequestError as error:
            out["refused"] = str(error)
    return out

llm = RecordedLlm(RECORDED)
with answering(llm):
    out = asyncio.run(agent())
out["report"] = report(llm)
print(json.dumps(out))
"""


def test_aiohttp_is_answered_from_the_recording() -> None:
    """A raw aiohttp session: Gemini as JSON and as a server-sent event stream read line by
    line; another request is refused."""
    out = run_in_venv(
        "dspy", AIOHTTP_AGENT, recording("gemini-2.0-flash", call_id=None), "frameworks"
    )
    status, ctype, body = out["json"]
    assert (status, ctype) == (200, "application/json")
    assert from_gemini([body])[1] == [("get_weather", {"city": "Paris"})]
    chunks = [
        json.loads(line[len("data: ") :]) for line in out["lines"] if line.startswith("data:")
    ]
    assert from_gemini(chunks) == (ANSWER, [], "STOP")
    assert "GET http://127.0.0.1:9/weather" in out["refused"]
    assert out["report"]["answered"] == 2 and out["report"]["drift"] == []
