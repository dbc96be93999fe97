"""Microsoft Agent Framework's captures: with sensitive data off (the default) no content, and
the workflow of two agents as one run with a handoff
(``tests/fixtures/frameworks/agent_framework/README.md``). The shapes it gives the common way
(sensitive data on) are in ``test_framework_shapes.py``."""

from __future__ import annotations

import pytest
from framework_helpers import QUESTIONS, final_text, runs_of, sub_runs, the_top_run

from tracereplay.convert.content import content_setting, records_no_content


@pytest.mark.parametrize("shape", ["multi_round", "tool_error", "parallel", "streaming"])
def test_default_records_no_content(shape: str) -> None:
    """Sensitive data off: agents, model calls (model, tokens) and tools by name, no question,
    answer, arguments, results or messages; the run says so."""
    run = the_top_run(runs_of("agent_framework", "default", shape))
    assert run.agent_name == "weather_agent"
    assert run.query == "" and run.result.response == ""
    assert run.result.total_llm_calls >= 2 and run.models
    assert all(c.input_tokens for c in run.llm_calls)
    assert all(c.arguments == {} and c.result == "" for c in run.result.tool_calls)
    assert records_no_content(run)
    assert "enable_sensitive_data=True" in content_setting(["agent_framework"])


def test_sensitive_tool_error() -> None:
    """The model gets the framework's generic error text; the span keeps the exception."""
    run = the_top_run(runs_of("agent_framework", "sensitive", "tool_error"))
    (call,) = run.result.tool_calls
    assert call.arguments == {"city": "Atlantis"}
    assert call.error and "unknown city: Atlantis" in call.error
    assert run.result.response == final_text(QUESTIONS["tool_error"])


def test_workflow_is_one_run_with_a_handoff() -> None:
    """``workflow.run`` is a workflow: its first agent's run is the invocation's (the question,
    the last agent's answer), the forecaster a handoff with its own rounds and tool call."""
    runs = runs_of("agent_framework", "sensitive", "workflow")
    top = the_top_run(runs)
    assert (top.agent_name, top.query) == ("weather_agent", QUESTIONS["handoff"])
    assert top.result.response == "Snow is likely in Zurich tomorrow, -2°C."
    (forecaster,) = sub_runs(runs, top)
    assert forecaster.agent_name == "forecaster"
    (call,) = forecaster.result.tool_calls
    assert (call.tool_name, call.arguments) == ("get_forecast", {"city": "Zurich", "days": 1})
    assert call.result == "Zurich tomorrow: snow, -2°C"
    assert forecaster.result.total_llm_calls == 2
