"""``from_sdk`` and the spool's OTLP/JSON record give exactly what the SDK's protobuf encoder and
``decode_traces_pb`` give, for any span the SDK makes (or hand the protobuf path the span)."""

from __future__ import annotations

import logging
import math

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from tracereplay.otlp import decode_traces_json, decode_traces_pb
from tracereplay.replay.capture import to_spans
from tracereplay.sdk.exporter import spool_record
from tracereplay.sdk.sdk_spans import from_sdk
from tracereplay.store.spool import KIND_TRACES_JSON

_scalars = st.one_of(
    st.text(max_size=8),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=6),
)
_values = st.one_of(
    _scalars,
    st.lists(st.text(max_size=4), max_size=3).map(tuple),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3).map(tuple),
    st.lists(st.one_of(st.none(), st.floats(allow_nan=False)), max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=3), _scalars, max_size=2),
    st.just(()),
)
_attributes = st.dictionaries(st.text(min_size=1, max_size=6), _values, max_size=5)
_span = st.fixed_dictionaries(
    {
        "name": st.text(max_size=10),
        "kind": st.sampled_from(list(SpanKind)),
        "attributes": _attributes,
        "events": st.lists(st.tuples(st.text(max_size=5), _attributes), max_size=2),
        "link": st.booleans(),
        "status": st.sampled_from([None, (StatusCode.OK, None), (StatusCode.ERROR, "boom")]),
        "scope": st.sampled_from(["a", "b", "c"]),
        "child": st.booleans(),
    }
)
_resources = [
    Resource.create({"service.name": "svc"}),
    Resource.create({"service.name": "other", "n": 3, "tags": ("x",)}),
    Resource.create({"service.name": "svc"}),  # equal to the first, another object
]


def _same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN (what both paths keep of a NaN attribute)."""
    return repr(a) == repr(b)


def _made(specs: list[dict], resource_picks: list[int]) -> list:
    memory = InMemorySpanExporter()
    providers = [TracerProvider(resource=r) for r in _resources]
    for tp in providers:
        tp.add_span_processor(SimpleSpanProcessor(memory))
    parent = None
    for spec, pick in zip(specs, resource_picks):
        tracer = providers[pick].get_tracer(spec["scope"])
        links = [Link(parent.get_span_context(), {"why": "x"})] if spec["link"] and parent else []
        span = tracer.start_span(spec["name"], kind=spec["kind"], links=links)
        span.set_attributes(spec["attributes"])
        for name, attrs in spec["events"]:
            span.add_event(name, attrs)
        if spec["status"] is not None:
            span.set_status(Status(*spec["status"]))
        span.end()
        if spec["child"]:
            parent = span
    return list(memory.get_finished_spans())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_span, min_size=1, max_size=5),
    st.lists(st.integers(min_value=0, max_value=2), min_size=5, max_size=5),
)
def test_direct_and_json_paths_give_what_the_protobuf_path_gives(specs, picks) -> None:
    spans = _made(specs, picks)
    via_pb = decode_traces_pb(encode_spans(spans).SerializeToString()).spans
    assert _same(to_spans(spans), via_pb)
    kind, payload = spool_record(spans)
    decoded = decode_traces_json(payload).spans if kind == KIND_TRACES_JSON else None
    if decoded is None:  # a value only the protobuf path treats right: it took that path
        assert from_sdk(spans) is None
        decoded = decode_traces_pb(payload).spans
    assert _same(decoded, via_pb)


def test_a_span_read_again_is_the_span_read_first_and_its_record_unchanged() -> None:
    # a replay reads each span as it ends (its capture), then the spool reads the batch: the
    # second read gives the same objects, and the record is the one a single read makes
    spec = {
        "name": "invoke_agent a", "kind": SpanKind.INTERNAL, "attributes": {"k": "v"},
        "events": [], "link": False, "status": None, "scope": "a", "child": False,
    }  # fmt: skip
    spans = _made([spec, {**spec, "scope": "b"}, spec], [0, 0, 1])
    first = [span for s in spans for span in from_sdk([s])]
    again = from_sdk(spans)
    assert [id(s) for s in again] == [id(s) for s in first]
    kind, payload = spool_record(spans)
    assert kind == KIND_TRACES_JSON
    # one resource entry per resource (the spans of one share its dict), as the encoder writes
    assert len(orjson.loads(payload)["resourceSpans"]) == 2
    via_pb = decode_traces_pb(encode_spans(spans).SerializeToString()).spans
    assert _same(decode_traces_json(payload).spans, via_pb)


def test_common_values_take_the_direct_path() -> None:
    spans = _made(
        [
            {
                "name": "invoke_agent a",
                "kind": SpanKind.INTERNAL,
                "attributes": {"s": "x", "e": "", "n": 0, "f": math.inf, "b": False, "t": ("a",)},
                "events": [("e", {"k": 1})],
                "link": False,
                "status": (StatusCode.ERROR, "boom"),
                "scope": "a",
                "child": False,
            }
        ],
        [0],
    )
    [span] = from_sdk(spans)
    assert span.attributes == {"s": "x", "e": "", "n": 0, "f": math.inf, "b": False, "t": ["a"]}
    assert (span.status_code, span.status_message, span.service_name) == (2, "boom", "svc")
    assert spool_record(spans)[0] == KIND_TRACES_JSON


def test_text_with_a_lone_surrogate_is_kept_with_replacement_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The protobuf encoder drops an attribute whose text has a lone surrogate, and fails the
    whole batch on a span's name; read directly, each lone surrogate becomes U+FFFD and the
    span, with the rest of its text, reaches the spool."""
    memory = InMemorySpanExporter()
    tp = TracerProvider(resource=Resource.create({"service.name": "svc", "host": "h\udc80"}))
    tp.add_span_processor(SimpleSpanProcessor(memory))
    span = tp.get_tracer("scope\ud800").start_span("tool \ud83d")
    span.set_attributes({"result": "a\ud83db", "k\udfff": ("x\ud800", "y"), "ok": "fine"})
    span.add_event("ev\udc00", {"m": "\ud800"})
    span.set_status(Status(StatusCode.ERROR, "boom \udfff"))
    span.end()
    spans = list(memory.get_finished_spans())
    # the encoder logs each attribute it drops, text and all: no test report could carry it
    monkeypatch.setattr(
        logging.getLogger("opentelemetry.exporter.otlp.proto.common._internal"), "disabled", True
    )
    with pytest.raises(UnicodeEncodeError):
        encode_spans(spans).SerializeToString()  # the span's name: nothing of the batch is left
    [got] = to_spans(spans)
    assert (got.name, got.scope_name, got.status_message) == (
        "tool \ufffd",
        "scope\ufffd",
        "boom \ufffd",
    )
    assert got.attributes == {"result": "a\ufffdb", "k\ufffd": ["x\ufffd", "y"], "ok": "fine"}
    assert got.resource["host"] == "h\ufffd" and got.service_name == "svc"
    assert got.events[0]["name"] == "ev\ufffd" and got.events[0]["attributes"] == {"m": "\ufffd"}
    kind, payload = spool_record(spans)
    assert kind == KIND_TRACES_JSON and _same(decode_traces_json(payload).spans, [got])
