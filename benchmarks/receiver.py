"""Receiver throughput: client processes post OTLP protobuf to ``tracereplay serve`` on loopback.

Starts ``tracereplay serve`` (a subprocess, fresh DuckDB file), pre-encodes synthetic agent traces
(10 spans each, see ``synth.py``) into ``ExportTraceServiceRequest`` batches, then several client
processes post them over keep-alive OTLP/HTTP connections (retrying on 429/503 as exporters do).
Prints spans/s acknowledged (every request answered 200, i.e. fsync'd to the spool) and spans/s
queryable (``SELECT count(*) FROM spans`` in DuckDB reaches the total, runs converted).

    python benchmarks/receiver.py [--traces 20000] [--clients 3] [--traces-per-request 50]

The acknowledged rate includes backpressure: once ``--max-backlog-mib`` (64 MiB) of spooled data
waits for the drainer, clients get 503 and retry, so over a long run it settles at the store rate;
``--serve-args '--max-backlog-mib 1024'`` shows the receiving side's own speed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import synth  # noqa: E402

from tracereplay.store import Store  # noqa: E402


def _encode(n_traces: int, per_request: int, seed: int) -> list[bytes]:
    return [r.SerializeToString() for r in synth.requests(n_traces, per_request, seed=seed)]


def _client(port: int, bodies: list[bytes], start: mp.Event, out: mp.Queue) -> None:  # type: ignore[type-arg]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/x-protobuf"}
    start.wait()
    retries = 0
    for body in bodies:
        while True:
            conn.request("POST", "/v1/traces", body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
            if resp.status == 200:
                break
            if resp.status in (429, 503):
                retries += 1
                time.sleep(float(resp.getheader("Retry-After") or 1))
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
                continue
            raise SystemExit(f"unexpected HTTP {resp.status}")
    out.put((time.perf_counter(), retries))


def _count(db: Path) -> tuple[int, int]:
    with Store.open(db, timeout=30) as store:
        return store.count("spans"), store.count("runs")


def _stored(port: int) -> int:
    """Spans the server's drainer has committed to DuckDB (its /healthz), without taking the
    store lock: polling DuckDB itself would slow the drainer down."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/healthz")
        return int(json.loads(conn.getresponse().read())["spans_stored"])
    finally:
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=int, default=20_000, help="agent traces (10 spans each)")
    ap.add_argument("--clients", type=int, default=3, help="client processes")
    ap.add_argument("--traces-per-request", type=int, default=50)
    ap.add_argument(
        "--serve-args",
        default="",
        help="extra `tracereplay serve` options, e.g. '--max-backlog-mib 512'",
    )
    args = ap.parse_args()

    per_client = args.traces // args.clients
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        exe = Path(sys.executable).with_name("tracereplay")
        server = subprocess.Popen(
            [
                str(exe),
                "--db",
                str(db),
                "serve",
                "--http-port",
                "0",
                "--no-grpc",
                *args.serve_args.split(),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            port = 0
            for line in server.stdout:
                m = re.search(r"OTLP/HTTP\s+http://[^:]+:(\d+)", line)
                if m:
                    port = int(m.group(1))
                if line.strip() == "ready":
                    break
            print(f"encoding {per_client * args.clients} traces for {args.clients} clients...")
            work = [
                _encode(per_client, args.traces_per_request, seed=7 + i)
                for i in range(args.clients)
            ]
            n_spans = per_client * args.clients * synth.SPANS_PER_TRACE
            size = sum(len(b) for bodies in work for b in bodies) / 1e6
            print(f"{n_spans} spans in {sum(map(len, work))} requests, {size:.1f} MB protobuf")

            ctx = mp.get_context("fork")
            start, results = ctx.Event(), ctx.Queue()
            procs = [ctx.Process(target=_client, args=(port, w, start, results)) for w in work]
            for p in procs:
                p.start()
            time.sleep(0.5)
            t0 = time.perf_counter()
            start.set()
            ends = [results.get() for _ in procs]
            for p in procs:
                p.join()
            acked_at = max(t for t, _ in ends) - t0
            retries = sum(r for _, r in ends)
            while _stored(port) < n_spans:
                time.sleep(0.05)
            queryable_at = time.perf_counter() - t0
            spans, runs = _count(db)  # and confirm in DuckDB itself
            assert spans == n_spans, (spans, n_spans)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=120)
        print(
            f"acknowledged: {n_spans / acked_at:>10,.0f} spans/s  ({acked_at:.2f} s, {retries} retries)"
        )
        print(
            f"queryable:    {n_spans / queryable_at:>10,.0f} spans/s  ({queryable_at:.2f} s; "
            f"{spans} spans, {runs} runs in DuckDB)"
        )
        print(
            f"cores: {os.cpu_count()} (clients and server together); target >= 20,000 spans/s queryable"
        )


if __name__ == "__main__":
    main()
