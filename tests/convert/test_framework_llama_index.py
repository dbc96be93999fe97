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
- a tool's input is ``{"kwargs": {...}}``, its output a ``ToolOutput`` JSON dump;
- an ``AgentWorkflow`` has no span per agent: its steps name the agent they ran for, and a
  handoff's agent is a sub-run from its first step on.
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
    sub_runs,
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


def test_agent_workflow_handoff_is_a_sub_run_of_the_root_agent() -> None:
    """No span stands for each agent of an AgentWorkflow, but each step names the agent it ran
    for: the root agent's run has its own round and the handoff call (without the injected
    Context); the forecaster is a handoff sub-run with its rounds and tool call, whose answer
    is the invocation's."""
    key = QUESTIONS["handoff"]
    runs = runs_of("llama_index", "openinference", "handoff")
    top = the_top_run(runs)
    assert len(runs) == 2
    assert top.agent_name == "weather_agent"
    assert top.query == key
    assert top.result.response == final_text(key)
    assert_llm_rounds(top, 1, tokens=False)
    (handoff,) = top.result.tool_calls
    assert handoff.tool_name == "handoff"
    assert handoff.arguments == {
        "to_agent": "forecaster",
        "reason": "The forecaster answers forecasts.",
    }
    assert handoff.result.startswith("Agent forecaster is now handling the request")
    assert handoff.tool_call_id == "call_0001"
    (sub,) = sub_runs(runs, top)
    assert sub.agent_name == "forecaster"
    assert sub.query == key
    assert sub.result.response == final_text(key)
    assert_llm_rounds(sub, 2, tokens=False)
    assert [(c.tool_name, c.arguments) for c in sub.result.tool_calls] == [
        ("get_forecast", {"city": "Zurich", "days": 1})
    ]


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
