"""``@tracereplay.tool``: execute_tool spans with name, call id, bound arguments, result, error."""

from __future__ import annotations

import asyncio
import contextvars
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode
from sdk_helpers import Recorded

import tracereplay


def args_of(span: Any) -> dict[str, Any]:
    return json.loads(span.attributes["gen_ai.tool.call.arguments"])


def test_sync_tool_records_name_arguments_result_and_duration(recorded: Recorded) -> None:
    @tracereplay.tool
    def get_weather(city: str, unit: str = "C") -> dict[str, Any]:
        """Finds the weather for a city.

        More text that is not the description.
        """
        return {"city": city, "temperature": 14, "unit": unit}

    assert get_weather("Paris", unit="F") == {"city": "Paris", "temperature": 14, "unit": "F"}
    span = recorded.one("execute_tool get_weather")
    a = span.attributes
    assert span.kind is SpanKind.INTERNAL
    assert a["gen_ai.operation.name"] == "execute_tool"
    assert a["gen_ai.tool.name"] == "get_weather"
    assert a["gen_ai.tool.type"] == "function"
    assert a["gen_ai.tool.description"] == "Finds the weather for a city."
    assert args_of(span) == {"city": "Paris", "unit": "F"}
    assert json.loads(a["gen_ai.tool.call.result"]) == {
        "city": "Paris",
        "temperature": 14,
        "unit": "F",
    }
    assert a["tracereplay.tool.result_encoding"] == "json"
    assert span.end_time >= span.start_time
    assert get_weather.__name__ == "get_weather" and get_weather.__doc__.startswith("Finds")


def test_string_results_are_recorded_as_is(recorded: Recorded) -> None:
    @tracereplay.tool(name="lookup", description="Looks things up")
    def find(key):
        return f'"{key}" is fine'

    find("a")
    span = recorded.one("execute_tool lookup")
    assert span.attributes["gen_ai.tool.call.result"] == '"a" is fine'
    assert span.attributes["tracereplay.tool.result_encoding"] == "text"
    assert span.attributes["gen_ai.tool.description"] == "Looks things up"


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda f: f(1, 2), {"a": 1, "b": 2}),
        (lambda f: f(1, b=2, extra="x"), {"a": 1, "b": 2, "extra": "x"}),
        (lambda f: f(a=1), {"a": 1}),
    ],
)
def test_arguments_are_bound_by_signature(recorded: Recorded, call: Any, expected: dict) -> None:
    @tracereplay.tool
    def add(a: int, b: int = 0, **options: Any) -> int:
        return a + b

    call(add)
    assert args_of(recorded.one("execute_tool add")) == expected


def test_var_positional_keyword_only_and_methods(recorded: Recorded) -> None:
    @tracereplay.tool
    def join(*parts: str, sep: str = "-") -> str:
        return sep.join(parts)

    class Kit:
        @tracereplay.tool
        def scale(self, x: float, *, factor: float = 2.0) -> float:
            return x * factor

    assert join("a", "b", sep="+") == "a+b"
    assert Kit().scale(3, factor=3) == 9
    assert args_of(recorded.one("execute_tool join")) == {"parts": ["a", "b"], "sep": "+"}
    assert args_of(recorded.one("execute_tool scale")) == {"x": 3, "factor": 3}


def test_errors_are_recorded_then_reraised(recorded: Recorded) -> None:
    @tracereplay.tool
    def get_population(city: str) -> int:
        raise TimeoutError(f"population service timed out for {city}")

    with pytest.raises(TimeoutError):
        get_population("Lyon")
    span = recorded.one("execute_tool get_population")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "TimeoutError"
    assert "gen_ai.tool.call.result" not in span.attributes
    [event] = span.events
    assert event.attributes["exception.message"] == "population service timed out for Lyon"


def test_a_bad_call_still_raises_the_tools_own_type_error(recorded: Recorded) -> None:
    @tracereplay.tool
    def one(a: int) -> int:
        return a

    with pytest.raises(TypeError):
        one(1, 2, 3)
    span = recorded.one("execute_tool one")
    assert span.status.status_code is StatusCode.ERROR
    assert args_of(span) == {"args": [1, 2, 3]}


def test_async_tool(recorded: Recorded) -> None:
    @tracereplay.tool
    async def fetch(url: str) -> str:
        await asyncio.sleep(0)
        return "<html>"

    @tracereplay.tool
    async def broken(url: str) -> str:
        raise ConnectionError("refused")

    async def main() -> None:
        assert await fetch("http://x") == "<html>"
        with pytest.raises(ConnectionError):
            await broken("http://y")

    asyncio.run(main())
    assert recorded.one("execute_tool fetch").attributes["gen_ai.tool.call.result"] == "<html>"
    assert recorded.one("execute_tool broken").status.status_code is StatusCode.ERROR


def test_call_ids_come_from_the_models_tool_calls(recorded: Recorded) -> None:
    @tracereplay.tool
    def get_weather(city: str) -> str:
        return "sunny"

    with tracereplay.agent_run("a", "Weather in Paris and Rome?") as run:
        with run.llm_call(model="m", messages="Weather in Paris and Rome?") as llm:
            llm.set_output(
                tool_calls=[
                    {"id": "call_rome", "name": "get_weather", "arguments": {"city": "Rome"}},
                    {
                        "id": "call_paris",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                ]
            )
        get_weather("Paris")  # matched by arguments, not order
        get_weather(city="Rome")
        get_weather("Oslo")  # the model asked for no such call: no id
        get_weather.with_call_id("call_explicit")("Bern")
    ids = {
        args_of(s)["city"]: s.attributes.get("gen_ai.tool.call.id")
        for s in recorded.named("execute_tool")
    }
    assert ids == {
        "Paris": "call_paris",
        "Rome": "call_rome",
        "Oslo": None,
        "Bern": "call_explicit",
    }


def test_tool_outside_any_run_is_still_recorded(recorded: Recorded) -> None:
    @tracereplay.tool
    def ping() -> str:
        return "pong"

    assert ping() == "pong"
    span = recorded.one("execute_tool ping")
    assert span.parent is None and args_of(span) == {}


def test_tools_in_a_thread_pool_stay_in_the_run(recorded: Recorded) -> None:
    @tracereplay.tool
    def square(x: int) -> int:
        return x * x

    with tracereplay.agent_run("pool", "squares") as run:
        with run.llm_call(model="m") as llm:
            llm.set_output(
                tool_calls=[
                    {"id": f"c{i}", "name": "square", "arguments": {"x": i}} for i in range(4)
                ]
            )
        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(contextvars.copy_context().run, square, i) for i in range(4)]
            assert [f.result() for f in futures] == [0, 1, 4, 9]
    agent = recorded.one("invoke_agent pool")
    tools = recorded.named("execute_tool square")
    assert {t.parent.span_id for t in tools} == {agent.context.span_id}
    assert {args_of(t)["x"]: t.attributes["gen_ai.tool.call.id"] for t in tools} == {
        i: f"c{i}" for i in range(4)
    }
