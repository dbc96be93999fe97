"""``tracereplay ui`` on a big store: page latencies over 1,000,000 runs.

Builds a fresh DuckDB file (through ``Store.open``, so with the real schema) holding N synthetic
runs (default 1,000,000) spread over 60 days, 6 agents, 4 services, 3 models and 3 statuses,
with their tool calls (2 per run), LLM calls (2 per run) and spans (4 per run); rows are inserted
directly with SQL (``range()``), not converted from OTLP, which would take far longer. A small
suite with a few eval runs is added so the suite pages have something to show.

Then starts the real server (``tracereplay ui --port 0``, a subprocess) and times each page over
HTTP (the median of ``--repeat`` requests; every request opens and closes the store, as in use):
the runs page unfiltered, filtered by facets, searched, sorted, deep-paged; a run's page; the
dashboard; the suite page; the SQL page.

    python benchmarks/ui.py [--runs 1000000] [--repeat 5] [--db PATH] [--keep]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tracereplay.store import Store

T0 = "2026-04-01 00:00:00+00"


def build(db: Path, runs: int) -> float:
    """Fill ``db`` with ``runs`` synthetic runs; returns the seconds it took."""
    start = time.perf_counter()
    with Store.open(db) as store:
        con = store.con
        con.execute("SET preserve_insertion_order = false")
        con.execute(
            f"""
            INSERT INTO runs
            SELECT
                uuid_string(i) AS run_id,
                trace_hex(i) AS trace_id,
                span_hex(i, 0) AS root_span_id,
                NULL, agents[1 + i % 6], services[1 + i % 4],
                CASE WHEN i % 50 = 0 THEN 'replay' ELSE 'live' END,
                'genai',
                CASE WHEN i % 17 = 0 THEN 'failed' WHEN i % 101 = 0 THEN 'max_rounds_exceeded'
                     ELSE 'success' END,
                'What is the weather in ' || cities[1 + i % 8] || ' on day ' || (i % 97)::VARCHAR
                    || '? Order ' || i::VARCHAR,
                'It is ' || (10 + i % 25)::VARCHAR || ' degrees in ' || cities[1 + i % 8]
                    || '. Have a nice day, reference ' || hash(i)::VARCHAR,
                '[]', '{{}}', '["' || models[1 + i % 3] || '"]',
                200 + i % 800, 20 + i % 200, 2, 2, 2,
                TIMESTAMPTZ '{T0}' + to_milliseconds((i * 5184)::BIGINT),
                50.0 + (i % 1000) * 3.7,
                CASE WHEN i % 17 = 0 THEN 'ToolError: the weather service timed out ('
                     || i::VARCHAR || ')' END,
                NULL, NULL,
                '{{"response": "ok", "tool_calls": [], "total_rounds": 2, "total_llm_calls": 2,'
                    || ' "status": "success"}}',
                now()
            FROM (SELECT range AS i,
                         ['support', 'weather', 'billing', 'search', 'triage', 'planner'] AS agents,
                         ['api', 'worker', 'batch', 'edge'] AS services,
                         ['gpt-4o-mini', 'claude-haiku', 'llama-3-70b'] AS models,
                         ['Paris', 'London', 'Tokyo', 'Lima', 'Oslo', 'Cairo', 'Quito', 'Perth']
                             AS cities
                  FROM range({runs}))
            """.replace("uuid_string(i)", "md5(i::VARCHAR)")
            .replace("trace_hex(i)", "md5('t' || i::VARCHAR)")
            .replace("span_hex(i, 0)", "left(md5('s0' || i::VARCHAR), 16)")
        )
        con.execute(
            """
            INSERT INTO tool_calls
            SELECT r.run_id, p, r.trace_id, 1 + p, ['get_weather', 'get_time'][1 + p], '',
                   '{"city": "Paris"}', '{"temp": 21}', 12.5 + p,
                   CASE WHEN p = 1 AND r.status = 'failed' THEN 'timed out' END
            FROM runs r, range(2) t(p)
            """
        )
        con.execute(
            """
            INSERT INTO llm_calls
            SELECT r.run_id, 1 + p, r.trace_id, left(md5('l' || r.run_id || p::VARCHAR), 16),
                   'gpt-4o-mini', 'openai', 100, 10, 20.0, 'stop', r.started_at,
                   '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]',
                   '[{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]'
            FROM runs r, range(2) t(p)
            """
        )
        con.execute(
            """
            INSERT INTO spans
            SELECT r.trace_id, CASE WHEN p = 0 THEN r.root_span_id
                                    ELSE left(md5('s' || p::VARCHAR || r.run_id), 16) END,
                   CASE WHEN p = 0 THEN NULL ELSE r.root_span_id END,
                   CASE WHEN p = 0 THEN 'invoke_agent ' || r.agent_name
                        WHEN p % 2 = 1 THEN 'chat gpt-4o-mini' ELSE 'execute_tool get_weather'
                   END,
                   'INTERNAL', r.started_at, r.started_at, 10.0, 'OK', NULL, r.service_name,
                   'bench', '{"gen_ai.operation.name": "chat"}', '[]', '[]', '{}',
                   epoch_ns(r.started_at) + p * 1000000, epoch_ns(r.started_at) + 9000000,
                   now()
            FROM runs r, range(4) t(p)
            """
        )
    return time.perf_counter() - start


def add_evals(db: Path) -> None:
    """A suite of 50 cases promoted from runs, scored three times from the CLI."""
    tr = [sys.executable, "-m", "tracereplay", "--db", str(db)]
    subprocess.run(
        [*tr, "promote", "--where", "agent_name = 'weather' AND status = 'success'",
         "--suite", "weather", "--limit", "50"],
        check=True, capture_output=True,
    )  # fmt: skip
    for label in ("v1", "v2", "v3"):
        subprocess.run([*tr, "eval", "weather", "--label", label], capture_output=True, check=False)


def start_ui(db: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracereplay", "--db", str(db), "ui", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("tracereplay ui: "):
        proc.kill()
        raise SystemExit(f"the server did not start: {line}{proc.stderr.read()}")
    return proc, line.split(": ", 1)[1].strip().rstrip("/")


def timed(url: str, repeat: int) -> tuple[float, float, int]:
    times = []
    size = 0
    for _ in range(repeat):
        start = time.perf_counter()
        with urllib.request.urlopen(url, timeout=120) as response:
            size = len(response.read())
            assert response.status == 200, url
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times), size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", type=Path, help="reuse (or build) this store")
    parser.add_argument("--keep", action="store_true", help="keep the temporary store")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tracereplay-ui-bench-"))
    db = args.db or tmp / "bench.duckdb"
    if not db.exists():
        seconds = build(db, args.runs)
        print(f"built {args.runs:,} runs (+ {2 * args.runs:,} tool calls, {2 * args.runs:,} LLM "
              f"calls, {4 * args.runs:,} spans) in {seconds:.1f} s; "
              f"{db.stat().st_size / 2**20:,.0f} MiB")  # fmt: skip
        add_evals(db)
    with Store.open(db) as store:
        run_id = store.con.execute(
            "SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1 OFFSET 12345"
        ).fetchall()[0][0]
        suite_id = store.con.execute("SELECT suite_id FROM eval_suites LIMIT 1").fetchall()
        eval_run = store.con.execute(
            "SELECT eval_run_id FROM eval_runs ORDER BY started_at DESC LIMIT 1"
        ).fetchall()
    proc, base = start_ui(db)
    pages = [
        ("runs, first page", "/runs"),
        ("runs, status=failed", "/runs?status=failed"),
        ("runs, 2 facets + 7 days", "/runs?status=failed&agent=weather&since=2026-05-24"),
        ("runs, model facet", "/runs?model=claude-haiku"),
        ("runs, search 'Tokyo on day 42'", "/runs?q=Tokyo+on+day+42"),
        ("runs, search 'timed out'", "/runs?q=timed+out"),
        ("runs, sort by tokens", "/runs?sort=tokens"),
        ("runs, page 2,000 (offset 100k)", "/runs?page=2000"),
        ("a run", f"/runs/{run_id}"),
        ("dashboard, 30 days", "/dashboard"),
        ("dashboard, 90 days, one agent", "/dashboard?days=90&agent=support"),
        ("SQL page, count by status", "/sql?q=SELECT+status,count(*)+FROM+runs+GROUP+BY+1"),
    ]
    if suite_id:
        pages.append(("suite page", f"/suites/{suite_id[0][0]}"))
        pages.append(("suites", "/suites"))
    if eval_run:
        pages.append(("eval run page", f"/evals/{eval_run[0][0]}"))
    try:
        timed(base + "/runs", 1)  # warm up
        print(f"{'page':36} {'median':>9} {'max':>9} {'bytes':>9}")
        for name, path in pages:
            median, worst, size = timed(base + path, args.repeat)
            print(f"{name:36} {median * 1000:7.0f} ms {worst * 1000:6.0f} ms {size:9,}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if not args.keep and args.db is None:
            for f in tmp.iterdir():
                f.unlink()
            tmp.rmdir()
        elif args.keep:
            print(f"store kept at {db}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
