"""The general rules that read OpenInference framework instrumentations (LlamaIndex,
smolagents and any that record Python calls the same way), each on its own value."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tracereplay.convert.detect import LLM, OTHER, detect
from tracereplay.convert.forms import (
    call_envelope,
    framework_tool_output,
    is_answer_tool,
    is_object_repr,
    method_span_name,
    react_answer,
    repr_finish_reason,
    step_agent_name,
    tool_arguments,
    tool_output,
    without_injected,
)
from tracereplay.spans import Span

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
kwargs = st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=4)


@given(kwargs, st.booleans())
def test_a_call_envelope_gives_the_keyword_arguments(kw: dict, flag: bool) -> None:
    assert call_envelope({"args": [], "sanitize_inputs_outputs": flag, "kwargs": kw}) == kw
    assert call_envelope({"kwargs": kw}) == kw
    assert tool_arguments({"args": [], "kwargs": kw})[0] == kw


def test_what_is_no_call_envelope_stays_as_it_is() -> None:
    # a positional value cannot be named; a non-flag extra key is a real argument
    assert call_envelope({"args": ["Paris"], "kwargs": {}}) is None
    assert call_envelope({"kwargs": {"a": 1}, "units": "metric"}) is None
    assert call_envelope({"args": [{"city": "Paris"}], "kwargs": {"days": 2}}) == {
        "city": "Paris",
        "days": 2,
    }
    assert tool_arguments({"kwargs": "x", "city": "Paris"})[0] == {"kwargs": "x", "city": "Paris"}


def test_injected_framework_objects_are_no_arguments() -> None:
    args = {"to_agent": "forecaster", "ctx": "<workflows.context.context.Context object at 0x7f6f>"}
    assert without_injected(args) == {"to_agent": "forecaster"}
    assert without_injected({"html": "<b>bold</b>"}) == {"html": "<b>bold</b>"}


def test_a_method_span_name_is_its_agent() -> None:
    assert method_span_name("weather_agent.run") == "weather_agent"
    assert method_span_name("FunctionAgent.run") == "FunctionAgent"
    assert method_span_name("Crew._execute_core") == "Crew"
    assert method_span_name("gpt-4.1 assistant") == "gpt-4.1 assistant"
    assert method_span_name("my.agent") == "my.agent"
    assert method_span_name(".run") == ".run"


@given(st.text(alphabet=st.characters(blacklist_characters=".")))
def test_a_name_without_a_dot_is_kept(name: str) -> None:
    assert method_span_name(name) == name


def test_object_reprs_are_told_from_text() -> None:
    assert is_object_repr("AgentWorkflowStartEvent()")
    assert is_object_repr("StopEvent(result=AgentOutput(response=...))")
    assert is_object_repr("ActionStep(step_number=1, timing=...)")
    assert not is_object_repr("What is the weather in Paris (France)?")
    assert not is_object_repr("Paris(18°C) is cloudy")
    assert not is_object_repr("")


def test_a_tool_output_dump_gives_the_text_the_model_got() -> None:
    dump = (
        '{"blocks":[{"text":"Paris: 18°C, cloudy"}],"tool_name":"get_weather",'
        '"raw_input":{"args":[],"kwargs":{"city":"Paris"}},"raw_output":"Paris: 18°C, cloudy",'
        '"is_error":false}'
    )
    out = tool_output(dump)
    assert (out.text, out.error) == ("Paris: 18°C, cloudy", False)
    failed = framework_tool_output(
        {
            "content": "unknown city",
            "tool_name": "get_weather",
            "raw_output": None,
            "is_error": True,
        }
    )
    assert failed is not None and (failed.text, failed.error) == ("unknown city", True)
    assert framework_tool_output({"tool_name": "x"}) is None


def test_a_workflow_step_names_its_agent() -> None:
    value = "AgentInput(input=[...], current_agent_name='weather_agent')"
    assert step_agent_name(value) == "weather_agent"
    assert step_agent_name("no agent here") is None
    assert step_agent_name(None) is None


def test_a_react_answer_is_the_response() -> None:
    assert react_answer("Thought: I can answer.\nAnswer: It rains.") == "It rains."
    assert react_answer("The Answer: is 42") == "The Answer: is 42"
    assert react_answer("plain") == "plain"


def test_the_answer_tool() -> None:
    assert is_answer_tool("final_answer") and not is_answer_tool("get_weather")


def _llm_span(**attributes: object) -> Span:
    return Span(
        trace_id="t" * 32,
        span_id="s" * 16,
        parent_span_id="",
        name="OpenAI._prepare_chat_with_tools",
        kind=1,
        start_ns=1,
        end_ns=2,
        attributes={"openinference.span.kind": "LLM", **attributes},
    )


def test_a_request_helper_llm_span_is_no_llm_call() -> None:
    helper = _llm_span(**{"output.value": '{"messages": ["ChatMessage(...)"], "tools": []}'})
    assert detect(helper)[0] == OTHER
    call = _llm_span(
        **{"output.value": '{"messages": []}', "llm.output_messages.0.message.role": "assistant"}
    )
    assert detect(call)[0] == LLM
    assert detect(_llm_span(**{"output.value": "assistant: hi"}))[0] == LLM


def test_a_finish_reason_inside_a_response_repr() -> None:
    raw = "ChatCompletion(id='c1', choices=[Choice(finish_reason='tool_calls', index=0)])"
    assert repr_finish_reason(raw) == "tool_calls"
    assert repr_finish_reason("no reason") == "" and repr_finish_reason(None) == ""
