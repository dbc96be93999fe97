"""The receiving core shared by OTLP/HTTP and OTLP/gRPC: validate, limit, spool durably.

A request is validated (parsed; spans with invalid ids counted as rejected), has the per-span
limits applied, and is appended to the spool with ``fsync`` before ``receive_*`` returns, so the
caller may acknowledge it. The drainer decodes the spooled bytes into DuckDB later: protobuf is
only parsed here (in C), never walked into Python spans twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from tracereplay.errors import DecodeError
from tracereplay.gcpause import gc_paused
from tracereplay.otlp.ids import MAX_TIME_NS, TIME_PROBLEM, log_ids_problem, span_ids_problem
from tracereplay.otlp.json_decode import decode_logs_json, decode_traces_json, load_json
from tracereplay.otlp.model import Decoded
from tracereplay.otlp.pb_decode import parse_logs_request, parse_traces_request
from tracereplay.serve.config import Limits
from tracereplay.serve.limiting import limit_json, limit_logs_pb, limit_traces_pb
from tracereplay.serve.rejections import InvalidData, Unavailable
from tracereplay.store import spool

log = logging.getLogger("tracereplay.serve")

M = TypeVar("M")

TRACES = "traces"
LOGS = "logs"


@dataclass(frozen=True)
class Receipt:
    """What a request brought: items (spans or log records) kept and rejected, and why."""

    accepted: int
    rejected: int = 0
    message: str = ""


@dataclass
class IntakeStats:
    requests: int = 0
    spans: int = 0
    logs: int = 0
    rejected_spans: int = 0
    rejected_logs: int = 0
    spooled_bytes: int = 0


def _summary(rejected: int, reasons: list[str], what: str) -> str:
    if not rejected:
        return ""
    return f"{rejected} {what} rejected: {'; '.join(reasons[:5])}"


def _tally(problems: Iterable[str | None]) -> tuple[int, int, list[str]]:
    """Items seen, items rejected and the distinct reasons, from each item's id problem."""
    total = rejected = 0
    reasons: list[str] = []
    for problem in problems:
        total += 1
        if problem:
            rejected += 1
            if problem not in reasons:
                reasons.append(problem)
    return total, rejected, reasons


def _span_problem(span: Any) -> str | None:
    """Why the drainer's decoder will reject this protobuf span (ids, times), or None."""
    problem = span_ids_problem(span.trace_id, span.span_id, span.parent_span_id)
    if problem:
        return problem
    if (
        span.start_time_unix_nano > MAX_TIME_NS
        or span.end_time_unix_nano > MAX_TIME_NS
        or any(e.time_unix_nano > MAX_TIME_NS for e in span.events)
    ):
        return TIME_PROBLEM
    return None


def _log_problem(record: Any) -> str | None:
    """Why the drainer's decoder will reject this protobuf log record, or None."""
    problem = log_ids_problem(record.trace_id, record.span_id)
    if problem:
        return problem
    if (record.time_unix_nano or record.observed_time_unix_nano) > MAX_TIME_NS:
        return TIME_PROBLEM
    return None


def _parse_pb(parse: Callable[[bytes], M], body: bytes) -> M:
    try:
        return parse(body)
    except DecodeError as exc:
        raise InvalidData(str(exc)) from None


class Intake:
    """Validates and durably spools OTLP requests; thread-safe."""

    def __init__(
        self,
        writer: spool.SpoolWriter,
        limits: Limits,
        on_spooled: Callable[[int], None] = lambda n: None,
    ) -> None:
        self._writer = writer
        self.limits = limits
        self._on_spooled = on_spooled
        self._lock = threading.Lock()
        self.stats = IntakeStats()

    # ------------------------------------------------------------------ protobuf
    def traces_pb(self, body: bytes) -> Receipt:
        """A binary ``ExportTraceServiceRequest`` (OTLP/HTTP protobuf body, or OTLP/gRPC message)."""
        req = _parse_pb(parse_traces_request, body)
        total, rejected, reasons = _tally(
            _span_problem(s) for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans
        )
        if limit_traces_pb(req, self.limits, len(body)):
            body = req.SerializeToString()
        return self._accept(TRACES, spool.KIND_TRACES_PB, body, total - rejected, rejected, reasons)

    def logs_pb(self, body: bytes) -> Receipt:
        """A binary ``ExportLogsServiceRequest`` (OTLP/HTTP protobuf body, or OTLP/gRPC message)."""
        req = _parse_pb(parse_logs_request, body)
        total, rejected, reasons = _tally(
            _log_problem(r)
            for rl in req.resource_logs
            for sl in rl.scope_logs
            for r in sl.log_records
        )
        if limit_logs_pb(req, self.limits, len(body)):
            body = req.SerializeToString()
        return self._accept(LOGS, spool.KIND_LOGS_PB, body, total - rejected, rejected, reasons)

    # ------------------------------------------------------------------ JSON
    def traces_json(self, body: bytes) -> Receipt:
        """An OTLP/JSON ``ExportTraceServiceRequest`` (fully decoded here to validate it)."""
        body, decoded = self._decode_json(body, decode_traces_json)
        return self._accept(
            TRACES,
            spool.KIND_TRACES_JSON,
            body,
            len(decoded.spans),
            decoded.rejected_spans,
            decoded.errors,
        )

    def logs_json(self, body: bytes) -> Receipt:
        """An OTLP/JSON ``ExportLogsServiceRequest`` (fully decoded here to validate it)."""
        body, decoded = self._decode_json(body, decode_logs_json)
        return self._accept(
            LOGS,
            spool.KIND_LOGS_JSON,
            body,
            len(decoded.logs),
            decoded.rejected_logs,
            decoded.errors,
        )

    def _decode_json(
        self, body: bytes, decode: Callable[[dict[str, Any]], Decoded]
    ) -> tuple[bytes, Decoded]:
        """The request decoded, and its body (re-encoded when the limits changed it)."""
        try:
            with gc_paused():  # see gcpause: decoding makes many small acyclic objects
                obj = load_json(body)
                decoded = decode(obj)
            if limit_json(obj, self.limits, len(body)):
                body = orjson.dumps(obj)
        except DecodeError as exc:
            raise InvalidData(str(exc)) from None
        except RecursionError:
            raise InvalidData("invalid OTLP/JSON: values nested too deeply") from None
        return body, decoded

    def _accept(
        self, signal: str, kind: int, body: bytes, kept: int, rejected: int, reasons: list[str]
    ) -> Receipt:
        """Spool the request (when it kept anything), count it, and say what it brought."""
        self._spool(kind, body, kept)
        if signal == TRACES:
            self._count(spans=kept, rejected_spans=rejected)
            what = "spans"
        else:
            self._count(logs=kept, rejected_logs=rejected)
            what = "log records"
        return Receipt(kept, rejected, _summary(rejected, reasons, what))

    # ------------------------------------------------------------------ spooling
    def _spool(self, kind: int, body: bytes, kept: int) -> None:
        if kept <= 0:
            return  # nothing to store: an empty request, or every item rejected
        try:
            self._writer.append(kind, body)  # fsync'd on return: now it may be acknowledged
        except OSError as exc:  # disk full, spool directory gone...: the client retries later
            log.error("cannot write the spool: %s", exc)
            raise Unavailable(f"cannot write the spool ({exc.strerror or exc})", 5) from None
        self._on_spooled(len(body))
        with self._lock:
            self.stats.spooled_bytes += len(body)

    def _count(self, **deltas: int) -> None:
        with self._lock:
            stats = self.stats
            stats.requests += 1
            for name, value in deltas.items():
                setattr(stats, name, getattr(stats, name) + value)


__all__ = ["LOGS", "TRACES", "Intake", "IntakeStats", "Receipt"]
