"""Validity rules for OTLP trace/span ids, shared by the protobuf and JSON decoders.

A span needs a 16-byte trace id and an 8-byte span id, neither all zeros; its parent span id is
empty (root) or 8 bytes (all zeros also means root). A log record's ids are optional.
"""

from __future__ import annotations

ZERO_TRACE_ID = bytes(16)
ZERO_SPAN_ID = bytes(8)


def span_ids_problem(trace_id: bytes, span_id: bytes, parent_span_id: bytes) -> str | None:
    """Why a span with these ids must be rejected, or ``None`` if they are valid."""
    if len(trace_id) != 16:
        return "traceId must be 16 bytes"
    if trace_id == ZERO_TRACE_ID:
        return "traceId must not be all zeros"
    if len(span_id) != 8:
        return "spanId must be 8 bytes"
    if span_id == ZERO_SPAN_ID:
        return "spanId must not be all zeros"
    if parent_span_id and len(parent_span_id) != 8:
        return "parentSpanId must be 8 bytes or empty"
    return None


def log_ids_problem(trace_id: bytes, span_id: bytes) -> str | None:
    """Why a log record with these ids must be rejected, or ``None`` if they are valid."""
    if trace_id and len(trace_id) != 16:
        return "log record traceId must be 16 bytes or empty"
    if span_id and len(span_id) != 8:
        return "log record spanId must be 8 bytes or empty"
    return None


def optional_hex(raw: bytes) -> str:
    """Lowercase hex of an optional id; ``""`` when empty or all zeros."""
    if not raw or not any(raw):
        return ""
    return raw.hex()


#: the latest time a span, event or log record may carry: the int64 nanosecond range the store
#: keeps times in ends on 2262-04-11. A later time (a bad clock, u64 max, OTLP/JSON year 9999)
#: is rejected with its span or log record, never stored.
MAX_TIME_NS = 2**63 - 1
TIME_PROBLEM = "times must be between 1970 and 2262 (nanoseconds since the Unix epoch)"


def time_ok(value: int) -> bool:
    """A time (ns since the epoch) the store can keep: 0 (unset) up to ``MAX_TIME_NS``."""
    return 0 <= value <= MAX_TIME_NS
