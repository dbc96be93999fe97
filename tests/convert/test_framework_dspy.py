"""OpenInference's traces of a DSPy ``ReAct`` agent convert to the right runs.

The payloads under ``tests/fixtures/frameworks/dspy/payloads/openinference/`` were captured by
``tests/fixtures/frameworks/dspy/capture.py`` (dspy 3.4.1, openinference-instrumentation-dspy
0.1.48; its README says what each span holds). DSPy has no native tool calling here: ReAct's
model answers in the adapter's text fields, so the tool calls come from the TOOL spans, without
call ids. What issue 48 found wrong, each now right:

- the question was the LM prompt (``[[ ## question ## ]] ...``): it is ``ReAct.forward``'s
  ``input_args``;
- the agent was ``ReAct.forward`` and the tools ``get_weather.__call__``: methods taken off;
- the arguments were ``{"kwargs": {...}}``: the call envelope taken off; the results were the
  returned text as JSON (quoted): decoded;
- ``finish`` (ReAct's own end-of-run tool, which the model picks) is a tool call of the last
  step, as smolagents' ``final_answer`` is.
"""

from __future__ import annotations

from framework_helpers import QUESTIONS, final_text, runs_of, sub_runs, the_top_run, weather


def test_react_run() -> None:
    key = QUESTIONS["multi_round"]
    run = the_top_run(runs_of("dspy", "openinference", "multi_round"))
    assert (run.agent_name, run.query, run.result.response) == ("ReAct", key, final_text(key))
    assert [(c.round, c.tool_name, c.arguments, c.result) for c in run.result.tool_calls] == [
        (1, "get_weather", {"city": "Paris"}, "Paris: 18°C, cloudy"),
        (2, "get_forecast", {"city": "Paris", "days": 2}, "Paris next 2 day(s): rain likely"),
        (3, "finish", {}, "Completed."),
    ]
    # three ReAct steps and the extract step
    assert run.result.total_llm_calls == 4
    assert all(c.model == "gpt-4o-mini" for c in run.llm_calls)
    assert all(c.input_tokens is None for c in run.llm_calls)  # DSPy's LM span records none


def test_tool_error_and_provider_error() -> None:
    run = the_top_run(runs_of("dspy", "openinference", "tool_error"))
    failed = run.result.tool_calls[0]
    assert "unknown city: Atlantis" in (failed.error or "")
    assert run.result.status == "success"
    broken = the_top_run(runs_of("dspy", "openinference", "provider_error"))
    assert broken.result.status == "failed" and "scripted provider failure" in (broken.error or "")
    assert broken.result.response == ""  # a ReAct step's text is no answer
    assert broken.result.total_llm_calls == 2


def test_a_react_module_run_by_a_tool_is_a_sub_run() -> None:
    runs = runs_of("dspy", "openinference", "sub_agent")
    top = the_top_run(runs)
    call = top.result.tool_calls[0]
    assert (call.tool_name, call.arguments) == ("forecaster", {"input": weather.SUB_AGENT_QUESTION})
    assert call.result == final_text(weather.SUB_AGENT_QUESTION)
    (sub,) = sub_runs(runs, top)
    assert sub.query == weather.SUB_AGENT_QUESTION
    assert sub.result.response == final_text(weather.SUB_AGENT_QUESTION)
