"""Many writers on one PostgreSQL store, as real processes started at once: promotions from
four machines into one new suite make one suite with four cases numbered 0-3 (no lost update),
and two CI shards make one eval run that counts every case."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tracereplay.store import Store

FIXTURES = Path(__file__).parent.parent / "fixtures" / "otlp"


def _start(url: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tracereplay", "--store", url, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )  # fmt: skip


def _wait(procs: list[subprocess.Popen[str]]) -> None:
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err


def test_concurrent_promotions_and_shards_lose_nothing(pg_url: str) -> None:
    _wait([_start(pg_url, "ingest", *sorted(str(p) for p in FIXTURES.glob("generated-*.pb")))])
    with Store.open(pg_url) as store:
        runs = [
            r["run_id"]
            for r in store.query_dicts(
                "SELECT run_id FROM runs WHERE query <> '' ORDER BY run_id LIMIT 4"
            )
        ]
    assert len(runs) == 4
    _wait([_start(pg_url, "promote", run, "--suite", "shared") for run in runs])
    with Store.open(pg_url) as store:
        assert store.count("eval_suites") == 1
        cases = store.query_dicts("SELECT seq, source_run_id FROM eval_cases ORDER BY seq")
    assert [c["seq"] for c in cases] == [0, 1, 2, 3]
    assert sorted(c["source_run_id"] for c in cases) == sorted(runs)

    _wait(
        [
            _start(pg_url, "eval", "shared", "--shard", f"{i}/2", "--eval-run", "ci-1")
            for i in (1, 2)
        ]
    )
    with Store.open(pg_url) as store:
        [run] = store.query_dicts("SELECT total_cases, passed, status FROM eval_runs")
        assert store.count("case_results") == 4
    assert run == {"total_cases": 4, "passed": 4, "status": "completed"}
    listed = subprocess.run(
        [sys.executable, "-m", "tracereplay", "--store", pg_url, "sql",
         "SELECT cases FROM suite_trend", "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert json.loads(listed.stdout) == [{"cases": 4}]
