"""OpenInference's traces of the smolagents weather agent convert to the right runs.

The payloads under ``tests/fixtures/frameworks/smolagents/payloads/openinference/`` were
captured by ``tests/fixtures/frameworks/smolagents/capture.py`` (smolagents 1.26.0,
openinference-instrumentation-smolagents 0.1.43; its README says what each span holds). What
every framework gives for the shared shapes is in ``test_framework_shapes.py``; this file holds
what is smolagents' own:

- the agent span is named ``<agent name>.run`` and records no name attribute: the run is named
  ``weather_agent``;
- a tool's input is ``Tool.__call__``'s bound arguments, ``{"args": [], "sanitize_inputs_outputs":
  true, "kwargs": {...}}``: the arguments are the ``kwargs``;
- the agent ends by calling its ``final_answer`` tool: a tool call, whose argument is also the
  response;
- the finish reason is only inside the ``raw`` repr of the response (read from there), and not
  recorded at all when the model streams.
"""

from __future__ import annotations

from framework_helpers import (
    QUESTIONS,
    SCRIPT,
    assert_llm_rounds,
    final_text,
    runs_of,
    sub_runs,
    the_top_run,
    weather,
)

CODE_QUESTION = "Code it: what is the weather in Paris, and will it rain in the next two days?"


def test_final_answer_is_a_tool_call_and_the_response() -> None:
    key = QUESTIONS["multi_round"]
    run = the_top_run(runs_of("smolagents", "openinference", "multi_round"))
    assert [c.tool_name for c in run.result.tool_calls] == [
        "get_weather",
        "get_forecast",
        "final_answer",
    ]
    answer = run.result.tool_calls[-1]
    assert (answer.round, answer.arguments) == (3, {"answer": final_text(key)})
    assert answer.result == final_text(key)
    assert run.result.response == final_text(key)
    assert len(run.llm_calls) == len(SCRIPT[key])
    # only inside the provider response's repr (read from there); the final answer is a call
    assert [c.finish_reason for c in run.llm_calls] == ["tool_calls"] * 3
    streamed = the_top_run(runs_of("smolagents", "openinference", "streaming"))
    assert [c.finish_reason for c in streamed.llm_calls] == ["", "", ""]  # not recorded


def test_managed_agent_is_a_sub_run_and_a_tool_call() -> None:
    """The manager calls the managed agent with ``task``: one tool call of the manager (the
    forecaster's answer its result); the forecaster a sub-run whose query is smolagents'
    managed-agent task template around the task."""
    key = QUESTIONS["sub_agent"]
    runs = runs_of("smolagents", "openinference", "sub_agent")
    top = the_top_run(runs)
    call, answer = top.result.tool_calls
    assert answer.tool_name == "final_answer"
    assert (call.tool_name, call.arguments) == ("forecaster", {"task": weather.SUB_AGENT_QUESTION})
    assert call.result == final_text(weather.SUB_AGENT_QUESTION)
    assert call.tool_call_id == "call_0001"
    assert top.result.response == final_text(key)
    (sub,) = sub_runs(runs, top)
    assert sub.agent_name == "forecaster"
    assert weather.SUB_AGENT_QUESTION in sub.query
    assert sub.result.response == final_text(weather.SUB_AGENT_QUESTION)
    assert [(c.tool_name, c.arguments) for c in sub.result.tool_calls] == [
        ("get_forecast", {"city": "Zurich", "days": 1}),
        ("final_answer", {"answer": final_text(weather.SUB_AGENT_QUESTION)}),
    ]


def test_code_agent_tool_calls_come_from_its_tool_spans() -> None:
    run = the_top_run(runs_of("smolagents", "openinference", "code_agent"))
    assert run.agent_name == "weather_agent"
    assert run.query == CODE_QUESTION
    assert run.result.response == final_text(QUESTIONS["multi_round"])
    assert [(c.round, c.tool_name, c.arguments, c.result) for c in run.result.tool_calls] == [
        (1, "get_weather", {"city": "Paris"}, "Paris: 18°C, cloudy"),
        (2, "get_forecast", {"city": "Paris", "days": 2}, "Paris next 2 day(s): rain likely"),
        # called in the model's code: named by the tool's declared parameters
        (
            3,
            "final_answer",
            {"answer": final_text(QUESTIONS["multi_round"])},
            final_text(QUESTIONS["multi_round"]),
        ),
    ]
    assert_llm_rounds(run, 3)


def test_provider_error_loses_the_agent_span() -> None:
    """OpenInference never ends the agent span of a run that raised: what is left are its steps,
    the failed one a failed run with the provider's error."""
    runs = runs_of("smolagents", "openinference", "provider_error")
    assert "weather_agent" not in [r.agent_name for r in runs]
    failed = [r for r in runs if r.result.status == "failed"]
    assert len(failed) == 1 and "scripted provider failure" in (failed[0].error or "")
