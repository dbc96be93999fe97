"""AutoGen AgentChat's captures: what its own spans record (no content at all), what
OpenLLMetry's OpenAI instrumentation adds, streaming without usage, and the team of two
(``tests/fixtures/frameworks/autogen/README.md``). The shapes it gives the common way are in
``test_framework_shapes.py``."""

from __future__ import annotations

import pytest
from framework_helpers import QUESTIONS, final_text, runs_of, the_top_run, top_runs

from tracereplay.convert.content import content_setting, records_no_content

TEAM_NOTE = "Forecaster, please give the forecast for Zurich tomorrow."


@pytest.mark.parametrize("shape", ["multi_round", "tool_error", "parallel", "streaming"])
def test_native_spans_record_no_content(shape: str) -> None:
    """AutoGen's own spans: the agent and its tools by name (and the call ids), no question,
    answer, arguments, results or model call; the run says so."""
    run = the_top_run(runs_of("autogen", "native", shape))
    assert run.agent_name == "weather_agent"
    assert run.query == "" and run.result.response == ""
    assert run.llm_calls == [] and run.models == []
    calls = run.result.tool_calls
    assert calls and all(c.arguments == {} and c.result == "" for c in calls)
    assert all(c.tool_call_id.startswith("call_") for c in calls)
    assert records_no_content(run)


def test_native_tool_error_is_recorded() -> None:
    (call,) = the_top_run(runs_of("autogen", "native", "tool_error")).result.tool_calls
    assert call.tool_name == "get_weather"
    assert call.error and "unknown city: Atlantis" in call.error and "\n" not in call.error


def test_the_setting_named_is_openllmetry() -> None:
    assert "opentelemetry-instrumentation-openai" in content_setting(["autogen-core"])


def test_with_openllmetry_the_runs_have_content() -> None:
    run = the_top_run(runs_of("autogen", "openllmetry", "multi_round"))
    assert not records_no_content(run)


def test_streaming_has_no_tokens() -> None:
    """AgentChat streams without ``stream_options.include_usage``: the calls have no usage."""
    run = the_top_run(runs_of("autogen", "openllmetry", "streaming"))
    key = QUESTIONS["streaming"]
    assert run.query == key and run.result.response == final_text(key)
    assert run.result.total_llm_calls == 3
    assert [c.tool_name for c in run.result.tool_calls] == ["get_weather", "get_forecast"]
    assert all(c.input_tokens is None for c in run.llm_calls)


def test_team_agents_are_runs_of_their_own() -> None:
    """The team has no span of its own: in the application's span, its two agents are two
    top-level runs of one trace; the forecaster's question is what the first agent said."""
    runs = runs_of("autogen", "openllmetry", "team")
    first, forecaster = top_runs(runs)
    assert first.trace_id == forecaster.trace_id
    assert (first.agent_name, first.query) == ("weather_agent", QUESTIONS["handoff"])
    assert first.result.response == TEAM_NOTE and first.result.tool_calls == []
    assert (forecaster.agent_name, forecaster.query) == ("forecaster", TEAM_NOTE)
    (call,) = forecaster.result.tool_calls
    assert (call.tool_name, call.arguments) == ("get_forecast", {"city": "Zurich", "days": 1})
    assert forecaster.result.response == "Snow is likely in Zurich tomorrow, -2°C."
