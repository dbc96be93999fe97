"""SQL over history: how fast the views answer once a store holds a lot of eval history.

Fills a fresh DuckDB file with synthetic history through the stores' own insert paths
(``tracereplay.store.suites`` for suites and cases, ``tracereplay.evaluate.results_store``
for eval runs, case results and check results): by default 5 suites x 100 eval runs x 400 cases
x 5 checks = 1,000,000 check results. Then times, in the same process and through
``tracereplay.query.run_sql`` (what ``tracereplay sql`` runs):

- ``SELECT * FROM suite_trend`` (every eval run's counts, pass rate, score and change);
- the regression query of docs/sql.md (cases that regressed between the last two eval runs of
  each suite, over ``case_history``).

Target: under 0.5 s each.

    python benchmarks/sql.py [--checks 1000000] [--repeat 5] [--db PATH]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tracereplay.evaluate.results_store import insert_case_runs, insert_eval_run, update_eval_run
from tracereplay.models import CheckSpec, EvalCase, EvalSuite, ScoreResult, Status
from tracereplay.query import run_sql
from tracereplay.scoring.outcomes import CaseRun, EvalRunRecord
from tracereplay.scoring.verdicts import result_from_scores, summarize
from tracereplay.store import Store
from tracereplay.store.suites import insert_cases, insert_suite

SUITES, RUNS_PER_SUITE, CHECKS_PER_CASE = 5, 100, 5
CHECK_KINDS = ["status", "containsExpected", "toolCallArgsMatch", "keywords", "nonEmpty"]
T0 = datetime(2026, 6, 1, 2, 0, tzinfo=UTC)

SUITE_TREND = "SELECT * FROM suite_trend"
REGRESSIONS = """
WITH last_two AS (
    SELECT eval_run_id,
           row_number() OVER (PARTITION BY suite_id
                              ORDER BY started_at DESC, eval_run_id DESC) AS recency
    FROM eval_runs
    QUALIFY recency <= 2
)
SELECT cur.suite_name, cur.seq, cur.case_id, prev.status AS before, cur.status AS now,
       cur.reason
FROM case_history AS cur
JOIN last_two AS c ON c.eval_run_id = cur.eval_run_id AND c.recency = 1
JOIN case_history AS prev ON prev.case_id = cur.case_id
JOIN last_two AS p ON p.eval_run_id = prev.eval_run_id AND p.recency = 2
WHERE prev.status = 'PASSED' AND cur.status <> 'PASSED'
ORDER BY cur.suite_name, cur.seq
"""


def _case_run(rng: random.Random, case: EvalCase, quality: float) -> CaseRun:
    checks = []
    for kind in CHECK_KINDS:
        roll = rng.random()
        if roll < 0.005:
            checks.append(ScoreResult(check=kind, status=Status.ERROR, explanation="judge failed"))
            continue
        passed = roll < quality
        checks.append(
            ScoreResult(
                check=kind,
                status=Status.PASSED if passed else Status.FAILED,
                passed=passed,
                score=1.0 if passed else round(rng.random() * 0.6, 3),
                explanation="ok" if passed else f"{kind} did not hold",
            )
        )
    return CaseRun(
        case_id=case.id,
        seq=case.seq,
        result=result_from_scores(case.id, checks, duration_ms=rng.uniform(200, 4000)),
        response="synthetic answer",
    )


def fill(db: Path, checks: int, seed: int = 7) -> tuple[int, float]:
    """Write the history; returns (check results written, seconds)."""
    cases_per_run = max(1, checks // (SUITES * RUNS_PER_SUITE * CHECKS_PER_CASE))
    rng = random.Random(seed)
    started = time.perf_counter()
    written = 0
    with Store.open(db) as store:
        for s in range(SUITES):
            suite = EvalSuite(
                name=f"suite-{s}", agent_name=f"agent-{s}",
                checks=[CheckSpec(kind=k) for k in CHECK_KINDS],
            )  # fmt: skip
            cases = [
                EvalCase(suite_id=suite.id, seq=i, query=f"question {i} of suite {s}")
                for i in range(cases_per_run)
            ]
            quality = {c.id: rng.uniform(0.9, 1.0) for c in cases}
            with store.transaction():
                insert_suite(store, suite)
                insert_cases(store, cases)
            for r in range(RUNS_PER_SUITE):
                start = T0 + timedelta(days=r, minutes=s)
                record = EvalRunRecord(
                    eval_run_id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                    suite_id=suite.id, suite_name=suite.name, mode="recorded",
                    label=f"build-{r}", git_commit=f"{rng.getrandbits(160):040x}",
                    started_at=start, finished_at=start + timedelta(minutes=9),
                    status="completed",
                )  # fmt: skip
                runs = [_case_run(rng, c, quality[c.id]) for c in cases]
                with store.transaction():
                    insert_eval_run(store, record)
                    insert_case_runs(store, record.eval_run_id, suite.id, runs, {})
                    summary = summarize([cr.result for cr in runs])
                    update_eval_run(
                        store,
                        record.model_copy(
                            update={
                                "total_cases": summary.total, "passed": summary.passed,
                                "failed": summary.failed, "errored": summary.errored,
                                "pass_rate": summary.pass_rate,
                                "aggregate_score": summary.aggregate_score,
                            }
                        ),
                    )  # fmt: skip
                written += sum(len(cr.result.checks) for cr in runs)
    return written, time.perf_counter() - started


def timed(db: Path, sql: str, repeat: int) -> tuple[list[float], int]:
    """Wall time of each of ``repeat`` runs of ``sql`` (all rows fetched), and the row count."""
    times = []
    rows = 0
    with Store.open(db) as store:
        for _ in range(repeat):
            t = time.perf_counter()
            with run_sql(store, sql) as rel:
                assert rel is not None
                rows = len(rel.fetchall())
            times.append(time.perf_counter() - t)
    return times, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--db",
        type=Path,
        help="keep the store here (default: a temp dir); an existing one is reused",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "history.duckdb"
        reused = db.exists()
        if not reused:
            written, fill_s = fill(db, args.checks)
        with Store.open(db) as store:
            counts = {t: store.count(t) for t in ("eval_runs", "case_results", "check_results")}
        size_mb = db.stat().st_size / 1e6
        if reused:
            print(f"reusing {db}: {counts}, {size_mb:.0f} MB")
        else:
            print(
                f"filled {db.name}: {counts} in {fill_s:.1f} s "
                f"({written / fill_s:,.0f} check results/s), {size_mb:.0f} MB"
            )
        worst = 0.0
        for name, sql in (("suite_trend", SUITE_TREND), ("regression query", REGRESSIONS)):
            times, rows = timed(db, sql, args.repeat)
            print(
                f"{name:17s} {rows:6d} rows  median {statistics.median(times) * 1000:7.1f} ms"
                f"  min {min(times) * 1000:7.1f} ms  max {max(times) * 1000:7.1f} ms"
                f"  (first {times[0] * 1000:.1f} ms)"
            )
            worst = max(worst, statistics.median(times))
        print(f"target < 500 ms each: {'met' if worst < 0.5 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
