"""Ingest throughput: synthetic agent traces in an OTLP protobuf file -> queryable runs.

Writes N traces (10 spans each) as a Collector file-exporter ``format: proto`` file (each
ExportTraceServiceRequest behind a 4-byte big-endian length), then, in a fresh DuckDB file,
times decode + insert + conversion until every run is queryable, the way ``tracereplay ingest``
does it (worker processes decode and convert while the main one writes to DuckDB). Measured in
the same run: protobuf parsing alone (the floor for any decoder), the whole ingest through the
CLI, and everything serially in one process (``read_file`` then ``ingest_batch``).

    python benchmarks/ingest.py [--traces 20000]
"""

from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import synth  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)

from tracereplay.ingest import ingest_batch  # noqa: E402
from tracereplay.ingest.files import default_workers, ingest_files, worker_pool  # noqa: E402
from tracereplay.otlp import read_file  # noqa: E402
from tracereplay.store import Store  # noqa: E402


def write_file(path: Path, n_traces: int) -> int:
    spans = 0
    with open(path, "wb") as f:
        for req in synth.requests(n_traces):
            blob = req.SerializeToString()
            f.write(struct.pack(">I", len(blob)) + blob)
            spans += sum(len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans)
    return spans


def parse_only(path: Path) -> float:
    data = path.read_bytes()
    t = time.perf_counter()
    pos = 0
    while pos < len(data):
        (n,) = struct.unpack_from(">I", data, pos)
        ExportTraceServiceRequest.FromString(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return time.perf_counter() - t


def serial(path: Path, db: Path, n_traces: int) -> tuple[float, float]:
    """Everything in this process, one step after the other: decode, then ingest_batch."""
    t = time.perf_counter()
    decoded = read_file(path)
    t_decoded = time.perf_counter()
    with Store.open(db) as store:
        with store.transaction():
            ingest_batch(store, decoded.spans, decoded.logs)
        runs = store.count("runs")
    t_end = time.perf_counter()
    assert runs == n_traces, f"expected {n_traces} runs, found {runs}"
    return t_end - t, t_decoded - t


def in_process(path: Path, db: Path, n_traces: int) -> float:
    """What ``tracereplay ingest`` does, without the CLI process start: worker processes decode
    and convert parts of the file while this one writes them to DuckDB."""
    t = time.perf_counter()
    with worker_pool(default_workers([path])) as pool, Store.open(db) as store:
        ingest_files(store, [path], pool)
        runs = store.count("runs")
    elapsed = time.perf_counter() - t
    assert runs == n_traces, f"expected {n_traces} runs, found {runs}"
    return elapsed


def via_cli(path: Path, db: Path, n_traces: int) -> float:
    exe = Path(sys.executable).with_name("tracereplay")
    t = time.perf_counter()
    subprocess.run(
        [str(exe), "--db", str(db), "ingest", str(path)], check=True, capture_output=True
    )
    out = subprocess.run(
        [str(exe), "--db", str(db), "runs", "--limit", "1", "--format", "json"],
        check=True,
        capture_output=True,
    )
    elapsed = time.perf_counter() - t
    assert out.stdout.strip().startswith(b"["), out
    with Store.open(db) as store:
        assert store.count("runs") == n_traces
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=int, default=20_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        path = tmpdir / "traces.otlp.pb"
        n_spans = write_file(path, args.traces)
        size_mb = os.path.getsize(path) / 1e6
        print(f"input: {args.traces} traces, {n_spans} spans, {size_mb:.1f} MB protobuf")
        parse = parse_only(path)
        total = in_process(path, tmpdir / "a.duckdb", args.traces)
        cli = via_cli(path, tmpdir / "b.duckdb", args.traces)
        one, decode = serial(path, tmpdir / "c.duckdb", args.traces)
        print(f"protobuf parse only (baseline):  {n_spans / parse:>10,.0f} spans/s")
        print(f"decode to spans:                 {n_spans / decode:>10,.0f} spans/s")
        print(f"serial, one process:             {n_spans / one:>10,.0f} spans/s  ({one:.2f} s)")
        print(
            f"ingest until runs queryable:     {n_spans / total:>10,.0f} spans/s  ({total:.2f} s)"
        )
        print(f"same through the CLI (2 procs):  {n_spans / cli:>10,.0f} spans/s  ({cli:.2f} s)")
        print(f"ingest / parse-only ratio:       {parse / total:.3f}")
        print("target: >= 50,000 spans/s until runs are queryable")


if __name__ == "__main__":
    main()
