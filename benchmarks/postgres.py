"""The DuckDB store and the PostgreSQL store side by side, in the same run, at the same scale.

Starts a PostgreSQL server of its own (``initdb`` + ``pg_ctl`` from PATH, as the tests do:
``tests/postgres_server.py``), then for each engine, through the CLI as a user runs it:

- ingest N synthetic agent traces (10 spans each, ``synth.py``) until every run is queryable;
- ``runs``, ``show`` (one run), ``promote --where`` (every successful run into a suite);
- a recorded eval of that suite;
- ``serve``: M more traces posted over OTLP/HTTP to 1, then 2 instances (each its own local
  spool, as on two machines), until every run is queryable.

Prints seconds per engine and the PostgreSQL/DuckDB ratio.

    python benchmarks/postgres.py [--traces 20000] [--serve-traces 2000]
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests"), str(HERE.parent / "tests" / "serve")]

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


def serve_until_queryable(store: str, work: Path, instances: int, n: int, offset: int) -> float:
    """Post ``n`` traces (after the first ``offset``) to ``instances`` serve processes, by
    request in turn; seconds from the first request to every run queryable."""
    bodies = [
        r.SerializeToString()
        for r in synth.requests(n, seed=offset, t0=1_790_000_000_000_000_000 + offset * 10**10)
    ]
    servers = [
        ServeProcess(
            store, env={"TRACEREPLAY_LOCAL_DIR": str(work / f"machine{i}-{offset}")}
        ).start()  # type: ignore[arg-type]
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


def measure(store: str, data: Path, work: Path, serve_traces: int) -> dict[str, float]:
    out: dict[str, float] = {}
    out["ingest until queryable"], _ = timed(store, "ingest", str(data))
    out["runs"], _ = timed(store, "runs", "--limit", "50")
    rows = json.loads(tr(store, "runs", "--limit", "1", "--format", "json"))
    out["show"], _ = timed(store, "show", rows[0]["run_id"])
    out["promote --where"], _ = timed(
        store, "promote", "--where", "status = 'success'", "--suite", "bench"
    )
    out["recorded eval"], _ = timed(store, "eval", "bench")
    for instances in (1, 2):
        out[f"serve x{instances}"] = serve_until_queryable(
            store, work, instances, serve_traces, offset=10_000_000 + instances * serve_traces
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=int, default=20_000)
    ap.add_argument("--serve-traces", type=int, default=2_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tracereplay-bench-pg-") as tmp:
        work = Path(tmp)
        data = work / "traces.pb"
        with open(data, "wb") as f:
            for req in synth.requests(args.traces):
                blob = req.SerializeToString()
                f.write(struct.pack(">I", len(blob)) + blob)
        os.environ["TRACEREPLAY_LOCAL_DIR"] = str(work / "local")
        # the server's own directory (as root, the server runs as nobody, who must reach it)
        pg_root = Path(tempfile.mkdtemp(prefix="tracereplay-pg-"))
        server = PostgresServer(pg_root)
        try:
            url = server.create_database()
            results = {
                "duckdb": measure(str(work / "bench.duckdb"), data, work, args.serve_traces),
                "postgres": measure(url, data, work, args.serve_traces),
            }
        finally:
            server.stop()
            shutil.rmtree(pg_root, ignore_errors=True)
    spans = args.traces * synth.SPANS_PER_TRACE
    print(f"{args.traces} traces ({spans} spans) ingested; serve: {args.serve_traces} traces more")
    print(f"{'step':<24}{'duckdb s':>10}{'postgres s':>12}{'pg/duckdb':>11}")
    for step, duck in results["duckdb"].items():
        pg = results["postgres"][step]
        print(f"{step:<24}{duck:>10.2f}{pg:>12.2f}{pg / duck:>10.1f}x")


if __name__ == "__main__":
    main()
