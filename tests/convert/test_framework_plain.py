"""What a plain OpenAI-client loop records when only the LLM client is instrumented
(``tests/fixtures/frameworks/plain``), beyond the shared shapes of ``test_framework_shapes.py``.

There is no tool span: every tool call of the run is rebuilt from the LLM messages (the
assistant's tool calls of one round, the tool messages of the next request), its error read
from the result the loop gave the model (``Error: ...``).
"""

from __future__ import annotations

import pytest
from framework_helpers import QUESTIONS, load_folder, payload_dir, runs_of

from tracereplay.convert.tools import tool_execution_spans


@pytest.mark.parametrize("instrumentation", ["openai_v2", "openlit"])
def test_no_tool_spans_and_tool_calls_from_the_messages(instrumentation: str) -> None:
    spans, _ = load_folder(payload_dir("plain", instrumentation, "multi_round"))
    assert tool_execution_spans(spans) == []
    (run,) = runs_of("plain", instrumentation, "multi_round")
    calls = run.result.tool_calls
    assert [(c.round, c.tool_name, c.arguments) for c in calls] == [
        (1, "get_weather", {"city": "Paris"}),
        (2, "get_forecast", {"city": "Paris", "days": 2}),
    ]
    assert [c.result for c in calls] == ["Paris: 18°C, cloudy", "Paris next 2 day(s): rain likely"]


@pytest.mark.parametrize("instrumentation", ["openai_v2", "openlit"])
def test_the_tool_error_is_the_result_the_loop_gave_the_model(instrumentation: str) -> None:
    (run,) = runs_of("plain", instrumentation, "tool_error")
    (call,) = run.result.tool_calls
    assert call.result == "Error: unknown city: Atlantis"
    assert call.error == "Error: unknown city: Atlantis"


def test_openlit_records_no_input_messages_on_a_failed_request() -> None:
    """The tool call before the provider failed is known from round 1's answer; its result
    only the failed request carried, which OpenLIT records without messages."""
    (run,) = runs_of("plain", "openlit", "provider_error")
    assert run.query == QUESTIONS["provider_error"]
    assert run.result.status == "failed" and "scripted provider failure" in (run.error or "")
    (call,) = run.result.tool_calls
    assert (call.tool_name, call.arguments, call.result) == ("get_weather", {"city": "Berlin"}, "")
