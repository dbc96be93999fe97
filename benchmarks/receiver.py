"""Receiver throughput: client processes post OTLP protobuf to ``tracereplay serve`` on loopback.

Starts ``tracereplay serve`` (a subprocess, fresh DuckDB file), pre-encodes synthetic agent traces
(10 spans each, see ``synth.py``) into ``ExportTraceServiceRequest`` batches, then several client
processes post them over keep-alive OTLP/HTTP connections (retrying on 429/503 as exporters do).
Prints spans/s acknowledged (every request answered 200, i.e. fsync'd to the spool) and spans/s
queryable (``SELECT count(*) FROM spans`` in DuckDB reaches the total, runs converted).

    python benchmarks/receiver.py [--traces 20000] [--clients 3] [--traces-per-request 50]
    python benchmarks/receiver.py --soak [--minutes 2] [--rate SPANS_PER_S]
    ... [--prefill SPANS]      (either way: the store holds SPANS spans before serve starts)

``--soak`` measures the server's memory over a long run: it first finds the store rate (a
burst of 10,000 spans, timed from the first post to queryable), then one client posts at half
that rate (or ``--rate``) for ``--minutes`` (2 by default; 60 for the hour-long soak) and the
server's resident memory (its own, and with its worker processes) is printed every
``--every`` seconds, with spans acknowledged and stored so far; ``peak`` is the highest of
``serve``'s own, sampled every 0.1 s since the line before (the drain rounds' peaks).
``--prefill N`` first fills the store with N spans (written straight into DuckDB, one tenth as
many runs), to see how a drain's memory (``--soak``) or the store rate depends on the size of
the store.

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
import threading
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


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    """Processes under ``pid`` (the drain's worker processes and their fork server)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _post_all(conn: http.client.HTTPConnection, bodies: list[bytes]) -> int:
    """Post ``bodies`` in order (retrying on 429/503); returns the retries."""
    retries = 0
    for body in bodies:
        while True:
            conn.request(
                "POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"}
            )
            resp = conn.getresponse()
            resp.read()
            if resp.status == 200:
                break
            if resp.status not in (429, 503):
                raise SystemExit(f"unexpected HTTP {resp.status}")
            retries += 1
            time.sleep(float(resp.getheader("Retry-After") or 1))
    return retries


def _soak(server: subprocess.Popen, port: int, args: argparse.Namespace) -> None:  # type: ignore[type-arg]
    per_request = args.traces_per_request
    spans_per_request = per_request * synth.SPANS_PER_TRACE
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    rate = args.rate
    if not rate:  # calibrate: a burst of 10,000 spans, timed to queryable
        burst = _encode(1000, per_request, seed=99)
        t0 = time.perf_counter()
        _post_all(conn, burst)
        while _stored(port) < 1000 * synth.SPANS_PER_TRACE:
            time.sleep(0.05)
        capacity = 1000 * synth.SPANS_PER_TRACE / (time.perf_counter() - t0)
        rate = capacity / 2
        print(f"store rate {capacity:,.0f} spans/s; soaking at half of it: {rate:,.0f} spans/s")
    pool = []  # requests reposted with fresh trace ids each time (new traces, no re-encoding)
    for req in synth.requests(20 * per_request, per_request, seed=11):
        ids = {s.trace_id for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans}
        pool.append((req.SerializeToString(), sorted(ids)))
    interval = spans_per_request / rate
    deadline = time.perf_counter() + args.minutes * 60
    next_report = time.perf_counter()
    sent = retries = 0
    base_stored = _stored(port)
    peak = _PeakRss(server.pid)
    print(
        f"{'min':>6} {'serve MiB':>10} {'peak':>7} {'+workers MiB':>13} {'acked':>10} {'stored':>10}"
    )

    def report(now: float, note: str = "") -> None:
        own = _rss_kib(server.pid)
        everything = own + sum(_rss_kib(p) for p in _descendants(server.pid))
        print(
            f"{(now - start) / 60:6.2f} {own / 1024:10.1f} {peak.take() / 1024:7.1f} "
            f"{everything / 1024:13.1f} {sent:10,d} {_stored(port) - base_stored:10,d}{note}",
            flush=True,
        )

    i = 0
    start = time.perf_counter()
    while (now := time.perf_counter()) < deadline:
        if now >= next_report:
            report(now)
            next_report = now + args.every
        body, ids = pool[i % len(pool)]
        for trace_id in ids:
            body = body.replace(trace_id, os.urandom(16))
        retries += _post_all(conn, [body])
        sent += spans_per_request
        i += 1
        sleep = start + i * interval - time.perf_counter()
        if sleep > 0:
            time.sleep(sleep)
    while _stored(port) - base_stored < sent:
        time.sleep(0.1)
    report(time.perf_counter(), f"  (all stored; {retries} retries)")
    peak.stop()


class _PeakRss:
    """The highest resident memory of ``pid``, sampled every 0.1 s, since the last ``take``."""

    def __init__(self, pid: int) -> None:
        self._pid = pid
        self._peak = 0
        self._lock = threading.Lock()
        self._done = threading.Event()
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while not self._done.wait(0.1):
            rss = _rss_kib(self._pid)
            with self._lock:
                self._peak = max(self._peak, rss)

    def take(self) -> int:
        with self._lock:
            peak, self._peak = self._peak, 0
        return peak

    def stop(self) -> None:
        self._done.set()


def _prefill(db: Path, n_spans: int) -> None:
    """``n_spans`` spans of agent-like traces (10 to a trace, random ids) and a run for each
    trace, written straight into a new store."""
    with Store.open(db) as store, store.transaction():
        store.con.execute(
            """
            INSERT INTO spans (trace_id, span_id, parent_span_id, name, kind, start_time,
              end_time, duration_ms, status_code, service_name, scope_name, attributes, events,
              links, resource, start_time_unix_nano, end_time_unix_nano)
            SELECT md5('t' || (i // 10)), substr(md5('s' || i), 1, 16), NULL,
              'execute_tool get_weather', 'INTERNAL', make_timestamp(1700000000000000 + i * 1000),
              make_timestamp(1700000000000000 + i * 1000 + 900), 0.9, 'UNSET', 'weather-agent',
              'prefill', '{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name":'
              || ' "get_weather", "gen_ai.tool.call.result": "sunny, ' || (i % 40) || ' C"}',
              '[]', '[]', '{"service.name": "weather-agent"}',
              1700000000000000000 + i * 1000000, 1700000000000000000 + i * 1000000 + 900000
            FROM range(?) AS t(i)
            """,
            [n_spans],
        )
        store.con.execute(
            """
            INSERT INTO runs (run_id, trace_id, root_span_id, agent_name, kind, status, query,
              response, started_at)
            SELECT uuid(), md5('t' || i), substr(md5('s' || (i * 10)), 1, 16), 'weather',
              'live', 'success', 'What is the weather in Paris?', 'Sunny, 21 C.',
              make_timestamp(1700000000000000 + i * 10000)
            FROM range(?) AS t(i)
            """,
            [n_spans // 10],
        )


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
    ap.add_argument("--soak", action="store_true", help="print serve's memory over a long run")
    ap.add_argument("--minutes", type=float, default=2.0, help="--soak: how long (60: an hour)")
    ap.add_argument(
        "--rate", type=float, default=0.0, help="--soak: spans/s (default: half the store rate)"
    )
    ap.add_argument("--every", type=float, default=10.0, help="--soak: seconds between lines")
    ap.add_argument("--prefill", type=int, default=0, help="spans stored before serve starts")
    args = ap.parse_args()

    per_client = args.traces // args.clients
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        if args.prefill:
            t0 = time.perf_counter()
            _prefill(db, args.prefill)
            print(f"prefilled {args.prefill:,d} spans in {time.perf_counter() - t0:.1f} s")
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
            if args.soak:
                _soak(server, port, args)
                return
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
            spans -= args.prefill  # the prefilled spans (and their runs) are not counted
            runs -= args.prefill // 10
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
