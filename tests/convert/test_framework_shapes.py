"""What every framework capture must give for the shapes they share, as one set of tests over
(framework, instrumentation, shape).

``CAPTURES`` says, for each framework, which instrumentations were captured, the agent's name,
which shared shapes it gives the common way, and the few facts that differ by design (the
scripted model's call ids, the model recorded on a failed round, the sub-agent tool's
argument). What is specific to a framework (handoffs, a shape it records its own way, what it
does not record, where each field comes from) is in its own ``test_framework_<name>.py``;
pydantic-ai gives every shape it has the common way, so its notes are on its row here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from framework_helpers import (
    QUESTIONS,
    SCRIPT,
    assert_llm_rounds,
    assert_one_line_error,
    assert_plain,
    assert_simple_run,
    assert_tool_calls,
    final_text,
    runs_of,
    sub_runs,
    the_top_run,
    weather,
)

SIMPLE = ("multi_round", "tool_error", "parallel", "streaming")
SHARED = (*SIMPLE, "provider_error", "sub_agent")
SUB_AGENT = "forecaster"


@dataclass(frozen=True)
class Capture:
    """One framework's captures of the weather agent, under one or more instrumentations."""

    framework: str
    """Its folder under ``tests/fixtures/frameworks/``."""
    instrumentations: tuple[str, ...]
    agent: str
    """The name the main agent's run must have."""
    shapes: tuple[str, ...] = SHARED
    """The shared shapes it gives the common way (a shape it records its own way is tested in
    its own file only)."""
    call_ids: tuple[str, str] = ("call_0001", "call_0002")
    """The ids the scripted model gives a conversation's first two tool calls."""
    failed_model: str | None = "gpt-4o-mini"
    """The model recorded on ``provider_error``'s failed round (the request's model)."""
    delegation_argument: str = "input"
    """The argument of the tool that runs the sub-agent."""
    delegation_suffix: str = ""
    """What that tool's result adds to the sub-agent's answer."""
    tokens: bool = True
    """Whether the LLM calls record token counts."""
    answer_tool: str | None = None
    """The tool the framework's agents end every run with (smolagents' ``final_answer``): a
    tool call of the last round, besides the scripted ones."""

    def user_calls(self, run: Any) -> list[Any]:
        """The run's tool calls but the framework's answer tool."""
        return [c for c in run.result.tool_calls if c.tool_name != self.answer_tool]


CAPTURES = (
    Capture(
        "google_adk",
        ("adk_native",),
        "weather_agent",
        failed_model="openai/gpt-4o-mini",  # LiteLlm's provider/model
        delegation_argument="request",  # AgentTool's argument
    ),
    Capture("langgraph", ("openinference", "openllmetry"), "weather_agent"),
    # AutoGen AgentChat's own spans (agents, tools) and OpenLLMetry's OpenAI instrumentation
    # (the model calls): its native spans alone record no content (test_framework_autogen.py);
    # streaming records no tokens (AgentChat does not ask for stream usage) and the team is
    # not a sub-agent shape: both are in test_framework_autogen.py too.
    Capture(
        "autogen",
        ("openllmetry",),
        "weather_agent",
        shapes=("multi_round", "tool_error", "parallel", "provider_error"),
    ),
    # Microsoft Agent Framework's own spans with sensitive data on; without it there is no
    # content (test_framework_agent_framework.py), and its workflow is tested there too;
    # sub_agent is `forecaster.as_tool(arg_name="input")`.
    Capture("agent_framework", ("sensitive",), "weather_agent"),
    # create_react_agent: the graph (named LangGraph) is the run; a tool that raises fails the
    # invocation (test_framework_langgraph_react.py); no streaming or sub_agent capture.
    Capture(
        "langgraph",
        ("openinference-react", "openllmetry-react"),
        "LangGraph",
        shapes=("multi_round", "parallel", "provider_error"),
    ),
    # tool_error: the SDK redacts the tool's exception (test_framework_openai_agents.py).
    Capture(
        "openai_agents",
        ("openinference", "openllmetry"),
        "weather_agent",
        shapes=("multi_round", "parallel", "streaming", "provider_error", "sub_agent"),
        # the Responses API numbers each function-call item (fc_<n>) before its call id
        call_ids=("call_0002", "call_0004"),
        # neither instrumentation records a model (or usage) on the failed round
        failed_model=None,
    ),
    # the same agent traced by Logfire (logfire.instrument_openai_agents()): Logfire records the
    # request's model on every Responses API span, the failed round's too
    Capture(
        "openai_agents_logfire",
        ("logfire",),
        "weather_agent",
        shapes=("multi_round", "parallel", "streaming", "provider_error", "sub_agent"),
        call_ids=("call_0002", "call_0004"),
        failed_model="gpt-5.6-luna",  # the SDK's default model, as the request named it
    ),
    # pydantic-ai's own instrumentation (Agent.instrument_all()), captured by
    # tests/fixtures/frameworks/pydantic_ai/capture.py (its README says what each span holds).
    # pydantic-ai has no handoff, so there is no handoff shape; sub_agent is agent delegation
    # (a forecaster tool that runs the forecaster agent). A tool's error is its span's
    # `exception` event (type pydantic_ai.exceptions.ToolFailedError, message "unknown city:
    # Atlantis"); the span's status is ERROR with an empty message.
    Capture("pydantic_ai", ("native",), "weather_agent"),
    # CrewAI + OpenInference crewai and openai (tests/fixtures/frameworks/crewai/README.md):
    # a crew of one agent and one task; its crew of two is a handoff
    # (test_framework_crewai.py); CrewAI has no agent-as-tool shape captured. The failed
    # round's LLM span records no model (the openai instrumentation reads it from the response).
    Capture(
        "crewai",
        ("openinference",),
        "weather_agent",
        shapes=SIMPLE + ("provider_error",),
        failed_model=None,
    ),
    # no framework: a hand-written OpenAI-client loop (tests/fixtures/frameworks/plain), traced
    # only by the LLM client's instrumentation inside one application span (`weather_agent`):
    # the tool calls are rebuilt from the LLM messages (the assistant's tool calls, the tool
    # messages of the next request); no sub-agent. OpenLIT records no input messages on a
    # failed request, so provider_error's one tool call has no result there
    # (test_framework_plain.py).
    Capture(
        "plain",
        ("openai_v2", "openlit"),
        "weather_agent",
        shapes=SIMPLE,
    ),
    Capture("plain", ("openai_v2",), "weather_agent", shapes=("provider_error",)),
    Capture(
        "strands",
        ("native",),
        "weather_agent",
        # the tool returns str(AgentResult): the forecaster's answer plus a newline
        delegation_suffix="\n",
    ),
    # strands 0.2: the sub-agent's spans are a trace of their own (test_framework_strands_0_2.py);
    # no Swarm, so no handoff
    Capture(
        "strands_0_2",
        ("native",),
        "weather_agent",
        shapes=("multi_round", "tool_error", "parallel", "streaming", "provider_error"),
    ),
    # LlamaIndex's FunctionAgent streams every chat without usage: no token counts
    # (test_framework_llama_index.py: handoff, ReActAgent, what each span holds).
    Capture("llama_index", ("openinference",), "weather_agent", tokens=False),
    # a plain loop on the anthropic SDK 2.x traced by OpenLLMetry's anthropic instrumentation:
    # the SDK's own `anthropic.messages.create` span of each request is merged with
    # OpenLLMetry's `anthropic.chat` (tests/fixtures/frameworks/plain_anthropic)
    Capture(
        "plain_anthropic",
        ("openllmetry",),
        "weather_agent",
        shapes=(*SIMPLE, "provider_error"),
        call_ids=("toolu_0001", "toolu_0002"),
        failed_model="claude-sonnet-4-5",
    ),
    # LangChain create_agent on ChatAnthropic + OpenInference: the SDK's own spans are traces
    # of their own (the LangChain tracer does not make its spans current): no runs
    Capture(
        "langchain_anthropic",
        ("openinference",),
        "weather_agent",
        call_ids=("toolu_0001", "toolu_0002"),
        failed_model="claude-sonnet-4-5",
    ),
    # a plain loop on litellm.completion + OpenInference litellm, inside an application span:
    # the tool messages of its LLM spans carry no tool_call_id (paired with their calls by
    # order) (tests/fixtures/frameworks/plain_litellm)
    Capture(
        "plain_litellm",
        ("openinference",),
        "weather_agent",
        shapes=(*SIMPLE, "provider_error"),
        failed_model="openai/gpt-4o-mini",  # litellm's provider/model, as requested
    ),
    # LangChain's create_agent graph (../langgraph/agent.py) traced by OpenLIT: one run per
    # invocation, not per graph node (tests/fixtures/frameworks/langgraph_openlit); the
    # forecaster graph its tool runs has no agent span, only node spans: the tool span heads
    # the forecaster's run
    Capture("langgraph_openlit", ("openlit",), "weather_agent"),
    # a plain loop on google-genai (2.x: the contrib instrumentation refuses 3.x) + the contrib
    # google-genai instrumentation, messages as span attributes: tool results are sent as
    # Gemini's {"result": ...} (tests/fixtures/frameworks/plain_google_genai)
    Capture(
        "plain_google_genai",
        ("contrib", "contrib_events"),  # the messages on the span, or in log records
        "weather_agent",
        shapes=(*SIMPLE, "provider_error"),
        failed_model="gemini-2.5-flash",
    ),
    # AG2 1.x ag2.Agent + its own TelemetryMiddleware (tests/fixtures/frameworks/ag2)
    Capture(
        "ag2", ("ag2_native",), "weather_agent", shapes=(*SIMPLE[:3], "provider_error", "sub_agent")
    ),
    # Agno 3.x Agent on OpenAIChat + OpenInference agno (tests/fixtures/frameworks/agno)
    Capture("agno", ("openinference",), "weather_agent"),
    # Google ADK 2.x on its default model path (Gemini) + OpenInference google-adk
    # (tests/fixtures/frameworks/google_adk_openinference)
    Capture(
        "google_adk_openinference",
        ("openinference",),
        "weather_agent",
        failed_model="gemini-2.5-flash",
        delegation_argument="request",  # AgentTool's argument
        # one span holds the agent's loop, with the last request's usage: the calls before it
        # are rebuilt from its history, without token counts; a failed request after the
        # tools is only the span's exception event (a call of its own)
        tokens=False,
    ),
    # a TypeScript agent on the Vercel AI SDK, its own telemetry (experimental_telemetry with
    # functionId "weather_agent"), the Responses API (tests/fixtures/frameworks/vercel_ai)
    Capture(
        "vercel_ai",
        ("ai-sdk",),
        "weather_agent",
        call_ids=("call_0002", "call_0004"),
    ),
    # smolagents ends with a final_answer call (a tool call, its argument the response);
    # provider_error loses the agent span and a managed agent's query is smolagents' task
    # template (test_framework_smolagents.py).
    Capture(
        "smolagents",
        ("openinference",),
        "weather_agent",
        shapes=SIMPLE,
        answer_tool="final_answer",
    ),
)


def cases(*shapes: str) -> list[Any]:
    """``(capture, instrumentation, shape)`` for every capture of ``shapes``, with ids such as
    ``pydantic_ai-native-multi_round``."""
    return [
        pytest.param(
            capture, instrumentation, shape, id=f"{capture.framework}-{instrumentation}-{shape}"
        )
        for capture in CAPTURES
        for instrumentation in capture.instrumentations
        for shape in shapes
        if shape in capture.shapes
    ]


CASE = ("capture", "instrumentation", "shape")


@pytest.mark.parametrize(CASE, cases(*SIMPLE))
def test_simple_shape(capture: Capture, instrumentation: str, shape: str) -> None:
    """One agent, one run: the question, the final answer, one LLM call per scripted round and
    the scripted tool calls with the tools' own output (or a one-line error)."""
    runs = runs_of(capture.framework, instrumentation, shape)
    run = the_top_run(runs)
    assert len(runs) == 1, [(r.agent_name, r.parent_run_id) for r in runs]
    assert sub_runs(runs, run) == []
    assert run.error is None, run.error
    assert_simple_run(
        run, shape, capture.agent, tokens=capture.tokens, answer_tool=capture.answer_tool
    )


@pytest.mark.parametrize(CASE, cases("tool_error"))
def test_tool_error_is_one_line_and_run_succeeds(
    capture: Capture, instrumentation: str, shape: str
) -> None:
    """The tool raised; the model answered anyway: the call holds the error, the run succeeds."""
    run = the_top_run(runs_of(capture.framework, instrumentation, shape))
    (call,) = capture.user_calls(run)
    assert call.tool_name == "get_weather", call.tool_name
    assert call.arguments == {"city": "Atlantis"}, call.arguments
    assert_one_line_error(call, "unknown city: Atlantis")
    assert call.tool_call_id == capture.call_ids[0], call.tool_call_id
    assert run.result.status == "success", (run.result.status, run.error)
    assert run.result.response == final_text(QUESTIONS[shape])


@pytest.mark.parametrize(CASE, cases("parallel"))
def test_parallel_calls_share_a_round(capture: Capture, instrumentation: str, shape: str) -> None:
    run = the_top_run(runs_of(capture.framework, instrumentation, shape))
    calls = capture.user_calls(run)
    assert [c.tool_name for c in calls] == ["get_weather", "get_weather"]
    assert [c.round for c in calls] == [1, 1]
    assert [c.tool_call_id for c in calls] == list(capture.call_ids)
    assert [c.result for c in calls] == ["Rome: 24°C, sunny", "Oslo: 6°C, rain"]


@pytest.mark.parametrize(CASE, cases("provider_error"))
def test_provider_error(capture: Capture, instrumentation: str, shape: str) -> None:
    """The provider answers HTTP 500 on round 2: the run fails with a one-line error."""
    key = QUESTIONS[shape]
    runs = runs_of(capture.framework, instrumentation, shape)
    run = the_top_run(runs)
    assert len(runs) == 1, [(r.agent_name, r.parent_run_id) for r in runs]
    assert run.agent_name == capture.agent, run.agent_name
    assert run.query == key, run.query
    assert run.result.status == "failed", run.result.status
    assert run.error, "no run error"
    assert "scripted provider failure" in run.error, run.error
    assert "\n" not in run.error and "Traceback" not in run.error, run.error
    # The invocation raised: there is no final answer.
    assert run.result.response == "", run.result.response
    # Two LLM calls: round 1 answered (model + tokens); round 2 failed, so its span has no
    # usage and at most the request's model.
    assert run.result.total_llm_calls == 2, run.result.total_llm_calls
    assert [c.round for c in run.llm_calls] == [1, 2]
    first, failed = run.llm_calls
    assert first.model and (not capture.tokens or (first.input_tokens and first.output_tokens))
    assert (failed.model or None) == capture.failed_model, failed.model
    assert failed.input_tokens is None and failed.output_tokens is None
    assert run.models, "no model"
    assert not capture.tokens or (run.input_tokens > 0 and run.output_tokens > 0)
    # The one tool call that ran before the provider failed.
    assert_tool_calls(run, key)


@pytest.mark.parametrize(CASE, cases("sub_agent"))
def test_sub_agent(capture: Capture, instrumentation: str, shape: str) -> None:
    """The agent calls the forecaster agent as a tool: one tool call of the main run (the
    forecaster's answer as its result), and the forecaster one sub-run with its own LLM rounds
    and tool calls, not counted in the main run."""
    key = QUESTIONS[shape]
    sub_key = weather.SUB_AGENT_QUESTION
    runs = runs_of(capture.framework, instrumentation, shape)
    top = the_top_run(runs)
    assert len(runs) == 2, [(r.agent_name, r.parent_run_id) for r in runs]

    # The main agent: its own query, LLM rounds and final text.
    assert top.agent_name == capture.agent, top.agent_name
    assert top.query == key, top.query
    assert_plain(top.query)
    assert top.result.response == final_text(key), top.result.response
    assert_plain(top.result.response)
    assert top.result.status == "success", (top.result.status, top.error)
    assert_llm_rounds(top, len(SCRIPT[key]), tokens=capture.tokens)

    # Its one tool call is the delegation: tool `forecaster`, the sub-agent's answer as result.
    assert [c.tool_name for c in top.result.tool_calls] == [SUB_AGENT], [
        c.tool_name for c in top.result.tool_calls
    ]
    (call,) = top.result.tool_calls
    assert call.arguments == {capture.delegation_argument: sub_key}, call.arguments
    assert call.result == final_text(sub_key) + capture.delegation_suffix, call.result
    assert call.error is None, call.error
    assert call.round == 1, call.round
    assert call.tool_call_id == capture.call_ids[0], call.tool_call_id

    # The forecaster is a sub-run of the main run, with its own LLM rounds and tool calls.
    (sub,) = sub_runs(runs, top)
    assert sub.parent_run_id == top.run_id
    assert sub.agent_name == SUB_AGENT, sub.agent_name
    assert sub.query == sub_key, sub.query
    assert sub.result.response == final_text(sub_key), sub.result.response
    assert sub.result.status == "success", (sub.result.status, sub.error)
    assert_llm_rounds(sub, len(SCRIPT[sub_key]), tokens=capture.tokens)
    assert_tool_calls(sub, sub_key)

    # The sub-agent's LLM calls and tools are not counted in the main run.
    assert {c.span_id for c in top.llm_calls}.isdisjoint(c.span_id for c in sub.llm_calls)
    assert "get_forecast" not in [c.tool_name for c in top.result.tool_calls]
