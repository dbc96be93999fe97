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
import resource
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

from tracereplay.convert import convert_trace  # noqa: E402
from tracereplay.gcpause import gc_paused  # noqa: E402
from tracereplay.ingest import (
    files,  # noqa: E402
    ingest_batch,  # noqa: E402
    pipeline,  # noqa: E402
)
from tracereplay.ingest.files import default_workers, ingest_files  # noqa: E402
from tracereplay.ingest.handoff import handoff_directory, receive, ship  # noqa: E402
from tracereplay.ingest.pipeline import prepare_batch, store_prepared  # noqa: E402
from tracereplay.ingest.workers import WorkerPool, worker_pool  # noqa: E402
from tracereplay.otlp import read_file  # noqa: E402
from tracereplay.store import Store  # noqa: E402
from tracereplay.store.db import run_tables, spans_table  # noqa: E402


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


def _cpu() -> float:
    """CPU seconds (user + system) of this process."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def _workers_cpu(pool: WorkerPool | None) -> float:
    """CPU seconds of the pool's worker processes so far (children of the fork server, not of
    this process: read from /proc while they live). The fork server's own start (about half a
    second of imports, once per process) is not counted."""
    if pool is None:
        return 0.0
    total = 0
    for pid in list(pool._executor._processes):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def in_process(path: Path, db: Path, n_traces: int) -> tuple[float, float, float]:
    """What ``tracereplay ingest`` does, without the CLI process start: worker processes decode
    and convert parts of the file while this one writes them to DuckDB. Returns the wall time
    and the CPU time of this process and of the workers."""
    cpu0 = _cpu()
    t = time.perf_counter()
    with worker_pool(default_workers([path])) as pool, Store.open(db) as store:
        ingest_files(store, [path], pool)
        runs = store.count("runs")
        elapsed = time.perf_counter() - t
        worker_cpu = _workers_cpu(pool)
    main_cpu = _cpu() - cpu0
    assert runs == n_traces, f"expected {n_traces} runs, found {runs}"
    return elapsed, main_cpu, worker_cpu


_prepare_in_worker = files._prepare_in_worker


def _prepare_without_runs(part: files._Part) -> tuple:
    """The workers' job with run conversion switched off (given to them by name)."""
    pipeline.convert_trace = lambda spans, logs=(): []
    return _prepare_in_worker(part)


def spans_only(path: Path, db: Path) -> tuple[float, float, float]:
    """The same parallel ingest with run conversion switched off (no runs, tool calls or LLM
    calls built or stored): what the spans alone cost, to show what the runs cost. Returns
    the wall time and the CPU time of this process and of the workers (as ``in_process``)."""
    convert = pipeline.convert_trace
    pipeline.convert_trace = lambda spans, logs=(): []
    files._prepare_in_worker = _prepare_without_runs  # what the workers are given to run
    try:
        cpu0 = _cpu()
        t = time.perf_counter()
        with worker_pool(default_workers([path])) as pool, Store.open(db) as store:
            ingest_files(store, [path], pool)
            elapsed = time.perf_counter() - t
            worker_cpu = _workers_cpu(pool)
        return elapsed, _cpu() - cpu0, worker_cpu
    finally:
        pipeline.convert_trace = convert
        files._prepare_in_worker = _prepare_in_worker


def stages(path: Path, db: Path, n_traces: int) -> dict[str, float]:
    """Where the CPU goes: each step of the pipeline alone, in this process, on the first
    ``n_traces`` traces of the file; seconds per span."""
    part = path.with_suffix(".part")
    with open(path, "rb") as src, open(part, "wb") as dst:
        for _ in range(-(-n_traces // 50)):  # synth.requests: 50 traces to a request
            head = src.read(4)
            dst.write(head + src.read(struct.unpack(">I", head)[0]))
    out: dict[str, float] = {}
    with gc_paused():
        t = time.perf_counter()
        decoded = read_file(part)
        out["decode (protobuf -> Python values)"] = time.perf_counter() - t
        spans = decoded.spans
        by_trace: dict[str, list] = {}
        for span in spans:
            by_trace.setdefault(span.trace_id, []).append(span)
        t = time.perf_counter()
        runs = [
            run
            for trace in by_trace.values()
            for run in convert_trace(sorted(trace, key=lambda s: s.start_ns))
        ]
        out["convert (spans -> runs)"] = time.perf_counter() - t
        t = time.perf_counter()
        spans_table(spans)
        out["span rows (Arrow)"] = time.perf_counter() - t
        t = time.perf_counter()
        run_tables(runs)
        out["run rows (Arrow)"] = time.perf_counter() - t
        batch = prepare_batch(spans, decoded.logs)
        t = time.perf_counter()
        with handoff_directory() as directory:
            batch = receive(ship(batch, directory, "bench"))
            out["worker -> writer (Arrow files, mapped)"] = time.perf_counter() - t
        with Store.open(db):  # a new store's schema, made before the clock
            pass
        t = time.perf_counter()
        with Store.open(db) as store, store.transaction():
            store_prepared(store, batch)
        out["DuckDB (open, insert, commit, close)"] = time.perf_counter() - t
    n = len(spans)
    return {k: v / n for k, v in out.items()}


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
        total, main_cpu, worker_cpu = in_process(path, tmpdir / "a.duckdb", args.traces)
        cli = via_cli(path, tmpdir / "b.duckdb", args.traces)
        one, decode = serial(path, tmpdir / "c.duckdb", args.traces)
        no_runs, no_runs_main, no_runs_workers = spans_only(path, tmpdir / "e.duckdb")
        print(f"protobuf parse only (baseline):  {n_spans / parse:>10,.0f} spans/s")
        print(f"decode to spans:                 {n_spans / decode:>10,.0f} spans/s")
        print(f"serial, one process:             {n_spans / one:>10,.0f} spans/s  ({one:.2f} s)")
        print(
            f"ingest until runs queryable:     {n_spans / total:>10,.0f} spans/s  ({total:.2f} s)"
        )
        print(f"same through the CLI (2 procs):  {n_spans / cli:>10,.0f} spans/s  ({cli:.2f} s)")
        print(
            f"same, runs not converted (spans only): {n_spans / no_runs:>10,.0f} spans/s"
            f"  ({no_runs:.2f} s: the runs cost {total - no_runs:.2f} s of {total:.2f})"
        )
        print(f"ingest / parse-only ratio:       {parse / total:.3f}")
        print("target: >= 50,000 spans/s until runs are queryable")
        cores = os.cpu_count() or 1
        us = 1e6 / n_spans
        print(
            f"CPU per span in the queryable run: {(main_cpu + worker_cpu) * us:.1f} us"
            f" (writer {main_cpu * us:.1f}, workers {worker_cpu * us:.1f});"
            f" 50,000 spans/s on {cores} cores allows at most {cores / 50_000 * 1e6:.1f} us"
        )
        cpu_runs = main_cpu + worker_cpu
        cpu_spans = no_runs_main + no_runs_workers
        print(
            f"CPU per span, spans only: {cpu_spans * us:.1f} us (writer {no_runs_main * us:.1f},"
            f" workers {no_runs_workers * us:.1f}); runs queryable / spans only:"
            f" {no_runs / total:.2f} by wall time, {cpu_spans / cpu_runs:.2f} by CPU"
            " (the CPU ratio holds on a machine others load)"
        )
        steps = stages(path, tmpdir / "d.duckdb", min(args.traces, 2000))
        print("each step alone, one process, CPU per span:")
        for name, seconds in steps.items():
            print(f"  {name:<38} {seconds * 1e6:>6.1f} us")
        print(f"  {'sum':<38} {sum(steps.values()) * 1e6:>6.1f} us")


if __name__ == "__main__":
    main()
