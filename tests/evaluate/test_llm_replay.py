"""Offline replay (``--llm recorded``): LLM requests answered from the recording at the HTTP
layer, through the real OpenAI client (sync, async, streamed; Chat Completions and Responses)
and raw httpx for the Anthropic Messages API. Nothing listens at the base URL: a request that
reached the network would fail to connect."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracereplay.replay.answering.llm import (
    OfflineRequestError,
    RecordedCall,
    RecordedLlm,
    answering,
    live_llm,
    llm_error_reason,
)
from tracereplay.replay.answering.llm.canonical import (
    anthropic_lines,
    chat_lines,
    recorded_lines,
    responses_lines,
    same_model,
)
from tracereplay.replay.answering.llm.recording import provider_message, request_of

NOWHERE = "http://127.0.0.1:9/v1"  # the discard port: nothing answers there
SYSTEM = "You answer weather questions."
QUESTION = "Weather in Paris?"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


ROUND1_IN = [_text("system", SYSTEM), _text("user", QUESTION)]
TOOL_CALL = {
    "type": "tool_call",
    "id": "call_1",
    "name": "get_weather",
    "arguments": {"city": "Paris"},
}
ROUND2_IN = [
    *ROUND1_IN,
    {"role": "assistant", "parts": [TOOL_CALL]},
    {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_1", "response": "12 °C"}],
    },
]
ANSWER = "Paris is 12 °C."


def recording(**first: Any) -> list[RecordedCall]:
    """Two recorded rounds: a tool call, then the answer."""
    return [
        RecordedCall(
            run_id="run-1",
            round=1,
            model="gpt-4o-mini-2024-07-18",
            request_model="gpt-4o-mini",
            temperature=0.0,
            tools=None,
            input_messages=ROUND1_IN,
            output_messages=[{"role": "assistant", "parts": [TOOL_CALL]}],
            finish_reason="tool_calls",
            input_tokens=20,
            output_tokens=7,
            **first,
        ),
        RecordedCall(
            run_id="run-1",
            round=2,
            model="gpt-4o-mini-2024-07-18",
            request_model="gpt-4o-mini",
            input_messages=ROUND2_IN,
            output_messages=[{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}],
            finish_reason="stop",
            input_tokens=30,
            output_tokens=5,
        ),
    ]


def chat_agent(client: openai.OpenAI, stream: bool = False, system: str = SYSTEM) -> str:
    """A two-round tool loop on the Chat Completions API."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": QUESTION},
    ]
    for _ in range(3):
        if stream:
            text, calls = "", {}
            with client.chat.completions.create(
                model="gpt-4o-mini",
                messages=messages,
                tools=TOOLS,
                temperature=0,
                stream=True,
                stream_options={"include_usage": True},
            ) as events:
                for chunk in events:
                    for choice in chunk.choices:
                        text += choice.delta.content or ""
                        for tc in choice.delta.tool_calls or []:
                            slot = calls.setdefault(tc.index, {"id": "", "name": "", "args": ""})
                            slot["id"] = tc.id or slot["id"]
                            slot["name"] = (tc.function.name or "") or slot["name"]
                            slot["args"] += tc.function.arguments or ""
            tool_calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["args"]},
                }
                for c in calls.values()
            ]
        else:
            completion = client.chat.completions.create(
                model="gpt-4o-mini", messages=messages, tools=TOOLS, temperature=0
            )
            message = completion.choices[0].message
            text = message.content or ""
            tool_calls = [tc.model_dump() for tc in message.tool_calls or []]
        if not tool_calls:
            return text
        messages.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
        for tc in tool_calls:
            assert json.loads(tc["function"]["arguments"]) == {"city": "Paris"}
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": "12 °C"})
    raise AssertionError("no answer")


@pytest.mark.parametrize("stream", [False, True])
def test_openai_chat_sync_is_answered_from_the_recording(stream: bool) -> None:
    llm = RecordedLlm(recording())
    client = openai.OpenAI(base_url=NOWHERE, api_key="unused", max_retries=0)
    with answering(llm):
        assert chat_agent(client, stream=stream) == ANSWER
    report = llm.report()
    assert report.answered == 2 and report.errors == [] and report.drift == []
    assert report.unused == [] and report.unchecked == []


def test_openai_chat_async_streamed_and_usage() -> None:
    llm = RecordedLlm(recording())
    client = openai.AsyncOpenAI(base_url=NOWHERE, api_key="unused", max_retries=0)

    async def run() -> tuple[str, Any]:
        first = await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "system", "content": SYSTEM},
                                           {"role": "user", "content": QUESTION}],
            tools=TOOLS, temperature=0,
        )  # fmt: skip
        call = first.choices[0].message.tool_calls[0]
        stream = await client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "tool_calls": [call.model_dump()]},
                {"role": "tool", "tool_call_id": call.id, "content": "12 °C"},
            ],
            tools=TOOLS,
            stream=True,
        )
        text = ""
        async for chunk in stream:
            text += "".join(c.delta.content or "" for c in chunk.choices)
        return text, first

    with answering(llm):
        text, first = asyncio.run(run())
    assert text == ANSWER
    assert first.choices[0].finish_reason == "tool_calls"
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (20, 7)
    assert first.model == "gpt-4o-mini-2024-07-18"
    assert llm.report().drift == []


@pytest.mark.parametrize("stream", [False, True])
def test_openai_responses_api(stream: bool) -> None:
    llm = RecordedLlm(recording())
    client = openai.OpenAI(base_url=NOWHERE, api_key="unused", max_retries=0)
    tools = [
        {
            "type": "function",
            "name": "get_weather",
            "parameters": TOOLS[0]["function"]["parameters"],
        }
    ]
    with answering(llm):
        first = client.responses.create(
            model="gpt-4o-mini", instructions=SYSTEM, input=QUESTION, tools=tools, temperature=0
        )
        (call,) = [o for o in first.output if o.type == "function_call"]
        follow = [
            {"role": "user", "content": QUESTION},
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
            {"type": "function_call_output", "call_id": call.call_id, "output": "12 °C"},
        ]
        if stream:
            text = ""
            with client.responses.stream(
                model="gpt-4o-mini", instructions=SYSTEM, input=follow, tools=tools
            ) as events:
                for event in events:
                    if event.type == "response.output_text.delta":
                        text += event.delta
                final = events.get_final_response()
            assert text == ANSWER == final.output_text
        else:
            second = client.responses.create(
                model="gpt-4o-mini", instructions=SYSTEM, input=follow, tools=tools
            )
            assert second.output_text == ANSWER
            assert second.usage.input_tokens == 30
    report = llm.report()
    assert report.answered == 2 and report.drift == [] and report.errors == []


def _sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines.get("event", ""), json.loads(lines["data"])))
    return events


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_messages_api(stream: bool) -> None:
    llm = RecordedLlm(recording())
    body = {
        "model": "gpt-4o-mini",
        "system": SYSTEM,
        "max_tokens": 100,
        "temperature": 0,
        "messages": [{"role": "user", "content": QUESTION}],
        "stream": stream,
    }
    with answering(llm), httpx.Client() as client:
        first = client.post("http://127.0.0.1:9/v1/messages", json=body)
        if stream:
            events = _sse_events(first.text)
            assert [e for e, _ in events][0] == "message_start"
            (start,) = [d for e, d in events if e == "content_block_start"]
            assert start["content_block"]["type"] == "tool_use"
            delta = [d for e, d in events if e == "message_delta"][0]
            assert delta["delta"]["stop_reason"] == "tool_use"
            tool = {**start["content_block"], "input": {"city": "Paris"}}
        else:
            message = first.json()
            assert message["stop_reason"] == "tool_use"
            (tool,) = message["content"]
            assert tool["input"] == {"city": "Paris"}
        body["messages"] += [
            {"role": "assistant", "content": [tool]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool["id"], "content": "12 °C"}],
            },
        ]
        body["temperature"] = 0.0
        second = client.post("http://127.0.0.1:9/v1/messages", json={**body, "stream": False})
    assert second.json()["content"] == [{"type": "text", "text": ANSWER}]
    assert second.json()["stop_reason"] == "end_turn"
    assert llm.report().drift == []


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/messages/count_tokens", "input_tokens"),
        ("/v1/responses/input_tokens", "input_tokens"),
        ("/v1beta/models/gemini-2.0-flash:countTokens", "totalTokens"),
    ],
)
def test_a_token_count_is_estimated_offline_not_refused(path: str, field: str) -> None:
    """A provider's token-counting call (CrewAI's Anthropic provider asks one before each call)
    is no model turn and no recording holds it: answered with an estimate, one token per four
    bytes of its body; nothing counted as an LLM call or refused."""
    llm = RecordedLlm(recording())
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 400}]}
    with answering(llm), httpx.Client() as client:
        counted = client.post(f"http://127.0.0.1:9{path}", json=body)
    assert counted.status_code == 200
    assert 100 <= counted.json()[field] <= 120
    report = llm.report()
    assert (report.answered, report.errors) == (0, [])


def test_prompt_drift_is_reported_with_a_diff_and_answered_in_order() -> None:
    llm = RecordedLlm(recording())
    client = openai.OpenAI(base_url=NOWHERE, api_key="unused", max_retries=0)
    with answering(llm):
        assert chat_agent(client, system="You answer weather questions, briefly.") == ANSWER
    report = llm.report()
    assert [d.round for d in report.drift] == [1, 2]
    first = report.drift[0]
    assert first.fields == ["messages"] and first.answered
    assert "-system: You answer weather questions." in first.diff
    assert "+system: You answer weather questions, briefly." in first.diff
    assert llm_error_reason(report) is None


def test_strict_matching_makes_drift_an_error_naming_the_round() -> None:
    llm = RecordedLlm(recording(), "strict")
    client = openai.OpenAI(base_url=NOWHERE, api_key="unused", max_retries=0)
    with answering(llm), pytest.raises(openai.BadRequestError, match="LLM call 1: prompt drift"):
        client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "system", "content": SYSTEM},
                                      {"role": "user", "content": QUESTION}], temperature=0.7,
        )  # fmt: skip
    reason = llm_error_reason(llm.report())
    assert reason is not None and "--llm-match strict" in reason
    assert "model: recorded gpt-4o-mini, replay gpt-4o" in reason
    assert "temperature: recorded 0, replay 0.7" in llm.report().drift[0].differences


def test_more_calls_than_recorded_is_an_error_naming_the_round() -> None:
    llm = RecordedLlm(recording()[:1])
    client = openai.OpenAI(base_url=NOWHERE, api_key="unused", max_retries=0)
    with answering(llm), pytest.raises(openai.BadRequestError):
        chat_agent(client)
    assert llm_error_reason(llm.report()) == (
        "LLM call 2: the replay asked more LLM calls than were recorded (the source run made 1)"
    )


def test_a_recording_without_message_content_is_an_error_naming_what_is_missing() -> None:
    calls = recording()
    for c in calls:
        c.input_messages, c.output_messages = [], []
    llm = RecordedLlm(calls)
    client = openai.OpenAI(base_url=NOWHERE, api_key="unused", max_retries=0)
    with answering(llm), pytest.raises(openai.BadRequestError):
        chat_agent(client)
    reason = llm_error_reason(llm.report())
    assert reason is not None
    assert "LLM call 1" in reason and "no output messages" in reason
    assert "recorded without message content" in reason


def test_a_recorded_provider_failure_fails_the_same_way_without_retries() -> None:
    calls = recording()
    calls[1].output_messages = []
    calls[1].error = "InternalServerError: Error code: 503 - {'error': {'message': 'overloaded'}}"
    calls[1].error_status = 503
    llm = RecordedLlm(calls)
    client = openai.OpenAI(base_url=NOWHERE, api_key="unused", max_retries=2)
    with answering(llm), pytest.raises(openai.InternalServerError, match="overloaded") as err:
        chat_agent(client)
    assert err.value.status_code == 503
    assert llm.report().answered == 2 and llm.report().errors == []


def test_a_request_to_another_url_fails_loudly() -> None:
    llm = RecordedLlm(recording())
    with answering(llm), httpx.Client() as client, pytest.raises(OfflineRequestError):
        client.get("http://127.0.0.1:9/weather?city=Paris")
    assert "GET http://127.0.0.1:9/weather?city=Paris" in (llm_error_reason(llm.report()) or "")


def test_llm_requests_outside_the_replay_context_are_refused_while_it_runs() -> None:
    import threading

    llm = RecordedLlm(recording())
    caught: list[BaseException] = []

    def elsewhere() -> None:  # a thread that does not carry the replay's context
        try:
            httpx.post(f"{NOWHERE}/chat/completions", json={"messages": []})
        except BaseException as exc:
            caught.append(exc)

    with answering(llm):
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
        with live_llm(), pytest.raises(httpx.ConnectError):  # a judge may call for real
            httpx.post(f"{NOWHERE}/chat/completions", json={"messages": []}, timeout=2)
    assert len(caught) == 1 and isinstance(caught[0], OfflineRequestError)


def test_request_settings_are_read_from_each_instrumentation() -> None:
    assert request_of(
        {
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.request.temperature": 0.2,
            "gen_ai.tool.definitions": json.dumps([{"name": "a", "description": "A."}]),
        }
    )[:2] == ("gpt-4o", 0.2)
    model, temperature, tools = request_of(
        {
            "llm.invocation_parameters": json.dumps({"model": "m", "temperature": 0.5}),
            "llm.tools.0.tool.json_schema": json.dumps(TOOLS[0]),
        }
    )
    assert (model, temperature, [t.name for t in tools or []]) == ("m", 0.5, ["get_weather"])
    # OpenInference records the Responses API's response there for the Agents SDK
    assert (
        request_of({"llm.invocation_parameters": json.dumps({"id": "resp_1", "model": "x"})})[0]
        == ""
    )
    assert (
        provider_message("ModelServerError: status_code: 500, body: {'message': 'boom'}") == "boom"
    )
    assert same_model("openai/gpt-4o-mini", "gpt-4o-mini-2024-07-18")
    assert not same_model("gpt-4o", "gpt-4o-mini")


# ---------------------------------------------------------------------- one conversation, four forms
_texts = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=30
).filter(str.strip)
_turns = st.lists(
    st.one_of(
        st.tuples(st.just("user"), _texts),
        st.tuples(st.just("assistant"), _texts),
        st.tuples(
            st.just("call"), st.dictionaries(st.sampled_from("abc"), st.integers(), max_size=2)
        ),
    ),
    min_size=1,
    max_size=6,
)


@given(system=_texts, turns=_turns)
@settings(max_examples=60, deadline=None)
def test_every_api_and_the_recording_give_the_same_lines(system: str, turns: list[Any]) -> None:
    """A conversation written as Chat Completions, Responses, Anthropic and recorded GenAI
    messages compares equal (tool results wrapped as ``{"result": ...}`` too)."""
    chat: list[dict[str, Any]] = [{"role": "system", "content": system}]
    resp: list[dict[str, Any]] = []
    anth: list[dict[str, Any]] = []
    genai: list[dict[str, Any]] = [_text("system", system)]
    for i, (kind, value) in enumerate(turns):
        if kind == "call":
            args = json.dumps(value)
            chat += [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"c{i}",
                            "type": "function",
                            "function": {"name": "f", "arguments": args},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": f"c{i}", "content": f"out {i}"},
            ]
            resp += [
                {"type": "function_call", "call_id": f"c{i}", "name": "f", "arguments": args},
                {"type": "function_call_output", "call_id": f"c{i}", "output": f"out {i}"},
            ]
            anth += [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": f"c{i}", "name": "f", "input": value}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"c{i}",
                            "content": [{"type": "text", "text": f"out {i}"}],
                        }
                    ],
                },
            ]
            genai += [
                {
                    "role": "assistant",
                    "parts": [
                        {"type": "tool_call", "id": f"c{i}", "name": "f", "arguments": value}
                    ],
                },
                {
                    "role": "user",
                    "parts": [
                        {
                            "type": "tool_call_response",
                            "id": f"c{i}",
                            "response": {"result": f"out {i}"},
                        }
                    ],
                },
            ]
        else:
            chat.append({"role": kind, "content": value})
            resp.append(
                {
                    "role": kind,
                    "content": [
                        {"type": "input_text" if kind == "user" else "output_text", "text": value}
                    ],
                }
            )
            anth.append({"role": kind, "content": value})
            genai.append(_text(kind, value))
    expected = recorded_lines(genai)
    assert chat_lines({"messages": chat}) == expected
    assert responses_lines({"instructions": system, "input": resp}) == expected
    assert anthropic_lines({"system": system, "messages": anth}) == expected


def test_sdk_request_parameters_are_recorded_under_their_genai_names() -> None:
    from tracereplay.sdk.content import ContentPolicy, compile_redactor
    from tracereplay.sdk.llm_call import parameter_attributes

    policy = ContentPolicy(redact=compile_redactor([r"secret"]))
    attrs = parameter_attributes(
        {
            "temperature": 0.2,
            "max_tokens": 100,
            "stop": "secret!",
            "user": "secret-user",
            "n": None,
        },
        policy,
    )
    assert attrs["gen_ai.request.temperature"] == 0.2
    assert attrs["gen_ai.request.max_tokens"] == 100
    assert attrs["gen_ai.request.stop_sequences"] == ["[REDACTED]!"]
    assert json.loads(str(attrs["tracereplay.llm.request.parameters"])) == {
        "user": "[REDACTED]-user"
    }
    # what offline replay reads back from the span
    assert request_of(attrs)[1] == 0.2


def test_a_call_whose_recording_lacks_a_tool_is_answered_by_its_own_agents_call() -> None:
    """The recording left a tool out of what each call offered (smolagents' managed agents),
    and a nested agent's call was recorded between the two rounds: each request is answered
    by the call of its own agent (same system prompt), not the next one in order."""
    first, second = recording()
    first.tools = second.tools = []
    nested = RecordedCall(
        run_id="run-2",
        round=1,
        request_model="gpt-4o-mini",
        tools=[],
        input_messages=[_text("system", "You forecast."), _text("user", "Forecast?")],
        output_messages=[{"role": "assistant", "parts": [{"type": "text", "content": "Rain."}]}],
        nested=True,
    )
    llm = RecordedLlm([first, nested, second])
    client = openai.OpenAI(base_url=NOWHERE, api_key="unused", max_retries=0)
    with answering(llm):
        assert chat_agent(client) == ANSWER
    report = llm.report()
    assert [d.recorded_round for d in report.drift] == [1, 2]
    assert all(d.fields == ["tools"] and d.recorded_run_id == "run-1" for d in report.drift)


def test_smolagents_roles_are_compared_as_sent() -> None:
    recorded = recorded_lines(
        [
            _text("user", QUESTION),
            _text("tool-call", "Calling tools: get_weather"),
            _text("tool-response", "Observation: 12 °C"),
        ]
    )
    sent = chat_lines(
        {
            "messages": [
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": "Calling tools: get_weather"},
                {"role": "user", "content": "Observation: 12 °C"},
            ]
        }
    )
    assert recorded == sent


def _recorded_round(n: int, text: str) -> RecordedCall:
    return RecordedCall(
        run_id="r",
        round=n,
        model="m",
        request_model="m",
        input_messages=[_text("system", SYSTEM), _text("user", f"{QUESTION} {n}")],
        output_messages=[_text("assistant", text)],
    )


def test_a_fork_answers_n_calls_then_lets_the_rest_through_compared() -> None:
    llm = RecordedLlm([_recorded_round(i, f"answer {i}") for i in (1, 2, 3)], until=1)
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{QUESTION} 1"},
        ],
    }
    assert not llm.goes_live("chat", body) and not llm.forked()
    assert llm.answer("chat", body)[0] == 200
    assert not llm.forked()  # round 1's tool calls still come from the recording
    later = {**body, "model": "other"}
    assert llm.goes_live("chat", later) and llm.forked()
    report = llm.report()
    assert report.fork_round == 1 and report.live == [2] and report.answered == 1
    assert report.unused == [] and report.errors == []  # calls past the fork are not owed
    [drift] = report.drift
    assert drift.live and not drift.answered and drift.round == 2
    assert set(drift.fields) == {"messages", "model"}


def test_the_live_part_of_a_fork_is_compared_with_the_tool_call_ids_masked() -> None:
    """Past the fork the live model names its tool calls itself; a framework that writes the
    call into the next request's text (smolagents) differs from the recording by the id only:
    no prompt drift. Any other difference of that text still is."""

    def call_text(call_id: str, city: str) -> str:
        return f"Calling tools: [{{'id': '{call_id}', 'name': 'get_weather', 'city': '{city}'}}]"

    def recorded(n: int, history: list[dict]) -> RecordedCall:
        asked = {"role": "assistant", "parts": [
            {"type": "tool_call", "id": f"call_000{n}", "name": "get_weather", "arguments": {}}
        ]}  # fmt: skip
        return RecordedCall(
            run_id="r", round=n, model="m", request_model="m",
            input_messages=[_text("user", QUESTION), *history], output_messages=[asked],
        )  # fmt: skip

    history = [_text("assistant", call_text("call_0001", "Paris")), _text("user", "12 °C")]
    calls = [recorded(1, []), recorded(2, history)]

    def live_request(call_id: str, city: str) -> dict:
        return {"model": "m", "messages": [
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": call_text(call_id, city)},
            {"role": "user", "content": "12 °C"},
        ]}  # fmt: skip

    llm = RecordedLlm(calls, until=1)
    llm.answer("chat", {"model": "m", "messages": [{"role": "user", "content": QUESTION}]})
    assert llm.goes_live("chat", live_request("call_9001", "Paris"))
    assert llm.report().drift == []
    llm = RecordedLlm(calls, until=1)
    llm.answer("chat", {"model": "m", "messages": [{"role": "user", "content": QUESTION}]})
    assert llm.goes_live("chat", live_request("call_9001", "Rome"))
    [drift] = llm.report().drift
    assert drift.live and "Rome" in drift.diff


def test_no_fork_never_goes_live() -> None:
    llm = RecordedLlm([_recorded_round(1, "a")])
    assert not llm.goes_live("chat", {"model": "m", "messages": []}) and not llm.forked()
    assert llm.report().fork_round is None and llm.report().live == []
