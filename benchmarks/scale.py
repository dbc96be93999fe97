"""Flat as the store grows (issue 53): ingest, ``runs``, ``show`` and the UI's pages on a store
of N spans against the same on a small one, in the same run.

Builds, on each engine asked for (DuckDB always; PostgreSQL with ``--postgres``, its own server
from ``initdb`` + ``pg_ctl`` as ``postgres.py`` starts it):

- a small store: a base of ``--base-traces`` synthetic agent traces (10 spans each,
  ``synth.py``) ingested through the real pipeline, a 50-case suite promoted from it and
  evaluated (recorded) twice, so the suite and eval pages have something to show;
- a big store: the same, then grown to ``--spans`` spans (``grow.py``: the base's rows
  replicated in SQL with fresh ids and older times).

Then, alternating stores within each round (a loaded machine moves both alike):

- ingest: a fresh batch (``--batch-traces`` traces with new trace ids, after everything
  stored) through ``tracereplay ingest`` (whole process, until its runs are queryable) into
  the big store and into an empty one (a new store each round); the best of ``--rounds``
  rounds each, printed as the big store's rate over the empty one's (target >= 0.8x);
- ``tracereplay runs``, ``tracereplay show <run>`` (whole processes), and the UI's pages (a
  real ``tracereplay ui`` server on loopback, ``ui.py``'s): the runs list (plain and
  filtered), a run's page, the dashboard, the suites list, a suite, an eval run; the median of
  ``--repeat`` on each store, printed as small, big and the difference (target <= +0.3 s).

    python benchmarks/scale.py [--spans 15000000 | --quick] [--postgres [--no-duckdb]]
        [--base-traces 10000]
        [--batch-traces 10000] [--rounds 3] [--repeat 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

import grow  # noqa: E402
import ui  # noqa: E402
from postgres import T0, TRACE_GAP_NS, run_count, timed, tr, write_traces  # noqa: E402


def _spans(store: str) -> int:
    out = tr(store, "sql", "SELECT count(*) AS n FROM spans", "--format", "json")
    return int(json.loads(out)[0]["n"])


def _one(store: str, sql: str) -> str:
    [row] = json.loads(tr(store, "sql", sql, "--format", "json"))
    return str(next(iter(row.values())))


class Engine:
    """One engine's stores: where they are, how a new empty one is made."""

    def __init__(self, name: str, work: Path, server=None) -> None:
        self.name, self.work, self.server = name, work, server
        self._n = 0

    def new_store(self, what: str) -> str:
        self._n += 1
        if self.server is not None:
            return self.server.create_database()
        return str(self.work / f"{self.name}-{what}-{self._n if what == 'empty' else 0}.duckdb")

    def drop(self, store: str) -> None:
        if self.server is None:
            for p in Path(store).parent.glob(Path(store).name + "*"):
                p.unlink() if p.is_file() else shutil.rmtree(p, ignore_errors=True)


def build(engine: Engine, base: Path, args: argparse.Namespace) -> dict[str, str]:
    """The small and the big store of ``engine``, each with the base, a suite and two evals."""
    stores: dict[str, str] = {}
    kept = engine.work / f"{engine.name}-stores.json"  # a --keep directory's stores, reused
    if kept.exists():
        return json.loads(kept.read_text())
    base_end = T0 + args.base_traces * TRACE_GAP_NS
    where = f"started_at >= '{ui_iso(T0)}' AND started_at < '{ui_iso(base_end)}'"
    for size in ("small", "big"):
        store = stores[size] = engine.new_store(size)
        seconds, _ = timed(store, "ingest", str(base))
        print(f"{engine.name} {size}: base of {args.base_traces} traces in {seconds:.1f} s")
        tr(store, "promote", "--where", where, "--limit", "50", "--suite", "scale")
        for label in ("v1", "v2"):
            tr(store, "eval", "scale", "--label", label)
    t = time.perf_counter()
    spans = grow.grow(stores["big"], args.spans, (T0, base_end), chunk=args.chunk)
    print(f"{engine.name} big: grown to {spans:,} spans in {time.perf_counter() - t:.0f} s")
    if engine.server is None:
        kept.write_text(json.dumps(stores))
    return stores


def ui_iso(ns: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat()


def ingest_ratio(engine: Engine, big: str, args: argparse.Namespace, stored: int) -> float:
    """The best rate into ``big`` over the best rate into an empty store, alternating."""
    rates: dict[str, list[float]] = {"big": [], "empty": []}
    # batches no store has seen (a kept store may have had some): their own seeds, their
    # times after everything stored
    last = int(_one(big, "SELECT max(start_time_unix_nano) AS t FROM spans"))
    for r in range(args.rounds):
        for which in ("big", "empty") if r % 2 == 0 else ("empty", "big"):
            seed = last // 10**9 % 10**6 * 100 + 2 * r + (which == "big")
            t0 = last + 86_400 * 10**9 + 2 * (r + 1) * args.batch_traces * TRACE_GAP_NS
            batch = engine.work / f"batch-{seed}.pb"
            write_traces(batch, args.batch_traces, seed, t0)
            store = big if which == "big" else engine.new_store("empty")
            before = run_count(store) if which == "big" else 0
            seconds, _ = timed(store, "ingest", str(batch))
            assert run_count(store) == before + args.batch_traces, (which, store)
            rates[which].append(args.batch_traces * 10 / seconds)
            if which == "empty":
                engine.drop(store)
            batch.unlink()
        print(
            f"  round {r + 1}: big {rates['big'][-1]:,.0f} spans/s,"
            f" empty {rates['empty'][-1]:,.0f} spans/s",
            flush=True,
        )
    big_rate, empty_rate = max(rates["big"]), max(rates["empty"])
    ratio = big_rate / empty_rate
    print(
        f"ingest: {big_rate:,.0f} spans/s into {_size(stored)} vs {empty_rate:,.0f} empty"
        f" = {ratio:.2f}x (target >= 0.8x)",
        flush=True,
    )
    return ratio


def _size(spans: int) -> str:
    return f"{spans / 1e6:.3g}M" if spans >= 1e6 else f"{spans / 1e3:.3g}k"


def commands(
    stores: dict[str, str], args: argparse.Namespace, stored: int
) -> list[tuple[str, float, float]]:
    """Each CLI command and UI page on the small and the big store, alternating: medians."""
    ids = {}
    for size, store in stores.items():
        n = run_count(store)
        run_id = _one(
            store,
            "SELECT run_id FROM runs WHERE eval_run_id IS NULL ORDER BY started_at, run_id"
            f" LIMIT 1 OFFSET {n // 2}",
        )
        ids[size] = {
            "run": run_id,
            "suite": _one(store, "SELECT suite_id FROM eval_suites LIMIT 1"),
            "eval": _one(store, "SELECT eval_run_id FROM eval_runs ORDER BY started_at LIMIT 1"),
        }
    cli = {
        "runs": lambda st, i: timed(st, "runs")[0],
        "runs --limit 50 --status failed": lambda st, i: timed(
            st, "runs", "--limit", "50", "--status", "failed"
        )[0],
        "show <run>": lambda st, i: timed(st, "show", i["run"])[0],
    }
    pages = {
        "ui /runs": lambda i: "/runs",
        "ui /runs?status=failed": lambda i: "/runs?status=failed",
        "ui /runs?q=Tokyo": lambda i: "/runs?q=Tokyo",
        "ui /runs/<run>": lambda i: f"/runs/{i['run']}",
        "ui /dashboard": lambda i: "/dashboard",
        "ui /suites": lambda i: "/suites",
        "ui /suites/<suite>": lambda i: f"/suites/{i['suite']}",
        "ui /evals/<eval>": lambda i: f"/evals/{i['eval']}",
    }
    servers = {size: ui.start_ui(store) for size, store in stores.items()}  # type: ignore[arg-type]
    out = []
    try:
        for _, base in servers.values():
            ui.timed(base + "/runs", 1)  # warm up
        for name in [*cli, *pages]:
            times: dict[str, list[float]] = {"small": [], "big": []}
            for r in range(args.repeat):
                for size in ("small", "big") if r % 2 == 0 else ("big", "small"):
                    if name in cli:
                        times[size].append(cli[name](stores[size], ids[size]))
                    else:
                        url = servers[size][1] + pages[name](ids[size])
                        times[size].append(ui.timed(url, 1)[0])
            small, big = (statistics.median(times[s]) for s in ("small", "big"))
            out.append((name, small, big))
            print(
                f"{name}: small {small:.2f} s, {_size(stored)} {big:.2f} s,"
                f" {big - small:+.2f} s (target <= +0.3 s)",
                flush=True,
            )
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(timeout=10)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spans", type=int, default=15_000_000, help="the big store's size")
    ap.add_argument("--quick", action="store_true", help="a big store of 1,000,000 spans")
    ap.add_argument("--postgres", action="store_true", help="PostgreSQL too")
    ap.add_argument(
        "--no-duckdb", action="store_true", help="with --postgres: PostgreSQL alone (disk, time)"
    )
    ap.add_argument("--base-traces", type=int, default=10_000)
    ap.add_argument("--batch-traces", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=5, help="copies per grow transaction")
    ap.add_argument("--keep", type=Path, help="build the stores here and keep them")
    ap.add_argument("--only", choices=("ingest", "commands"), help="one half of the measures")
    args = ap.parse_args()
    if args.quick:
        args.spans = 1_000_000
    work = args.keep or Path(tempfile.mkdtemp(prefix="tracereplay-bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ["TRACEREPLAY_LOCAL_DIR"] = str(work / "local")
    base = work / "base.pb"
    write_traces(base, args.base_traces, 7, T0)
    engines = [] if args.no_duckdb and args.postgres else [Engine("duckdb", work)]
    pg_root = None
    if args.postgres:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from postgres_server import PostgresServer

        pg_root = Path(tempfile.mkdtemp(prefix="tracereplay-pg-"))
        engines.append(Engine("postgres", work, PostgresServer(pg_root)))
    try:
        for engine in engines:
            stores = build(engine, base, args)
            stored = _spans(stores["big"])
            print(f"{engine.name}: small store {_spans(stores['small']):,} spans,"
                  f" big {stored:,}", flush=True)  # fmt: skip
            if args.only != "commands":
                ingest_ratio(engine, stores["big"], args, stored)
            if args.only != "ingest":
                commands(stores, args, stored)
    finally:
        for engine in engines:
            if engine.server is not None:
                engine.server.stop()
        if pg_root is not None:
            shutil.rmtree(pg_root, ignore_errors=True)
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
