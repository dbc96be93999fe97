"""Rules of the LLM recording an offline replay answers from, on what instrumentations leave out:
an assistant tool-call message missing from a request's history (OpenLIT), a default
temperature recorded though the request set none (OpenLIT)."""

from __future__ import annotations

from tracereplay.replay.answering.llm import RecordedLlm
from tracereplay.replay.answering.llm.recording import RecordedCall, restore_tool_requests

SYSTEM = {"role": "system", "parts": [{"type": "text", "content": "be brief"}]}
USER = {"role": "user", "parts": [{"type": "text", "content": "weather in Oslo?"}]}
ASK = {
    "role": "assistant",
    "parts": [{"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}],
    "finish_reason": "tool_call",
}  # fmt: skip
RESULT = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "6°C"}]}
ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": "Oslo is 6°C."}]}


def _call(n: int, inputs: list, outputs: list, temperature: float | None = None) -> RecordedCall:
    return RecordedCall(
        run_id="r",
        round=n,
        model="gpt-4o-mini",
        request_model="gpt-4o-mini",
        temperature=temperature,
        input_messages=inputs,
        output_messages=outputs,
    )


def test_a_tool_result_gets_back_the_assistant_message_that_asked_for_it() -> None:
    calls = [_call(1, [SYSTEM, USER], [ASK]), _call(2, [SYSTEM, USER, RESULT], [ANSWER])]
    restore_tool_requests(calls)
    assert calls[0].input_messages == [SYSTEM, USER]
    assert calls[1].input_messages == [
        SYSTEM,
        USER,
        {"role": "assistant", "parts": ASK["parts"]},
        RESULT,
    ]


def test_a_history_that_holds_its_tool_calls_is_left_as_it_is() -> None:
    full = [SYSTEM, USER, {"role": "assistant", "parts": ASK["parts"]}, RESULT]
    calls = [_call(1, [SYSTEM, USER], [ASK]), _call(2, list(full), [ANSWER])]
    restore_tool_requests(calls)
    assert calls[1].input_messages == full


def test_a_call_recorded_under_another_id_than_its_result_is_not_restored_again() -> None:
    """The OpenAI Agents SDK's Responses items: the call's item id (fc_..) in the history, the
    result's call id (call_..) on the result. The call is there: nothing is added."""
    ask = {"role": "assistant", "parts": [{**ASK["parts"][0], "id": "fc_1"}]}
    full = [SYSTEM, USER, ask, RESULT]
    calls = [_call(1, [SYSTEM, USER], [ASK]), _call(2, list(full), [ANSWER])]
    restore_tool_requests(calls)
    assert calls[1].input_messages == full


def test_a_recorded_default_temperature_matches_a_request_that_sets_none() -> None:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "weather in Oslo?"}]}
    recorded = [_call(1, [USER], [ANSWER], temperature=1.0)]
    llm = RecordedLlm(recorded, "strict")
    status, _, _ = llm.answer("chat", body)
    assert status == 200 and llm.report().drift == []
    hot = RecordedLlm([_call(1, [USER], [ANSWER], temperature=0.2)], "strict")
    status, _, _ = hot.answer("chat", body)
    assert status == 400
    assert "temperature: recorded 0.2, replay not set" in hot.report().errors[0]


def test_a_recorded_client_error_gives_the_provider_message_once() -> None:
    """openai-v2 records ``str(APIStatusError)``; the client prefixes the replayed message
    with its ``Error code: 500 - `` again, so the recording's prefix is left out."""
    from tracereplay.replay.answering.llm.recording import provider_message

    assert provider_message("Error code: 500 - scripted provider failure") == (
        "scripted provider failure"
    )
    assert provider_message("InternalServerError: Error code: 503 - overloaded") == "overloaded"
    assert provider_message("Error code: 500 - {'error': {'message': 'boom'}}") == "boom"
