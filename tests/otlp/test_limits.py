"""Per-span limits: extra attributes dropped (count kept), long strings cut with a marker."""

from __future__ import annotations

from typing import Any

from tracereplay.otlp import (
    DROPPED_ATTRIBUTES_KEY,
    Limits,
    decode_logs_json,
    decode_traces_json,
)

TID = "ab" * 16


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, list):
        return {
            "key": key,
            "value": {"arrayValue": {"values": [{"stringValue": v} for v in value]}},
        }
    return {"key": key, "value": {"stringValue": value}}


def _request(attributes: list[dict[str, Any]], resource: list[dict[str, Any]]) -> dict[str, Any]:
    spans = [
        {
            "traceId": TID,
            "spanId": f"{i:016x}",
            "attributes": attributes,
            "events": [{"name": "e", "attributes": attributes}],
        }
        for i in (1, 2)
    ]
    return {
        "resourceSpans": [{"resource": {"attributes": resource}, "scopeSpans": [{"spans": spans}]}]
    }


ATTRS = [_kv("a", "x" * 50), _kv("b", 1), _kv("c", ["short", "y" * 30]), _kv("d", "ok")]


def test_no_limits_keeps_everything() -> None:
    for limits in (None, Limits()):
        (span, _) = decode_traces_json(_request(ATTRS, []), limits).spans
        assert span.attributes["a"] == "x" * 50 and len(span.attributes) == 4


def test_max_attributes_keeps_the_first_and_records_the_count() -> None:
    d = decode_traces_json(_request(ATTRS, ATTRS), Limits(max_attributes=2))
    for span in d.spans:
        assert span.attributes == {"a": "x" * 50, "b": 1, DROPPED_ATTRIBUTES_KEY: 2}
        assert span.events[0]["attributes"] == span.attributes
        assert span.resource == span.attributes
    assert d.spans[0].resource is d.spans[1].resource


def test_max_value_length_cuts_strings_everywhere_with_a_marker() -> None:
    d = decode_traces_json(_request(ATTRS, ATTRS), Limits(max_value_length=10))
    span = d.spans[0]
    assert span.attributes == {
        "a": "xxxxxxxxxx…[truncated 40 chars]",
        "b": 1,
        "c": ["short", "yyyyyyyyyy…[truncated 20 chars]"],
        "d": "ok",
    }
    assert span.events[0]["attributes"] == span.attributes
    assert span.resource == span.attributes


def test_both_limits_and_logs() -> None:
    req = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "body": {
                                    "kvlistValue": {
                                        "values": [
                                            {"key": "content", "value": {"stringValue": "z" * 12}}
                                        ]
                                    }
                                },
                                "attributes": ATTRS,
                            }
                        ]
                    }
                ]
            }
        ]
    }
    (log,) = decode_logs_json(req, Limits(max_attributes=1, max_value_length=4)).logs
    assert log.body == {"content": "zzzz…[truncated 8 chars]"}
    assert log.attributes == {"a": "xxxx…[truncated 46 chars]", DROPPED_ATTRIBUTES_KEY: 3}
