"""Property tests: whatever spans and log records the decoders let through (any GenAI,
OpenInference or OpenLLMetry attribute with any value, any tree shape, any times in range),
the converter and the store take them, and the store stays queryable after each batch."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracereplay.ingest.pipeline import ingest_batch
from tracereplay.otlp import decode_traces_json
from tracereplay.otlp.ids import MAX_TIME_NS
from tracereplay.spans import LogRecord, Span
from tracereplay.store import Store

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

KEYS = [
    "gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.request.model", "gen_ai.system",
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.prompt", "gen_ai.completion",
    "gen_ai.prompt.0.role", "gen_ai.prompt.0.content", "gen_ai.completion.0.content",
    "gen_ai.completion.0.tool_calls.0.name", "gen_ai.tool.name", "gen_ai.tool.call.id",
    "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons", "gen_ai.system_instructions",
    "gen_ai.agent.max_rounds_exceeded", "gen_ai.workflow.name", "input.value", "output.value",
    "openinference.span.kind", "llm.model_name", "llm.input_messages.0.message.role",
    "llm.input_messages.0.message.content", "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "llm.token_count.prompt", "tool.name", "traceloop.span.kind", "traceloop.entity.name",
    "traceloop.entity.input", "traceloop.entity.output", "traceloop.workflow.name",
    "langgraph_node", "exception.message",
]  # fmt: skip
OPERATIONS = ["invoke_agent", "chat", "execute_tool", "create_agent", "AGENT", "LLM", "TOOL", "CHAIN", "agent", "workflow", "task", "tool"]  # fmt: skip

text = st.text(max_size=20)
json_text = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=6,
).map(lambda v: orjson.dumps(v).decode())
values = st.one_of(
    text,
    json_text,
    st.sampled_from(OPERATIONS),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.lists(st.one_of(text, st.integers(-5, 5)), max_size=3),
    st.dictionaries(text, text, max_size=2),
)
times = st.integers(0, MAX_TIME_NS)
#: each trace's spans start within one day: the store finds a trace's stored spans and runs
#: within a day of a batch's (``TimeWindow``, docs/serving.md), so a span id of a trace sent
#: again days from its first start would be converted apart from it, as documented, and the
#: store shared by the examples would hold two runs of one id. The days: the first, one in the
#: middle and the last that a start time can have
DAY_NS = 24 * 3600 * 10**9 - 1
TRACE_DAYS = {
    "a" * 32: (0, DAY_NS),
    "b" * 32: (MAX_TIME_NS // 2, MAX_TIME_NS // 2 + DAY_NS),
    "c" * 32: (MAX_TIME_NS - DAY_NS, MAX_TIME_NS),
}
trace_ids = st.sampled_from(sorted(TRACE_DAYS))
span_ids = st.sampled_from([f"{i:016x}" for i in range(1, 9)])


@st.composite
def spans(draw: st.DrawFn) -> Span:
    trace_id = draw(trace_ids)
    start = draw(st.integers(*TRACE_DAYS[trace_id]))
    return Span(
        trace_id=trace_id,
        span_id=draw(span_ids),
        parent_span_id=draw(st.one_of(st.just(""), span_ids)),  # cycles and self-parents too
        name=draw(st.one_of(text, st.sampled_from(OPERATIONS))),
        kind=draw(st.integers(0, 7)),
        start_ns=start,
        end_ns=draw(st.one_of(times, st.just(start))),
        status_code=draw(st.integers(0, 3)),
        status_message=draw(text),
        attributes=draw(st.dictionaries(st.sampled_from(KEYS), values, max_size=6)),
        events=draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "name": st.sampled_from(["exception", "gen_ai.choice", "x"]),
                        "time_unix_nano": times,
                        "attributes": st.dictionaries(st.sampled_from(KEYS), values, max_size=3),
                    }
                ),
                max_size=2,
            )
        ),
        service_name=draw(text),
    )


@st.composite
def logs(draw: st.DrawFn) -> LogRecord:
    return LogRecord(
        trace_id=draw(st.one_of(st.just(""), trace_ids)),
        span_id=draw(st.one_of(st.just(""), span_ids)),
        time_ns=draw(times),
        event_name=draw(st.sampled_from(["gen_ai.user.message", "gen_ai.choice", "gen_ai.tool.message", ""])),
        body=draw(st.one_of(st.none(), text, st.dictionaries(st.sampled_from(["content", "role", "message", "tool_calls"]), values, max_size=3))),
    )  # fmt: skip


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "fuzz.duckdb"


@SETTINGS
@given(st.lists(spans(), min_size=1, max_size=8), st.lists(logs(), max_size=3))
def test_any_decoded_batch_is_stored_and_the_store_stays_queryable(
    store_path: Path, batch: list[Span], records: list[LogRecord]
) -> None:
    with Store.open(store_path) as store:
        with store.transaction():
            ingest_batch(store, batch, records)
        store.query_dicts("SELECT * FROM runs")  # every row readable back
        for run_id in [r[0] for r in store.con.execute("SELECT run_id FROM runs").fetchall()]:
            store.get_run(run_id)
        assert store.count("spans") >= 1


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(["startTimeUnixNano", "endTimeUnixNano", "kind", "name", "parentSpanId", "status"]),
        st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=30), st.none(), st.booleans(), st.floats()),
        max_size=3,
    )
)  # fmt: skip
def test_odd_json_fields_are_rejected_or_stored_never_break_the_store(
    store_path: Path, fields: dict[str, object]
) -> None:
    span = {"traceId": "c" * 32, "spanId": "d" * 16, "name": "invoke_agent x", **fields}
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    try:
        decoded = decode_traces_json(body)
    except Exception as exc:  # a malformed request: one DecodeError (a 400), nothing else
        assert type(exc).__name__ == "DecodeError", exc
        return
    with Store.open(store_path) as store:
        with store.transaction():
            ingest_batch(store, decoded.spans, decoded.logs)
        store.query_dicts("SELECT * FROM spans WHERE trace_id = ?", ["c" * 32])
