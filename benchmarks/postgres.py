"""The DuckDB store and the PostgreSQL store side by side, in the same run, small and grown.

Starts a PostgreSQL server of its own (``initdb`` + ``pg_ctl`` from PATH, as the tests do:
``tests/postgres_server.py``). Each store first ingests a base of synthetic agent traces
(10 spans each, ``synth.py``) through the real pipeline. Then, at the base's size and again
after growing both stores to ``--grow-to`` spans (``grow.py``: the base's rows replicated in
SQL with fresh ids and older times), it measures, through the CLI as a user runs it, each step
on one engine then the other (pairs alternate on a loaded machine):

- ingest of a further batch (``--batch-traces``) until its runs are queryable;
- ``runs``, ``show`` (one run of the grown history), ``promote --where`` into a suite of
  ``--cases`` cases, a recorded eval of that suite;
- ``serve``: ``--serve-traces`` more traces posted over OTLP/HTTP to 1, then 2 instances
  (each its own local spool, as on two machines), until every run is queryable.

Prints seconds per engine, the PostgreSQL/DuckDB ratio, and grown/small per engine (cost that
does not grow with the store stays near 1).

    python benchmarks/postgres.py [--base-traces 10000] [--grow-to 10000000] [--cases 10000]
        [--batch-traces 2000] [--serve-traces 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests"), str(HERE.parent / "tests" / "serve")]

import grow  # noqa: E402
import synth  # noqa: E402
from postgres_server import PostgresServer  # noqa: E402
from serve_helpers import ServeProcess, post  # noqa: E402


def tr(store: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--store", store, *args],
        capture_output=True, text=True, env=env or os.environ.copy(), timeout=3600,
    )  # fmt: skip
    if done.returncode not in ((0, 1) if args[0] == "eval" else (0,)):
        raise SystemExit(f"tracereplay {' '.join(args[:3])}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def timed(store: str, *args: str) -> tuple[float, str]:
    t = time.perf_counter()
    out = tr(store, *args)
    return time.perf_counter() - t, out


def run_count(store: str) -> int:
    out = tr(store, "sql", "SELECT count(*) AS n FROM runs", "--format", "json")
    return int(json.loads(out)[0]["n"])


T0 = 1_790_000_000_000_000_000  # the base's first trace (synth's default)
TRACE_GAP_NS = 10 * 10**9  # synth's traces are 10 s apart


def write_traces(path: Path, n: int, seed: int, t0: int) -> None:
    with open(path, "wb") as f:
        for req in synth.requests(n, seed=seed, t0=t0):
            blob = req.SerializeToString()
            f.write(struct.pack(">I", len(blob)) + blob)


def serve_until_queryable(
    store: str, work: Path, instances: int, n: int, seed: int, t0: int
) -> float:
    """Post ``n`` traces to ``instances`` serve processes, by request in turn; seconds from
    the first request to every run queryable."""
    bodies = [r.SerializeToString() for r in synth.requests(n, seed=seed, t0=t0)]
    servers = [
        ServeProcess(store, env={"TRACEREPLAY_LOCAL_DIR": str(work / f"machine{i}-{seed}")}).start()  # type: ignore[arg-type]
        for i in range(instances)
    ]
    try:
        before = run_count(store)
        t = time.perf_counter()

        def send(k: int) -> None:
            for j in range(k, len(bodies), instances):
                assert post(servers[k], "/v1/traces", bodies[j]).status == 200

        threads = [threading.Thread(target=send, args=(k,)) for k in range(instances)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        while run_count(store) < before + n:
            time.sleep(0.2)
        return time.perf_counter() - t
    finally:
        for s in servers:
            s.stop()


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat()


def measure(
    stores: dict[str, str], work: Path, args: argparse.Namespace, size: int
) -> dict[str, dict[str, float]]:
    """Every step at one store size, each on one engine then the other."""
    out: dict[str, dict[str, float]] = {}
    # the new traffic comes after everything stored (its own seed and times per size)
    seed = 100 + size
    t0 = T0 + (args.base_traces + 10_000 * size) * TRACE_GAP_NS + 86_400 * 10**9
    batch = work / f"batch-{size}.pb"
    write_traces(batch, args.batch_traces, seed, t0)
    base_end = T0 + args.base_traces * TRACE_GAP_NS
    where = f"started_at >= '{_iso(T0)}' AND started_at < '{_iso(base_end)}'"
    [row] = json.loads(
        tr(stores["duckdb"], "sql", "SELECT run_id FROM runs ORDER BY started_at, run_id"
           f" LIMIT 1 OFFSET {run_count(stores['duckdb']) // 2}", "--format", "json")
    )  # fmt: skip
    steps = {
        "ingest until queryable": lambda st: timed(st, "ingest", str(batch))[0],
        "runs": lambda st: timed(st, "runs", "--limit", "50")[0],
        "show": lambda st: timed(st, "show", row["run_id"])[0],
        "promote --where": lambda st: timed(
            st, "promote", "--where", where, "--limit", str(args.cases), "--suite", f"bench{size}"
        )[0],
        "recorded eval": lambda st: timed(st, "eval", f"bench{size}")[0],
    }
    for instances in (1, 2):
        steps[f"serve x{instances}"] = lambda st, i=instances: serve_until_queryable(
            st, work, i, args.serve_traces, seed + 10 * i, t0 + (i + 1) * 10**16
        )
    for step, run in steps.items():
        out[step] = {}
        for engine, store in stores.items():
            out[step][engine] = run(store)
        print(f"  {step}: " + ", ".join(f"{e} {v:.2f} s" for e, v in out[step].items()), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-traces", type=int, default=10_000, help="ingested through the pipeline")
    ap.add_argument("--grow-to", type=int, default=10_000_000, help="spans; 0: the base only")
    ap.add_argument("--cases", type=int, default=10_000, help="the suite promoted --where")
    ap.add_argument("--batch-traces", type=int, default=2_000)
    ap.add_argument("--serve-traces", type=int, default=2_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tracereplay-bench-pg-") as tmp:
        work = Path(tmp)
        base = work / "base.pb"
        write_traces(base, args.base_traces, 7, T0)
        os.environ["TRACEREPLAY_LOCAL_DIR"] = str(work / "local")
        # the server's own directory (as root, the server runs as nobody, who must reach it)
        pg_root = Path(tempfile.mkdtemp(prefix="tracereplay-pg-"))
        server = PostgresServer(pg_root)
        results: list[tuple[int, dict[str, dict[str, float]]]] = []
        try:
            stores = {"duckdb": str(work / "bench.duckdb"), "postgres": server.create_database()}
            for engine, store in stores.items():
                seconds, _ = timed(store, "ingest", str(base))
                print(f"base: {engine} ingested {args.base_traces} traces in {seconds:.1f} s")
            sizes = [0] + ([1] if args.grow_to else [])
            for size in sizes:
                if size:
                    for engine, store in stores.items():
                        t = time.perf_counter()
                        spans = grow.grow(
                            store, args.grow_to, (T0, T0 + args.base_traces * TRACE_GAP_NS)
                        )
                        print(f"grown: {engine} {spans} spans in {time.perf_counter() - t:.0f} s")
                spans = int(json.loads(tr(stores["duckdb"], "sql", "SELECT count(*) AS n FROM spans",
                                          "--format", "json"))[0]["n"])  # fmt: skip
                print(f"store of {spans} spans:", flush=True)
                results.append((spans, measure(stores, work, args, size)))
        finally:
            server.stop()
            shutil.rmtree(pg_root, ignore_errors=True)
    report(results, args)


def report(
    results: list[tuple[int, dict[str, dict[str, float]]]], args: argparse.Namespace
) -> None:
    print(
        f"\nbase {args.base_traces} traces; each size: +{args.batch_traces} traces ingested,"
        f" a {args.cases}-case suite, serve +{args.serve_traces} traces"
    )
    head = "".join(
        f"{f'{n} spans: duckdb s':>24}{'postgres s':>12}{'pg/duck':>9}" for n, _ in results
    )
    grown = len(results) == 2
    print(f"{'step':<24}{head}" + (f"{'duck big/small':>16}{'pg big/small':>14}" if grown else ""))
    for step in results[0][1]:
        line = f"{step:<24}"
        for _, res in results:
            duck, pg = res[step]["duckdb"], res[step]["postgres"]
            line += f"{duck:>24.2f}{pg:>12.2f}{pg / duck:>8.1f}x"
        if grown:
            (_, small), (_, big) = results
            for engine, width in (("duckdb", 15), ("postgres", 13)):
                line += f"{big[step][engine] / small[step][engine]:>{width}.1f}x"
        print(line)


if __name__ == "__main__":
    main()
