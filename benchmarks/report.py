"""The HTML report of a big suite: its size, how long ``tracereplay report`` takes, and how
quickly headless Chromium opens it.

A store like a team's after a month: 10,000 live runs of a weather agent spread over 30 days
(some failed, some tool calls erroring), a 10,000-case suite promoted from them, evaluated in
recorded mode (real ``run_evaluation``; 1 case in 20 expects another answer and fails), plus
``--history`` earlier eval runs of the same suite (copies of those results a few days apart,
some cases flipped so the trend and the flaky-case grid have something to show).

Figures: the page's size; ``tracereplay report`` wall time (a CLI process); Chromium's
navigation timing (DOMContentLoaded, load, first contentful paint) through Playwright and the
system Chromium; and opening a case whose details the script fills in, searching, filtering by
check. No assertions on time: the target is < 5 MB and a page that opens in about a second.

    python benchmarks/report.py [--cases 10000] [--history 9]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tracereplay.evaluate.evaluation import EvalSettings, run_evaluation
from tracereplay.models import (
    AgentResult,
    CheckSpec,
    EvalCase,
    EvalExpectedToolCall,
    EvalSuite,
    Run,
    ToolCallRecord,
)
from tracereplay.store import Store
from tracereplay.store.suites import insert_cases, insert_suite

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NOW = datetime.now(UTC).replace(microsecond=0)


def build_store(db: Path, n: int) -> None:
    rng = random.Random(7)
    runs: list[Run] = []
    cases: list[EvalCase] = []
    suite = EvalSuite(
        name="weather",
        agent_name="weather_agent",
        checks=[
            CheckSpec(kind="containsExpected"),
            CheckSpec(kind="regex", pattern=r"\d+ degrees"),
            CheckSpec(kind="toolCallArgsMatch"),
        ],
    )
    for i in range(n):
        city = f"City{i:05d}"
        trace = uuid.uuid4().hex
        response = (
            f"Right now in {city} it is {10 + i % 25} degrees and {['sunny', 'cloudy', 'rainy'][i % 3]}"
            f", with a light wind from the {['north', 'south', 'west'][i % 3]}. About "
            f"{1000 + 37 * i:,} people live there, so expect the usual traffic this afternoon."
        )
        failed_tool = rng.random() < 0.04
        calls = [
            ToolCallRecord(round=1, tool_name="get_weather",
                           arguments={"city": city, "unit": "celsius"},
                           result=f'{{"temp": {10 + i % 25}, "sky": "clear", "wind_kmh": 12}}',
                           duration_ms=40 + rng.random() * 80),
            ToolCallRecord(round=1, tool_name="get_population", arguments={"city": city},
                           result="" if failed_tool else f'{{"population": {1000 + 37 * i}}}',
                           error="TimeoutError: population service timed out" if failed_tool
                           else None, duration_ms=30 + rng.random() * 300),
        ]  # fmt: skip
        runs.append(
            Run(
                run_id=str(uuid.uuid4()), trace_id=trace, root_span_id=trace[:16],
                agent_name="weather_agent", service_name="weather", query=(
                    f"What's the weather like in {city} today, and how many people live there?"),
                started_at=NOW - timedelta(days=30 * (n - i) / n, minutes=rng.random() * 60),
                duration_ms=800 + rng.random() * 2500, input_tokens=400 + rng.randrange(300),
                output_tokens=60 + rng.randrange(120), error="agent crashed" if i % 97 == 0 else None,
                result=AgentResult(response=response, tool_calls=calls, total_rounds=2,
                                   total_llm_calls=2,
                                   status="failed" if i % 97 == 0 else "success"),
            )
        )  # fmt: skip
        cases.append(
            EvalCase(
                suite_id=suite.id, seq=i, query=runs[-1].query,
                expected_output=response if i % 20 else f"{city}: snow expected",
                expected_tool_calls=[EvalExpectedToolCall(name=c.tool_name, arguments=c.arguments)
                                     for c in calls],
                source_kind="reference_run", source_run_id=runs[-1].run_id,
            )
        )  # fmt: skip
    with Store.open(db) as store, store.transaction():
        store.replace_runs([r.trace_id for r in runs], runs)
        insert_suite(store, suite)
        insert_cases(store, cases)


def add_history(db: Path, k: int) -> None:
    """``k`` earlier eval runs: the latest one's results, two days apart, a few cases flipped."""
    with Store.open(db) as store, store.transaction():
        [[latest, started]] = store.con.execute(
            "SELECT eval_run_id, started_at FROM eval_runs ORDER BY started_at DESC LIMIT 1"
        ).fetchall()
        for j in range(1, k + 1):
            new = str(uuid.uuid4())
            store.con.execute(
                "INSERT INTO eval_runs SELECT * REPLACE (? AS eval_run_id, started_at - ? AS"
                " started_at, finished_at - ? AS finished_at, 'nightly-' || ? AS label)"
                " FROM eval_runs WHERE eval_run_id = ?",
                [new, timedelta(days=2 * j), timedelta(days=2 * j), str(k + 1 - j), latest],
            )
            # in older runs some of today's failures passed, and some passing cases failed
            flip = (
                "CASE WHEN seq % 20 = 0 AND seq % 3 = ? THEN 'PASSED'"
                " WHEN seq % 211 = ? THEN 'FAILED' ELSE status END"
            )
            store.con.execute(
                f"INSERT INTO case_results SELECT * REPLACE (? AS eval_run_id, {flip} AS status,"
                " started_at - ? AS started_at, finished_at - ? AS finished_at)"
                " FROM case_results WHERE eval_run_id = ?",
                [new, j % 3, j, timedelta(days=2 * j), timedelta(days=2 * j), latest],
            )
            store.con.execute(
                "INSERT INTO check_results SELECT * REPLACE (? AS eval_run_id)"
                " FROM check_results WHERE eval_run_id = ?",
                [new, latest],
            )
        del started


def browser_figures(page: Path) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
    out: dict[str, float] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            for _ in range(3):  # the best of three (a shared machine)
                pg = browser.new_page(viewport={"width": 1360, "height": 900})
                errors: list[str] = []
                pg.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
                pg.on(
                    "console",
                    lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None,
                )
                t = time.perf_counter()
                pg.goto(page.as_uri(), wait_until="load")
                wall = time.perf_counter() - t
                timing = pg.evaluate(
                    "() => { const n = performance.getEntriesByType('navigation')[0];"
                    " const p = performance.getEntriesByName('first-contentful-paint')[0];"
                    " return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd,"
                    " fcp: p ? p.startTime : null}; }"
                )
                assert not errors, errors
                row = {"wall": wall * 1000, **{k: v for k, v in timing.items() if v is not None}}
                # open a passed case far down the list: its details come from the JSON block
                case = pg.locator("details.case[data-i]").last
                t = time.perf_counter()
                case.locator("summary").click()
                case.locator(".case-body table.checks").wait_for()
                row["open_case"] = (time.perf_counter() - t) * 1000
                t = time.perf_counter()
                pg.fill("#case-search", "city09999")
                pg.wait_for_function(
                    "() => document.getElementById('case-shown').textContent.startsWith('1 of')"
                )
                row["search"] = (time.perf_counter() - t) * 1000
                pg.fill("#case-search", "")
                t = time.perf_counter()
                pg.select_option("#case-check", index=1)
                pg.wait_for_function(
                    "() => !document.getElementById('case-shown').textContent.startsWith("
                    "document.querySelectorAll('details.case').length + ' of')"
                )
                row["check_filter"] = (time.perf_counter() - t) * 1000
                for key, value in row.items():
                    out[key] = min(out.get(key, value), value)
                pg.close()
        finally:
            browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--history", type=int, default=9, help="earlier eval runs of the suite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(os.environ.get("REPORT_BENCH_DIR") or tmp_name)
        db = tmp / "report.duckdb"
        t = time.perf_counter()
        build_store(db, args.cases)
        run_evaluation(EvalSettings(suite="weather", db=db, label="today"))
        add_history(db, args.history)
        print(f"store: {args.cases:,} cases, {args.history + 1} eval runs, {args.cases:,} live "
              f"runs over 30 days (built in {time.perf_counter() - t:.1f} s)")  # fmt: skip
        page = tmp / "report.html"
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "tracereplay", "--db", str(db), "report", "-o", str(page)],
            check=True, capture_output=True,
        )  # fmt: skip
        took = time.perf_counter() - t
        html = page.read_text(encoding="utf-8")
        size = page.stat().st_size
        lazy = html.count(" data-i=")
        left_out = html.count(" data-none")
        print(f"tracereplay report: {took:.2f} s (CLI process)")
        cases = html.count('<details class="case"')
        print(f"page: {size / 1e6:.2f} MB (target < 5 MB); {cases:,} cases: "
              f"{cases - lazy - left_out} written open, {lazy:,} with details on demand, "
              f"{left_out:,} without details")  # fmt: skip
        if CHROMIUM is None:
            print(
                "chromium: not installed (sh tests/report/ensure_chromium.sh), no browser figures"
            )
            return
        b = browser_figures(page)
        print(
            f"chromium (best of 3): DOMContentLoaded {b['dcl']:.0f} ms, load {b['load']:.0f} ms,"
            f" first contentful paint {b.get('fcp', float('nan')):.0f} ms,"
            f" goto wall {b['wall']:.0f} ms"
        )
        print(
            f"  open a case far down (details from JSON): {b['open_case']:.0f} ms;"
            f" search one case: {b['search']:.0f} ms; filter by a check: {b['check_filter']:.0f} ms"
            " (incl. Playwright round trips)"
        )


if __name__ == "__main__":
    main()
