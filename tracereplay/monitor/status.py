"""What a person asks of a monitor: how many runs it judged, how many passed, which checks fail.

A judged run FAILED when any of its checks failed; it is ERROR when none failed but a check
could not be carried out (a judge that was down says nothing about the agent); else PASSED.
The window is the runs' start time (``--since 1h``: production runs of the last hour).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracereplay.store.db import Store

_PER_RUN = """
    SELECT run_id,
           any_value(run_started_at) AS started_at,
           max(judged_at) AS judged_at,
           CASE WHEN bool_or(status = 'FAILED') THEN 'FAILED'
                WHEN bool_or(status = 'ERROR') THEN 'ERROR' ELSE 'PASSED' END AS status,
           string_agg(check_name, ', ' ORDER BY check_name) FILTER (WHERE status = 'FAILED')
               AS failed_checks
    FROM monitor_results
    WHERE monitor = ? AND (CAST(? AS TIMESTAMPTZ) IS NULL OR run_started_at >= ?)
    GROUP BY run_id
"""


@dataclass
class MonitorStatus:
    """The numbers of ``monitor status``; ``worst`` is a row per check, worst pass rate first."""

    monitor: str
    runs: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    worst: list[dict[str, Any]] = field(default_factory=list)
    #: judged runs a person labelled too (``tracereplay label``), the monitor's ERROR runs left
    #: out (it said nothing of them); ``agreed``: those where it PASSED a run labelled good or
    #: FAILED one labelled bad
    labelled: int = 0
    agreed: int = 0

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.runs if self.runs else None

    @property
    def failure_rate(self) -> float | None:
        return self.failed / self.runs if self.runs else None


def monitor_status(store: Store, name: str, since: datetime | None = None) -> MonitorStatus:
    out = MonitorStatus(name)
    rows = store.con.execute(
        f"SELECT status, count(*) FROM ({_PER_RUN}) AS p GROUP BY status", [name, since, since]
    ).fetchall()
    counts = dict(rows)
    out.passed, out.failed, out.errored = (counts.get(s, 0) for s in ("PASSED", "FAILED", "ERROR"))
    out.runs = out.passed + out.failed + out.errored
    out.worst = store.query_dicts(
        """
        SELECT check_name, any_value(check_kind) AS check_kind, count(*) AS runs,
               count(*) FILTER (WHERE status = 'PASSED') AS passed,
               count(*) FILTER (WHERE status = 'FAILED') AS failed,
               count(*) FILTER (WHERE status = 'ERROR') AS errored,
               count(*) FILTER (WHERE status = 'PASSED') / count(*) AS pass_rate,
               avg(score) AS score,
               arg_max(reason, judged_at) FILTER (WHERE status <> 'PASSED') AS last_reason
        FROM monitor_results
        WHERE monitor = ? AND (CAST(? AS TIMESTAMPTZ) IS NULL OR run_started_at >= ?)
        GROUP BY check_name
        ORDER BY pass_rate, failed DESC, check_name
        """,
        [name, since, since],
    )
    out.agreed, out.labelled = label_agreement(store, name, since)
    return out


def label_agreement(store: Store, name: str, since: datetime | None = None) -> tuple[int, int]:
    """``(agreed, labelled)``: of the runs ``name`` judged PASSED or FAILED that have a label
    (their latest), how many it judged as the person did (PASSED and good, FAILED and bad)."""
    rows = store.con.execute(
        f"""
        SELECT count(*) FILTER (WHERE (p.status = 'PASSED' AND l.verdict = 'good')
                                   OR (p.status = 'FAILED' AND l.verdict = 'bad')),
               count(*)
        FROM ({_PER_RUN}) AS p JOIN latest_labels AS l ON l.run_id = p.run_id
        WHERE p.status IN ('PASSED', 'FAILED')
        """,
        [name, since, since],
    ).fetchall()
    return int(rows[0][0] or 0), int(rows[0][1] or 0)


def run_monitor_results(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Every monitor's results on one run (the run page): a row per check, by monitor and
    check, with the run's verdict per monitor as ``run_status``."""
    return store.query_dicts(
        """
        SELECT monitor, check_name, check_kind, status, score, reason, judged_at,
               CASE WHEN bool_or(status = 'FAILED') OVER (PARTITION BY monitor) THEN 'FAILED'
                    WHEN bool_or(status = 'ERROR') OVER (PARTITION BY monitor) THEN 'ERROR'
                    ELSE 'PASSED' END AS run_status
        FROM monitor_results WHERE run_id = ?
        ORDER BY monitor, check_name
        """,
        [run_id],
    )


def judged_runs(
    store: Store,
    name: str,
    *,
    since: datetime | None = None,
    failing: bool = False,
    limit: int = 50,
) -> list[dict[str, Any]]:
    """The runs ``name`` judged, newest first: run id, start, verdict, the checks that failed."""
    return store.query_dicts(
        f"SELECT * FROM ({_PER_RUN}) AS p WHERE (NOT ? OR status = 'FAILED')"
        " ORDER BY started_at DESC NULLS LAST, run_id LIMIT ?",
        [name, since, since, failing, limit],
    )


def pass_rate_over_time(
    store: Store, name: str, since: datetime | None = None, buckets: int = 24
) -> list[dict[str, Any]]:
    """Pass rate of the judged runs per time bucket (``bucket`` start, ``runs``, ``pass_rate``),
    the window cut in ``buckets`` equal parts."""
    return store.query_dicts(
        f"""
        WITH per_run AS ({_PER_RUN}),
        span AS (SELECT min(started_at) AS lo, max(started_at) AS hi FROM per_run),
        cut AS (
            SELECT p.*, CASE WHEN span.hi = span.lo THEN 0 ELSE least(
                CAST(floor(epoch(p.started_at - span.lo) / epoch(span.hi - span.lo) * ?) AS INT),
                ? - 1) END AS b, span.lo, span.hi
            FROM per_run AS p, span WHERE p.started_at IS NOT NULL
        )
        SELECT min(started_at) AS bucket, count(*) AS runs,
               count(*) FILTER (WHERE status = 'PASSED') / count(*) AS pass_rate
        FROM cut GROUP BY b ORDER BY b
        """,
        [name, since, since, buckets, buckets],
    )


def pass_rates(store: Store, since: datetime | None = None) -> list[dict[str, Any]]:
    """Every monitor with its judged runs and pass rate (the Production page)."""
    return store.query_dicts(
        """
        WITH per_run AS (
            SELECT monitor, run_id, bool_or(status = 'FAILED') AS failed,
                   bool_and(status = 'PASSED') AS passed
            FROM monitor_results
            WHERE CAST(? AS TIMESTAMPTZ) IS NULL OR run_started_at >= ?
            GROUP BY monitor, run_id
        )
        SELECT m.name AS monitor, count(p.run_id) AS runs,
               count(*) FILTER (WHERE p.passed) AS passed,
               count(*) FILTER (WHERE p.failed) AS failed,
               CASE WHEN count(p.run_id) > 0
                    THEN count(*) FILTER (WHERE p.passed) / count(p.run_id) END AS pass_rate
        FROM monitors AS m LEFT JOIN per_run AS p ON p.monitor = m.name
        GROUP BY m.name ORDER BY m.name
        """,
        [since, since],
    )
