"""Reads and writes of the monitors' tables (``monitors``, ``monitor_results``,
``monitor_judge_calls``) that need no monitor model: the results of a round, replacing what
the same monitors had of the same runs; whether any monitor exists; and the reads of the
results (``monitor status``, the monitor, run, dashboard and Production pages). A judged run
FAILED when any of its checks failed, ERROR when none failed but one could not be carried out,
else PASSED; a window is the runs' start time. ``monitor/records.py`` keeps the ``monitors``
rows as ``Monitor`` models (a type of the layer above), ``monitor/status.py`` the
``MonitorStatus`` built of these reads."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tracereplay.lazy import LazyModule
from tracereplay.store.db import Store

if TYPE_CHECKING:
    import pyarrow as pa
else:  # only a round that judged something builds a table
    pa = LazyModule("pyarrow")


def _result_types() -> dict[str, pa.DataType]:
    ts = pa.timestamp("us", tz="UTC")
    return {
        "monitor": pa.string(), "run_id": pa.string(), "trace_id": pa.string(),
        "agent_name": pa.string(), "check_name": pa.string(), "check_kind": pa.string(),
        "status": pa.string(), "passed": pa.bool_(), "score": pa.float64(),
        "reason": pa.string(), "details": pa.string(), "run_started_at": ts,
        "run_converted_at": ts,
    }  # fmt: skip


def _call_types() -> dict[str, pa.DataType]:
    return {
        "monitor": pa.string(), "run_id": pa.string(), "check_name": pa.string(),
        "model": pa.string(), "endpoint": pa.string(), "input_tokens": pa.int64(),
        "output_tokens": pa.int64(), "duration_ms": pa.float64(), "error": pa.string(),
        "started_at": pa.timestamp("us", tz="UTC"),
    }  # fmt: skip


def _table(rows: Sequence[dict[str, Any]], types: dict[str, pa.DataType]) -> pa.Table:
    return pa.table({k: pa.array([r[k] for r in rows], t) for k, t in types.items()})


def replace_results(
    store: Store,
    judged: Sequence[tuple[str, str]],
    results: Sequence[dict[str, Any]],
    calls: Sequence[dict[str, Any]],
) -> None:
    """In one transaction: the ``monitor_results`` of each ``(monitor, run_id)`` of ``judged``
    replaced by ``results`` (rows keyed by column, ``details`` as JSON text), and ``calls``
    added to ``monitor_judge_calls`` (a call made is a cost, whatever came of it)."""
    # keyed by monitor and run joined with a character neither holds (chr(1): PostgreSQL's
    # text cannot hold chr(0))
    keys = sorted({f"{monitor}\x01{run_id}" for monitor, run_id in judged})
    with store.transaction():
        store.con.execute(
            "DELETE FROM monitor_results WHERE monitor || chr(1) || run_id IN (SELECT unnest(?))",
            [keys],
        )
        if results:
            store.append_table("monitor_results", _table(results, _result_types()))
        if calls:
            store.append_table("monitor_judge_calls", _table(calls, _call_types()))


def has_monitors(store: Store) -> bool:
    """Whether the store has any monitor."""
    return bool(store.con.execute("SELECT count(*) FROM monitors").fetchall()[0][0])


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


def status_counts(store: Store, name: str, since: datetime | None = None) -> dict[str, int]:
    """How many runs ``name`` judged (started since ``since``) ended each verdict (``PASSED``,
    ``FAILED``, ``ERROR``): a run's verdict is its worst check's (``monitor status``)."""
    rows = store.con.execute(
        f"SELECT status, count(*) FROM ({_PER_RUN}) AS p GROUP BY status", [name, since, since]
    ).fetchall()
    return {str(status): int(n) for status, n in rows}


def worst_checks(store: Store, name: str, since: datetime | None = None) -> list[dict[str, Any]]:
    """A row per check of ``name``'s results (runs started since ``since``): its runs, passed,
    failed, errored, pass rate, mean score and the latest reason it did not pass; worst pass
    rate first (``monitor status``, the monitor page)."""
    return store.query_dicts(
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
