"""LangGraph's prebuilt ``create_react_agent`` (graph named ``LangGraph``, model node named
``agent``), captured by ``tests/fixtures/frameworks/langgraph/capture_react.py``: the graph is
one run, its model steps are LLM rounds (not agent runs), whatever the instrumentation.

``multi_round``, ``parallel`` and ``provider_error`` are tested with every framework's in
``test_framework_shapes.py``; this file holds what the prebuilt agent does its own way.
"""

from __future__ import annotations

import pytest
from framework_helpers import QUESTIONS, assert_one_line_error, runs_of, top_runs

FRAMEWORK = "langgraph"
INSTRUMENTATIONS = ["openinference-react", "openllmetry-react"]


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_a_tool_that_raises_fails_the_invocation(instrumentation: str) -> None:
    [run] = top_runs(runs_of(FRAMEWORK, instrumentation, "tool_error"))
    assert run.query == QUESTIONS["tool_error"]
    assert run.result.status == "failed" and run.error and "unknown city: Atlantis" in run.error
    assert "\n" not in run.error
    [call] = run.result.tool_calls
    assert (call.tool_name, call.arguments, call.round) == ("get_weather", {"city": "Atlantis"}, 1)
    assert_one_line_error(call, "unknown city: Atlantis")
