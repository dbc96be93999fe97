"""``encode_logs_json``: log records written as OTLP/JSON read back as the same records (an agent
command's GenAI events are stored this way, moved into its replay trace)."""

from __future__ import annotations

from tracereplay.otlp.json_decode import decode_logs_json
from tracereplay.otlp.json_encode import encode_logs_json
from tracereplay.spans import LogRecord

RECORDS = [
    LogRecord(
        trace_id="0af7651916cd43dd8448eb211c80319c",
        span_id="b7ad6b7169203331",
        time_ns=1_700_000_000_123_456_789,
        event_name="gen_ai.user.message",
        body={"content": "What is the weather in Paris?", "parts": [1, 2.5, True, None]},
        attributes={"gen_ai.system": "openai", "n": 3},
        severity_text="INFO",
        service_name="weather-agent",
        scope_name="opentelemetry.instrumentation.openai_v2",
    ),
    LogRecord(
        trace_id="0af7651916cd43dd8448eb211c80319c",
        span_id="b7ad6b7169203331",
        time_ns=1_700_000_000_223_456_789,
        event_name="gen_ai.choice",
        body="Paris is 18°C and cloudy.",
        service_name="weather-agent",
        scope_name="opentelemetry.instrumentation.openai_v2",
    ),
    LogRecord(
        trace_id="",
        span_id="",
        time_ns=1_700_000_001_000_000_000,
        event_name="",
        body=None,
        service_name="",
        scope_name="other",
    ),
]


def test_log_records_read_back_the_same() -> None:
    decoded = decode_logs_json(encode_logs_json(RECORDS))
    assert decoded.rejected_logs == 0, decoded.errors
    assert decoded.logs == RECORDS


def test_no_records_is_an_empty_request() -> None:
    assert decode_logs_json(encode_logs_json([])).logs == []
