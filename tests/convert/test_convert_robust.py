"""convert_trace never raises, whatever values the known attributes hold."""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracereplay.convert import convert_trace
from tracereplay.models.run import Run
from tracereplay.spans import LogRecord, Span

KEYS = [
    "openinference.span.kind",
    "traceloop.span.kind",
    "gen_ai.operation.name",
    "llm.request.type",
    "gen_ai.agent.name",
    "agent.name",
    "traceloop.entity.name",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.prompt",
    "gen_ai.completion",
    "gen_ai.prompt.0.role",
    "gen_ai.prompt.0.content",
    "gen_ai.prompt.0.tool_calls.0.arguments",
    "gen_ai.prompt.1.tool_call_id",
    "gen_ai.completion.0.role",
    "gen_ai.completion.0.content",
    "gen_ai.completion.0.finish_reason",
    "gen_ai.completion.0.tool_calls.0.id",
    "gen_ai.completion.0.tool_calls.0.name",
    "gen_ai.completion.0.tool_calls.x.name",
    "llm.input_messages.0.message.role",
    "llm.input_messages.0.message.content",
    "llm.input_messages.0.message.contents.0.message_content.text",
    "llm.output_messages.0.message.role",
    "llm.output_messages.0.message.content",
    "llm.output_messages.0.message.tool_calls.0.tool_call.id",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
    "input.value",
    "output.value",
    "tool.name",
    "tool.id",
    "traceloop.entity.input",
    "traceloop.entity.output",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.request.model",
    "gen_ai.response.model",
    "llm.model_name",
    "gen_ai.provider.name",
    "gen_ai.system",
    "llm.provider",
    "gen_ai.response.finish_reasons",
    "llm.finish_reason",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
    "llm.token_count.completion",
    "error.type",
    "tracereplay.run.status",
    "gen_ai.agent.max_rounds_exceeded",
    "tracereplay.run.context",
    "tracereplay.run.parameters",
    "tracereplay.run.kind",
    "tracereplay.eval_run_id",
    "tracereplay.case_id",
]
ROLE_VALUES = [
    "AGENT",
    "agent",
    "LLM",
    "TOOL",
    "tool",
    "CHAIN",
    "workflow",
    "chat",
    "execute_tool",
    "invoke_agent",
    "invoke_workflow",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(ROLE_VALUES),
)
json_like = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(
                ["role", "parts", "type", "content", "id", "name", "arguments", "response"]
                + ["result", "text", "messages", "choices", "tool_calls", "args", "kwargs"]
                + ["function", "message", "finish_reason", "error"]
            ),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=12,
)


def _as_json_text(value: object) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return "{"


values = st.one_of(
    json_like,
    json_like.map(_as_json_text),
    st.sampled_from(['{"', "[", '"unterminated', "[{}", '{"parts": 1}', "null", "true"]),
)
attributes = st.dictionaries(st.sampled_from(KEYS), values, max_size=8)
events = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.sampled_from(
                ["exception", "gen_ai.user.message", "gen_ai.choice", "gen_ai.content.prompt"]
            ),
            "time_unix_nano": st.integers(0, 10),
            "attributes": st.one_of(
                st.none(),
                st.dictionaries(
                    st.sampled_from(
                        ["exception.type", "exception.message", "gen_ai.prompt", "content"]
                    ),
                    values,
                    max_size=3,
                ),
            ),
        }
    ),
    max_size=2,
)


@st.composite
def traces(draw: st.DrawFn) -> tuple[list[Span], list[LogRecord]]:
    n = draw(st.integers(1, 6))
    spans = []
    for i in range(n):
        parent = draw(st.integers(-1, n - 1))
        start = draw(st.integers(0, 50))
        spans.append(
            Span(
                trace_id="ab" * 16,
                span_id=f"{i + 1:016x}",
                parent_span_id=f"{parent + 1:016x}" if parent >= 0 else "",
                name=draw(st.text(max_size=10)),
                kind=1,
                start_ns=start,
                end_ns=start + draw(st.integers(-5, 50)),
                status_code=draw(st.integers(0, 3)),
                status_message=draw(st.text(max_size=5)),
                attributes=draw(attributes),
                events=draw(events),
                resource=draw(st.dictionaries(st.sampled_from(KEYS[-3:]), values, max_size=2)),
            )
        )
    logs = [
        LogRecord(
            trace_id="ab" * 16,
            span_id=f"{draw(st.integers(1, n)):016x}",
            time_ns=draw(st.integers(0, 5)),
            event_name=draw(
                st.sampled_from(
                    [
                        "",
                        "gen_ai.user.message",
                        "gen_ai.assistant.message",
                        "gen_ai.tool.message",
                        "gen_ai.choice",
                        "gen_ai.client.inference.operation.details",
                    ]
                )
            ),
            body=draw(values),
            attributes=draw(
                st.dictionaries(
                    st.sampled_from(["event.name", "gen_ai.input.messages"]), values, max_size=2
                )
            ),
        )
        for _ in range(draw(st.integers(0, 3)))
    ]
    return spans, logs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_convert_trace_never_raises(trace: tuple[list[Span], list[LogRecord]]) -> None:
    spans, logs = trace
    runs = convert_trace(spans, logs)
    for run in runs:
        # every run is a valid, serializable record
        assert Run.model_validate(run.to_dict()).run_id == run.run_id
        assert run.result.total_llm_calls == len(run.llm_calls)
    assert [r.to_dict() for r in convert_trace(list(reversed(spans)), logs)] == [
        r.to_dict() for r in runs
    ]
