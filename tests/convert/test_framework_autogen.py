"""AutoGen AgentChat's captures: what its own spans record (no content at all), what
OpenLLMetry's OpenAI instrumentation adds, streaming without usage, and the team of two as
one run with a handoff
(``tests/fixtures/frameworks/autogen/README.md``). The shapes it gives the common way are in
``test_framework_shapes.py``."""

from __future__ import annotations

import pytest
from framework_helpers import QUESTIONS, final_text, runs_of, sub_runs, the_top_run

from tracereplay.convert.content import content_setting, records_no_content


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


def test_team_is_one_run_with_a_handoff() -> None:
    """Inside the application's span, the team's run is one send of AutoGen's runtime, its
    agents' turns delivered beside it under the same team key: the first agent's run is the
    team's (the question, the last speaker's answer), the forecaster a handoff with its own
    rounds and tool call."""
    runs = runs_of("autogen", "openllmetry", "team")
    top = the_top_run(runs)
    assert (top.agent_name, top.query) == ("weather_agent", QUESTIONS["handoff"])
    assert top.result.response == "Snow is likely in Zurich tomorrow, -2°C."
    assert top.result.tool_calls == [] and top.result.total_llm_calls == 1
    (forecaster,) = sub_runs(runs, top)
    assert forecaster.agent_name == "forecaster"
    (call,) = forecaster.result.tool_calls
    assert (call.tool_name, call.arguments) == ("get_forecast", {"city": "Zurich", "days": 1})
    assert call.result == "Zurich tomorrow: snow, -2°C"
    assert forecaster.result.total_llm_calls == 2


def test_native_team_keeps_its_two_agents() -> None:
    """Natively (no LLM span) the first agent is still the team's run, not folded away."""
    runs = runs_of("autogen", "native", "team")
    top = the_top_run(runs)
    assert top.agent_name == "weather_agent"
    assert [r.agent_name for r in sub_runs(runs, top)] == ["forecaster"]


def test_agent_tool_is_a_tool_call_and_a_sub_run() -> None:
    """``AgentTool``: the tool call (argument ``task``, result AgentTool's ``<source>: <text>``)
    and the forecaster's own run under it."""
    runs = runs_of("autogen", "openllmetry", "sub_agent")
    top = the_top_run(runs)
    (call,) = top.result.tool_calls
    assert (call.tool_name, call.arguments) == (
        "forecaster",
        {"task": "Forecast for Zurich, 1 day"},
    )
    assert call.result == "forecaster: Snow is likely in Zurich tomorrow, -2°C."
    (sub,) = sub_runs(runs, top)
    assert (sub.agent_name, sub.query) == ("forecaster", "Forecast for Zurich, 1 day")
    assert [c.tool_name for c in sub.result.tool_calls] == ["get_forecast"]
    assert top.result.response == final_text(QUESTIONS["sub_agent"])


def test_swarm_handoff_is_one_run_with_a_handoff() -> None:
    """A ``Swarm``: the entry agent calls AgentChat's handoff tool ``transfer_to_forecaster``,
    whose result no instrumentation records (the forecaster gets it as a user message); the
    forecaster is the handoff, and its answer the run's."""
    runs = runs_of("autogen", "openllmetry", "handoff")
    top = the_top_run(runs)
    assert (top.agent_name, top.query) == ("weather_agent", QUESTIONS["handoff"])
    assert [(c.tool_name, c.result) for c in top.result.tool_calls] == [
        ("transfer_to_forecaster", "")
    ]
    assert top.result.response == "Snow is likely in Zurich tomorrow, -2°C."
    (forecaster,) = sub_runs(runs, top)
    assert [c.tool_name for c in forecaster.result.tool_calls] == ["get_forecast"]
