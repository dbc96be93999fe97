"""LangGraph's prebuilt ``create_react_agent`` (graph named ``LangGraph``, model node named
``agent``), captured by ``tests/fixtures/frameworks/langgraph/capture_react.py``: the graph is
one run, its model steps are LLM rounds (not agent runs), whatever the instrumentation."""

from __future__ import annotations

import pytest
from framework_helpers import (
    FRAMEWORKS,
    QUESTIONS,
    assert_one_line_error,
    assert_simple_run,
    convert_folder,
    top_runs,
)

INSTRUMENTATIONS = ["openinference-react", "openllmetry-react"]


def runs_of(instrumentation: str, shape: str):
    return convert_folder(FRAMEWORKS / "langgraph" / "payloads" / instrumentation / shape)


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
@pytest.mark.parametrize("shape", ["multi_round", "parallel"])
def test_one_run_per_invocation(instrumentation: str, shape: str) -> None:
    runs = runs_of(instrumentation, shape)
    [run] = runs
    assert_simple_run(run, shape, "LangGraph")


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_a_tool_that_raises_fails_the_invocation(instrumentation: str) -> None:
    [run] = top_runs(runs_of(instrumentation, "tool_error"))
    assert run.query == QUESTIONS["tool_error"]
    assert run.result.status == "failed" and run.error and "unknown city: Atlantis" in run.error
    assert "\n" not in run.error
    [call] = run.result.tool_calls
    assert (call.tool_name, call.arguments, call.round) == ("get_weather", {"city": "Atlantis"}, 1)
    assert_one_line_error(call, "unknown city: Atlantis")


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_provider_error(instrumentation: str) -> None:
    [run] = top_runs(runs_of(instrumentation, "provider_error"))
    assert run.result.status == "failed" and run.error and "scripted provider failure" in run.error
    assert [c.result for c in run.result.tool_calls] == ["Berlin: 12°C, windy"]
