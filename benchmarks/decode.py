"""Decode throughput of the OTLP decoders (protobuf and JSON), in spans per second.

Uses the benchmarks' shared synthetic agent traces (``synth.py``: 10 spans each, an
``invoke_agent`` root, ``chat`` LLM spans with GenAI attributes and message JSON, ``execute_tool``
spans), batched like the SDK's BatchSpanProcessor (about 512 spans per request), then times ``decode_traces_pb`` and ``decode_traces_json`` over all batches (CPU time
of this single-threaded process, best of ``--repeat``). Also times
the real instrumentation payloads of ``tests/fixtures/otlp`` (LLM spans there carry 30-46
attributes each).

    .venv/bin/python benchmarks/decode.py [--spans 100000] [--batch 512] [--repeat 3]
"""

from __future__ import annotations

import argparse
import base64
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracereplay.gcpause import gc_paused
from tracereplay.otlp import decode_traces_json, decode_traces_pb

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth  # noqa: E402

_FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "otlp"


def build_requests(n_spans: int = 100_000, batch: int = 512) -> list[ExportTraceServiceRequest]:
    """The shared synthetic agent traces (``synth.py``), about ``batch`` spans per request."""
    per_request = max(1, batch // synth.SPANS_PER_TRACE)
    n_traces = max(1, n_spans // synth.SPANS_PER_TRACE)
    return list(synth.requests(n_traces, traces_per_request=per_request))


def to_otlp_json(req: ExportTraceServiceRequest) -> bytes:
    """OTLP/JSON bytes of a request (protobuf JSON mapping with hex ids, integer enums)."""
    d = json_format.MessageToDict(req, use_integers_for_enums=True)
    for rs in d.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        s[key] = base64.b64decode(s[key]).hex()
    return orjson.dumps(d)


def _time(fn: Any, payloads: list[Any], repeat: int) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        t0 = time.process_time()  # CPU time: stable when other processes share the cores
        with gc_paused():  # as every entry point of tracereplay calls a decoder (see gcpause)
            count = sum(len(fn(p).spans) for p in payloads)
        best = min(best, time.process_time() - t0)
    return best, count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spans", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    requests = build_requests(args.spans, args.batch)
    pb_payloads = [r.SerializeToString() for r in requests]
    json_payloads = [to_otlp_json(r) for r in requests]
    mb_pb = sum(map(len, pb_payloads)) / 1e6
    mb_json = sum(map(len, json_payloads)) / 1e6
    print(f"{args.spans} spans in {len(requests)} requests of {args.batch} spans")
    for label, fn, payloads, mb in (
        ("protobuf", decode_traces_pb, pb_payloads, mb_pb),
        ("json", decode_traces_json, json_payloads, mb_json),
    ):
        seconds, count = _time(fn, payloads, args.repeat)
        print(
            f"{label:9s} {count / seconds:>10,.0f} spans/s  "
            f"({seconds * 1e6 / count:.2f} us/span, {mb:.1f} MB, best of {args.repeat})"
        )
    fixtures = sorted(_FIXTURES.glob("generated-*__*.pb"))
    if fixtures:
        for label, fn, ext in (
            ("protobuf", decode_traces_pb, ".pb"),
            ("json", decode_traces_json, ".json"),
        ):
            payloads = [p.with_suffix(ext).read_bytes() for p in fixtures] * 200
            seconds, count = _time(fn, payloads, args.repeat)
            print(
                f"{label:9s} {count / seconds:>10,.0f} spans/s  ({seconds * 1e6 / count:.2f} us/span)"
                f"  real fixtures ({len(fixtures)} payloads x 200)"
            )


if __name__ == "__main__":
    main()
