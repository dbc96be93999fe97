"""The few internals of other libraries tracereplay relies on, each behind one function: these
tests fail loudly when a release of the library moves them (then mend that one function)."""

from __future__ import annotations

from datetime import UTC, datetime

from opentelemetry import trace as otel_trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from tracereplay.models.evals import ScoreResult
from tracereplay.models.fast import build
from tracereplay.models.run import AgentResult, LlmCall, Run, ToolCallRecord
from tracereplay.replay.global_provider import global_provider, swap_global_tracer_provider
from tracereplay.sdk.processor import CountingBatchSpanProcessor, ProcessorSlot, batch_queue
from tracereplay.sdk.sdk_spans import _plain


# ------------------------------------------------------------------ OpenTelemetry (sdk_spans.py)
def test_bounded_attributes_keep_their_items_in_the_dict_sdk_spans_reads() -> None:
    values = {"gen_ai.operation.name": "chat", "n": 3, "ok": True, "tags": ("a", "b")}
    for immutable in (True, False):
        attributes = BoundedAttributes(128, values, immutable=immutable, max_value_len=None)
        plain = _plain(attributes)
        assert type(plain) is dict
        assert plain == dict(attributes.items()) == values
    span = TracerProvider().get_tracer("t").start_span("s", attributes=values)
    span.set_attribute("late", "x")
    span.end()
    assert _plain(span.attributes) == {**values, "late": "x"}  # type: ignore[arg-type]


# ------------------------------------------------------------------ pydantic (models/fast.py)
def test_pydantic_models_keep_their_state_where_build_writes_it() -> None:
    # build() sets exactly these four slots, as model_construct's last lines do
    assert set(BaseModel.__slots__) == {
        "__dict__",
        "__pydantic_fields_set__",
        "__pydantic_extra__",
        "__pydantic_private__",
    }


def _values(cls: type[BaseModel]) -> dict:
    return {
        name: (field.default_factory() if field.default_factory else field.default)
        for name, field in cls.model_fields.items()
        if not field.is_required()
    }


def test_build_gives_what_model_construct_gives() -> None:
    samples = [
        (
            ToolCallRecord,
            {**_values(ToolCallRecord), "round": 1, "tool_name": "weather", "arguments": {"c": 1}},
        ),
        (AgentResult, {**_values(AgentResult), "response": "sunny"}),
        (ScoreResult, {**_values(ScoreResult), "check": "exactMatch", "score": 1.0}),
    ]
    for cls, values in samples:
        values = {k: v for k, v in values.items() if k in cls.model_fields}
        missing = [n for n, f in cls.model_fields.items() if f.is_required() and n not in values]
        assert not missing, (cls, missing)
        built, constructed = build(cls, dict(values)), cls.model_construct(**values)
        for slot in BaseModel.__slots__:
            assert getattr(built, slot) == getattr(constructed, slot), (cls, slot)
        assert built == constructed
        assert built.model_dump() == constructed.model_dump()
        assert built.model_copy(update={}) == constructed
        assert type(built).model_validate(built.model_dump()) == built


def test_build_models_nest_and_serialize() -> None:
    call = build(LlmCall, {**_values(LlmCall), "round": 1, "model": "m"})
    run = Run.model_construct(
        run_id="r", trace_id="t", root_span_id="s", started_at=datetime.now(UTC)
    )
    assert run.model_copy(update={"models": [call.model]}).models == ["m"]
    assert LlmCall.model_validate_json(call.model_dump_json()) == call


# ------------------------------------------------------------------ OTel SDK (sdk/processor.py)
class _Exporter(SpanExporter):
    def export(self, spans):  # noqa: ANN001
        return SpanExportResult.SUCCESS


def test_the_batch_processor_queue_is_found() -> None:
    exporter = _Exporter()
    processor = BatchSpanProcessor(exporter, max_queue_size=7, max_export_batch_size=2)
    try:
        found = batch_queue(processor)
        assert found is not None, "BatchSpanProcessor internals moved: drops are not counted"
        queue, capacity = found
        assert capacity == 7 and len(queue) == 0
        provider = TracerProvider()
        provider.add_span_processor(processor)
        provider.get_tracer("t").start_span("one").end()
        assert len(queue) in (0, 1)  # queued, or already taken by the export thread
    finally:
        processor.shutdown()


def test_counting_processor_sees_the_queue() -> None:
    exporter = _Exporter()
    processor = CountingBatchSpanProcessor(exporter)
    try:
        assert processor._queue is not None and processor._capacity
        assert processor.queued == 0
    finally:
        processor.shutdown()


class _Ending(SpanProcessor):
    def __init__(self) -> None:
        self.ending: list[str] = []

    def _on_ending(self, span) -> None:  # noqa: ANN001
        self.ending.append(span.name)


def test_the_sdk_on_ending_hook_reaches_the_processor_in_the_slot() -> None:
    inner = _Ending()
    provider = TracerProvider()
    provider.add_span_processor(ProcessorSlot(inner))
    provider.get_tracer("t").start_span("s").end()
    assert inner.ending == ["s"], "the SDK no longer calls SpanProcessor._on_ending"


# ------------------------------------------------------------------ OTel API (evaluate/replay/global_provider.py)
def test_the_global_tracer_provider_is_what_the_swap_writes() -> None:
    assert hasattr(otel_trace, "_TRACER_PROVIDER"), (
        "opentelemetry-api moved its global tracer provider: frameworks with native "
        "OpenTelemetry would trace past the replay's provider"
    )
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    before = otel_trace.get_tracer_provider()
    previous = swap_global_tracer_provider(provider)
    try:
        assert otel_trace.get_tracer_provider() is provider
        otel_trace.get_tracer("a framework").start_span("framework span").end()
    finally:
        swap_global_tracer_provider(previous)
    assert otel_trace.get_tracer_provider() is before
    assert [s.name for s in exporter.get_finished_spans()] == ["framework span"]


def test_the_global_provider_switch_is_shared_and_put_back() -> None:
    provider = TracerProvider()
    before = otel_trace.get_tracer_provider()
    with global_provider(provider):
        with global_provider(provider):  # a second replay at the same time
            assert otel_trace.get_tracer_provider() is provider
        assert otel_trace.get_tracer_provider() is provider
    assert otel_trace.get_tracer_provider() is before
