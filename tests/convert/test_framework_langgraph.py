"""LangGraph (LangChain v1 ``create_agent``) under both LangChain instrumentations, converted
into the right runs.

Payloads: ``tests/fixtures/frameworks/langgraph/payloads/<instrumentation>/<shape>/``, captured
by ``tests/fixtures/frameworks/langgraph/capture.py`` (its README says what each span holds):

- ``openinference``: openinference-instrumentation-langchain (``LangChainInstrumentor``);
- ``openllmetry``: opentelemetry-instrumentation-langchain (Traceloop).

What every framework gives for the shared shapes is tested in ``test_framework_shapes.py``;
this file holds what is LangGraph's own. One invocation is one top-level run: no second run
comes from a wrapper span (the graph's workflow/chain span, OpenLLMetry's ``invoke_agent`` +
``<name>.workflow`` pair, or the ``create_agent`` spans OpenLLMetry emits in traces of their
own when the agents are built).

``sub_agent`` is the ``forecaster`` graph invoked from a ``forecaster`` tool; ``handoff`` is a
parent ``StateGraph`` (``weather_team``) whose ``weather_agent`` node hands over to the
``forecaster`` node with ``transfer_to_forecaster`` (``Command(graph=Command.PARENT)``).

How the instrumentations record the shared shapes:

- ``tool_error``: openinference: status ERROR, message ``"ValueError('unknown city:
  Atlantis')Traceback ..."``, plus an ``exception`` event (ValueError / ``unknown city:
  Atlantis``); openllmetry: status ERROR ``unknown city: Atlantis``, ``error.type`` ValueError,
  ``exception`` event. The call's error is one line either way.
- ``provider_error``: openinference's status message is ``repr(error)`` + the whole traceback
  (the run's error keeps one line); the failed round's span has only the request model
  (``gpt-4o-mini``) and no usage.
- ``sub_agent``: openinference marks the forecaster graph CHAIN, not AGENT (its kind is AGENT
  only when "agent" is in the run name); its metadata says
  ``ls_integration=langchain_create_agent``, ``lc_agent_name=forecaster``. openllmetry: an
  empty ``invoke_agent forecaster`` span next to the ``execute_task forecaster`` task span
  that holds its work.
"""

from __future__ import annotations

import pytest
from framework_helpers import (
    QUESTIONS,
    assert_llm_rounds,
    assert_plain,
    assert_tool_calls,
    final_text,
    runs_of,
    sub_runs,
    the_top_run,
)

FRAMEWORK = "langgraph"
INSTRUMENTATIONS = ("openinference", "openllmetry")
AGENT = "weather_agent"
SUB_AGENT = "forecaster"


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_tool_arguments_and_results_are_the_tools_own(instrumentation: str) -> None:
    """The instrumentations record a single-argument tool's input as the bare value
    (openinference ``input.value`` = ``Paris``) or a Python repr (openllmetry ``input_str``
    = ``{'city': 'Paris'}``), and the result as a serialized ``ToolMessage``: the run must hold
    the argument dict and the tool's own output text."""
    run = the_top_run(runs_of(FRAMEWORK, instrumentation, "multi_round"))
    calls = run.result.tool_calls
    assert [(c.tool_name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_forecast", {"city": "Paris", "days": 2}),
    ]
    assert [c.result for c in calls] == ["Paris: 18°C, cloudy", "Paris next 2 day(s): rain likely"]
    assert [c.tool_call_id for c in calls] == ["call_0001", "call_0003"]
    assert_plain(run.result.response)


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS)
def test_handoff(instrumentation: str) -> None:
    runs = runs_of(FRAMEWORK, instrumentation, "handoff")
    top = the_top_run(runs)
    key = QUESTIONS["handoff"]

    # The invocation is one run headed by the first agent, weather_agent (the parent graph
    # `weather_team` is a wrapper, not a run); its answer is the invocation's final text, which
    # the forecaster gave.
    assert top.agent_name == AGENT, top.agent_name
    assert top.query == key, top.query
    assert_plain(top.query)
    assert top.result.response == final_text(key), top.result.response
    # The handoff is a `ParentCommand` exception on the weather_agent spans (openinference:
    # status OK + `exception` event; openllmetry: status ERROR "Command(graph=...)"): control
    # flow, not a failure.
    assert top.result.status == "success", (top.result.status, top.error)
    assert top.error is None, top.error

    # weather_agent's own round: the transfer_to_forecaster call (no arguments). The tool
    # returns a Command, not text, so only its name, id and round are asserted.
    assert_llm_rounds(top, 1)
    (transfer,) = top.result.tool_calls
    assert transfer.tool_name == "transfer_to_forecaster", transfer.tool_name
    assert transfer.arguments == {}, transfer.arguments
    assert transfer.round == 1, transfer.round
    assert transfer.tool_call_id == "call_0001", transfer.tool_call_id
    assert transfer.error is None, transfer.error

    # The forecaster is a sub-run of the top run with its own rounds and tool call.
    subs = sub_runs(runs, top)
    assert len(subs) == 1, [(r.agent_name, r.query) for r in subs]
    assert len(runs) == 2, [(r.agent_name, r.parent_run_id) for r in runs]
    (sub,) = subs
    assert sub.parent_run_id == top.run_id
    assert sub.agent_name == SUB_AGENT, sub.agent_name
    assert sub.result.response == final_text(key), sub.result.response
    assert sub.result.status == "success", (sub.result.status, sub.error)
    assert_llm_rounds(sub, 2)
    # In the sub-run, get_forecast is round 1 (the script's round 2 of the conversation).
    assert_tool_calls(sub, key, skip=("transfer_to_forecaster",), rounds=False)
    (forecast,) = sub.result.tool_calls
    assert forecast.round == 1, forecast.round
    assert {c.span_id for c in top.llm_calls}.isdisjoint(c.span_id for c in sub.llm_calls)
