"""Every real-instrumentation fixture converts to the right run (through the real decoders)."""

from __future__ import annotations

import dataclasses

import pytest
from convert_helpers import (
    ANSWER,
    POPULATION_ID,
    QUESTION,
    V136_LOGS,
    V136_SPANS,
    WEATHER_ID,
    by_trace,
    load_logs,
    load_spans,
)

from tracereplay.convert import convert_trace, run_id_for
from tracereplay.models.run import Run
from tracereplay.spans import Span

WEATHER_AGENTS = [
    ("generated-otel-genai-latest__agent_tool_calls", "genai"),
    ("generated-openinference__agent_tool_calls", "openinference"),
    ("generated-openllmetry-0.62__agent_tool_calls", "openllmetry"),
    ("generated-openllmetry-0.54-legacy__agent_tool_calls", "openllmetry"),
]


def assert_weather_run(run: Run, convention: str, *, rebuilt: bool = False) -> None:
    """The weather agent's run, whatever convention recorded it."""
    assert run.convention == convention
    assert run.query == QUESTION
    assert run.result.response == ANSWER
    assert run.result.status == "success"
    assert run.error is None
    assert run.result.total_llm_calls == 2
    assert run.result.total_rounds == 2
    assert (run.input_tokens, run.output_tokens) == (207 + 301, 46 + 19)
    assert run.models == ["gpt-4o-mini-2024-07-18"]
    assert run.service_name == "weather-agent-demo"

    weather, population = run.result.tool_calls
    assert weather.tool_name == "get_weather"
    assert weather.tool_call_id == WEATHER_ID
    assert weather.arguments == {"city": "San Francisco"}
    assert weather.error is None
    assert '"weather"' in weather.result and "foggy" in weather.result
    assert weather.round == 1

    assert population.tool_name == "get_population"
    assert population.tool_call_id == POPULATION_ID
    assert population.arguments == {"city": "San Francisco"}
    assert population.error is not None and "timed out" in population.error
    assert population.round == 1
    if not rebuilt:
        assert weather.duration_ms > 0 and population.duration_ms > 0

    first, second = run.llm_calls
    assert (first.round, second.round) == (1, 2)
    assert (first.input_tokens, first.output_tokens) == (207, 46)
    assert (second.input_tokens, second.output_tokens) == (301, 19)
    assert first.provider == "openai"
    assert first.finish_reason in ("tool_calls", "tool_call")
    assert second.finish_reason == "stop"
    assert [m["role"] for m in first.input_messages] == ["system", "user"]
    assert first.output_messages[0]["parts"][0] == {
        "type": "tool_call",
        "id": WEATHER_ID,
        "name": "get_weather",
        "arguments": {"city": "San Francisco"},
    }
    assert [m["role"] for m in second.input_messages][-2:] == ["tool", "tool"]
    assert second.output_messages[0]["parts"] == [{"type": "text", "content": ANSWER}]
    assert run.started_at is not None and run.started_at.tzinfo is not None
    assert run.duration_ms > 0
    # what the converter built is exactly what validation would accept
    assert Run.model_validate(run.to_dict()) == run


@pytest.mark.parametrize("suffix", [".json", ".pb"])
@pytest.mark.parametrize(("name", "convention"), WEATHER_AGENTS)
def test_weather_agent_fixture(name: str, convention: str, suffix: str) -> None:
    spans = load_spans(name + suffix)
    runs = convert_trace(spans)
    assert len(runs) == 1
    run = runs[0]
    assert_weather_run(run, convention)
    assert run.agent_name == "weather_agent"
    assert run.parent_run_id is None
    assert run.kind == "live"
    assert run.run_id == run_id_for(run.trace_id, run.root_span_id)


def test_openllmetry_workflow_around_the_agent_is_not_a_run() -> None:
    # weather_request.workflow -> weather_agent.agent -> LLM/tool spans: one run, the agent's
    spans = load_spans("generated-openllmetry-0.62__agent_tool_calls.json")
    (run,) = convert_trace(spans)
    root = next(s for s in spans if s.span_id == run.root_span_id)
    assert root.name == "weather_agent.agent"


def test_traceloop_tool_spans_get_their_call_id_from_the_llm_output() -> None:
    # Traceloop tool spans carry no call id: it is matched by name and order
    spans = load_spans("generated-openllmetry-0.54-legacy__agent_tool_calls.json")
    assert not any("gen_ai.tool.call.id" in s.attributes for s in spans)
    (run,) = convert_trace(spans)
    assert [c.tool_call_id for c in run.result.tool_calls] == [WEATHER_ID, POPULATION_ID]


def test_failed_tool_result_is_what_the_model_was_told() -> None:
    (run,) = convert_trace(load_spans("generated-otel-genai-latest__agent_tool_calls.json"))
    population = run.result.tool_calls[1]
    assert population.result == (
        "error: TimeoutError: population service timed out for San Francisco"
    )
    assert population.error == "TimeoutError: population service timed out for San Francisco"
    assert run.result.failed_tool_calls == [population]


def test_v136_chat_spans_with_log_events_rebuild_tool_calls_in_one_trace() -> None:
    """The ≤1.36 default: content in OTLP log records, no agent and no tool spans. Here the two
    chat calls of the loop share one trace under the app's request span."""
    spans = load_spans(V136_SPANS + ".json")
    logs = load_logs(V136_LOGS)
    trace_id = spans[0].trace_id
    request = Span(
        trace_id=trace_id,
        span_id="00000000000000aa",
        parent_span_id="",
        name="POST /ask",
        kind=2,
        start_ns=min(s.start_ns for s in spans) - 1000,
        end_ns=max(s.end_ns for s in spans) + 1000,
        service_name="weather-agent-demo",
    )
    spans = [
        dataclasses.replace(s, trace_id=trace_id, parent_span_id=request.span_id) for s in spans
    ]
    logs = [dataclasses.replace(r, trace_id=trace_id) for r in logs]
    (run,) = convert_trace([request, *spans], logs)
    assert run.root_span_id == request.span_id
    assert run.agent_name == "POST /ask"
    assert_weather_run(run, "genai", rebuilt=True)
    weather, population = run.result.tool_calls
    assert weather.result == '{"city": "San Francisco", "weather": "foggy", "temperature_c": 14}'
    # no tool spans: the duration is the gap between the two LLM calls
    first, second = sorted(spans, key=lambda s: s.start_ns)
    assert weather.duration_ms == pytest.approx((second.start_ns - first.end_ns) / 1e6)
    assert population.error.startswith("error: TimeoutError")


def test_v136_chat_spans_each_in_its_own_trace() -> None:
    """As recorded: each chat call is a trace of its own, so each is a run of its own."""
    spans = load_spans(V136_SPANS + ".pb")
    logs = load_logs(V136_LOGS)
    runs = {}
    for trace_id, trace_spans in by_trace(spans).items():
        (run,) = convert_trace(trace_spans, [r for r in logs if r.trace_id == trace_id])
        runs[run.result.total_llm_calls and run.llm_calls[0].finish_reason] = run
    asking, answering = runs["tool_calls"], runs["stop"]
    for run in (asking, answering):
        assert run.query == QUESTION
        assert run.convention == "genai"
        assert run.result.total_llm_calls == 1
        assert run.agent_name == "weather-agent-demo"  # the service's name, not the operation's
    # the first call asked for both tools; their results are in the other trace
    assert [(c.tool_name, c.tool_call_id, c.round) for c in asking.result.tool_calls] == [
        ("get_weather", WEATHER_ID, 1),
        ("get_population", POPULATION_ID, 1),
    ]
    assert asking.result.tool_calls[0].arguments == {"city": "San Francisco"}
    assert asking.result.response == ""
    assert (asking.input_tokens, asking.output_tokens) == (207, 46)
    # the second call answered; tools asked before the run are history, not its calls
    assert answering.result.response == ANSWER
    assert answering.result.tool_calls == []
    assert [m["role"] for m in answering.llm_calls[0].input_messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
    ]


def test_v136_chat_spans_without_their_logs_degrade_to_no_content() -> None:
    spans = load_spans(V136_SPANS + ".json")
    for trace_spans in by_trace(spans).values():
        (run,) = convert_trace(trace_spans)
        assert run.query == "" and run.result.response == ""
        assert run.result.tool_calls == []
        assert run.result.total_llm_calls == 1
        assert run.llm_calls[0].input_messages == []


def test_collector_file_exporter_lines() -> None:
    spans = load_spans("generated-collector-fileexporter-style.jsonl")
    conventions = []
    for trace_spans in by_trace(spans).values():
        (run,) = convert_trace(trace_spans)
        assert_weather_run(run, run.convention)
        conventions.append(run.convention)
    assert sorted(conventions) == ["genai", "openinference", "openllmetry"]


def test_plain_otlp_example_has_no_run() -> None:
    assert convert_trace(load_spans("otlp-proto-examples-trace.json")) == []
