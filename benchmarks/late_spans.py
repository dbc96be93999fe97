"""The drain's store rate into a big store against an empty one: does late-span detection cost
what the batch costs, or what the store holds?

Makes two stores: an empty one, and one prefilled with ``--spans`` spans (10 to a trace, a run
and its tool and LLM calls per trace, times spread in order over the 30 days before the
workload, as a live store fills). Then the same workload goes through the spool and
``drain_spool`` in 4 MiB commits, as ``tracereplay serve``'s drainer does, into each: synthetic
agent traces (``synth.py``), half of them split across two requests (their children in one,
the agent root in the next: the late spans a batch exporter's interval makes). Prints spans/s
into each and their ratio, then the time ``runs``, ``show`` and ``runs --status failed --since
1d`` take on each store (real processes) and the difference.

    python benchmarks/late_spans.py [--spans 30000000] [--traces 20000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import synth
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans

from tracereplay.ingest import drain_spool
from tracereplay.store import SpoolWriter, Store, spool_dir
from tracereplay.store.spool import KIND_TRACES_PB

MiB = 1024 * 1024
DAY_NS = 86_400 * 10**9


def prefill(db: Path, n_spans: int, end_ns: int) -> None:
    """``n_spans`` spans, a run (5 tool calls, 4 LLM calls) per 10, in time order over the 30
    days before ``end_ns``."""
    step_ns = 30 * DAY_NS // max(1, n_spans)
    start_ns = end_ns - 30 * DAY_NS
    with Store.open(db) as store, store.transaction():
        store.con.execute(
            """
            INSERT INTO spans (trace_id, span_id, parent_span_id, name, kind, start_time,
              end_time, duration_ms, status_code, service_name, scope_name, attributes, events,
              links, resource, start_time_unix_nano, end_time_unix_nano)
            SELECT md5('t' || (i // 10)), substr(md5('s' || i), 1, 16), NULL,
              'execute_tool get_weather', 'INTERNAL', make_timestamp((? + i * ?) // 1000),
              make_timestamp((? + i * ? + 900000) // 1000), 0.9, 'UNSET', 'weather-agent',
              'prefill', '{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name":'
              || ' "get_weather", "gen_ai.tool.call.result": "sunny, ' || (i % 40) || ' C"}',
              '[]', '[]', '{"service.name": "weather-agent"}',
              ? + i * ?, ? + i * ? + 900000
            FROM range(?) AS t(i)
            """,
            [start_ns, step_ns] * 4 + [n_spans],
        )
        runs = n_spans // 10
        store.con.execute(
            """
            INSERT INTO runs (run_id, trace_id, root_span_id, agent_name, kind, status, query,
              response, started_at)
            SELECT md5('r' || i), md5('t' || i), substr(md5('s' || (i * 10)), 1, 16), 'weather',
              'live', CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'success' END,
              'What is the weather in Paris?', 'Sunny, 21 C.',
              make_timestamp((? + i * 10 * ?) // 1000)
            FROM range(?) AS t(i)
            """,
            [start_ns, step_ns, runs],
        )
        store.con.execute(
            """
            INSERT INTO tool_calls (run_id, position, trace_id, round, tool_name, arguments,
              result, duration_ms, run_started_at)
            SELECT md5('r' || (i // 5)), i % 5, md5('t' || (i // 5)), i % 5, 'get_weather',
              '{"city": "Paris"}', 'sunny', 0.9, make_timestamp((? + (i // 5) * 10 * ?) // 1000)
            FROM range(?) AS t(i)
            """,
            [start_ns, step_ns, runs * 5],
        )
        store.con.execute(
            """
            INSERT INTO llm_calls (run_id, round, trace_id, span_id, model, input_tokens,
              output_tokens, duration_ms, started_at, input_messages, output_messages)
            SELECT md5('r' || (i // 4)), i % 4, md5('t' || (i // 4)), substr(md5('l' || i), 1, 16),
              'gpt-4o', 120, 30, 800.0, make_timestamp((? + (i // 4) * 10 * ?) // 1000),
              '[{"role": "user", "content": "What is the weather?"}]',
              '[{"role": "assistant", "content": "Sunny."}]'
            FROM range(?) AS t(i)
            """,
            [start_ns, step_ns, runs * 4],
        )


def workload(n_traces: int, t0_ns: int) -> list[bytes]:
    """Requests of 50 traces; every other trace's root comes in the next request."""
    bodies = []
    held: list = []
    for req in synth.requests(n_traces, 50, seed=11, t0=t0_ns):
        spans = list(req.resource_spans[0].scope_spans[0].spans)
        out = ExportTraceServiceRequest()
        rs = ResourceSpans()
        rs.CopyFrom(req.resource_spans[0])
        del rs.scope_spans[0].spans[:]
        late = [s for i, s in enumerate(spans) if not s.parent_span_id and (i // 10) % 2 == 0]
        rs.scope_spans[0].spans.extend([s for s in spans if s not in late] + held)
        held = late
        out.resource_spans.append(rs)
        bodies.append(out.SerializeToString())
    if held:
        out = ExportTraceServiceRequest()
        rs = out.resource_spans.add()
        rs.scope_spans.add().spans.extend(held)
        bodies.append(out.SerializeToString())
    return bodies


def drain_rate(db: Path, bodies: list[bytes], spans: int) -> float:
    writer = SpoolWriter(spool_dir(db), durable=False)
    for body in bodies:
        writer.append(KIND_TRACES_PB, body)
    writer.close()
    with Store.open(db) as store:
        began = time.perf_counter()
        stats = drain_spool(store, tx_bytes=4 * MiB)
        took = time.perf_counter() - began
    assert stats.new_spans == spans, (stats.new_spans, spans)
    return spans / took


def command_s(db: Path, *args: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "tracereplay", "--db", str(db), *args],
            check=True,
            capture_output=True,
        )
        best = min(best, time.perf_counter() - began)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spans", type=int, default=30_000_000, help="spans in the big store")
    ap.add_argument("--traces", type=int, default=20_000, help="traces in the workload")
    args = ap.parse_args()
    now_ns = time.time_ns()
    t0_ns = now_ns - 3600 * 10**9  # the workload: the last hour
    bodies = workload(args.traces, t0_ns)
    spans = args.traces * synth.SPANS_PER_TRACE
    with tempfile.TemporaryDirectory(prefix="tr-late-") as tmp:
        empty, big = Path(tmp) / "empty.duckdb", Path(tmp) / "big.duckdb"
        began = time.perf_counter()
        prefill(big, args.spans, t0_ns)
        print(f"prefilled {args.spans:,} spans in {time.perf_counter() - began:.0f} s", flush=True)
        Store.open(empty).__enter__().con.close()  # a new, empty store
        rate_empty = drain_rate(empty, bodies, spans)
        rate_big = drain_rate(big, bodies, spans)
        print(f"drain into an empty store:       {rate_empty:9,.0f} spans/s")
        print(f"drain into {args.spans:>11,} spans:  {rate_big:9,.0f} spans/s")
        print(f"ratio: {rate_big / rate_empty:.2f}")
        ids = {}
        for name, db in (("empty", empty), ("big", big)):
            with Store.open(db) as store:
                ids[name] = store.con.execute("SELECT max(run_id) FROM runs").fetchall()[0][0]
        for cmd in (["runs"], ["show"], ["runs", "--status", "failed", "--since", "1d"]):
            times = {}
            for name, db in (("empty", empty), ("big", big)):
                full = cmd + [ids[name][:12]] if cmd == ["show"] else cmd
                times[name] = command_s(db, *full)
            print(
                f"{' '.join(cmd):<34} empty {times['empty']:.2f} s, big {times['big']:.2f} s, "
                f"extra {times['big'] - times['empty']:+.2f} s"
            )


if __name__ == "__main__":
    main()
