"""A run's ``session_id`` (issue 54): the conversation its telemetry names, by one rule
(``convert/sessions.py``): the run's own span, the spans above it, then its LLM and tool
spans; on each span the names in ``KEYS`` order, then OpenInference's ``metadata``, then the
OpenAI Agents SDK's ``group_id`` on Logfire's trace span."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from convert_helpers import Trace, agent, assistant, chat, load_spans, tool, user

from tracereplay.convert import convert_trace
from tracereplay.convert.sessions import KEYS


def _session(**root_attrs: Any) -> str | None:
    t = Trace()
    root = agent(t, "a", **root_attrs)
    chat(t, root, 10, 20, [user("q")], [assistant("done")])
    (run,) = convert_trace(t.spans)
    return run.session_id


@pytest.mark.parametrize("key", KEYS)
def test_every_convention_names_a_session(key: str) -> None:
    assert _session(**{key: "conv-1"}) == "conv-1"


def test_no_session_attribute_is_none() -> None:
    assert _session() is None


@pytest.mark.parametrize("empty", ["", "null", "  "])
def test_an_empty_or_null_id_is_none(empty: str) -> None:
    assert _session(**{"session.id": empty}) is None


def test_a_number_is_an_id() -> None:
    assert _session(**{"session.id": 42}) == "42"


def test_the_conventions_name_comes_first_on_one_span() -> None:
    attrs = {"session.id": "second", "gen_ai.conversation.id": "first"}
    assert _session(**attrs) == "first"


@pytest.mark.parametrize("key", ["session_id", "thread_id", "conversation_id"])
def test_langchain_metadata_names_a_session(key: str) -> None:
    """OpenInference's LangChain tracer records the run's metadata (a LangGraph thread's
    ``thread_id`` among it) as one JSON object."""
    metadata = orjson.dumps({"langgraph_step": 1, key: "thread-7"}).decode()
    assert _session(metadata=metadata) == "thread-7"


def test_a_span_inside_the_run_names_it() -> None:
    """google-adk and pydantic-ai put the id on their LLM and tool spans too; an instrumentation
    may put it only there."""
    t = Trace()
    root = agent(t, "a")
    chat(t, root, 10, 20, [user("q")], [assistant("calling")])
    tool(t, "get_weather", root, 21, 22, **{"session.id": "from-tool"})
    chat(t, root, 30, 40, [user("q")], [assistant("done")], **{"session.id": "from-llm"})
    (run,) = convert_trace(t.spans)
    assert run.session_id == "from-tool"  # the first span in start order


def test_the_runs_own_span_before_its_inner_spans() -> None:
    t = Trace()
    root = agent(t, "a", **{"session.id": "own"})
    chat(t, root, 10, 20, [user("q")], [assistant("done")], **{"session.id": "inner"})
    (run,) = convert_trace(t.spans)
    assert run.session_id == "own"


def test_a_span_above_the_run_names_it() -> None:
    """The request's span (an HTTP handler's, a workflow's) may carry the conversation."""
    t = Trace()
    request = t.span("POST /chat", {"langfuse.session.id": "web-3"}, start=0, end=200)
    root = agent(t, "a", parent=request, start=5, end=100)
    chat(t, root, 10, 20, [user("q")], [assistant("done")])
    runs = convert_trace(t.spans)
    assert [r.session_id for r in runs] == ["web-3"]


def test_a_turn_takes_the_outermost_id_over_its_frameworks_own() -> None:
    """The application's ``agent_run(..., session_id=...)`` around a framework whose agent span
    names an id of that one run (pydantic-ai gives each run a fresh ``gen_ai.conversation.id``
    when it is given none): the application's id names the conversation, so its turns are one
    session. Turns with no wrapper keep their own span's id."""
    t = Trace()
    for n, turn in enumerate(["turn-1", "turn-2"]):
        app = agent(t, "app", start=1000 * n, end=1000 * n + 900, **{"session.id": "chat-1"})
        inner = agent(
            t, "weather_agent", parent=app, start=1000 * n + 5, end=1000 * n + 800,
            **{"gen_ai.conversation.id": f"fresh-{turn}"},
        )  # fmt: skip
        chat(t, inner, 1000 * n + 10, 1000 * n + 20, [user(turn)], [assistant("done")])
    runs = convert_trace(t.spans)
    assert [(r.agent_name, r.session_id) for r in runs] == [("weather_agent", "chat-1")] * 2
    assert _session(**{"gen_ai.conversation.id": "own"}) == "own"


def test_a_sub_agent_names_its_own_or_takes_its_parents() -> None:
    t = Trace()
    root = agent(t, "boss", **{"gen_ai.conversation.id": "outer"})
    chat(t, root, 1, 5, [user("q")], [assistant("asking")])
    helper = agent(t, "helper", parent=root, start=10, end=50)
    chat(t, helper, 11, 20, [user("sub q")], [assistant("sub answer")])
    own = agent(t, "own", parent=root, start=60, end=90, **{"gen_ai.conversation.id": "inner"})
    chat(t, own, 61, 70, [user("other q")], [assistant("other answer")])
    chat(t, root, 95, 99, [user("q")], [assistant("done")])
    sessions = {r.agent_name: r.session_id for r in convert_trace(t.spans)}
    assert sessions == {"boss": "outer", "helper": "outer", "own": "inner"}


def test_openai_agents_group_id_on_logfires_trace_span() -> None:
    t = Trace()
    trace_span = t.span(
        "OpenAI Agents trace: {name}",
        {"agent_trace_id": "trace_1", "group_id": "chat-9", "name": "Agent workflow"},
        end=200,
    )
    root = agent(t, "a", parent=trace_span, start=5, end=100)
    chat(t, root, 10, 20, [user("q")], [assistant("done")])
    (run,) = convert_trace(t.spans)
    assert run.session_id == "chat-9"


def test_a_group_id_elsewhere_names_no_session() -> None:
    """``group_id`` alone is too common a name (a consumer group): only the OpenAI Agents SDK's
    trace span, which Logfire marks with ``agent_trace_id``, is read."""
    assert _session(group_id="consumers") is None


def test_the_fixtures_name_their_sessions() -> None:
    """The generated GenAI, OpenInference and OpenLLMetry captures of one conversation."""
    for name in (
        "generated-otel-genai-latest__agent_tool_calls.json",
        "generated-openinference__agent_tool_calls.json",
        "generated-openllmetry-0.62__agent_tool_calls.json",
        "generated-openllmetry-0.54-legacy__agent_tool_calls.json",
    ):
        runs = convert_trace(load_spans(name))
        assert [r.session_id for r in runs] == ["conv-demo-1"], name
