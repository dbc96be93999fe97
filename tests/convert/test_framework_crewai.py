"""OpenInference traces of the CrewAI weather agent convert to the right runs.

The payloads under ``tests/fixtures/frameworks/crewai/payloads/openinference/`` were captured by
``tests/fixtures/frameworks/crewai/capture.py`` (crewai 1.15.30, openinference-instrumentation-
crewai 1.1.21 and -openai 0.1.66; its README says what each span holds). The shapes every
framework shares are in ``test_framework_shapes.py``; this file holds CrewAI's own:

- the agent is named by its span's ``graph.node.id`` (its role), not the span name
  ``weather_agent._execute_core``; the crew span (``Crew_<id>.kickoff``) is a wrapper, folded;
- ``agent_kickoff``: ``Agent.kickoff(question)`` alone (no crew): the ``weather_agent.kickoff``
  span is the run, its query the ``{"messages": question}`` input;
- ``streaming``: the first crew span ends with an object repr as output, the work is in a
  second crew span: one run, the repr never its response;
- ``crew_of_two``: the forecaster's task, then the weather agent's (the first's output as its
  context): the first agent is the top run, with the crew's question and final answer; the
  second is a handoff sub-run; the task span's input (``_execute_core``'s bound arguments) is
  no question, so the second gets the crew's.
"""

from __future__ import annotations

import pytest
from framework_helpers import (
    QUESTIONS,
    assert_llm_rounds,
    assert_plain,
    assert_simple_run,
    assert_tool_calls,
    final_text,
    runs_of,
    sub_runs,
    the_top_run,
)

FRAMEWORK, INSTRUMENTATION = "crewai", "openinference"
CREW_QUESTION = QUESTIONS["handoff"]
CREW_ANSWER = "The forecaster says: snow is likely in Zurich tomorrow, -2°C."


@pytest.mark.parametrize("shape", ["multi_round", "tool_error", "parallel", "streaming"])
def test_the_agent_is_named_by_its_role_and_the_crew_is_folded(shape: str) -> None:
    runs = runs_of(FRAMEWORK, INSTRUMENTATION, shape)
    assert [r.agent_name for r in runs] == ["weather_agent"]
    assert runs[0].root_span_id  # the task span's run, the crew folded into it


def test_an_agent_kicked_off_alone_is_the_run() -> None:
    runs = runs_of(FRAMEWORK, INSTRUMENTATION, "agent_kickoff")
    run = the_top_run(runs)
    assert len(runs) == 1
    # same question and script as multi_round, asked of the agent without a crew
    assert_simple_run(run, "multi_round", "weather_agent")


def test_a_tool_error_is_what_the_model_was_told() -> None:
    (call,) = the_top_run(runs_of(FRAMEWORK, INSTRUMENTATION, "tool_error")).result.tool_calls
    assert call.result == "Error executing tool: unknown city: Atlantis"
    assert call.error == "ValueError: unknown city: Atlantis"


def test_a_streaming_kickoff_has_one_run_and_no_object_repr() -> None:
    runs = runs_of(FRAMEWORK, INSTRUMENTATION, "streaming")
    (run,) = runs
    assert "object at 0x" not in run.result.response
    assert_plain(run.result.response)


def test_a_crew_of_two_is_its_first_agent_with_the_second_as_a_handoff() -> None:
    runs = runs_of(FRAMEWORK, INSTRUMENTATION, "crew_of_two")
    top = the_top_run(runs)
    assert top.agent_name == "forecaster", top.agent_name
    assert top.query == CREW_QUESTION
    assert top.result.response == CREW_ANSWER  # the crew's final answer
    assert top.result.status == "success"
    assert_llm_rounds(top, 2)
    assert [(c.tool_name, c.arguments, c.result) for c in top.result.tool_calls] == [
        ("get_forecast", {"city": "Zurich", "days": 1}, "Zurich tomorrow: snow, -2°C")
    ]
    (second,) = sub_runs(runs, top)
    assert second.agent_name == "weather_agent"
    assert second.query == CREW_QUESTION  # its task span records no question of its own
    assert second.result.response == CREW_ANSWER
    assert_llm_rounds(second, 1)
    assert second.result.tool_calls == []
    assert {c.span_id for c in top.llm_calls}.isdisjoint(c.span_id for c in second.llm_calls)


def test_provider_error_keeps_the_call_made_before_it() -> None:
    run = the_top_run(runs_of(FRAMEWORK, INSTRUMENTATION, "provider_error"))
    assert run.result.status == "failed"
    assert "scripted provider failure" in (run.error or "")
    assert_tool_calls(run, QUESTIONS["provider_error"])


@pytest.mark.parametrize("shape", ["multi_round", "tool_error"])
def test_the_crew_instrumentation_alone_gives_the_run_without_llm_calls(shape: str) -> None:
    """``CrewAIInstrumentor`` alone (OpenInference's CrewAI README) records no model call: the
    run has its agent, question, answer and tool calls (the tools' own output, no call ids,
    round 0), and no LLM calls."""
    runs = runs_of(FRAMEWORK, "openinference-crew-only", shape)
    run = the_top_run(runs)
    assert len(runs) == 1
    assert run.agent_name == "weather_agent"
    assert run.query == QUESTIONS[shape]
    assert run.result.response == final_text(QUESTIONS[shape])
    assert run.result.total_llm_calls == 0 and run.llm_calls == []
    assert_tool_calls(run, QUESTIONS[shape], rounds=False, ids=False)
