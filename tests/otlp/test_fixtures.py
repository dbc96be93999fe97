"""Real OTLP payloads (from real instrumentation libraries) decode to the expected spans and logs."""

from __future__ import annotations

import gzip

import orjson
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from otlp_helpers import (
    FIXTURES,
    JSONL_FIXTURE,
    LOGS_FIXTURE,
    TRACE_FIXTURES,
    UPSTREAM_TRACE,
    from_otlp_json,
)

from tracereplay.otlp import (
    decode_file_content,
    decode_logs_json,
    decode_logs_pb,
    decode_traces_json,
    decode_traces_pb,
    read_file,
)
from tracereplay.spans import Span


def _by_name(spans: list[Span]) -> dict[str, Span]:
    return {s.name: s for s in spans}


@pytest.mark.parametrize(("base", "count"), TRACE_FIXTURES)
def test_pb_and_json_of_the_same_request_decode_identically(base: str, count: int) -> None:
    from_pb = decode_traces_pb((FIXTURES / f"{base}.pb").read_bytes())
    from_json = decode_traces_json((FIXTURES / f"{base}.json").read_bytes())
    assert len(from_pb.spans) == count
    assert from_pb == from_json
    assert (from_pb.rejected_spans, from_pb.errors, from_pb.logs) == (0, [], [])


@pytest.mark.parametrize(("base", "count"), TRACE_FIXTURES)
@pytest.mark.parametrize("ext", ["pb", "json"])
def test_read_file_detects_each_format_and_its_gzip(base: str, count: int, ext: str, tmp_path):
    path = FIXTURES / f"{base}.{ext}"
    expected = decode_traces_pb((FIXTURES / f"{base}.pb").read_bytes())
    assert read_file(path) == expected
    gz = tmp_path / "payload.bin"  # the extension says nothing: detection is by content
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert read_file(gz) == expected
    assert len(expected.spans) == count


def test_otel_genai_latest_span_values() -> None:
    d = decode_traces_pb(
        (FIXTURES / "generated-otel-genai-latest__agent_tool_calls.pb").read_bytes()
    )
    spans = _by_name(d.spans)
    root = spans["invoke_agent weather_agent"]
    assert root.parent_span_id == ""
    assert root.span_id == "c83c57205194f1c5"
    assert root.trace_id == "4a19a2c838cc9943175f12da1bae1a77"
    assert {s.trace_id for s in d.spans} == {root.trace_id}
    assert all(s.parent_span_id == root.span_id for s in d.spans if s is not root)
    assert root.attributes["gen_ai.usage.input_tokens"] == 508
    assert root.attributes["gen_ai.conversation.id"] == "conv-demo-1"

    chat = next(s for s in d.spans if s.name == "chat gpt-4o-mini")
    assert chat.kind == 3 and chat.kind_name == "CLIENT"
    assert chat.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert chat.attributes["server.port"] == 36951
    assert chat.attributes["gen_ai.usage.output_tokens"] == 46
    assert chat.start_ns == 1796019723202548835 and chat.end_ns == 1796019723228798646

    failed = spans["execute_tool get_population"]
    assert (failed.status_code, failed.status_message) == (
        2,
        "population service timed out for San Francisco",
    )
    assert failed.attributes["error.type"] == "TimeoutError"
    assert failed.kind == 1

    for s in d.spans:
        assert s.service_name == "weather-agent-demo"
        assert s.scope_name == "opentelemetry.util.genai.handler"
        assert s.resource["telemetry.sdk.version"] == "1.45.2"


def test_openinference_exception_event_and_scopes() -> None:
    d = read_file(FIXTURES / "generated-openinference__agent_tool_calls.json")
    spans = _by_name(d.spans)
    tool = spans["get_population"]
    assert tool.status_code == 2
    (event,) = tool.events
    assert event["name"] == "exception"
    assert event["attributes"]["exception.type"] == "TimeoutError"
    assert event["attributes"]["exception.escaped"] == "False"
    assert isinstance(event["time_unix_nano"], int) and event["time_unix_nano"] > 0
    assert {s.scope_name for s in d.spans} == {
        "openinference.instrumentation.openai",
        "weather_agent",
    }
    llm = next(s for s in d.spans if s.name == "ChatCompletion")
    assert llm.attributes["openinference.span.kind"] == "LLM"
    assert llm.status_code == 1


def test_upstream_example_with_uppercase_hex_ids() -> None:
    d = read_file(FIXTURES / UPSTREAM_TRACE)
    (span,) = d.spans
    assert span.trace_id == "5b8efff798038103d269b633813fc60c"
    assert span.span_id == "eee19b7ec3c1b174"
    assert span.parent_span_id == "eee19b7ec3c1b173"
    assert span.name == "I'm a server span"
    assert span.kind == 2
    assert (span.start_ns, span.end_ns) == (1544712660000000000, 1544712661000000000)
    assert span.attributes == {"my.span.attr": "some value"}
    assert (span.service_name, span.scope_name) == ("my.service", "my.library")
    assert span.resource == {"service.name": "my.service"}
    assert (span.status_code, span.events, span.links) == (0, [], [])


def test_logs_fixture_event_names_bodies_and_ids() -> None:
    d = read_file(FIXTURES / LOGS_FIXTURE)
    assert (len(d.logs), d.spans, d.rejected_logs) == (9, [], 0)
    names = [r.event_name for r in d.logs]
    assert names[:3] == ["gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"]
    assert names.count("gen_ai.tool.message") == 2
    first = d.logs[0]
    assert first.body == {"content": "You are a helpful assistant. Use the tools to answer."}
    assert first.trace_id == "63d4b5f3802c019ad5def996eedc3e33"
    assert first.span_id == "ffa90fff0f839b90"
    assert first.time_ns == 1796019790303827815
    assert first.service_name == "weather-agent-demo"
    assert first.scope_name == "opentelemetry.instrumentation.openai_v2"
    assert first.attributes["gen_ai.system"] == "openai"
    choice = d.logs[2].body
    assert choice["index"] == 0 and choice["finish_reason"] == "tool_calls"
    calls = choice["message"]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["get_weather", "get_population"]
    assert calls[0]["id"] == "call_S1xa8vawU2HXSrvSeUcqSCZm"


def test_logs_pb_and_json_decode_identically() -> None:
    raw = (FIXTURES / LOGS_FIXTURE).read_bytes()
    from_json = decode_logs_json(raw)
    pb = from_otlp_json(orjson.loads(raw), ExportLogsServiceRequest).SerializeToString()
    assert decode_logs_pb(pb) == from_json
    assert decode_file_content(pb) == from_json  # detected as logs, not traces


def test_collector_jsonl_fixture_is_the_three_requests() -> None:
    d = read_file(FIXTURES / JSONL_FIXTURE)
    parts = [
        "generated-otel-genai-latest__agent_tool_calls",
        "generated-openinference__agent_tool_calls",
        "generated-openllmetry-0.62__agent_tool_calls",
    ]
    expected = [s for p in parts for s in read_file(FIXTURES / f"{p}.pb").spans]
    assert len(d.spans) == 16
    assert d.spans == expected
