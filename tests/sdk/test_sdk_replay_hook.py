"""The replay hook: a contextvar-scoped tool interceptor that every @tool call consults."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from opentelemetry.trace import StatusCode
from sdk_helpers import Recorded

import tracereplay
from tracereplay.sdk import RUN_LIVE, current_interceptor, tool_interceptor

calls: list[str] = []


@tracereplay.tool
def get_weather(city: str) -> dict[str, Any]:
    calls.append(city)
    return {"city": city, "weather": "live"}


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    calls.clear()


class RecordedToolError(Exception):
    pass


def test_interceptor_answers_runs_live_or_raises(recorded: Recorded) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def answer(tool_name: str, arguments: dict[str, Any]) -> Any:
        seen.append((tool_name, arguments))
        if arguments["city"] == "Paris":
            return {"city": "Paris", "weather": "recorded"}
        if arguments["city"] == "Atlantis":
            raise RecordedToolError("unknown city")
        return RUN_LIVE

    with tool_interceptor(answer):
        assert get_weather("Paris") == {"city": "Paris", "weather": "recorded"}
        assert get_weather(city="Oslo") == {"city": "Oslo", "weather": "live"}
        with pytest.raises(RecordedToolError):
            get_weather("Atlantis")
    assert calls == ["Oslo"]  # the real tool ran only when told to
    assert seen == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Oslo"}),
        ("get_weather", {"city": "Atlantis"}),
    ]
    paris, oslo, atlantis = recorded.named("execute_tool get_weather")
    assert paris.attributes["tracereplay.tool.replayed"] is True
    assert json.loads(paris.attributes["gen_ai.tool.call.result"])["weather"] == "recorded"
    assert "tracereplay.tool.replayed" not in oslo.attributes
    assert atlantis.status.status_code is StatusCode.ERROR
    assert atlantis.attributes["error.type"] == "RecordedToolError"


def test_interceptor_is_scoped_and_nests(recorded: Recorded) -> None:
    def outer(name: str, args: dict[str, Any]) -> Any:
        return "outer"

    def inner(name: str, args: dict[str, Any]) -> Any:
        return "inner"

    assert current_interceptor() is None
    with tool_interceptor(outer):
        assert get_weather("a") == "outer"
        with tool_interceptor(inner):
            assert get_weather("b") == "inner"
        with tool_interceptor(None):
            assert get_weather("c") == {"city": "c", "weather": "live"}
        assert get_weather("d") == "outer"
    assert current_interceptor() is None
    assert get_weather("e") == {"city": "e", "weather": "live"}
    assert calls == ["c", "e"]


def test_interceptor_does_not_leak_into_other_threads(recorded: Recorded) -> None:
    results: list[Any] = []
    with tool_interceptor(lambda name, args: "replayed"):
        thread = threading.Thread(target=lambda: results.append(get_weather("t")))
        thread.start()
        thread.join()
        results.append(get_weather("main"))
    assert results == [{"city": "t", "weather": "live"}, "replayed"]


def test_async_tools_accept_sync_or_async_interceptors(recorded: Recorded) -> None:
    @tracereplay.tool
    async def search(query: str) -> str:
        return "live result"

    async def async_answer(name: str, args: dict[str, Any]) -> Any:
        await asyncio.sleep(0)
        return RUN_LIVE if args["query"] == "live" else f"recorded {args['query']}"

    async def main() -> list[str]:
        out = []
        with tool_interceptor(async_answer):
            out.append(await search("a"))
            out.append(await search("live"))
        with tool_interceptor(lambda name, args: "sync answer"):
            out.append(await search("b"))
        return out

    assert asyncio.run(main()) == ["recorded a", "live result", "sync answer"]
    replayed = [s.attributes.get("tracereplay.tool.replayed") for s in recorded.named("execute")]
    assert replayed == [True, None, True]


def test_replayed_calls_keep_their_call_ids(recorded: Recorded) -> None:
    with (
        tool_interceptor(lambda name, args: "recorded"),
        tracereplay.agent_run("a", "q") as run,
    ):
        with run.llm_call(model="m") as llm:
            llm.set_output(tool_calls=[{"id": "call_9", "name": "get_weather", "arguments": {}}])
        get_weather("Paris")
    span = recorded.one("execute_tool get_weather")
    assert span.attributes["gen_ai.tool.call.id"] == "call_9"
    assert span.attributes["tracereplay.tool.replayed"] is True
