"""``agent_run``: the invoke_agent span, as context manager and decorator, sync and async."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest
from opentelemetry.trace import SpanKind, StatusCode
from sdk_helpers import Recorded

import tracereplay
from tracereplay import AgentResult, Document
from tracereplay.sdk import current_run, run_attributes
from tracereplay.sdk.agent_run import normalize_context


def messages(span, key: str) -> list[dict]:
    return json.loads(span.attributes[key])


def test_context_manager_records_query_response_context_and_parameters(recorded: Recorded) -> None:
    with tracereplay.agent_run(
        "weather_agent",
        "Weather in Paris?",
        context=[Document(name="faq", content="Paris is in France.")],
        parameters={"max_rounds": 4, "temperature": 0.2},
    ) as run:
        assert current_run() is run
        run.set_response("Rainy, 12 °C.")
    assert current_run() is None

    span = recorded.one("invoke_agent weather_agent")
    a = span.attributes
    assert span.kind is SpanKind.INTERNAL
    assert a["gen_ai.operation.name"] == "invoke_agent"
    assert a["gen_ai.agent.name"] == "weather_agent"
    assert messages(span, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}
    ]
    assert messages(span, "gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Rainy, 12 °C."}],
            "finish_reason": "stop",
        }
    ]
    assert json.loads(a["tracereplay.run.context"]) == [
        {"name": "faq", "content": "Paris is in France."}
    ]
    assert json.loads(a["tracereplay.run.parameters"]) == {"max_rounds": 4, "temperature": 0.2}
    assert span.status.status_code is StatusCode.UNSET
    assert format(span.context.trace_id, "032x") == run.trace_id
    assert format(span.context.span_id, "016x") == run.span_id


def test_exception_is_recorded_then_reraised(recorded: Recorded) -> None:
    with pytest.raises(KeyError), tracereplay.agent_run("a", "q"):
        raise KeyError("no such city")
    span = recorded.one("invoke_agent a")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "KeyError"
    [event] = span.events
    assert event.name == "exception"
    assert event.attributes["exception.type"] == "KeyError"
    assert "no such city" in event.attributes["exception.message"]
    assert "Traceback" in event.attributes["exception.stacktrace"]


def test_max_rounds_exceeded_and_reported_errors(recorded: Recorded) -> None:
    with tracereplay.agent_run("a", "q1") as run:
        run.mark_max_rounds_exceeded()
    with tracereplay.agent_run("b", "q2") as run:
        run.set_error("the model refused", "Refusal")
    a = recorded.one("invoke_agent a")
    assert a.attributes["tracereplay.run.status"] == "max_rounds_exceeded"
    assert a.status.status_code is StatusCode.UNSET
    b = recorded.one("invoke_agent b")
    assert b.status.status_code is StatusCode.ERROR
    assert b.attributes["error.type"] == "Refusal"
    assert b.status.description == "Refusal: the model refused"


def test_decorator_takes_query_context_parameters_from_arguments(recorded: Recorded) -> None:
    @tracereplay.agent_run("support")
    def answer(question: str, context: list[str], parameters: dict) -> str:
        assert current_run() is not None
        return f"answer to {question}"

    assert answer("Where is my order?", ["order 42 shipped"], {"tone": "brief"}) == (
        "answer to Where is my order?"
    )
    span = recorded.one("invoke_agent support")
    assert messages(span, "gen_ai.input.messages")[0]["parts"][0]["content"] == "Where is my order?"
    assert messages(span, "gen_ai.output.messages")[0]["parts"][0]["content"] == (
        "answer to Where is my order?"
    )
    assert json.loads(span.attributes["tracereplay.run.context"]) == [
        {"name": "document_1", "content": "order 42 shipped"}
    ]
    assert json.loads(span.attributes["tracereplay.run.parameters"]) == {"tone": "brief"}


def test_decorator_prefers_an_argument_named_query_and_is_reentrant(recorded: Recorded) -> None:
    class Agent:
        @tracereplay.agent_run("method_agent")
        def run(self, mode: str, query: str) -> str:
            return query.upper()

    agent = Agent()
    assert agent.run("fast", query="one") == "ONE"
    assert agent.run("fast", "two") == "TWO"
    queries = [
        messages(s, "gen_ai.input.messages")[0]["parts"][0]["content"]
        for s in recorded.named("invoke_agent")
    ]
    assert queries == ["one", "two"]


def test_async_decorator_and_async_context_manager(recorded: Recorded) -> None:
    @tracereplay.agent_run("async_agent")
    async def answer(query: str) -> str:
        await asyncio.sleep(0)
        return "done"

    async def main() -> None:
        assert await answer("go") == "done"
        async with tracereplay.agent_run("async_cm", "q") as run:
            await asyncio.sleep(0)
            run.set_response("ok")
        with pytest.raises(RuntimeError):
            await failing("x")

    @tracereplay.agent_run("async_failing")
    async def failing(query: str) -> str:
        raise RuntimeError("boom")

    asyncio.run(main())
    assert (
        messages(recorded.one("invoke_agent async_agent"), "gen_ai.output.messages")[0]["parts"][0][
            "content"
        ]
        == "done"
    )
    assert "gen_ai.output.messages" in recorded.one("invoke_agent async_cm").attributes
    assert recorded.one("invoke_agent async_failing").status.status_code is StatusCode.ERROR


def test_concurrent_async_runs_keep_their_own_spans(recorded: Recorded) -> None:
    @tracereplay.tool
    async def lookup(key: str) -> str:
        await asyncio.sleep(0)
        return key

    @tracereplay.agent_run("parallel")
    async def agent(query: str) -> str:
        for _ in range(3):
            await lookup(query)
        return query

    async def main() -> None:
        await asyncio.gather(*(agent(f"q{i}") for i in range(4)))

    asyncio.run(main())
    spans = recorded.spans()
    roots = {s.context.span_id: s for s in spans if s.name == "invoke_agent parallel"}
    assert len(roots) == 4
    for root in roots.values():
        query = messages(root, "gen_ai.input.messages")[0]["parts"][0]["content"]
        tools = [s for s in spans if s.parent and s.parent.span_id == root.context.span_id]
        assert [json.loads(t.attributes["gen_ai.tool.call.arguments"]) for t in tools] == [
            {"key": query}
        ] * 3


def test_an_agent_result_return_value_gives_response_and_status(recorded: Recorded) -> None:
    @tracereplay.agent_run("ffai_style")
    def loop(query: str) -> AgentResult:
        return AgentResult(response="partial", status="max_rounds_exceeded")

    @dataclass
    class Outcome:
        response: str
        status: str

    @tracereplay.agent_run("failing_style")
    def loop2(query: str) -> Outcome:
        return Outcome(response="", status="failed")

    loop("q")
    loop2("q")
    span = recorded.one("invoke_agent ffai_style")
    assert span.attributes["tracereplay.run.status"] == "max_rounds_exceeded"
    assert messages(span, "gen_ai.output.messages")[0]["parts"][0]["content"] == "partial"
    assert recorded.one("invoke_agent failing_style").status.status_code is StatusCode.ERROR


def test_replay_attributes_from_kwarg_and_from_context(recorded: Recorded) -> None:
    with tracereplay.agent_run(
        "a", "q", attributes={"tracereplay.run.kind": "replay", "tracereplay.case_id": "c1"}
    ):
        pass

    @tracereplay.agent_run("b")
    def agent(query: str) -> str:
        return "x"

    with (
        run_attributes({"tracereplay.run.kind": "replay", "tracereplay.eval_run_id": "e1"}),
        run_attributes({"tracereplay.case_id": "c2"}),
    ):
        agent("q")
    agent("q")  # outside: a live run again

    a = recorded.one("invoke_agent a").attributes
    assert (a["tracereplay.run.kind"], a["tracereplay.case_id"]) == ("replay", "c1")
    replayed, live = recorded.named("invoke_agent b")
    assert replayed.attributes["tracereplay.run.kind"] == "replay"
    assert replayed.attributes["tracereplay.eval_run_id"] == "e1"
    assert replayed.attributes["tracereplay.case_id"] == "c2"
    assert "tracereplay.run.kind" not in live.attributes


def test_nested_runs_and_tools_nest_under_the_innermost_span(recorded: Recorded) -> None:
    @tracereplay.tool
    def search(q: str) -> str:
        return "found"

    with tracereplay.agent_run("planner", "plan it"), tracereplay.agent_run("researcher", "q2"):
        search("x")
    planner = recorded.one("invoke_agent planner")
    researcher = recorded.one("invoke_agent researcher")
    tool = recorded.one("execute_tool search")
    assert researcher.parent.span_id == planner.context.span_id
    assert tool.parent.span_id == researcher.context.span_id
    assert tool.context.trace_id == planner.context.trace_id


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        (None, []),
        ("plain text", [{"name": "context", "content": "plain text"}]),
        ({"name": "a", "content": "b"}, [{"name": "a", "content": "b"}]),
        (
            {"policy": "p1", "faq": "f1"},
            [{"name": "policy", "content": "p1"}, {"name": "faq", "content": "f1"}],
        ),
        (
            ["x", {"name": "n", "content": "y"}],
            [{"name": "document_1", "content": "x"}, {"name": "n", "content": "y"}],
        ),
        ([Document(name="d", content="z")], [{"name": "d", "content": "z"}]),
    ],
)
def test_context_forms(context: object, expected: list[dict[str, str]]) -> None:
    assert normalize_context(context) == expected


def test_session_id_is_the_conversation_id(recorded: Recorded) -> None:
    """``agent_run(..., session_id=...)`` and a decorated function's ``session_id`` argument
    name the conversation the run is a turn of (issue 54), as GenAI's
    ``gen_ai.conversation.id``; none given, none written."""
    with tracereplay.agent_run("a", "q1", session_id="chat-1"):
        pass
    with tracereplay.agent_run("b", "q2"):
        pass

    @tracereplay.agent_run("c")
    def answer(query: str, session_id: str) -> str:
        return "ok"

    answer("q3", session_id="chat-2")
    assert recorded.one("invoke_agent a").attributes["gen_ai.conversation.id"] == "chat-1"
    assert "gen_ai.conversation.id" not in recorded.one("invoke_agent b").attributes
    assert recorded.one("invoke_agent c").attributes["gen_ai.conversation.id"] == "chat-2"
