"""OpenInference's traces of the LlamaIndex weather agent convert to the right runs.

The payloads under ``tests/fixtures/frameworks/llama_index/payloads/openinference/`` were
captured by ``tests/fixtures/frameworks/llama_index/capture.py`` (llama-index-core 0.14.25,
openinference-instrumentation-llama-index 4.6.1; its README says what each span holds). What
every framework gives for the shared shapes is in ``test_framework_shapes.py``; this file holds
what is LlamaIndex's own:

- the run's span is ``FunctionAgent.run`` / ``AgentWorkflow.run`` (a CHAIN): the run is named
  after the agent its steps name (``current_agent_name``), never the method;
- its input is ``{"init_state", "start_event": "AgentWorkflowStartEvent()"}`` and its output a
  ``StopEvent(result=AgentOutput(...))`` repr: neither is the query or the response, which
  come from the LLM messages;
- ``OpenAI._prepare_chat_with_tools`` is an LLM span beside each real ``OpenAI.astream_chat``:
  no LLM call;
- a tool's input is ``{"kwargs": {...}}``, its output a ``ToolOutput`` JSON dump.
"""

from __future__ import annotations

from framework_helpers import (
    QUESTIONS,
    assert_llm_rounds,
    assert_plain,
    final_text,
    load_folder,
    payload_dir,
    runs_of,
    the_top_run,
)

from tracereplay.convert.detect import LLM, detect

REACT_QUESTION = "ReAct: what is the weather in Paris, and will it rain in the next two days?"


def test_one_llm_call_per_provider_call_and_finish_reasons() -> None:
    spans, _ = load_folder(payload_dir("llama_index", "openinference", "multi_round"))
    llm_kind = [s for s in spans if s.attributes.get("openinference.span.kind") == "LLM"]
    assert len(llm_kind) == 6  # three helper spans beside the three calls
    assert sum(detect(s)[0] == LLM for s in spans) == 3
    run = the_top_run(runs_of("llama_index", "openinference", "multi_round"))
    assert [c.finish_reason for c in run.llm_calls] == ["tool_calls", "tool_calls", "stop"]
    assert run.agent_name == "weather_agent"
    assert run.result.tool_calls[0].arguments == {"city": "Paris"}
    assert run.result.tool_calls[0].result == "Paris: 18°C, cloudy"


def test_agent_workflow_handoff_is_one_run_with_the_handoff_call() -> None:
    """No span stands for each agent of an AgentWorkflow: the invocation is one run, named
    after its root agent, with the handoff tool's call (without the injected Context) and the
    forecaster's rounds."""
    key = QUESTIONS["handoff"]
    runs = runs_of("llama_index", "openinference", "handoff")
    run = the_top_run(runs)
    assert len(runs) == 1
    assert run.agent_name == "weather_agent"
    assert run.query == key
    assert run.result.response == final_text(key)
    assert_llm_rounds(run, 3, tokens=False)
    handoff, forecast = run.result.tool_calls
    assert handoff.tool_name == "handoff"
    assert handoff.arguments == {
        "to_agent": "forecaster",
        "reason": "The forecaster answers forecasts.",
    }
    assert handoff.result.startswith("Agent forecaster is now handling the request")
    assert (forecast.tool_name, forecast.arguments) == (
        "get_forecast",
        {"city": "Zurich", "days": 1},
    )


def test_react_agent_response_is_the_answer() -> None:
    run = the_top_run(runs_of("llama_index", "openinference", "react"))
    assert run.agent_name == "weather_agent"
    assert run.query == REACT_QUESTION
    assert run.result.response == final_text(QUESTIONS["multi_round"])
    assert_plain(run.result.response)
    assert [(c.tool_name, c.arguments) for c in run.result.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_forecast", {"city": "Paris", "days": 2}),
    ]
    assert [c.result for c in run.result.tool_calls] == [
        "Paris: 18°C, cloudy",
        "Paris next 2 day(s): rain likely",
    ]
    assert_llm_rounds(run, 3, tokens=False)
