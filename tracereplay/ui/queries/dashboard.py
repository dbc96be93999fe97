"""Production at a glance: live runs per day, failures, latency, tokens and tool errors."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tracereplay.store.db import Store


def window(store: Store, days: int, agent: str | None) -> tuple[datetime | None, datetime | None]:
    """The ``days`` days up to the latest live run (a store whose runs are old still shows
    them)."""
    sql = "SELECT max(started_at) FROM runs WHERE kind = 'live'"
    params: list[Any] = []
    if agent:
        sql += " AND agent_name = ?"
        params.append(agent)
    last = store.con.execute(sql, params).fetchall()[0][0]
    if last is None:
        return None, None
    end = last.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    return end - timedelta(days=days), end


def daily(
    store: Store, since: datetime, until: datetime, agent: str | None
) -> list[dict[str, Any]]:
    """One row per day with live runs."""
    agent_sql = " AND agent_name = ?" if agent else ""
    params: list[Any] = [since, until] + ([agent] if agent else [])
    rows = store.query_dicts(
        f"""
        SELECT CAST(timezone('UTC', started_at) AS DATE) AS day, count(*) AS runs,
               count(*) FILTER (WHERE status <> 'success') AS failures,
               quantile_cont(duration_ms, 0.5) AS p50_ms,
               quantile_cont(duration_ms, 0.95) AS p95_ms,
               sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) AS tokens,
               sum(tool_calls_count) AS tool_calls
        FROM runs WHERE kind = 'live' AND started_at >= ? AND started_at < ?{agent_sql}
        GROUP BY day ORDER BY day
        """,
        params,
    )
    errors = dict(
        store.con.execute(
            f"""
            SELECT CAST(timezone('UTC', r.started_at) AS DATE) AS day, count(t.error)
            FROM tool_calls t JOIN runs r ON r.run_id = t.run_id
            WHERE r.kind = 'live' AND r.started_at >= ? AND r.started_at < ?
              AND t.error IS NOT NULL{agent_sql.replace("agent_name", "r.agent_name")}
            GROUP BY day
            """,
            params,
        ).fetchall()
    )
    by_day = {row["day"]: row for row in rows}
    rows = []
    day = since.date()
    while day < until.date():  # every day of the window, a day without runs too
        rows.append(by_day.get(day) or {
            "day": day, "runs": 0, "failures": 0, "p50_ms": None, "p95_ms": None,
            "tokens": 0, "tool_calls": 0,
        })  # fmt: skip
        day += timedelta(days=1)
    for row in rows:
        row["failure_rate"] = row["failures"] / row["runs"] if row["runs"] else None
        row["tool_errors"] = int(errors.get(row["day"], 0))
        calls = row["tool_calls"] or 0
        row["tool_error_rate"] = row["tool_errors"] / calls if calls else None
    return rows


def per_agent(store: Store, since: datetime, until: datetime) -> list[dict[str, Any]]:
    """One row per agent over the window."""
    return store.query_dicts(
        """
        WITH errs AS (
            SELECT r.agent_name, count(t.error) AS tool_errors
            FROM tool_calls t JOIN runs r ON r.run_id = t.run_id
            WHERE r.kind = 'live' AND r.started_at >= ? AND r.started_at < ?
              AND t.error IS NOT NULL
            GROUP BY r.agent_name
        )
        SELECT r.agent_name, count(*) AS runs,
               count(*) FILTER (WHERE r.status <> 'success') / count(*) AS failure_rate,
               quantile_cont(r.duration_ms, 0.5) AS p50_ms,
               quantile_cont(r.duration_ms, 0.95) AS p95_ms,
               avg(coalesce(r.input_tokens, 0) + coalesce(r.output_tokens, 0)) AS tokens_per_run,
               sum(r.tool_calls_count) AS tool_calls,
               coalesce(any_value(e.tool_errors), 0) AS tool_errors
        FROM runs r LEFT JOIN errs e USING (agent_name)
        WHERE r.kind = 'live' AND r.started_at >= ? AND r.started_at < ?
        GROUP BY r.agent_name ORDER BY runs DESC LIMIT 100
        """,
        [since, until, since, until],
    )


def agents(store: Store) -> list[str]:
    return [
        r[0]
        for r in store.con.execute(
            "SELECT agent_name FROM runs WHERE kind = 'live' AND agent_name IS NOT NULL"
            " GROUP BY 1 ORDER BY count(*) DESC LIMIT 200"
        ).fetchall()
    ]
