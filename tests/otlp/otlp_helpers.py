"""Helpers for the OTLP decoder tests: fixture paths and the OTLP/JSON encoding of a proto."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "otlp"

# fixture base name (a .json and a .pb of the same request), number of spans
TRACE_FIXTURES = [
    ("generated-otel-genai-latest__agent_tool_calls", 5),
    ("generated-otel-genai-v1.36-default__chat_spans", 2),
    ("generated-openinference__agent_tool_calls", 5),
    ("generated-openllmetry-0.62__agent_tool_calls", 6),
    ("generated-openllmetry-0.54-legacy__agent_tool_calls", 6),
]
LOGS_FIXTURE = "generated-otel-genai-v1.36-default__events.logs.json"
JSONL_FIXTURE = "generated-collector-fileexporter-style.jsonl"
UPSTREAM_TRACE = "otlp-proto-examples-trace.json"
NOT_OTLP_JSON = "openinference-genai__otel_genai_tool_execution_span.json"

_ID_KEYS = {"traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"}
_INT64_KEYS = {
    "intValue",
    "startTimeUnixNano",
    "endTimeUnixNano",
    "timeUnixNano",
    "observedTimeUnixNano",
    "int_value",
    "start_time_unix_nano",
    "end_time_unix_nano",
    "time_unix_nano",
    "observed_time_unix_nano",
}


def _hexify(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else _hexify(v)
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_hexify(x) for x in obj]
    return obj


def to_otlp_json(msg: Message, snake_case: bool = False) -> dict[str, Any]:
    """OTLP/JSON of a request: the protobuf JSON mapping with integer enums and hex ids."""
    d = json_format.MessageToDict(
        msg, use_integers_for_enums=True, preserving_proto_field_name=snake_case
    )
    return _hexify(d)


def from_otlp_json(obj: dict[str, Any], cls: type[Message]) -> Message:
    """The inverse of ``to_otlp_json`` (hex ids back to base64, then ``ParseDict``)."""

    def unhex(o: Any) -> Any:
        if isinstance(o, dict):
            return {
                k: base64.b64encode(bytes.fromhex(v)).decode()
                if k in _ID_KEYS and isinstance(v, str)
                else unhex(v)
                for k, v in o.items()
            }
        if isinstance(o, list):
            return [unhex(x) for x in o]
        return o

    return json_format.ParseDict(unhex(obj), cls())


def int64_as_numbers(obj: Any) -> Any:
    """The same OTLP/JSON with 64-bit integers as JSON numbers (as JS exporters send them)."""
    if isinstance(obj, dict):
        return {
            k: int(v) if k in _INT64_KEYS and isinstance(v, str) else int64_as_numbers(v)
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [int64_as_numbers(x) for x in obj]
    return obj


def length_delimited(*messages: bytes) -> bytes:
    """The Collector file exporter ``format: proto`` framing: 4-byte big-endian length + message."""
    return b"".join(len(m).to_bytes(4, "big") + m for m in messages)
