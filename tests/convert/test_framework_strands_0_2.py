"""strands-agents 0.2's own traces of the weather agent (what pip resolves for
``strands-agents[openai]`` beside the newest opentelemetry-sdk), where they differ from 1.x.

Payloads: ``tests/fixtures/frameworks/strands_0_2/payloads/native/<shape>/``, captured by
``tests/fixtures/frameworks/strands_0_2/capture.py`` (the README there says what 0.2 records).
The shared shapes are tested in ``test_framework_shapes.py``; here what 0.2 does its own way:

- a raising tool is no span error: the ``Tool: get_weather`` span ends OK with ``tool.status =
  error`` and the result ``Error: unknown city: Atlantis``; the flag makes it a tool error;
- on ``provider_error`` the failed round's cycle span is never exported: its ``Model invoke``
  span names a parent the trace does not hold, and still is the agent's round 2;
- an agent called as a tool starts a trace of its own: the forecaster's run is no sub-run
  (nothing links the two traces), and the caller's tool call holds its answer.
"""

from __future__ import annotations

from framework_helpers import (
    QUESTIONS,
    assert_llm_rounds,
    assert_tool_calls,
    final_text,
    load_folder,
    payload_dir,
    runs_of,
    the_top_run,
    weather,
)

FRAMEWORK = "strands_0_2"


def test_raising_tool_is_a_tool_error_by_its_status_flag() -> None:
    spans, _ = load_folder(payload_dir(FRAMEWORK, "native", "tool_error"))
    (tool,) = [s for s in spans if s.name == "Tool: get_weather"]
    assert tool.status_code != 2 and tool.attributes["tool.status"] == "error"
    run = the_top_run(runs_of(FRAMEWORK, "native", "tool_error"))
    (call,) = run.result.tool_calls
    assert call.result == "Error: unknown city: Atlantis"
    assert call.error == "unknown city: Atlantis"
    assert run.result.status == "success"


def test_failed_round_whose_cycle_was_never_exported_is_the_agents() -> None:
    spans, _ = load_folder(payload_dir(FRAMEWORK, "native", "provider_error"))
    ids = {s.span_id for s in spans}
    orphans = [s for s in spans if s.parent_span_id and s.parent_span_id not in ids]
    assert [s.name for s in orphans] == ["Model invoke"]
    runs = runs_of(FRAMEWORK, "native", "provider_error")
    assert [r.agent_name for r in runs] == ["weather_agent"]
    assert runs[0].result.total_llm_calls == 2 and runs[0].result.status == "failed"


def test_agent_as_tool_is_a_trace_of_its_own() -> None:
    key, sub_key = QUESTIONS["sub_agent"], weather.SUB_AGENT_QUESTION
    runs = runs_of(FRAMEWORK, "native", "sub_agent")
    assert {r.agent_name: r.parent_run_id for r in runs} == {
        "weather_agent": None,
        "forecaster": None,
    }
    top = next(r for r in runs if r.agent_name == "weather_agent")
    sub = next(r for r in runs if r.agent_name == "forecaster")
    assert top.trace_id != sub.trace_id
    assert top.query == key and top.result.response == final_text(key)
    (call,) = top.result.tool_calls
    assert (call.tool_name, call.arguments) == ("forecaster", {"input": sub_key})
    assert call.result == final_text(sub_key) + "\n"  # str(AgentResult)
    assert sub.query == sub_key and sub.result.response == final_text(sub_key)
    assert_llm_rounds(sub, 2)
    assert_tool_calls(sub, sub_key)
