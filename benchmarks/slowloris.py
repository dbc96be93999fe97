"""A slowloris against ``tracereplay serve``: do legitimate exports still get through?

Starts ``serve`` (a subprocess, fresh store, ``--read-timeout`` 10), then opens ``--connections``
connections to its OTLP/HTTP port and as many to its OTLP/gRPC port, each sending part of a
request one byte every 2 s (replaced when the server closes it), for ``--seconds``. Meanwhile,
every second, the real OpenTelemetry exporters (HTTP/protobuf and gRPC, no retry: timeout 1 s)
export a span and a client asks ``GET /healthz``. Prints the slowest answer of each, how many
failed, how many slow connections the server closed, and ``serve``'s resident memory before
and during. Loopback only; bounded in count and time.

    python benchmarks/slowloris.py [--connections 1000] [--seconds 30]
"""

from __future__ import annotations

import argparse
import http.client
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "serve"))

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from slowloris import GRPC_PARTIAL, HTTP_PARTIAL, Slowloris  # noqa: E402


def _spans():  # type: ignore[no-untyped-def]
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with provider.get_tracer("bench").start_as_current_span("invoke_agent a"):
        pass
    return memory.get_finished_spans()


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tr-slowloris-") as tmp:
        cmd = [sys.executable, "-m", "tracereplay", "--db", str(Path(tmp) / "s.duckdb"), "serve",
               "--http-port", "0", "--grpc-port", "0", "--read-timeout", "10"]  # fmt: skip
        server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        ports = {}
        assert server.stdout is not None
        for line in server.stdout:
            if m := re.search(r"OTLP/(HTTP|gRPC)\s+\S*?:(\d+)", line):
                ports[m.group(1)] = int(m.group(2))
            if line.strip() == "ready":
                break
        try:
            rss_before = _rss_mib(server.pid)
            http_exp = HttpExporter(
                endpoint=f"http://127.0.0.1:{ports['HTTP']}/v1/traces", timeout=1
            )
            grpc_exp = GrpcExporter(endpoint=f"127.0.0.1:{ports['gRPC']}", insecure=True, timeout=1)
            worst = {"http export": 0.0, "grpc export": 0.0, "healthz": 0.0}
            failed = dict.fromkeys(worst, 0)
            rss_peak = rss_before
            attacks = [
                Slowloris(ports["HTTP"], args.connections, HTTP_PARTIAL, 2.0, args.seconds),
                Slowloris(ports["gRPC"], args.connections, GRPC_PARTIAL, 2.0, args.seconds),
            ]
            for attack in attacks:
                attack.start()
            end = time.monotonic() + args.seconds - 2
            while time.monotonic() < end:
                for name, call in (
                    ("http export", lambda: http_exp.export(_spans()) == SpanExportResult.SUCCESS),
                    ("grpc export", lambda: grpc_exp.export(_spans()) == SpanExportResult.SUCCESS),
                    ("healthz", lambda: _healthz(ports["HTTP"])),
                ):
                    began = time.perf_counter()
                    ok = call()
                    worst[name] = max(worst[name], time.perf_counter() - began)
                    failed[name] += not ok
                rss_peak = max(rss_peak, _rss_mib(server.pid))
                time.sleep(1)
            for attack in attacks:
                attack.stop()
            print(f"{args.connections} slow connections on each port for {args.seconds:.0f} s")
            for name in worst:
                print(f"  {name:<12} slowest {worst[name] * 1000:6.0f} ms, failed {failed[name]}")
            print(
                f"  slow connections closed by the server: HTTP {attacks[0].closed},"
                f" gRPC {attacks[1].closed}"
            )
            print(f"  serve RSS {rss_before:.0f} MiB before, {rss_peak:.0f} MiB at most during")
        finally:
            server.terminate()
            server.wait(timeout=60)


def _healthz(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        conn.request("GET", "/healthz")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


if __name__ == "__main__":
    main()
